-- +goose Up
-- An intent may be an expected payment: one the customer pays, by account
-- number, bank transfer or payment link, in as many parts as they choose,
-- optionally by a due date and within an amount tolerance.
ALTER TABLE intents DROP CONSTRAINT intents_kind_check;
ALTER TABLE intents ADD CONSTRAINT intents_kind_check CHECK (kind IN ('charge', 'refund', 'expected'));
ALTER TABLE intents ADD COLUMN due_at timestamptz;
ALTER TABLE intents ADD COLUMN tolerance numeric CHECK (tolerance >= 0);
ALTER TABLE intents ADD CONSTRAINT intents_expected_check
    CHECK (kind = 'expected' OR (due_at IS NULL AND tolerance IS NULL));

-- The normal form of each reference (letters and digits, upper-cased),
-- computed by the writers in Go (ledger.NormalReference), so that a run can
-- look up the intents and transactions of other windows that name the same
-- reference. A reference of printable ASCII only is put in normal form here
-- (the same result); the rest is left NULL for migration 14, in Go.
ALTER TABLE intents ADD COLUMN ref_norm text;
ALTER TABLE provider_txns ADD COLUMN ref_norm text;
UPDATE intents SET ref_norm = translate(regexp_replace(reference, '[^A-Za-z0-9]', '', 'g'),
    'abcdefghijklmnopqrstuvwxyz', 'ABCDEFGHIJKLMNOPQRSTUVWXYZ')
WHERE reference ~ '^[ -~]*$';
UPDATE provider_txns SET ref_norm = translate(regexp_replace(reference, '[^A-Za-z0-9]', '', 'g'),
    'abcdefghijklmnopqrstuvwxyz', 'ABCDEFGHIJKLMNOPQRSTUVWXYZ')
WHERE reference ~ '^[ -~]*$';

-- The look-ups of a run's leftovers: by normal reference, by the provider
-- reference of the request, by the transaction a refund or dispute names,
-- and the findings of an intent whatever their window.
CREATE INDEX intents_ref_norm_idx ON intents (provider, ref_norm) WHERE ref_norm <> '';
CREATE INDEX provider_txns_ref_norm_idx ON provider_txns (provider, ref_norm) WHERE ref_norm <> '';
CREATE INDEX provider_txns_provider_ref_idx ON provider_txns (provider, provider_ref) WHERE provider_ref <> '';
CREATE INDEX provider_txns_linked_idx ON provider_txns (provider, linked_txn_id) WHERE linked_txn_id <> '';
CREATE INDEX findings_intent_idx ON findings (intent_key) WHERE intent_key <> '';

-- +goose Down
DROP INDEX findings_intent_idx;
DROP INDEX provider_txns_linked_idx;
DROP INDEX provider_txns_provider_ref_idx;
DROP INDEX provider_txns_ref_norm_idx;
DROP INDEX intents_ref_norm_idx;
ALTER TABLE provider_txns DROP COLUMN ref_norm;
ALTER TABLE intents DROP COLUMN ref_norm;
ALTER TABLE intents DROP CONSTRAINT intents_expected_check;
ALTER TABLE intents DROP COLUMN tolerance;
ALTER TABLE intents DROP COLUMN due_at;
ALTER TABLE intents DROP CONSTRAINT intents_kind_check;
ALTER TABLE intents ADD CONSTRAINT intents_kind_check CHECK (kind IN ('charge', 'refund'));
