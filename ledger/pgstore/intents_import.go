package pgstore

import (
	"cmp"
	"context"
	"encoding/json"
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgtype"
	"github.com/jackc/pgx/v5/pgxpool"
	"github.com/shopspring/decimal"

	"github.com/reconcilehq/reconcile/ledger"
	"github.com/reconcilehq/reconcile/money"
)

// importColumns are the staging table's columns, in COPY order.
var importColumns = []string{"line", "key", "provider", "amount", "currency", "customer", "reference", "metadata",
	"state", "created_at", "updated_at", "provider_refs", "kind", "refund_of", "due_at", "tolerance", "ref_norm", "account"}

// intentCopyColumns and attemptCopyColumns are the columns the direct
// writes of new intents and their imported attempts fill, in COPY order.
var (
	intentCopyColumns = []string{"key", "kind", "refund_of", "provider", "amount", "currency", "customer", "reference",
		"metadata", "state", "created_at", "updated_at", "amount_minor", "due_at", "tolerance", "ref_norm", "account"}
	attemptCopyColumns = []string{"intent_key", "number", "claim_token", "provider_ref", "outcome", "started_at"}
)

// pendingPage is how many pending keys one call of Pending gets.
const pendingPage = 5000

// importBatch is how many rows the import reads ahead and writes at a time:
// the rows it holds in memory are at most two batches.
const importBatch = 10000

// ImportIntents reads the rows a batch at a time (on a goroutine of its
// own, so that reading the next batch overlaps writing this one) and
// writes each batch in a few round trips. The keys of the file are kept in
// a compact set, to tell the first line of a key from its repeats:
//
//   - the stored intents of the batch's keys are read in one statement;
//   - a row whose key is stored is compared with the stored intent: the
//     same request, or refused as key reuse;
//   - the first line of a charge whose key is neither stored nor earlier
//     in the file is new: the new intents and their imported attempts are
//     written with COPY, in key order, inside a savepoint;
//   - every other row (a refund to check against its charge, a key
//     repeated after a line not yet written), and the new rows of a batch
//     whose COPY met a key written meanwhile by another transaction, are
//     staged with COPY in a table that lives until the transaction ends;
//   - the keys whose first line asks for a pending intent are written to a
//     table of their own, to find the pending intents at the end.
//
// The staged rows, when there are any, are then written by a few set-based
// statements: repeated keys set aside, the charges that refunds name
// locked, new intents and their attempts inserted (ON CONFLICT DO NOTHING),
// every staged row compared with the stored intent of its key, and new
// refunds checked against their charges. Outside a transaction it opens
// one of its own.
func (e executor) ImportIntents(ctx context.Context, p ledger.ImportIntentsParams) (ledger.ImportIntentsResult, error) {
	if ptx, ok := e.db.(pgx.Tx); ok {
		return importIntents(ctx, ptx, p)
	}
	pool, ok := e.db.(*pgxpool.Pool)
	if !ok {
		return ledger.ImportIntentsResult{}, fmt.Errorf("ledger: import intents: unsupported executor %T", e.db)
	}
	var res ledger.ImportIntentsResult
	err := pgx.BeginFunc(ctx, pool, func(ptx pgx.Tx) (err error) {
		res, err = importIntents(ctx, ptx, p)
		return err
	})
	return res, err
}

func importIntents(ctx context.Context, tx pgx.Tx, p ledger.ImportIntentsParams) (ledger.ImportIntentsResult, error) {
	res, err := importIntentsTx(ctx, tx, p, importOptions{batch: importBatch})
	return res, ledger.Wrap("import intents", "", translate(err))
}

// importState is what an import has done so far.
type importState struct {
	tx      pgx.Tx
	opt     importOptions
	created int
	staged  int
	// seen holds the keys of the rows written so far.
	seen *keySet
	// pending counts the keys whose first line asks for a pending intent;
	// if none does, there are no pending intents to look for.
	pending int
	refused []ledger.RefusedIntent
	// fallbacks counts the batches whose new intents were staged after
	// their COPY met a key another transaction wrote meanwhile.
	fallbacks int
	// guess is whether the next batch of new charges is written without
	// a look-up first (none of the last batch's keys was stored);
	// guessFailed counts the batches where that met a stored key.
	guess       bool
	guessFailed int
}

