package sqlitestore

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"strconv"

	"github.com/reconcilehq/reconcile/ledger"
)

const attemptCols = `id, intent_key, number, claim_token, provider_ref, outcome, error, started_at, finished_at`

func scanAttempt(row scanner) (ledger.Attempt, error) {
	var (
		a        ledger.Attempt
		started  string
		finished sql.NullString
	)
	if err := row.Scan(&a.ID, &a.IntentKey, &a.Number, &a.ClaimToken, &a.ProviderRef, &a.Outcome,
		&a.Error, &started, &finished); err != nil {
		return ledger.Attempt{}, err
	}
	var err error
	if a.StartedAt, err = parseTS(started); err != nil {
		return ledger.Attempt{}, err
	}
	a.FinishedAt, err = parseNullTS(finished)
	return a, err
}

func (e executor) StartAttempt(ctx context.Context, p ledger.AttemptParams) (ledger.Attempt, error) {
	outcome := p.Outcome
	if outcome == "" {
		outcome = ledger.OutcomeStarted
	}
	a, err := scanAttempt(e.queryRow(ctx, `
		INSERT INTO attempts (intent_key, number, claim_token, provider_ref, outcome, started_at)
		SELECT ?1, COALESCE((SELECT MAX(number) FROM attempts WHERE intent_key = ?1), 0) + 1, ?2, ?3, ?4,
		       MAX(?5, COALESCE((SELECT created_at FROM intents WHERE key = ?1), ?5))
		WHERE ?2 = 0 OR EXISTS (SELECT 1 FROM intents WHERE key = ?1 AND claim_token = ?2 AND state = 'processing')
		RETURNING `+attemptCols, p.IntentKey, p.ClaimToken, p.ProviderRef, string(outcome), ts(p.Now)))
	if errors.Is(err, sql.ErrNoRows) {
		if _, gerr := e.GetIntent(ctx, p.IntentKey); gerr != nil {
			return ledger.Attempt{}, gerr
		}
		return ledger.Attempt{}, ledger.Wrap("start attempt", p.IntentKey,
			fmt.Errorf("%w: claim %d no longer holds the intent", ledger.ErrConflict, p.ClaimToken))
	}
	return a, ledger.Wrap("start attempt", p.IntentKey, translate(err))
}

func (e executor) UpdateAttempt(ctx context.Context, u ledger.AttemptUpdate) (ledger.Attempt, error) {
	a, err := scanAttempt(e.queryRow(ctx, `
		UPDATE attempts
		SET provider_ref = CASE WHEN ?2 <> '' THEN ?2 ELSE provider_ref END,
		    outcome = CASE WHEN ?3 <> '' THEN ?3 ELSE outcome END,
		    error = CASE WHEN ?4 <> '' THEN ?4 ELSE error END,
		    finished_at = CASE WHEN ?3 IN ('succeeded', 'failed', 'unknown') THEN ?5 ELSE finished_at END
		WHERE id = ?1
		RETURNING `+attemptCols, u.ID, u.ProviderRef, string(u.Outcome), u.Error, nullTS(u.Now)))
	return a, ledger.Wrap("update attempt", strconv.FormatInt(u.ID, 10), translate(err))
}

func (e executor) ListAttempts(ctx context.Context, intentKey string) ([]ledger.Attempt, error) {
	rows, err := e.query(ctx, `SELECT `+attemptCols+` FROM attempts WHERE intent_key = ? ORDER BY number`, intentKey)
	if err != nil {
		return nil, ledger.Wrap("list attempts", intentKey, translate(err))
	}
	out, err := collect(rows, scanAttempt)
	return out, ledger.Wrap("list attempts", intentKey, err)
}

func (e executor) FindAttempt(ctx context.Context, provider, providerRef string) (ledger.Attempt, error) {
	a, err := scanAttempt(e.queryRow(ctx, `
		SELECT `+prefixed("a.", attemptCols)+`
		FROM attempts a JOIN intents i ON i.key = a.intent_key
		WHERE a.provider_ref = ?2 AND i.provider = ?1
		ORDER BY a.number DESC LIMIT 1`, provider, providerRef))
	return a, ledger.Wrap("find attempt", providerRef, translate(err))
}

// collect scans every row with scan and closes rows.
func collect[T any](rows *sql.Rows, scan func(scanner) (T, error)) ([]T, error) {
	defer rows.Close()
	var out []T
	for rows.Next() {
		v, err := scan(rows)
		if err != nil {
			return nil, err
		}
		out = append(out, v)
	}
	return out, translate(rows.Err())
}

// ClaimAndStart claims and, on the first claim, records attempt 1, in one
// transaction.
func (e executor) ClaimAndStart(ctx context.Context, p ledger.ClaimParams) (in ledger.Intent, a ledger.Attempt, err error) {
	if e.tx == nil {
		err = e.atomically(ctx, func(x executor) error {
			in, a, err = x.ClaimAndStart(ctx, p)
			return err
		})
		return in, a, err
	}
	in, err = e.ClaimIntent(ctx, p)
	if err != nil || in.ClaimToken != 1 {
		return in, ledger.Attempt{}, err
	}
	a, err = e.StartAttempt(ctx, ledger.AttemptParams{IntentKey: p.Key, ClaimToken: in.ClaimToken, Now: p.Now})
	return in, a, err
}

// FinishAttempt updates the attempt, moves the intent and stores the event in
// one transaction.
func (e executor) FinishAttempt(ctx context.Context, f ledger.FinishParams) (in ledger.Intent, created bool, err error) {
	if e.tx == nil {
		err = e.atomically(ctx, func(x executor) error {
			in, created, err = x.FinishAttempt(ctx, f)
			return err
		})
		return in, created, err
	}
	if _, err = e.UpdateAttempt(ctx, f.Attempt); err != nil {
		return ledger.Intent{}, false, err
	}
	if in, err = e.TransitionIntent(ctx, f.Transition); err != nil {
		return in, false, err
	}
	if f.Event != nil {
		_, created, err = e.InsertEvent(ctx, *f.Event)
	}
	return in, created, err
}
