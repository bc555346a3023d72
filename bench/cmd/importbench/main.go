// Command importbench generates N-line files in the formats reconcile
// imports (M-Pesa portal statement, Stripe itemized report, intents CSV) and,
// on PostgreSQL and SQLite, times the real binary's import of each (into a
// fresh database) and a re-import of the same file, beside a baseline in the
// same run: on PostgreSQL COPY ... FROM of the same CSV into an unindexed
// text table, on SQLite a plain prepared INSERT of the same rows in one
// transaction through the same driver. It prints the times, the ratios and
// each import's peak RSS (from wait4's rusage).
package main

import (
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
	bin     string
	pgURL   string
	dir     string
	formats []string
	engines []string
	pgData  string
}

func run(ctx context.Context) error {
	var c config
	var formatList, engineList string
	flag.IntVar(&c.n, "n", 1000000, "lines per file")
	flag.StringVar(&c.bin, "bin", "", "the reconcile binary (required)")
	flag.StringVar(&c.pgURL, "pg", os.Getenv("BENCH_DATABASE_URL"), "PostgreSQL server URL; a database is created per case")
	flag.StringVar(&c.pgData, "pgdata", "", "the PostgreSQL server's data directory, to count its CPU time when it runs here")
	flag.StringVar(&c.dir, "dir", "", "where files and SQLite databases go (default: a temporary directory, removed)")
	flag.StringVar(&formatList, "formats", "mpesa,stripe,intents", "formats to time")
	flag.StringVar(&engineList, "engines", "postgres,sqlite", "engines to time")
	genOnly := flag.Bool("generate", false, "only write the files into -dir (FORMAT.csv) and exit")
	flag.Parse()
	c.formats, c.engines = strings.Split(formatList, ","), strings.Split(engineList, ",")
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
	fmt.Println("wall seconds, CPU seconds (client + PostgreSQL server when it runs here) in brackets; ratios to the baseline")
	fmt.Printf("%-8s %-7s %8s %15s %15s %15s %11s %11s %7s %7s\n", "engine", "format", "lines", "import_s[cpu]", "reimport_s[cpu]",
		"baseline_s[cpu]", "import/b", "reimport/b", "rss_MiB", "re_rss")
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

func bench(ctx context.Context, c config, f format, engine, file string) error {
	var (
		dbURL    string
		baseline func() (time.Duration, error)
		server   = func() time.Duration { return 0 }
	)
	switch engine {
	case "postgres":
		if c.pgURL == "" {
			return errors.New("no PostgreSQL URL (-pg or BENCH_DATABASE_URL)")
		}
		name := "importbench_" + f.name
		u, err := freshDatabase(ctx, c.pgURL, name)
		if err != nil {
			return err
		}
		dbURL = u
		baseline = func() (time.Duration, error) { return pgCopy(ctx, u, file) }
		server = func() time.Duration { return serverCPU(c.pgData) }
	case "sqlite":
		path := filepath.Join(c.dir, f.name+".db")
		for _, suffix := range []string{"", "-wal", "-shm", ".base", ".base-wal", ".base-shm"} {
			_ = os.Remove(path + suffix)
		}
		dbURL = "sqlite:" + path
		baseline = func() (time.Duration, error) { return sqliteInsert(ctx, path+".base", file) }
	default:
		return fmt.Errorf("unknown engine %q", engine)
	}
	if _, err := reconcile(ctx, c.bin, dbURL, "migrate"); err != nil {
		return err
	}
	s0, self0 := server(), selfCPU()
	baseWall, err := baseline()
	if err != nil {
		return fmt.Errorf("baseline: %w", err)
	}
	base := result{wall: baseWall, cpu: server() - s0 + selfCPU() - self0}
	first, err := timed(ctx, c.bin, dbURL, server, f.args(file)...)
	if err != nil {
		return err
	}
	again, err := timed(ctx, c.bin, dbURL, server, f.args(file)...)
	if err != nil {
		return err
	}
	fmt.Printf("%-8s %-7s %8d %15s %15s %15s %11s %11s %7.0f %7.0f\n", engine, f.name, c.n, first, again, base,
		ratio(first, base), ratio(again, base), first.rss, again.rss)
	return nil
}

// result is one timed step.
type result struct {
	wall, cpu time.Duration
	rss       float64 // MiB
}

func (r result) String() string {
	return fmt.Sprintf("%.2f[%.2f]", r.wall.Seconds(), r.cpu.Seconds())
}

func ratio(a, b result) string {
	return fmt.Sprintf("%.2f[%.2f]", a.wall.Seconds()/b.wall.Seconds(), a.cpu.Seconds()/max(b.cpu.Seconds(), 0.001))
}

// timed runs the binary and measures it, with the server's CPU time.
func timed(ctx context.Context, bin, dbURL string, server func() time.Duration, args ...string) (result, error) {
	s0 := server()
	r, err := reconcile(ctx, bin, dbURL, args...)
	r.cpu += server() - s0
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
		r.cpu = time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
	}
	return r, nil
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
// table, committed.
func pgCopy(ctx context.Context, dbURL, file string) (time.Duration, error) {
	cols, err := header(file)
	if err != nil {
		return 0, err
	}
	conn, err := pgx.Connect(ctx, dbURL)
	if err != nil {
		return 0, err
	}
	defer conn.Close(ctx)
	if _, err := conn.Exec(ctx, textTable("copy_baseline", cols)); err != nil {
		return 0, err
	}
	f, err := os.Open(file)
	if err != nil {
		return 0, err
	}
	defer f.Close()
	start := time.Now()
	if _, err := conn.PgConn().CopyFrom(ctx, f, "COPY copy_baseline FROM STDIN (FORMAT csv, HEADER true)"); err != nil {
		return 0, err
	}
	return time.Since(start), nil
}

// sqliteInsert times a plain prepared INSERT of every row of the file into
// an unindexed text table, in one transaction, with the pragmas of the
// SQLite store (WAL, synchronous FULL).
func sqliteInsert(ctx context.Context, path, file string) (time.Duration, error) {
	cols, err := header(file)
	if err != nil {
		return 0, err
	}
	q := url.Values{}
	for _, p := range []string{"busy_timeout(10000)", "journal_mode(WAL)", "foreign_keys(1)", "synchronous(FULL)"} {
		q.Add("_pragma", p)
	}
	q.Set("_txlock", "immediate")
	db, err := sql.Open("sqlite", "file:"+path+"?"+q.Encode())
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
	r := csv.NewReader(f)
	r.ReuseRecord = true
	if _, err := r.Read(); err != nil {
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
		rec, err := r.Read()
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
