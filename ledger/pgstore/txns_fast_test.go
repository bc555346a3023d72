package pgstore_test

import (
	"context"
	"fmt"
	"math/big"
	"math/rand/v2"
	"os"
	"slices"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/shopspring/decimal"

	"github.com/reconcilehq/reconcile/internal/dbtest"
	"github.com/reconcilehq/reconcile/ledger"
	"github.com/reconcilehq/reconcile/ledger/ledgertest"
	"github.com/reconcilehq/reconcile/ledger/pgstore"
	"github.com/reconcilehq/reconcile/money"
)

var t0 = time.Date(2026, 11, 2, 9, 30, 0, 0, time.UTC)

func seedRNG(t *testing.T, stream uint64) *rand.Rand {
	t.Helper()
	seed := uint64(time.Now().UnixNano())
	if v, err := strconv.ParseUint(os.Getenv("LEDGERTEST_SEED"), 10, 64); err == nil {
		seed = v
	}
	t.Logf("seed %d (LEDGERTEST_SEED)", seed)
	return rand.New(rand.NewPCG(stream, seed))
}

// TestNumericEqual compares numericEqual on PostgreSQL's binary numerics
// with PostgreSQL's own numeric equality, on random values of any size and
// scale, and on the same value written at other scales.
func TestNumericEqual(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	s := dbtest.Postgres(t).(*pgstore.Store)
	rng := seedRNG(t, 1)
	digits := func(n int) string {
		var b strings.Builder
		for range n {
			b.WriteByte(byte('0' + rng.IntN(10)))
		}
		return b.String()
	}
	number := func() string {
		v := digits(rng.IntN(24) + 1)
		if sc := rng.IntN(12); sc > 0 {
			v += "." + digits(sc)
		}
		if rng.IntN(3) == 0 {
			v = "-" + v
		}
		return v
	}
	var as, bs []string
	for range 3000 {
		a := number()
		var b string
		switch rng.IntN(5) {
		case 0:
			b = number()
		case 1: // the same value at a larger scale
			b = a
			if !strings.Contains(b, ".") {
				b += "."
			}
			b += strings.Repeat("0", rng.IntN(6)+1)
		case 2: // one unit of the last place apart
			d := decimal.RequireFromString(a)
			b = d.Add(decimal.New(1, d.Exponent())).String()
		case 3: // zeros of any scale and sign
			a, b = "0."+strings.Repeat("0", rng.IntN(5)), "-0"+strings.Repeat("0", rng.IntN(3))
		default:
			b = decimal.RequireFromString(a).String()
		}
		as, bs = append(as, a), append(bs, b)
	}
	as, bs = append(as, "1.5", "1.50", "10000", "0.0001", "99999999.9999"), append(bs, "1.50", "1.5", "1e4", "1e-4", "99999999.99990")
	rows, err := s.Pool().Query(ctx, `SELECT a::numeric, a::numeric = b::numeric FROM unnest($1::text[], $2::text[]) AS v(a, b)`, as, bs)
	if err != nil {
		t.Fatal(err)
	}
	defer rows.Close()
	i := 0
	for rows.Next() {
		raw := slices.Clone(rows.RawValues()[0])
		var want bool
		if err := rows.Scan(nil, &want); err != nil {
			t.Fatal(err)
		}
		if got := pgstore.NumericEqual(raw, decimal.RequireFromString(bs[i])); got != want {
			t.Errorf("%s = %s: got %v, PostgreSQL says %v", as[i], bs[i], got, want)
		}
		i++
	}
	if err := rows.Err(); err != nil || i != len(as) {
		t.Fatalf("%d rows of %d: %v", i, len(as), err)
	}
}

