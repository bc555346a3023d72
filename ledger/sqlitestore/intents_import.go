package sqlitestore

import (
	"context"
	"errors"
	"maps"
	"slices"
	"strings"
	"sync"

	"github.com/reconcilehq/reconcile/ledger"
)

// importChunk is how many rows one multi-row insert writes: large enough
// that a statement's fixed cost vanishes, small enough to stay far below
// SQLite's limit on bound parameters.
const importChunk = 1024

// ImportIntents writes the rows a chunk at a time inside one transaction
// (its own when not in one): a multi-row insert of the chunk's intents (ON
// CONFLICT DO NOTHING), one read of the stored intents its other rows name,
// and multi-row inserts of the new intents' imported attempts. Statements
// are prepared once per transaction and closed with it.
func (e executor) ImportIntents(ctx context.Context, p ledger.ImportIntentsParams) (ledger.ImportIntentsResult, error) {
	var (
		res ledger.ImportIntentsResult
		err error
	)
	if e.tx != nil {
		res, err = e.importIntents(ctx, p)
	} else {
		err = e.atomically(ctx, func(x executor) error {
			res, err = x.importIntents(ctx, p)
			return err
		})
	}
	return res, ledger.Wrap("import intents", "", translate(err))
}

func (e executor) importIntents(ctx context.Context, p ledger.ImportIntentsParams) (ledger.ImportIntentsResult, error) {
	imp := &intentImport{e: e, p: p}
	if _, err := e.exec(ctx, `DROP TABLE IF EXISTS temp.intent_import_pending`); err != nil {
		return imp.res, err
	}
	if _, err := e.exec(ctx, `CREATE TEMP TABLE intent_import_pending (key TEXT PRIMARY KEY, kind TEXT NOT NULL)`); err != nil {
		return imp.res, err
	}
	if _, err := e.exec(ctx, `DROP TABLE IF EXISTS temp.intent_import_refunds`); err != nil {
		return imp.res, err
	}
	if _, err := e.exec(ctx, `CREATE TEMP TABLE intent_import_refunds (line INTEGER NOT NULL, key TEXT PRIMARY KEY, refund_of TEXT NOT NULL)`); err != nil {
		return imp.res, err
	}
	batch := make([]ledger.ImportIntent, 0, importChunk)
	for r := range p.Rows {
		imp.res.Rows++
		n, err := r.NewIntent.Normalize()
		if err != nil {
			var fe *ledger.FieldError
			if !errors.As(err, &fe) {
				return imp.res, err
			}
			imp.res.Refused = append(imp.res.Refused, ledger.RefusedIntent{Line: r.Line, Err: err})
			continue
		}
		r.NewIntent = n
		batch = append(batch, r)
		if len(batch) == importChunk {
			if err := imp.flush(ctx, batch); err != nil {
				return imp.res, err
			}
			batch = batch[:0]
		}
	}
	if err := imp.flush(ctx, batch); err != nil {
		return imp.res, err
	}
	if err := imp.flushAttempts(ctx); err != nil {
		return imp.res, err
	}
	if err := imp.checkRefunds(ctx); err != nil {
		return imp.res, err
	}
	if err := imp.sendPending(ctx); err != nil {
		return imp.res, err
	}
	if _, err := e.exec(ctx, `DROP TABLE temp.intent_import_refunds`); err != nil {
		return imp.res, err
	}
	_, err := e.exec(ctx, `DROP TABLE temp.intent_import_pending`)
	return imp.res, err
}

// sendPending counts the pending keys of each kind and, when asked and
// nothing was refused, hands them over a page at a time.
func (imp *intentImport) sendPending(ctx context.Context) error {
	for _, k := range []struct {
		kind ledger.IntentKind
		fn   func(context.Context, []string) error
		n    *int
	}{{ledger.IntentCharge, imp.p.Pending, &imp.res.Pending}, {ledger.IntentRefund, imp.p.PendingRefunds, &imp.res.PendingRefunds}} {
		if err := imp.e.queryRow(ctx, `SELECT count(*) FROM temp.intent_import_pending WHERE kind = ?`, string(k.kind)).Scan(k.n); err != nil {
			return err
		}
		if k.fn == nil || len(imp.res.Refused) > 0 {
			continue
		}
		if err := imp.sendKind(ctx, k.kind, k.fn); err != nil {
			return err
		}
	}
	return nil
}

