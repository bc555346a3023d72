package books

import (
	"cmp"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"slices"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/reconcilehq/reconcile/ledger"
	"github.com/reconcilehq/reconcile/ledger/engine"
)

// ErrEraseKey reports an erasure without a secret key, or with one too
// short to keep tokens from being guessed.
var ErrEraseKey = errors.New("books: erase needs a secret key of at least 16 bytes")

// MinEraseKey is the shortest key Erase takes.
const MinEraseKey = 16

// EraseParams ask to erase a person from the books.
type EraseParams struct {
	// Customer is the person's phone number or e-mail address.
	Customer string
	// Actor is who asked for the erasure; Reason says why (optional).
	Actor, Reason string
	// Key is the secret the token is computed with: the same key gives
	// the same person the same token.
	Key []byte
	// Now is when; default time.Now.
	Now time.Time
	// DryRun finds and counts, and changes and records nothing.
	DryRun bool
}

// Erasure is what Erase did.
type Erasure struct {
	// Token replaced the person's identifiers.
	Token string
	// Forms are how many ways of writing them were searched for.
	Forms  int
	At     time.Time
	DryRun bool
	// Changed counts the values replaced, per table and column.
	Changed []ColumnCount
	// Renamed counts the findings whose id was derived from an intent
	// key or transaction id that named the person, given the id derived
	// from the erased ones so that later runs still recognise them.
	Renamed int
}

// ColumnCount is how many values of one column changed.
type ColumnCount struct {
	Table, Column string
	Rows          int64
}

// Values counts the values replaced.
func (e *Erasure) Values() int64 {
	var n int64
	for _, c := range e.Changed {
		n += c.Rows
	}
	return n
}

// WriteText writes what was erased, column by column.
func (e *Erasure) WriteText(w io.Writer) error {
	verb, now := "erased", "is now"
	if e.DryRun {
		verb, now = "would erase (dry run, nothing changed)", "would be"
	}
	fmt.Fprintf(w, "%s: %d values in %d columns, %d forms searched; the person %s %s\n",
		verb, e.Values(), len(e.Changed), e.Forms, now, e.Token)
	if e.Renamed > 0 {
		fmt.Fprintf(w, "%d finding(s) renamed: their evidence named the person\n", e.Renamed)
	}
	if len(e.Changed) == 0 {
		return nil
	}
	fmt.Fprintln(w)
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
	fmt.Fprintf(tw, "TABLE\tCOLUMN\tVALUES\n")
	for _, c := range e.Changed {
		fmt.Fprintf(tw, "%s\t%s\t%d\n", c.Table, c.Column, c.Rows)
	}
	return tw.Flush()
}

// errDryRun rolls a dry run back.
var errDryRun = errors.New("dry run")

// Erase replaces a person's identifiers everywhere in the books with a
// one-way token (Subject.Token): every form of their phone number or
// e-mail address (Subject), in every text, bytes and JSON column of every
// table, in the middle of a value too (a CheckoutRequestID that ends in
// the payer's number, a raw callback body, a River job's arguments). JSON
// stays JSON: a number that was the phone number becomes the token as a
// string. Amounts, times and integer ids stay. Because the same text is
// replaced the same way everywhere, keys that held it still join; a
// finding whose id derives from such a key is renamed to the id derived
// from the erased key, everywhere it is named. Before committing, the
// books are searched again and the erasure fails if any form is left. The
// erasure is recorded (table erasures) with its actor, reason, time and
// counts, under the token, in the same transaction.
func Erase(ctx context.Context, store ledger.Store, p EraseParams) (*Erasure, error) {
	if len(p.Key) < MinEraseKey {
		return nil, ErrEraseKey
	}
	if strings.TrimSpace(p.Actor) == "" {
		return nil, errors.New("books: erase: say who asks for it (actor)")
	}
	sub, err := ParseSubject(p.Customer)
	if err != nil {
		return nil, err
	}
	if p.Now.IsZero() {
		p.Now = time.Now()
	}
	b, err := engine.BooksOf(store)
	if err != nil {
		return nil, fmt.Errorf("books: erase: %w", err)
	}
	ts, err := b.Tables(ctx)
	if err != nil {
		return nil, err
	}
	rec, ok := find(ts, "erasures")
	if !ok {
		return nil, errors.New("books: erase: the books have no erasures table: run `reconcile migrate`")
	}
	token := sub.Token(p.Key)
	out := &Erasure{Token: token, Forms: len(sub.Forms), At: p.Now.UTC(), DryRun: p.DryRun}
	err = b.Write(ctx, func(w engine.Writer) error {
		r := newReplacer(sub, token)
		renamed, err := renameFindings(ctx, w, ts, r)
		if err != nil {
			return err
		}
		out.Renamed = renamed
		counts := map[string]int64{}
		for _, t := range ts {
			cs, err := eraseTable(ctx, w, t, r)
			if err != nil {
				return fmt.Errorf("books: erase: table %s: %w", t.Name, err)
			}
			for _, c := range cs {
				out.Changed = append(out.Changed, c)
				counts[c.Table+"."+c.Column] = c.Rows
			}
		}
		if err := searchAgain(ctx, w, ts, newReplacer(sub, token)); err != nil {
			return err
		}
		if p.DryRun {
			return errDryRun
		}
		return record(ctx, w, rec, token, r.text(p.Actor), r.text(p.Reason), out.At, counts)
	})
	if err != nil && !errors.Is(err, errDryRun) {
		return nil, err
	}
	slices.SortFunc(out.Changed, func(a, b ColumnCount) int {
		return cmp.Or(cmp.Compare(a.Table, b.Table), cmp.Compare(a.Column, b.Column))
	})
	return out, nil
}