// importOptions are the knobs of an import that the tests turn.
type importOptions struct {
	batch int
	// staged sends every row through the staged set statements.
	staged bool
	// probe looks every batch's keys up before writing it.
	probe bool
	// beforeCreate, when set, is called with the keys of a batch's new
	// intents before they are written.
	beforeCreate func(ctx context.Context, keys []string) error
	// fallbacks, when set, is told how many batches' new intents were
	// staged after their COPY met a key written by another transaction;
	// guessFailed how many batches written without a look-up met a stored
	// key.
	fallbacks, guessFailed *int
}

// importIntentsTx imports p's rows within tx: stages, writes them batch by
// batch, writes what was staged and then counts or hands over the pending
// intents.
func importIntentsTx(ctx context.Context, tx pgx.Tx, p ledger.ImportIntentsParams, opt importOptions) (ledger.ImportIntentsResult, error) {
	var res ledger.ImportIntentsResult
	if err := createStaging(ctx, tx); err != nil {
		return res, err
	}
	st := &importState{tx: tx, seen: newKeySet(), opt: opt, guess: true}
	rd := ledger.ReadImportIntents(p.Rows, opt.batch, newImportRow)
	defer rd.Stop()
	for {
		batch, ok, err := rd.Next(ctx)
		if err != nil {
			return res, err
		}
		if !ok {
			break
		}
		if err := st.write(ctx, batch); err != nil {
			return res, err
		}
		// write keeps nothing of the batch's rows: the keys it remembers
		// are copied into seen, the pending keys and the rows it creates
		// or stages are written before it returns, and a refusal holds
		// copies of the row's parameters.
		rd.Release(batch)
	}
	rd.Stop()
	if opt.fallbacks != nil {
		*opt.fallbacks = st.fallbacks
	}
	if opt.guessFailed != nil {
		*opt.guessFailed = st.guessFailed
	}
	rows, refused, rerr := rd.Result()
	if rerr != nil {
		return res, fmt.Errorf("copy: %w", rerr)
	}
	res.Rows = rows
	res.Refused = append(refused, st.refused...)
	res.Created = st.created
	if st.staged > 0 {
		created, refused, err := writeStaged(ctx, tx)
		if err != nil {
			return res, err
		}
		res.Created += created
		res.Refused = append(res.Refused, refused...)
	}
	res.Existing = res.Rows - res.Created - len(res.Refused)
	err := countPending(ctx, tx, p, opt.staged, st.pending, &res)
	return res, err
}

// createStaging creates the temporary tables of an import, dropped at
// commit, and sets the transaction's memory for its joins.
func createStaging(ctx context.Context, tx pgx.Tx) error {
	// The hash joins below hold a key per row; without room they spill
	// to disk in many batches. Their estimated costs are large enough to
	// switch JIT compilation on, which costs more than it saves here.
	if _, err := tx.Exec(ctx, `
		SET LOCAL work_mem = '64MB';
		SET LOCAL jit = off;
		DROP TABLE IF EXISTS pg_temp.intent_import, pg_temp.intent_import_dup, pg_temp.intent_import_new,
			pg_temp.intent_import_pending;
		CREATE TEMP TABLE intent_import (
			line int NOT NULL, key text NOT NULL, provider text NOT NULL, amount numeric NOT NULL,
			currency text NOT NULL, customer text NOT NULL, reference text NOT NULL, metadata jsonb,
			state text NOT NULL, created_at timestamptz NOT NULL, updated_at timestamptz NOT NULL,
			provider_refs text[] NOT NULL, kind text NOT NULL, refund_of text NOT NULL,
			due_at timestamptz, tolerance numeric, ref_norm text NOT NULL, account text NOT NULL
		) ON COMMIT DROP;
		CREATE TEMP TABLE intent_import_dup (LIKE intent_import) ON COMMIT DROP;
		CREATE TEMP TABLE intent_import_new (key text PRIMARY KEY) ON COMMIT DROP;
		CREATE TEMP TABLE intent_import_pending (key text NOT NULL) ON COMMIT DROP`); err != nil {
		return fmt.Errorf("staging table: %w", err)
	}
	return nil
}

