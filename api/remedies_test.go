package api

import (
	"context"
	"encoding/json"
	"net/http"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/reconcilehq/reconcile/internal/openapitest"
	"github.com/reconcilehq/reconcile/ledger"
	"github.com/reconcilehq/reconcile/money"
)

// remedyFindings seeds a duplicate charge of KES 2,500 (R-D1 pays the
// intent, R-D2 is the duplicate), an amount_mismatch with KES 3,000 at
// risk and a stuck pending Stripe intent.
func remedyFindings(t *testing.T, s ledger.Store) (dup, amt, stuck string) {
	t.Helper()
	ctx := context.Background()
	at := time.Date(2026, 11, 20, 8, 0, 0, 0, time.UTC)
	amount := func(v, cur string) money.Amount {
		a, err := money.Parse(v, cur)
		if err != nil {
			t.Fatal(err)
		}
		return a
	}
	for _, n := range []ledger.NewIntent{
		{IntentParams: ledger.IntentParams{Key: "charge:api-dup", Provider: "mpesa", Amount: amount("2500", "KES")}, State: ledger.StateSucceeded, CreatedAt: at},
		{IntentParams: ledger.IntentParams{Key: "charge:api-amt", Provider: "mpesa", Amount: amount("9000", "KES")}, State: ledger.StateSucceeded, CreatedAt: at},
		{IntentParams: ledger.IntentParams{Key: "charge:api-stuck", Provider: "stripe", Amount: amount("15", "USD")}, State: ledger.StatePending, CreatedAt: at},
	} {
		if _, _, err := s.CreateIntent(ctx, n); err != nil {
			t.Fatal(err)
		}
	}
	for i, id := range []string{"R-D1", "R-D2"} {
		if _, err := s.UpsertProviderTxn(ctx, ledger.ProviderTxn{Provider: "mpesa", ID: id, Type: ledger.TxnCharge, Status: ledger.TxnSucceeded,
			Amount: amount("2500", "KES"), OccurredAt: at.Add(time.Duration(i) * time.Minute)}, ledger.Source{Channel: "statement", Ref: id, ReceivedAt: at}); err != nil {
			t.Fatal(err)
		}
	}
	fs := []ledger.Finding{
		{Kind: ledger.KindDuplicateCharge, Provider: "mpesa", IntentKey: "charge:api-dup", ProviderTxnIDs: []string{"R-D1", "R-D2"}, AtRisk: amount("2500", "KES")},
		{Kind: ledger.KindAmountMismatch, Provider: "mpesa", IntentKey: "charge:api-amt", AtRisk: amount("3000", "KES")},
		{Kind: ledger.KindStuckIntent, Provider: "stripe", IntentKey: "charge:api-stuck", AtRisk: amount("15", "USD")},
	}
	for i := range fs {
		f := &fs[i]
		f.ID, f.Severity, f.Detail, f.OccurredAt = ledger.FindingID(f.Kind, f.IntentKey, f.ProviderTxnIDs), ledger.SeverityMedium, string(f.Kind), at
		if _, err := s.UpsertFinding(ctx, *f, 1, at); err != nil {
			t.Fatal(err)
		}
	}
	return fs[0].ID, fs[1].ID, fs[2].ID
}