// variant returns a sighting of stored (or of a new key) changed at random
// in the ways classifySQL tells apart, edge cases included.
func variant(rng *rand.Rand, stored ledger.Sighting, n int) ledger.Sighting {
	s := stored
	x := &s.Txn
	pick := func(xs ...string) string { return xs[rng.IntN(len(xs))] }
	amount := func(a money.Amount) money.Amount {
		switch rng.IntN(8) {
		case 0:
			return money.Amount{Value: a.Value.Add(decimal.New(1, -2)), Currency: a.Currency}
		case 1: // the same number at another scale: 1.5 and 1.50 agree
			c := a.Value.Coefficient()
			return money.Amount{Value: decimal.NewFromBigInt(c.Mul(c, big.NewInt(10)), a.Value.Exponent()-1),
				Currency: a.Currency}
		case 2:
			return money.Amount{Value: a.Value, Currency: pick("USD", "KES")}
		default:
			return a
		}
	}
	x.Amount = amount(x.Amount)
	if rng.IntN(6) == 0 {
		x.Type = ledger.TxnType(pick("charge", "refund"))
	}
	switch rng.IntN(4) {
	case 0:
		x.Status = ledger.TxnPending
	case 1:
		x.Status = ledger.TxnStatus(pick("succeeded", "failed"))
	}
	day := 24 * time.Hour
	x.OccurredAt = x.OccurredAt.Add([]time.Duration{0, 0, 0, time.Hour, day, -day, day + time.Microsecond,
		-day - time.Microsecond, day - time.Microsecond, day + 500*time.Nanosecond, -day - 500*time.Nanosecond,
		2 * day}[rng.IntN(12)])
	switch rng.IntN(6) {
	case 0:
		x.Settlement, x.ExchangeRate = money.Amount{}, ""
	case 1:
		x.Settlement, x.ExchangeRate = money.Amount{Value: decimal.RequireFromString(pick("12.5", "12.50", "13")),
			Currency: "USD"}, "0.0077"
	case 2:
		x.Settlement = money.Amount{Value: decimal.RequireFromString("12.5"), Currency: pick("USD", "EUR")}
	case 3:
		if !x.Settlement.IsZero() {
			x.Settlement = amount(x.Settlement)
		}
	}
	for _, f := range []*string{&x.Reference, &x.ProviderRef, &x.Counterparty, &x.LinkedID} {
		if rng.IntN(3) == 0 {
			*f = pick("", "", "a", "b")
		}
	}
	if rng.IntN(3) == 0 {
		s.Source.Ref = fmt.Sprint(rng.IntN(3))
		s.Source.Channel = pick("api", "statement")
	}
	s.Source.Raw = []byte(fmt.Sprint("line ", n))
	s.Source.ReceivedAt = t0.Add(time.Duration(n) * time.Second)
	return s
}

// randomSighting is a sighting of one of ids random transactions.
func randomSighting(rng *rand.Rand, ids, n int) ledger.Sighting {
	pick := func(xs ...string) string { return xs[rng.IntN(len(xs))] }
	x := ledger.ProviderTxn{Provider: "mpesa", ID: fmt.Sprintf("R%03d", rng.IntN(ids)),
		Type: ledger.TxnCharge, Status: ledger.TxnStatus(pick("pending", "succeeded", "succeeded", "failed")),
		Amount:     money.Amount{Value: decimal.RequireFromString(pick("10", "10.5", "10.50", "-3", "0.01")), Currency: "KES"},
		OccurredAt: t0.Add(time.Duration(rng.IntN(3)) * time.Hour), Reference: pick("", "ref-a"),
		ProviderRef: pick("", "pr-a"), Counterparty: pick("", "2547****0001"), LinkedID: pick("", "", "L1")}
	if rng.IntN(3) == 0 {
		x.Settlement, x.ExchangeRate = money.Amount{Value: decimal.RequireFromString("12.5"), Currency: "USD"}, "0.0077"
	}
	src := ledger.Source{Channel: pick("api", "statement"), Ref: fmt.Sprint(rng.IntN(3)), Raw: []byte(fmt.Sprint(n)),
		ReceivedAt: t0.Add(time.Duration(n) * time.Second)}
	return ledger.Sighting{Txn: x, Source: src}
}