// countPending fills res's pending counts: the file's pending charges and
// refunds still pending in the books, handed over to p.Pending and
// p.PendingRefunds when set and nothing was refused, else only counted.
// staged says every row was staged; pending counts the keys the batches
// set aside as pending (none: nothing to count).
func countPending(ctx context.Context, tx pgx.Tx, p ledger.ImportIntentsParams, staged bool, pending int,
	res *ledger.ImportIntentsResult) error {
	from := pendingFrom
	if staged {
		// Every row is staged: the first line of each key is the one
		// the staged statements kept.
		from = stagedPendingFrom
	} else if pending == 0 {
		return nil
	} else if _, err := tx.Exec(ctx, `ANALYZE intent_import_pending`); err != nil {
		return err
	}
	for _, k := range []struct {
		kind ledger.IntentKind
		fn   func(context.Context, []string) error
		n    *int
	}{{ledger.IntentCharge, p.Pending, &res.Pending}, {ledger.IntentRefund, p.PendingRefunds, &res.PendingRefunds}} {
		var err error
		if k.fn == nil || len(res.Refused) > 0 {
			err = tx.QueryRow(ctx, `SELECT count(*) FROM `+from, string(k.kind)).Scan(k.n)
		} else {
			*k.n, err = sendPending(ctx, tx, from, k.kind, k.fn)
		}
		if err != nil {
			return err
		}
	}
	return nil
}

// write writes one batch of rows.
func (st *importState) write(ctx context.Context, rows []importRow) error {
	// The first line of each key in the file, and the keys to look up.
	first := make([]bool, len(rows))
	keys := make([]string, 0, len(rows))
	var pending []string
	for i, r := range rows {
		keys = append(keys, r.Key)
		if first[i] = st.seen.Add(r.Key); first[i] && r.State == ledger.StatePending {
			pending = append(pending, r.Key)
		}
	}
	if len(pending) > 0 && !st.opt.staged {
		if _, err := st.tx.CopyFrom(ctx, pgx.Identifier{"intent_import_pending"}, []string{"key"}, pgx.CopyFromSlice(len(pending),
			func(i int) ([]any, error) { return []any{pending[i]}, nil })); err != nil {
			return fmt.Errorf("pending keys: %w", err)
		}
		st.pending += len(pending)
	}
	// A batch of new charges only, after a batch that found none of its
	// keys stored, is written without looking its keys up first: a key
	// stored after all makes the COPY fail, and the batch is looked up.
	if st.guess && !st.opt.staged && !st.opt.probe && allNewCharges(rows, first) {
		ok, err := st.create(ctx, rows)
		if err != nil || ok {
			return err
		}
		st.guessFailed++
	}
	slices.Sort(keys)
	keys = slices.Compact(keys)
	stored, err := storedParams(ctx, st.tx, keys)
	if err != nil {
		return fmt.Errorf("stored intents: %w", err)
	}
	st.guess = len(stored) == 0
	var create, stage []importRow
	for i, r := range rows {
		if s, ok := stored[r.Key]; ok && !st.opt.staged {
			if !s.Same(r.IntentParams) {
				st.refused = append(st.refused, ledger.RefusedIntent{Line: r.Line,
					Err: &ledger.KeyReuseError{Key: r.Key, Existing: s, Requested: r.IntentParams}})
			}
			continue
		}
		if first[i] && r.Kind != ledger.IntentRefund && !st.opt.staged {
			create = append(create, r)
			continue
		}
		stage = append(stage, r)
	}
	if len(create) > 0 && st.opt.beforeCreate != nil {
		keys := make([]string, len(create))
		for i, r := range create {
			keys[i] = r.Key
		}
		if err := st.opt.beforeCreate(ctx, keys); err != nil {
			return err
		}
	}
	if len(create) > 0 {
		ok, err := st.create(ctx, create)
		if err != nil {
			return err
		}
		if !ok {
			st.fallbacks++
			stage = append(stage, create...)
		}
	}
	if len(stage) > 0 {
		if _, err := st.tx.CopyFrom(ctx, pgx.Identifier{"intent_import"}, importColumns, stageSource(stage)); err != nil {
			return fmt.Errorf("copy: %w", err)
		}
		st.staged += len(stage)
	}
	return nil
}

