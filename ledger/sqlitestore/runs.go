package sqlitestore

import (
	"context"
	"database/sql"
	"encoding/json"
	"errors"
	"fmt"
	"strconv"
	"time"

	"github.com/reconcilehq/reconcile/ledger"
)

const runCols = `id, key, provider, window_from, window_to, state, owner, attempt, lease_expires_at,
	started_at, finished_at, counts, error, account`

func scanRun(row scanner) (ledger.Run, error) {
	var (
		r                        ledger.Run
		from, to, lease, started string
		finished                 sql.NullString
		counts                   string
	)
	if err := row.Scan(&r.ID, &r.Key, &r.Provider, &from, &to, &r.State, &r.Owner, &r.Attempt,
		&lease, &started, &finished, &counts, &r.Error, &r.Account); err != nil {
		return ledger.Run{}, err
	}
	if err := json.Unmarshal([]byte(counts), &r.Counts); err != nil {
		return ledger.Run{}, fmt.Errorf("decode run counts: %w", err)
	}
	var err error
	for _, p := range []struct {
		dst *time.Time
		src string
	}{{&r.From, from}, {&r.To, to}, {&r.LeaseExpiresAt, lease}, {&r.StartedAt, started}} {
		if *p.dst, err = parseTS(p.src); err != nil {
			return ledger.Run{}, err
		}
	}
	r.FinishedAt, err = parseNullTS(finished)
	return r, err
}

func (e executor) ClaimRun(ctx context.Context, c ledger.RunClaim) (ledger.Run, error) {
	key := ledger.AccountRunKey(c.Provider, c.Account, c.From, c.To)
	r, err := scanRun(e.queryRow(ctx, `
		INSERT INTO runs (key, provider, window_from, window_to, state, owner, attempt, lease_expires_at, started_at, account)
		VALUES (?1, ?2, ?3, ?4, 'running', ?5, 1, ?6, ?7, ?8)
		ON CONFLICT (key) DO UPDATE
		SET state = 'running', owner = excluded.owner, attempt = runs.attempt + 1,
		    lease_expires_at = excluded.lease_expires_at, started_at = excluded.started_at,
		    finished_at = NULL, error = ''
		WHERE runs.state <> 'running' OR runs.lease_expires_at <= excluded.started_at
		RETURNING `+runCols, key, c.Provider, ts(c.From), ts(c.To), c.Owner, ts(c.Now.Add(c.Lease)), ts(c.Now), c.Account))
	if errors.Is(err, sql.ErrNoRows) {
		cur, gerr := scanRun(e.queryRow(ctx, `SELECT `+runCols+` FROM runs WHERE key = ?`, key))
		if gerr != nil {
			return ledger.Run{}, ledger.Wrap("claim run", key, translate(gerr))
		}
		return cur, ledger.Wrap("claim run", key, fmt.Errorf("%w: run %d is held by %s until %s",
			ledger.ErrNotClaimable, cur.ID, cur.Owner, cur.LeaseExpiresAt.Format(time.RFC3339)))
	}
	return r, ledger.Wrap("claim run", key, translate(err))
}

func (e executor) FinishRun(ctx context.Context, f ledger.RunFinish) (ledger.Run, error) {
	counts, err := json.Marshal(f.Counts)
	if err != nil {
		return ledger.Run{}, err
	}
	id := strconv.FormatInt(f.ID, 10)
	r, err := scanRun(e.queryRow(ctx, `
		UPDATE runs SET state = ?3, counts = ?4, error = ?5, finished_at = ?6
		WHERE id = ?1 AND owner = ?2 AND state = 'running'
		RETURNING `+runCols, f.ID, f.Owner, string(f.State), string(counts), f.Error, ts(f.Now)))
	if errors.Is(err, sql.ErrNoRows) {
		return ledger.Run{}, ledger.Wrap("finish run", id, fmt.Errorf("%w: run is no longer held by %s", ledger.ErrConflict, f.Owner))
	}
	return r, ledger.Wrap("finish run", id, translate(err))
}

func (e executor) RenewRun(ctx context.Context, rr ledger.RunRenew) (ledger.Run, error) {
	id := strconv.FormatInt(rr.ID, 10)
	r, err := scanRun(e.queryRow(ctx, `
		UPDATE runs SET lease_expires_at = ?3
		WHERE id = ?1 AND owner = ?2 AND state = 'running'
		RETURNING `+runCols, rr.ID, rr.Owner, ts(rr.Now.Add(rr.Lease))))
	if errors.Is(err, sql.ErrNoRows) {
		return ledger.Run{}, ledger.Wrap("renew run", id, fmt.Errorf("%w: run is no longer held by %s", ledger.ErrConflict, rr.Owner))
	}
	return r, ledger.Wrap("renew run", id, translate(err))
}

func (e executor) GetRun(ctx context.Context, id int64) (ledger.Run, error) {
	r, err := scanRun(e.queryRow(ctx, `SELECT `+runCols+` FROM runs WHERE id = ?`, id))
	return r, ledger.Wrap("get run", strconv.FormatInt(id, 10), translate(err))
}

func (e executor) GetRunByKey(ctx context.Context, key string) (ledger.Run, error) {
	r, err := scanRun(e.queryRow(ctx, `SELECT `+runCols+` FROM runs WHERE key = ?`, key))
	return r, ledger.Wrap("get run", key, translate(err))
}

func (e executor) ListRuns(ctx context.Context, provider string, limit int) ([]ledger.Run, error) {
	if limit <= 0 {
		limit = 100
	}
	rows, err := e.query(ctx, `
		SELECT `+runCols+` FROM runs WHERE (?1 = '' OR provider = ?1)
		ORDER BY window_from DESC, id DESC LIMIT ?2`, provider, limit)
	if err != nil {
		return nil, ledger.Wrap("list runs", provider, translate(err))
	}
	out, err := collect(rows, scanRun)
	return out, ledger.Wrap("list runs", provider, err)
}
