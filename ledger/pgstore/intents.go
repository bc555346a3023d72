package pgstore

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/shopspring/decimal"

	"github.com/reconcilehq/reconcile/ledger"
	"github.com/reconcilehq/reconcile/money"
)

const intentCols = `key, provider, amount, currency, customer, reference, metadata, state,
	claim_token, claim_owner, lease_expires_at, created_at, updated_at, kind, refund_of, due_at, tolerance, account`

func scanIntent(row pgx.Row) (ledger.Intent, error) {
	var (
		in       ledger.Intent
		amount   decimal.Decimal
		currency string
		meta     []byte
		lease    *time.Time
		due      *time.Time
		tol      decimal.NullDecimal
	)
	err := row.Scan(&in.Key, &in.Provider, &amount, &currency, &in.Customer, &in.Reference, &meta,
		&in.State, &in.ClaimToken, &in.ClaimOwner, &lease, &in.CreatedAt, &in.UpdatedAt, &in.Kind, &in.RefundOf, &due, &tol, &in.Account)
	if err != nil {
		return ledger.Intent{}, err
	}
	in.Amount = money.Amount{Value: amount, Currency: currency}
	in.DueAt = fromNull(due)
	if tol.Valid {
		in.Tolerance = money.Amount{Value: tol.Decimal, Currency: currency}
	}
	if len(meta) > 0 {
		if err := json.Unmarshal(meta, &in.Metadata); err != nil {
			return ledger.Intent{}, fmt.Errorf("decode metadata: %w", err)
		}
	}
	in.LeaseExpiresAt = fromNull(lease)
	in.CreatedAt = in.CreatedAt.UTC()
	in.UpdatedAt = in.UpdatedAt.UTC()
	return in, nil
}

func encodeMeta(m map[string]string) ([]byte, error) {
	if len(m) == 0 {
		return nil, nil
	}
	return json.Marshal(m)
}

// CreateIntent inserts the intent, or returns the existing one for the same
// request. A creation is one plain insert, the intent built from what was
// inserted; a replay inserts nothing and reads the stored row.
func (e executor) CreateIntent(ctx context.Context, n ledger.NewIntent) (ledger.Intent, bool, error) {
	n, err := n.Normalize()
	p := n.IntentParams
	if err != nil {
		return ledger.Intent{}, false, ledger.Wrap("create intent", p.Key, err)
	}
	meta, err := encodeMeta(p.Metadata)
	if err != nil {
		return ledger.Intent{}, false, ledger.Wrap("create intent", p.Key, err)
	}
	created, updated := utc(n.CreatedAt), utc(n.UpdatedAt)
	if p.IsRefund() {
		return e.createRefund(ctx, n, meta)
	}
	tag, err := e.db.Exec(ctx, `
		INSERT INTO intents (key, provider, amount, currency, customer, reference, metadata, state, created_at, updated_at,
		    amount_minor, kind, due_at, tolerance, ref_norm, account)
		VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, minor_units($3, $4), $11, $12, $13, $14, $15)
		ON CONFLICT (key) DO NOTHING`,
		p.Key, p.Provider, p.Amount.Value, p.Amount.Currency, p.Customer, p.Reference, meta, n.State, created, updated,
		string(p.Kind), nullTime(p.DueAt), nullAmount(p.Tolerance), ledger.NormalReference(p.Reference), p.Account)
	if err != nil {
		return ledger.Intent{}, false, ledger.Wrap("create intent", p.Key, translate(err))
	}
	if tag.RowsAffected() == 1 {
		return ledger.Intent{IntentParams: p, State: n.State, CreatedAt: created, UpdatedAt: updated}, true, nil
	}
	return e.existingIntent(ctx, p)
}

// existingIntent returns the stored intent of p's key when it is the same
// request, and a *KeyReuseError otherwise.
func (e executor) existingIntent(ctx context.Context, p ledger.IntentParams) (ledger.Intent, bool, error) {
	in, err := e.GetIntent(ctx, p.Key)
	if err != nil {
		return ledger.Intent{}, false, err
	}
	if !in.IntentParams.Same(p) {
		return ledger.Intent{}, false, ledger.Wrap("create intent", p.Key,
			&ledger.KeyReuseError{Key: p.Key, Existing: in.IntentParams, Requested: p})
	}
	return in, false, nil
}

// prefixRow scans one leading column into first and the rest into the
// caller's destinations.
type prefixRow struct {
	row   pgx.Row
	first any
}

func (r prefixRow) Scan(dest ...any) error {
	return r.row.Scan(append([]any{r.first}, dest...)...)
}

func (e executor) GetIntent(ctx context.Context, key string) (ledger.Intent, error) {
	in, err := scanIntent(e.db.QueryRow(ctx, `SELECT `+intentCols+` FROM intents WHERE key = $1`, key))
	return in, ledger.Wrap("get intent", key, translate(err))
}

// GetIntents reads the intents in one statement.
func (e executor) GetIntents(ctx context.Context, keys []string) ([]ledger.Intent, error) {
	if len(keys) == 0 {
		return nil, nil
	}
	rows, err := e.db.Query(ctx, `SELECT `+intentCols+` FROM intents WHERE key = ANY($1)`, keys)
	if err != nil {
		return nil, ledger.Wrap("get intents", "", translate(err))
	}
	out, err := pgx.CollectRows(rows, func(r pgx.CollectableRow) (ledger.Intent, error) { return scanIntent(r) })
	return out, ledger.Wrap("get intents", "", translate(err))
}

