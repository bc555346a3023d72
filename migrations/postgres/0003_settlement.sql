-- +goose Up
-- What a provider transaction moved in the balance when it settled in
-- another currency than the one presented to the customer (amount,
-- currency), and the exchange rate the provider applied. Evidence only.
ALTER TABLE provider_txns ADD COLUMN settlement_amount numeric;
ALTER TABLE provider_txns ADD COLUMN settlement_currency text NOT NULL DEFAULT '';
ALTER TABLE provider_txns ADD COLUMN exchange_rate text NOT NULL DEFAULT '';

-- +goose Down
ALTER TABLE provider_txns DROP COLUMN exchange_rate;
ALTER TABLE provider_txns DROP COLUMN settlement_currency;
ALTER TABLE provider_txns DROP COLUMN settlement_amount;