func (imp *intentImport) sendKind(ctx context.Context, kind ledger.IntentKind, fn func(context.Context, []string) error) error {
	var last int64
	for {
		rows, err := imp.e.query(ctx, `SELECT rowid, key FROM temp.intent_import_pending WHERE kind = ? AND rowid > ? ORDER BY rowid LIMIT ?`,
			string(kind), last, pendingPage)
		if err != nil {
			return err
		}
		var keys []string
		for rows.Next() {
			var key string
			if err := rows.Scan(&last, &key); err != nil {
				rows.Close()
				return err
			}
			keys = append(keys, key)
		}
		if err := rows.Err(); err != nil {
			return err
		}
		if len(keys) == 0 {
			return nil
		}
		if err := fn(ctx, keys); err != nil {
			return err
		}
	}
}

// pendingPage is how many pending keys one call of Pending gets.
const pendingPage = 5000

type intentImport struct {
	e        executor
	p        ledger.ImportIntentsParams
	res      ledger.ImportIntentsResult
	attempts []any // bound values of attempts not yet written, 4 per attempt
}

// flush writes one chunk. The transaction excludes every other writer, so a
// probe of the keys the chunk names, made first, stays true: the intents it
// finds are compared with their rows, and the rest are inserted by a plain
// multi-row insert in key order. A key the chunk names twice is created by
// its first row and compared by the others, as if they came one by one.
func (imp *intentImport) flush(ctx context.Context, batch []ledger.ImportIntent) error {
	if len(batch) == 0 {
		return nil
	}
	keys := make([]string, 0, len(batch))
	for _, r := range batch {
		keys = append(keys, r.Key)
	}
	slices.Sort(keys)
	keys = slices.Compact(keys)
	byKey, err := imp.stored(ctx, keys)
	if err != nil {
		return err
	}
	var (
		create  []int // positions of the rows that create their intent
		check   []ledger.ImportIntent
		repeats []string // keys created by this chunk and named again
		created = make(map[string]bool, len(batch))
	)
	for i, r := range batch {
		switch _, ok := byKey[r.Key]; {
		case ok:
			check = append(check, r)
		case created[r.Key]:
			check = append(check, r)
			repeats = append(repeats, r.Key)
		default:
			created[r.Key] = true
			create = append(create, i)
		}
	}
	if err := imp.insert(ctx, batch, create); err != nil {
		return err
	}
	var (
		pending = map[ledger.IntentKind][]string{}
		refunds []ledger.ImportIntent
	)
	for _, i := range create {
		r := batch[i]
		imp.res.Created++
		if r.IsRefund() {
			refunds = append(refunds, r)
		}
		if r.State == ledger.StatePending {
			pending[r.Kind] = append(pending[r.Kind], r.Key)
		}
		for i, ref := range r.ProviderRefs {
			imp.attempts = append(imp.attempts, r.Key, i+1, ref, ts(r.CreatedAt))
			if len(imp.attempts) == importChunk*attemptInsertCols {
				if err := imp.flushAttempts(ctx); err != nil {
					return err
				}
			}
		}
	}
	if len(repeats) > 0 {
		// Read back as stored, like the intents of earlier chunks.
		slices.Sort(repeats)
		again, err := imp.stored(ctx, slices.Compact(repeats))
		if err != nil {
			return err
		}
		maps.Copy(byKey, again)
	}
	imp.check(check, byKey, pending)
	err = chunks(refunds, func(part []ledger.ImportIntent) error {
		args := make([]any, 0, 3*len(part))
		for _, r := range part {
			args = append(args, r.Line, r.Key, r.RefundOf)
		}
		_, err := imp.e.exec(ctx, multiRow(2, len(part), `INSERT INTO temp.intent_import_refunds (line, key, refund_of) VALUES `,
			`(?,?,?)`, ``), args...)
		return err
	})
	if err != nil {
		return err
	}
	for kind, keys := range pending {
		if _, err := imp.e.exec(ctx, `INSERT OR IGNORE INTO temp.intent_import_pending (key, kind) SELECT value, ? FROM json_each(?)`,
			string(kind), jsonList(keys)); err != nil {
			return err
		}
	}
	return nil
}

