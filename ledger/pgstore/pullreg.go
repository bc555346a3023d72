package pgstore

import (
	"context"

	"github.com/reconcilehq/reconcile/ledger"
)

func (e executor) RecordPullRegistration(ctx context.Context, r ledger.PullRegistration) error {
	key := r.Provider + "/" + r.ShortCode
	if err := r.Validate(); err != nil {
		return ledger.Wrap("record pull registration", key, err)
	}
	_, err := e.db.Exec(ctx, `
		INSERT INTO pull_registrations (provider, short_code, registered_at, registered_by, callback_url, nominated_number,
			response_ref, status, description)
		VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9)
		ON CONFLICT (provider, short_code) DO UPDATE SET registered_at = EXCLUDED.registered_at,
			registered_by = EXCLUDED.registered_by, callback_url = EXCLUDED.callback_url,
			nominated_number = EXCLUDED.nominated_number, response_ref = EXCLUDED.response_ref,
			status = EXCLUDED.status, description = EXCLUDED.description`,
		r.Provider, r.ShortCode, utc(r.RegisteredAt), r.By, r.CallbackURL, r.NominatedNumber, r.ResponseRef, r.Status, r.Description)
	return ledger.Wrap("record pull registration", key, translate(err))
}

func (e executor) GetPullRegistration(ctx context.Context, provider, shortCode string) (ledger.PullRegistration, error) {
	r := ledger.PullRegistration{Provider: provider, ShortCode: shortCode}
	err := e.db.QueryRow(ctx, `
		SELECT registered_at, registered_by, callback_url, nominated_number, response_ref, status, description
		FROM pull_registrations WHERE provider = $1 AND short_code = $2`, provider, shortCode).
		Scan(&r.RegisteredAt, &r.By, &r.CallbackURL, &r.NominatedNumber, &r.ResponseRef, &r.Status, &r.Description)
	if err != nil {
		return ledger.PullRegistration{}, ledger.Wrap("get pull registration", provider+"/"+shortCode, translate(err))
	}
	r.RegisteredAt = r.RegisteredAt.UTC()
	return r, nil
}
