-- +goose Up
-- The PostgreSQL books store amounts' minor units beside them (migration
-- 0009 there). SQLite keeps amounts as exact decimal text and its scans read
-- that text directly, so it needs no such column; this migration keeps the
-- two engines' versions in step.
SELECT 1;

-- +goose Down
SELECT 1;
