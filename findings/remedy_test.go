package findings_test

import (
	"context"
	"errors"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/riverqueue/river"
	"github.com/shopspring/decimal"

	"github.com/reconcilehq/reconcile/charge"
	"github.com/reconcilehq/reconcile/findings"
	"github.com/reconcilehq/reconcile/internal/database"
	"github.com/reconcilehq/reconcile/ledger"
	"github.com/reconcilehq/reconcile/money"
	"github.com/reconcilehq/reconcile/providers"
	"github.com/reconcilehq/reconcile/providers/fake"
	"github.com/reconcilehq/reconcile/queue"
)

// remedyBooks are findings to fix: a duplicate charge (D1 pays the intent,
// its attempt recorded it; D2 is the duplicate), an overpaid invoice (two
// payments, the last P2), an amount_mismatch, a stuck pending intent and a
// stuck unknown one whose provider cannot be asked.
type remedyBooks struct {
	store                           ledger.Store
	queue                           *queue.Queue
	dup, over, amt, stuck, stuckUnk string
	now                             *time.Time
}

var t0 = time.Date(2026, 11, 12, 7, 0, 0, 0, time.UTC)

func kes(t testing.TB, v string) money.Amount {
	t.Helper()
	a, err := money.Parse(v, "KES")
	if err != nil {
		t.Fatal(err)
	}
	return a
}

// remedySetup returns the books and a service over them whose approvals
// ask for a second person above KES 1,000.
func remedySetup(t *testing.T, newURL func(testing.TB) string) (*findings.Service, remedyBooks, *[]string) {
	t.Helper()
	ctx := context.Background()
	url := newURL(t)
	s, err := database.Open(ctx, url, database.Options{})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(s.Close)
	if _, err := database.Migrate(ctx, s); err != nil {
		t.Fatal(err)
	}
	must := func(err error) {
		t.Helper()
		if err != nil {
			t.Fatal(err)
		}
	}
	create := func(key string, kind ledger.IntentKind, provider, amount string, state ledger.State) {
		t.Helper()
		_, _, err := s.CreateIntent(ctx, ledger.NewIntent{IntentParams: ledger.IntentParams{Key: key, Kind: kind, Provider: provider,
			Amount: kes(t, amount), Customer: "254712340845"}, State: state, CreatedAt: t0})
		must(err)
	}
	create("charge:dup", ledger.IntentCharge, "mpesa", "2300", ledger.StatePending)
	in, err := s.ClaimIntent(ctx, ledger.ClaimParams{Key: "charge:dup", Owner: "w", Lease: time.Minute, Now: t0})
	must(err)
	a, err := s.StartAttempt(ctx, ledger.AttemptParams{IntentKey: in.Key, ClaimToken: in.ClaimToken, Now: t0})
	must(err)
	_, err = s.UpdateAttempt(ctx, ledger.AttemptUpdate{ID: a.ID, ProviderRef: "ws_CO_D1", Outcome: ledger.OutcomeSucceeded, Now: t0})
	must(err)
	_, err = s.TransitionIntent(ctx, ledger.TransitionParams{Key: in.Key, From: []ledger.State{ledger.StateProcessing}, To: ledger.StateSucceeded, Now: t0})
	must(err)
	create("inv:over", ledger.IntentExpected, "mpesa", "1000", ledger.StatePending)
	create("charge:amt", ledger.IntentCharge, "mpesa", "800", ledger.StateSucceeded)
	create("charge:stuck", ledger.IntentCharge, "mpesa", "500", ledger.StatePending)
	create("charge:unk", ledger.IntentCharge, "other", "700", ledger.StateUnknown)
	for i, tx := range []ledger.ProviderTxn{
		// D2 comes first in id order and last in time: the duplicate is
		// told by what the attempt recorded, not by its id.
		{ID: "D2", Amount: kes(t, "2300"), ProviderRef: "ws_CO_D2"},
		{ID: "D1", Amount: kes(t, "2300"), ProviderRef: "ws_CO_D1"},
		{ID: "P1", Amount: kes(t, "600")},
		{ID: "P2", Amount: kes(t, "500")},
		{ID: "A1", Amount: kes(t, "500")},
	} {
		tx.Provider, tx.Type, tx.Status, tx.OccurredAt = "mpesa", ledger.TxnCharge, ledger.TxnSucceeded, t0.Add(time.Duration(i)*time.Minute)
		if tx.ID == "D1" {
			tx.OccurredAt = t0.Add(-time.Minute)
		}
		_, err := s.UpsertProviderTxn(ctx, tx, ledger.Source{Channel: "statement", Ref: tx.ID, ReceivedAt: t0})
		must(err)
	}
	find := func(kind ledger.Kind, key string, ids []string, atRisk string) ledger.Finding {
		return ledger.Finding{ID: ledger.FindingID(kind, key, ids), Kind: kind, Severity: ledger.SeverityMedium, Provider: "mpesa",
			IntentKey: key, ProviderTxnIDs: ids, AtRisk: kes(t, atRisk), Detail: string(kind), OccurredAt: t0}
	}
	fs := []ledger.Finding{
		find(ledger.KindDuplicateCharge, "charge:dup", []string{"D1", "D2"}, "2300"),
		find(ledger.KindOverpaid, "inv:over", []string{"P1", "P2"}, "100"),
		find(ledger.KindAmountMismatch, "charge:amt", []string{"A1"}, "300"),
		find(ledger.KindStuckIntent, "charge:stuck", nil, "500"),
		find(ledger.KindStuckIntent, "charge:unk", nil, "700"),
	}
	fs[4].Provider = "other"
	_, err = s.UpsertFindings(ctx, fs[:4], 1, t0)
	must(err)
	_, err = s.UpsertFinding(ctx, fs[4], 1, t0)
	must(err)

	q, err := queue.New(s, queue.Config{})
	must(err)
	payments := charge.New(charge.Deps{Store: s, Chargers: map[string]providers.Charger{"mpesa": fake.Instant{}}}, charge.Config{})
	payments.UseQueue(q)
	now := t0.Add(time.Hour)
	var announced []string
	svc := findings.NewService(s, findings.Options{Clock: func() time.Time { return now }, Payments: payments,
		Approvals: findings.Approvals{Thresholds: map[string]decimal.Decimal{"KES": decimal.NewFromInt(1000)}, ExpireAfter: 2 * time.Hour},
		Announce: func(_ context.Context, _ ledger.Tx, f ledger.Finding) error {
			announced = append(announced, "resolved "+f.ID)
			return nil
		},
		AnnounceRemedy: func(_ context.Context, _ ledger.Tx, r ledger.Remedy, f ledger.Finding) error {
			announced = append(announced, string(r.Status)+" "+string(r.Kind)+" "+f.ID)
			return nil
		}})
	return svc, remedyBooks{store: s, queue: q, dup: fs[0].ID, over: fs[1].ID, amt: fs[2].ID, stuck: fs[3].ID, stuckUnk: fs[4].ID, now: &now}, &announced
}