// TestProbeAgreesWithClassifySQL stores random transactions, then compares,
// for random batches of sightings of them (and of new keys), the fast
// path's classification in Go with classifySQL's on the same rows.
func TestProbeAgreesWithClassifySQL(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	s := dbtest.Postgres(t).(*pgstore.Store)
	rng := seedRNG(t, 2)
	var stored []ledger.Sighting
	for i := range 400 {
		sg := randomSighting(rng, 1<<30, i)
		sg.Txn.ID = fmt.Sprintf("S%04d", i)
		stored = append(stored, sg)
	}
	if _, err := s.UpsertProviderTxns(ctx, stored); err != nil {
		t.Fatal(err)
	}
	for round := range 4 {
		var batch []ledger.Sighting
		for i := range pgstore.CopyAt + 200 {
			switch r := rng.IntN(10); {
			case r == 0: // a new key
				sg := randomSighting(rng, 1<<30, i)
				sg.Txn.ID = fmt.Sprintf("N%d-%d", round, i)
				batch = append(batch, sg)
			case r == 1 && len(batch) > 0: // a key named twice
				batch = append(batch, variant(rng, batch[rng.IntN(len(batch))], i))
			case r < 5: // a sighting as stored
				batch = append(batch, stored[rng.IntN(len(stored))])
			default:
				batch = append(batch, variant(rng, stored[rng.IntN(len(stored))], i))
			}
		}
		fresh, rest, err := pgstore.ProbeClassify(ctx, s, batch)
		if err != nil {
			t.Fatal(err)
		}
		work, err := pgstore.ClassifySQL(ctx, s, batch)
		if err != nil {
			t.Fatal(err)
		}
		names := map[string]int{}
		for _, sg := range batch {
			names[ledger.TxnKey(sg.Txn.Provider, sg.Txn.ID)]++
		}
		var skipped int
		for i, sg := range batch {
			goWork := slices.Contains(fresh, i) || slices.Contains(rest, i)
			if names[ledger.TxnKey(sg.Txn.Provider, sg.Txn.ID)] > 1 {
				if !slices.Contains(rest, i) {
					t.Errorf("round %d: row %d names a key named twice but is not left to the set statements", round, i)
				}
				continue
			}
			if sqlWork := slices.Contains(work, i); goWork != sqlWork {
				t.Errorf("round %d: row %d %+v: work in Go %v, in SQL %v", round, i, sg, goWork, sqlWork)
			}
			if !goWork {
				skipped++
			}
		}
		if skipped == 0 || len(fresh) == 0 || len(rest) == 0 {
			t.Fatalf("round %d: %d skipped, %d new, %d rest: the batch misses a case", round, skipped, len(fresh), len(rest))
		}
	}
}

