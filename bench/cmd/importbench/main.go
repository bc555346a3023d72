// Command importbench generates N-line files in the formats reconcile
// imports (M-Pesa portal statement, Stripe itemized report, intents CSV, an
// MT940 bank statement of N entries) and, on PostgreSQL and SQLite, times
// the real binary's import of each (into a fresh database) and a re-import
// of the same file, beside a baseline in the same run: on PostgreSQL COPY
// ... FROM of the same CSV (a statement's text lines) into an unindexed
// text table, on SQLite a plain prepared INSERT of the same rows in one
// transaction through the same driver. Beside them, the floors: the rows
// the import stored written again into the same tables (binary COPY on
// PostgreSQL; on SQLite the engine's INSERT ... SELECT, and the same rows
// through the driver). It prints the times, the ratios and each import's
// peak RSS (from wait4's rusage).
package main

import (
	"bufio"
	"cmp"
	"context"
	"database/sql"
	"encoding/csv"
	"errors"
	"flag"
	"fmt"
	"io"
	"net/url"
	"os"
	"os/exec"
	"os/signal"
	"path/filepath"
	"slices"
	"strings"
	"syscall"
	"time"

	"github.com/jackc/pgx/v5"
	_ "modernc.org/sqlite"
)

func main() {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	if err := run(ctx); err != nil {
		fmt.Fprintln(os.Stderr, "importbench:", err)
		os.Exit(1)
	}
}

type config struct {
	n       int
	repeat  int
	bin     string
	pgURL   string
	dir     string
	formats []string
	engines []string
	pgData  string
	// verdicts collect, per engine and format, the import against its
	// floor, for the summary; drvVerdicts the SQLite imports against the
	// floor through the driver.
	verdicts, drvVerdicts *[]string
}

// floorTarget is how far above its floor an import may be.
const floorTarget = 1.5

