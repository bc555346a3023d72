package sqlitestore

import (
	"context"
	"database/sql"
	"errors"

	"github.com/reconcilehq/reconcile/ledger"
)

func scanEvent(row scanner) (ledger.Event, error) {
	var (
		e       ledger.Event
		payload string
		at      string
	)
	if err := row.Scan(&e.ID, &e.Type, &e.IntentKey, &payload, &at); err != nil {
		return e, err
	}
	e.Payload = []byte(payload)
	var err error
	e.CreatedAt, err = parseTS(at)
	return e, err
}

func (e executor) InsertEvent(ctx context.Context, ev ledger.Event) (ledger.Event, bool, error) {
	stored, err := scanEvent(e.queryRow(ctx, `
		INSERT INTO events (id, type, intent_key, payload, created_at) VALUES (?, ?, ?, ?, ?)
		ON CONFLICT (id) DO NOTHING
		RETURNING id, type, intent_key, payload, created_at`, ev.ID, ev.Type, ev.IntentKey, string(ev.Payload), ts(ev.CreatedAt)))
	if errors.Is(err, sql.ErrNoRows) {
		stored, err = e.GetEvent(ctx, ev.ID)
		return stored, false, err
	}
	return stored, true, ledger.Wrap("insert event", ev.ID, translate(err))
}

func (e executor) GetEvent(ctx context.Context, id string) (ledger.Event, error) {
	ev, err := scanEvent(e.queryRow(ctx, `SELECT id, type, intent_key, payload, created_at FROM events WHERE id = ?`, id))
	return ev, ledger.Wrap("get event", id, translate(err))
}

func scanAPIRequest(row scanner) (ledger.APIRequest, error) {
	var (
		r  ledger.APIRequest
		at string
	)
	if err := row.Scan(&r.Key, &r.RequestHash, &r.Status, &r.Response, &at); err != nil {
		return r, err
	}
	var err error
	r.CreatedAt, err = parseTS(at)
	return r, err
}

func (e executor) SaveAPIRequest(ctx context.Context, r ledger.APIRequest) (ledger.APIRequest, bool, error) {
	stored, err := scanAPIRequest(e.queryRow(ctx, `
		INSERT INTO api_requests (key, request_hash, status, response, created_at) VALUES (?, ?, ?, ?, ?)
		ON CONFLICT (key) DO NOTHING
		RETURNING key, request_hash, status, response, created_at`, r.Key, r.RequestHash, r.Status, r.Response, ts(r.CreatedAt)))
	if errors.Is(err, sql.ErrNoRows) {
		stored, err = e.GetAPIRequest(ctx, r.Key)
		return stored, false, err
	}
	return stored, true, ledger.Wrap("save api request", r.Key, translate(err))
}

func (e executor) GetAPIRequest(ctx context.Context, key string) (ledger.APIRequest, error) {
	r, err := scanAPIRequest(e.queryRow(ctx, `SELECT key, request_hash, status, response, created_at FROM api_requests WHERE key = ?`, key))
	return r, ledger.Wrap("get api request", key, translate(err))
}
