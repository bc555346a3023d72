// Command runbench loads a bulk M-Pesa-shaped day into a fresh PostgreSQL
// schema with COPY (no import) and, in one go and -repeat times, times
// (c) COPY ... TO STDOUT (FORMAT binary) of the run's inputs, as the store's
// scans read them, (b) a hand-written SQL FULL OUTER JOIN that computes the
// same finding counts, (d) a reconcile run with --dry-run and (a) one that
// records its findings, both through the reconciler package as the CLI runs
// them. It prints wall time and CPU time (this process plus its PostgreSQL
// backends, read from /proc when the server is on this machine) and the
// ratios of the runs to COPY and to the SQL, with their range over the
// repeats.
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
	"runtime/pprof"
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
	reuse := flag.String("reuse", "", "time on this schema, loaded and kept by an earlier -keep run, without loading or checking counts")
	cpuprofile := flag.String("cpuprofile", "", "write a CPU profile of the first dry run to this file")
	repeat := flag.Int("repeat", 3, "times each contender is timed, after one load")
	parallel := flag.Bool("parallel", false, "let PostgreSQL use parallel workers (their CPU is not counted)")
	hist := flag.String("history", "", "instead of the contenders, time the day's run alone and then with these counts of earlier days of the same volume in the books, e.g. 30,90")
	flag.Parse()
	histDays, err := historyDays(*hist)
	if err != nil {
		return err
	}
	if *base == "" {
		return errors.New("no database: set TEST_DATABASE_URL or -url")
	}
	bk := scenario.Bulk{Seed: *seed, Provider: "mpesa", From: time.Date(2024, 2, 6, 0, 0, 0, 0, time.UTC), N: *n}

	schema := "bench_" + randomHex(6)
	if *reuse != "" {
		schema = *reuse
	}
	admin, err := pgx.Connect(ctx, *base)
	if err != nil {
		return fmt.Errorf("connect: %w", err)
	}
	defer admin.Close(context.WithoutCancel(ctx))
	if *reuse == "" {
		if _, err := admin.Exec(ctx, "CREATE SCHEMA "+schema); err != nil {
			return err
		}
	}
	if !*keep && *reuse == "" {
		defer admin.Exec(context.WithoutCancel(ctx), "DROP SCHEMA "+schema+" CASCADE")
	}
	u, err := url.Parse(*base)
	if err != nil {
		return err
	}
	q := u.Query()
	q.Set("search_path", schema)
	// The bench's own backends are found by their application name, so
	// that their CPU time can be counted; parallel workers are off unless
	// asked for, since theirs could not be.
	app := "runbench_" + schema
	q.Set("application_name", app)
	if !*parallel {
		q.Set("max_parallel_workers_per_gather", "0") // a run-time parameter at connection start
	}
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
	if *reuse == "" {
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
	} else {
		fmt.Println("reusing a loaded schema: counts are not checked (earlier runs recorded findings and settled intents)")
	}

	from, to := bk.Window()
	lo, hi := from.Add(-reconciler.DefaultTolerance), to.Add(reconciler.DefaultTolerance)
	want, wantSettled := bk.Expected()
	meter := newMeter(admin, app)
	if len(histDays) > 1 {
		return history(ctx, pg, meter, bk, histDays, *repeat)
	}

	// Warm the cache once, untimed, so that no contender pays for the
	// first read from disk.
	if _, err := copyQueries(ctx, pg, lo, hi, scanQueries...); err != nil {
		return err
	}
	rec := reconciler.New(store, reconciler.Config{Clock: bk.Now, Owner: "runbench",
		Grace: map[string]time.Duration{bk.Provider: bk.Grace()}, Logger: slog.New(slog.DiscardHandler)})
	params := reconciler.Params{Provider: bk.Provider, From: from, To: to, NoPull: true}

	var all [4][]cost
	ok, firstFindings := true, 0
	for r := range *repeat {
		var (
			copied           int64
			sqlCounts        map[ledger.Kind]int
			dry, real        *reconciler.Outcome
			cc, bc, dc, ac   cost
			heapDry, heapRun uint64
		)
		// (c) the run's inputs with binary COPY: the statements the
		// store's scans run.
		if cc, err = meter.measure(ctx, func() error {
			copied, err = copyQueries(ctx, pg, lo, hi, scanQueries...)
			return err
		}); err != nil {
			return err
		}
		// (b) the same finding counts in SQL.
		if bc, err = meter.measure(ctx, func() error {
			sqlCounts, err = sqlFindings(ctx, pg, bk.Provider, from, to, bk.Now(), bk.Grace())
			return err
		}); err != nil {
			return err
		}
		// (a) reconcile runs: --dry-run (matches and reports, writes
		// nothing), then a run that records its findings.
		if dc, err = meter.measure(ctx, func() error {
			heapDry = heapDuring(func() {
				p := params
				p.DryRun = true
				stop := profile(*cpuprofile, r)
				dry, err = rec.Run(ctx, p)
				stop()
			})
			return err
		}); err != nil {
			return err
		}
		if ac, err = meter.measure(ctx, func() error {
			heapRun = heapDuring(func() { real, err = rec.Run(ctx, params) })
			return err
		}); err != nil {
			return err
		}
		for i, c := range []cost{cc, bc, dc, ac} {
			all[i] = append(all[i], c)
		}
		if r == 0 {
			firstFindings = len(real.Findings)
			gotDry, gotRun := map[ledger.Kind]int{}, map[ledger.Kind]int{}
			for _, f := range dry.Findings {
				gotDry[f.Kind]++
			}
			for _, f := range real.Findings {
				gotRun[f.Kind]++
			}
			fmt.Printf("\nfindings by kind            %-10s %-10s %-10s %-10s\n", "planted", "dry-run", "run", "sql")
			for _, k := range ledger.Kinds {
				fmt.Printf("  %-25s %-10d %-10d %-10d %-10d\n", k, want[k], gotDry[k], gotRun[k], sqlCounts[k])
				ok = ok && want[k] == gotDry[k] && want[k] == gotRun[k] && want[k] == sqlCounts[k]
			}
			fmt.Printf("  %-25s %-10d %-10d %-10d\n", "settled", wantSettled, len(dry.Settled), len(real.Settled))
			ok = ok && wantSettled == len(real.Settled) && wantSettled == len(dry.Settled)
			fmt.Printf("\n(c) COPY TO STDOUT (binary): %s MiB, the statements of the store's scans (intents, provider refs, transactions)\n", mib(copied))
			fmt.Printf("(b) SQL FULL OUTER JOIN computing the finding counts\n")
			fmt.Printf("(d) reconcile run --dry-run: %s intents, %s transactions read, %d findings, go heap allocated %s MiB\n",
				count(dry.Summary.Intents), count(dry.Summary.Transactions), len(dry.Findings), mib(int64(heapDry)))
			fmt.Printf("(a) reconcile run: %d findings written (%d new), go heap allocated %s MiB\n", len(real.Findings), real.Run.Counts.New,
				mib(int64(heapRun)))
			fmt.Printf("\n%-6s %-28s %-28s %-28s %-28s %s\n", "repeat", "(c) COPY", "(b) SQL join", "(d) run --dry-run", "(a) run",
				"d/c  a/c  d/b  a/b (wall | cpu)")
		} else {
			ok = ok && real.Run.Counts.New == 0 && len(real.Findings) == firstFindings
		}
		fmt.Printf("%-6d %-28s %-28s %-28s %-28s %.2f %.2f %.2f %.2f | %.2f %.2f %.2f %.2f\n", r+1, cc, bc, dc, ac,
			dc.ratio(cc, false), ac.ratio(cc, false), dc.ratio(bc, false), ac.ratio(bc, false),
			dc.ratio(cc, true), ac.ratio(cc, true), dc.ratio(bc, true), ac.ratio(bc, true))
	}
	fmt.Printf("\nranges over %d repeats (wall; cpu = this process + its PostgreSQL backends)\n", *repeat)
	span := func(name string, num, den int, cpu bool, target float64) {
		lo, hi := 1e9, 0.0
		for i := range all[num] {
			v := all[num][i].ratio(all[den][i], cpu)
			lo, hi = min(lo, v), max(hi, v)
		}
		fmt.Printf("  %-22s %.2f - %.2f  (target <= %.2f)\n", name, lo, hi, target)
	}
	for _, cpu := range []bool{false, true} {
		kind := "wall"
		if cpu {
			kind = "cpu"
		}
		span("dry-run/COPY "+kind, 2, 0, cpu, 1.25)
		span("run/COPY "+kind, 3, 0, cpu, 1.25)
		span("dry-run/SQL "+kind, 2, 1, cpu, 0.7)
		span("run/SQL "+kind, 3, 1, cpu, 0.7)
	}
	if !ok && *reuse == "" {
		return errors.New("the runs, the SQL and the planted counts disagree")
	}
	return nil
}