// stored returns the stored intents of the given distinct keys.
func (imp *intentImport) stored(ctx context.Context, keys []string) (map[string]ledger.Intent, error) {
	byKey := map[string]ledger.Intent{}
	err := chunks(keys, func(part []string) error {
		args := make([]any, len(part))
		for i, k := range part {
			args[i] = k
		}
		res, err := imp.e.query(ctx, storedIntentsSQL(len(part)), args...)
		if err != nil {
			return err
		}
		stored, err := collect(res, func(s scanner) (ledger.Intent, error) { return scanIntent(s) })
		if err != nil {
			return err
		}
		for _, in := range stored {
			byKey[in.Key] = in
		}
		return nil
	})
	return byKey, err
}

// insert inserts the intents of the rows at the given positions, in key
// order.
func (imp *intentImport) insert(ctx context.Context, batch []ledger.ImportIntent, rows []int) error {
	if len(rows) == 0 {
		return nil
	}
	rows = slices.Clone(rows)
	slices.SortFunc(rows, func(a, b int) int { return strings.Compare(batch[a].Key, batch[b].Key) })
	args := make([]any, 0, min(len(rows), fastChunk)*intentInsertCols)
	return chunks(rows, func(part []int) error {
		args = args[:0]
		for _, i := range part {
			r := batch[i]
			meta, err := encodeMeta(r.Metadata)
			if err != nil {
				return ledger.Wrap("import intent", r.Key, err)
			}
			args = append(args, r.Key, string(r.Kind), r.RefundOf, r.Provider, r.Amount.Text(), r.Amount.Currency, r.Customer, r.Reference, meta,
				string(r.State), ts(r.CreatedAt), ts(r.UpdatedAt))
		}
		_, err := imp.e.exec(ctx, insertIntentsSQL(len(part)), args...)
		return err
	})
}

// check compares rows whose key is stored with the stored intent; it adds
// to pending the rows that ask for a pending intent still pending.
func (imp *intentImport) check(rows []ledger.ImportIntent, byKey map[string]ledger.Intent, pending map[ledger.IntentKind][]string) {
	for _, r := range rows {
		have := byKey[r.Key]
		if have.Same(r.IntentParams) {
			imp.res.Existing++
			if r.State == ledger.StatePending && have.State == ledger.StatePending {
				pending[r.Kind] = append(pending[r.Kind], r.Key)
			}
			continue
		}
		imp.res.Refused = append(imp.res.Refused, ledger.RefusedIntent{Line: r.Line,
			Err: &ledger.KeyReuseError{Key: r.Key, Existing: have.IntentParams, Requested: r.IntentParams}})
	}
}

func (imp *intentImport) flushAttempts(ctx context.Context) error {
	if len(imp.attempts) == 0 {
		return nil
	}
	_, err := imp.e.exec(ctx, insertAttemptsSQL(len(imp.attempts)/attemptInsertCols), imp.attempts...)
	imp.attempts = imp.attempts[:0]
	return err
}

const (
	intentInsertCols  = 12
	attemptInsertCols = 4
)

var (
	insertSQLMu sync.Mutex
	insertSQL   = map[[2]int]string{}
)

// multiRow returns (and remembers) head followed by n groups of row.
func multiRow(kind, n int, head, row, tail string) string {
	insertSQLMu.Lock()
	defer insertSQLMu.Unlock()
	if s, ok := insertSQL[[2]int{kind, n}]; ok {
		return s
	}
	var b strings.Builder
	b.WriteString(head)
	for i := range n {
		if i > 0 {
			b.WriteByte(',')
		}
		b.WriteString(row)
	}
	b.WriteString(tail)
	insertSQL[[2]int{kind, n}] = b.String()
	return b.String()
}

func insertIntentsSQL(n int) string {
	return multiRow(0, n, `INSERT INTO intents (key, kind, refund_of, provider, amount, currency, customer, reference, metadata, state, created_at, updated_at) VALUES `,
		`(?,?,?,?,?,?,?,?,?,?,?,?)`, ``)
}

// storedIntentsSQL reads the stored intents of n keys, each looked up by
// the primary key.
func storedIntentsSQL(n int) string {
	return multiRow(6, n, `WITH k(key) AS (VALUES `, `(?)`, `) SELECT `+prefixed("i.", intentCols)+` FROM k CROSS JOIN intents i ON i.key = k.key`)
}

func insertAttemptsSQL(n int) string {
	return multiRow(1, n, `INSERT INTO attempts (intent_key, number, claim_token, provider_ref, outcome, started_at) VALUES `,
		`(?,?,0,?,'imported',?)`, ``)
}
