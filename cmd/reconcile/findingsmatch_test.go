package main

import (
	"context"
	"encoding/json"
	"net/http"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/reconcilehq/reconcile/internal/database"
	"github.com/reconcilehq/reconcile/internal/dbtest"
	"github.com/reconcilehq/reconcile/ledger"
	"github.com/reconcilehq/reconcile/money"
)

// seedTypo stores a payment whose payer typed the account number wrong:
// intent k-typo (KES 100, reference INV1001) with its missing_at_provider,
// and charge TX-TYPO (KES 100, reference INV1O01) with its unknown_charge,
// each suggesting the other; and intent k-usd in another currency.
func seedTypo(t *testing.T, s ledger.Store) (unknown, missing ledger.Finding) {
	t.Helper()
	ctx := context.Background()
	at := time.Date(2026, 3, 14, 9, 0, 0, 0, time.UTC)
	amt := func(v, cur string) money.Amount {
		a, err := money.Parse(v, cur)
		if err != nil {
			t.Fatal(err)
		}
		return a
	}
	for _, p := range []ledger.IntentParams{
		{Key: "k-typo", Provider: "mpesa", Amount: amt("100", "KES"), Customer: "254712340845", Reference: "INV1001"},
		{Key: "k-usd", Provider: "mpesa", Amount: amt("100", "USD"), Customer: "254712340845", Reference: "INV1002"},
	} {
		if _, _, err := s.CreateIntent(ctx, ledger.NewIntent{IntentParams: p, State: ledger.StateSucceeded, CreatedAt: at}); err != nil {
			t.Fatal(err)
		}
	}
	txn := ledger.ProviderTxn{Provider: "mpesa", ID: "TX-TYPO", Type: ledger.TxnCharge, Status: ledger.TxnSucceeded,
		Amount: amt("100", "KES"), OccurredAt: at.Add(time.Minute), Reference: "INV1O01"}
	if _, err := s.UpsertProviderTxn(ctx, txn, ledger.Source{Channel: "statement", Ref: "s.csv:2", ReceivedAt: at}); err != nil {
		t.Fatal(err)
	}
	unknown = ledger.Finding{ID: ledger.FindingID(ledger.KindUnknownCharge, "", []string{"TX-TYPO"}), Kind: ledger.KindUnknownCharge,
		Severity: ledger.SeverityMedium, Provider: "mpesa", ProviderTxnIDs: []string{"TX-TYPO"}, Expected: amt("0", "KES"),
		Actual: amt("100", "KES"), AtRisk: amt("100", "KES"), Detail: "unknown", OccurredAt: txn.OccurredAt}
	missing = ledger.Finding{ID: ledger.FindingID(ledger.KindMissingAtProvider, "k-typo", nil), Kind: ledger.KindMissingAtProvider,
		Severity: ledger.SeverityMedium, Provider: "mpesa", IntentKey: "k-typo", Expected: amt("100", "KES"),
		AtRisk: amt("100", "KES"), Detail: "missing", OccurredAt: at}
	unknown.Suggestion = ledger.Suggestion{FindingID: missing.ID, IntentKey: "k-typo", TxnID: "TX-TYPO", Reason: "look-alike"}
	missing.Suggestion = ledger.Suggestion{FindingID: unknown.ID, IntentKey: "k-typo", TxnID: "TX-TYPO", Reason: "look-alike"}
	if _, err := s.UpsertFindings(ctx, []ledger.Finding{unknown, missing}, 0, at); err != nil {
		t.Fatal(err)
	}
	return unknown, missing
}

