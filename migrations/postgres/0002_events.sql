-- +goose Up
CREATE TABLE events (
    id         text PRIMARY KEY,
    type       text NOT NULL,
    intent_key text NOT NULL,
    payload    json NOT NULL,
    created_at timestamptz NOT NULL
);
CREATE INDEX events_intent_idx ON events (intent_key);

CREATE TABLE api_requests (
    key          text PRIMARY KEY,
    request_hash text NOT NULL,
    status       integer NOT NULL,
    response     bytea NOT NULL,
    created_at   timestamptz NOT NULL
);

-- +goose Down
DROP TABLE api_requests;
DROP TABLE events;