// exerciseRemedies drives the remedies of the findings API: a refund above
// the threshold awaits approval (202), its requester cannot approve it
// (403), another person can; a write-off request is rejected and a smaller
// one applied; a stuck intent is retried and cancelled.
func exerciseRemedies(t *testing.T, c *openapitest.Checker, base string, s ledger.Store) {
	dup, amt, stuck := remedyFindings(t, s)
	as := func(who string) http.Header {
		return http.Header{"Authorization": {"Bearer " + testAPIToken}, "Content-Type": {"application/json"}, ActorHeader: {who}}
	}
	post := func(path, body, who string) openapitest.Exchange {
		return c.Do(base, http.MethodPost, path, []byte(body), as(who))
	}
	type detail struct {
		Finding  struct{ Status string } `json:"finding"`
		Remedies []struct {
			ID        int64  `json:"id"`
			Kind      string `json:"kind"`
			Status    string `json:"status"`
			TxnID     string `json:"txn_id"`
			RefundKey string `json:"refund_key"`
			DecidedBy string `json:"decided_by"`
		} `json:"remedies"`
	}
	read := func(e openapitest.Exchange) detail {
		var d detail
		if err := json.Unmarshal([]byte(e.Body), &d); err != nil {
			t.Fatalf("%d %s: %v", e.Code, e.Body, err)
		}
		return d
	}
	f := "/v1/findings/"
	for name, tc := range map[string]struct {
		path, body string
		code       int
		says       string
	}{
		"refund without a note":     {f + dup + "/refund", `{}`, http.StatusUnprocessableEntity, `"field":"note"`},
		"refund of the original":    {f + dup + "/refund", `{"note":"x","txn_id":"R-D1"}`, http.StatusUnprocessableEntity, `"field":"txn_id"`},
		"refund of another kind":    {f + amt + "/refund", `{"note":"x"}`, http.StatusUnprocessableEntity, "does not apply"},
		"refund beyond the payment": {f + dup + "/refund", `{"note":"x","amount":"2500.01"}`, http.StatusUnprocessableEntity, `"field":"amount"`},
		"a payment for a write-off": {f + amt + "/writeoff", `{"note":"x","txn_id":"R-D2"}`, http.StatusUnprocessableEntity, `"field":"txn_id"`},
		"unknown field":             {f + dup + "/refund", `{"note":"x","txn":"R-D2"}`, http.StatusBadRequest, "body"},
		"no such request":           {f + dup + "/requests/999/approve", `{}`, http.StatusUnprocessableEntity, `"field":"request"`},
		"not a request number":      {f + dup + "/requests/x/approve", `{}`, http.StatusUnprocessableEntity, `"field":"request"`},
		"rejection without a note":  {f + dup + "/requests/1/reject", `{}`, http.StatusUnprocessableEntity, `"field":"note"`},
		"no such finding":           {f + "f_00000000000000000000/refund", `{"note":"x"}`, http.StatusNotFound, "no such finding"},
		"retry of a duplicate":      {f + dup + "/retry", `{"note":"x"}`, http.StatusUnprocessableEntity, "does not apply"},
		"cancel without a note":     {f + stuck + "/cancel", `{}`, http.StatusUnprocessableEntity, `"field":"note"`},
	} {
		if e := post(tc.path, tc.body, "ops@example.com"); e.Code != tc.code || !strings.Contains(e.Body, tc.says) {
			t.Errorf("%s: %d %s", name, e.Code, e.Body)
		}
	}

	e := post(f+dup+"/refund", `{"note":"customer paid twice"}`, "ops@example.com")
	d := read(e)
	if e.Code != http.StatusAccepted || len(d.Remedies) != 1 || d.Remedies[0].Status != "awaiting_approval" || d.Remedies[0].TxnID != "R-D2" ||
		d.Finding.Status != "open" {
		t.Fatalf("refund above the threshold: %d %s", e.Code, e.Body)
	}
	req := strconv.FormatInt(d.Remedies[0].ID, 10)
	if e := post(f+dup+"/refund", `{"note":"again"}`, "lead@example.com"); e.Code != http.StatusConflict {
		t.Errorf("second refund: %d %s", e.Code, e.Body)
	}
	if e := post(f+dup+"/requests/"+req+"/approve", `{}`, "ops@example.com"); e.Code != http.StatusForbidden || !strings.Contains(e.Body, ActorHeader) {
		t.Errorf("self-approval: %d %s", e.Code, e.Body)
	}
	e = post(f+dup+"/requests/"+req+"/approve", `{"note":"statement checked"}`, "lead@example.com")
	d = read(e)
	if e.Code != http.StatusOK || d.Remedies[0].Status != "applied" || d.Remedies[0].DecidedBy != "lead@example.com" ||
		d.Remedies[0].RefundKey == "" || d.Finding.Status != "open" {
		t.Fatalf("approval: %d %s", e.Code, e.Body)
	}
	if e := post(f+dup+"/requests/"+req+"/reject", `{"note":"late"}`, "lead@example.com"); e.Code != http.StatusConflict || !strings.Contains(e.Body, `"status":"applied"`) {
		t.Errorf("rejecting an approved request: %d %s", e.Code, e.Body)
	}

	e = post(f+amt+"/writeoff", `{"note":"bank fee","amount":"2500"}`, "ops@example.com")
	d = read(e)
	if e.Code != http.StatusAccepted {
		t.Fatalf("write-off above the threshold: %d %s", e.Code, e.Body)
	}
	req = strconv.FormatInt(d.Remedies[0].ID, 10)
	e = post(f+amt+"/requests/"+req+"/reject", `{"note":"too much to write off"}`, "lead@example.com")
	if d = read(e); e.Code != http.StatusOK || d.Remedies[0].Status != "rejected" || d.Finding.Status != "open" {
		t.Fatalf("rejection: %d %s", e.Code, e.Body)
	}
	e = post(f+amt+"/writeoff", `{"note":"bank fee","amount":"30"}`, "ops@example.com")
	if d = read(e); e.Code != http.StatusOK || d.Finding.Status != "resolved" || d.Remedies[1].Status != "applied" {
		t.Fatalf("write-off: %d %s", e.Code, e.Body)
	}
	if e := post(f+amt+"/writeoff", `{"note":"again"}`, "ops@example.com"); e.Code != http.StatusConflict || !strings.Contains(e.Body, `"status":"resolved"`) {
		t.Errorf("write-off of a resolved finding: %d %s", e.Code, e.Body)
	}

	if e := post(f+stuck+"/retry", `{"note":"the job gave up"}`, "ops@example.com"); e.Code != http.StatusOK || read(e).Finding.Status != "open" {
		t.Fatalf("retry: %d %s", e.Code, e.Body)
	}
	if e := post(f+stuck+"/cancel", `{"note":"order withdrawn"}`, "ops@example.com"); e.Code != http.StatusOK || read(e).Finding.Status != "resolved" {
		t.Fatalf("cancel: %d %s", e.Code, e.Body)
	}
	if e := post(f+stuck+"/retry", `{"note":"x"}`, "ops@example.com"); e.Code != http.StatusConflict {
		t.Errorf("retry of a resolved finding: %d %s", e.Code, e.Body)
	}
}
