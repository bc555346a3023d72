-- +goose Up
-- On PostgreSQL this migration turns the generated amount_minor columns
-- into plain columns the writers fill. SQLite has no such column (see
-- 0009); the version exists on both engines so that their schemas carry
-- the same numbers.
SELECT 1;

-- +goose Down
SELECT 1;