// searchable are the columns that can hold an identifier: text, bytes and
// JSON of every kind.
func searchable(t engine.Table) []engine.Column {
	var out []engine.Column
	for _, c := range t.Columns {
		if c.Generated {
			continue
		}
		switch c.Type {
		case engine.TypeText, engine.TypeBytes, engine.TypeJSON, engine.TypeTextList, engine.TypeJSONList:
			out = append(out, c)
		}
	}
	return out
}

// replaced is v, of column c, after r.
func replaced(c engine.Column, v any, r *replacer) any {
	switch x := v.(type) {
	case string:
		json := c.Type == engine.TypeJSON || c.Type == engine.TypeTextList || c.Type == engine.TypeJSONList
		return r.value(x, json)
	case []byte:
		s := string(x)
		if out := r.value(s, false); out != s {
			return []byte(out)
		}
	}
	return v
}

// eraseTable replaces in every row of t that holds a match.
func eraseTable(ctx context.Context, w engine.Writer, t engine.Table, r *replacer) ([]ColumnCount, error) {
	cands := searchable(t)
	if len(cands) == 0 {
		return nil, nil
	}
	var key []engine.Column
	for _, k := range t.Key {
		c, _ := t.Column(k)
		key = append(key, c)
	}
	changes, err := eraseChanges(ctx, w, t, key, cands, r)
	if err != nil {
		return nil, err
	}
	if len(changes) > 0 && len(key) == 0 {
		return nil, errors.New("it has no primary key to change its rows by")
	}
	// One statement per set of columns that changed.
	groups := map[string][]eraseChange{}
	var order []string
	counts := make([]int64, len(cands))
	for _, ch := range changes {
		sig := fmt.Sprint(ch.set)
		if _, ok := groups[sig]; !ok {
			order = append(order, sig)
		}
		groups[sig] = append(groups[sig], ch)
		for _, i := range ch.set {
			counts[i]++
		}
	}
	for _, sig := range order {
		if err := writeChanges(ctx, w, t, key, cands, groups[sig]); err != nil {
			return nil, err
		}
	}
	var out []ColumnCount
	for i, n := range counts {
		if n > 0 {
			out = append(out, ColumnCount{Table: t.Name, Column: cands[i].Name, Rows: n})
		}
	}
	return out, nil
}

// eraseChange is a row to change: its key and searchable values (row, the
// new values in place) and the positions among the searchable columns of
// those that changed (set).
type eraseChange struct {
	row []any
	set []int
}

// eraseChanges scans the rows of t whose searchable columns cands hold one
// of r's needles and returns those that replacing the needles changes.
func eraseChanges(ctx context.Context, w engine.Writer, t engine.Table, key, cands []engine.Column, r *replacer) ([]eraseChange, error) {
	var changes []eraseChange
	err := w.Scan(ctx, engine.Scan{Table: t.Name, Cols: append(slices.Clone(key), cands...),
		Match: &engine.Match{Cols: cands, Needles: r.needles()}}, func(row []any) error {
		ch := eraseChange{row: slices.Clone(row)}
		for i, c := range cands {
			v := row[len(key)+i]
			if v == nil {
				continue
			}
			nv := replaced(c, v, r)
			if !equalValue(nv, v) {
				ch.row[len(key)+i] = nv
				ch.set = append(ch.set, i)
			}
		}
		if len(ch.set) > 0 {
			changes = append(changes, ch)
		}
		return nil
	})
	return changes, err
}

// writeChanges writes the changes g, which all change the same columns, in
// one statement, and fails unless every row changed.
func writeChanges(ctx context.Context, w engine.Writer, t engine.Table, key, cands []engine.Column, g []eraseChange) error {
	set := make([]engine.Column, len(g[0].set))
	for i, j := range g[0].set {
		set[i] = cands[j]
	}
	rows := make([][]any, len(g))
	for i, ch := range g {
		// The key as it was finds the row; the new values follow.
		row := slices.Clone(ch.row[:len(key)])
		for _, j := range ch.set {
			row = append(row, ch.row[len(key)+j])
		}
		rows[i] = row
	}
	n, err := w.Update(ctx, engine.Update{Table: t.Name, Key: key, Set: set}, rows)
	if err != nil {
		return err
	}
	if n != int64(len(rows)) {
		return fmt.Errorf("%d of %d rows changed", n, len(rows))
	}
	return nil
}

