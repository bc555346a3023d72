package intake_test

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"go.uber.org/goleak"

	"github.com/reconcilehq/reconcile/internal/dbtest"
	"github.com/reconcilehq/reconcile/ledger"
	"github.com/reconcilehq/reconcile/money"
	"github.com/reconcilehq/reconcile/providers"
	"github.com/reconcilehq/reconcile/providers/intake"
)

func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }

var t0 = time.Date(2026, 3, 1, 9, 0, 0, 0, time.UTC)

// testParser reads {"id":..,"amount":..,"ref":..} bodies; it records the
// kinds it was given, and rejects anything else with a field error.
type testParser struct {
	mu    sync.Mutex
	kinds []string
}

func (p *testParser) ParseCallback(body []byte, ref string, at time.Time) (providers.Evidence, error) {
	return p.ParseCallbackKind("", body, ref, at)
}

func (p *testParser) ParseCallbackKind(kind string, body []byte, ref string, at time.Time) (providers.Evidence, error) {
	p.mu.Lock()
	p.kinds = append(p.kinds, kind)
	p.mu.Unlock()
	var in struct {
		ID, Amount, Ref, Checkout string
	}
	if err := json.Unmarshal(body, &in); err != nil {
		return providers.Evidence{}, &ledger.ParseError{File: ref, Field: "body", Err: err}
	}
	if in.ID == "" {
		return providers.Evidence{}, &ledger.ParseError{File: ref, Field: "id", Err: errors.New("is missing")}
	}
	a, err := money.Parse(in.Amount, "KES")
	if err != nil {
		return providers.Evidence{}, &ledger.ParseError{File: ref, Field: "amount", Err: err}
	}
	if kind == "" {
		kind = "test"
	}
	ev := providers.Evidence{Kind: kind, Ack: []byte(`{"ok":true}`), Sightings: []providers.Sighting{{
		Txn: ledger.ProviderTxn{Provider: "mpesa", ID: in.ID, Type: ledger.TxnCharge, Status: ledger.TxnSucceeded,
			Amount: a, OccurredAt: t0, Reference: in.Ref, ProviderRef: in.Checkout},
		Source: ledger.Source{Channel: "test", Ref: "test:" + in.ID, Raw: body, ReceivedAt: at}}}}
	if in.Checkout != "" {
		ev.Outcomes = []providers.AttemptOutcome{{ProviderRef: in.Checkout, Status: providers.StatusSucceeded, TxnID: in.ID, Amount: a, At: t0}}
	}
	return ev, nil
}

// flakyApplier fails while fail is set, and counts the outcomes it applied.
type flakyApplier struct {
	mu      sync.Mutex
	fail    bool
	applied int
}

func (a *flakyApplier) ApplyOutcome(ctx context.Context, tx ledger.Tx, provider string, o providers.AttemptOutcome) error {
	a.mu.Lock()
	defer a.mu.Unlock()
	if a.fail {
		return errors.New("applier unavailable")
	}
	a.applied++
	return nil
}

type bundle struct {
	store   ledger.Store
	proc    *intake.Processor
	parser  *testParser
	applier *flakyApplier
}

func setup(t *testing.T, newStore func(testing.TB) ledger.Store) bundle {
	t.Helper()
	s := newStore(t)
	ap := &flakyApplier{}
	return bundle{store: s, parser: &testParser{}, applier: ap,
		proc: &intake.Processor{Store: s, Applier: ap, Clock: func() time.Time { return t0 }}}
}

func countTxns(t *testing.T, s ledger.Store) int {
	t.Helper()
	n := 0
	err := s.ListProviderTxns(context.Background(), ledger.TxnFilter{Provider: "mpesa", From: t0.AddDate(-50, 0, 0), To: t0.AddDate(50, 0, 0)},
		func(ledger.ProviderTxn) error { n++; return nil })
	if err != nil {
		t.Fatal(err)
	}
	return n
}

func eachEngine(t *testing.T, fn func(t *testing.T, newStore func(testing.TB) ledger.Store)) {
	for _, e := range dbtest.Engines() {
		t.Run(e.Name, func(t *testing.T) {
			t.Parallel()
			fn(t, e.New)
		})
	}
}

