package sqlitestore

import (
	"context"
	"database/sql"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/reconcilehq/reconcile/ledger/engine"
)

// Raw access to the tables of the books (engine.Books), for moving,
// pruning and erasing them. The schema is read with PRAGMA table_xinfo and
// foreign_key_list.
//
// SQLite declares less than PostgreSQL: TEXT holds text, times, amounts and
// JSON alike, INTEGER holds integers, booleans and bit sets, and a BLOB
// holds bytes or binary JSON. A column's values are read and written as
// the type the caller asks for, which for the ambiguous declarations is
// that of the same column on the other engine. Times are written in the
// form their declaration calls for: the books' TEXT columns in timeLayout,
// River's timestamp columns in its "2006-01-02 15:04:05.000".

// Books returns raw access to the store's tables.
func (s *Store) Books() engine.Books { return books{db: s.sqldb} }

type books struct{ db *sql.DB }

// sqlQuerier is what a connection and a transaction can do.
type sqlQuerier interface {
	QueryContext(ctx context.Context, query string, args ...any) (*sql.Rows, error)
	QueryRowContext(ctx context.Context, query string, args ...any) *sql.Row
	ExecContext(ctx context.Context, query string, args ...any) (sql.Result, error)
	PrepareContext(ctx context.Context, query string) (*sql.Stmt, error)
}

// riverTimeLayout is how River's SQLite driver stores times.
const riverTimeLayout = "2006-01-02 15:04:05.000"

func (b books) Tables(ctx context.Context) ([]engine.Table, error) {
	return tables(ctx, b.db, true)
}

// tables reads the schema; with detectJSON it also reads which BLOB
// columns hold JSON, which takes a look at their values.
func tables(ctx context.Context, q sqlQuerier, detectJSON bool) ([]engine.Table, error) {
	rows, err := q.QueryContext(ctx, `SELECT name, coalesce(sql, '') FROM sqlite_schema
		WHERE type = 'table' AND name NOT LIKE 'sqlite\_%' ESCAPE '\' ORDER BY name`)
	if err != nil {
		return nil, fmt.Errorf("books: read the schema: %w", err)
	}
	var out []engine.Table
	for rows.Next() {
		var name, ddl string
		if err := rows.Scan(&name, &ddl); err != nil {
			rows.Close()
			return nil, fmt.Errorf("books: read the schema: %w", err)
		}
		out = append(out, engine.Table{Name: name})
	}
	rows.Close()
	if err := rows.Err(); err != nil {
		return nil, fmt.Errorf("books: read the schema: %w", err)
	}
	for i := range out {
		t := &out[i]
		if err := columns(ctx, q, t, detectJSON); err != nil {
			return nil, err
		}
		refs, err := q.QueryContext(ctx, `SELECT DISTINCT "table" FROM pragma_foreign_key_list(?) ORDER BY 1`, t.Name)
		if err != nil {
			return nil, fmt.Errorf("books: read the foreign keys of %s: %w", t.Name, err)
		}
		for refs.Next() {
			var ref string
			if err := refs.Scan(&ref); err != nil {
				refs.Close()
				return nil, fmt.Errorf("books: read the foreign keys of %s: %w", t.Name, err)
			}
			t.References = append(t.References, ref)
		}
		refs.Close()
		if err := refs.Err(); err != nil {
			return nil, fmt.Errorf("books: read the foreign keys of %s: %w", t.Name, err)
		}
	}
	return out, nil
}