// allNewCharges says whether every row is a charge or an expected payment
// (not a refund, which is checked against its charge) and the first line of
// its key.
func allNewCharges(rows []importRow, first []bool) bool {
	for i, r := range rows {
		if !first[i] || r.Kind == ledger.IntentRefund {
			return false
		}
	}
	return true
}

// storedParams reads the parameters of the intents stored under keys.
func storedParams(ctx context.Context, tx pgx.Tx, keys []string) (map[string]ledger.IntentParams, error) {
	rows, err := tx.Query(ctx, `
		SELECT key, kind, refund_of, provider, amount, currency, customer, reference, metadata, due_at, tolerance, account
		FROM intents WHERE key = ANY($1)`, keys)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	out := make(map[string]ledger.IntentParams)
	for rows.Next() {
		var (
			p        ledger.IntentParams
			amount   pgtype.Numeric // read natively: a decimal is read through its text
			currency string
			meta     []byte
			due      *time.Time
			tol      decimal.NullDecimal
		)
		if err := rows.Scan(&p.Key, &p.Kind, &p.RefundOf, &p.Provider, &amount, &currency, &p.Customer, &p.Reference, &meta,
			&due, &tol, &p.Account); err != nil {
			return nil, err
		}
		if !amount.Valid || amount.NaN || amount.InfinityModifier != pgtype.Finite {
			return nil, fmt.Errorf("intent %s: amount is not a number", p.Key)
		}
		p.Amount = money.Amount{Value: decimal.NewFromBigInt(amount.Int, amount.Exp), Currency: currency}
		p.DueAt = fromNull(due)
		if tol.Valid {
			p.Tolerance = money.Amount{Value: tol.Decimal, Currency: currency}
		}
		if err := decodeMeta(meta, &p.Metadata); err != nil {
			return nil, err
		}
		out[p.Key] = p
	}
	return out, rows.Err()
}

// create writes new intents and their imported attempts with COPY, in key
// order, inside a savepoint. It returns false, having written nothing, when
// a key was written meanwhile by another transaction: the rows are then
// staged like the others and compared with what that transaction stored.
func (st *importState) create(ctx context.Context, rows []importRow) (bool, error) {
	slices.SortFunc(rows, func(a, b importRow) int { return cmp.Compare(a.Key, b.Key) })
	sp, err := st.tx.Begin(ctx)
	if err != nil {
		return false, err
	}
	err = copyNewIntents(ctx, sp, rows)
	if err == nil {
		if err = sp.Commit(ctx); err == nil {
			st.created += len(rows)
			return true, nil
		}
	}
	if uniqueViolation(err) {
		if rerr := sp.Rollback(ctx); rerr != nil {
			return false, rerr
		}
		return false, nil
	}
	_ = sp.Rollback(ctx)
	return false, fmt.Errorf("insert: %w", err)
}