// TestResultsTakeTheAccountOfTheirAttempt: with several accounts, the
// result of a request (an STK callback names no paybill) is recorded in
// the account of the intent whose attempt asked, delivered or imported
// from a file; a result nobody asked for stays in the default account.
func TestResultsTakeTheAccountOfTheirAttempt(t *testing.T) {
	t.Parallel()
	eachEngine(t, func(t *testing.T, newStore func(testing.TB) ledger.Store) {
		ctx := context.Background()
		b := setup(t, newStore)
		b.proc.AttemptAccounts = map[string]bool{"mpesa": true}
		amt, _ := money.Parse("10", "KES")
		if _, _, err := b.store.CreateIntent(ctx, ledger.NewIntent{IntentParams: ledger.IntentParams{Key: "k-branch", Provider: "mpesa",
			Account: "600639", Amount: amt}, CreatedAt: t0}); err != nil {
			t.Fatal(err)
		}
		if _, err := b.store.StartAttempt(ctx, ledger.AttemptParams{IntentKey: "k-branch", ProviderRef: "ws_CO_1", Now: t0}); err != nil {
			t.Fatal(err)
		}
		for _, body := range []string{`{"ID":"R1","Amount":"10","Checkout":"ws_CO_1"}`, `{"ID":"R2","Amount":"10","Checkout":"ws_CO_unknown"}`} {
			if _, err := b.proc.Deliver(ctx, intake.Delivery{Provider: "mpesa", Parser: b.parser, Body: []byte(body), Kind: "stk_callback"}); err != nil {
				t.Fatal(err)
			}
		}
		file := []byte(`{"ID":"R3","Amount":"10","Checkout":"ws_CO_1"}` + "\n")
		if _, err := b.proc.ImportFile(ctx, intake.FileImport{Provider: "mpesa", Name: "results.jsonl", Parser: b.parser,
			Data: bytes.NewReader(file)}); err != nil {
			t.Fatal(err)
		}
		for id, want := range map[string]string{"R1": "600639", "R2": "", "R3": "600639"} {
			if got, err := b.store.GetProviderTxn(ctx, "mpesa", id); err != nil || got.Account != want {
				t.Errorf("%s in account %q (%v), want %q", id, got.Account, err, want)
			}
		}
	})
}

func TestDeliverDuplicatesAndScopes(t *testing.T) {
	t.Parallel()
	eachEngine(t, func(t *testing.T, newStore func(testing.TB) ledger.Store) {
		ctx := context.Background()
		b := setup(t, newStore)
		body := []byte(`{"id":"ABC1234567","amount":"10.00","checkout":"ws_1"}`)
		d := intake.Delivery{Provider: "mpesa", Parser: b.parser, Body: body, RemoteAddr: "196.201.214.200", Kind: "stk_callback"}
		first, err := b.proc.Deliver(ctx, d)
		if err != nil || first.Duplicate || first.NewTxns != 1 || first.NewSources != 1 || first.Kind != "stk_callback" ||
			string(first.Ack) != `{"ok":true}` || first.Callback.ID == 0 {
			t.Fatalf("first = %+v, %v", first, err)
		}
		again, err := b.proc.Deliver(ctx, d)
		if err != nil || !again.Duplicate || again.NewTxns != 0 || again.NewSources != 0 || again.Callback.ID != first.Callback.ID ||
			string(again.Ack) != `{"ok":true}` || again.Kind != "stk_callback" {
			t.Fatalf("again = %+v, %v", again, err)
		}
		if b.applier.applied != 1 {
			t.Errorf("outcome applied %d times, want 1", b.applier.applied)
		}
		// The same bytes in another scope are another delivery; the sighting
		// is still the same one.
		d.Scope, d.Kind = "validation", "validation"
		other, err := b.proc.Deliver(ctx, d)
		if err != nil || other.Duplicate || other.Callback.ID == first.Callback.ID || other.NewTxns != 0 || other.NewSources != 0 {
			t.Fatalf("other scope = %+v, %v", other, err)
		}
		if n := countTxns(t, b.store); n != 1 {
			t.Errorf("txns = %d, want 1", n)
		}
	})
}

