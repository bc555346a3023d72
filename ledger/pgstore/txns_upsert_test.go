package pgstore_test

import (
	"context"
	"fmt"
	"slices"
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

var t0 = ledgertest.T0

// TestUpsertPaths holds every way a batch of sightings is written to the
// rules (ledgertest.TxnModel): probed, written as new when the last batch
// of its transaction found no key stored, and written as new first always
// (every batch of stored keys then fails and is probed); with its rows
// inserted from arrays (small batches) and by COPY (large ones).
func TestUpsertPaths(t *testing.T) {
	t.Parallel()
	seed := ledgertest.Seed(t)
	for _, c := range []struct {
		name string
		mode pgstore.UpsertOptions
	}{
		{"UnlessNew", pgstore.UpsertOptions{Probe: pgstore.ProbeUnlessNew}},
		{"Always", pgstore.UpsertOptions{Probe: pgstore.ProbeAlways}},
		{"Never", pgstore.UpsertOptions{Probe: pgstore.ProbeNever}},
	} {
		t.Run(c.name, func(t *testing.T) {
			t.Parallel()
			var retries int64
			for i, size := range [][]int{{8, 40}, {600}} {
				s := pgstore.WithUpsertOptions(dbtest.Postgres(t).(*pgstore.Store), c.mode)
				ledgertest.RecordAsModel(t, s, seed+uint64(i), 2*size[len(size)-1], size...)
				if n, err := pgstore.OrphanSources(s); err != nil || n != 0 {
					t.Fatalf("%d sightings without their transaction (%v)", n, err)
				}
				if n, err := pgstore.StaleMinor(s); err != nil || n != 0 {
					t.Fatalf("%d rows with a stale amount_minor (%v)", n, err)
				}
				retries += pgstore.UpsertRetries(s)
			}
			// Probed batches never meet a stored key unread; batches always
			// written as new first do, as the model repeats keys. Whether a
			// batch guessed new meets one depends on the draw.
			switch {
			case c.mode.Probe == pgstore.ProbeAlways && retries != 0:
				t.Fatalf("%d probed batches written again", retries)
			case c.mode.Probe == pgstore.ProbeNever && retries == 0:
				t.Fatalf("no batch written as new first met a stored key: the retry path was not exercised")
			}
		})
	}
}

// TestUpsertConcurrentWriters records random batches, each in a
// transaction of its own, while between the probe of each batch and its
// writes another transaction records (and commits) other sightings of some
// of its keys: the same, new keys it would create, sources it would add,
// fills and final statuses it would bring. The books and counts must be
// those of the other sightings recorded first, then the batch.
func TestUpsertConcurrentWriters(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	seed := ledgertest.Seed(t)
	base := dbtest.Postgres(t).(*pgstore.Store)
	g := ledgertest.NewSightingGen(seed, 23, 60)
	m := ledgertest.NewTxnModel()
	var (
		interlopers [][]ledger.Sighting // what the other transaction recorded, per batch
		hookErr     error
	)
	s := pgstore.WithUpsertOptions(base, pgstore.UpsertOptions{BeforeWrite: func(ctx context.Context, batch []ledger.Sighting) {
		if len(interlopers) > 0 || g.R.IntN(4) == 0 {
			return // once per batch, and not always
		}
		var other []ledger.Sighting
		for _, x := range batch {
			switch g.R.IntN(4) {
			case 0:
				other = append(other, x)
			case 1:
				other = append(other, g.Again(x))
			}
		}
		if len(other) == 0 {
			return
		}
		if _, err := base.UpsertProviderTxns(context.Background(), other); err != nil {
			hookErr = err
		}
		interlopers = append(interlopers, other)
	}})
	var sent [][]ledger.Sighting
	for b := range 60 {
		batch := g.Next(sent, 12, 300)
		sent = append(sent, batch)
		interlopers = nil
		got, err := s.UpsertProviderTxns(ctx, batch)
		if err != nil || hookErr != nil {
			t.Fatalf("batch %d: %v, %v", b, err, hookErr)
		}
		for _, other := range interlopers {
			m.Record(other)
		}
		if g, w := fmt.Sprintf("%+v", got), fmt.Sprintf("%+v", m.Record(batch)); g != w {
			t.Fatalf("seed %d batch %d: counts\n%s\nwant\n%s", seed, b, g, w)
		}
	}
	for _, p := range ledgertest.GenProviders {
		if g, w := ledgertest.DumpProviderBooks(t, base, p), m.Dump(p); g != w {
			t.Fatalf("seed %d: books of %s:\n%s\nwant\n%s", seed, p, g, w)
		}
	}
	if pgstore.UpsertRetries(s) == 0 {
		t.Fatal("no batch met what another transaction wrote")
	}
}

// TestProbe records random batches and then probes others: each probe must
// be what the model holds of the sighting's transaction and source.
func TestProbe(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	seed := ledgertest.Seed(t)
	s := dbtest.Postgres(t).(*pgstore.Store)
	g := ledgertest.NewSightingGen(seed, 29, 200)
	m := ledgertest.NewTxnModel()
	render := func(p ledger.Probe) string {
		if !p.Found {
			return "-"
		}
		x := p.Txn
		return fmt.Sprintf("%s %s %s %s %s %s %v", x.Type, x.Status, x.Amount, x.OccurredAt.Format(time.RFC3339Nano),
			x.Settlement, x.Empty, p.Recorded)
	}
	for range 6 {
		batch := g.Batch(150)
		if _, err := s.UpsertProviderTxns(ctx, batch); err != nil {
			t.Fatal(err)
		}
		m.Record(batch)
		probe := g.Batch(150)
		got, err := pgstore.ProbeSightings(ctx, s, probe)
		if err != nil {
			t.Fatal(err)
		}
		want := m.Probe(probe)
		for i := range probe {
			if g, w := render(got[i]), render(want[i]); g != w {
				t.Fatalf("seed %d: probe of %+v:\n%s\nwant\n%s", seed, probe[i], g, w)
			}
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

// TestLargeBatchesOfNewKeys imports, in one transaction, batches of new
// keys (the second, written without a probe, with keys named twice), then
// a batch that also names stored keys, agreeing, with a new source and
// contradicting (written without a probe, it fails and is probed), then an
// all-new batch again, and compares counts and books with the model's.
func TestLargeBatchesOfNewKeys(t *testing.T) {
	t.Parallel()
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
	// The second batch, written without a probe, names two keys twice: its
	// own and one of no other batch.
	repeat, twice := batches[1][44], keys[0]
	repeat.Source.Ref, twice.Txn.ID = "api:44", "X1"
	twice2 := twice
	twice2.Source.Ref, twice2.Txn.Reference, twice2.Txn.Amount.Value = "api:x1", "filled", decimal.New(1, 0)
	repeat2 := repeat
	repeat2.Source.Ref, repeat2.Txn.Type = "api:45", ledger.TxnRefund
	batches[1] = append(batches[1], twice, repeat, twice2, repeat2)
	s := pgstore.WithUpsertOptions(dbtest.Postgres(t).(*pgstore.Store), pgstore.UpsertOptions{})
	m := ledgertest.NewTxnModel()
	var got, want []ledger.UpsertCounts
	err := s.InTx(ctx, func(tx ledger.Tx) error {
		for _, b := range batches {
			c, err := tx.UpsertProviderTxns(ctx, b)
			if err != nil {
				return err
			}
			got, want = append(got, c), append(want, m.Record(b))
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	if g, w := fmt.Sprintf("%+v", got), fmt.Sprintf("%+v", want); g != w {
		t.Fatalf("counts:\n%s\nwant\n%s", g, w)
	}
	n := pgstore.CopyAt
	if c := got[1]; c.NewTxns != n+1 || c.NewSources != n+2 || c.Duplicates != 0 || len(c.Conflicts) != 2 ||
		c.Conflicts[0].Index != n+2 || c.Conflicts[1].Index != n+3 {
		t.Fatalf("second batch %+v", c)
	}
	if c := got[2]; c.NewTxns != n || c.NewSources != n+1 || c.Duplicates != 1 || len(c.Conflicts) != 1 || c.Conflicts[0].Index != n+2 {
		t.Fatalf("third batch %+v", c)
	}
	if r := pgstore.UpsertRetries(s); r != 1 {
		t.Fatalf("%d batches written again, want the third", r)
	}
	if g, w := ledgertest.DumpBooks(t, s), m.Dump("mpesa"); g != w {
		t.Fatalf("books:\n%s\nwant\n%s", g, w)
	}
	if n, err := pgstore.StaleMinor(s); err != nil || n != 0 {
		t.Fatalf("%d rows with a stale amount_minor (%v)", n, err)
	}
}

// TestLargeBatchFallback stores, from another connection between the probe
// and the COPY, a transaction the batch thought new (with another amount):
// the COPY meets the key and is rolled back to its savepoint, and the batch
// is probed again and finds the conflict.
func TestLargeBatchFallback(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	base := dbtest.Postgres(t).(*pgstore.Store)
	batch := newKeys("mpesa_fallback", pgstore.CopyAt+44)
	other := batch[137]
	other.Txn.Amount = money.Amount{Value: decimal.New(99, 0), Currency: "KES"}
	other.Source.Ref = "api:1"
	calls := 0
	s := pgstore.WithUpsertOptions(base, pgstore.UpsertOptions{BeforeWrite: func(ctx context.Context, b []ledger.Sighting) {
		if calls++; calls > 1 {
			return
		}
		// The pool's own connection commits at once.
		if _, err := base.UpsertProviderTxns(ctx, []ledger.Sighting{other}); err != nil {
			t.Error(err)
		}
	}})
	var c ledger.UpsertCounts
	err := s.InTx(ctx, func(tx ledger.Tx) error {
		var err error
		c, err = tx.UpsertProviderTxns(ctx, batch)
		return err
	})
	if err != nil {
		t.Fatal(err)
	}
	if calls != 2 || pgstore.UpsertRetries(s) != 1 {
		t.Fatalf("hook ran %d times, %d retries", calls, pgstore.UpsertRetries(s))
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
// its first key, is written again, and finds them all recorded.
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
// transaction-pooling proxy), and counts as in the default mode.
func TestLargeBatchTextResults(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	for _, mode := range []string{"exec", "simple_protocol"} {
		t.Run(mode, func(t *testing.T) {
			s, err := pgstore.Open(ctx, dbtest.PostgresURL(t)+"&default_query_exec_mode="+mode, pgstore.Config{})
			if err != nil {
				t.Fatal(err)
			}
			defer s.Close()
			batch := newKeys("mpesa", pgstore.CopyAt)
			small := newKeys("stripe", 3)
			changed := slices.Clone(batch[:2])
			changed[0].Txn.Reference, changed[1].Txn.Amount.Value = "filled", decimal.New(3, 0)
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
				if got, err = s.UpsertProviderTxns(ctx, small); err != nil || got.NewTxns != 3*(1-pass) {
					t.Fatalf("pass %d: small batch %+v, %v", pass, got, err)
				}
			}
			got, err := s.UpsertProviderTxns(ctx, changed)
			if err != nil || got.Duplicates != 1 || len(got.Conflicts) != 1 {
				t.Fatalf("changed: %+v, %v", got, err)
			}
			x, err := s.GetProviderTxn(ctx, "mpesa", batch[0].Txn.ID)
			if err != nil || x.Reference != "filled" {
				t.Fatalf("filled: %+v, %v", x, err)
			}
		})
	}
}
