package pgstore

import (
	"context"
	"errors"
	"fmt"
	"strconv"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/reconcilehq/reconcile/ledger"
)

const attemptCols = `id, intent_key, number, claim_token, provider_ref, outcome, error, started_at, finished_at`

func scanAttempt(row pgx.Row) (ledger.Attempt, error) {
	var (
		a        ledger.Attempt
		finished *time.Time
	)
	if err := row.Scan(&a.ID, &a.IntentKey, &a.Number, &a.ClaimToken, &a.ProviderRef, &a.Outcome,
		&a.Error, &a.StartedAt, &finished); err != nil {
		return ledger.Attempt{}, err
	}
	a.StartedAt = a.StartedAt.UTC()
	a.FinishedAt = fromNull(finished)
	return a, nil
}

// StartAttempt records an attempt with the next number for an intent that
// exists (no foreign key checks it). With a claim token it is fenced: the
// intent must still be processing under that claim.
func (e executor) StartAttempt(ctx context.Context, p ledger.AttemptParams) (ledger.Attempt, error) {
	outcome := p.Outcome
	if outcome == "" {
		outcome = ledger.OutcomeStarted
	}
	a, err := scanAttempt(e.db.QueryRow(ctx, `
		INSERT INTO attempts (intent_key, number, claim_token, provider_ref, outcome, started_at)
		SELECT $1, COALESCE((SELECT MAX(number) FROM attempts WHERE intent_key = $1), 0) + 1, $2, $3, $4,
		       GREATEST($5, (SELECT created_at FROM intents WHERE key = $1))
		WHERE EXISTS (SELECT 1 FROM intents WHERE key = $1 AND ($2::bigint = 0 OR (claim_token = $2 AND state = 'processing')))
		RETURNING `+attemptCols, p.IntentKey, p.ClaimToken, p.ProviderRef, outcome, utc(p.Now)))
	if errors.Is(err, pgx.ErrNoRows) {
		if _, gerr := e.GetIntent(ctx, p.IntentKey); gerr != nil {
			return ledger.Attempt{}, gerr
		}
		return ledger.Attempt{}, ledger.Wrap("start attempt", p.IntentKey,
			fmt.Errorf("%w: claim %d no longer holds the intent", ledger.ErrConflict, p.ClaimToken))
	}
	return a, ledger.Wrap("start attempt", p.IntentKey, translate(err))
}

func (e executor) UpdateAttempt(ctx context.Context, u ledger.AttemptUpdate) (ledger.Attempt, error) {
	a, err := scanAttempt(e.db.QueryRow(ctx, `
		UPDATE attempts
		SET provider_ref = CASE WHEN $2 <> '' THEN $2 ELSE provider_ref END,
		    outcome = CASE WHEN $3 <> '' THEN $3 ELSE outcome END,
		    error = CASE WHEN $4 <> '' THEN $4 ELSE error END,
		    finished_at = CASE WHEN $3 IN ('succeeded', 'failed', 'unknown') THEN $5 ELSE finished_at END
		WHERE id = $1
		RETURNING `+attemptCols, u.ID, u.ProviderRef, string(u.Outcome), u.Error, nullTime(u.Now)))
	return a, ledger.Wrap("update attempt", strconv.FormatInt(u.ID, 10), translate(err))
}

func (e executor) ListAttempts(ctx context.Context, intentKey string) ([]ledger.Attempt, error) {
	rows, err := e.db.Query(ctx, `SELECT `+attemptCols+` FROM attempts WHERE intent_key = $1 ORDER BY number`, intentKey)
	if err != nil {
		return nil, ledger.Wrap("list attempts", intentKey, translate(err))
	}
	out, err := pgx.CollectRows(rows, func(r pgx.CollectableRow) (ledger.Attempt, error) { return scanAttempt(r) })
	return out, ledger.Wrap("list attempts", intentKey, translate(err))
}

func (e executor) FindAttempt(ctx context.Context, provider, providerRef string) (ledger.Attempt, error) {
	a, err := scanAttempt(e.db.QueryRow(ctx, `
		SELECT `+prefixed("a.", attemptCols)+`
		FROM attempts a JOIN intents i ON i.key = a.intent_key
		WHERE a.provider_ref = $2 AND i.provider = $1
		ORDER BY a.number DESC LIMIT 1`, provider, providerRef))
	return a, ledger.Wrap("find attempt", providerRef, translate(err))
}