func run(ctx context.Context) error {
	c := config{verdicts: new([]string), drvVerdicts: new([]string)}
	var formatList, engineList string
	flag.IntVar(&c.n, "n", 1000000, "lines per file")
	flag.IntVar(&c.repeat, "repeat", 1, "rounds of each case; the medians are printed, with the spread of wall times")
	flag.StringVar(&c.bin, "bin", "", "the reconcile binary (required)")
	flag.StringVar(&c.pgURL, "pg", os.Getenv("BENCH_DATABASE_URL"), "PostgreSQL server URL; a database is created per case")
	flag.StringVar(&c.pgData, "pgdata", "", "the PostgreSQL server's data directory, to count its CPU time when it runs here")
	flag.StringVar(&c.dir, "dir", "", "where files and SQLite databases go (default: a temporary directory, removed)")
	flag.StringVar(&formatList, "formats", "mpesa,stripe,intents,bank", "formats to time")
	flag.StringVar(&engineList, "engines", "postgres,sqlite", "engines to time")
	genOnly := flag.Bool("generate", false, "only write the files into -dir (FORMAT.csv) and exit")
	drvFloorOf := flag.String("drvfloor", "", "internal: time the driver floor of FROM,TO,TABLE... in this process and print it")
	endToEnd := flag.Bool("e2e", false, "on PostgreSQL, also time both imports (intents, M-Pesa) and a run against COPY of both files plus the SQL join")
	flag.Parse()
	c.formats, c.engines = strings.Split(formatList, ","), strings.Split(engineList, ",")
	if *drvFloorOf != "" {
		return printDriverFloor(ctx, *drvFloorOf)
	}
	if *genOnly {
		for _, name := range c.formats {
			f, ok := lookup(name)
			if !ok {
				return fmt.Errorf("unknown format %q", name)
			}
			if err := generate(f, filepath.Join(c.dir, name+".csv"), c.n); err != nil {
				return err
			}
		}
		return nil
	}
	if c.bin == "" && !*genOnly {
		return errors.New("-bin is required")
	}
	if c.dir == "" {
		d, err := os.MkdirTemp("", "importbench")
		if err != nil {
			return err
		}
		defer os.RemoveAll(d)
		c.dir = d
	}
	fmt.Println("wall and CPU seconds (client = the timed process from wait4; server = the PostgreSQL server's")
	fmt.Println("processes from /proc when it runs here); ratios to the required baseline (/base) and to the floor")
	fmt.Println("(/floor): the rows the import stored written again into the same migrated, indexed tables in one")
	fmt.Println("transaction, by binary COPY on PostgreSQL and by the engine's INSERT ... SELECT on SQLite; on")
	fmt.Println("PostgreSQL keysfloor is that COPY into tables that keep only their primary keys and unique constraints;")
	fmt.Println("on SQLite drvfloor is those rows written through the driver (multi-row INSERTs, each value bound)")
	if c.pgURL != "" {
		settings, err := serverSettings(ctx, c.pgURL)
		if err != nil {
			return err
		}
		fmt.Println("PostgreSQL:", settings)
	}
	fmt.Printf("%-8s %-7s %8s %-9s %8s %7s %8s %8s %8s %8s %8s %9s %7s\n", "engine", "format", "lines", "step", "wall_s", "spread",
		"client_s", "server_s", "cpu_s", "wall/base", "cpu/base", "wall/floor", "rss_MiB")
	for _, fname := range c.formats {
		f, ok := lookup(fname)
		if !ok {
			return fmt.Errorf("unknown format %q", fname)
		}
		file := filepath.Join(c.dir, fname+".csv")
		if err := generate(f, file, c.n); err != nil {
			return fmt.Errorf("generate %s: %w", fname, err)
		}
		for _, engine := range c.engines {
			if err := bench(ctx, c, f, engine, file); err != nil {
				return fmt.Errorf("%s %s: %w", engine, fname, err)
			}
		}
		_ = os.Remove(file)
	}
	fmt.Printf("import/floor, target within %.1fx (wall; CPU beside it):\n", floorTarget)
	for _, v := range *c.verdicts {
		fmt.Println("  " + v)
	}
	if len(*c.drvVerdicts) > 0 {
		fmt.Printf("SQLite import/drvfloor (the same rows written through the driver), target within %.1fx:\n", floorTarget)
		for _, v := range *c.drvVerdicts {
			fmt.Println("  " + v)
		}
	}
	if *endToEnd {
		if c.pgURL == "" {
			return errors.New("-e2e needs PostgreSQL (-pg or BENCH_DATABASE_URL)")
		}
		if err := e2e(ctx, c); err != nil {
			return fmt.Errorf("e2e: %w", err)
		}
	}
	return nil
}

func lookup(name string) (format, bool) {
	for _, f := range formats {
		if f.name == name {
			return f, true
		}
	}
	return format{}, false
}