// columns reads the columns and primary key of t, and with detectJSON which
// of its BLOB columns hold JSON.
func columns(ctx context.Context, q sqlQuerier, t *engine.Table, detectJSON bool) error {
	rows, err := q.QueryContext(ctx, `SELECT name, lower(type), "notnull", dflt_value IS NOT NULL, pk, hidden
		FROM pragma_table_xinfo(?) ORDER BY cid`, t.Name)
	if err != nil {
		return fmt.Errorf("books: read the columns of %s: %w", t.Name, err)
	}
	type keyed struct {
		name string
		pk   int
	}
	var keys []keyed
	for rows.Next() {
		var c engine.Column
		var pk, hidden int
		if err := rows.Scan(&c.Name, &c.Decl, &c.NotNull, &c.HasDefault, &pk, &hidden); err != nil {
			rows.Close()
			return fmt.Errorf("books: read the columns of %s: %w", t.Name, err)
		}
		c.Type, c.Exact = sqliteType(c.Decl)
		c.Generated = hidden == 2 || hidden == 3
		if hidden == 1 {
			continue // a virtual table's hidden column
		}
		if pk > 0 {
			keys = append(keys, keyed{c.Name, pk})
		}
		t.Columns = append(t.Columns, c)
	}
	rows.Close()
	if err := rows.Err(); err != nil {
		return fmt.Errorf("books: read the columns of %s: %w", t.Name, err)
	}
	slices.SortFunc(keys, func(a, b keyed) int { return a.pk - b.pk })
	for _, k := range keys {
		t.Key = append(t.Key, k.name)
	}
	// A single INTEGER PRIMARY KEY is the rowid: an identity.
	if len(t.Key) == 1 {
		for i := range t.Columns {
			if t.Columns[i].Name == t.Key[0] && t.Columns[i].Decl == "integer" {
				t.Columns[i].Identity = true
			}
		}
	}
	for i := range t.Columns {
		c := &t.Columns[i]
		if !detectJSON || c.Type != engine.TypeBytes {
			continue
		}
		// A BLOB column whose values are all JSON, binary or text, and at
		// least one of them binary (River's), holds JSON.
		var isJSON bool
		col, tbl := ident(c.Name), ident(t.Name)
		err := q.QueryRowContext(ctx, `SELECT EXISTS (SELECT 1 FROM `+tbl+` WHERE typeof(`+col+`) = 'blob' AND json_valid(`+col+`, 8))
			AND NOT EXISTS (SELECT 1 FROM `+tbl+` WHERE `+col+` IS NOT NULL
				AND NOT ((typeof(`+col+`) = 'blob' AND json_valid(`+col+`, 8)) OR (typeof(`+col+`) = 'text' AND json_valid(`+col+`))))`).Scan(&isJSON)
		if err != nil {
			return fmt.Errorf("books: read column %s.%s: %w", t.Name, c.Name, err)
		}
		if isJSON {
			c.Type = engine.TypeJSON
		}
	}
	return nil
}

// sqliteType is the engine-neutral type of a column declared decl, and
// whether the declaration says it all.
func sqliteType(decl string) (engine.Type, bool) {
	switch {
	case strings.Contains(decl, "int"):
		return engine.TypeInt, false
	case strings.Contains(decl, "char") || strings.Contains(decl, "clob") || strings.Contains(decl, "text"):
		return engine.TypeText, false
	case decl == "blob" || decl == "":
		return engine.TypeBytes, false
	case strings.HasPrefix(decl, "timestamp") || strings.HasPrefix(decl, "datetime") || decl == "date":
		return engine.TypeTime, true
	case decl == "boolean" || decl == "bool":
		return engine.TypeBool, true
	}
	return engine.TypeUnknown, true
}

// blobDecl reports whether a column declared decl stores bytes (and so
// JSON in binary form).
func blobDecl(decl string) bool { return decl == "blob" || decl == "" }

func (b books) Read(ctx context.Context, fn func(engine.Reader) error) error {
	conn, err := b.db.Conn(ctx)
	if err != nil {
		return fmt.Errorf("books: begin reading: %w", err)
	}
	defer conn.Close()
	// A deferred transaction that only reads: in WAL mode, a snapshot
	// that takes no lock writers wait for.
	if _, err := conn.ExecContext(ctx, "BEGIN DEFERRED"); err != nil {
		return fmt.Errorf("books: begin reading: %w", err)
	}
	defer func() { _, _ = conn.ExecContext(context.WithoutCancel(ctx), "ROLLBACK") }()
	return fn(&booksTx{q: conn})
}