// ClaimAndStart claims and, on the first claim, records attempt 1, in one
// statement.
func (e executor) ClaimAndStart(ctx context.Context, p ledger.ClaimParams) (ledger.Intent, ledger.Attempt, error) {
	now := utc(p.Now)
	rows, err := e.db.Query(ctx, `
		WITH upd AS (
			UPDATE intents
			SET state = 'processing', claim_token = claim_token + 1, claim_owner = $2,
			    lease_expires_at = $3, updated_at = $4
			WHERE key = $1
			  AND (state = 'pending' OR (state = 'processing' AND lease_expires_at <= $4))
			RETURNING `+intentCols+`
		), att AS (
			INSERT INTO attempts (intent_key, number, claim_token, outcome, started_at)
			SELECT key, COALESCE((SELECT MAX(number) FROM attempts WHERE intent_key = $1), 0) + 1, claim_token, 'started',
			       GREATEST($4, created_at)
			FROM upd WHERE claim_token = 1
			RETURNING `+attemptCols+`
		)
		SELECT true, `+prefixed("u.", intentCols)+`, a.id, a.number, a.started_at FROM upd u LEFT JOIN att a ON true
		UNION ALL
		SELECT false, `+intentCols+`, NULL, NULL, NULL FROM intents WHERE key = $1 AND NOT EXISTS (SELECT 1 FROM upd)`,
		p.Key, p.Owner, now.Add(p.Lease), now)
	if err != nil {
		return ledger.Intent{}, ledger.Attempt{}, ledger.Wrap("claim intent", p.Key, translate(err))
	}
	var (
		in             ledger.Intent
		a              ledger.Attempt
		claimed, found bool
	)
	for rows.Next() {
		var (
			id, number *int64
			started    *time.Time
		)
		if in, err = scanIntent(prefixRow{suffixRow{suffixRow{suffixRow{rows, &started}, &number}, &id}, &claimed}); err != nil {
			rows.Close()
			return ledger.Intent{}, ledger.Attempt{}, ledger.Wrap("claim intent", p.Key, err)
		}
		if id != nil {
			a = ledger.Attempt{ID: *id, IntentKey: in.Key, Number: int(*number), ClaimToken: in.ClaimToken,
				Outcome: ledger.OutcomeStarted, StartedAt: started.UTC()}
		}
		found = true
	}
	if err := rows.Err(); err != nil {
		return ledger.Intent{}, ledger.Attempt{}, ledger.Wrap("claim intent", p.Key, translate(err))
	}
	switch {
	case !found:
		return ledger.Intent{}, ledger.Attempt{}, ledger.Wrap("claim intent", p.Key, ledger.ErrNotFound)
	case !claimed:
		return in, ledger.Attempt{}, ledger.Wrap("claim intent", p.Key, fmt.Errorf("%w: state %s, lease until %s",
			ledger.ErrNotClaimable, in.State, in.LeaseExpiresAt.Format(time.RFC3339)))
	}
	return in, a, nil
}

// FinishAttempt updates the attempt, moves the intent and stores the event in
// one statement.
func (e executor) FinishAttempt(ctx context.Context, f ledger.FinishParams) (ledger.Intent, bool, error) {
	u, t := f.Attempt, f.Transition
	from := make([]string, len(t.From))
	for i, s := range t.From {
		from[i] = string(s)
	}
	var ev ledger.Event
	if f.Event != nil {
		ev = *f.Event
	}
	rows, err := e.db.Query(ctx, `
		WITH att AS (
			UPDATE attempts
			SET provider_ref = CASE WHEN $2 <> '' THEN $2 ELSE provider_ref END,
			    outcome = CASE WHEN $3 <> '' THEN $3 ELSE outcome END,
			    error = CASE WHEN $4 <> '' THEN $4 ELSE error END,
			    finished_at = CASE WHEN $3 IN ('succeeded', 'failed', 'unknown') THEN $5 ELSE finished_at END
			WHERE id = $1
			RETURNING id
		), upd AS (
			UPDATE intents
			SET state = $7, updated_at = $8::timestamptz,
			    lease_expires_at = CASE WHEN $7 = 'processing' THEN $8::timestamptz END
			WHERE key = $6 AND state = ANY($9) AND ($10 = 0 OR claim_token = $10) AND EXISTS (SELECT 1 FROM att)
			RETURNING `+intentCols+`
		), ev AS (
			INSERT INTO events (id, type, intent_key, payload, created_at)
			SELECT $11, $12, key, $13::json, $8 FROM upd WHERE $11 <> ''
			ON CONFLICT (id) DO NOTHING
			RETURNING id
		)
		SELECT (SELECT count(*) FROM ev) > 0, `+intentCols+` FROM upd`,
		u.ID, u.ProviderRef, string(u.Outcome), u.Error, nullTime(u.Now),
		t.Key, t.To, utc(t.Now), from, t.ClaimToken, ev.ID, ev.Type, jsonOrNil(ev.Payload))
	if err != nil {
		return ledger.Intent{}, false, ledger.Wrap("finish attempt", t.Key, translate(err))
	}
	var (
		in             ledger.Intent
		created, found bool
	)
	for rows.Next() {
		if in, err = scanIntent(prefixRow{rows, &created}); err != nil {
			rows.Close()
			return ledger.Intent{}, false, ledger.Wrap("finish attempt", t.Key, err)
		}
		found = true
	}
	if err := rows.Err(); err != nil {
		return ledger.Intent{}, false, ledger.Wrap("finish attempt", t.Key, translate(err))
	}
	if !found {
		cur, gerr := e.GetIntent(ctx, t.Key)
		if gerr != nil {
			return ledger.Intent{}, false, gerr
		}
		return cur, false, ledger.Wrap("finish attempt", t.Key, fmt.Errorf("%w: state %s (claim %d), wanted one of %v (claim %d)",
			ledger.ErrConflict, cur.State, cur.ClaimToken, t.From, t.ClaimToken))
	}
	return in, created, nil
}

func jsonOrNil(b []byte) any {
	if len(b) == 0 {
		return nil
	}
	return string(b)
}
