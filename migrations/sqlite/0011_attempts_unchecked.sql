-- +goose Up
-- On PostgreSQL this migration drops the foreign key from an attempt to its
-- intent, which cost a large import of intents a trigger, a probe and a row
-- lock per attempt. SQLite keeps its foreign key: its check is one lookup in
-- the intents' primary key per attempt, with no trigger and no row lock,
-- and dropping it would rebuild the attempts table. The version exists on
-- both engines so that their schemas carry the same numbers.
SELECT 1;

-- +goose Down
SELECT 1;