// actions lists the history actions of finding id with who took them.
func actions(t *testing.T, s ledger.Store, id string) []string {
	t.Helper()
	evs, err := s.FindingHistory(context.Background(), id)
	if err != nil {
		t.Fatal(err)
	}
	var out []string
	for _, ev := range evs {
		out = append(out, string(ev.Action)+" "+ev.Who())
	}
	return out
}

// jobsOf lists the queued jobs of kind for intent key.
func jobsOf(t *testing.T, q *queue.Queue, kind, key string) int {
	t.Helper()
	res, err := q.List(context.Background(), river.NewJobListParams().Kinds(kind).First(100))
	if err != nil {
		t.Fatal(err)
	}
	n := 0
	for _, j := range res.Jobs {
		if strings.Contains(string(j.EncodedArgs), `"`+key+`"`) {
			n++
		}
	}
	return n
}

var (
	ops  = ledger.Actor{Name: "ops@example.com", Surface: ledger.SurfaceWeb}
	lead = ledger.Actor{Name: "lead@example.com", Surface: ledger.SurfaceSlack}
)

// TestRefundDuplicate: a refund of a duplicate charge gives back the
// duplicate (not the charge the intent's attempt recorded), for its amount,
// through a refund intent with its job; above the threshold it waits for a
// second person, who is never the requester; the finding stays open; a
// second refund of the same payment is refused.
func TestRefundDuplicate(t *testing.T) {
	t.Parallel()
	for name, newURL := range engines {
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			ctx := context.Background()
			svc, b, announced := remedySetup(t, newURL)
			out, err := svc.Decide(ctx, findings.Decision{Verb: findings.Refund, FindingID: b.dup, Actor: ops, Note: "customer paid twice"})
			if err != nil {
				t.Fatal(err)
			}
			r := out.Remedy
			if !out.Waiting() || r.TxnID != "D2" || !r.Amount.Equal(kes(t, "2300")) || r.RequestedBy != ops.Name || out.Intent != nil {
				t.Fatalf("requested %+v", r)
			}
			if _, err := b.store.GetIntent(ctx, findings.RefundKey(b.dup, "D2")); !errors.Is(err, ledger.ErrNotFound) {
				t.Fatalf("a request created the refund: %v", err)
			}
			// Asking again, from any surface, is refused.
			if _, err := svc.Decide(ctx, findings.Decision{Verb: findings.Refund, FindingID: b.dup, Actor: lead, Note: "again"}); !errors.Is(err, ledger.ErrConflict) {
				t.Fatalf("second request: %v", err)
			}
			// The requester cannot approve it, even from another surface.
			self := ledger.Actor{Name: "OPS@example.com", Surface: ledger.SurfaceCLI}
			if _, err := svc.Decide(ctx, findings.Decision{Verb: findings.Approve, FindingID: b.dup, Actor: self, Remedy: r.ID}); !errors.Is(err, findings.ErrOwnRequest) {
				t.Fatalf("self-approval: %v", err)
			}
			out, err = svc.Decide(ctx, findings.Decision{Verb: findings.Approve, FindingID: b.dup, Actor: lead, Remedy: r.ID, Note: "checked the statement"})
			if err != nil {
				t.Fatal(err)
			}
			key := findings.RefundKey(b.dup, "D2")
			if out.Remedy.Status != ledger.RemedyApplied || out.Remedy.DecidedBy != lead.Name || out.Remedy.RefundKey != key || out.Intent == nil {
				t.Fatalf("approved %+v", out.Remedy)
			}
			in, err := b.store.GetIntent(ctx, key)
			if err != nil || !in.IsRefund() || in.RefundOf != "charge:dup" || !in.Amount.Equal(kes(t, "2300")) ||
				in.Metadata[ledger.MetaChargeTxn] != "D2" || in.State != ledger.StatePending {
				t.Fatalf("refund intent %+v, %v", in, err)
			}
			if n := jobsOf(t, b.queue, "refund", key); n != 1 {
				t.Fatalf("%d refund job(s)", n)
			}
			if f, _ := b.store.GetFinding(ctx, b.dup); f.Status != ledger.FindingOpen {
				t.Fatalf("finding is %s: it waits for the evidence", f.Status)
			}
			want := []string{"opened run 1", "requested ops@example.com", "approved lead@example.com", "refund_created lead@example.com"}
			if got := actions(t, b.store, b.dup); !slices.Equal(got, want) {
				t.Fatalf("history %q, want %q", got, want)
			}
			if !slices.Equal(*announced, []string{"awaiting_approval refund " + b.dup, "applied refund " + b.dup}) {
				t.Fatalf("announced %q", *announced)
			}
			// Approving twice changes nothing.
			if _, err := svc.Decide(ctx, findings.Decision{Verb: findings.Approve, FindingID: b.dup, Actor: lead, Remedy: r.ID}); !errors.Is(err, findings.ErrNotWaiting) {
				t.Fatalf("second approval: %v", err)
			}
			// The original is never the one refunded; the refunded one not
			// again.
			for _, id := range []string{"D1", "D2"} {
				_, err := svc.Decide(ctx, findings.Decision{Verb: findings.Refund, FindingID: b.dup, Actor: ops, Note: "x", TxnID: id})
				if err == nil {
					t.Fatalf("refund of %s accepted", id)
				}
			}
			if n := jobsOf(t, b.queue, "refund", key); n != 1 {
				t.Fatalf("%d refund job(s) after the refusals", n)
			}
		})
	}
}