// copyNewIntents writes rows (new charges, in key order) into intents and
// their references into attempts with binary COPY.
func copyNewIntents(ctx context.Context, tx pgx.Tx, rows []importRow) error {
	enc, err := newCopyEncoder(tx)
	if err != nil {
		return err
	}
	pc := tx.Conn().PgConn()
	intents := &copyRows{enc: enc, n: len(rows), row: func(i int) error {
		r := &rows[i]
		enc.row(len(intentCopyColumns))
		enc.text(r.Key)
		enc.text(string(r.Kind))
		enc.text(r.RefundOf)
		enc.text(r.Provider)
		if err := enc.decimal(r.Amount.Value); err != nil {
			return err
		}
		enc.text(r.Amount.Currency)
		enc.text(r.Customer)
		enc.text(r.Reference)
		enc.jsonb(r.metaJSON)
		enc.text(string(r.State))
		enc.timestamp(r.CreatedAt)
		enc.timestamp(r.UpdatedAt)
		enc.amountMinor(r.Amount)
		if r.DueAt.IsZero() {
			enc.null()
		} else {
			enc.timestamp(r.DueAt)
		}
		if r.Tolerance.IsZero() {
			enc.null()
		} else if err := enc.decimal(r.Tolerance.Value); err != nil {
			return err
		}
		enc.text(r.refNorm)
		enc.text(r.Account)
		return nil
	}}
	if _, err := pc.CopyFrom(ctx, intents, copySQL("intents", intentCopyColumns)); err != nil {
		return err
	}
	n := 0
	for i := range rows {
		n += len(rows[i].ProviderRefs)
	}
	if n == 0 {
		return nil
	}
	attempts := &copyRows{enc: enc, n: len(rows), row: func(i int) error {
		r := &rows[i]
		for j, ref := range r.ProviderRefs {
			enc.row(len(attemptCopyColumns))
			enc.text(r.Key)
			enc.int4(int32(j + 1))
			enc.int8(0)
			enc.text(ref)
			enc.text(string(ledger.OutcomeImported))
			enc.timestamp(r.CreatedAt)
		}
		return nil
	}}
	_, err = pc.CopyFrom(ctx, attempts, copySQL("attempts", attemptCopyColumns))
	return err
}

// copySQL is the binary COPY of columns into table.
func copySQL(table string, columns []string) string {
	quoted := make([]string, len(columns))
	for i, c := range columns {
		quoted[i] = pgx.Identifier{c}.Sanitize()
	}
	return "COPY " + pgx.Identifier{table}.Sanitize() + " (" + strings.Join(quoted, ", ") + ") FROM STDIN BINARY"
}

// writeStaged writes the staged rows with set statements and returns how
// many intents it created and the rows it refused.
func writeStaged(ctx context.Context, tx pgx.Tx) (int, []ledger.RefusedIntent, error) {
	dups, err := setAsideRepeats(ctx, tx)
	if err != nil {
		return 0, nil, err
	}
	created, err := insertStaged(ctx, tx)
	if err != nil {
		return 0, nil, err
	}
	refused, err := refusedStaged(ctx, tx, dups)
	if err != nil {
		return 0, nil, err
	}
	bad, err := checkImportedRefunds(ctx, tx)
	if err != nil {
		return 0, nil, fmt.Errorf("refunds: %w", err)
	}
	return created - len(bad), append(refused, bad...), nil
}

// setAsideRepeats analyzes the staged rows, moves all but the first line
// of each repeated key to intent_import_dup and returns how many it moved.
func setAsideRepeats(ctx context.Context, tx pgx.Tx) (int64, error) {
	// The staging table is new: without statistics the planner would take
	// it for a few rows and loop over the intents index for each.
	if _, err := tx.Exec(ctx, `ANALYZE intent_import`); err != nil {
		return 0, err
	}
	// A key repeated among the staged rows is created from its first line;
	// the other lines are set aside and compared with what was created.
	tag, err := tx.Exec(ctx, `
		WITH d AS (
			DELETE FROM intent_import a USING intent_import b
			WHERE a.key = b.key AND a.line > b.line
			RETURNING a.*
		)
		INSERT INTO intent_import_dup SELECT * FROM d`)
	if err != nil {
		return 0, fmt.Errorf("repeated keys: %w", err)
	}
	return tag.RowsAffected(), nil
}

