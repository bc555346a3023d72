-- +goose Up
-- Chat interactions (Slack button presses and dialog submissions) already
-- applied: a retried delivery of the same interaction changes nothing.
CREATE TABLE chat_interactions (
    key        TEXT PRIMARY KEY,
    applied_at TEXT NOT NULL
) STRICT;

-- +goose Down
DROP TABLE chat_interactions;
