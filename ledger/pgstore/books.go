package pgstore

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgtype"
	"github.com/jackc/pgx/v5/pgxpool"
	"github.com/shopspring/decimal"

	"github.com/reconcilehq/reconcile/ledger/engine"
	"github.com/reconcilehq/reconcile/money"
)

// Raw access to the tables of the books (engine.Books), for moving,
// pruning and erasing them. The schema is the one of the search path's
// first schema, read from the catalog.

// Books returns raw access to the store's tables.
func (s *Store) Books() engine.Books { return books{pool: s.pool} }

type books struct{ pool *pgxpool.Pool }

// querier is what a transaction on one connection can do.
type querier interface {
	Query(ctx context.Context, sql string, args ...any) (pgx.Rows, error)
	QueryRow(ctx context.Context, sql string, args ...any) pgx.Row
}

func (b books) Tables(ctx context.Context) ([]engine.Table, error) {
	return tables(ctx, b.pool)
}

// tables reads the tables of the current schema: their columns, primary
// keys and the tables their foreign keys reference.
func tables(ctx context.Context, q querier) ([]engine.Table, error) {
	out, err := readColumns(ctx, q)
	if err != nil {
		return nil, err
	}
	byName := map[string]*engine.Table{}
	for i := range out {
		t := &out[i]
		byName[t.Name] = t
		// amount_minor is written by the store's writers from amount and
		// currency (migration 0012); Load computes it the same way.
		if _, ok := t.Column("amount"); ok {
			if _, ok := t.Column("currency"); ok {
				for j := range t.Columns {
					if t.Columns[j].Name == "amount_minor" {
						t.Columns[j].Derived = true
					}
				}
			}
		}
	}
	err = readTablePairs(ctx, q, "primary keys", byName, func(t *engine.Table, col string) { t.Key = append(t.Key, col) }, `
		SELECT c.relname, a.attname
		FROM pg_index i
		JOIN pg_class c ON c.oid = i.indrelid
		JOIN pg_namespace n ON n.oid = c.relnamespace
		CROSS JOIN LATERAL unnest(i.indkey) WITH ORDINALITY AS k(attnum, ord)
		JOIN pg_attribute a ON a.attrelid = c.oid AND a.attnum = k.attnum
		WHERE i.indisprimary AND n.nspname = current_schema()
		ORDER BY c.relname, k.ord`)
	if err != nil {
		return nil, err
	}
	err = readTablePairs(ctx, q, "foreign keys", byName, func(t *engine.Table, ref string) { t.References = append(t.References, ref) }, `
		SELECT DISTINCT c.relname, f.relname
		FROM pg_constraint co
		JOIN pg_class c ON c.oid = co.conrelid
		JOIN pg_class f ON f.oid = co.confrelid
		JOIN pg_namespace n ON n.oid = c.relnamespace
		WHERE co.contype = 'f' AND n.nspname = current_schema()
		ORDER BY 1, 2`)
	if err != nil {
		return nil, err
	}
	return out, nil
}

// readColumns reads the tables of the current schema with their columns,
// in order.
func readColumns(ctx context.Context, q querier) ([]engine.Table, error) {
	rows, err := q.Query(ctx, `
		SELECT c.relname, a.attname, lower(format_type(a.atttypid, a.atttypmod)), t.typtype = 'e',
			a.attnotnull, a.atthasdef, a.attgenerated <> '',
			a.attidentity <> '' OR pg_get_serial_sequence(format('%I.%I', n.nspname, c.relname), a.attname) IS NOT NULL
		FROM pg_class c
		JOIN pg_namespace n ON n.oid = c.relnamespace
		JOIN pg_attribute a ON a.attrelid = c.oid AND a.attnum > 0 AND NOT a.attisdropped
		JOIN pg_type t ON t.oid = a.atttypid
		WHERE n.nspname = current_schema() AND c.relkind IN ('r', 'p')
		ORDER BY c.relname, a.attnum`)
	if err != nil {
		return nil, fmt.Errorf("books: read the schema: %w", err)
	}
	var out []engine.Table
	for rows.Next() {
		var name string
		var c engine.Column
		if err := rows.Scan(&name, &c.Name, &c.Decl, &c.Enum, &c.NotNull, &c.HasDefault, &c.Generated, &c.Identity); err != nil {
			rows.Close()
			return nil, fmt.Errorf("books: read the schema: %w", err)
		}
		c.Type, c.Exact = pgType(c.Decl, c.Enum), true
		if len(out) == 0 || out[len(out)-1].Name != name {
			out = append(out, engine.Table{Name: name})
		}
		t := &out[len(out)-1]
		t.Columns = append(t.Columns, c)
	}
	rows.Close()
	if err := rows.Err(); err != nil {
		return nil, fmt.Errorf("books: read the schema: %w", err)
	}
	return out, nil
}