// TestRequestsRejectedAndExpired: a rejected or expired request does
// nothing, and says so in the history; an expired one is marked so.
func TestRequestsRejectedAndExpired(t *testing.T) {
	t.Parallel()
	for name, newURL := range engines {
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			ctx := context.Background()
			svc, b, _ := remedySetup(t, newURL)
			out, err := svc.Decide(ctx, findings.Decision{Verb: findings.Refund, FindingID: b.dup, Actor: ops, Note: "twice"})
			if err != nil {
				t.Fatal(err)
			}
			if _, err := svc.Decide(ctx, findings.Decision{Verb: findings.Reject, FindingID: b.dup, Actor: lead, Remedy: out.Remedy.ID}); !errors.Is(err, findings.ErrNoteRequired) {
				t.Fatalf("rejection without a note: %v", err)
			}
			rej, err := svc.Decide(ctx, findings.Decision{Verb: findings.Reject, FindingID: b.dup, Actor: lead, Remedy: out.Remedy.ID, Note: "the customer keeps it as credit"})
			if err != nil || rej.Remedy.Status != ledger.RemedyRejected || rej.Remedy.DecidedBy != lead.Name {
				t.Fatalf("rejected %+v, %v", rej.Remedy, err)
			}
			// Asked again, and left to expire.
			out, err = svc.Decide(ctx, findings.Decision{Verb: findings.Refund, FindingID: b.dup, Actor: ops, Note: "twice, really"})
			if err != nil {
				t.Fatal(err)
			}
			*b.now = b.now.Add(3 * time.Hour)
			if _, err := svc.Decide(ctx, findings.Decision{Verb: findings.Approve, FindingID: b.dup, Actor: lead, Remedy: out.Remedy.ID}); !errors.Is(err, findings.ErrRequestExpired) {
				t.Fatalf("approving an expired request: %v", err)
			}
			got, err := b.store.GetRemedy(ctx, out.Remedy.ID)
			if err != nil || got.Status != ledger.RemedyExpired {
				t.Fatalf("expired request is %s, %v", got.Status, err)
			}
			if _, err := b.store.GetIntent(ctx, findings.RefundKey(b.dup, "D2")); !errors.Is(err, ledger.ErrNotFound) {
				t.Fatalf("a rejected or expired request made a refund: %v", err)
			}
			want := []string{"opened run 1", "requested ops@example.com", "rejected lead@example.com", "requested ops@example.com", "expired lead@example.com"}
			if got := actions(t, b.store, b.dup); !slices.Equal(got, want) {
				t.Fatalf("history %q, want %q", got, want)
			}
		})
	}
}

