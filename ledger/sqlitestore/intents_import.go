package sqlitestore

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"sync"

	"github.com/reconcilehq/reconcile/ledger"
)

// importChunk is how many rows one multi-row insert writes: large enough
// that a statement's fixed cost vanishes, small enough to stay far below
// SQLite's limit on bound parameters.
const importChunk = 256

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

func (imp *intentImport) flush(ctx context.Context, batch []ledger.ImportIntent) error {
	if len(batch) == 0 {
		return nil
	}
	args := make([]any, 0, len(batch)*intentInsertCols)
	for _, r := range batch {
		meta, err := encodeMeta(r.Metadata)
		if err != nil {
			return ledger.Wrap("import intent", r.Key, err)
		}
		args = append(args, r.Key, string(r.Kind), r.RefundOf, r.Provider, r.Amount.Text(), r.Amount.Currency, r.Customer, r.Reference, meta,
			string(r.State), ts(r.CreatedAt), ts(r.UpdatedAt))
	}
	rows, err := imp.e.query(ctx, insertIntentsSQL(len(batch)), args...)
	if err != nil {
		return err
	}
	created := make(map[string]bool, len(batch))
	for rows.Next() {
		var key string
		if err := rows.Scan(&key); err != nil {
			rows.Close()
			return err
		}
		created[key] = true
	}
	if err := rows.Err(); err != nil {
		return err
	}
	var (
		check   []ledger.ImportIntent
		pending = map[ledger.IntentKind][]string{}
		refunds []any
	)
	for _, r := range batch {
		if !created[r.Key] {
			check = append(check, r)
			continue
		}
		delete(created, r.Key) // a repeat of the key in this chunk is checked, not created
		imp.res.Created++
		if r.IsRefund() {
			refunds = append(refunds, r.Line, r.Key, r.RefundOf)
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
	if pending, err = imp.check(ctx, check, pending); err != nil {
		return err
	}
	if len(refunds) > 0 {
		if _, err := imp.e.exec(ctx, multiRow(2, len(refunds)/3, `INSERT INTO temp.intent_import_refunds (line, key, refund_of) VALUES `,
			`(?,?,?)`, ``), refunds...); err != nil {
			return err
		}
	}
	for kind, keys := range pending {
		if _, err := imp.e.exec(ctx, `INSERT OR IGNORE INTO temp.intent_import_pending (key, kind) SELECT value, ? FROM json_each(?)`,
			string(kind), jsonList(keys)); err != nil {
			return err
		}
	}
	return nil
}

// check compares rows whose key was already stored with the stored intent;
// it adds to pending the rows that ask for a pending intent still pending.
func (imp *intentImport) check(ctx context.Context, rows []ledger.ImportIntent, pending map[ledger.IntentKind][]string) (map[ledger.IntentKind][]string, error) {
	if len(rows) == 0 {
		return pending, nil
	}
	keys := make([]string, len(rows))
	for i, r := range rows {
		keys[i] = r.Key
	}
	res, err := imp.e.query(ctx, `SELECT `+intentCols+` FROM intents WHERE key IN (SELECT value FROM json_each(?))`, jsonList(keys))
	if err != nil {
		return pending, err
	}
	stored, err := collect(res, func(s scanner) (ledger.Intent, error) { return scanIntent(s) })
	if err != nil {
		return pending, err
	}
	byKey := make(map[string]ledger.Intent, len(stored))
	for _, in := range stored {
		byKey[in.Key] = in
	}
	for _, r := range rows {
		have, ok := byKey[r.Key]
		switch {
		case !ok:
			return pending, fmt.Errorf("intent %q neither inserted nor stored", r.Key)
		case have.Same(r.IntentParams):
			imp.res.Existing++
			if r.State == ledger.StatePending && have.State == ledger.StatePending {
				pending[r.Kind] = append(pending[r.Kind], r.Key)
			}
		default:
			imp.res.Refused = append(imp.res.Refused, ledger.RefusedIntent{Line: r.Line,
				Err: &ledger.KeyReuseError{Key: r.Key, Existing: have.IntentParams, Requested: r.IntentParams}})
		}
	}
	return pending, nil
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
		`(?,?,?,?,?,?,?,?,?,?,?,?)`, ` ON CONFLICT (key) DO NOTHING RETURNING key`)
}

func insertAttemptsSQL(n int) string {
	return multiRow(1, n, `INSERT INTO attempts (intent_key, number, claim_token, provider_ref, outcome, started_at) VALUES `,
		`(?,?,0,?,'imported',?)`, ``)
}
