package matcher_test

import (
	"os"
	"slices"
	"strconv"
	"testing"
	"time"

	"github.com/reconcilehq/reconcile/ledger"
	"github.com/reconcilehq/reconcile/matcher"
	"github.com/reconcilehq/reconcile/reconciler/scenario"
)

func bulk(n int) scenario.Bulk {
	return scenario.Bulk{Seed: 42, Provider: "mpesa", From: time.Date(2024, 2, 6, 0, 0, 0, 0, time.UTC), N: n}
}

func bulkOptions(b scenario.Bulk) matcher.Options {
	from, to := b.Window()
	return matcher.Options{Provider: b.Provider, From: from, To: to, Now: b.Now(), Grace: b.Grace()}
}

// TestBulkCounts checks the matcher against the bulk generator's planted
// counts.
func TestBulkCounts(t *testing.T) {
	t.Parallel()
	b := bulk(30000)
	m, err := matcher.New(bulkOptions(b))
	if err != nil {
		t.Fatal(err)
	}
	if err := b.Intents(m.AddIntent); err != nil {
		t.Fatal(err)
	}
	if err := b.Txns(m.AddTxn); err != nil {
		t.Fatal(err)
	}
	res, err := m.Result()
	if err != nil {
		t.Fatal(err)
	}
	want, settled := b.Expected()
	got := map[ledger.Kind]int{}
	for _, f := range res.Findings {
		got[f.Kind]++
	}
	for _, k := range ledger.Kinds {
		if (k == ledger.KindDisputedCharge || k == ledger.KindDuplicateRefund || k == ledger.KindUnrecordedRefund) && got[k] == 0 {
			continue // the bulk day has no disputes nor refunds; the table and scenario tests plant them
		}
		if k == ledger.KindUnreadableRecord { // never planted: the bulk day holds no broken record
			continue
		}
		if slices.Contains(ledger.BankKinds, k) { // a bank account's run raises them (MatchBank)
			continue
		}
		if (k == ledger.KindOverpaid || k == ledger.KindUnderpaid || k == ledger.KindPartiallyPaid) && got[k] == 0 {
			continue // the bulk day's intents are charges; the table and scenario tests plant expected payments
		}
		if got[k] != want[k] || want[k] == 0 {
			t.Errorf("%s: %d, want %d", k, got[k], want[k])
		}
	}
	if len(res.Settlements) != settled || res.Summary.Intents != b.N {
		t.Errorf("settled %d want %d; summary %+v", len(res.Settlements), settled, res.Summary)
	}
}

// BenchmarkMatch measures the in-memory matcher on a bulk day of
// MATCH_BENCH_N intents (default 1,000,000) and about as many transactions,
// generated before the clock starts. lines/s counts intents + transactions.
func BenchmarkMatch(b *testing.B) {
	n := 1_000_000
	if s := os.Getenv("MATCH_BENCH_N"); s != "" {
		n, _ = strconv.Atoi(s)
	}
	bk := bulk(n)
	intents := make([]ledger.Intent, 0, n)
	txns := make([]ledger.ProviderTxn, 0, n)
	_ = bk.Intents(func(in ledger.Intent) error { intents = append(intents, in); return nil })
	_ = bk.Txns(func(t ledger.ProviderTxn) error { txns = append(txns, t); return nil })
	b.ResetTimer()
	for b.Loop() {
		m, err := matcher.New(bulkOptions(bk))
		if err != nil {
			b.Fatal(err)
		}
		for i := range intents {
			if err := m.AddIntent(intents[i]); err != nil {
				b.Fatal(err)
			}
		}
		for i := range txns {
			if err := m.AddTxn(txns[i]); err != nil {
				b.Fatal(err)
			}
		}
		if _, err := m.Result(); err != nil {
			b.Fatal(err)
		}
	}
	b.ReportMetric(float64(len(intents)+len(txns))*float64(b.N)/b.Elapsed().Seconds(), "lines/s")
}

// span locates a string in a rowSet's buffer.
type span struct{ off, n uint32 }

// rowSet is a bulk day in compact, pointer-free form, so that the garbage
// collector has nothing to scan in the input while the matcher runs: what a
// reconcile streaming from the store gives the matcher.
type rowSet struct {
	buf     []byte
	curs    []string
	intents []intentSpec
	refs    [][2]span
	txns    []txnSpec
}

type intentSpec struct {
	key, ref, cust                 span
	minor, created, updated, lease int64
	cur, state                     uint8
}

type txnSpec struct {
	id, ref, pref, cp, linked span
	minor, at                 int64
	cur, typ, status          uint8
}

var (
	benchStates   = []ledger.State{ledger.StatePending, ledger.StateProcessing, ledger.StateSucceeded, ledger.StateFailed, ledger.StateUnknown}
	benchTypes    = []ledger.TxnType{ledger.TxnCharge, ledger.TxnRefund, ledger.TxnReversal, ledger.TxnFee, ledger.TxnPayout}
	benchStatuses = []ledger.TxnStatus{ledger.TxnSucceeded, ledger.TxnFailed, ledger.TxnPending}
)

