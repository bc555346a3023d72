// Command runbench loads a bulk M-Pesa-shaped day into a fresh PostgreSQL
// schema with COPY and, in one go, times (a) a reconcile run through the
// reconciler package, (b) a hand-written SQL FULL OUTER JOIN that computes
// the same finding counts and (c) COPY ... TO STDOUT (FORMAT binary) of the
// run's inputs, as the store's scans read them (and, for comparison, as its
// row-by-row listings do), then prints the times and the ratios a/b and a/c.
package main

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"flag"
	"fmt"
	"io"
	"log/slog"
	"net/url"
	"os"
	"os/signal"
	"runtime"
	"slices"
	"syscall"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/reconcilehq/reconcile/internal/database"
	"github.com/reconcilehq/reconcile/ledger"
	"github.com/reconcilehq/reconcile/ledger/pgstore"
	"github.com/reconcilehq/reconcile/reconciler"
	"github.com/reconcilehq/reconcile/reconciler/scenario"
)

func main() {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	if err := run(ctx); err != nil {
		fmt.Fprintln(os.Stderr, "runbench:", err)
		os.Exit(1)
	}
}

func run(ctx context.Context) error {
	base := flag.String("url", os.Getenv("TEST_DATABASE_URL"), "PostgreSQL URL (default $TEST_DATABASE_URL)")
	n := flag.Int("n", 1_000_000, "intents (about as many provider transactions)")
	seed := flag.Uint64("seed", 42, "generator seed")
	keep := flag.Bool("keep", false, "keep the schema afterwards")
	flag.Parse()
	if *base == "" {
		return errors.New("no database: set TEST_DATABASE_URL or -url")
	}
	bk := scenario.Bulk{Seed: *seed, Provider: "mpesa", From: time.Date(2024, 2, 6, 0, 0, 0, 0, time.UTC), N: *n}

	schema := "bench_" + randomHex(6)
	admin, err := pgx.Connect(ctx, *base)
	if err != nil {
		return fmt.Errorf("connect: %w", err)
	}
	defer admin.Close(context.WithoutCancel(ctx))
	if _, err := admin.Exec(ctx, "CREATE SCHEMA "+schema); err != nil {
		return err
	}
	if !*keep {
		defer admin.Exec(context.WithoutCancel(ctx), "DROP SCHEMA "+schema+" CASCADE")
	}
	u, err := url.Parse(*base)
	if err != nil {
		return err
	}
	q := u.Query()
	q.Set("search_path", schema)
	u.RawQuery = q.Encode()

	store, err := database.Open(ctx, u.String(), database.Options{})
	if err != nil {
		return err
	}
	defer store.Close()
	if _, err := database.Migrate(ctx, store); err != nil {
		return err
	}
	pg := store.(*pgstore.Store)

	fmt.Printf("runbench: %s intents, seed %d, schema %s, GOMAXPROCS %d\n", count(*n), *seed, schema, runtime.GOMAXPROCS(0))
	t0 := time.Now()
	rows, err := load(ctx, pg, bk)
	if err != nil {
		return fmt.Errorf("load: %w", err)
	}
	if _, err := pg.Pool().Exec(ctx, "VACUUM ANALYZE"); err != nil {
		return err
	}
	fmt.Printf("load: %s intents, %s attempts, %s provider transactions with COPY in %s\n",
		count(rows[0]), count(rows[1]), count(rows[2]), time.Since(t0).Round(time.Millisecond))

	from, to := bk.Window()
	lo, hi := from.Add(-reconciler.DefaultTolerance), to.Add(reconciler.DefaultTolerance)
	want, wantSettled := bk.Expected()

	// Warm the cache once, untimed, so that no contender pays for the
	// first read from disk.
	if _, err := copyQueries(ctx, pg, lo, hi, scanQueries...); err != nil {
		return err
	}
	if _, err := copyQueries(ctx, pg, lo, hi, listQueries...); err != nil {
		return err
	}

	// (c) the run's inputs with binary COPY: the statements the store's
	// scans run, and (c0) the row-by-row listings it read with before.
	tc := time.Now()
	copied, err := copyQueries(ctx, pg, lo, hi, scanQueries...)
	if err != nil {
		return err
	}
	c := time.Since(tc)
	tc0 := time.Now()
	copied0, err := copyQueries(ctx, pg, lo, hi, listQueries...)
	if err != nil {
		return err
	}
	c0 := time.Since(tc0)

	// (b) the same finding counts in SQL.
	tb := time.Now()
	sqlCounts, err := sqlFindings(ctx, pg, bk.Provider, from, to, bk.Now(), bk.Grace())
	if err != nil {
		return err
	}
	b := time.Since(tb)

	// (a) a reconcile run, end to end, writing its findings.
	rec := reconciler.New(store, reconciler.Config{Clock: bk.Now, Owner: "runbench",
		Grace: map[string]time.Duration{bk.Provider: bk.Grace()}, Logger: slog.New(slog.DiscardHandler)})
	var before runtime.MemStats
	runtime.ReadMemStats(&before)
	ta := time.Now()
	out, err := rec.Run(ctx, reconciler.Params{Provider: bk.Provider, From: from, To: to, NoPull: true})
	if err != nil {
		return err
	}
	a := time.Since(ta)
	var after runtime.MemStats
	runtime.ReadMemStats(&after)

	// A second run of the window: the same findings, none new.
	ta2 := time.Now()
	again, err := rec.Run(ctx, reconciler.Params{Provider: bk.Provider, From: from, To: to, NoPull: true})
	if err != nil {
		return err
	}
	a2 := time.Since(ta2)

	got := map[ledger.Kind]int{}
	for _, f := range out.Findings {
		got[f.Kind]++
	}
	fmt.Printf("\nfindings by kind            %-10s %-10s %-10s\n", "planted", "run", "sql")
	ok := true
	for _, k := range ledger.Kinds {
		fmt.Printf("  %-25s %-10d %-10d %-10d\n", k, want[k], got[k], sqlCounts[k])
		ok = ok && want[k] == got[k] && want[k] == sqlCounts[k]
	}
	fmt.Printf("  %-25s %-10d %-10d\n", "settled", wantSettled, len(out.Settled))
	ok = ok && wantSettled == len(out.Settled) && again.Run.Counts.New == 0 && len(again.Findings) == len(out.Findings)

	fmt.Printf("\n(a) reconcile run, end to end:   %8s   (%s intents, %s transactions read; %d findings written)\n",
		a.Round(time.Millisecond), count(out.Summary.Intents), count(out.Summary.Transactions), len(out.Findings))
	fmt.Printf("    same window again:           %8s   (%d new)\n", a2.Round(time.Millisecond), again.Run.Counts.New)
	fmt.Printf("(b) SQL FULL OUTER JOIN counts:  %8s\n", b.Round(time.Millisecond))
	fmt.Printf("(c) COPY TO STDOUT (binary):     %8s   (%s MiB: the store's scans of intents, provider refs, transactions)\n",
		c.Round(time.Millisecond), mib(copied))
	fmt.Printf("(c0) same, former listings:      %8s   (%s MiB: intents with a per-intent refs subquery, transactions)\n",
		c0.Round(time.Millisecond), mib(copied0))
	fmt.Printf("\na/b  = %.2f  (target <= 0.50)\na/c  = %.2f  (target <= 2.00)\na/c0 = %.2f\n",
		a.Seconds()/b.Seconds(), a.Seconds()/c.Seconds(), a.Seconds()/c0.Seconds())
	fmt.Printf("go heap allocated during (a): %s MiB\n", mib(int64(after.TotalAlloc-before.TotalAlloc)))
	if !ok {
		return errors.New("the run, the SQL and the planted counts disagree")
	}
	return nil
}