// ClaimIntent is one round trip: the compare-and-set update, and when it
// does not apply, the row as it stands (to tell held from missing).
func (e executor) ClaimIntent(ctx context.Context, p ledger.ClaimParams) (ledger.Intent, error) {
	now := utc(p.Now)
	rows, err := e.db.Query(ctx, `
		WITH upd AS (
			UPDATE intents
			SET state = 'processing', claim_token = claim_token + 1, claim_owner = $2,
			    lease_expires_at = $3, updated_at = $4
			WHERE key = $1
			  AND (state = 'pending' OR (state = 'processing' AND lease_expires_at <= $4))
			RETURNING `+intentCols+`
		)
		SELECT true, `+intentCols+` FROM upd
		UNION ALL
		SELECT false, `+intentCols+` FROM intents WHERE key = $1 AND NOT EXISTS (SELECT 1 FROM upd)`,
		p.Key, p.Owner, now.Add(p.Lease), now)
	if err != nil {
		return ledger.Intent{}, ledger.Wrap("claim intent", p.Key, translate(err))
	}
	var (
		in             ledger.Intent
		claimed, found bool
	)
	for rows.Next() {
		if in, err = scanIntent(prefixRow{rows, &claimed}); err != nil {
			rows.Close()
			return ledger.Intent{}, ledger.Wrap("claim intent", p.Key, err)
		}
		found = true
	}
	if err := rows.Err(); err != nil {
		return ledger.Intent{}, ledger.Wrap("claim intent", p.Key, translate(err))
	}
	switch {
	case !found:
		return ledger.Intent{}, ledger.Wrap("claim intent", p.Key, ledger.ErrNotFound)
	case !claimed:
		return in, ledger.Wrap("claim intent", p.Key, fmt.Errorf("%w: state %s, lease until %s", ledger.ErrNotClaimable,
			in.State, in.LeaseExpiresAt.Format(time.RFC3339)))
	}
	return in, nil
}

func (e executor) TransitionIntent(ctx context.Context, p ledger.TransitionParams) (ledger.Intent, error) {
	from := make([]string, len(p.From))
	for i, s := range p.From {
		from[i] = string(s)
	}
	in, err := scanIntent(e.db.QueryRow(ctx, `
		UPDATE intents
		SET state = $2, updated_at = $3::timestamptz,
		    lease_expires_at = CASE WHEN $2 = 'processing' THEN $3::timestamptz END
		WHERE key = $1 AND state = ANY($4) AND ($5 = 0 OR claim_token = $5)
		RETURNING `+intentCols, p.Key, p.To, utc(p.Now), from, p.ClaimToken))
	if errors.Is(err, pgx.ErrNoRows) {
		cur, gerr := e.GetIntent(ctx, p.Key)
		if gerr != nil {
			return ledger.Intent{}, gerr
		}
		return cur, ledger.Wrap("transition intent", p.Key, fmt.Errorf("%w: state %s (claim %d), wanted one of %v (claim %d)",
			ledger.ErrConflict, cur.State, cur.ClaimToken, p.From, p.ClaimToken))
	}
	return in, ledger.Wrap("transition intent", p.Key, translate(err))
}

// ListIntents streams with the binary protocol; provider references are
// aggregated per intent by the same query.
func (e executor) ListIntents(ctx context.Context, f ledger.IntentFilter, fn func(ledger.Intent) error) error {
	rows, err := e.db.Query(ctx, `
		SELECT `+prefixed("i.", intentCols)+`,
		       COALESCE((SELECT array_agg(DISTINCT a.provider_ref) FROM attempts a
		                 WHERE a.intent_key = i.key AND a.provider_ref <> ''), '{}')
		FROM intents i
		WHERE i.provider = $1 AND i.account = $4 AND i.created_at >= $2 AND i.created_at < $3
		ORDER BY i.created_at, i.key`, f.Provider, utc(f.From), utc(f.To), f.Account)
	if err != nil {
		return ledger.Wrap("list intents", f.Provider, translate(err))
	}
	return ledger.Wrap("list intents", f.Provider, streamIntents(rows, true, fn))
}

func (e executor) ListIntentsInState(ctx context.Context, provider string, states []ledger.State, fn func(ledger.Intent) error) error {
	st := make([]string, len(states))
	for i, s := range states {
		st[i] = string(s)
	}
	rows, err := e.db.Query(ctx, `
		SELECT `+intentCols+` FROM intents
		WHERE provider = $1 AND state = ANY($2)
		ORDER BY created_at, key`, provider, st)
	if err != nil {
		return ledger.Wrap("list intents", provider, translate(err))
	}
	return ledger.Wrap("list intents", provider, streamIntents(rows, false, fn))
}

func streamIntents(rows pgx.Rows, withRefs bool, fn func(ledger.Intent) error) error {
	defer rows.Close()
	for rows.Next() {
		var (
			in   ledger.Intent
			refs []string
			err  error
		)
		if withRefs {
			in, err = scanIntent(suffixRow{rows, &refs})
		} else {
			in, err = scanIntent(rows)
		}
		if err != nil {
			return err
		}
		if len(refs) > 0 {
			slices.Sort(refs)
			in.ProviderRefs = refs
		}
		if err := fn(in); err != nil {
			return err
		}
	}
	return translate(rows.Err())
}

// suffixRow scans the caller's destinations and then one trailing column.
type suffixRow struct {
	row  pgx.Row
	last any
}

func (r suffixRow) Scan(dest ...any) error {
	return r.row.Scan(append(dest, r.last)...)
}
