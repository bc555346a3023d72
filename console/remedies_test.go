package console

import (
	"context"
	"net/http"
	"net/http/httptest"
	"net/netip"
	"net/url"
	"strings"
	"testing"
	"time"

	"github.com/shopspring/decimal"

	"github.com/reconcilehq/reconcile/charge"
	"github.com/reconcilehq/reconcile/findings"
	"github.com/reconcilehq/reconcile/internal/dbtest"
	"github.com/reconcilehq/reconcile/internal/golden"
	"github.com/reconcilehq/reconcile/ledger"
	"github.com/reconcilehq/reconcile/queue"
)

const lead = "lead@example.com"

// withRemedies serves b's books again with refunds, retries and approvals
// above KES 1,000: ops and lead operate.
func withRemedies(t *testing.T, b *bundle) {
	t.Helper()
	q, err := queue.New(b.store, queue.Config{})
	if err != nil {
		t.Fatal(err)
	}
	clock := func() time.Time { return t0.Add(5 * time.Hour) }
	payments := charge.New(charge.Deps{Store: b.store, Clock: clock}, charge.Config{})
	payments.UseQueue(q)
	deps := b.console.deps
	deps.Findings = findings.NewService(b.store, findings.Options{Clock: clock, Payments: payments,
		Approvals: findings.Approvals{Thresholds: map[string]decimal.Decimal{"KES": decimal.NewFromInt(1000)}}})
	c, err := New(Config{Mode: ModeProxy, UserHeader: "X-Forwarded-Email", TrustedProxies: []netip.Prefix{netip.MustParsePrefix("127.0.0.0/8")},
		Operators: []string{ops, lead}, Viewers: []string{viewer}}, deps)
	if err != nil {
		t.Fatal(err)
	}
	b.console = c
	b.srv.Close()
	b.srv = httptest.NewServer(c.Handler())
	t.Cleanup(b.srv.Close)
}

// TestRemedyForms: an operator asks for the refund of a duplicate from its
// page; above the threshold it waits for another operator, shown on the
// page and on the requests page; the requester's own approval is refused,
// another operator's creates the refund; a refund that waits for its
// receipt shows so. Pages are golden.
func TestRemedyForms(t *testing.T) {
	t.Parallel()
	for _, e := range dbtest.Engines() {
		t.Run(e.Name, func(t *testing.T) {
			t.Parallel()
			ctx := context.Background()
			b := setup(t, e.New)
			withRemedies(t, b)
			if _, err := b.store.TransitionIntent(ctx, ledger.TransitionParams{Key: "charge:order-4471", From: []ledger.State{ledger.StateProcessing},
				To: ledger.StateSucceeded, Now: t0}); err != nil {
				t.Fatal(err)
			}
			page := "/console/findings/" + b.dup
			if p := b.post(t, ops, "/console/findings/"+b.unknown+"/refund", url.Values{"note": {"x"}}, nil); p.status != http.StatusUnprocessableEntity {
				t.Fatalf("refund of an unknown charge: %d", p.status)
			}
			if p := b.post(t, ops, page+"/refund", url.Values{"note": {"customer paid twice"}, "amount": {"1500.001"}}, nil); p.status != http.StatusUnprocessableEntity ||
				!strings.Contains(p.body, "Refused: ") {
				t.Fatalf("refund with a bad amount: %d\n%s", p.status, p.body)
			}
			if p := b.post(t, viewer, page+"/refund", url.Values{"note": {"x"}}, nil); p.status != http.StatusForbidden {
				t.Fatalf("viewer's refund: %d", p.status)
			}
			if p := b.post(t, ops, page+"/refund", url.Values{"note": {"customer paid twice"}}, nil); p.status != http.StatusSeeOther {
				t.Fatalf("refund: %d\n%s", p.status, p.body)
			}
			golden.Assert(t, "testdata/finding_request.html.golden", b.get(t, ops, page).body)
			golden.Assert(t, "testdata/requests.html.golden", b.get(t, lead, "/console/requests").body)
			rs, err := b.store.ListRemedies(ctx, ledger.RemedyFilter{FindingIDs: []string{b.dup}})
			if err != nil || len(rs) != 1 || rs[0].Status != ledger.RemedyAwaitingApproval || rs[0].TxnID != "SKL1AAAA02" {
				t.Fatalf("remedies %+v, %v", rs, err)
			}
			req := url.Values{"request": {itoa(rs[0].ID)}}
			if p := b.post(t, ops, page+"/approve", req, nil); p.status != http.StatusForbidden || !strings.Contains(p.body, "another operator must approve it") {
				t.Fatalf("self-approval: %d\n%s", p.status, p.body)
			}
			if p := b.post(t, lead, page+"/approve", url.Values{"request": {"x"}}, nil); p.status != http.StatusUnprocessableEntity {
				t.Fatalf("approval of no request: %d", p.status)
			}
			if p := b.post(t, lead, page+"/approve", req, nil); p.status != http.StatusSeeOther {
				t.Fatalf("approval: %d\n%s", p.status, p.body[strings.Index(p.body, "<main>"):])
			}
			if p := b.post(t, lead, page+"/reject", url.Values{"request": {itoa(rs[0].ID)}, "note": {"late"}}, nil); p.status != http.StatusConflict {
				t.Fatalf("rejecting an approved request: %d", p.status)
			}
			key := findings.RefundKey(b.dup, "SKL1AAAA02")
			if _, err := b.store.WaitRefund(ctx, ledger.RefundWait{IntentKey: key, Reason: "charge_txn_id: the charge's M-Pesa receipt is not known yet",
				CheckedAt: t0.Add(5 * time.Hour), NextAt: t0.Add(5*time.Hour + 5*time.Minute)}); err != nil {
				t.Fatal(err)
			}
			golden.Assert(t, "testdata/finding_refund_waiting.html.golden", b.get(t, viewer, page).body)
			golden.Assert(t, "testdata/jobs_waiting.html.golden", b.get(t, ops, "/console/jobs").body)
			if h := historyOf(t, b.store, b.dup); !strings.Contains(h, "requested ops@example.com web") ||
				!strings.Contains(h, "approved lead@example.com web") || !strings.Contains(h, "refund_created lead@example.com web") {
				t.Fatalf("history %s", h)
			}
		})
	}
}
