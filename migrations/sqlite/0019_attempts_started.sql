-- +goose Up
-- An attempt never starts before its intent was created: the writers take
-- the later of the two, and the rows written before they did are brought in
-- line. A run then reads the attempts of its window's intents among those
-- started since the window opened, through an index on started_at, instead
-- of reading every attempt the books have ever kept.
UPDATE attempts SET started_at = (SELECT i.created_at FROM intents i WHERE i.key = attempts.intent_key)
WHERE started_at < (SELECT i.created_at FROM intents i WHERE i.key = attempts.intent_key);
CREATE INDEX attempts_started_idx ON attempts (started_at);

-- +goose Down
DROP INDEX attempts_started_idx;