func TestDeliverRejectsIntoQuarantine(t *testing.T) {
	t.Parallel()
	eachEngine(t, func(t *testing.T, newStore func(testing.TB) ledger.Store) {
		ctx := context.Background()
		b := setup(t, newStore)
		res, err := b.proc.Deliver(ctx, intake.Delivery{Provider: "mpesa", Parser: b.parser, Body: []byte(`{"id":"X1234567","amount":"1.001"}`),
			RemoteAddr: "file:cb.jsonl", Origin: "cb.jsonl", Line: 4})
		if err != nil || res.Rejected == nil || res.Callback.ID == 0 {
			t.Fatalf("res = %+v, %v", res, err)
		}
		q, err := b.store.ListQuarantine(ctx, "mpesa_callback", 10)
		if err != nil || len(q) != 1 {
			t.Fatalf("quarantine = %+v, %v", q, err)
		}
		if !strings.HasPrefix(res.Rejected.Error(), fmt.Sprintf("callback:%d: field amount", res.Callback.ID)) {
			t.Errorf("rejected = %v", res.Rejected)
		}
		if q[0].Origin != "cb.jsonl" || q[0].Line != 4 || q[0].Field != "amount" || !strings.Contains(q[0].Reason, "decimal places") ||
			string(q[0].Raw) != `{"id":"X1234567","amount":"1.001"}` {
			t.Errorf("item = %+v", q[0])
		}
		// Without an origin the stored callback names it.
		res, _ = b.proc.Deliver(ctx, intake.Delivery{Provider: "mpesa", Parser: b.parser, Body: []byte(`{`)})
		q, _ = b.store.ListQuarantine(ctx, "mpesa_callback", 10)
		if len(q) != 2 || q[0].Origin != fmt.Sprintf("callback:%d", res.Callback.ID) || q[0].Field != "body" {
			t.Errorf("items = %+v", q)
		}
		if n := countTxns(t, b.store); n != 0 {
			t.Errorf("txns = %d, want 0", n)
		}
		left, _ := b.store.ListUnprocessedCallbacks(ctx, "mpesa", 10)
		if len(left) != 0 {
			t.Errorf("rejected callbacks left unprocessed: %+v", left)
		}
	})
}

// TestStoredBodySurvivesFailure: when interpreting fails after the body was
// stored, Deliver reports the stored callback (so it may be acknowledged) and
// Reprocess finishes the work later, with the kind the endpoint gave.
func TestStoredBodySurvivesFailure(t *testing.T) {
	t.Parallel()
	eachEngine(t, func(t *testing.T, newStore func(testing.TB) ledger.Store) {
		ctx := context.Background()
		b := setup(t, newStore)
		b.applier.fail = true
		res, err := b.proc.Deliver(ctx, intake.Delivery{Provider: "mpesa", Parser: b.parser, Kind: "stk_callback",
			Body: []byte(`{"id":"ABC1234568","amount":"5","checkout":"ws_2"}`)})
		if err == nil || res.Callback.ID == 0 {
			t.Fatalf("res = %+v, err = %v; want a stored callback and an error", res, err)
		}
		if n := countTxns(t, b.store); n != 0 {
			t.Fatalf("half-applied: %d txns", n)
		}
		b.applier.fail = false
		p2 := &testParser{}
		n, err := b.proc.Reprocess(ctx, "mpesa", p2)
		if err != nil || n != 1 {
			t.Fatalf("reprocess = %d, %v", n, err)
		}
		if len(p2.kinds) != 1 || p2.kinds[0] != "stk_callback" {
			t.Errorf("reprocess kinds = %v, want the stored stk_callback", p2.kinds)
		}
		if c := countTxns(t, b.store); c != 1 || b.applier.applied != 1 {
			t.Errorf("after reprocess: %d txns, %d outcomes", c, b.applier.applied)
		}
	})
}

func TestConcurrentDeliveries(t *testing.T) {
	t.Parallel()
	eachEngine(t, func(t *testing.T, newStore func(testing.TB) ledger.Store) {
		ctx := context.Background()
		b := setup(t, newStore)
		warmUp(t, b)
		body := []byte(`{"id":"CONC123456","amount":"99"}`)
		var wg sync.WaitGroup
		errs := make(chan error, 16)
		for range 16 {
			wg.Go(func() {
				res, err := b.proc.Deliver(ctx, intake.Delivery{Provider: "mpesa", Parser: b.parser, Body: body})
				if err != nil && res.Callback.ID == 0 {
					errs <- err
				}
			})
		}
		wg.Wait()
		close(errs)
		for err := range errs {
			t.Error(err)
		}
		got, err := b.store.GetProviderTxn(ctx, "mpesa", "CONC123456")
		if err != nil || len(got.Sources) != 1 {
			t.Fatalf("txn = %+v, %v", got, err)
		}
	})
}

// warmUp delivers one body twice so that every statement of the delivery
// path is prepared. The SQLite store prepares an uncached statement on the
// database while holding its statement-cache lock, so a first preparation
// racing a transaction on its single connection deadlocks; warming up keeps
// the concurrency tests about delivery, not about that store's first use.
func warmUp(t *testing.T, b bundle) {
	t.Helper()
	for range 2 {
		if _, err := b.proc.Deliver(context.Background(), intake.Delivery{Provider: "mpesa", Parser: b.parser,
			Body: []byte(`{"id":"WARM000001","amount":"1"}`)}); err != nil {
			t.Fatal(err)
		}
	}
}

