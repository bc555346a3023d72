-- +goose Up
-- An intent is a charge or a refund; a refund names the charge intent it
-- returns money for. The stores check that the charge exists and is not
-- refunded beyond its amount, with the charge row locked.
ALTER TABLE intents ADD COLUMN kind text NOT NULL DEFAULT 'charge' CHECK (kind IN ('charge', 'refund'));
ALTER TABLE intents ADD COLUMN refund_of text NOT NULL DEFAULT '';
ALTER TABLE intents ADD CONSTRAINT intents_refund_of_check CHECK ((kind = 'refund') = (refund_of <> ''));
CREATE INDEX intents_refund_of_idx ON intents (refund_of) WHERE kind = 'refund';
-- What the intent of a finding is (charge or refund), shown with it;
-- empty for findings of no intent and those stored before.
ALTER TABLE findings ADD COLUMN intent_kind text NOT NULL DEFAULT '';

-- +goose Down
ALTER TABLE findings DROP COLUMN intent_kind;
DROP INDEX intents_refund_of_idx;
ALTER TABLE intents DROP CONSTRAINT intents_refund_of_check;
ALTER TABLE intents DROP COLUMN refund_of;
ALTER TABLE intents DROP COLUMN kind;