// readTablePairs runs sql, whose rows are (table, value), and adds each
// value to its table in byName; what names the pairs in errors.
func readTablePairs(ctx context.Context, q querier, what string, byName map[string]*engine.Table,
	add func(t *engine.Table, v string), sql string) error {
	rows, err := q.Query(ctx, sql)
	if err != nil {
		return fmt.Errorf("books: read the %s: %w", what, err)
	}
	for rows.Next() {
		var table, v string
		if err := rows.Scan(&table, &v); err != nil {
			rows.Close()
			return fmt.Errorf("books: read the %s: %w", what, err)
		}
		if t := byName[table]; t != nil {
			add(t, v)
		}
	}
	rows.Close()
	if err := rows.Err(); err != nil {
		return fmt.Errorf("books: read the %s: %w", what, err)
	}
	return nil
}

// pgType is the engine-neutral type of a column declared decl.
func pgType(decl string, enum bool) engine.Type {
	if enum {
		return engine.TypeText
	}
	if base, ok := strings.CutSuffix(decl, "[]"); ok {
		switch pgType(base, false) {
		case engine.TypeText:
			return engine.TypeTextList
		case engine.TypeJSON:
			return engine.TypeJSONList
		}
		return engine.TypeUnknown
	}
	switch {
	case decl == "boolean":
		return engine.TypeBool
	case decl == "smallint" || decl == "integer" || decl == "bigint":
		return engine.TypeInt
	case decl == "numeric" || strings.HasPrefix(decl, "numeric("):
		return engine.TypeDecimal
	case decl == "text" || decl == "name" || decl == "uuid" || decl == "citext" ||
		strings.HasPrefix(decl, "character"):
		return engine.TypeText
	case decl == "bytea":
		return engine.TypeBytes
	case strings.HasPrefix(decl, "timestamp"):
		return engine.TypeTime
	case decl == "date":
		return engine.TypeDate
	case decl == "json" || decl == "jsonb":
		return engine.TypeJSON
	case strings.HasPrefix(decl, "bit"):
		if n, ok := bitLen(decl); ok && n <= 63 {
			return engine.TypeBits
		}
	}
	return engine.TypeUnknown
}

// bitLen is n of "bit(n)" or "bit varying(n)".
func bitLen(decl string) (int, bool) {
	_, rest, ok := strings.Cut(decl, "(")
	if !ok {
		return 0, false
	}
	n, err := strconv.Atoi(strings.TrimSuffix(rest, ")"))
	return n, err == nil && n > 0
}

func (b books) Read(ctx context.Context, fn func(engine.Reader) error) error {
	tx, err := b.pool.BeginTx(ctx, pgx.TxOptions{IsoLevel: pgx.RepeatableRead, AccessMode: pgx.ReadOnly})
	if err != nil {
		return fmt.Errorf("books: begin reading: %w", err)
	}
	defer func() { _ = tx.Rollback(context.WithoutCancel(ctx)) }()
	return fn(&booksTx{q: tx})
}