// TestLargeBatchAsStaged records random sightings of a few hundred keys,
// repeats, fills and conflicts included, as the same large batches in two
// stores, through the fast path in one and the set statements alone in the
// other, three times over (a first import, a re-import, changed sightings),
// and compares counts and books.
func TestLargeBatchAsStaged(t *testing.T) {
	// Not parallel: SetStagedOnly is the package's.
	ctx := context.Background()
	rng := seedRNG(t, 3)
	fast, staged := dbtest.Postgres(t), dbtest.Postgres(t)
	var batch []ledger.Sighting
	for i := range 900 {
		batch = append(batch, randomSighting(rng, 500, i))
	}
	for pass := range 3 {
		if pass == 2 {
			for i := range batch {
				if rng.IntN(4) == 0 {
					batch[i] = variant(rng, batch[i], 1000+i)
				}
			}
		}
		apply := func(s ledger.Store, stagedOnly bool) ledger.UpsertCounts {
			pgstore.SetStagedOnly(stagedOnly)
			defer pgstore.SetStagedOnly(false)
			var sum ledger.UpsertCounts
			err := s.InTx(ctx, func(tx ledger.Tx) error {
				for lo := 0; lo < len(batch); lo += 450 {
					c, err := tx.UpsertProviderTxns(ctx, batch[lo:min(lo+450, len(batch))])
					if err != nil {
						return err
					}
					for i := range c.Conflicts {
						c.Conflicts[i].Index += lo
					}
					sum.Add(c)
				}
				return nil
			})
			if err != nil {
				t.Fatal(err)
			}
			return sum
		}
		got, want := apply(fast, false), apply(staged, true)
		if g, w := fmt.Sprintf("%+v", got), fmt.Sprintf("%+v", want); g != w {
			t.Fatalf("pass %d: counts on the fast path:\n%s\nthrough the set statements:\n%s", pass, g, w)
		}
		if pass == 1 && (got.NewTxns != 0 || got.NewSources != 0 || got.Duplicates != len(batch)-len(got.Conflicts)) {
			t.Fatalf("the re-import changed something: %+v", got)
		}
		if pass != 1 && (got.NewSources == 0 || len(got.Conflicts) == 0) {
			t.Fatalf("pass %d misses a case: %+v", pass, got)
		}
		if g, w := ledgertest.DumpBooks(t, fast), ledgertest.DumpBooks(t, staged); g != w {
			t.Fatalf("pass %d: books on the fast path:\n%s\nthrough the set statements:\n%s", pass, g, w)
		}
		for _, s := range []ledger.Store{fast, staged} {
			if n, err := pgstore.StaleMinor(s.(*pgstore.Store)); err != nil || n != 0 {
				t.Fatalf("pass %d: %d rows with a stale amount_minor (%v)", pass, n, err)
			}
		}
	}
}

// TestLargeBatchesOfNewKeys imports, in one transaction, batches of new
// keys (the second, copied without a probe, with keys named twice), then a batch that also
// names stored keys, agreeing, with a new source and contradicting (its
// COPY without a probe fails and it is probed), then an all-new batch
// again, and compares counts and books with the set statements'.
func TestLargeBatchesOfNewKeys(t *testing.T) {
	// Not parallel: SetStagedOnly is the package's.
	ctx := context.Background()
	keys := newKeys("mpesa", 4*pgstore.CopyAt)
	var batches [][]ledger.Sighting
	for i := range 4 {
		batches = append(batches, slices.Clone(keys[i*pgstore.CopyAt:(i+1)*pgstore.CopyAt]))
	}
	again, newSource, conflict := keys[5], keys[7], keys[9]
	newSource.Source.Ref = "api:7"
	conflict.Txn.Status = ledger.TxnFailed
	batches[2] = append(batches[2], again, newSource, conflict)
	// The second batch, copied without a probe, names two keys twice: its
	// own and one of no other batch.
	repeat, twice := batches[1][44], keys[0]
	repeat.Source.Ref, twice.Txn.ID = "api:44", "X1"
	twice2 := twice
	twice2.Source.Ref, twice2.Txn.Reference, twice2.Txn.Amount.Value = "api:x1", "filled", decimal.New(1, 0)
	repeat2 := repeat
	repeat2.Source.Ref, repeat2.Txn.Type = "api:45", ledger.TxnRefund
	batches[1] = append(batches[1], twice, repeat, twice2, repeat2)
	fast, staged := dbtest.Postgres(t), dbtest.Postgres(t)
	apply := func(s ledger.Store, stagedOnly bool) []ledger.UpsertCounts {
		pgstore.SetStagedOnly(stagedOnly)
		defer pgstore.SetStagedOnly(false)
		var cs []ledger.UpsertCounts
		err := s.InTx(ctx, func(tx ledger.Tx) error {
			for _, b := range batches {
				c, err := tx.UpsertProviderTxns(ctx, b)
				if err != nil {
					return err
				}
				cs = append(cs, c)
			}
			return nil
		})
		if err != nil {
			t.Fatal(err)
		}
		return cs
	}
	got, want := apply(fast, false), apply(staged, true)
	if g, w := fmt.Sprintf("%+v", got), fmt.Sprintf("%+v", want); g != w {
		t.Fatalf("counts on the fast path:\n%s\nthrough the set statements:\n%s", g, w)
	}
	n := pgstore.CopyAt
	if c := got[1]; c.NewTxns != n+1 || c.NewSources != n+2 || c.Duplicates != 0 || len(c.Conflicts) != 2 ||
		c.Conflicts[0].Index != n+2 || c.Conflicts[1].Index != n+3 {
		t.Fatalf("second batch %+v", c)
	}
	if c := got[2]; c.NewTxns != n || c.NewSources != n+1 || c.Duplicates != 1 || len(c.Conflicts) != 1 || c.Conflicts[0].Index != n+2 {
		t.Fatalf("third batch %+v", c)
	}
	if g, w := ledgertest.DumpBooks(t, fast), ledgertest.DumpBooks(t, staged); g != w {
		t.Fatalf("books on the fast path:\n%s\nthrough the set statements:\n%s", g, w)
	}
	for _, s := range []ledger.Store{fast, staged} {
		if n, err := pgstore.StaleMinor(s.(*pgstore.Store)); err != nil || n != 0 {
			t.Fatalf("%d rows with a stale amount_minor (%v)", n, err)
		}
	}
}