func TestImportFile(t *testing.T) {
	t.Parallel()
	eachEngine(t, func(t *testing.T, newStore func(testing.TB) ledger.Store) {
		ctx := context.Background()
		b := setup(t, newStore)
		good := "\ufeff" + `{"id":"FILE000001","amount":"1"}` + "\r\n\r\n" + `{"id":"FILE000002","amount":"2.50"}` + "\n" + `{"id":"FILE000001","amount":"1"}`
		counts, err := b.proc.ImportFile(ctx, intake.FileImport{Provider: "mpesa", Parser: b.parser, Name: "cb.jsonl",
			Data: strings.NewReader(good)})
		if err != nil || counts.Lines != 3 || counts.NewTxns != 2 || counts.Duplicates != 1 || counts.Kinds["test"] != 3 {
			t.Fatalf("counts = %+v, %v", counts, err)
		}
		counts, err = b.proc.ImportFile(ctx, intake.FileImport{Provider: "mpesa", Parser: b.parser, Name: "cb.jsonl",
			Data: strings.NewReader(good)})
		if err != nil || counts.NewTxns != 0 || counts.NewSources != 0 || counts.Duplicates != 3 {
			t.Fatalf("again = %+v, %v", counts, err)
		}
		bad := `{"id":"FILE000003","amount":"3"}` + "\n" + `{"id":"FILE000004","amount":"x"}` + "\n" + `{"id":"FILE0` + "\n" +
			`{"id":"FILE000005","amount":"` + strings.Repeat("9", 200) + `"}` + "\n"
		counts, err = b.proc.ImportFile(ctx, intake.FileImport{Provider: "mpesa", Parser: b.parser, Name: "bad.jsonl",
			Data: strings.NewReader(bad), MaxLineBytes: 100})
		var fe *ledger.RejectedFileError
		if !errors.As(err, &fe) || len(fe.Problems) != 3 {
			t.Fatalf("err = %v, want a FileError with 3 problems", err)
		}
		want := []struct {
			line  int
			field string
		}{{2, "amount"}, {3, "body"}, {4, "body"}}
		for i, w := range want {
			p := fe.Problems[i]
			if p.File != "bad.jsonl" || p.Line != w.line || p.Field != w.field {
				t.Errorf("problem %d = %+v", i, p)
			}
		}
		if !strings.Contains(err.Error(), "bad.jsonl line 2: field amount") {
			t.Errorf("message = %v", err)
		}
		if _, err := b.store.GetProviderTxn(ctx, "mpesa", "FILE000003"); !errors.Is(err, ledger.ErrNotFound) {
			t.Errorf("a good line of a rejected file was imported: %v", err)
		}
		q, _ := b.store.ListQuarantine(ctx, "mpesa_callback", 10)
		slices.SortFunc(q, func(a, b ledger.QuarantineItem) int { return a.Line - b.Line })
		if len(q) != 3 || q[0].Origin != "bad.jsonl" || q[0].Line != 2 || q[2].Line != 4 || len(q[2].Raw) != 100 ||
			!bytes.HasPrefix(q[2].Raw, []byte(`{"id":"FILE000005"`)) {
			t.Errorf("quarantine = %+v", q)
		}
		if counts.QuarantinedLines != 3 {
			t.Errorf("counts = %+v", counts)
		}
	})
}

// TestReprocessGoesPastFailures: a callback that keeps failing does not hold
// up the others.
func TestReprocessGoesPastFailures(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	b := setup(t, dbtest.SQLite)
	for i, body := range []string{`{"id":"RP00000001","amount":"1","checkout":"ws_poison"}`, `{"id":"RP00000002","amount":"2"}`} {
		if _, _, err := b.store.StoreCallback(ctx, ledger.Callback{Provider: "mpesa", DedupeKey: fmt.Sprint("k", i),
			Body: []byte(body), ReceivedAt: t0}); err != nil {
			t.Fatal(err)
		}
	}
	b.applier.fail = true
	n, err := b.proc.Reprocess(ctx, "mpesa", b.parser)
	if n != 1 || err == nil {
		t.Fatalf("reprocess = %d, %v; want 1 done and the failure reported", n, err)
	}
	b.applier.fail = false
	if n, err := b.proc.Reprocess(ctx, "mpesa", b.parser); n != 1 || err != nil {
		t.Fatalf("second reprocess = %d, %v", n, err)
	}
	if c := countTxns(t, b.store); c != 2 {
		t.Errorf("txns = %d", c)
	}
}