// scanQueries are the statements the PostgreSQL store's scans run
// (ledger/pgstore ScanIntents, ScanProviderRefs, ScanProviderTxns), with
// the window inlined; listQueries are those of its row-by-row listings
// (ListIntents, ListProviderTxns), which reconcile runs read with before.
var (
	scanQueries = []string{`SELECT key, reference, customer, amount, currency, state, created_at, updated_at, lease_expires_at
	FROM intents WHERE provider = 'mpesa' AND created_at >= '%[1]s' AND created_at < '%[2]s'`,
		`SELECT a.intent_key, a.provider_ref FROM intents i JOIN attempts a ON a.intent_key = i.key
	WHERE i.provider = 'mpesa' AND i.created_at >= '%[1]s' AND i.created_at < '%[2]s' AND a.provider_ref <> ''`,
		`SELECT txn_id, reference, provider_ref, counterparty, linked_txn_id, type, status, amount, currency, occurred_at
	FROM provider_txns WHERE provider = 'mpesa' AND occurred_at >= '%[1]s' AND occurred_at < '%[2]s'`}
	listQueries = []string{`SELECT i.key, i.provider, i.amount, i.currency, i.customer, i.reference, i.metadata, i.state,
	i.claim_token, i.claim_owner, i.lease_expires_at, i.created_at, i.updated_at,
	COALESCE((SELECT array_agg(DISTINCT a.provider_ref) FROM attempts a
	          WHERE a.intent_key = i.key AND a.provider_ref <> ''), '{}')
	FROM intents i WHERE i.provider = 'mpesa' AND i.created_at >= '%[1]s' AND i.created_at < '%[2]s'
	ORDER BY i.created_at, i.key`,
		`SELECT provider, txn_id, type, status, amount, currency, occurred_at, reference, provider_ref,
	counterparty, linked_txn_id, first_seen_at, updated_at FROM provider_txns
	WHERE provider = 'mpesa' AND occurred_at >= '%[1]s' AND occurred_at < '%[2]s' ORDER BY occurred_at, txn_id`}
)

func copyQueries(ctx context.Context, pg *pgstore.Store, lo, hi time.Time, queries ...string) (int64, error) {
	conn, err := pg.Pool().Acquire(ctx)
	if err != nil {
		return 0, err
	}
	defer conn.Release()
	var total int64
	for _, q := range queries {
		sql := fmt.Sprintf("COPY ("+q+") TO STDOUT (FORMAT binary)", lo.Format(time.RFC3339), hi.Format(time.RFC3339))
		tag, err := conn.Conn().PgConn().CopyTo(ctx, countingDiscard{&total}, sql)
		if err != nil {
			return 0, err
		}
		_ = tag
	}
	return total, nil
}

type countingDiscard struct{ n *int64 }

func (c countingDiscard) Write(p []byte) (int, error) { *c.n += int64(len(p)); return len(p), nil }

var _ io.Writer = countingDiscard{}

func randomHex(n int) string {
	b := make([]byte, n)
	_, _ = rand.Read(b)
	return hex.EncodeToString(b)
}

func count(n int) string {
	s := fmt.Sprint(n)
	out := []byte{}
	for i := range s {
		if i > 0 && (len(s)-i)%3 == 0 {
			out = append(out, ',')
		}
		out = append(out, s[i])
	}
	return string(out)
}

func mib(b int64) string { return fmt.Sprintf("%.1f", float64(b)/(1<<20)) }

var _ = slices.Sort[[]string]
