-- +goose Up
-- Chat interactions (Slack button presses and dialog submissions) already
-- applied: a retried delivery of the same interaction changes nothing.
CREATE TABLE chat_interactions (
    key        text PRIMARY KEY,
    applied_at timestamptz NOT NULL
);

-- +goose Down
DROP TABLE chat_interactions;