// scanQueries are the statements the PostgreSQL store's scans run
// (ledger/pgstore ScanIntents, ScanProviderRefs, ScanProviderTxns), with
// the window inlined.
var scanQueries = []string{`SELECT key, reference, customer, amount_minor,
	CASE WHEN amount_minor IS NULL THEN amount::text END, currency, state, created_at, updated_at, lease_expires_at, refund_of
	FROM intents WHERE provider = 'mpesa' AND created_at >= '%[1]s' AND created_at < '%[2]s'`,
	`SELECT a.intent_key, a.provider_ref FROM intents i JOIN attempts a ON a.intent_key = i.key
	WHERE i.provider = 'mpesa' AND i.created_at >= '%[1]s' AND i.created_at < '%[2]s' AND a.provider_ref <> ''`,
	`SELECT txn_id, reference, provider_ref, counterparty, linked_txn_id, type, status,
	amount_minor, CASE WHEN amount_minor IS NULL THEN amount::text END, currency, occurred_at,
	coalesce(settlement_amount::text, ''), settlement_currency, exchange_rate
	FROM provider_txns WHERE provider = 'mpesa' AND occurred_at >= '%[1]s' AND occurred_at < '%[2]s'`}

func copyQueries(ctx context.Context, pg *pgstore.Store, lo, hi time.Time, queries ...string) (int64, error) {
	conn, err := pg.Pool().Acquire(ctx)
	if err != nil {
		return 0, err
	}
	defer conn.Release()
	var total int64
	for _, q := range queries {
		sql := fmt.Sprintf("COPY ("+q+") TO STDOUT (FORMAT binary)", lo.Format(time.RFC3339), hi.Format(time.RFC3339))
		if _, err := conn.Conn().PgConn().CopyTo(ctx, countingDiscard{&total}, sql); err != nil {
			return 0, err
		}
	}
	return total, nil
}

type countingDiscard struct{ n *int64 }

func (c countingDiscard) Write(p []byte) (int, error) { *c.n += int64(len(p)); return len(p), nil }

var _ io.Writer = countingDiscard{}

// profile starts a CPU profile into file on the first repeat; the returned
// function stops it.
func profile(file string, repeat int) func() {
	if file == "" || repeat > 0 {
		return func() {}
	}
	f, err := os.Create(file)
	if err != nil {
		fmt.Fprintln(os.Stderr, "runbench: cpuprofile:", err)
		return func() {}
	}
	if err := pprof.StartCPUProfile(f); err != nil {
		fmt.Fprintln(os.Stderr, "runbench: cpuprofile:", err)
		return func() { f.Close() }
	}
	return func() { pprof.StopCPUProfile(); f.Close() }
}

func heapDuring(fn func()) uint64 {
	var before, after runtime.MemStats
	runtime.ReadMemStats(&before)
	fn()
	runtime.ReadMemStats(&after)
	return after.TotalAlloc - before.TotalAlloc
}

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