// round times one of each step of f's benchmark on engine, each into a
// fresh database.
func round(ctx context.Context, c config, f format, engine, file string) (steps, error) {
	var (
		dbURL    string
		baseline func() (time.Duration, error)
		server   = func() time.Duration { return 0 }
		floorDB  string
	)
	switch engine {
	case "postgres":
		if c.pgURL == "" {
			return steps{}, errors.New("no PostgreSQL URL (-pg or BENCH_DATABASE_URL)")
		}
		name := "importbench_" + f.name
		u, err := freshDatabase(ctx, c.pgURL, name)
		if err != nil {
			return steps{}, err
		}
		if floorDB, err = freshDatabase(ctx, c.pgURL, name+"_floor"); err != nil {
			return steps{}, err
		}
		dbURL = u
		baseline = func() (time.Duration, error) { return pgCopy(ctx, u, file, "copy_baseline", f.lines) }
		server = func() time.Duration { return serverCPU(c.pgData) }
	case "sqlite":
		path := filepath.Join(c.dir, f.name+".db")
		for _, suffix := range []string{"", "-wal", "-shm", ".base", ".base-wal", ".base-shm"} {
			_ = os.Remove(path + suffix)
		}
		dbURL = "sqlite:" + path
		baseline = func() (time.Duration, error) { return sqliteInsert(ctx, path+".base", file, f.lines) }
	default:
		return steps{}, fmt.Errorf("unknown engine %q", engine)
	}
	if _, err := reconcile(ctx, c.bin, dbURL, "migrate"); err != nil {
		return steps{}, err
	}
	s0, self0 := server(), selfCPU()
	baseWall, err := baseline()
	if err != nil {
		return steps{}, fmt.Errorf("baseline: %w", err)
	}
	base := result{wall: baseWall, client: selfCPU() - self0, server: server() - s0}
	first, err := timed(ctx, c.bin, dbURL, server, f.args(file)...)
	if err != nil {
		return steps{}, err
	}
	var floor, keys, drv *result
	if floorDB != "" {
		if _, err := reconcile(ctx, c.bin, floorDB, "migrate"); err != nil {
			return steps{}, err
		}
		r, err := pgFloor(ctx, dbURL, floorDB, f.tables, filepath.Join(c.dir, f.name+".floor"), server)
		if err != nil {
			return steps{}, fmt.Errorf("floor: %w", err)
		}
		floor = &r
		// The keys floor: the same rows into tables that keep only their
		// primary keys and unique constraints, which the books need to
		// tell a new row from a known one. No import that keeps a row per
		// transaction and per sighting can write for less; the indexes
		// dropped here are the run's, the console's and the queue's.
		keysDB, err := freshDatabase(ctx, c.pgURL, "importbench_"+f.name+"_keys")
		if err != nil {
			return steps{}, err
		}
		if _, err := reconcile(ctx, c.bin, keysDB, "migrate"); err != nil {
			return steps{}, err
		}
		if err := dropSecondaryIndexes(ctx, keysDB, f.tables); err != nil {
			return steps{}, fmt.Errorf("keys floor: %w", err)
		}
		k, err := pgFloor(ctx, dbURL, keysDB, f.tables, filepath.Join(c.dir, f.name+".keys"), server)
		if err != nil {
			return steps{}, fmt.Errorf("keys floor: %w", err)
		}
		keys = &k
	}
	if engine == "sqlite" {
		path := strings.TrimPrefix(dbURL, "sqlite:")
		if _, err := reconcile(ctx, c.bin, "sqlite:"+path+".floor", "migrate"); err != nil {
			return steps{}, err
		}
		r, err := sqliteFloor(ctx, path, path+".floor", f.tables)
		for _, suffix := range []string{"", "-wal", "-shm"} {
			_ = os.Remove(path + ".floor" + suffix)
		}
		if err != nil {
			return steps{}, fmt.Errorf("floor: %w", err)
		}
		floor = &r
		if _, err := reconcile(ctx, c.bin, "sqlite:"+path+".drv", "migrate"); err != nil {
			return steps{}, err
		}
		d, err := driverFloorApart(ctx, path, path+".drv", f.tables)
		for _, suffix := range []string{"", "-wal", "-shm"} {
			_ = os.Remove(path + ".drv" + suffix)
		}
		if err != nil {
			return steps{}, fmt.Errorf("driver floor: %w", err)
		}
		drv = &d
	}
	again, err := timed(ctx, c.bin, dbURL, server, f.args(file)...)
	if err != nil {
		return steps{}, err
	}
	return steps{base: base, first: first, again: again, floor: floor, keys: keys, drv: drv}, nil
}

// steps are the results of one round.
type steps struct {
	base, first, again result
	floor, keys, drv   *result
}