// TestRefundOverpaid: the excess of an overpaid invoice is given back from
// its last payment, at once below the threshold.
func TestRefundOverpaid(t *testing.T) {
	t.Parallel()
	for name, newURL := range engines {
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			ctx := context.Background()
			svc, b, _ := remedySetup(t, newURL)
			if _, err := svc.Decide(ctx, findings.Decision{Verb: findings.Refund, FindingID: b.over, Actor: ops, Note: "x", Amount: "100.01"}); err == nil {
				t.Fatal("a refund beyond the excess was accepted")
			}
			out, err := svc.Decide(ctx, findings.Decision{Verb: findings.Refund, FindingID: b.over, Actor: ops, Note: "paid 100 too much"})
			if err != nil {
				t.Fatal(err)
			}
			if out.Waiting() || out.Remedy.TxnID != "P2" || !out.Remedy.Amount.Equal(kes(t, "100")) || out.Intent == nil ||
				out.Intent.RefundOf != "inv:over" || out.Intent.Metadata[ledger.MetaChargeTxn] != "P2" {
				t.Fatalf("refund %+v of %+v", out.Remedy, out.Intent)
			}
			if n := jobsOf(t, b.queue, "refund", out.Intent.Key); n != 1 {
				t.Fatalf("%d refund job(s)", n)
			}
		})
	}
}

// TestWriteOff: a write-off resolves the finding with the amount and the
// reason, at most the money at risk; other kinds are refused.
func TestWriteOff(t *testing.T) {
	t.Parallel()
	for name, newURL := range engines {
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			ctx := context.Background()
			svc, b, announced := remedySetup(t, newURL)
			for _, d := range []findings.Decision{
				{Verb: findings.WriteOff, FindingID: b.amt, Actor: ops, Note: "x", Amount: "300.01"},
				{Verb: findings.WriteOff, FindingID: b.amt, Actor: ops, Note: "x", Amount: "-1"},
				{Verb: findings.WriteOff, FindingID: b.amt, Actor: ops, Note: "x", Amount: "1.001"},
				{Verb: findings.WriteOff, FindingID: b.amt, Actor: ops},
				{Verb: findings.WriteOff, FindingID: b.dup, Actor: ops, Note: "x"},
				{Verb: findings.Refund, FindingID: b.amt, Actor: ops, Note: "x"},
				{Verb: findings.Retry, FindingID: b.amt, Actor: ops, Note: "x"},
			} {
				var fe *ledger.FieldError
				if _, err := svc.Decide(ctx, d); !errors.As(err, &fe) {
					t.Errorf("%+v: %v, want a refusal", d, err)
				}
			}
			out, err := svc.Decide(ctx, findings.Decision{Verb: findings.WriteOff, FindingID: b.amt, Actor: ops, Note: "fee kept by the bank", Amount: "20"})
			if err != nil {
				t.Fatal(err)
			}
			if out.Finding.Status != ledger.FindingResolved || out.Remedy.Status != ledger.RemedyApplied || !out.Remedy.Amount.Equal(kes(t, "20")) ||
				out.Finding.Note != "written off KES 20.00: fee kept by the bank" {
				t.Fatalf("written off %+v -> %+v", out.Remedy, out.Finding)
			}
			want := []string{"opened run 1", "written_off ops@example.com", "resolved ops@example.com"}
			if got := actions(t, b.store, b.amt); !slices.Equal(got, want) {
				t.Fatalf("history %q, want %q", got, want)
			}
			if !slices.Contains(*announced, "resolved "+b.amt) {
				t.Fatalf("resolution not announced: %q", *announced)
			}
			if _, err := svc.Decide(ctx, findings.Decision{Verb: findings.WriteOff, FindingID: b.amt, Actor: ops, Note: "again"}); !errors.Is(err, ledger.ErrConflict) {
				t.Fatalf("writing a resolved finding off: %v", err)
			}
		})
	}
}

