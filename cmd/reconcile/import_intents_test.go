package main

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/riverqueue/river"

	"github.com/reconcilehq/reconcile/internal/database"
	"github.com/reconcilehq/reconcile/internal/dbtest"
	"github.com/reconcilehq/reconcile/queue"
)

const pendingIntentsCSV = `key,provider,amount,currency,status,created_at
charge:order-1,stripe,19.99,USD,pending,2026-11-02T06:30:00Z
charge:order-2,stripe,5.00,USD,pending,2026-11-02T06:31:00Z
charge:order-3,stripe,7.00,USD,succeeded,2026-11-02T06:32:00Z
`

// chargeJobs lists the intent keys of the charge jobs queued in the database.
func chargeJobs(t *testing.T, url string) []string {
	t.Helper()
	return jobsOfKind(t, url, "charge")
}

// jobsOfKind lists the arguments of the jobs of kind queued in the database.
func jobsOfKind(t *testing.T, url, kind string) []string {
	t.Helper()
	ctx := context.Background()
	s, err := database.Open(ctx, url, database.Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	q, err := queue.New(s, queue.Config{})
	if err != nil {
		t.Fatal(err)
	}
	res, err := q.List(ctx, river.NewJobListParams().Kinds(kind).First(100))
	if err != nil {
		t.Fatal(err)
	}
	var keys []string
	for _, j := range res.Jobs {
		keys = append(keys, string(j.EncodedArgs))
	}
	return keys
}

// migratedWithFile migrates the books at url and writes content to an
// intents file, whose path it returns.
func migratedWithFile(t *testing.T, url, content string) string {
	t.Helper()
	file := filepath.Join(t.TempDir(), "intents.csv")
	if err := os.WriteFile(file, []byte(content), 0o600); err != nil {
		t.Fatal(err)
	}
	if code, out, errOut := cli(t, "migrate", "--database-url", url); code != 0 {
		t.Fatalf("migrate: %d %s %s", code, out, errOut)
	}
	return file
}

// TestImportIntentsChargesOnlyWithFlag: a backfill of pending intents
// charges nobody unless --charge is given; --charge without a charger is an
// error naming the setting; with one, the charges are enqueued once.
func TestImportIntentsChargesOnlyWithFlag(t *testing.T) {
	t.Parallel()
	for _, eng := range []struct{ name, url string }{
		{"postgres", dbtest.NewSchemaURL(t)},
		{"sqlite", "sqlite:" + filepath.Join(t.TempDir(), "r.db")},
	} {
		t.Run(eng.name, func(t *testing.T) {
			url := eng.url
			file := migratedWithFile(t, url, pendingIntentsCSV)
			code, out, errOut := cli(t, "import", "intents", file, "--database-url", url)
			if code != 0 || !strings.Contains(out, "3 row(s), 3 intent(s) created") ||
				!strings.Contains(out, "2 pending intent(s) imported and not charged") || !strings.Contains(out, "--charge") {
				t.Fatalf("import without --charge: %d %q %q", code, out, errOut)
			}
			if jobs := chargeJobs(t, url); len(jobs) != 0 {
				t.Fatalf("import without --charge enqueued charges: %v", jobs)
			}

			// No charger: a clear error naming the setting, and nothing enqueued.
			code, out, errOut = cli(t, "import", "intents", file, "--charge", "--database-url", url)
			if code != 1 || !strings.Contains(errOut, "intents.csv line 2") || !strings.Contains(errOut, "RECONCILE_PROVIDERS_STRIPE_API_KEY") {
				t.Fatalf("--charge without a charger: %d %q %q", code, out, errOut)
			}
			if jobs := chargeJobs(t, url); len(jobs) != 0 {
				t.Fatalf("a refused import enqueued charges: %v", jobs)
			}

			// With a charger, the pending intents imported before get their
			// charges, once.
			env := []string{"RECONCILE_PROVIDERS_STRIPE_API_KEY=sk_test_import", "RECONCILE_PROVIDERS_STRIPE_BASE_URL=http://127.0.0.1:1"}
			code, out, errOut = cliEnv(t, env, "import", "intents", file, "--charge", "--database-url", url)
			if code != 0 || !strings.Contains(out, "0 intent(s) created, 3 already present") ||
				!strings.Contains(out, "2 pending intent(s): 2 charge job(s) enqueued") {
				t.Fatalf("--charge: %d %q %q", code, out, errOut)
			}
			jobs := chargeJobs(t, url)
			if len(jobs) != 2 || !strings.Contains(strings.Join(jobs, " "), "charge:order-1") || strings.Contains(strings.Join(jobs, " "), "order-3") {
				t.Fatalf("charge jobs = %v", jobs)
			}
			code, out, errOut = cliEnv(t, env, "import", "intents", file, "--charge", "--database-url", url)
			if code != 0 || !strings.Contains(out, "0 charge job(s) enqueued, 2 already queued") {
				t.Fatalf("--charge again: %d %q %q", code, out, errOut)
			}
			if jobs := chargeJobs(t, url); len(jobs) != 2 {
				t.Fatalf("charge jobs after a second --charge = %v", jobs)
			}
		})
	}
}

const pendingRefundsCSV = `key,kind,refund_of,provider,amount,currency,status,created_at
charge:order-9,charge,,stripe,40.00,USD,succeeded,2026-11-02T06:30:00Z
refund:order-9:1,refund,charge:order-9,stripe,15.00,USD,pending,2026-11-02T07:00:00Z
refund:order-9:2,refund,charge:order-9,stripe,5.00,USD,succeeded,2026-11-02T07:05:00Z
`

// TestImportIntentsRefundsWithFlag: a pending refund in an intents file is
// sent only with --charge, through a refund job (never a charge job), once;
// without a provider able to refund, --charge is an error naming what to
// set.
func TestImportIntentsRefundsWithFlag(t *testing.T) {
	t.Parallel()
	for _, eng := range []struct{ name, url string }{
		{"postgres", dbtest.NewSchemaURL(t)},
		{"sqlite", "sqlite:" + filepath.Join(t.TempDir(), "r.db")},
	} {
		t.Run(eng.name, func(t *testing.T) {
			url := eng.url
			file := migratedWithFile(t, url, pendingRefundsCSV)
			code, out, errOut := cli(t, "import", "intents", file, "--database-url", url)
			if code != 0 || !strings.Contains(out, "3 intent(s) created") ||
				!strings.Contains(out, "1 pending refund(s) imported and not sent") {
				t.Fatalf("import without --charge: %d %q %q", code, out, errOut)
			}
			if jobs := jobsOfKind(t, url, "refund"); len(jobs) != 0 {
				t.Fatalf("import without --charge enqueued refunds: %v", jobs)
			}
			code, out, errOut = cli(t, "import", "intents", file, "--charge", "--database-url", url)
			if code != 1 || !strings.Contains(errOut, "intents.csv line 3") || !strings.Contains(errOut, "cannot send refunds") {
				t.Fatalf("--charge without a refunder: %d %q %q", code, out, errOut)
			}
			env := []string{"RECONCILE_PROVIDERS_STRIPE_API_KEY=sk_test_import", "RECONCILE_PROVIDERS_STRIPE_BASE_URL=http://127.0.0.1:1"}
			for range 2 {
				code, out, errOut = cliEnv(t, env, "import", "intents", file, "--charge", "--database-url", url)
				if code != 0 || !strings.Contains(out, "1 pending refund(s): ") {
					t.Fatalf("--charge: %d %q %q", code, out, errOut)
				}
			}
			if !strings.Contains(out, "0 refund job(s) enqueued, 1 already queued") {
				t.Fatalf("--charge again: %q", out)
			}
			refunds, charges := jobsOfKind(t, url, "refund"), chargeJobs(t, url)
			if len(refunds) != 1 || !strings.Contains(refunds[0], "refund:order-9:1") || len(charges) != 0 {
				t.Fatalf("refund jobs %v, charge jobs %v; want the one pending refund and no charge", refunds, charges)
			}
		})
	}
}

// TestImportIntentsHelpSaysNoCharge keeps the help honest about charging.
func TestImportIntentsHelpSaysNoCharge(t *testing.T) {
	t.Parallel()
	code, out, _ := cli(t, "import", "intents", "--help")
	if code != 0 || !strings.Contains(out, "Nothing is charged unless --charge is given") || !strings.Contains(out, "--charge") {
		t.Fatalf("help: %d %s", code, out)
	}
}
