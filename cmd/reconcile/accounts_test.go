package main

import (
	"bytes"
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"os"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/stripe/stripe-go/v85/webhook"

	"github.com/reconcilehq/reconcile/config"
	"github.com/reconcilehq/reconcile/internal/dbtest"
	"github.com/reconcilehq/reconcile/ledger"
)

// TestTwoPaybillsFromTheCommandLine: a business with two paybills, as its
// operator runs it on the embedded default or on PostgreSQL. The intents
// file names each invoice's paybill (the account column), each paybill's
// portal statement is imported with --account, and one run of the day
// reconciles each paybill apart: the branch's payment naming the main
// paybill's invoice pays nothing there, and each account's findings are
// listed apart.
func TestTwoPaybillsFromTheCommandLine(t *testing.T) {
	t.Parallel()
	onBothEngines(t, func(t *testing.T, u *cliUser) {
		write := u.write
		cfg := write("config.yaml", `providers:
  mpesa:
    short_code: "600638"
    accounts:
      - short_code: "600639"
        name: westlands
`)
		u.common = append(u.common, "--config", cfg)
		do := u.do
		do(0, "migrate")
		do(0, "import", "intents", write("intents.csv", `key,provider,amount,currency,status,created_at,reference,account
inv:A1,mpesa,1500,KES,succeeded,2026-03-12T09:00:00+03:00,INVA1,
inv:A2,mpesa,700,KES,succeeded,2026-03-12T09:05:00+03:00,INVA2,default
inv:B1,mpesa,900,KES,succeeded,2026-03-12T09:10:00+03:00,INVB1,600639
`))
		if out := do(1, "import", "intents", write("bad.csv", `key,provider,amount,currency,status,created_at,account
inv:C1,mpesa,100,KES,succeeded,2026-03-12T09:00:00+03:00,600640
`)); !strings.Contains(out, "bad.csv") || !strings.Contains(out, "account") || !strings.Contains(out, "600640") {
			t.Fatalf("an intent of an unknown account:\n%s", out)
		}
		header := "Receipt No.,Completion Time,Initiation Time,Details,Transaction Status,Paid In,Withdrawn,Balance,Balance Confirmed,Reason Type,Other Party Info,Linked Transaction ID,A/C No.\n"
		mainCSV := write("main.csv", header+
			`SCA0000001,12-03-2026 10:00:00,12-03-2026 10:00:00,Pay Bill from 2547****0342 - CHEBET Acc. INVA1,Completed,"1,500.00",,"1,500.00",TRUE,Pay Bill Online,2547****0342 - CHEBET,,INVA1
`)
		do(0, "import", "statement", "--provider", "mpesa", mainCSV)
		// The branch's export names its paybill above the header: it
		// is refused in the main paybill's books.
		branch := write("branch.csv", "Organization Name,WESTLANDS\nPaybill,600639\n\n"+header+
			`SCB0000001,12-03-2026 11:00:00,12-03-2026 11:00:00,Pay Bill from 2547****0111 - ATIENO Acc. INVB1,Completed,900.00,,900.00,TRUE,Pay Bill Online,2547****0111 - ATIENO,,INVB1
SCB0000003,12-03-2026 13:00:00,12-03-2026 13:00:00,Pay Bill from 2547****0222 - OTIENO Acc. INVA2,Completed,700.00,,"1,600.00",TRUE,Pay Bill Online,2547****0222 - OTIENO,,INVA2
`)
		if out := do(1, "import", "statement", "--provider", "mpesa", branch); !strings.Contains(out, "branch.csv line 2") ||
			!strings.Contains(out, "Paybill") || !strings.Contains(out, "--account 600639") {
			t.Fatalf("the branch's statement into the main paybill:\n%s", out)
		}
		do(0, "import", "statement", "--provider", "mpesa", "--account", "600639", branch)
		// The main paybill's statement, checked as the branch's: its
		// payment is in the books, of another account.
		if out := do(0, "import", "statement", "--provider", "mpesa", "--account", "600639", "--dry-run", mainCSV); !strings.Contains(out,
			"0 new, 0 already present, 1 present otherwise") {
			t.Fatalf("a dry run of the main statement as the branch's:\n%s", out)
		}
		if out := do(2, "run", "--provider", "mpesa", "--account", "600640", "--from", "2026-03-12", "--no-pull"); !strings.Contains(out, "not an account") {
			t.Fatalf("run of an unknown account:\n%s", out)
		}
		out := do(0, "run", "--provider", "mpesa", "--from", "2026-03-12", "--no-pull")
		main, branch, ok := strings.Cut(out, "reconcile run: mpesa@600639")
		for _, c := range []struct {
			what string
			ok   bool
		}{
			{"the main paybill's run first", ok && strings.Contains(main, "reconcile run: mpesa 2026-03-12")},
			{"its invoice missing", strings.Contains(main, "missing_at_provider  1")},
			{"no unknown charge in it", !strings.Contains(main, "unknown_charge")},
			{"the branch's payment unknown there", strings.Contains(branch, "unknown_charge       1")},
			{"nothing missing in the branch", !strings.Contains(branch, "missing_at_provider")},
		} {
			if !c.ok {
				t.Fatalf("one run of both paybills: want %s:\n%s", c.what, out)
			}
		}
		if out := do(0, "findings", "list", "--provider", "mpesa", "--account", "default"); !strings.Contains(out, "inv:A2") ||
			strings.Contains(out, "SCB0000003") {
			t.Fatalf("the main paybill's findings:\n%s", out)
		}
		if out := do(0, "findings", "list", "--provider", "mpesa", "--account", "600639", "--format", "json"); !strings.Contains(out, "SCB0000003") ||
			!strings.Contains(out, `"account": "600639"`) || strings.Contains(out, "inv:A2") {
			t.Fatalf("the branch's findings:\n%s", out)
		}
		if out := do(0, "findings", "list"); !strings.Contains(out, "ACCOUNT") || !strings.Contains(out, "mpesa@600639") {
			t.Fatalf("every finding, with its account:\n%s", out)
		}
		checkCloseOfTwoPaybills(t, do)
	})
}