// bench times f on engine c.repeat times and prints each step's median,
// the spread of its wall times and the ratios of the medians.
func bench(ctx context.Context, c config, f format, engine, file string) error {
	var all []steps
	for range max(c.repeat, 1) {
		s, err := round(ctx, c, f, engine, file)
		if err != nil {
			return err
		}
		all = append(all, s)
	}
	pick := func(get func(steps) *result) (result, string, bool) {
		var rs []result
		for _, s := range all {
			if r := get(s); r != nil {
				rs = append(rs, *r)
			}
		}
		if len(rs) == 0 {
			return result{}, "", false
		}
		return median(rs), spread(rs), true
	}
	base, baseSpread, _ := pick(func(s steps) *result { return &s.base })
	first, firstSpread, _ := pick(func(s steps) *result { return &s.first })
	again, againSpread, _ := pick(func(s steps) *result { return &s.again })
	floor, floorSpread, hasFloor := pick(func(s steps) *result { return s.floor })
	keys, keysSpread, hasKeys := pick(func(s steps) *result { return s.keys })
	drv, drvSpread, hasDrv := pick(func(s steps) *result { return s.drv })
	line := func(step string, r result, spread string) {
		vsFloor := ""
		if hasFloor && step != "baseline" {
			vsFloor = fmt.Sprintf("%.2f", r.wall.Seconds()/floor.wall.Seconds())
		}
		rss := ""
		if r.rss > 0 {
			rss = fmt.Sprintf("%.0f", r.rss)
		}
		fmt.Printf("%-8s %-7s %8d %-9s %8.2f %7s %8.2f %8.2f %8.2f %8.2fx %8.2fx %9s %7s\n", engine, f.name, c.n, step,
			r.wall.Seconds(), spread, r.client.Seconds(), r.server.Seconds(), r.cpu().Seconds(),
			r.wall.Seconds()/base.wall.Seconds(), r.cpu().Seconds()/max(base.cpu().Seconds(), 0.001), vsFloor, rss)
	}
	line("baseline", base, baseSpread)
	if hasKeys {
		line("keysfloor", keys, keysSpread)
	}
	if hasFloor {
		line("floor", floor, floorSpread)
	}
	if hasDrv {
		line("drvfloor", drv, drvSpread)
	}
	line("import", first, firstSpread)
	line("reimport", again, againSpread)
	if hasFloor {
		wall, cpu := first.wall.Seconds()/floor.wall.Seconds(), first.cpu().Seconds()/max(floor.cpu().Seconds(), 0.001)
		verdict := "within"
		if wall > floorTarget {
			verdict = "NOT within"
		}
		*c.verdicts = append(*c.verdicts, fmt.Sprintf("%-8s %-7s %5.2fx (CPU %5.2fx)  %s", engine, f.name, wall, cpu, verdict))
	}
	if hasDrv {
		wall, cpu := first.wall.Seconds()/drv.wall.Seconds(), first.cpu().Seconds()/max(drv.cpu().Seconds(), 0.001)
		verdict := "within"
		if wall > floorTarget {
			verdict = "NOT within"
		}
		*c.drvVerdicts = append(*c.drvVerdicts, fmt.Sprintf("%-8s %-7s %5.2fx (CPU %5.2fx)  %s", engine, f.name, wall, cpu, verdict))
	}
	return nil
}

// median is the result of median wall time among rs.
func median(rs []result) result {
	sorted := slices.Clone(rs)
	slices.SortFunc(sorted, func(a, b result) int { return cmp.Compare(a.wall, b.wall) })
	return sorted[len(sorted)/2]
}

// spread is how far apart the wall times of rs are, as a share of their
// median: "" for a single round.
func spread(rs []result) string {
	if len(rs) < 2 {
		return ""
	}
	lo, hi := rs[0].wall, rs[0].wall
	for _, r := range rs[1:] {
		lo, hi = min(lo, r.wall), max(hi, r.wall)
	}
	return fmt.Sprintf("±%.0f%%", 50*float64(hi-lo)/float64(median(rs).wall))
}

