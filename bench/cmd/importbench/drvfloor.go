package main

import (
	"context"
	"database/sql"
	"fmt"
	"os"
	"os/exec"
	"strings"
	"time"
)

// drvChunk is the rows per statement of the driver floor, as many as the
// store's bulk inserts bind.
const drvChunk = 1024

// sqliteDriverFloor times, in the migrated, empty database at to, one
// transaction that writes the rows of tables stored in the database at from
// into the same indexed tables through the driver, the way a program hands
// rows to SQLite: multi-row INSERT OR FAIL statements of drvChunk rows,
// prepared once per shape, each value bound, except that a column whose
// value is the same in every row of a statement is bound once (as the store
// does). The rows are read into memory before the clock starts. On SQLite
// the engine-internal floor (sqliteFloor) binds nothing; this floor pays
// what any program pays to give the engine its values (the driver copies
// each text into memory of its own, binds it and clears it after the
// statement): the floor of an import through the driver.
func sqliteDriverFloor(ctx context.Context, from, to string, tables []string) (result, error) {
	src, err := sql.Open("sqlite", "file:"+from+"?mode=ro")
	if err != nil {
		return result{}, err
	}
	defer src.Close()
	db, err := sql.Open("sqlite", "file:"+to+"?"+storePragmas().Encode())
	if err != nil {
		return result{}, err
	}
	defer db.Close()
	db.SetMaxOpenConns(1)
	cols := make([][]string, len(tables))
	data := make([][][]any, len(tables))
	for i, t := range tables {
		if cols[i], err = tableColumns(ctx, db, t); err != nil {
			return result{}, err
		}
		if data[i], err = readRows(ctx, src, t, cols[i]); err != nil {
			return result{}, fmt.Errorf("%s: %w", t, err)
		}
	}
	self0 := selfCPU()
	start := time.Now()
	tx, err := db.BeginTx(ctx, nil)
	if err != nil {
		return result{}, err
	}
	defer tx.Rollback()
	w := &drvWriter{tx: tx, stmts: map[string]*sql.Stmt{}}
	for i, t := range tables {
		for rows := data[i]; len(rows) > 0; {
			n := min(drvChunk, len(rows))
			if err := w.write(ctx, t, cols[i], rows[:n]); err != nil {
				return result{}, fmt.Errorf("%s: %w", t, err)
			}
			rows = rows[n:]
		}
	}
	if err := tx.Commit(); err != nil {
		return result{}, err
	}
	return result{wall: time.Since(start), client: selfCPU() - self0}, nil
}

// driverFloorApart times sqliteDriverFloor in a process of its own (this
// program again, with -drvfloor): the rows it holds in memory would
// otherwise count in the peak memory of the next import timed, which
// shares this process's memory until it starts the binary.
func driverFloorApart(ctx context.Context, from, to string, tables []string) (result, error) {
	self, err := os.Executable()
	if err != nil {
		return result{}, err
	}
	arg := strings.Join(append([]string{from, to}, tables...), ",")
	out, err := exec.CommandContext(ctx, self, "-drvfloor", arg).Output()
	if err != nil {
		if ee, ok := err.(*exec.ExitError); ok {
			return result{}, fmt.Errorf("%w: %s", err, ee.Stderr)
		}
		return result{}, err
	}
	var wall, client int64
	if _, err := fmt.Sscan(string(out), &wall, &client); err != nil {
		return result{}, fmt.Errorf("driver floor printed %q: %w", out, err)
	}
	return result{wall: time.Duration(wall), client: time.Duration(client)}, nil
}

// printDriverFloor times the driver floor of arg (FROM,TO,TABLE...) and
// prints its wall and CPU nanoseconds.
func printDriverFloor(ctx context.Context, arg string) error {
	parts := strings.Split(arg, ",")
	if len(parts) < 3 {
		return fmt.Errorf("-drvfloor %q: want FROM,TO,TABLE...", arg)
	}
	r, err := sqliteDriverFloor(ctx, parts[0], parts[1], parts[2:])
	if err != nil {
		return err
	}
	fmt.Println(int64(r.wall), int64(r.client))
	return nil
}