// checkCloseOfTwoPaybills: March's close has a section per paybill, each
// summing its own intents, evidence and findings; --account reports one,
// and cannot close the month for one paybill alone.
func checkCloseOfTwoPaybills(t *testing.T, do func(want int, args ...string) string) {
	t.Helper()
	type sum struct {
		N      int    `json:"n"`
		Amount string `json:"amount"`
	}
	var c struct {
		Account  string `json:"account"`
		Sections []struct {
			Provider   string `json:"provider"`
			Account    string `json:"account"`
			Currencies []struct {
				Intents sum `json:"intents"`
				In      sum `json:"evidence_in"`
				Open    []struct {
					Kind string `json:"kind"`
				} `json:"open"`
			} `json:"currencies"`
		} `json:"providers"`
	}
	read := func(args ...string) {
		t.Helper()
		out := do(0, append([]string{"report", "close", "--period", "2026-03", "--provider", "mpesa", "--format", "json"}, args...)...)
		c.Sections = nil
		if err := json.Unmarshal([]byte(out), &c); err != nil {
			t.Fatalf("close report: %v\n%s", err, out)
		}
	}
	read()
	want := []string{"mpesa 2 2200.00 1 1500.00 [missing_at_provider]", "mpesa@600639 1 900.00 2 1600.00 [unknown_charge]"}
	var got []string
	for _, s := range c.Sections {
		for _, cur := range s.Currencies {
			var kinds []string
			for _, o := range cur.Open {
				kinds = append(kinds, o.Kind)
			}
			got = append(got, fmt.Sprintf("%s %d %s %d %s %v", ledger.Scope(s.Provider, s.Account), cur.Intents.N, cur.Intents.Amount,
				cur.In.N, cur.In.Amount, kinds))
		}
	}
	if !slices.Equal(got, want) {
		t.Fatalf("close of two paybills:\n got %q\nwant %q", got, want)
	}
	read("--account", "600639")
	if c.Account != "600639" || len(c.Sections) != 1 || c.Sections[0].Account != "600639" {
		t.Fatalf("close of the branch alone: %+v", c)
	}
	if out := do(0, "report", "close", "--period", "2026-03"); !strings.Contains(out, "mpesa@600639  2026-03-01") {
		t.Fatalf("close report text names the branch:\n%s", out)
	}
	if out := do(2, "report", "close", "--period", "2026-03", "--provider", "mpesa", "--account", "600639", "--close", "--note", "n",
		"--actor", "lead@example.com"); !strings.Contains(out, "whole provider") {
		t.Fatalf("closing one paybill's month:\n%s", out)
	}
}