// result is one timed step.
type result struct {
	wall, client, server time.Duration
	rss                  float64 // MiB
}

func (r result) cpu() time.Duration { return r.client + r.server }

// timed runs the binary and measures it, with the server's CPU time.
func timed(ctx context.Context, bin, dbURL string, server func() time.Duration, args ...string) (result, error) {
	s0 := server()
	r, err := reconcile(ctx, bin, dbURL, args...)
	r.server = server() - s0
	return r, err
}

// selfCPU is this process's CPU time so far.
func selfCPU() time.Duration {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		return 0
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}

// reconcile runs the binary and measures its wall time, CPU time and peak
// RSS (from wait4's rusage).
func reconcile(ctx context.Context, bin, dbURL string, args ...string) (result, error) {
	cmd := exec.CommandContext(ctx, bin, append([]string{"--database-url", dbURL}, args...)...)
	cmd.Stdout = io.Discard
	var stderr strings.Builder
	cmd.Stderr = &stderr
	start := time.Now()
	err := cmd.Run()
	r := result{wall: time.Since(start)}
	if err != nil {
		return r, fmt.Errorf("reconcile %s: %w\n%s", strings.Join(args, " "), err, stderr.String())
	}
	if ru, ok := cmd.ProcessState.SysUsage().(*syscall.Rusage); ok {
		r.rss = float64(ru.Maxrss) / 1024 // KiB on Linux
		r.client = time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
	}
	return r, nil
}

// serverSettings names the server's version and the settings that move
// the figures of large writes.
func serverSettings(ctx context.Context, server string) (string, error) {
	conn, err := pgx.Connect(ctx, server)
	if err != nil {
		return "", err
	}
	defer conn.Close(ctx)
	var out []string
	for _, name := range []string{"server_version", "fsync", "synchronous_commit", "full_page_writes",
		"max_wal_size", "shared_buffers", "lc_collate"} {
		var v string
		if err := conn.QueryRow(ctx, "SELECT current_setting($1)", name).Scan(&v); err != nil {
			return "", err
		}
		out = append(out, name+"="+v)
	}
	return strings.Join(out, " "), nil
}

// freshDatabase (re)creates database name on the server and returns its URL.
func freshDatabase(ctx context.Context, server, name string) (string, error) {
	conn, err := pgx.Connect(ctx, server)
	if err != nil {
		return "", err
	}
	defer conn.Close(ctx)
	if _, err := conn.Exec(ctx, "DROP DATABASE IF EXISTS "+name); err != nil {
		return "", err
	}
	if _, err := conn.Exec(ctx, "CREATE DATABASE "+name); err != nil {
		return "", err
	}
	u, err := url.Parse(server)
	if err != nil {
		return "", err
	}
	u.Path = "/" + name
	return u.String(), nil
}

// header returns the CSV file's column count.
func header(file string) (int, error) {
	f, err := os.Open(file)
	if err != nil {
		return 0, err
	}
	defer f.Close()
	rec, err := csv.NewReader(f).Read()
	return len(rec), err
}

func textTable(name string, cols int) string {
	var b strings.Builder
	fmt.Fprintf(&b, "CREATE TABLE %s (", name)
	for i := range cols {
		if i > 0 {
			b.WriteString(", ")
		}
		fmt.Fprintf(&b, "c%d text", i)
	}
	b.WriteString(")")
	return b.String()
}

// pgCopy times COPY ... FROM STDIN of the file into an unindexed text
// table, committed: a column per CSV column, or with lines one column per
// line of a file that is not CSV.
func pgCopy(ctx context.Context, dbURL, file, table string, lines bool) (time.Duration, error) {
	cols, err := columns(file, lines)
	if err != nil {
		return 0, err
	}
	conn, err := pgx.Connect(ctx, dbURL)
	if err != nil {
		return 0, err
	}
	defer conn.Close(ctx)
	if _, err := conn.Exec(ctx, textTable(table, cols)); err != nil {
		return 0, err
	}
	f, err := os.Open(file)
	if err != nil {
		return 0, err
	}
	defer f.Close()
	start := time.Now()
	how := "(FORMAT csv, HEADER true)"
	if lines {
		how = "(FORMAT text)"
	}
	if _, err := conn.PgConn().CopyFrom(ctx, f, "COPY "+table+" FROM STDIN "+how); err != nil {
		return 0, err
	}
	return time.Since(start), nil
}

