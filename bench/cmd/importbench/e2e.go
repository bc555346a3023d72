package main

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/reconcilehq/reconcile/bench/benchsql"
)

// e2e times, on PostgreSQL, the way from files to findings: import intents
// and import the M-Pesa statement (n lines each) into a fresh database,
// then `reconcile run --dry-run` over the generated month, beside the
// baseline COPY of both files into unindexed text tables plus the
// hand-written SQL join that computes the findings' counts (timed on the
// imported books).
func e2e(ctx context.Context, c config) error {
	intents, statement := filepath.Join(c.dir, "e2e-intents.csv"), filepath.Join(c.dir, "e2e-mpesa.csv")
	for name, file := range map[string]string{"intents": intents, "mpesa": statement} {
		f, _ := lookup(name)
		if err := generate(f, file, c.n); err != nil {
			return err
		}
		defer os.Remove(file)
	}
	u, err := freshDatabase(ctx, c.pgURL, "importbench_e2e")
	if err != nil {
		return err
	}
	if _, err := reconcile(ctx, c.bin, u, "migrate"); err != nil {
		return err
	}
	server := func() time.Duration { return serverCPU(c.pgData) }
	var base result
	for i, file := range []string{intents, statement} {
		s0, self0 := server(), selfCPU()
		wall, err := pgCopy(ctx, u, file, fmt.Sprintf("copy_baseline_%d", i), false)
		if err != nil {
			return err
		}
		base.wall += wall
		base.client += selfCPU() - self0
		base.server += server() - s0
	}
	var total result
	steps := []struct {
		name string
		args []string
	}{
		{"intents", []string{"import", "intents", intents}},
		{"mpesa", []string{"import", "statement", "--provider", "mpesa", statement}},
		{"run", []string{"run", "--provider", "mpesa", "--from", epoch.AddDate(0, 0, -1).Format(time.RFC3339),
			"--to", epoch.AddDate(0, 1, 2).Format(time.RFC3339), "--dry-run"}},
	}
	for _, st := range steps {
		r, err := timed(ctx, c.bin, u, server, st.args...)
		if err != nil {
			return err
		}
		fmt.Printf("%-8s %-7s %8d %-9s %8.2f %8.2f %8.2f %8.2f %9s %8s %9s %7.0f\n", "postgres", "e2e", c.n, st.name,
			r.wall.Seconds(), r.client.Seconds(), r.server.Seconds(), r.cpu().Seconds(), "", "", "", r.rss)
		total.wall += r.wall
		total.client += r.client
		total.server += r.server
		total.rss = max(total.rss, r.rss)
	}
	conn, err := pgx.Connect(ctx, u)
	if err != nil {
		return err
	}
	defer conn.Close(ctx)
	s0, self0 := server(), selfCPU()
	start := time.Now()
	rows, err := conn.Query(ctx, benchsql.FindingsSQL, "mpesa", epoch.AddDate(0, 0, -1), epoch.AddDate(0, 1, 2), time.Now(),
		time.Hour, 2*time.Hour)
	if err != nil {
		return err
	}
	rows.Close()
	if err := rows.Err(); err != nil {
		return err
	}
	join := result{wall: time.Since(start), client: selfCPU() - self0, server: server() - s0}
	base.wall += join.wall
	base.client += join.client
	base.server += join.server
	for _, r := range []struct {
		step string
		r    result
	}{{"sql_join", join}, {"baseline", base}, {"total", total}} {
		fmt.Printf("%-8s %-7s %8d %-9s %8.2f %8.2f %8.2f %8.2f %8.2fx %8.2fx %9s %7s\n", "postgres", "e2e", c.n, r.step,
			r.r.wall.Seconds(), r.r.client.Seconds(), r.r.server.Seconds(), r.r.cpu().Seconds(),
			r.r.wall.Seconds()/base.wall.Seconds(), r.r.cpu().Seconds()/max(base.cpu().Seconds(), 0.001), "", "")
	}
	return nil
}
