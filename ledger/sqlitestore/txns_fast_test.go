package sqlitestore_test

import (
	"context"
	"fmt"
	"math/rand/v2"
	"slices"
	"sync/atomic"
	"testing"
	"time"

	"github.com/reconcilehq/reconcile/internal/dbtest"
	"github.com/reconcilehq/reconcile/ledger"
	"github.com/reconcilehq/reconcile/ledger/sqlitestore"
	"github.com/reconcilehq/reconcile/money"
)

// TestUpsertFastPathAgreesWithSetPath records randomized batches (keys
// repeated within and across batches, re-sightings that agree, fill,
// contradict or repeat a recorded source, whole batches sent again) into two
// fresh stores, one through UpsertProviderTxns (a few batches per
// transaction, so that both ways of probing run) and one through the set
// statements alone, and requires the same counts and conflicts for every
// batch and the same stored transactions, sightings and quarantine.
func TestUpsertFastPathAgreesWithSetPath(t *testing.T) {
	t.Parallel()
	var guessFailed atomic.Int64
	t.Cleanup(func() {
		if !t.Failed() && guessFailed.Load() == 0 {
			t.Error("no batch written without its probe met a stored transaction: the fallback went untested")
		}
	})
	for round := range 12 {
		seed := uint64(round)
		t.Run(fmt.Sprint(seed), func(t *testing.T) {
			t.Parallel()
			ctx := context.Background()
			fast := dbtest.SQLite(t).(*sqlitestore.Store)
			t.Cleanup(func() { guessFailed.Add(sqlitestore.GuessFailed(fast)) })
			set := dbtest.SQLite(t).(*sqlitestore.Store)
			g := &sightingGen{t: t, r: rand.New(rand.NewPCG(seed, 11)), ids: 6 + int(seed%4)*8}
			if seed == 0 {
				// Batches longer than one multi-row statement.
				g.ids = 1500
			}
			var sent [][]ledger.Sighting
			batches := 14
			if g.ids > 1000 {
				batches = 6
			}
			next := func(b int) []ledger.Sighting {
				var batch []ledger.Sighting
				switch {
				case b >= 3 && b%4 == 3:
					// A batch sent again: a re-import.
					batch = sent[g.r.IntN(len(sent))]
				case b >= 3 && b%4 == 1:
					// A batch sent again with some sightings changed.
					batch = slices.Clone(sent[g.r.IntN(len(sent))])
					for i := range batch {
						if g.r.IntN(4) == 0 {
							batch[i] = g.sighting()
						}
					}
				default:
					n := 1 + g.r.IntN(40)
					if g.ids > 1000 {
						n = 1000 + g.r.IntN(1200)
					}
					for range n {
						batch = append(batch, g.sighting())
					}
				}
				sent = append(sent, batch)
				return batch
			}
			// The fast store takes one to three batches per transaction,
			// as an import does (the probe's mode follows the previous
			// batch of the transaction); the set store one each.
			for b := 0; b < batches; {
				group := make([][]ledger.Sighting, 1+g.r.IntN(3))
				for i := range group {
					group[i] = next(b + i)
				}
				fcs := make([]ledger.UpsertCounts, len(group))
				err := fast.InTx(ctx, func(tx ledger.Tx) error {
					for i, batch := range group {
						var err error
						if fcs[i], err = tx.UpsertProviderTxns(ctx, batch); err != nil {
							return err
						}
					}
					return nil
				})
				if err != nil {
					t.Fatalf("batch %d: fast path: %v", b, err)
				}
				for i, batch := range group {
					sc, err := sqlitestore.UpsertSetOnly(ctx, set, batch)
					if err != nil {
						t.Fatalf("batch %d: set path: %v", b+i, err)
					}
					if fmt.Sprint(fcs[i]) != fmt.Sprint(sc) {
						t.Fatalf("batch %d of %d sightings: fast path counts %+v, set path %+v", b+i, len(batch), fcs[i], sc)
					}
				}
				b += len(group)
				fd, err := sqlitestore.Dump(ctx, fast)
				if err != nil {
					t.Fatal(err)
				}
				sd, err := sqlitestore.Dump(ctx, set)
				if err != nil {
					t.Fatal(err)
				}
				if !slices.Equal(fd, sd) {
					for i := range max(len(fd), len(sd)) {
						var f, s string
						if i < len(fd) {
							f = fd[i]
						}
						if i < len(sd) {
							s = sd[i]
						}
						if f != s {
							t.Fatalf("after batch %d: stores differ at row %d:\nfast %s\nset  %s", b-1, i, f, s)
						}
					}
				}
			}
			if n, err := sqlitestore.OrphanSources(fast); err != nil || n != 0 {
				t.Fatalf("%d sightings without their transaction (%v)", n, err)
			}
		})
	}
}

