package main

import (
	"context"
	"fmt"
	"os"
	"strconv"
	"strings"
	"syscall"
	"time"

	"github.com/jackc/pgx/v5"
)

// cost is what one contender took: wall time, this process's CPU time and
// the CPU time of its PostgreSQL backends (server < 0 when unknown).
type cost struct{ wall, client, server time.Duration }

func (c cost) cpu() time.Duration { return c.client + max(c.server, 0) }

func (c cost) String() string {
	srv := "?"
	if c.server >= 0 {
		srv = fmt.Sprintf("%.2f", c.server.Seconds())
	}
	return fmt.Sprintf("%.2fs (cpu %.2f+%s)", c.wall.Seconds(), c.client.Seconds(), srv)
}

// ratio is c over d, in wall or CPU time.
func (c cost) ratio(d cost, cpu bool) float64 {
	if cpu {
		return c.cpu().Seconds() / d.cpu().Seconds()
	}
	return c.wall.Seconds() / d.wall.Seconds()
}

// meter measures contenders: their backends are those connected with the
// application name app, their CPU time read from /proc/<pid>/stat.
type meter struct {
	admin *pgx.Conn
	app   string
	tick  float64 // seconds per clock tick
}

func newMeter(admin *pgx.Conn, app string) *meter { return &meter{admin: admin, app: app, tick: 0.01} }

func (m *meter) measure(ctx context.Context, fn func() error) (cost, error) {
	b0, ok0 := m.backends(ctx)
	r0 := rusage()
	t0 := time.Now()
	err := fn()
	wall := time.Since(t0)
	r1 := rusage()
	b1, ok1 := m.backends(ctx)
	c := cost{wall: wall, client: r1 - r0, server: -1}
	if ok0 && ok1 {
		var srv time.Duration
		for pid, t := range b1 {
			srv += t - b0[pid] // a backend started during fn counts from 0
		}
		c.server = srv
	}
	return c, err
}

// backends returns the CPU time of each backend of the bench so far; ok is
// false when it cannot be read (a server on another machine).
func (m *meter) backends(ctx context.Context) (map[int]time.Duration, bool) {
	rows, err := m.admin.Query(ctx, `SELECT pid FROM pg_stat_activity WHERE application_name = $1`, m.app)
	if err != nil {
		return nil, false
	}
	pids, err := pgx.CollectRows(rows, pgx.RowTo[int32])
	if err != nil {
		return nil, false
	}
	out := map[int]time.Duration{}
	for _, pid := range pids {
		b, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
		if err != nil {
			return nil, false
		}
		// Fields after the command's closing parenthesis; utime and
		// stime are the 14th and 15th of the whole line.
		f := strings.Fields(string(b[strings.LastIndexByte(string(b), ')')+1:]))
		if len(f) < 13 {
			return nil, false
		}
		ut, err1 := strconv.ParseInt(f[11], 10, 64)
		st, err2 := strconv.ParseInt(f[12], 10, 64)
		if err1 != nil || err2 != nil {
			return nil, false
		}
		out[int(pid)] = time.Duration(float64(ut+st) * m.tick * float64(time.Second))
	}
	return out, true
}

func rusage() time.Duration {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		return 0
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}