func exerciseFindingsMatch(t *testing.T, c *apiChecker, base string, s ledger.Store) {
	unknown, missing := seedTypo(t, s)
	auth := http.Header{"Authorization": {"Bearer " + testAPIToken}, "Content-Type": {"application/json"},
		ActorHeader: {"carol@example.com"}}
	post := func(path, body string, h http.Header) exchange {
		return c.do(base, http.MethodPost, path, []byte(body), h)
	}
	status := func(e exchange) string {
		var d struct {
			Finding struct{ Status string } `json:"finding"`
		}
		_ = json.Unmarshal([]byte(e.body), &d)
		return d.Finding.Status
	}
	match, unmatch := "/v1/findings/"+unknown.ID+"/match", "/v1/findings/"+unknown.ID+"/unmatch"
	for name, tc := range map[string]struct {
		path, body string
		code       int
		says       string
	}{
		"not an unknown_charge": {"/v1/findings/" + missing.ID + "/match", `{"intent_key":"k-typo"}`, http.StatusUnprocessableEntity, "only an unknown_charge"},
		"currencies differ":     {match, `{"intent_key":"k-usd"}`, http.StatusUnprocessableEntity, "currencies differ"},
		"no such intent":        {match, `{"intent_key":"k-none"}`, http.StatusUnprocessableEntity, "no intent"},
		"no such finding":       {"/v1/findings/f_00000000000000000000/match", `{"intent_key":"k-typo"}`, http.StatusNotFound, "no such finding"},
		"not matched":           {unmatch, `{}`, http.StatusConflict, "not matched by hand"},
		"bad body":              {match, `{"intent":"k-typo"}`, http.StatusBadRequest, "body"},
	} {
		if e := post(tc.path, tc.body, auth); e.code != tc.code || !strings.Contains(e.body, tc.says) {
			t.Errorf("%s: %d %s", name, e.code, e.body)
		}
	}
	if e := post(match, `{"intent_key":"k-typo"}`, http.Header{"Content-Type": {"application/json"}}); e.code != http.StatusUnauthorized {
		t.Errorf("match without a token: %d", e.code)
	}
	e := post(match, `{"intent_key":"k-typo","note":"payer typed O for 0"}`, auth)
	if e.code != http.StatusOK || status(e) != "resolved" || !strings.Contains(e.body, `"matched"`) {
		t.Fatalf("match: %d %s", e.code, e.body)
	}
	if got, err := s.GetFinding(context.Background(), missing.ID); err != nil || got.Status != ledger.FindingResolved || got.Resolver != "carol@example.com" {
		t.Errorf("missing_at_provider after match: %+v %v", got, err)
	}
	if e := post(match, `{"intent_key":"k-typo"}`, auth); e.code != http.StatusConflict || !strings.Contains(e.body, "already matched by hand") {
		t.Errorf("match twice: %d %s", e.code, e.body)
	}
	if e := post(unmatch, `{"note":"wrong payer"}`, auth); e.code != http.StatusOK || status(e) != "open" || !strings.Contains(e.body, `"unmatched"`) {
		t.Errorf("unmatch: %d %s", e.code, e.body)
	}
}

// TestFindingsMatchCLI accepts a suggestion from the command line on both
// engines: show names the command, a wrong match is refused with the
// reason, match resolves both findings, unmatch reopens them.
func TestFindingsMatchCLI(t *testing.T) {
	t.Parallel()
	for _, url := range []string{dbtest.NewSchemaURL(t), "sqlite:" + filepath.Join(t.TempDir(), "r.db")} {
		ctx := context.Background()
		s, err := database.Open(ctx, url, database.Options{})
		if err != nil {
			t.Fatal(err)
		}
		if _, err := database.Migrate(ctx, s); err != nil {
			t.Fatal(err)
		}
		unknown, missing := seedTypo(t, s)
		s.Close()
		run := func(args ...string) (int, string, string) {
			t.Helper()
			return cli(t, append(args, "--database-url", url, "--actor", "dave")...)
		}
		if code, out, _ := cli(t, "findings", "show", missing.ID, "--database-url", url); code != 0 ||
			!strings.Contains(out, "accept: reconcile findings match "+unknown.ID+" --intent k-typo") {
			t.Fatalf("show: %d\n%s", code, out)
		}
		if code, _, errOut := run("findings", "match", unknown.ID, "--intent", "k-usd"); code != exitUsage || !strings.Contains(errOut, "currencies differ") {
			t.Fatalf("match across currencies: %d %s", code, errOut)
		}
		if code, _, errOut := run("findings", "match", missing.ID, "--intent", "k-typo"); code != exitUsage || !strings.Contains(errOut, "only an unknown_charge") {
			t.Fatalf("match a missing_at_provider: %d %s", code, errOut)
		}
		code, out, errOut := run("findings", "match", unknown.ID, "--intent", "k-typo", "--note", "O for 0")
		want := "matched provider txn TX-TYPO with intent k-typo\n" + unknown.ID + " unknown_charge: resolved\n" + missing.ID + " missing_at_provider: resolved\n"
		if code != 0 || out != want {
			t.Fatalf("match: %d %q %s, want %q", code, out, errOut, want)
		}
		if code, _, errOut := run("findings", "match", unknown.ID, "--intent", "k-typo"); code == 0 || !strings.Contains(errOut, "already matched by hand") {
			t.Fatalf("match twice: %d %s", code, errOut)
		}
		code, out, _ = run("findings", "unmatch", unknown.ID)
		if code != 0 || !strings.Contains(out, unknown.ID+" unknown_charge: open") || !strings.Contains(out, missing.ID+" missing_at_provider: open") {
			t.Fatalf("unmatch: %d %s", code, out)
		}
	}
}