// columns is the baseline table's column count: the CSV header's, or one.
func columns(file string, lines bool) (int, error) {
	if lines {
		return 1, nil
	}
	return header(file)
}

// records reads f's rows after the header: its CSV records, or with lines
// each line as a record of one field (a statement that is not CSV).
func records(f io.Reader, lines bool) (func() ([]string, error), error) {
	if lines {
		sc := bufio.NewScanner(f)
		sc.Buffer(make([]byte, 0, 64*1024), 1<<20)
		rec := make([]string, 1)
		return func() ([]string, error) {
			if !sc.Scan() {
				if err := sc.Err(); err != nil {
					return nil, err
				}
				return nil, io.EOF
			}
			rec[0] = sc.Text()
			return rec, nil
		}, nil
	}
	r := csv.NewReader(f)
	r.ReuseRecord = true
	if _, err := r.Read(); err != nil {
		return nil, err
	}
	return r.Read, nil
}

// dropSecondaryIndexes drops, in the database at dbURL, every index of
// tables that is neither a primary key nor unique.
func dropSecondaryIndexes(ctx context.Context, dbURL string, tables []string) error {
	conn, err := pgx.Connect(ctx, dbURL)
	if err != nil {
		return err
	}
	defer conn.Close(ctx)
	rows, err := conn.Query(ctx, `SELECT indexrelid::regclass::text FROM pg_index
		WHERE indrelid = ANY($1::regclass[]) AND NOT indisunique AND NOT indisprimary`, tables)
	if err != nil {
		return err
	}
	names, err := pgx.CollectRows(rows, pgx.RowTo[string])
	if err != nil {
		return err
	}
	for _, n := range names {
		if _, err := conn.Exec(ctx, "DROP INDEX "+pgx.Identifier{n}.Sanitize()); err != nil {
			return err
		}
	}
	return nil
}

// pgFloor dumps the tables the import filled in database from (binary COPY
// TO, into files under prefix) and times, in database to (migrated, empty),
// one transaction that COPYs them back (binary COPY FROM): the same rows
// into the same indexed tables, the physical floor of an import.
func pgFloor(ctx context.Context, from, to string, tables []string, prefix string, server func() time.Duration) (result, error) {
	src, err := pgx.Connect(ctx, from)
	if err != nil {
		return result{}, err
	}
	defer src.Close(ctx)
	files := make([]string, len(tables))
	for i, t := range tables {
		files[i] = prefix + "." + t
		f, err := os.Create(files[i])
		if err != nil {
			return result{}, err
		}
		defer os.Remove(files[i])
		_, err = src.PgConn().CopyTo(ctx, f, "COPY "+t+" TO STDOUT (FORMAT binary)")
		if cerr := f.Close(); err == nil {
			err = cerr
		}
		if err != nil {
			return result{}, err
		}
	}
	dst, err := pgx.Connect(ctx, to)
	if err != nil {
		return result{}, err
	}
	defer dst.Close(ctx)
	s0, self0 := server(), selfCPU()
	start := time.Now()
	tx, err := dst.Begin(ctx)
	if err != nil {
		return result{}, err
	}
	defer tx.Rollback(ctx)
	for i, t := range tables {
		f, err := os.Open(files[i])
		if err != nil {
			return result{}, err
		}
		_, err = tx.Conn().PgConn().CopyFrom(ctx, f, "COPY "+t+" FROM STDIN (FORMAT binary)")
		f.Close()
		if err != nil {
			return result{}, err
		}
	}
	if err := tx.Commit(ctx); err != nil {
		return result{}, err
	}
	return result{wall: time.Since(start), client: selfCPU() - self0, server: server() - s0}, nil
}

