package reconciler_test

import (
	"context"
	"errors"
	"slices"
	"sync/atomic"
	"testing"
	"time"

	"github.com/reconcilehq/reconcile/internal/dbtest"
	"github.com/reconcilehq/reconcile/ledger"
	"github.com/reconcilehq/reconcile/reconciler"
	"github.com/reconcilehq/reconcile/reconciler/scenario"
)

// replica is a read replica the test controls: Fresh offers rd, or sends
// the run to the primary with why.
type replica struct {
	rd  ledger.Reader
	why string
}

func (r replica) Fresh(context.Context) (ledger.Reader, string) { return r.rd, r.why }

// countingReader reads the books and counts the scans that went through
// it; with fail set, every scan fails once something was read.
type countingReader struct {
	ledger.Reader
	scans atomic.Int64
	fail  bool
}

var errReplicaGone = errors.New("replica connection lost")

func (c *countingReader) ScanIntents(ctx context.Context, f ledger.IntentFilter, fn func(*ledger.IntentRow) error) error {
	c.scans.Add(1)
	if c.fail {
		return errReplicaGone
	}
	return c.Reader.ScanIntents(ctx, f, fn)
}

func (c *countingReader) ScanProviderTxns(ctx context.Context, f ledger.TxnFilter, fn func(*ledger.TxnRow) error) error {
	c.scans.Add(1)
	if c.fail {
		return errReplicaGone
	}
	return c.Reader.ScanProviderTxns(ctx, f, fn)
}

// TestRunReadsReplica: a run's matching scans the replica when it is
// fresh, the primary when it is not (saying why), and the primary again
// when a read on the replica fails; the findings are the same each way,
// and everything is written to the primary.
func TestRunReadsReplica(t *testing.T) {
	t.Parallel()
	for _, c := range []struct {
		name      string
		fresh     bool
		fail      bool
		why       string
		wantReads string
		wantScans bool
	}{
		{name: "fresh", fresh: true, wantReads: "replica", wantScans: true},
		{name: "lagging", why: "the replica lags 45s", wantReads: "primary: the replica lags 45s"},
		{name: "failing", fresh: true, fail: true, wantReads: "primary: reading the replica failed: replica connection lost", wantScans: true},
	} {
		t.Run(c.name, func(t *testing.T) {
			t.Parallel()
			day := scenario.Mpesa(1, date, 120)
			b := setup(t, dbtest.Postgres, day, reconciler.Config{})
			rd := &countingReader{Reader: b.store, fail: c.fail}
			rep := replica{why: c.why}
			if c.fresh {
				rep.rd = rd
			}
			rec := reconciler.New(b.store, reconciler.Config{Clock: b.clock.Now, Owner: "test",
				Grace: map[string]time.Duration{day.Provider: day.Grace}, Replica: rep})
			out, err := rec.Run(context.Background(), reconciler.Params{Provider: day.Provider, From: day.From, To: day.To, NoPull: true})
			if err != nil {
				t.Fatal(err)
			}
			if out.Reads != c.wantReads {
				t.Errorf("reads %q, want %q", out.Reads, c.wantReads)
			}
			if got := rd.scans.Load() > 0; got != c.wantScans {
				t.Errorf("scans through the replica: %d, want some: %v", rd.scans.Load(), c.wantScans)
			}
			if got := scenario.Of(out.Findings); !slices.EqualFunc(got, day.Expected, eqExpected) {
				t.Fatalf("findings:\n%s\nwant:\n%s", lines(got), lines(day.Expected))
			}
			stored, err := b.store.ListFindings(context.Background(), ledger.FindingFilter{Provider: day.Provider})
			if err != nil || len(stored) != len(day.Expected) {
				t.Fatalf("findings written to the primary: %d (%v), want %d", len(stored), err, len(day.Expected))
			}
		})
	}
}
