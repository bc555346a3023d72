package sqlitestore

import (
	"context"

	"github.com/reconcilehq/reconcile/ledger"
)

func (e executor) RecordPullRegistration(ctx context.Context, r ledger.PullRegistration) error {
	key := r.Provider + "/" + r.ShortCode
	if err := r.Validate(); err != nil {
		return ledger.Wrap("record pull registration", key, err)
	}
	_, err := e.exec(ctx, `
		INSERT INTO pull_registrations (provider, short_code, registered_at, registered_by, callback_url, nominated_number,
			response_ref, status, description)
		VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)
		ON CONFLICT (provider, short_code) DO UPDATE SET registered_at = excluded.registered_at,
			registered_by = excluded.registered_by, callback_url = excluded.callback_url,
			nominated_number = excluded.nominated_number, response_ref = excluded.response_ref,
			status = excluded.status, description = excluded.description`,
		r.Provider, r.ShortCode, ts(r.RegisteredAt), r.By, r.CallbackURL, r.NominatedNumber, r.ResponseRef, r.Status, r.Description)
	return ledger.Wrap("record pull registration", key, translate(err))
}

func (e executor) GetPullRegistration(ctx context.Context, provider, shortCode string) (ledger.PullRegistration, error) {
	r := ledger.PullRegistration{Provider: provider, ShortCode: shortCode}
	var at string
	err := e.queryRow(ctx, `
		SELECT registered_at, registered_by, callback_url, nominated_number, response_ref, status, description
		FROM pull_registrations WHERE provider = ? AND short_code = ?`, provider, shortCode).
		Scan(&at, &r.By, &r.CallbackURL, &r.NominatedNumber, &r.ResponseRef, &r.Status, &r.Description)
	if err == nil {
		r.RegisteredAt, err = parseTS(at)
	}
	if err != nil {
		return ledger.PullRegistration{}, ledger.Wrap("get pull registration", provider+"/"+shortCode, translate(err))
	}
	return r, nil
}