// sqliteFloor times, in the migrated, empty database at to, one
// transaction that writes the rows of tables stored in the database at from
// into the same indexed tables with the engine's own INSERT ... SELECT (no
// driver between the rows and the engine): the physical floor of an import
// on SQLite. Generated columns are left to the engine.
func sqliteFloor(ctx context.Context, from, to string, tables []string) (result, error) {
	db, err := sql.Open("sqlite", "file:"+to+"?"+storePragmas().Encode())
	if err != nil {
		return result{}, err
	}
	defer db.Close()
	db.SetMaxOpenConns(1)
	if _, err := db.ExecContext(ctx, "ATTACH DATABASE ? AS src", from); err != nil {
		return result{}, err
	}
	stmts := make([]string, len(tables))
	for i, t := range tables {
		cols, err := tableColumns(ctx, db, t)
		if err != nil {
			return result{}, err
		}
		list := strings.Join(cols, ", ")
		stmts[i] = "INSERT INTO main." + t + " (" + list + ") SELECT " + list + " FROM src." + t
	}
	self0 := selfCPU()
	start := time.Now()
	tx, err := db.BeginTx(ctx, nil)
	if err != nil {
		return result{}, err
	}
	defer tx.Rollback()
	for _, q := range stmts {
		if _, err := tx.ExecContext(ctx, q); err != nil {
			return result{}, err
		}
	}
	if err := tx.Commit(); err != nil {
		return result{}, err
	}
	return result{wall: time.Since(start), client: selfCPU() - self0}, nil
}

// storePragmas are the connection settings of the SQLite store (WAL,
// synchronous FULL, foreign keys, immediate write transactions).
func storePragmas() url.Values {
	q := url.Values{}
	for _, p := range []string{"busy_timeout(10000)", "journal_mode(WAL)", "foreign_keys(1)", "synchronous(FULL)"} {
		q.Add("_pragma", p)
	}
	q.Set("_txlock", "immediate")
	return q
}

// sqliteInsert times a plain prepared INSERT of every row of the file into
// an unindexed text table, in one transaction, with the pragmas of the
// SQLite store (WAL, synchronous FULL).
func sqliteInsert(ctx context.Context, path, file string, lines bool) (time.Duration, error) {
	cols, err := columns(file, lines)
	if err != nil {
		return 0, err
	}
	db, err := sql.Open("sqlite", "file:"+path+"?"+storePragmas().Encode())
	if err != nil {
		return 0, err
	}
	defer db.Close()
	db.SetMaxOpenConns(1)
	if _, err := db.ExecContext(ctx, textTable("insert_baseline", cols)); err != nil {
		return 0, err
	}
	f, err := os.Open(file)
	if err != nil {
		return 0, err
	}
	defer f.Close()
	start := time.Now()
	next, err := records(f, lines)
	if err != nil {
		return 0, err
	}
	tx, err := db.BeginTx(ctx, nil)
	if err != nil {
		return 0, err
	}
	defer tx.Rollback()
	st, err := tx.PrepareContext(ctx, "INSERT INTO insert_baseline VALUES ("+strings.TrimSuffix(strings.Repeat("?,", cols), ",")+")")
	if err != nil {
		return 0, err
	}
	defer st.Close()
	args := make([]any, cols)
	for {
		rec, err := next()
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			return 0, err
		}
		for i := range args {
			args[i] = rec[i]
		}
		if _, err := st.ExecContext(ctx, args...); err != nil {
			return 0, err
		}
	}
	if err := tx.Commit(); err != nil {
		return 0, err
	}
	return time.Since(start), nil
}