func (b books) Write(ctx context.Context, fn func(engine.Writer) error) (err error) {
	tx, err := b.db.BeginTx(ctx, nil)
	if err != nil {
		return fmt.Errorf("books: begin writing: %w", err)
	}
	defer func() {
		if err != nil {
			_ = tx.Rollback()
		}
	}()
	// Keys may change (an erased identifier in a key): their references
	// are checked at the commit.
	if _, err := tx.ExecContext(ctx, "PRAGMA defer_foreign_keys = ON"); err != nil {
		return fmt.Errorf("books: begin writing: %w", err)
	}
	w := &booksTx{q: tx, write: true}
	defer w.close()
	if err := fn(w); err != nil {
		return err
	}
	if err := tx.Commit(); err != nil {
		return fmt.Errorf("books: commit: %w", translate(err))
	}
	return nil
}

// booksTx reads, and with write writes, on one connection or transaction.
type booksTx struct {
	q     sqlQuerier
	write bool
	stmts map[string]*sql.Stmt
}

func (r *booksTx) close() {
	for _, st := range r.stmts {
		_ = st.Close()
	}
}

func (r *booksTx) stmt(ctx context.Context, query string) (*sql.Stmt, error) {
	if st, ok := r.stmts[query]; ok {
		return st, nil
	}
	st, err := r.q.PrepareContext(ctx, query)
	if err != nil {
		return nil, err
	}
	if r.stmts == nil {
		r.stmts = map[string]*sql.Stmt{}
	}
	r.stmts[query] = st
	return st, nil
}

func (r *booksTx) Count(ctx context.Context, table string) (int64, error) {
	var n int64
	if err := r.q.QueryRowContext(ctx, "SELECT count(*) FROM "+ident(table)).Scan(&n); err != nil {
		return 0, fmt.Errorf("books: count %s: %w", table, err)
	}
	return n, nil
}

// selectExpr reads column c as c.Type.
func selectExpr(c engine.Column) string {
	q := ident(c.Name)
	switch c.Type {
	case engine.TypeJSON, engine.TypeTextList, engine.TypeJSONList:
		return "CASE WHEN typeof(" + q + ") = 'blob' THEN json(" + q + ") ELSE " + q + " END"
	}
	return q
}

// textExpr is column c as text, for matching: binary JSON as its text.
func textExpr(c engine.Column) string {
	if c.Type == engine.TypeJSON || c.Type == engine.TypeTextList || c.Type == engine.TypeJSONList {
		return selectExpr(c)
	}
	return ident(c.Name)
}

// containsFold reports whether hay holds needle, which is lower case,
// without regard to ASCII case.
func containsFold(hay []byte, needle string) bool {
	n := len(needle)
	for i := 0; i+n <= len(hay); i++ {
		j := 0
		for ; j < n; j++ {
			c := hay[i+j]
			if c >= 'A' && c <= 'Z' {
				c += 'a' - 'A'
			}
			if c != needle[j] {
				break
			}
		}
		if j == n {
			return true
		}
	}
	return false
}