// tableColumns lists the columns of table t that take values (not the
// generated ones), in order.
func tableColumns(ctx context.Context, db *sql.DB, t string) ([]string, error) {
	rows, err := db.QueryContext(ctx, "SELECT name FROM pragma_table_xinfo(?) WHERE hidden = 0 ORDER BY cid", t)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	var cols []string
	for rows.Next() {
		var c string
		if err := rows.Scan(&c); err != nil {
			return nil, err
		}
		cols = append(cols, c)
	}
	return cols, rows.Err()
}

// drvWriter writes chunks of rows in one transaction, with a prepared
// statement per table, row count and set of shared columns.
type drvWriter struct {
	tx    *sql.Tx
	stmts map[string]*sql.Stmt
	args  []any
}

// readRows reads table t's rows, in rowid order.
func readRows(ctx context.Context, src *sql.DB, t string, cols []string) ([][]any, error) {
	rows, err := src.QueryContext(ctx, "SELECT "+strings.Join(cols, ", ")+" FROM "+t+" ORDER BY rowid")
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	var out [][]any
	for rows.Next() {
		row := make([]any, len(cols))
		dest := make([]any, len(cols))
		for i := range row {
			dest[i] = &row[i]
		}
		if err := rows.Scan(dest...); err != nil {
			return nil, err
		}
		out = append(out, row)
	}
	return out, rows.Err()
}

// write inserts one chunk, binding once each column whose value every row
// shares.
func (w *drvWriter) write(ctx context.Context, t string, cols []string, rows [][]any) error {
	shared := make([]bool, len(cols))
	varying := 0
	for c := range cols {
		shared[c] = sameInEvery(rows, c)
		if !shared[c] {
			varying++
		}
	}
	if varying == 0 {
		shared[0], varying = false, 1
	}
	key := fmt.Sprintf("%s/%d/%v", t, len(rows), shared)
	st, ok := w.stmts[key]
	if !ok {
		var err error
		if st, err = w.tx.PrepareContext(ctx, drvInsertSQL(t, cols, shared, varying, len(rows))); err != nil {
			return err
		}
		w.stmts[key] = st
	}
	args := w.args[:0]
	for c := range cols {
		if shared[c] {
			args = append(args, rows[0][c])
		}
	}
	for _, r := range rows {
		for c := range cols {
			if !shared[c] {
				args = append(args, r[c])
			}
		}
	}
	w.args = args
	_, err := st.ExecContext(ctx, args...)
	return err
}

// sameInEvery reports whether column c holds one value in every row (texts,
// numbers and nulls compared; blobs never count as shared).
func sameInEvery(rows [][]any, c int) bool {
	first := rows[0][c]
	if _, blob := first.([]byte); blob {
		return false
	}
	for _, r := range rows[1:] {
		if _, blob := r[c].([]byte); blob || r[c] != first {
			return false
		}
	}
	return true
}

// drvInsertSQL is the INSERT of n rows into t: the shared columns are the
// first parameters, numbered, and each row binds the others.
func drvInsertSQL(t string, cols []string, shared []bool, varying, n int) string {
	var b strings.Builder
	fmt.Fprintf(&b, "INSERT OR FAIL INTO %s (%s) ", t, strings.Join(cols, ", "))
	nshared := len(cols) - varying
	row := "(" + strings.TrimSuffix(strings.Repeat("?,", varying), ",") + ")"
	if nshared == 0 {
		b.WriteString("VALUES ")
		b.WriteString(strings.TrimSuffix(strings.Repeat(row+",", n), ","))
		return b.String()
	}
	b.WriteString("SELECT ")
	p, v := 0, 0
	for c := range cols {
		if c > 0 {
			b.WriteString(", ")
		}
		if shared[c] {
			p++
			fmt.Fprintf(&b, "?%d", p)
		} else {
			v++
			fmt.Fprintf(&b, "column%d", v)
		}
	}
	b.WriteString(" FROM (VALUES ")
	b.WriteString(strings.TrimSuffix(strings.Repeat(row+",", n), ","))
	b.WriteString(")")
	return b.String()
}