// TestStripeWebhookOfEachAccount: serve's Stripe webhook, on both engines,
// places an event signed with the secret of a separate account's own
// endpoint in that account, and one signed with the platform's secret by
// its account field; with only an account's secrets it is served too.
func TestStripeWebhookOfEachAccount(t *testing.T) {
	t.Parallel()
	const ghanaSecret = "whsec_test_serve_ghana_0123456789"
	raw, err := os.ReadFile("../../providers/stripe/testdata/events/charge_succeeded.json")
	if err != nil {
		t.Fatal(err)
	}
	// event of charge id, naming account acct in its account field (none
	// when empty).
	event := func(id, acct string) []byte {
		b := bytes.ReplaceAll(raw, []byte("evt_3PgafuB7WZ01zgkW1s8Yc0Dd"), []byte("evt_"+id))
		b = bytes.ReplaceAll(b, []byte("ch_3PgafuB7WZ01zgkW0x1Ax2Bb"), []byte(id))
		if acct != "" {
			b = bytes.Replace(b, []byte(`{`), []byte(`{"account":"`+acct+`",`), 1)
		}
		return b
	}
	accounts := func(platform bool) func(*config.Config) {
		return func(cfg *config.Config) {
			s := &cfg.Providers.Stripe
			s.Accounts = []config.StripeAccount{{ID: "acct_1Kenya"}, {ID: "acct_1Ghana", WebhookSecrets: []string{ghanaSecret}}}
			if !platform {
				s.WebhookSecrets = nil
			}
		}
	}
	for _, e := range dbtest.EngineURLs() {
		t.Run(e.Name, func(t *testing.T) {
			t.Parallel()
			for _, platform := range []bool{true, false} {
				s, logs := testServer(t, e.URL(t), accounts(platform))
				cases := []struct{ id, acct, secret, want string }{{"ch_ghana1", "", ghanaSecret, "acct_1Ghana"}}
				if platform {
					cases = append(cases, struct{ id, acct, secret, want string }{"ch_kenya1", "acct_1Kenya", testWebhookSecret, "acct_1Kenya"},
						struct{ id, acct, secret, want string }{"ch_platform1", "", testWebhookSecret, ""})
				}
				for _, c := range cases {
					body := event(c.id, c.acct)
					r := httptest.NewRequest(http.MethodPost, "/webhooks/stripe", bytes.NewReader(body))
					r.Header.Set("Stripe-Signature", webhook.GenerateTestSignedPayload(&webhook.UnsignedPayload{Payload: body,
						Secret: c.secret, Timestamp: time.Now()}).Header)
					w := httptest.NewRecorder()
					s.Public().ServeHTTP(w, r)
					if w.Code != http.StatusOK {
						t.Fatalf("platform secrets %v, %s: HTTP %d %s\n%s", platform, c.id, w.Code, w.Body, logs)
					}
					x, err := s.store.GetProviderTxn(t.Context(), "stripe", c.id)
					if err != nil || x.Account != c.want {
						t.Errorf("platform secrets %v, %s: in account %q (%v), want %q", platform, c.id, x.Account, err, c.want)
					}
				}
			}
		})
	}
}