func equalValue(a, b any) bool {
	switch x := a.(type) {
	case string:
		y, ok := b.(string)
		return ok && x == y
	case []byte:
		y, ok := b.([]byte)
		return ok && string(x) == string(y)
	}
	return a == b
}

// renameFindings finds the findings whose intent key or transaction ids
// name the person and whose id derives from them, and has r rename each id
// to the one derived from the erased key and ids.
func renameFindings(ctx context.Context, w engine.Writer, ts []engine.Table, r *replacer) (int, error) {
	t, ok := find(ts, "findings")
	if !ok {
		return 0, nil
	}
	var cols []engine.Column
	for _, n := range []string{"id", "kind", "intent_key", "provider_txn_ids"} {
		c, ok := t.Column(n)
		if !ok {
			return 0, fmt.Errorf("books: erase: no column findings.%s", n)
		}
		cols = append(cols, c)
	}
	cols[0], cols[1], cols[2] = cols[0].As(engine.TypeText), cols[1].As(engine.TypeText), cols[2].As(engine.TypeText)
	cols[3] = cols[3].As(engine.TypeJSON)
	renames := map[string]string{}
	err := w.Scan(ctx, engine.Scan{Table: "findings", Cols: cols, Match: &engine.Match{Cols: cols[2:], Needles: r.needles()}},
		func(row []any) error {
			id, _ := row[0].(string)
			kind, _ := row[1].(string)
			key, _ := row[2].(string)
			raw, _ := row[3].(string)
			var txns []string
			if err := json.Unmarshal([]byte(raw), &txns); err != nil {
				return fmt.Errorf("books: erase: finding %s: transactions %q: %w", id, raw, err)
			}
			if ledger.FindingID(ledger.Kind(kind), key, txns) != id {
				return nil // not derived from them: it stays
			}
			erased := make([]string, len(txns))
			for i, x := range txns {
				erased[i] = r.text(x)
			}
			if nid := ledger.FindingID(ledger.Kind(kind), r.text(key), erased); nid != id {
				renames[id] = nid
			}
			return nil
		})
	if err != nil {
		return 0, err
	}
	ids := make([]string, 0, len(renames))
	for id := range renames {
		ids = append(ids, id)
	}
	slices.Sort(ids)
	for _, id := range ids {
		r.rename(id, renames[id])
	}
	return len(renames), nil
}

// searchAgain fails if a form of the person is left anywhere.
func searchAgain(ctx context.Context, w engine.Writer, ts []engine.Table, r *replacer) error {
	for _, t := range ts {
		cands := searchable(t)
		if len(cands) == 0 {
			continue
		}
		var left []string
		err := w.Scan(ctx, engine.Scan{Table: t.Name, Cols: cands, Match: &engine.Match{Cols: cands, Needles: r.needles()}},
			func(row []any) error {
				for i, v := range row {
					var s string
					switch x := v.(type) {
					case string:
						s = x
					case []byte:
						s = string(x)
					}
					if r.contains(s) && !slices.Contains(left, cands[i].Name) {
						left = append(left, cands[i].Name)
					}
				}
				return nil
			})
		if err != nil {
			return fmt.Errorf("books: erase: search again: %w", err)
		}
		if len(left) > 0 {
			return fmt.Errorf("books: erase: the person is still named in %s.%s after replacing: nothing was changed",
				t.Name, strings.Join(left, ", "))
		}
	}
	return nil
}

// record inserts the erasure's row.
func record(ctx context.Context, w engine.Writer, t engine.Table, token, actor, reason string, at time.Time,
	counts map[string]int64) error {
	b, err := json.Marshal(counts)
	if err != nil {
		return err
	}
	var cols []engine.Column
	for _, c := range []struct {
		name string
		typ  engine.Type
	}{{"subject_token", engine.TypeText}, {"actor", engine.TypeText}, {"reason", engine.TypeText},
		{"at", engine.TypeTime}, {"counts", engine.TypeJSON}} {
		col, ok := t.Column(c.name)
		if !ok {
			return fmt.Errorf("books: erase: no column erasures.%s", c.name)
		}
		cols = append(cols, col.As(c.typ))
	}
	row := []any{token, actor, reason, at, string(b)}
	done := false
	_, err = w.Load(ctx, "erasures", cols, func() ([]any, error) {
		if done {
			return nil, nil
		}
		done = true
		return row, nil
	})
	if err != nil {
		return fmt.Errorf("books: erase: record: %w", err)
	}
	return nil
}