// scanQuery is the query of s, its arguments, the lower-cased needles its
// rows are matched against (after the shown values come the matched
// columns' text) and the number of values in each row. The query is empty
// when s can match nothing (a match without needles or columns).
func scanQuery(s engine.Scan) (query string, args []any, needles []string, width int, err error) {
	exprs := make([]string, len(s.Cols))
	for i, c := range s.Cols {
		exprs[i] = selectExpr(c)
	}
	for _, c := range s.Lengths {
		exprs = append(exprs, "coalesce(length(CAST("+ident(c.Name)+" AS BLOB)), 0)")
	}
	var where []string
	// Matching happens in Scan rather than in SQL: the engine would compute
	// each column's text again for every needle.
	if m := s.Match; m != nil {
		if s.Limit > 0 {
			return "", nil, nil, 0, fmt.Errorf("books: scan %s: a match with a limit", s.Table)
		}
		if len(m.Needles) == 0 || len(m.Cols) == 0 {
			return "", nil, nil, 0, nil
		}
		for _, n := range m.Needles {
			needles = append(needles, strings.ToLower(n))
		}
		for _, c := range m.Cols {
			exprs = append(exprs, textExpr(c))
		}
	}
	if in := s.In; in != nil {
		b, err := json.Marshal(in.Values)
		if err != nil {
			return "", nil, nil, 0, fmt.Errorf("books: scan %s: %w", s.Table, err)
		}
		where = append(where, ident(in.Col.Name)+" IN (SELECT value FROM json_each(?))")
		args = append(args, string(b))
	}
	var order string
	if len(s.Key) > 0 {
		keys := make([]string, len(s.Key))
		for i, k := range s.Key {
			keys[i] = ident(k.Name)
		}
		order = " ORDER BY " + strings.Join(keys, ", ")
		if s.After != nil {
			where = append(where, "("+strings.Join(keys, ", ")+") > ("+strings.TrimSuffix(strings.Repeat("?, ", len(keys)), ", ")+")")
			for i, v := range s.After {
				a, err := bindValue(s.Key[i], v)
				if err != nil {
					return "", nil, nil, 0, fmt.Errorf("books: scan %s: %w", s.Table, err)
				}
				args = append(args, a)
			}
		}
	}
	query = "SELECT " + strings.Join(exprs, ", ") + " FROM " + ident(s.Table)
	if len(where) > 0 {
		query += " WHERE " + strings.Join(where, " AND ")
	}
	query += order
	if s.Limit > 0 {
		query += " LIMIT " + strconv.Itoa(s.Limit)
	}
	return query, args, needles, len(exprs), nil
}

