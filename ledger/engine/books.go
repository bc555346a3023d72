package engine

import (
	"context"
	"fmt"
	"time"
)

// Books is raw access to the tables of the books on one engine, for the
// work that treats them as tables rather than as intents and findings:
// moving them to another database, pruning old payloads, erasing a person
// (package books). It knows no table by name: the schema is read from the
// database, and values cross it in one engine-neutral form per Type, so
// that what one engine reads another can write.
type Books interface {
	// Tables describes every table of the database's schema but the
	// engine's own (sqlite_*), in name order.
	Tables(ctx context.Context) ([]Table, error)
	// Read runs fn on one consistent, read-only snapshot of the database.
	Read(ctx context.Context, fn func(Reader) error) error
	// Write runs fn in one transaction, committed when fn returns nil and
	// rolled back otherwise.
	Write(ctx context.Context, fn func(Writer) error) error
}

// Reader reads tables.
type Reader interface {
	// Scan calls fn with each row s selects, its values in the order and
	// in the form of s.Cols (see Type). fn may not keep row.
	Scan(ctx context.Context, s Scan, fn func(row []any) error) error
	// Count counts the rows of a table.
	Count(ctx context.Context, table string) (int64, error)
	// Identities returns the last value each identity column has handed
	// out, or its largest value if the engine keeps no record of that.
	Identities(ctx context.Context) ([]Identity, error)
}

// Writer reads and writes tables inside one transaction.
type Writer interface {
	Reader
	// Load appends the rows next returns, until it returns nil, in bulk
	// (COPY on PostgreSQL, multi-row INSERTs on SQLite). Values come in
	// the form of cols. A derived column that cols leave out is computed.
	Load(ctx context.Context, table string, cols []Column, next func() ([]any, error)) (int64, error)
	// Update sets u.Set on the rows whose key equals u.Key: each of rows
	// holds the key's values, then the new values. It returns how many
	// rows changed.
	Update(ctx context.Context, u Update, rows [][]any) (int64, error)
	// SetIdentities makes each identity column hand out values above both
	// its largest value and the one given.
	SetIdentities(ctx context.Context, ids []Identity) error
}

// Table is one table as its database describes it.
type Table struct {
	Name    string
	Columns []Column
	// Key names the primary key's columns in order; empty without one.
	Key []string
	// References names the tables this one's foreign keys point to.
	References []string
}

// Column returns the column named name.
func (t Table) Column(name string) (Column, bool) {
	for _, c := range t.Columns {
		if c.Name == name {
			return c, true
		}
	}
	return Column{}, false
}

// Column is one column of a table.
type Column struct {
	Name string
	// Decl is the type as the database declares it, lower-cased:
	// PostgreSQL's format_type ("timestamp with time zone", "bit(8)",
	// "river_job_state"), SQLite's declared type ("text", "blob",
	// "timestamp").
	Decl string
	// Type is what the values are. When Exact is false the declaration
	// alone does not say (SQLite keeps text, times, amounts and JSON all
	// in TEXT), and Type is how the bytes are stored; a reader or writer
	// then asks for the Type of the same column on another engine.
	Type  Type
	Exact bool
	// Enum is true for a PostgreSQL enum type (its values are Text).
	Enum bool
	// NotNull and HasDefault are the column's constraints.
	NotNull    bool
	HasDefault bool
	// Generated columns are computed by the database and never written.
	Generated bool
	// Derived columns are computed by the engine's writers from other
	// columns of the row (PostgreSQL's amount_minor, from amount and
	// currency); an engine without them needs nothing of them, and Load
	// computes them when they are left out.
	Derived bool
	// Identity columns draw their values from a sequence (bigserial, an
	// identity column, SQLite's INTEGER PRIMARY KEY).
	Identity bool
}

// As returns the column to read or write as type t.
func (c Column) As(t Type) Column {
	c.Type, c.Exact = t, true
	return c
}

// Type is the engine-neutral form of a column's values, as Scan returns
// them and Load and Update take them. NULL is nil whatever the type.
type Type int

// Types, each with its Go form.
const (
	// TypeUnknown is a type no engine here converts; a column of it is
	// refused.
	TypeUnknown Type = iota
	// TypeText is a string.
	TypeText
	// TypeBytes is a []byte.
	TypeBytes
	// TypeInt is an int64.
	TypeInt
	// TypeBool is a bool.
	TypeBool
	// TypeDecimal is a string holding an exact decimal ("1500.00"), as
	// stored: never a float.
	TypeDecimal
	// TypeTime is a time.Time in UTC.
	TypeTime
	// TypeJSON is a string of JSON text (on SQLite, stored as text or in
	// SQLite's binary JSON).
	TypeJSON
	// TypeTextList is a string holding a JSON array of strings
	// (PostgreSQL text[]).
	TypeTextList
	// TypeJSONList is a string holding a JSON array (PostgreSQL jsonb[]).
	TypeJSONList
	// TypeBits is an int64: a bit string read as an unsigned number
	// (PostgreSQL bit(n), n <= 63).
	TypeBits
	// TypeDate is a string holding a calendar day, YYYY-MM-DD (PostgreSQL
	// date; on SQLite, text in that form).
	TypeDate
)

var typeNames = [...]string{"unknown", "text", "bytes", "int", "bool", "decimal", "time", "json", "text list", "json list", "bits", "date"}

// String names the type, for errors.
func (t Type) String() string {
	if t < 0 || int(t) >= len(typeNames) {
		return fmt.Sprintf("Type(%d)", int(t))
	}
	return typeNames[t]
}

// Scan selects rows of a table.
type Scan struct {
	Table string
	// Cols are read, each as its Type.
	Cols []Column
	// Lengths follow Cols in each row: the length in bytes of each of
	// these columns' values (0 for NULL), as an int64, read without the
	// values.
	Lengths []Column
	// Key, with After or Limit, pages through the table in key order:
	// the rows whose key is greater than After (from the first when nil),
	// at most Limit of them (all when 0).
	Key   []Column
	After []any
	Limit int
	// Match, when set, keeps the rows where one of its columns holds one
	// of its needles; it does not go with Limit.
	Match *Match
	// In, when set, keeps the rows whose column holds one of its values.
	In *In
}

// Match keeps the rows in which one of Cols contains one of Needles,
// compared without regard to ASCII case: in text, in bytes, and in the
// text of JSON.
type Match struct {
	Cols    []Column
	Needles []string
}

// In keeps the rows whose column Col holds one of Values.
type In struct {
	Col    Column
	Values []any
}

// Update changes columns of rows found by their key.
type Update struct {
	Table string
	Key   []Column
	Set   []Column
}

// Identity is the last value an identity column handed out.
type Identity struct {
	Table, Column string
	Last          int64
}

// BooksHaver is a store that gives raw access to its tables.
type BooksHaver interface {
	Books() Books
}

// BooksOf returns the raw table access of a store.
func BooksOf(x any) (Books, error) {
	h, ok := x.(BooksHaver)
	if !ok {
		return nil, fmt.Errorf("engine: %T gives no access to its tables", x)
	}
	return h.Books(), nil
}

// TimeOf returns v, a value read as TypeTime, or the zero time for NULL.
func TimeOf(v any) time.Time {
	t, _ := v.(time.Time)
	return t
}
