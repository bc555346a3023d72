package sqlitestore

import (
	"context"
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

// ImportIntents reads the rows a chunk at a time on a goroutine of its own
// (so that reading the next chunk overlaps writing this one) and writes
// each chunk inside one transaction (its own when not in one): a multi-row
// insert of the chunk's intents, one read of the stored intents its other
// rows name, and multi-row inserts of the new intents' imported attempts.
// A chunk after a chunk that found none of its keys stored is written
// without that read first, inside a savepoint: a key stored after all makes
// the insert fail, and the chunk is rolled back, read and written again.
// Statements are prepared once per transaction and closed with it.
func (e executor) ImportIntents(ctx context.Context, p ledger.ImportIntentsParams) (ledger.ImportIntentsResult, error) {
	return e.importIntentsWith(ctx, p, importOptions{chunk: importChunk})
}

func (e executor) importIntentsWith(ctx context.Context, p ledger.ImportIntentsParams, opt importOptions) (ledger.ImportIntentsResult, error) {
	var (
		res ledger.ImportIntentsResult
		err error
	)
	if e.tx != nil {
		res, err = e.importIntents(ctx, p, opt)
	} else {
		err = e.atomically(ctx, func(x executor) error {
			res, err = x.importIntents(ctx, p, opt)
			return err
		})
	}
	return res, ledger.Wrap("import intents", "", translate(err))
}

// importOptions are the knobs of an import that the tests turn.
type importOptions struct {
	// chunk is how many rows are read and written at a time.
	chunk int
	// probe reads the stored intents of every chunk's keys before writing
	// it.
	probe bool
	// guessFailed, when set, is told how many chunks written without that
	// read met a stored key.
	guessFailed *int
}

func (e executor) importIntents(ctx context.Context, p ledger.ImportIntentsParams, opt importOptions) (ledger.ImportIntentsResult, error) {
	imp := &intentImport{e: e, p: p, opt: opt, guess: !opt.probe}
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
	rd := ledger.ReadImportIntents(p.Rows, opt.chunk, newImportRow)
	defer rd.Stop()
	for {
		batch, ok, err := rd.Next(ctx)
		if err != nil {
			return imp.res, err
		}
		if !ok {
			break
		}
		if err := imp.flush(ctx, batch); err != nil {
			return imp.res, err
		}
		rd.Release(batch)
	}
	rd.Stop()
	if opt.guessFailed != nil {
		*opt.guessFailed = imp.guessFailed
	}
	rows, refused, err := rd.Result()
	imp.res.Rows = rows
	imp.res.Refused = append(refused, imp.res.Refused...)
	if err != nil {
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
	_, err = e.exec(ctx, `DROP TABLE temp.intent_import_pending`)
	return imp.res, err
}

// importRow is one valid row of an import, normalised, with the values
// its intent is inserted with: made on the reading goroutine.
type importRow struct {
	ledger.ImportIntent
	vals [intentInsertCols]any
}

func newImportRow(r ledger.ImportIntent) (importRow, error) {
	meta, err := encodeMeta(r.Metadata)
	if err != nil {
		return importRow{}, ledger.Wrap("import intent", r.Key, err)
	}
	created := any(ts(r.CreatedAt))
	updated := created
	if !r.UpdatedAt.Equal(r.CreatedAt) {
		updated = ts(r.UpdatedAt)
	}
	return importRow{ImportIntent: r, vals: [intentInsertCols]any{r.Key, string(r.Kind), r.RefundOf, r.Provider,
		r.Amount.Text(), r.Amount.Currency, r.Customer, r.Reference, meta, string(r.State), created, updated,
		nullTS(r.DueAt), nullAmount(r.Tolerance), ledger.NormalReference(r.Reference), r.Account}}, nil
}

// key and created are the row's bound key and creation time, shared by
// its attempts.
func (r *importRow) key() any     { return r.vals[0] }
func (r *importRow) created() any { return r.vals[10] }

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
	opt      importOptions
	res      ledger.ImportIntentsResult
	attempts []any // bound values of attempts not yet written, 4 per attempt
	// guess is whether the next chunk is written without reading the
	// stored intents of its keys first (none of the last chunk's was);
	// guessFailed counts the chunks where that met a stored key.
	guess       bool
	guessFailed int
}

// flush writes one chunk. The transaction excludes every other writer, so a
// probe of the keys the chunk names, made first, stays true: the intents it
// finds are compared with their rows, and the rest are inserted by a plain
// multi-row insert in key order. A key the chunk names twice is created by
// its first row and compared by the others, as if they came one by one.
//
// After a chunk that found none of its keys stored, the chunk is written as
// if the probe found nothing, in a savepoint: a stored key makes the insert
// fail (its primary key), and the chunk is rolled back to the savepoint and
// written again after the probe.
func (imp *intentImport) flush(ctx context.Context, batch []importRow) error {
	if len(batch) == 0 {
		return nil
	}
	if imp.guess {
		ok, err := imp.write(ctx, batch, nil, true)
		if err != nil || ok {
			return err
		}
		imp.guessFailed++
	}
	keys := make([]string, 0, len(batch))
	for i := range batch {
		keys = append(keys, batch[i].Key)
	}
	slices.Sort(keys)
	keys = slices.Compact(keys)
	byKey, err := imp.stored(ctx, keys)
	if err != nil {
		return err
	}
	imp.guess = len(byKey) == 0 && !imp.opt.probe
	_, err = imp.write(ctx, batch, byKey, false)
	return err
}

// write writes the chunk given the stored intents of its keys, byKey. When
// guessed, the intents are inserted in a savepoint, and write returns false
// (having written nothing) if one of their keys is stored.
func (imp *intentImport) write(ctx context.Context, batch []importRow, byKey map[string]ledger.Intent, guessed bool) (bool, error) {
	create, check, repeats := sortOut(batch, byKey)
	// The new intents and their attempts are written in key order: each
	// statement's inserts into the key indexes then go forward.
	sorted := slices.Clone(create)
	slices.SortFunc(sorted, func(a, b int) int { return strings.Compare(batch[a].Key, batch[b].Key) })
	if guessed {
		ok, err := imp.e.unlessStored(ctx, func() error { return imp.insert(ctx, batch, sorted) })
		if err != nil || !ok {
			return false, err
		}
	} else if err := imp.insert(ctx, batch, sorted); err != nil {
		return false, err
	}
	var (
		pending = map[ledger.IntentKind][]string{}
		refunds []*importRow
	)
	for _, i := range create {
		r := &batch[i]
		imp.res.Created++
		if r.IsRefund() {
			refunds = append(refunds, r)
		}
		if r.State == ledger.StatePending {
			pending[r.Kind] = append(pending[r.Kind], r.Key)
		}
	}
	if err := imp.addAttempts(ctx, batch, sorted); err != nil {
		return false, err
	}
	if len(repeats) > 0 {
		// Read back as stored, like the intents of earlier chunks.
		slices.Sort(repeats)
		again, err := imp.stored(ctx, slices.Compact(repeats))
		if err != nil {
			return false, err
		}
		if byKey == nil {
			byKey = again
		} else {
			maps.Copy(byKey, again)
		}
	}
	imp.check(batch, check, byKey, pending)
	if err := imp.noteRefundsAndPending(ctx, refunds, pending); err != nil {
		return false, err
	}
	return true, nil
}

// sortOut sorts the rows of a chunk by what becomes of them, by position:
// create holds the first row of each key not stored (byKey), check the
// rows of keys stored or created earlier in the chunk, and repeats the
// latter keys.
func sortOut(batch []importRow, byKey map[string]ledger.Intent) (create, check []int, repeats []string) {
	created := make(map[string]bool, len(batch))
	for i := range batch {
		r := &batch[i]
		switch _, ok := byKey[r.Key]; {
		case ok:
			check = append(check, i)
		case created[r.Key]:
			check = append(check, i)
			repeats = append(repeats, r.Key)
		default:
			created[r.Key] = true
			create = append(create, i)
		}
	}
	return create, check, repeats
}

// addAttempts adds the attempts of the created rows (sorted: positions in
// key order) to the attempts to insert, inserting them a chunk at a time.
func (imp *intentImport) addAttempts(ctx context.Context, batch []importRow, sorted []int) error {
	for _, i := range sorted {
		r := &batch[i]
		for i, ref := range r.ProviderRefs {
			imp.attempts = append(imp.attempts, r.key(), i+1, ref, r.created())
			if len(imp.attempts) == fastChunk*attemptInsertCols {
				if err := imp.flushAttempts(ctx); err != nil {
					return err
				}
			}
		}
	}
	return nil
}

// noteRefundsAndPending writes the created refunds, for the check at the
// end, and the keys of the pending intents by kind to their temporary
// tables.
func (imp *intentImport) noteRefundsAndPending(ctx context.Context, refunds []*importRow, pending map[ledger.IntentKind][]string) error {
	err := chunks(refunds, func(part []*importRow) error {
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

// insert inserts the intents of the rows at the given positions, which
// are in key order. Binding a value costs about as much as the engine's
// work on it, so the rows without metadata that share the kind, charge
// refunded, provider, account and currency of the first such row bind those once per
// statement; the others bind all their values.
func (imp *intentImport) insert(ctx context.Context, batch []importRow, rows []int) error {
	if len(rows) == 0 {
		return nil
	}
	var (
		common *importRow
		shared = make([]int, 0, len(rows))
		other  []int
	)
	for _, i := range rows {
		r := &batch[i]
		plain := r.vals[8] == nil && r.vals[12] == nil && r.vals[13] == nil // no metadata, due date or tolerance
		if common == nil && plain {
			common = r
		}
		if common != nil && plain && r.Kind == common.Kind && r.RefundOf == common.RefundOf &&
			r.Provider == common.Provider && r.Account == common.Account && r.Amount.Currency == common.Amount.Currency {
			shared = append(shared, i)
		} else {
			other = append(other, i)
		}
	}
	args := make([]any, 0, min(len(rows), fastChunk)*intentInsertCols)
	err := chunks(shared, func(part []int) error {
		args = append(args[:0], common.vals[1], common.vals[2], common.vals[3], common.vals[5], common.vals[15])
		for _, i := range part {
			v := &batch[i].vals
			args = append(args, v[0], v[4], v[6], v[7], v[9], v[10], v[11], v[14])
		}
		_, err := imp.e.exec(ctx, insertSharedIntentsSQL(len(part)), args...)
		return err
	})
	if err != nil {
		return err
	}
	return chunks(other, func(part []int) error {
		args = args[:0]
		for _, i := range part {
			args = append(args, batch[i].vals[:]...)
		}
		_, err := imp.e.exec(ctx, insertIntentsSQL(len(part)), args...)
		return err
	})
}

// check compares the rows at the given positions, whose key is stored,
// with the stored intent; it adds to pending the rows that ask for a
// pending intent still pending.
func (imp *intentImport) check(batch []importRow, rows []int, byKey map[string]ledger.Intent, pending map[ledger.IntentKind][]string) {
	for _, i := range rows {
		r := &batch[i]
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
	intentInsertCols  = 16
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
	return multiRow(0, n, `INSERT OR FAIL INTO intents (key, kind, refund_of, provider, amount, currency, customer, reference, metadata, state, created_at, updated_at, `+
		`due_at, tolerance, ref_norm, account) VALUES `,
		`(?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?)`, ``)
}

// insertSharedIntentsSQL inserts n intents without metadata, due date or
// tolerance whose kind, charge refunded, provider, currency and account are
// the first five parameters; each row binds its key, amount, customer,
// reference, state, creation and update times and the normal form of its
// reference, as anonymous parameters (numbered after the five), which the
// driver binds without looking their names up.
func insertSharedIntentsSQL(n int) string {
	return multiRow(7, n, `INSERT OR FAIL INTO intents (key, kind, refund_of, provider, amount, currency, customer, reference, metadata, state, created_at, updated_at, `+
		`due_at, tolerance, ref_norm, account) `+
		`SELECT column1, ?1, ?2, ?3, column2, ?4, column3, column4, NULL, column5, column6, column7, NULL, NULL, column8, ?5 FROM (VALUES `,
		`(?,?,?,?,?,?,?,?)`, `)`)
}

// storedIntentsSQL reads the stored intents of n keys, each looked up by
// the primary key.
func storedIntentsSQL(n int) string {
	return multiRow(6, n, `WITH k(key) AS (VALUES `, `(?)`, `) SELECT `+prefixed("i.", intentCols)+` FROM k CROSS JOIN intents i ON i.key = k.key`)
}

func insertAttemptsSQL(n int) string {
	return multiRow(1, n, `INSERT OR FAIL INTO attempts (intent_key, number, claim_token, provider_ref, outcome, started_at) VALUES `,
		`(?,?,0,?,'imported',?)`, ``)
}