func (b books) Write(ctx context.Context, fn func(engine.Writer) error) error {
	conn, err := b.pool.Acquire(ctx)
	if err != nil {
		return fmt.Errorf("books: begin writing: %w", err)
	}
	defer conn.Release()
	return pgx.BeginFunc(ctx, conn, func(tx pgx.Tx) error {
		return fn(&booksTx{q: tx, tx: tx, conn: conn.Conn()})
	})
}

// booksTx reads, and when tx is set writes, in one transaction.
type booksTx struct {
	q    querier
	tx   pgx.Tx
	conn *pgx.Conn
	// enums are the enum types registered on conn.
	enums map[string]bool
}

func (r *booksTx) Count(ctx context.Context, table string) (int64, error) {
	var n int64
	err := r.q.QueryRow(ctx, "SELECT count(*) FROM "+ident(table)).Scan(&n)
	if err != nil {
		return 0, fmt.Errorf("books: count %s: %w", table, err)
	}
	return n, nil
}

// selectExpr reads column c as c.Type.
func selectExpr(c engine.Column) (string, error) {
	q := ident(c.Name)
	switch c.Type {
	case engine.TypeText, engine.TypeDecimal, engine.TypeJSON:
		return q + "::text", nil
	case engine.TypeBytes, engine.TypeBool, engine.TypeTime:
		return q, nil
	case engine.TypeInt, engine.TypeBits:
		return q + "::bigint", nil
	case engine.TypeTextList, engine.TypeJSONList:
		return "to_json(" + q + ")::text", nil
	case engine.TypeDate:
		return "to_char(" + q + ", 'YYYY-MM-DD')", nil
	}
	return "", fmt.Errorf("column %s: type %s (%s) cannot be read", c.Name, c.Decl, c.Type)
}

// textExpr is column c as text, for matching.
func textExpr(c engine.Column) string {
	if c.Type == engine.TypeBytes {
		return "encode(" + ident(c.Name) + ", 'escape')"
	}
	return ident(c.Name) + "::text"
}

// scanQuery is the query of s, its arguments and the number of values in
// each row. The query is empty when s can match nothing (a match without
// needles or columns).
func scanQuery(s engine.Scan) (sql string, args []any, width int, err error) {
	exprs := make([]string, len(s.Cols))
	for i, c := range s.Cols {
		e, err := selectExpr(c)
		if err != nil {
			return "", nil, 0, fmt.Errorf("books: scan %s: %w", s.Table, err)
		}
		exprs[i] = e
	}
	for _, c := range s.Lengths {
		exprs = append(exprs, "coalesce(octet_length("+ident(c.Name)+"), 0)::bigint")
	}
	var where []string
	arg := func(v any) string {
		args = append(args, v)
		return "$" + strconv.Itoa(len(args))
	}
	from := ident(s.Table)
	if m := s.Match; m != nil {
		if s.Limit > 0 {
			return "", nil, 0, fmt.Errorf("books: scan %s: a match with a limit", s.Table)
		}
		if len(m.Needles) == 0 || len(m.Cols) == 0 {
			return "", nil, 0, nil
		}
		// The columns' text, lower-cased once per row (OFFSET 0 keeps the
		// planner from computing it again for every needle), separated by
		// a character no needle holds.
		texts := make([]string, len(m.Cols))
		for i, c := range m.Cols {
			texts[i] = textExpr(c)
		}
		from += " CROSS JOIN LATERAL (SELECT lower(concat_ws(chr(31), " + strings.Join(texts, ", ") + ")) AS books_hay OFFSET 0) AS books_match"
		var or []string
		for _, n := range m.Needles {
			or = append(or, "strpos(books_match.books_hay, "+arg(strings.ToLower(n))+") > 0")
		}
		where = append(where, "("+strings.Join(or, " OR ")+")")
	}
	if in := s.In; in != nil {
		vals := make([]string, len(in.Values))
		for i, v := range in.Values {
			vals[i] = fmt.Sprint(v)
		}
		where = append(where, ident(in.Col.Name)+"::text = ANY("+arg(vals)+"::text[])")
	}
	var order string
	if len(s.Key) > 0 {
		keys := make([]string, len(s.Key))
		for i, k := range s.Key {
			keys[i] = ident(k.Name)
		}
		order = " ORDER BY " + strings.Join(keys, ", ")
		if s.After != nil {
			ps := make([]string, len(s.After))
			for i, v := range s.After {
				ps[i] = arg(v)
			}
			where = append(where, "("+strings.Join(keys, ", ")+") > ("+strings.Join(ps, ", ")+")")
		}
	}
	sql = "SELECT " + strings.Join(exprs, ", ") + " FROM " + from
	if len(where) > 0 {
		sql += " WHERE " + strings.Join(where, " AND ")
	}
	sql += order
	if s.Limit > 0 {
		sql += " LIMIT " + strconv.Itoa(s.Limit)
	}
	return sql, args, len(exprs), nil
}