// TestRetryAndCancel: a stuck pending intent is queued again, or cancelled
// (failed with its event, the finding resolved); an unknown one whose
// provider cannot be asked is refused.
func TestRetryAndCancel(t *testing.T) {
	t.Parallel()
	for name, newURL := range engines {
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			ctx := context.Background()
			svc, b, _ := remedySetup(t, newURL)
			out, err := svc.Decide(ctx, findings.Decision{Verb: findings.Retry, FindingID: b.stuck, Actor: ops, Note: "the job gave up during the outage"})
			if err != nil {
				t.Fatal(err)
			}
			if out.Intent == nil || out.Intent.State != ledger.StatePending || out.Finding.Status != ledger.FindingOpen {
				t.Fatalf("retried %+v, finding %s", out.Intent, out.Finding.Status)
			}
			if n := jobsOf(t, b.queue, "charge", "charge:stuck"); n != 1 {
				t.Fatalf("%d charge job(s)", n)
			}
			// A retry of a retry is a new job: River keeps the first.
			if _, err := svc.Decide(ctx, findings.Decision{Verb: findings.Retry, FindingID: b.stuck, Actor: ops, Note: "once more"}); err != nil {
				t.Fatal(err)
			}
			if n := jobsOf(t, b.queue, "charge", "charge:stuck"); n != 2 {
				t.Fatalf("%d charge job(s)", n)
			}
			var fe *ledger.FieldError
			if _, err := svc.Decide(ctx, findings.Decision{Verb: findings.Retry, FindingID: b.stuckUnk, Actor: ops, Note: "x"}); !errors.As(err, &fe) || fe.Field != "state" {
				t.Fatalf("retry with no charger: %v", err)
			}
			if _, err := svc.Decide(ctx, findings.Decision{Verb: findings.Cancel, FindingID: b.stuckUnk, Actor: ops, Note: "x"}); !errors.As(err, &fe) || fe.Field != "state" {
				t.Fatalf("cancel of an unknown intent: %v", err)
			}
			out, err = svc.Decide(ctx, findings.Decision{Verb: findings.Cancel, FindingID: b.stuck, Actor: lead, Note: "order withdrawn"})
			if err != nil {
				t.Fatal(err)
			}
			if out.Intent.State != ledger.StateFailed || out.Finding.Status != ledger.FindingResolved {
				t.Fatalf("cancelled %s, finding %s", out.Intent.State, out.Finding.Status)
			}
			if _, err := b.store.GetEvent(ctx, ledger.EventID(ledger.EventChargeFailed, "charge:stuck")); err != nil {
				t.Fatalf("no charge.failed event: %v", err)
			}
			want := []string{"opened run 1", "retried ops@example.com", "retried ops@example.com", "cancelled lead@example.com", "resolved lead@example.com"}
			if got := actions(t, b.store, b.stuck); !slices.Equal(got, want) {
				t.Fatalf("history %q, want %q", got, want)
			}
		})
	}
}

// TestRemediesOnce: one Slack action, delivered twice, refunds once.
func TestRemediesOnce(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	svc, b, _ := remedySetup(t, engines["sqlite"])
	d := findings.Decision{Verb: findings.Refund, FindingID: b.over, Actor: lead, Note: "x", Once: "slack:press:1"}
	first, err := svc.Decide(ctx, d)
	if err != nil || first.Repeat {
		t.Fatalf("first %+v, %v", first, err)
	}
	again, err := svc.Decide(ctx, d)
	if err != nil || !again.Repeat {
		t.Fatalf("repeat %+v, %v", again, err)
	}
	rs, err := b.store.ListRemedies(ctx, ledger.RemedyFilter{FindingIDs: []string{b.over}})
	if err != nil || len(rs) != 1 {
		t.Fatalf("%d remedies, %v", len(rs), err)
	}
}