// insertStaged locks the charges the staged refunds name and creates the
// staged intents whose key is not stored, with their attempts; it returns
// how many it created.
func insertStaged(ctx context.Context, tx pgx.Tx) (int, error) {
	// The charges that refunds of the file name are locked before any
	// refund is written, as CreateIntent does, and in one order.
	if _, err := tx.Exec(ctx, `
		SELECT 1 FROM intents WHERE key IN (SELECT refund_of FROM intent_import WHERE kind = 'refund')
		ORDER BY key FOR UPDATE`); err != nil {
		return 0, fmt.Errorf("lock charges: %w", err)
	}
	var created int
	err := tx.QueryRow(ctx, `
		WITH ins AS (
			INSERT INTO intents (key, kind, refund_of, provider, amount, currency, customer, reference, metadata, state, created_at,
			    updated_at, amount_minor, due_at, tolerance, ref_norm, account)
			SELECT key, kind, refund_of, provider, amount, currency, customer, reference, metadata, state, created_at,
			    updated_at, minor_units(amount, currency), due_at, tolerance, ref_norm, account
			FROM intent_import
			ON CONFLICT (key) DO NOTHING
			RETURNING key, state
		), nk AS (
			INSERT INTO intent_import_new (key) SELECT key FROM ins
		), att AS (
			INSERT INTO attempts (intent_key, number, claim_token, provider_ref, outcome, started_at)
			SELECT s.key, r.n, 0, r.ref, 'imported', s.created_at
			FROM ins JOIN intent_import s ON s.key = ins.key
			CROSS JOIN LATERAL unnest(s.provider_refs) WITH ORDINALITY AS r(ref, n)
		)
		SELECT count(*) FROM ins`).Scan(&created)
	if err != nil {
		return 0, fmt.Errorf("insert: %w", err)
	}
	return created, nil
}

// refusedStaged compares every staged row, and the dups rows set aside,
// with the intent stored under its key and refuses those that differ.
func refusedStaged(ctx context.Context, tx pgx.Tx, dups int64) ([]ledger.RefusedIntent, error) {
	// Every staged row is compared with the intent stored under its key,
	// whether this import created it or not (a concurrent writer may have
	// won the key between the statements).
	dupSource := ""
	if dups > 0 {
		dupSource = " UNION ALL SELECT * FROM intent_import_dup"
	}
	rows, err := tx.Query(ctx, `
		SELECT s.line, s.provider, s.amount, s.currency, s.customer, s.reference, s.metadata, s.kind, s.refund_of,
		       s.due_at, s.tolerance, s.account, `+prefixed("i.", intentCols)+`
		FROM (SELECT * FROM intent_import`+dupSource+`) s JOIN intents i ON i.key = s.key
		WHERE NOT (i.kind = s.kind AND i.refund_of = s.refund_of
		           AND i.provider = s.provider AND i.account = s.account AND i.amount = s.amount AND i.currency = s.currency
		           AND i.customer = s.customer AND i.reference = s.reference
		           AND i.metadata IS NOT DISTINCT FROM s.metadata
		           AND i.due_at IS NOT DISTINCT FROM s.due_at AND i.tolerance IS NOT DISTINCT FROM s.tolerance)`)
	if err != nil {
		return nil, fmt.Errorf("compare: %w", err)
	}
	var refused []ledger.RefusedIntent
	for rows.Next() {
		var (
			line     int
			req      ledger.IntentParams
			amount   decimal.Decimal
			currency string
			meta     []byte
			due      *time.Time
			tol      decimal.NullDecimal
		)
		stored, err := scanIntent(prefixesRow{rows, []any{&line, &req.Provider, &amount, &currency, &req.Customer,
			&req.Reference, &meta, &req.Kind, &req.RefundOf, &due, &tol, &req.Account}})
		if err != nil {
			rows.Close()
			return nil, err
		}
		req.Key, req.Amount = stored.Key, money.Amount{Value: amount, Currency: currency}
		req.DueAt = fromNull(due)
		if tol.Valid {
			req.Tolerance = money.Amount{Value: tol.Decimal, Currency: currency}
		}
		if err := decodeMeta(meta, &req.Metadata); err != nil {
			rows.Close()
			return nil, err
		}
		if stored.IntentParams.Same(req) {
			continue
		}
		refused = append(refused, ledger.RefusedIntent{Line: line,
			Err: &ledger.KeyReuseError{Key: req.Key, Existing: stored.IntentParams, Requested: req}})
	}
	if err := rows.Err(); err != nil {
		return nil, err
	}
	return refused, nil
}

