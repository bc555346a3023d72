package sqlitestore

import (
	"context"
	"database/sql"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/shopspring/decimal"

	"github.com/reconcilehq/reconcile/ledger"
	"github.com/reconcilehq/reconcile/money"
)

type scanner interface{ Scan(dest ...any) error }

const intentCols = `key, provider, amount, currency, customer, reference, metadata, state,
	claim_token, claim_owner, lease_expires_at, created_at, updated_at, kind, refund_of, due_at, tolerance, account`

func scanIntent(row scanner, extra ...any) (ledger.Intent, error) {
	var (
		in               ledger.Intent
		amount, currency string
		meta, lease      sql.NullString
		created, updated string
		due, tol         sql.NullString
	)
	dest := append([]any{&in.Key, &in.Provider, &amount, &currency, &in.Customer, &in.Reference, &meta,
		&in.State, &in.ClaimToken, &in.ClaimOwner, &lease, &created, &updated, &in.Kind, &in.RefundOf, &due, &tol, &in.Account}, extra...)
	if err := row.Scan(dest...); err != nil {
		return ledger.Intent{}, err
	}
	d, err := decimal.NewFromString(amount)
	if err != nil {
		return ledger.Intent{}, fmt.Errorf("stored amount %q: %w", amount, err)
	}
	in.Amount = money.Amount{Value: d, Currency: currency}
	if meta.Valid && meta.String != "" {
		if err := json.Unmarshal([]byte(meta.String), &in.Metadata); err != nil {
			return ledger.Intent{}, fmt.Errorf("decode metadata: %w", err)
		}
	}
	if in.LeaseExpiresAt, err = parseNullTS(lease); err != nil {
		return ledger.Intent{}, err
	}
	if in.CreatedAt, err = parseTS(created); err != nil {
		return ledger.Intent{}, err
	}
	if in.UpdatedAt, err = parseTS(updated); err != nil {
		return ledger.Intent{}, err
	}
	if in.DueAt, err = parseNullTS(due); err != nil {
		return ledger.Intent{}, err
	}
	if tol.Valid {
		t, err := decimal.NewFromString(tol.String)
		if err != nil {
			return ledger.Intent{}, fmt.Errorf("stored tolerance %q: %w", tol.String, err)
		}
		in.Tolerance = money.Amount{Value: t, Currency: currency}
	}
	return in, nil
}

func encodeMeta(m map[string]string) (any, error) {
	if len(m) == 0 {
		return nil, nil
	}
	b, err := json.Marshal(m)
	return string(b), err
}

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
	if p.IsRefund() {
		return e.createRefund(ctx, n, meta)
	}
	// A replay, the common case under redelivery, is one read.
	in, err := e.GetIntent(ctx, p.Key)
	if errors.Is(err, ledger.ErrNotFound) {
		in, err = scanIntent(e.queryRow(ctx, `
			INSERT INTO intents (key, provider, amount, currency, customer, reference, metadata, state, created_at, updated_at,
			    kind, due_at, tolerance, ref_norm, account)
			VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10, ?11, ?12, ?13, ?14, ?15)
			ON CONFLICT (key) DO NOTHING
			RETURNING `+intentCols,
			p.Key, p.Provider, p.Amount.Text(), p.Amount.Currency, p.Customer, p.Reference, meta, string(n.State), ts(n.CreatedAt), ts(n.UpdatedAt),
			string(p.Kind), nullTS(p.DueAt), nullAmount(p.Tolerance), ledger.NormalReference(p.Reference), p.Account))
		if err == nil {
			return in, true, nil
		}
		if !errors.Is(err, sql.ErrNoRows) {
			return ledger.Intent{}, false, ledger.Wrap("create intent", p.Key, translate(err))
		}
		in, err = e.GetIntent(ctx, p.Key) // another process created it in between
	}
	if err != nil {
		return ledger.Intent{}, false, err
	}
	if !in.IntentParams.Same(p) {
		return ledger.Intent{}, false, ledger.Wrap("create intent", p.Key,
			&ledger.KeyReuseError{Key: p.Key, Existing: in.IntentParams, Requested: p})
	}
	return in, false, nil
}

func (e executor) GetIntent(ctx context.Context, key string) (ledger.Intent, error) {
	in, err := scanIntent(e.queryRow(ctx, `SELECT `+intentCols+` FROM intents WHERE key = ?`, key))
	return in, ledger.Wrap("get intent", key, translate(err))
}

// GetIntents reads the intents one by one: statements on the embedded
// database cost no round trip.
func (e executor) GetIntents(ctx context.Context, keys []string) ([]ledger.Intent, error) {
	var out []ledger.Intent
	seen := make(map[string]bool, len(keys))
	for _, k := range keys {
		if seen[k] {
			continue
		}
		seen[k] = true
		in, err := e.GetIntent(ctx, k)
		if errors.Is(err, ledger.ErrNotFound) {
			continue
		}
		if err != nil {
			return nil, err
		}
		out = append(out, in)
	}
	return out, nil
}

