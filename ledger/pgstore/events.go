package pgstore

import (
	"context"
	"errors"

	"github.com/jackc/pgx/v5"

	"github.com/reconcilehq/reconcile/ledger"
)

func scanEvent(row pgx.Row) (ledger.Event, error) {
	var e ledger.Event
	err := row.Scan(&e.ID, &e.Type, &e.IntentKey, &e.Payload, &e.CreatedAt)
	e.CreatedAt = e.CreatedAt.UTC()
	return e, err
}

func (e executor) InsertEvent(ctx context.Context, ev ledger.Event) (ledger.Event, bool, error) {
	stored, err := scanEvent(e.db.QueryRow(ctx, `
		INSERT INTO events (id, type, intent_key, payload, created_at) VALUES ($1, $2, $3, $4, $5)
		ON CONFLICT (id) DO NOTHING
		RETURNING id, type, intent_key, payload, created_at`, ev.ID, ev.Type, ev.IntentKey, ev.Payload, utc(ev.CreatedAt)))
	if errors.Is(err, pgx.ErrNoRows) {
		stored, err = e.GetEvent(ctx, ev.ID)
		return stored, false, err
	}
	return stored, true, ledger.Wrap("insert event", ev.ID, translate(err))
}

func (e executor) GetEvent(ctx context.Context, id string) (ledger.Event, error) {
	ev, err := scanEvent(e.db.QueryRow(ctx, `SELECT id, type, intent_key, payload, created_at FROM events WHERE id = $1`, id))
	return ev, ledger.Wrap("get event", id, translate(err))
}

func scanAPIRequest(row pgx.Row) (ledger.APIRequest, error) {
	var r ledger.APIRequest
	err := row.Scan(&r.Key, &r.RequestHash, &r.Status, &r.Response, &r.CreatedAt)
	r.CreatedAt = r.CreatedAt.UTC()
	return r, err
}

func (e executor) SaveAPIRequest(ctx context.Context, r ledger.APIRequest) (ledger.APIRequest, bool, error) {
	stored, err := scanAPIRequest(e.db.QueryRow(ctx, `
		INSERT INTO api_requests (key, request_hash, status, response, created_at) VALUES ($1, $2, $3, $4, $5)
		ON CONFLICT (key) DO NOTHING
		RETURNING key, request_hash, status, response, created_at`, r.Key, r.RequestHash, r.Status, r.Response, utc(r.CreatedAt)))
	if errors.Is(err, pgx.ErrNoRows) {
		stored, err = e.GetAPIRequest(ctx, r.Key)
		return stored, false, err
	}
	return stored, true, ledger.Wrap("save api request", r.Key, translate(err))
}

func (e executor) GetAPIRequest(ctx context.Context, key string) (ledger.APIRequest, error) {
	r, err := scanAPIRequest(e.db.QueryRow(ctx, `SELECT key, request_hash, status, response, created_at FROM api_requests WHERE key = $1`, key))
	return r, ledger.Wrap("get api request", key, translate(err))
}
