-- +goose Up
-- A provider may have several accounts (M-Pesa shortcodes or tills, Stripe
-- accounts). Intents, transactions, findings and runs name the account they
-- belong to; the empty account is the provider's default, which the books
-- kept before providers had accounts are in. The indexes a day reads by lead
-- with the provider and time and stay as they are: a window's scan of one
-- account reads the provider's rows of that time and keeps its account's.
ALTER TABLE intents ADD COLUMN account text NOT NULL DEFAULT '';
ALTER TABLE provider_txns ADD COLUMN account text NOT NULL DEFAULT '';
ALTER TABLE findings ADD COLUMN account text NOT NULL DEFAULT '';
ALTER TABLE runs ADD COLUMN account text NOT NULL DEFAULT '';

-- +goose Down
ALTER TABLE runs DROP COLUMN account;
ALTER TABLE findings DROP COLUMN account;
ALTER TABLE provider_txns DROP COLUMN account;
ALTER TABLE intents DROP COLUMN account;