// Scan reads the rows s asks for, in key order, passing each to fn. The
// slice passed is reused from row to row.
func (r *booksTx) Scan(ctx context.Context, s engine.Scan, fn func([]any) error) error {
	sql, args, width, err := scanQuery(s)
	if err != nil || sql == "" {
		return err
	}
	rows, err := r.q.Query(ctx, sql, args...)
	if err != nil {
		return fmt.Errorf("books: scan %s: %w", s.Table, err)
	}
	defer rows.Close()
	row := make([]any, width)
	for rows.Next() {
		vals, err := rows.Values()
		if err != nil {
			return fmt.Errorf("books: scan %s: %w", s.Table, err)
		}
		for i, v := range vals {
			if t, ok := v.(time.Time); ok {
				v = t.UTC()
			}
			row[i] = v
		}
		if err := fn(row); err != nil {
			return err
		}
	}
	if err := rows.Err(); err != nil {
		return fmt.Errorf("books: scan %s: %w", s.Table, err)
	}
	return nil
}

// encoder turns a value of one column, in its engine-neutral form, into
// what pgx writes into the column.
type encoder func(v any) (any, error)

// encoderOf is the encoder of column c's type.
func encoderOf(c engine.Column) (encoder, error) {
	switch c.Type {
	case engine.TypeText, engine.TypeJSON:
		return func(v any) (any, error) { return asString(v) }, nil
	case engine.TypeBytes:
		return func(v any) (any, error) {
			switch x := v.(type) {
			case []byte:
				if x == nil {
					return []byte{}, nil
				}
				return x, nil
			case string:
				return []byte(x), nil
			}
			return nil, fmt.Errorf("%T is not bytes", v)
		}, nil
	case engine.TypeInt:
		return func(v any) (any, error) { return asInt(v) }, nil
	case engine.TypeBool:
		return func(v any) (any, error) {
			switch x := v.(type) {
			case bool:
				return x, nil
			case int64:
				return x != 0, nil
			}
			return nil, fmt.Errorf("%T is not a boolean", v)
		}, nil
	case engine.TypeDecimal:
		return func(v any) (any, error) {
			s, err := asString(v)
			if err != nil {
				return nil, err
			}
			d, err := decimal.NewFromString(s)
			if err != nil {
				return nil, fmt.Errorf("amount %q: %w", s, err)
			}
			return d, nil
		}, nil
	case engine.TypeTime:
		return func(v any) (any, error) {
			t, ok := v.(time.Time)
			if !ok {
				return nil, fmt.Errorf("%T is not a time", v)
			}
			return t, nil
		}, nil
	case engine.TypeDate:
		return func(v any) (any, error) {
			s, err := asString(v)
			if err != nil {
				return nil, err
			}
			d, err := time.Parse(time.DateOnly, s)
			if err != nil {
				return nil, fmt.Errorf("date %q: want YYYY-MM-DD", s)
			}
			return d, nil
		}, nil
	case engine.TypeTextList, engine.TypeJSONList:
		return listEncoder(c.Type), nil
	case engine.TypeBits:
		n, ok := bitLen(c.Decl)
		if !ok {
			return nil, fmt.Errorf("column %s: bit string %s has no length", c.Name, c.Decl)
		}
		return bitsEncoder(c.Decl, n), nil
	}
	return nil, fmt.Errorf("column %s: type %s (%s) cannot be written", c.Name, c.Decl, c.Type)
}