// Scan reads the rows s asks for, in key order, passing each to fn. The
// slice passed is reused from row to row.
func (r *booksTx) Scan(ctx context.Context, s engine.Scan, fn func([]any) error) error {
	query, args, needles, width, err := scanQuery(s)
	if err != nil || query == "" {
		return err
	}
	rows, err := r.q.QueryContext(ctx, query, args...)
	if err != nil {
		return fmt.Errorf("books: scan %s: %w", s.Table, err)
	}
	defer rows.Close()
	raw := make([]any, width)
	ptrs := make([]any, width)
	for i := range raw {
		ptrs[i] = &raw[i]
	}
	shown := len(s.Cols) + len(s.Lengths)
	row := make([]any, shown)
	for rows.Next() {
		if err := rows.Scan(ptrs...); err != nil {
			return fmt.Errorf("books: scan %s: %w", s.Table, err)
		}
		if needles != nil && !matches(raw[shown:], needles) {
			continue
		}
		for i, v := range raw[:shown] {
			if i >= len(s.Cols) {
				row[i] = v
				continue
			}
			out, err := readValue(s.Cols[i], v)
			if err != nil {
				return fmt.Errorf("books: scan %s: column %s: %w", s.Table, s.Cols[i].Name, err)
			}
			row[i] = out
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

// matches reports whether one of vals holds one of needles.
func matches(vals []any, needles []string) bool {
	for _, v := range vals {
		var b []byte
		switch x := v.(type) {
		case []byte:
			b = x
		case string:
			b = []byte(x)
		default:
			continue
		}
		for _, n := range needles {
			if containsFold(b, n) {
				return true
			}
		}
	}
	return false
}

// readValue converts what the driver read of column c into c.Type's form.
func readValue(c engine.Column, v any) (any, error) {
	if v == nil {
		return nil, nil
	}
	switch c.Type {
	case engine.TypeText, engine.TypeDecimal, engine.TypeJSON, engine.TypeTextList, engine.TypeJSONList, engine.TypeDate:
		switch x := v.(type) {
		case string:
			return x, nil
		case []byte:
			return string(x), nil
		case int64:
			return strconv.FormatInt(x, 10), nil
		}
	case engine.TypeBytes:
		switch x := v.(type) {
		case []byte:
			return slices.Clone(x), nil
		case string:
			return []byte(x), nil
		}
	case engine.TypeInt, engine.TypeBits:
		if x, ok := v.(int64); ok {
			return x, nil
		}
	case engine.TypeBool:
		if x, ok := v.(int64); ok {
			return x != 0, nil
		}
	case engine.TypeTime:
		switch x := v.(type) {
		case time.Time:
			return x.UTC(), nil
		case string:
			return parseAnyTime(x)
		}
	default:
		return nil, fmt.Errorf("type %s (%s) cannot be read", c.Decl, c.Type)
	}
	return nil, fmt.Errorf("a stored %T cannot be read as %s", v, c.Type)
}

// timeLayouts are the forms of time SQLite columns hold: the books', River's
// (and CURRENT_TIMESTAMP's), and RFC 3339.
var timeLayouts = []string{timeLayout, "2006-01-02 15:04:05.999999999", time.RFC3339Nano, "2006-01-02 15:04:05.999999999-07:00"}

func parseAnyTime(s string) (time.Time, error) {
	for _, l := range timeLayouts {
		if t, err := time.Parse(l, s); err == nil {
			return t.UTC(), nil
		}
	}
	return time.Time{}, fmt.Errorf("stored time %q is in no known form", s)
}

// bindValue converts a value of c.Type into what the driver binds for
// column c.
func bindValue(c engine.Column, v any) (any, error) {
	if v == nil {
		return nil, nil
	}
	switch c.Type {
	case engine.TypeText, engine.TypeDecimal, engine.TypeJSON, engine.TypeTextList, engine.TypeJSONList, engine.TypeDate:
		switch x := v.(type) {
		case string:
			return x, nil
		case []byte:
			return string(x), nil
		}
	case engine.TypeBytes:
		switch x := v.(type) {
		case []byte:
			if x == nil {
				return []byte{}, nil
			}
			return x, nil
		case string:
			return []byte(x), nil
		}
	case engine.TypeInt, engine.TypeBits:
		if x, ok := v.(int64); ok {
			return x, nil
		}
	case engine.TypeBool:
		switch x := v.(type) {
		case bool:
			if x {
				return int64(1), nil
			}
			return int64(0), nil
		case int64:
			return x, nil
		}
	case engine.TypeTime:
		if x, ok := v.(time.Time); ok {
			if t, _ := sqliteType(c.Decl); t == engine.TypeTime {
				return x.UTC().Round(time.Millisecond).Format(riverTimeLayout), nil
			}
			return ts(x), nil
		}
	default:
		return nil, fmt.Errorf("type %s (%s) cannot be written", c.Decl, c.Type)
	}
	return nil, fmt.Errorf("a %T cannot be written as %s", v, c.Type)
}

// placeholder is the parameter of column c in a statement: binary JSON
// for JSON written into a BLOB.
func placeholder(c engine.Column) string {
	switch c.Type {
	case engine.TypeJSON, engine.TypeTextList, engine.TypeJSONList:
		if blobDecl(c.Decl) {
			return "jsonb(?)"
		}
	}
	return "?"
}

// maxVariables is SQLite's limit on the parameters of one statement.
const maxVariables = 32766

func (r *booksTx) Load(ctx context.Context, table string, cols []engine.Column, next func() ([]any, error)) (int64, error) {
	if !r.write {
		return 0, errors.New("books: load outside a write")
	}
	t := engine.Table{Name: table}
	if err := columns(ctx, r.q, &t, false); err != nil {
		return 0, err
	}
	cols = slices.Clone(cols)
	names := make([]string, len(cols))
	marks := make([]string, len(cols))
	for i, c := range cols {
		tc, ok := t.Column(c.Name)
		if !ok {
			return 0, fmt.Errorf("books: load %s: no column %s", table, c.Name)
		}
		// Written as the caller's type, in the form this column's
		// declaration calls for.
		tc.Type = c.Type
		cols[i] = tc
		names[i] = ident(c.Name)
		marks[i] = placeholder(tc)
	}
	if len(cols) == 0 {
		return 0, fmt.Errorf("books: load %s: no columns", table)
	}
	perStmt := min(maxVariables/len(cols), 500)
	rowMarks := "(" + strings.Join(marks, ", ") + ")"
	insert := func(rows int) string {
		return "INSERT INTO " + ident(table) + " (" + strings.Join(names, ", ") + ") VALUES " +
			strings.TrimSuffix(strings.Repeat(rowMarks+", ", rows), ", ")
	}
	args := make([]any, 0, perStmt*len(cols))
	var n int64
	flush := func() error {
		rows := len(args) / len(cols)
		if rows == 0 {
			return nil
		}
		st, err := r.stmt(ctx, insert(rows))
		if err != nil {
			return err
		}
		if _, err := st.ExecContext(ctx, args...); err != nil {
			return translate(err)
		}
		n += int64(rows)
		args = args[:0]
		return nil
	}
	for {
		row, err := next()
		if err != nil {
			return n, err
		}
		if row == nil {
			break
		}
		for i, v := range row {
			b, err := bindValue(cols[i], v)
			if err != nil {
				return n, fmt.Errorf("books: load %s: column %s: %w", table, cols[i].Name, err)
			}
			args = append(args, b)
		}
		if len(args) == perStmt*len(cols) {
			if err := flush(); err != nil {
				return n, fmt.Errorf("books: load %s: %w", table, err)
			}
		}
	}
	if err := flush(); err != nil {
		return n, fmt.Errorf("books: load %s: %w", table, err)
	}
	return n, nil
}

func (r *booksTx) Update(ctx context.Context, u engine.Update, rows [][]any) (int64, error) {
	if !r.write {
		return 0, errors.New("books: update outside a write")
	}
	if len(rows) == 0 {
		return 0, nil
	}
	set := make([]string, len(u.Set))
	for i, c := range u.Set {
		set[i] = ident(c.Name) + " = " + placeholder(c)
	}
	where := make([]string, len(u.Key))
	for i, c := range u.Key {
		where[i] = ident(c.Name) + " = ?"
	}
	st, err := r.stmt(ctx, "UPDATE "+ident(u.Table)+" SET "+strings.Join(set, ", ")+" WHERE "+strings.Join(where, " AND "))
	if err != nil {
		return 0, fmt.Errorf("books: update %s: %w", u.Table, err)
	}
	var n int64
	args := make([]any, len(u.Set)+len(u.Key))
	for _, row := range rows {
		if len(row) != len(args) {
			return n, fmt.Errorf("books: update %s: a row of %d values for %d columns", u.Table, len(row), len(args))
		}
		for i, c := range u.Key {
			b, err := bindValue(c, row[i])
			if err != nil {
				return n, fmt.Errorf("books: update %s: column %s: %w", u.Table, c.Name, err)
			}
			args[len(u.Set)+i] = b
		}
		for i, c := range u.Set {
			b, err := bindValue(c, row[len(u.Key)+i])
			if err != nil {
				return n, fmt.Errorf("books: update %s: column %s: %w", u.Table, c.Name, err)
			}
			args[i] = b
		}
		res, err := st.ExecContext(ctx, args...)
		if err != nil {
			return n, fmt.Errorf("books: update %s: %w", u.Table, translate(err))
		}
		k, err := res.RowsAffected()
		if err != nil {
			return n, fmt.Errorf("books: update %s: %w", u.Table, err)
		}
		n += k
	}
	return n, nil
}

// identities lists the rowid columns of the schema and whether their table
// is AUTOINCREMENT (it never hands out an id again).
func identities(ctx context.Context, q sqlQuerier) ([]engine.Identity, map[string]bool, error) {
	ts, err := tables(ctx, q, false)
	if err != nil {
		return nil, nil, err
	}
	rows, err := q.QueryContext(ctx, `SELECT name, coalesce(sql, '') FROM sqlite_schema WHERE type = 'table'`)
	if err != nil {
		return nil, nil, fmt.Errorf("books: read the schema: %w", err)
	}
	auto := map[string]bool{}
	for rows.Next() {
		var name, ddl string
		if err := rows.Scan(&name, &ddl); err != nil {
			rows.Close()
			return nil, nil, fmt.Errorf("books: read the schema: %w", err)
		}
		auto[name] = strings.Contains(strings.ToUpper(ddl), "AUTOINCREMENT")
	}
	rows.Close()
	if err := rows.Err(); err != nil {
		return nil, nil, fmt.Errorf("books: read the schema: %w", err)
	}
	var out []engine.Identity
	for _, t := range ts {
		for _, c := range t.Columns {
			if c.Identity {
				out = append(out, engine.Identity{Table: t.Name, Column: c.Name})
			}
		}
	}
	return out, auto, nil
}

func (r *booksTx) Identities(ctx context.Context) ([]engine.Identity, error) {
	ids, auto, err := identities(ctx, r.q)
	if err != nil {
		return nil, err
	}
	for i := range ids {
		id := &ids[i]
		var last sql.NullInt64
		if err := r.q.QueryRowContext(ctx, "SELECT max("+ident(id.Column)+") FROM "+ident(id.Table)).Scan(&last); err != nil {
			return nil, fmt.Errorf("books: read the identity of %s: %w", id.Table, err)
		}
		id.Last = last.Int64
		if auto[id.Table] {
			var seq sql.NullInt64
			err := r.q.QueryRowContext(ctx, "SELECT max(seq) FROM sqlite_sequence WHERE name = ?", id.Table).Scan(&seq)
			if err != nil {
				return nil, fmt.Errorf("books: read the identity of %s: %w", id.Table, err)
			}
			id.Last = max(id.Last, seq.Int64)
		}
	}
	return ids, nil
}

// SetIdentities records the given last values of AUTOINCREMENT tables; the
// other rowid tables hand out one above their largest id by themselves.
func (r *booksTx) SetIdentities(ctx context.Context, given []engine.Identity) error {
	if !r.write {
		return errors.New("books: set identities outside a write")
	}
	ids, auto, err := identities(ctx, r.q)
	if err != nil {
		return err
	}
	for _, id := range ids {
		if !auto[id.Table] {
			continue
		}
		var last int64
		for _, g := range given {
			if g.Table == id.Table && g.Column == id.Column {
				last = g.Last
			}
		}
		var top sql.NullInt64
		if err := r.q.QueryRowContext(ctx, "SELECT max("+ident(id.Column)+") FROM "+ident(id.Table)).Scan(&top); err != nil {
			return fmt.Errorf("books: set the identity of %s: %w", id.Table, err)
		}
		last = max(last, top.Int64)
		if last <= 0 {
			continue
		}
		res, err := r.q.ExecContext(ctx, "UPDATE sqlite_sequence SET seq = max(seq, ?) WHERE name = ?", last, id.Table)
		if err != nil {
			return fmt.Errorf("books: set the identity of %s: %w", id.Table, err)
		}
		if k, _ := res.RowsAffected(); k == 0 {
			if _, err := r.q.ExecContext(ctx, "INSERT INTO sqlite_sequence (name, seq) VALUES (?, ?)", id.Table, last); err != nil {
				return fmt.Errorf("books: set the identity of %s: %w", id.Table, err)
			}
		}
	}
	return nil
}

func ident(name string) string { return `"` + strings.ReplaceAll(name, `"`, `""`) + `"` }
