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

// StartAttempt records an attempt with the next number. With a claim token it
// is fenced: the intent must still be processing under that claim.
func (e executor) StartAttempt(ctx context.Context, p ledger.AttemptParams) (ledger.Attempt, error) {
	outcome := p.Outcome
	if outcome == "" {
		outcome = ledger.OutcomeStarted
	}
	a, err := scanAttempt(e.db.QueryRow(ctx, `
		INSERT INTO attempts (intent_key, number, claim_token, provider_ref, outcome, started_at)
		SELECT $1, COALESCE((SELECT MAX(number) FROM attempts WHERE intent_key = $1), 0) + 1, $2, $3, $4, $5
		WHERE $2::bigint = 0 OR EXISTS (SELECT 1 FROM intents WHERE key = $1 AND claim_token = $2 AND state = 'processing')
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