// listEncoder writes a JSON array as an array column: for TypeTextList an
// array of strings as text[] (empty, never NULL, for null), for
// TypeJSONList the array of its elements' JSON text.
func listEncoder(typ engine.Type) encoder {
	if typ == engine.TypeTextList {
		return func(v any) (any, error) {
			s, err := asString(v)
			if err != nil {
				return nil, err
			}
			var out []string
			if err := json.Unmarshal([]byte(s), &out); err != nil {
				return nil, fmt.Errorf("list %q: %w", s, err)
			}
			if out == nil {
				out = []string{}
			}
			return out, nil
		}
	}
	return func(v any) (any, error) {
		s, err := asString(v)
		if err != nil {
			return nil, err
		}
		var raw []json.RawMessage
		if err := json.Unmarshal([]byte(s), &raw); err != nil {
			return nil, fmt.Errorf("list %q: %w", s, err)
		}
		out := make([]string, len(raw))
		for i, r := range raw {
			out[i] = string(r)
		}
		return out, nil
	}
}

// bitsEncoder writes an integer as a bit string of n bits declared decl.
func bitsEncoder(decl string, n int) encoder {
	return func(v any) (any, error) {
		x, err := asInt(v)
		if err != nil {
			return nil, err
		}
		if x < 0 || (n < 63 && x >= 1<<n) {
			return nil, fmt.Errorf("%d does not fit %s", x, decl)
		}
		size := (n + 7) / 8
		u := uint64(x) << (size*8 - n)
		b := make([]byte, size)
		for i := size - 1; i >= 0; i-- {
			b[i] = byte(u)
			u >>= 8
		}
		return pgtype.Bits{Bytes: b, Len: int32(n), Valid: true}, nil
	}
}

func asString(v any) (string, error) {
	switch x := v.(type) {
	case string:
		return x, nil
	case []byte:
		return string(x), nil
	case int64:
		return strconv.FormatInt(x, 10), nil
	}
	return "", fmt.Errorf("%T is not text", v)
}

func asInt(v any) (int64, error) {
	switch x := v.(type) {
	case int64:
		return x, nil
	case int32:
		return int64(x), nil
	case int16:
		return int64(x), nil
	case bool:
		if x {
			return 1, nil
		}
		return 0, nil
	}
	return 0, fmt.Errorf("%T is not an integer", v)
}

// encoders returns the encoder of each of cols.
func encoders(cols []engine.Column) ([]encoder, error) {
	out := make([]encoder, len(cols))
	for i, c := range cols {
		e, err := encoderOf(c)
		if err != nil {
			return nil, err
		}
		out[i] = e
	}
	return out, nil
}

func encodeRow(cols []engine.Column, encs []encoder, in []any, out []any) error {
	for i, v := range in {
		if v == nil {
			out[i] = nil
			continue
		}
		e, err := encs[i](v)
		if err != nil {
			return fmt.Errorf("column %s: %w", cols[i].Name, err)
		}
		out[i] = e
	}
	return nil
}

// registerEnums makes the writer's connection know the enum types of cols,
// which COPY writes in binary.
func (r *booksTx) registerEnums(ctx context.Context, cols []engine.Column) error {
	for _, c := range cols {
		if !c.Enum || r.enums[c.Decl] {
			continue
		}
		t, err := r.conn.LoadType(ctx, c.Decl)
		if err != nil {
			return fmt.Errorf("load type %s: %w", c.Decl, err)
		}
		r.conn.TypeMap().RegisterType(t)
		if r.enums == nil {
			r.enums = map[string]bool{}
		}
		r.enums[c.Decl] = true
	}
	return nil
}