// sightingGen makes sightings of a few transactions, each with a usual form
// that sightings mostly agree with.
type sightingGen struct {
	t   testing.TB
	r   *rand.Rand
	ids int
}

var genT0 = time.Date(2026, 11, 2, 9, 30, 0, 0, time.UTC)

func (g *sightingGen) pick(p int, vals ...string) string {
	if g.r.IntN(100) >= p {
		return vals[0]
	}
	return vals[1+g.r.IntN(len(vals)-1)]
}

func (g *sightingGen) sighting() ledger.Sighting {
	n := g.r.IntN(g.ids)
	provider, id := "mpesa", fmt.Sprintf("T%04d", n)
	if n%5 == 4 {
		provider = "stripe"
	}
	amount, err := money.Parse(g.pick(8, fmt.Sprint(10+n%7), "99", "10.5"), g.pick(4, "KES", "USD"))
	if err != nil {
		g.t.Fatal(err)
	}
	occurred := genT0.Add(time.Duration(n) * time.Minute)
	switch g.r.IntN(20) {
	case 0:
		occurred = occurred.Add(3 * time.Hour) // within the tolerance
	case 1:
		occurred = occurred.Add(24*time.Hour + time.Microsecond) // just beyond it
	case 2:
		occurred = occurred.Add(-24 * time.Hour) // just within it
	case 3:
		occurred = occurred.Add(1500 * time.Nanosecond)
	}
	txn := ledger.ProviderTxn{Provider: provider, ID: id,
		Type:         ledger.TxnType(g.pick(5, string(ledger.TxnCharge), string(ledger.TxnRefund))),
		Status:       ledger.TxnStatus(g.pick(50, string(ledger.TxnSucceeded), string(ledger.TxnPending), string(ledger.TxnFailed))),
		Amount:       amount,
		OccurredAt:   occurred,
		Reference:    g.pick(40, "ref-"+id, "", "other"),
		ProviderRef:  g.pick(50, "", "pr-"+id, "pr-x"),
		Counterparty: g.pick(30, "2547****1234", "", "2547****9999"),
		LinkedID:     g.pick(20, "", "L"+id),
	}
	switch g.r.IntN(10) {
	case 0:
		txn.Settlement, _ = money.Parse("1.00", "USD")
		txn.ExchangeRate = "0.0077"
	case 1:
		txn.Settlement, _ = money.Parse("2.00", g.pick(50, "USD", "EUR"))
		txn.ExchangeRate = g.pick(50, "0.01", "")
	}
	src := ledger.Source{
		Channel:    g.pick(40, "statement", "api", "c2b_confirmation"),
		Ref:        fmt.Sprintf("r%d", g.r.IntN(3)),
		Raw:        []byte(g.pick(30, "raw "+id, "raw other", "")),
		ReceivedAt: genT0.Add(time.Duration(g.r.IntN(1000)) * time.Second),
	}
	if g.r.IntN(4) > 0 {
		// Most of a batch arrives at once, like a file's lines: the new
		// transactions share their time of receipt.
		src.ReceivedAt = genT0
	}
	if len(src.Raw) == 0 {
		src.Raw = nil
	}
	return ledger.Sighting{Txn: txn, Source: src}
}
