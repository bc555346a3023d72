package sqlitestore_test

import (
	"context"
	"fmt"
	"math/rand/v2"
	"slices"
	"testing"
	"time"

	"github.com/reconcilehq/reconcile/internal/dbtest"
	"github.com/reconcilehq/reconcile/ledger"
	"github.com/reconcilehq/reconcile/ledger/sqlitestore"
	"github.com/reconcilehq/reconcile/money"
)

// TestImportIntentsGuessAgreesWithProbe imports randomized files (keys
// repeated within and across chunks and files, keys stored before, key
// reuse, refunds of charges stored, imported or missing, pending rows,
// metadata, several provider references) into two fresh stores in small
// chunks: one as the import runs (a chunk after a chunk that found none of
// its keys stored is written without looking them up), one looking every
// chunk's keys up first. Every import must give the same counts, refusals
// and pending keys, and the stores the same intents and attempts.
func TestImportIntentsGuessAgreesWithProbe(t *testing.T) {
	t.Parallel()
	var guessFailed int
	t.Cleanup(func() {
		if !t.Failed() && guessFailed == 0 {
			t.Error("no chunk written without a look-up met a stored key: the fallback went untested")
		}
	})
	for round := range 10 {
		seed := uint64(round)
		t.Run(fmt.Sprint(seed), func(t *testing.T) {
			ctx := context.Background()
			guess := dbtest.SQLite(t).(*sqlitestore.Store)
			probe := dbtest.SQLite(t).(*sqlitestore.Store)
			g := &intentGen{t: t, r: rand.New(rand.NewPCG(seed, 21)), keys: 8 + int(seed)*6}
			for _, s := range []*sqlitestore.Store{guess, probe} {
				// Stored before any import: a few charges.
				for i := range 3 {
					n := g.charge(0, fmt.Sprintf("k%03d", i*5), ledger.StateSucceeded)
					if _, _, err := s.CreateIntent(ctx, n.NewIntent); err != nil {
						t.Fatal(err)
					}
				}
			}
			chunk := 2 + int(seed%5)*3
			for file := range 6 {
				rows := g.file(20+g.r.IntN(60), chunk)
				type outcome struct {
					res            ledger.ImportIntentsResult
					refused        []string
					pending, prefs []string
				}
				run := func(s *sqlitestore.Store, probe bool) outcome {
					var o outcome
					res, failed, err := sqlitestore.ImportIntentsWith(ctx, s, ledger.ImportIntentsParams{Rows: slices.Values(rows),
						Pending:        func(_ context.Context, keys []string) error { o.pending = append(o.pending, keys...); return nil },
						PendingRefunds: func(_ context.Context, keys []string) error { o.prefs = append(o.prefs, keys...); return nil },
					}, sqlitestore.ImportOptions{Chunk: chunk, Probe: probe})
					if err != nil {
						t.Fatalf("file %d: %v", file, err)
					}
					if probe && failed != 0 {
						t.Fatalf("file %d: %d chunks guessed with Probe set", file, failed)
					}
					if !probe {
						guessFailed += failed
					}
					for _, r := range res.Refused {
						o.refused = append(o.refused, fmt.Sprintf("line %d: %v", r.Line, r.Err))
					}
					slices.Sort(o.refused)
					slices.Sort(o.pending)
					slices.Sort(o.prefs)
					res.Refused = nil
					o.res = res
					return o
				}
				a, b := run(guess, false), run(probe, true)
				if fmt.Sprint(a) != fmt.Sprint(b) {
					t.Fatalf("file %d:\nguessed %+v\nprobed  %+v", file, a, b)
				}
				if a.res.Rows != len(rows) || a.res.Created+a.res.Existing+len(a.refused) != len(rows) {
					t.Fatalf("file %d: %+v for %d rows", file, a, len(rows))
				}
			}
			da, err := sqlitestore.DumpIntents(ctx, guess)
			if err != nil {
				t.Fatal(err)
			}
			db, err := sqlitestore.DumpIntents(ctx, probe)
			if err != nil {
				t.Fatal(err)
			}
			if !slices.Equal(da, db) {
				t.Fatalf("stored intents differ:\nguessed %q\nprobed  %q", da, db)
			}
		})
	}
}

type intentGen struct {
	t    *testing.T
	r    *rand.Rand
	keys int
	line int
}

var intentT0 = time.Date(2026, 11, 2, 9, 30, 0, 0, time.UTC)

func (g *intentGen) amount(s string) money.Amount {
	a, err := money.Parse(s, "KES")
	if err != nil {
		g.t.Fatal(err)
	}
	return a
}

// charge is the usual row of key: its amount follows from the key, so
// that a key named again is mostly the same request.
func (g *intentGen) charge(line int, key string, state ledger.State) ledger.ImportIntent {
	var n int
	fmt.Sscanf(key, "k%d", &n)
	return ledger.ImportIntent{Line: line, NewIntent: ledger.NewIntent{
		IntentParams: ledger.IntentParams{Key: key, Provider: "mpesa", Amount: g.amount(fmt.Sprint(100 + n)),
			Customer: fmt.Sprintf("2547%08d", n)},
		State: state, CreatedAt: intentT0.Add(time.Duration(n) * time.Minute)}}
}

// file returns n random rows. Half the files begin with a chunk of new
// keys whose last in key order is stored: the first chunk is written
// without a look-up, and its last insert meets the stored key.
func (g *intentGen) file(n, chunk int) []ledger.ImportIntent {
	states := []ledger.State{ledger.StatePending, ledger.StateSucceeded, ledger.StateSucceeded, ledger.StateFailed}
	var rows []ledger.ImportIntent
	if g.r.IntN(2) == 0 {
		for range chunk - 1 {
			g.line++
			rows = append(rows, g.charge(g.line, fmt.Sprintf("a%05d", g.line), ledger.StateSucceeded))
		}
		g.line++
		rows = append(rows, g.charge(g.line, "k000", ledger.StateSucceeded))
	}
	fresh := g.r.IntN(3) == 0 // a file of new keys only, mostly
	for range n {
		g.line++
		key := fmt.Sprintf("k%03d", g.r.IntN(g.keys))
		if fresh {
			key = fmt.Sprintf("k%03d", 1000+g.line)
		}
		r := g.charge(g.line, key, states[g.r.IntN(len(states))])
		switch g.r.IntN(12) {
		case 0: // key reuse
			r.Amount = g.amount("1")
		case 1:
			r.Metadata = map[string]string{"order": key}
		case 2, 3: // a refund of a charge that may be stored, imported or missing
			of := fmt.Sprintf("k%03d", g.r.IntN(g.keys+4))
			r.Key = fmt.Sprintf("r%03d-%s", g.r.IntN(g.keys), of)
			r.Kind, r.RefundOf, r.Amount = ledger.IntentRefund, of, g.amount(fmt.Sprint(1+g.r.IntN(60)))
			r.State = []ledger.State{ledger.StateSucceeded, ledger.StateFailed, ledger.StatePending}[g.r.IntN(3)]
		}
		for i := range g.r.IntN(3) {
			r.ProviderRefs = append(r.ProviderRefs, fmt.Sprintf("R%s%d", r.Key, i))
		}
		if g.r.IntN(40) == 0 {
			r.Amount = money.Amount{} // invalid: refused before it reaches the store
		}
		rows = append(rows, r)
	}
	return rows
}