// newKeys is a batch of n sightings of new transactions of provider.
func newKeys(provider string, n int) []ledger.Sighting {
	var batch []ledger.Sighting
	for i := range n {
		batch = append(batch, ledger.Sighting{
			Txn: ledger.ProviderTxn{Provider: provider, ID: fmt.Sprintf("K%05d", i), Type: ledger.TxnCharge,
				Status: ledger.TxnSucceeded, Amount: money.Amount{Value: decimal.New(1050, -2), Currency: "KES"},
				OccurredAt: t0},
			Source: ledger.Source{Channel: "statement", Ref: fmt.Sprint("f.csv:", i+2), ReceivedAt: t0}})
	}
	return batch
}

// TestLargeBatchFallback stores, from another connection between the probe
// and the COPY, a transaction the batch thought new (with another amount):
// the COPY meets the key, is rolled back to its savepoint, and the whole
// batch goes through the set statements, which find the conflict.
func TestLargeBatchFallback(t *testing.T) {
	// Not parallel: the hook is the package's.
	ctx := context.Background()
	s := dbtest.Postgres(t).(*pgstore.Store)
	batch := newKeys("mpesa_fallback", pgstore.CopyAt+44)
	other := batch[137]
	other.Txn.Amount = money.Amount{Value: decimal.New(99, 0), Currency: "KES"}
	other.Source.Ref = "api:1"
	calls := 0
	defer pgstore.SetBeforeNewCopy(func(ctx context.Context, b []ledger.Sighting) {
		if b[0].Txn.Provider != "mpesa_fallback" {
			return
		}
		calls++
		// The pool's own connection commits at once.
		if _, err := s.UpsertProviderTxns(ctx, []ledger.Sighting{other}); err != nil {
			t.Error(err)
		}
	})()
	var c ledger.UpsertCounts
	err := s.InTx(ctx, func(tx ledger.Tx) error {
		var err error
		c, err = tx.UpsertProviderTxns(ctx, batch)
		return err
	})
	if err != nil {
		t.Fatal(err)
	}
	if calls != 1 {
		t.Fatalf("hook ran %d times", calls)
	}
	if c.NewTxns != len(batch)-1 || c.NewSources != len(batch)-1 || c.Duplicates != 0 || len(c.Conflicts) != 1 ||
		c.Conflicts[0].Index != 137 || !strings.Contains(c.Conflicts[0].Reason, "amount KES 10.50, stored KES 99.00") {
		t.Fatalf("counts %+v", c)
	}
	got, err := s.GetProviderTxns(ctx, "mpesa_fallback", []string{batch[137].Txn.ID, batch[138].Txn.ID})
	if err != nil || len(got) != 2 {
		t.Fatal(got, err)
	}
	for _, x := range got {
		want := "10.5"
		if x.ID == batch[137].Txn.ID {
			want = "99"
		}
		if x.Amount.Value.String() != want || len(x.Sources) != 1 {
			t.Fatalf("%+v", x)
		}
	}
	if n, err := pgstore.OrphanSources(s); err != nil || n != 0 {
		t.Fatal(n, err)
	}
}

