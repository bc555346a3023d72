package pgstore

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"iter"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"
	"github.com/shopspring/decimal"

	"github.com/reconcilehq/reconcile/ledger"
	"github.com/reconcilehq/reconcile/money"
)

// importColumns are the staging table's columns, in COPY order.
var importColumns = []string{"line", "key", "provider", "amount", "currency", "customer", "reference", "metadata",
	"state", "created_at", "updated_at", "provider_refs", "kind", "refund_of"}

// pendingPage is how many pending keys one call of Pending gets.
const pendingPage = 5000

// ImportIntents streams the rows with COPY into a staging table that lives
// until the transaction ends, then writes them with a few set-based
// statements: repeated keys of the file set aside, new intents and their
// imported attempts inserted in one statement (ON CONFLICT DO NOTHING), and
// every row compared with the stored intent of its key to find key reuse.
// Outside a transaction it opens one of its own.
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
	res, err := importIntentsTx(ctx, tx, p)
	return res, ledger.Wrap("import intents", "", translate(err))
}

func importIntentsTx(ctx context.Context, tx pgx.Tx, p ledger.ImportIntentsParams) (ledger.ImportIntentsResult, error) {
	var res ledger.ImportIntentsResult
	// The hash joins below hold a key per row; without room they spill
	// to disk in many batches. Their estimated costs are large enough to
	// switch JIT compilation on, which costs more than it saves here.
	if _, err := tx.Exec(ctx, `
		SET LOCAL work_mem = '64MB';
		SET LOCAL jit = off;
		DROP TABLE IF EXISTS pg_temp.intent_import, pg_temp.intent_import_dup;
		CREATE TEMP TABLE intent_import (
			line int NOT NULL, key text NOT NULL, provider text NOT NULL, amount numeric NOT NULL,
			currency text NOT NULL, customer text NOT NULL, reference text NOT NULL, metadata jsonb,
			state text NOT NULL, created_at timestamptz NOT NULL, updated_at timestamptz NOT NULL,
			provider_refs text[] NOT NULL, kind text NOT NULL, refund_of text NOT NULL
		) ON COMMIT DROP;
		CREATE TEMP TABLE intent_import_dup (LIKE intent_import) ON COMMIT DROP;
		DROP TABLE IF EXISTS pg_temp.intent_import_new;
		CREATE TEMP TABLE intent_import_new (key text PRIMARY KEY) ON COMMIT DROP`); err != nil {
		return res, fmt.Errorf("staging table: %w", err)
	}
	src := newImportSource(p.Rows)
	defer src.stop()
	n, err := tx.CopyFrom(ctx, pgx.Identifier{"intent_import"}, importColumns, src)
	if err != nil {
		return res, fmt.Errorf("copy: %w", err)
	}
	res.Rows, res.Refused = src.rows, src.refused
	if n == 0 {
		return res, nil
	}
	// The staging table is new: without statistics the planner would take
	// it for a few rows and loop over the intents index for each.
	if _, err := tx.Exec(ctx, `ANALYZE intent_import`); err != nil {
		return res, err
	}
	// A key repeated in the file is created from its first line; the other
	// lines are set aside and compared with what was created.
	tag, err := tx.Exec(ctx, `
		WITH d AS (
			DELETE FROM intent_import a USING intent_import b
			WHERE a.key = b.key AND a.line > b.line
			RETURNING a.*
		)
		INSERT INTO intent_import_dup SELECT * FROM d`)
	if err != nil {
		return res, fmt.Errorf("repeated keys: %w", err)
	}
	dups := tag.RowsAffected()
	// The charges that refunds of the file name are locked before any
	// refund is written, as CreateIntent does, and in one order.
	if _, err := tx.Exec(ctx, `
		SELECT 1 FROM intents WHERE key IN (SELECT refund_of FROM intent_import WHERE kind = 'refund')
		ORDER BY key FOR UPDATE`); err != nil {
		return res, fmt.Errorf("lock charges: %w", err)
	}
	var created int
	err = tx.QueryRow(ctx, `
		WITH ins AS (
			INSERT INTO intents (key, kind, refund_of, provider, amount, currency, customer, reference, metadata, state, created_at, updated_at)
			SELECT key, kind, refund_of, provider, amount, currency, customer, reference, metadata, state, created_at, updated_at
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
		return res, fmt.Errorf("insert: %w", err)
	}
	res.Created = created
	// Every row is compared with the intent stored under its key, whether
	// this import created it or not (a concurrent writer may have won the
	// key between the statements).
	dupSource := ""
	if dups > 0 {
		dupSource = " UNION ALL SELECT * FROM intent_import_dup"
	}
	rows, err := tx.Query(ctx, `
		SELECT s.line, s.provider, s.amount, s.currency, s.customer, s.reference, s.metadata, s.kind, s.refund_of,
		       `+prefixed("i.", intentCols)+`
		FROM (SELECT * FROM intent_import`+dupSource+`) s JOIN intents i ON i.key = s.key
		WHERE NOT (i.kind = s.kind AND i.refund_of = s.refund_of
		           AND i.provider = s.provider AND i.amount = s.amount AND i.currency = s.currency
		           AND i.customer = s.customer AND i.reference = s.reference
		           AND i.metadata IS NOT DISTINCT FROM s.metadata)`)
	if err != nil {
		return res, fmt.Errorf("compare: %w", err)
	}
	for rows.Next() {
		var (
			line     int
			req      ledger.IntentParams
			amount   decimal.Decimal
			currency string
			meta     []byte
		)
		stored, err := scanIntent(prefixesRow{rows, []any{&line, &req.Provider, &amount, &currency, &req.Customer,
			&req.Reference, &meta, &req.Kind, &req.RefundOf}})
		if err != nil {
			rows.Close()
			return res, err
		}
		req.Key, req.Amount = stored.Key, money.Amount{Value: amount, Currency: currency}
		if err := decodeMeta(meta, &req.Metadata); err != nil {
			rows.Close()
			return res, err
		}
		if stored.IntentParams.Same(req) {
			continue
		}
		res.Refused = append(res.Refused, ledger.RefusedIntent{Line: line,
			Err: &ledger.KeyReuseError{Key: req.Key, Existing: stored.IntentParams, Requested: req}})
	}
	if err := rows.Err(); err != nil {
		return res, err
	}
	refused, err := checkImportedRefunds(ctx, tx)
	if err != nil {
		return res, fmt.Errorf("refunds: %w", err)
	}
	res.Refused = append(res.Refused, refused...)
	res.Created -= len(refused)
	res.Existing = res.Rows - res.Created - len(res.Refused)
	for _, k := range []struct {
		kind ledger.IntentKind
		fn   func(context.Context, []string) error
		n    *int
	}{{ledger.IntentCharge, p.Pending, &res.Pending}, {ledger.IntentRefund, p.PendingRefunds, &res.PendingRefunds}} {
		if k.fn == nil || len(res.Refused) > 0 {
			err = tx.QueryRow(ctx, `SELECT count(*) FROM `+pendingFrom, string(k.kind)).Scan(k.n)
		} else {
			*k.n, err = sendPending(ctx, tx, k.kind, k.fn)
		}
		if err != nil {
			return res, err
		}
	}
	return res, nil
}

// pendingFrom names the keys of the staged rows (one per key) that ask for
// a pending intent of kind $1 still pending in the books.
const pendingFrom = `intent_import s JOIN intents i ON i.key = s.key
	WHERE s.state = 'pending' AND i.state = 'pending' AND i.kind = $1`

// sendPending hands the keys of pending intents of kind over to fn, a page
// at a time, through a cursor: the connection is free between pages for fn
// to write on.
func sendPending(ctx context.Context, tx pgx.Tx, kind ledger.IntentKind, fn func(context.Context, []string) error) (int, error) {
	if _, err := tx.Exec(ctx, `DECLARE intent_import_pending NO SCROLL CURSOR FOR SELECT s.key FROM `+pendingFrom, string(kind)); err != nil {
		return 0, err
	}
	total := 0
	for {
		rows, err := tx.Query(ctx, fmt.Sprintf(`FETCH %d FROM intent_import_pending`, pendingPage))
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
	_, err := tx.Exec(ctx, `CLOSE intent_import_pending`)
	return total, err
}

func decodeMeta(b []byte, m *map[string]string) error {
	if len(b) == 0 {
		return nil
	}
	return json.Unmarshal(b, m)
}

// importSource feeds COPY from the rows, normalising each; an invalid row is
// refused and left out.
type importSource struct {
	next    func() (ledger.ImportIntent, bool)
	stop    func()
	rows    int
	refused []ledger.RefusedIntent
	vals    []any
	err     error
}

func newImportSource(seq iter.Seq[ledger.ImportIntent]) *importSource {
	next, stop := iter.Pull(seq)
	return &importSource{next: next, stop: stop, vals: make([]any, len(importColumns))}
}

func (s *importSource) Next() bool {
	for {
		r, ok := s.next()
		if !ok {
			return false
		}
		s.rows++
		n, err := r.NewIntent.Normalize()
		if err != nil {
			var fe *ledger.FieldError
			if !errors.As(err, &fe) {
				s.err = err
				return false
			}
			s.refused = append(s.refused, ledger.RefusedIntent{Line: r.Line, Err: err})
			continue
		}
		meta, err := encodeMeta(n.Metadata)
		if err != nil {
			s.err = err
			return false
		}
		refs := r.ProviderRefs
		if refs == nil {
			refs = []string{}
		}
		var m any
		if meta != nil {
			m = meta
		}
		s.vals[0], s.vals[1], s.vals[2], s.vals[3], s.vals[4] = int32(r.Line), n.Key, n.Provider, n.Amount.Value, n.Amount.Currency
		s.vals[5], s.vals[6], s.vals[7], s.vals[8] = n.Customer, n.Reference, m, string(n.State)
		s.vals[9], s.vals[10], s.vals[11] = utc(n.CreatedAt), utc(n.UpdatedAt), refs
		s.vals[12], s.vals[13] = string(n.Kind), n.RefundOf
		return true
	}
}

func (s *importSource) Values() ([]any, error) { return s.vals, nil }

func (s *importSource) Err() error { return s.err }

// prefixesRow scans leading columns into first and the rest into the
// caller's destinations.
type prefixesRow struct {
	row   pgx.Row
	first []any
}

func (r prefixesRow) Scan(dest ...any) error {
	return r.row.Scan(append(r.first, dest...)...)
}