func (r *booksTx) Load(ctx context.Context, table string, cols []engine.Column, next func() ([]any, error)) (int64, error) {
	if r.tx == nil {
		return 0, errors.New("books: load outside a write")
	}
	ts, err := tables(ctx, r.tx)
	if err != nil {
		return 0, err
	}
	i := slices.IndexFunc(ts, func(t engine.Table) bool { return t.Name == table })
	if i < 0 {
		return 0, fmt.Errorf("books: load %s: no such table", table)
	}
	target := ts[i]
	cols = slices.Clone(cols)
	for j, c := range cols {
		tc, ok := target.Column(c.Name)
		if !ok {
			return 0, fmt.Errorf("books: load %s: no column %s", table, c.Name)
		}
		// Writing needs the column's own declaration (bit length, enum).
		tc.Type = c.Type
		cols[j] = tc
	}
	encs, err := encoders(cols)
	if err != nil {
		return 0, fmt.Errorf("books: load %s: %w", table, err)
	}
	if err := r.registerEnums(ctx, cols); err != nil {
		return 0, fmt.Errorf("books: load %s: %w", table, err)
	}
	names := make([]string, len(cols))
	for j, c := range cols {
		names[j] = c.Name
	}
	// derive computes amount_minor when it is left out.
	var derive func(row []any) (any, error)
	if c, ok := target.Column("amount_minor"); ok && c.Derived && !slices.Contains(names, "amount_minor") {
		amount, currency := slices.Index(names, "amount"), slices.Index(names, "currency")
		if amount < 0 || currency < 0 {
			return 0, fmt.Errorf("books: load %s: amount_minor needs amount and currency", table)
		}
		names = append(names, "amount_minor")
		derive = func(row []any) (any, error) {
			d, ok := row[amount].(decimal.Decimal)
			cur, _ := row[currency].(string)
			if !ok {
				return nil, nil
			}
			if m, ok := AmountMinor(money.Amount{Value: d, Currency: cur}); ok {
				return m, nil
			}
			return nil, nil
		}
	}
	buf := make([]any, len(names))
	n, err := r.tx.CopyFrom(ctx, pgx.Identifier{table}, names, pgx.CopyFromFunc(func() ([]any, error) {
		row, err := next()
		if err != nil || row == nil {
			return nil, err
		}
		if err := encodeRow(cols, encs, row, buf[:len(cols)]); err != nil {
			return nil, err
		}
		if derive != nil {
			m, err := derive(buf)
			if err != nil {
				return nil, err
			}
			buf[len(cols)] = m
		}
		return buf, nil
	}))
	if err != nil {
		return n, fmt.Errorf("books: load %s: %w", table, err)
	}
	return n, nil
}