func (s *rowSet) str(v string) span {
	sp := span{uint32(len(s.buf)), uint32(len(v))}
	s.buf = append(s.buf, v...)
	return sp
}

func (s *rowSet) bytes(sp span) []byte { return s.buf[sp.off : sp.off+sp.n : sp.off+sp.n] }

func (s *rowSet) cur(code string) uint8 {
	i := slices.Index(s.curs, code)
	if i < 0 {
		s.curs = append(s.curs, code)
		i = len(s.curs) - 1
	}
	return uint8(i)
}

func nanos(t time.Time) int64 {
	if t.IsZero() {
		return 0
	}
	return t.UnixNano()
}

func unnanos(n int64) time.Time {
	if n == 0 {
		return time.Time{}
	}
	return time.Unix(0, n).UTC()
}

func newRowSet(b testing.TB, bk scenario.Bulk) *rowSet {
	s := &rowSet{}
	err := bk.Intents(func(in ledger.Intent) error {
		minor, err := in.Amount.Minor()
		s.intents = append(s.intents, intentSpec{key: s.str(in.Key), ref: s.str(in.Reference), cust: s.str(in.Customer),
			minor: minor, created: nanos(in.CreatedAt), updated: nanos(in.UpdatedAt), lease: nanos(in.LeaseExpiresAt),
			cur: s.cur(in.Amount.Currency), state: uint8(slices.Index(benchStates, in.State))})
		for _, p := range in.ProviderRefs {
			s.refs = append(s.refs, [2]span{s.intents[len(s.intents)-1].key, s.str(p)})
		}
		return err
	})
	if err == nil {
		err = bk.Txns(func(t ledger.ProviderTxn) error {
			minor, err := t.Amount.Minor()
			s.txns = append(s.txns, txnSpec{id: s.str(t.ID), ref: s.str(t.Reference), pref: s.str(t.ProviderRef),
				cp: s.str(t.Counterparty), linked: s.str(t.LinkedID), minor: minor, at: nanos(t.OccurredAt),
				cur: s.cur(t.Amount.Currency), typ: uint8(slices.Index(benchTypes, t.Type)),
				status: uint8(slices.Index(benchStatuses, t.Status))})
			return err
		})
	}
	if err != nil {
		b.Fatal(err)
	}
	return s
}

// feed streams the set into m the way the reconciler streams a store's
// scans: one reused row at a time.
func (s *rowSet) feed(m *matcher.Matcher) error {
	var ir ledger.IntentRow
	for i := range s.intents {
		sp := &s.intents[i]
		ir = ledger.IntentRow{Key: s.bytes(sp.key), Reference: s.bytes(sp.ref), Customer: s.bytes(sp.cust),
			Currency: s.curs[sp.cur], Minor: sp.minor, State: benchStates[sp.state], CreatedAt: unnanos(sp.created),
			UpdatedAt: unnanos(sp.updated), LeaseExpiresAt: unnanos(sp.lease)}
		if err := m.AddIntentRow(&ir); err != nil {
			return err
		}
	}
	for _, r := range s.refs {
		if err := m.AddProviderRef(s.bytes(r[0]), s.bytes(r[1])); err != nil {
			return err
		}
	}
	var tr ledger.TxnRow
	for i := range s.txns {
		sp := &s.txns[i]
		tr = ledger.TxnRow{ID: s.bytes(sp.id), Reference: s.bytes(sp.ref), ProviderRef: s.bytes(sp.pref),
			Counterparty: s.bytes(sp.cp), LinkedID: s.bytes(sp.linked), Type: benchTypes[sp.typ], Status: benchStatuses[sp.status],
			Currency: s.curs[sp.cur], Minor: sp.minor, OccurredAt: unnanos(sp.at)}
		if err := m.AddTxnRow(&tr); err != nil {
			return err
		}
	}
	return nil
}

// BenchmarkMatchRows measures the in-memory matcher as a reconcile drives
// it: compact rows (ledger.ScanStore) of a bulk day of MATCH_BENCH_N
// intents (default 1,000,000) and about as many transactions, held in a
// pointer-free buffer generated before the clock starts. lines/s counts
// intents + transactions.
func BenchmarkMatchRows(b *testing.B) {
	n := 1_000_000
	if s := os.Getenv("MATCH_BENCH_N"); s != "" {
		n, _ = strconv.Atoi(s)
	}
	bk := bulk(n)
	set := newRowSet(b, bk)
	want, _ := bk.Expected()
	b.ResetTimer()
	for b.Loop() {
		m, err := matcher.New(bulkOptions(bk))
		if err != nil {
			b.Fatal(err)
		}
		if err := set.feed(m); err != nil {
			b.Fatal(err)
		}
		res, err := m.Result()
		if err != nil {
			b.Fatal(err)
		}
		if res.Summary.Findings != sum(want) {
			b.Fatalf("%d findings, want %d", res.Summary.Findings, sum(want))
		}
	}
	b.ReportMetric(float64(len(set.intents)+len(set.txns))*float64(b.N)/b.Elapsed().Seconds(), "lines/s")
}

func sum(m map[ledger.Kind]int) int {
	n := 0
	for _, v := range m {
		n += v
	}
	return n
}