// TestConcurrentLargeImports imports the same large batches from two
// transactions at once: one creates every transaction, the other waits on
// its first key, falls back, and finds them all recorded.
func TestConcurrentLargeImports(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	s := dbtest.Postgres(t)
	batch := newKeys("mpesa", 3*pgstore.CopyAt)
	counts := make([]ledger.UpsertCounts, 2)
	var wg sync.WaitGroup
	for w := range 2 {
		wg.Go(func() {
			err := s.InTx(ctx, func(tx ledger.Tx) error {
				for lo := 0; lo < len(batch); lo += 2 * pgstore.CopyAt {
					c, err := tx.UpsertProviderTxns(ctx, batch[lo:min(lo+2*pgstore.CopyAt, len(batch))])
					if err != nil {
						return err
					}
					counts[w].Add(c)
				}
				return nil
			})
			if err != nil {
				t.Error(err)
			}
		})
	}
	wg.Wait()
	if t.Failed() {
		return
	}
	slices.SortFunc(counts, func(a, b ledger.UpsertCounts) int { return b.NewTxns - a.NewTxns })
	n := len(batch)
	if w := (ledger.UpsertCounts{NewTxns: n, NewSources: n}); fmt.Sprint(counts[0]) != fmt.Sprint(w) {
		t.Fatalf("first import %+v", counts[0])
	}
	if w := (ledger.UpsertCounts{Duplicates: n}); fmt.Sprint(counts[1]) != fmt.Sprint(w) {
		t.Fatalf("second import %+v", counts[1])
	}
	var ids int
	err := s.ListProviderTxns(ctx, ledger.TxnFilter{Provider: "mpesa", From: t0.AddDate(-1, 0, 0), To: t0.AddDate(1, 0, 0)},
		func(ledger.ProviderTxn) error { ids++; return nil })
	if err != nil || ids != n {
		t.Fatal(ids, err)
	}
}

// TestLargeBatchTextResults imports and re-imports a large batch through
// stores whose URL asks for a query mode that returns results as text
// (default_query_exec_mode=exec or simple_protocol, as behind a
// transaction-pooling proxy): the fast path's probe reads binary values,
// so there the batch must take the set statements and count as they do.
func TestLargeBatchTextResults(t *testing.T) {
	ctx := context.Background()
	for _, mode := range []string{"exec", "simple_protocol"} {
		t.Run(mode, func(t *testing.T) {
			s, err := pgstore.Open(ctx, dbtest.PostgresURL(t)+"&default_query_exec_mode="+mode, pgstore.Config{})
			if err != nil {
				t.Fatal(err)
			}
			defer s.Close()
			batch := newKeys("mpesa", pgstore.CopyAt)
			for pass, want := range []ledger.UpsertCounts{
				{NewTxns: len(batch), NewSources: len(batch)},
				{Duplicates: len(batch)},
			} {
				got, err := s.UpsertProviderTxns(ctx, batch)
				if err != nil {
					t.Fatalf("pass %d: %v", pass, err)
				}
				if g, w := fmt.Sprintf("%+v", got), fmt.Sprintf("%+v", want); g != w {
					t.Fatalf("pass %d: counts %s, want %s", pass, g, w)
				}
			}
		})
	}
}
