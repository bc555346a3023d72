-- +goose Up
-- A payout is of a provider account, as its transactions are: a Stripe
-- connected account's payouts reach that account's bank, an M-Pesa branch
-- paybill's settlements the branch's. The empty account is the provider's
-- default; payouts recorded before are its.
ALTER TABLE payouts ADD COLUMN account text NOT NULL DEFAULT '';

-- +goose Down
ALTER TABLE payouts DROP COLUMN account;
