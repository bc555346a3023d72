-- +goose Up
-- Attempts are written in three places, each for an intent that exists in
-- the same transaction: the bulk import of intents (after the intents it
-- writes, in the same transaction), the first claim (in the statement that
-- updates the intent) and StartAttempt (which now looks the intent up in
-- the statement that inserts). An intent is deleted only by the import that
-- created it, in the same transaction, after its attempts. The foreign key
-- from an attempt to its intent checked what those paths guarantee, at the
-- price of a trigger, a primary-key probe and a row lock on the intent per
-- attempt: about two fifths of the server's time on a large import of
-- intents. The conformance suite checks after every test that no attempt
-- is orphaned.
ALTER TABLE attempts DROP CONSTRAINT attempts_intent_key_fkey;

-- +goose Down
ALTER TABLE attempts ADD CONSTRAINT attempts_intent_key_fkey FOREIGN KEY (intent_key) REFERENCES intents (key);
