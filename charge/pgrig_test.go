package charge_test

import (
	"bytes"
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"testing"
	"time"

	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/reconcilehq/reconcile/internal/database"
	"github.com/reconcilehq/reconcile/internal/poll"
)

// probe reads the ledger's tables directly, to see what a killed worker left
// behind. Its pool drops connections a database restart broke; callers that
// may run across a restart use the Err forms, which poll retries.
type probe struct {
	t    *testing.T
	pool *pgxpool.Pool
}

func newProbe(t *testing.T, url string) *probe {
	t.Helper()
	pool, err := pgxpool.New(context.Background(), url)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(pool.Close)
	return &probe{t: t, pool: pool}
}

func (p *probe) countErr(query string, args ...any) (int, error) {
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	var n int
	err := p.pool.QueryRow(ctx, query, args...).Scan(&n)
	return n, err
}

// count is countErr retried for up to a minute (a restart in progress).
func (p *probe) count(query string, args ...any) int {
	p.t.Helper()
	var n int
	poll.WaitErr(p.t, time.Minute, "a count from the database", func() (bool, error) {
		var err error
		n, err = p.countErr(query, args...)
		return err == nil, err
	})
	return n
}

func (p *probe) keys(query string, args ...any) ([]string, error) {
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	rows, err := p.pool.Query(ctx, query, args...)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	var out []string
	for rows.Next() {
		var k string
		if err := rows.Scan(&k); err != nil {
			return nil, err
		}
		out = append(out, k)
	}
	return out, rows.Err()
}

// throwawayPG is a PostgreSQL server of the test's own (scripts/pgtmp.sh),
// with PostgreSQL's durability settings, which it may restart: never restart
// the shared server others test on.
type throwawayPG struct {
	dir, bin, url string
}

var pgtmpExport = regexp.MustCompile(`PGTMP_DIR='([^']*)' PGBIN='([^']*)' PGTMP_URL='([^']*)'`)

func startThrowawayPG(t *testing.T) *throwawayPG {
	t.Helper()
	script, err := filepath.Abs(filepath.Join("..", "scripts", "pgtmp.sh"))
	if err != nil {
		t.Fatal(err)
	}
	var stderr bytes.Buffer
	// Durable: with synchronous_commit off, a crash of the server loses
	// commits it had acknowledged, and no worker can be safe against that.
	cmd := exec.Command(script, "start", "durable")
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("start a throwaway PostgreSQL: %v\n%s", err, stderr.String())
	}
	m := pgtmpExport.FindStringSubmatch(string(out))
	if m == nil {
		t.Fatalf("pgtmp.sh printed %q", out)
	}
	pg := &throwawayPG{dir: m[1], bin: m[2], url: m[3]}
	t.Cleanup(func() {
		if out, err := exec.Command(script, "stop", pg.dir).CombinedOutput(); err != nil {
			t.Errorf("stop the throwaway PostgreSQL: %v\n%s", err, out)
		}
	})
	return pg
}

// restart restarts the server in immediate mode: a crash, with recovery
// from the write-ahead log on the way up. It returns once it accepts
// connections again.
func (pg *throwawayPG) restart(t *testing.T) {
	t.Helper()
	args := []string{filepath.Join(pg.bin, "pg_ctl"), "-D", filepath.Join(pg.dir, "data"), "-l", filepath.Join(pg.dir, "server.log"),
		"-w", "-t", "60", "-m", "immediate", "restart"}
	if os.Geteuid() == 0 {
		// The server runs as the postgres user (initdb refuses root).
		args = append([]string{"runuser", "-u", "postgres", "--"}, args...)
	}
	if out, err := exec.Command(args[0], args[1:]...).CombinedOutput(); err != nil {
		t.Fatalf("pg_ctl restart -m immediate: %v\n%s", err, out)
	}
}

// migrateURL migrates the database at url (a throwaway server's).
func migrateURL(t *testing.T, url string) {
	t.Helper()
	s, err := database.Open(context.Background(), url, database.Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	if _, err := database.Migrate(context.Background(), s); err != nil {
		t.Fatalf("migrate: %v", err)
	}
}