// pendingFrom names the keys of the file whose first line asks for a
// pending intent (one row per key) and whose intent is of kind $1 and still
// pending in the books.
const pendingFrom = `intent_import_pending s JOIN intents i ON i.key = s.key
	WHERE i.state = 'pending' AND i.kind = $1`

// stagedPendingFrom is pendingFrom when every row was staged: the staged
// rows left after the repeated keys were set aside are the first lines.
const stagedPendingFrom = `intent_import s JOIN intents i ON i.key = s.key
	WHERE s.state = 'pending' AND i.state = 'pending' AND i.kind = $1`

// sendPending hands the keys of pending intents of kind over to fn, a page
// at a time, through a cursor: the connection is free between pages for fn
// to write on.
func sendPending(ctx context.Context, tx pgx.Tx, from string, kind ledger.IntentKind, fn func(context.Context, []string) error) (int, error) {
	if _, err := tx.Exec(ctx, `DECLARE intent_import_pending_keys NO SCROLL CURSOR FOR SELECT s.key FROM `+from, string(kind)); err != nil {
		return 0, err
	}
	total := 0
	for {
		rows, err := tx.Query(ctx, fmt.Sprintf(`FETCH %d FROM intent_import_pending_keys`, pendingPage))
		if err != nil {
			return total, err
		}
		keys, err := pgx.CollectRows(rows, pgx.RowTo[string])
		if err != nil {
			return total, err
		}
		if len(keys) == 0 {
			break
		}
		total += len(keys)
		if err := fn(ctx, keys); err != nil {
			return total, err
		}
	}
	_, err := tx.Exec(ctx, `CLOSE intent_import_pending_keys`)
	return total, err
}

func decodeMeta(b []byte, m *map[string]string) error {
	if len(b) == 0 {
		return nil
	}
	return json.Unmarshal(b, m)
}

// importRow is one valid row of an import, normalised.
type importRow struct {
	ledger.ImportIntent
	// metaJSON is the row's metadata as stored, nil when it has none.
	metaJSON []byte
	// refNorm is the normal form of its reference.
	refNorm string
}

// meta is the metadata column's value: NULL when the row has none.
func (r *importRow) meta() any {
	if r.metaJSON == nil {
		return nil
	}
	return r.metaJSON
}

// newImportRow is the step ReadImportIntents takes on each valid row: its
// metadata encoded as stored, and no provider references made an empty
// list (the staging table's column is NOT NULL).
func newImportRow(r ledger.ImportIntent) (importRow, error) {
	meta, err := encodeMeta(r.Metadata)
	if err != nil {
		return importRow{}, err
	}
	if r.ProviderRefs == nil {
		r.ProviderRefs = []string{}
	}
	return importRow{ImportIntent: r, metaJSON: meta, refNorm: ledger.NormalReference(r.Reference)}, nil
}

// stageSource feeds COPY into the staging table from rows.
func stageSource(rows []importRow) pgx.CopyFromSource {
	i, vals := 0, make([]any, len(importColumns))
	return pgx.CopyFromFunc(func() ([]any, error) {
		if i == len(rows) {
			return nil, nil
		}
		r := &rows[i]
		i++
		vals[0], vals[1], vals[2], vals[3], vals[4] = int32(r.Line), r.Key, r.Provider, r.Amount.Value, r.Amount.Currency
		vals[5], vals[6], vals[7], vals[8] = r.Customer, r.Reference, r.meta(), string(r.State)
		vals[9], vals[10], vals[11] = utc(r.CreatedAt), utc(r.UpdatedAt), r.ProviderRefs
		vals[12], vals[13] = string(r.Kind), r.RefundOf
		vals[14], vals[15], vals[16], vals[17] = nullTime(r.DueAt), nullAmount(r.Tolerance), r.refNorm, r.Account
		return vals, nil
	})
}

// prefixesRow scans leading columns into first and the rest into the
// caller's destinations.
type prefixesRow struct {
	row   pgx.Row
	first []any
}

func (r prefixesRow) Scan(dest ...any) error {
	return r.row.Scan(append(r.first, dest...)...)
}
