-- +goose Up
-- An attempt never starts before its intent was created: the writers take
-- the later of the two, and the rows written before they did are brought in
-- line. A run then reads the attempts of its window's intents among those
-- started since the window opened, through a BRIN index on started_at
-- (attempts are appended in time order), instead of reading every attempt
-- the books have ever kept.
UPDATE attempts a SET started_at = i.created_at
FROM intents i
WHERE i.key = a.intent_key AND a.started_at < i.created_at;
CREATE INDEX attempts_started_brin ON attempts USING brin (started_at);

-- +goose Down
DROP INDEX attempts_started_brin;