func (r *booksTx) Update(ctx context.Context, u engine.Update, rows [][]any) (int64, error) {
	if r.tx == nil {
		return 0, errors.New("books: update outside a write")
	}
	if len(rows) == 0 {
		return 0, nil
	}
	cols := append(slices.Clone(u.Set), u.Key...)
	encs, err := encoders(cols)
	if err != nil {
		return 0, fmt.Errorf("books: update %s: %w", u.Table, err)
	}
	if err := r.registerEnums(ctx, cols); err != nil {
		return 0, fmt.Errorf("books: update %s: %w", u.Table, err)
	}
	set := make([]string, len(u.Set))
	for i, c := range u.Set {
		set[i] = ident(c.Name) + " = $" + strconv.Itoa(i+1)
	}
	where := make([]string, len(u.Key))
	for i, c := range u.Key {
		where[i] = ident(c.Name) + " = $" + strconv.Itoa(len(u.Set)+i+1)
	}
	sql := "UPDATE " + ident(u.Table) + " SET " + strings.Join(set, ", ") + " WHERE " + strings.Join(where, " AND ")
	batch := &pgx.Batch{}
	for _, row := range rows {
		if len(row) != len(cols) {
			return 0, fmt.Errorf("books: update %s: a row of %d values for %d columns", u.Table, len(row), len(cols))
		}
		// The row holds the key first, the statement takes it last.
		in := append(slices.Clone(row[len(u.Key):]), row[:len(u.Key)]...)
		args := make([]any, len(cols))
		if err := encodeRow(cols, encs, in, args); err != nil {
			return 0, fmt.Errorf("books: update %s: %w", u.Table, err)
		}
		batch.Queue(sql, args...)
	}
	res := r.tx.SendBatch(ctx, batch)
	var n int64
	for range rows {
		tag, err := res.Exec()
		if err != nil {
			_ = res.Close()
			return n, fmt.Errorf("books: update %s: %w", u.Table, err)
		}
		n += tag.RowsAffected()
	}
	if err := res.Close(); err != nil {
		return n, fmt.Errorf("books: update %s: %w", u.Table, err)
	}
	return n, nil
}

// sequences lists the identity columns of the schema with their sequences.
func sequences(ctx context.Context, q querier) ([][3]string, error) {
	rows, err := q.Query(ctx, `
		SELECT c.relname, a.attname, pg_get_serial_sequence(format('%I.%I', n.nspname, c.relname), a.attname)
		FROM pg_class c
		JOIN pg_namespace n ON n.oid = c.relnamespace
		JOIN pg_attribute a ON a.attrelid = c.oid AND a.attnum > 0 AND NOT a.attisdropped
		WHERE n.nspname = current_schema() AND c.relkind IN ('r', 'p')
			AND pg_get_serial_sequence(format('%I.%I', n.nspname, c.relname), a.attname) IS NOT NULL
		ORDER BY 1, 2`)
	if err != nil {
		return nil, fmt.Errorf("books: read the sequences: %w", err)
	}
	out, err := pgx.CollectRows(rows, func(r pgx.CollectableRow) ([3]string, error) {
		var s [3]string
		err := r.Scan(&s[0], &s[1], &s[2])
		return s, err
	})
	if err != nil {
		return nil, fmt.Errorf("books: read the sequences: %w", err)
	}
	return out, nil
}

func (r *booksTx) Identities(ctx context.Context) ([]engine.Identity, error) {
	seqs, err := sequences(ctx, r.q)
	if err != nil {
		return nil, err
	}
	out := make([]engine.Identity, 0, len(seqs))
	for _, s := range seqs {
		var last int64
		if err := r.q.QueryRow(ctx, "SELECT CASE WHEN is_called THEN last_value ELSE 0 END FROM "+s[2]).Scan(&last); err != nil {
			return nil, fmt.Errorf("books: read sequence %s: %w", s[2], err)
		}
		out = append(out, engine.Identity{Table: s[0], Column: s[1], Last: last})
	}
	return out, nil
}

func (r *booksTx) SetIdentities(ctx context.Context, ids []engine.Identity) error {
	if r.tx == nil {
		return errors.New("books: set identities outside a write")
	}
	seqs, err := sequences(ctx, r.tx)
	if err != nil {
		return err
	}
	for _, s := range seqs {
		var last int64
		for _, id := range ids {
			if id.Table == s[0] && id.Column == s[1] {
				last = id.Last
			}
		}
		_, err := r.tx.Exec(ctx, `SELECT CASE WHEN m > 0 THEN setval($1::regclass, m, true) ELSE setval($1::regclass, 1, false) END
			FROM (SELECT GREATEST(coalesce(max(`+ident(s[1])+`), 0), $2::bigint) AS m FROM `+ident(s[0])+`) x`, s[2], last)
		if err != nil {
			return fmt.Errorf("books: set sequence %s: %w", s[2], err)
		}
	}
	return nil
}

func ident(name string) string { return pgx.Identifier{name}.Sanitize() }