// ClaimIntent reads the intent first: a claim that cannot win (the common
// case for duplicate deliveries) costs one read and writes nothing. The
// decision itself is the compare-and-set update.
func (e executor) ClaimIntent(ctx context.Context, p ledger.ClaimParams) (ledger.Intent, error) {
	cur, err := e.GetIntent(ctx, p.Key)
	if err != nil {
		return ledger.Intent{}, err
	}
	if claimable(cur, p.Now) {
		in, err := scanIntent(e.queryRow(ctx, `
			UPDATE intents
			SET state = 'processing', claim_token = claim_token + 1, claim_owner = ?2,
			    lease_expires_at = ?3, updated_at = ?4
			WHERE key = ?1
			  AND (state = 'pending' OR (state = 'processing' AND lease_expires_at <= ?4))
			RETURNING `+intentCols, p.Key, p.Owner, ts(p.Now.Add(p.Lease)), ts(p.Now)))
		if !errors.Is(err, sql.ErrNoRows) {
			return in, ledger.Wrap("claim intent", p.Key, translate(err))
		}
		if cur, err = e.GetIntent(ctx, p.Key); err != nil {
			return ledger.Intent{}, err
		}
	}
	return cur, ledger.Wrap("claim intent", p.Key, fmt.Errorf("%w: state %s, lease until %s", ledger.ErrNotClaimable,
		cur.State, cur.LeaseExpiresAt.Format(time.RFC3339)))
}

func claimable(in ledger.Intent, now time.Time) bool {
	return in.State == ledger.StatePending ||
		(in.State == ledger.StateProcessing && !in.LeaseExpiresAt.After(now.Truncate(time.Microsecond)))
}

func (e executor) TransitionIntent(ctx context.Context, p ledger.TransitionParams) (ledger.Intent, error) {
	in, err := scanIntent(e.queryRow(ctx, `
		UPDATE intents
		SET state = ?2, updated_at = ?3,
		    lease_expires_at = CASE WHEN ?2 = 'processing' THEN ?3 END
		WHERE key = ?1 AND state IN (SELECT value FROM json_each(?4)) AND (?5 = 0 OR claim_token = ?5)
		RETURNING `+intentCols, p.Key, string(p.To), ts(p.Now), jsonList(p.From), p.ClaimToken))
	if errors.Is(err, sql.ErrNoRows) {
		cur, gerr := e.GetIntent(ctx, p.Key)
		if gerr != nil {
			return ledger.Intent{}, gerr
		}
		return cur, ledger.Wrap("transition intent", p.Key, fmt.Errorf("%w: state %s (claim %d), wanted one of %v (claim %d)",
			ledger.ErrConflict, cur.State, cur.ClaimToken, p.From, p.ClaimToken))
	}
	return in, ledger.Wrap("transition intent", p.Key, translate(err))
}

func (e executor) ListIntents(ctx context.Context, f ledger.IntentFilter, fn func(ledger.Intent) error) error {
	rows, err := e.query(ctx, `
		SELECT `+prefixed("i.", intentCols)+`,
		       (SELECT group_concat(ref, char(31)) FROM (
		            SELECT DISTINCT a.provider_ref AS ref FROM attempts a
		            WHERE a.intent_key = i.key AND a.provider_ref <> '' ORDER BY 1))
		FROM intents i
		WHERE i.provider = ?1 AND i.account = ?4 AND i.created_at >= ?2 AND i.created_at < ?3
		ORDER BY i.created_at, i.key`, f.Provider, ts(f.From), ts(f.To), f.Account)
	if err != nil {
		return ledger.Wrap("list intents", f.Provider, translate(err))
	}
	defer rows.Close()
	for rows.Next() {
		var refs sql.NullString
		in, err := scanIntent(rows, &refs)
		if err != nil {
			return ledger.Wrap("list intents", f.Provider, err)
		}
		if refs.Valid && refs.String != "" {
			in.ProviderRefs = strings.Split(refs.String, "\x1f")
		}
		if err := fn(in); err != nil {
			return err
		}
	}
	return ledger.Wrap("list intents", f.Provider, translate(rows.Err()))
}

func (e executor) ListIntentsInState(ctx context.Context, provider string, states []ledger.State, fn func(ledger.Intent) error) error {
	rows, err := e.query(ctx, `
		SELECT `+intentCols+` FROM intents
		WHERE provider = ?1 AND state IN (SELECT value FROM json_each(?2))
		ORDER BY created_at, key`, provider, jsonList(states))
	if err != nil {
		return ledger.Wrap("list intents", provider, translate(err))
	}
	defer rows.Close()
	for rows.Next() {
		in, err := scanIntent(rows)
		if err != nil {
			return ledger.Wrap("list intents", provider, err)
		}
		if err := fn(in); err != nil {
			return err
		}
	}
	return ledger.Wrap("list intents", provider, translate(rows.Err()))
}
