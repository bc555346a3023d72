-- +goose Up
-- Every erasure of a person from the books: the one-way token that now
-- stands for them (the person is named nowhere else), who asked and why,
-- when, and how many values of each column changed ({"table.column": n}).
CREATE TABLE erasures (
    id            bigserial PRIMARY KEY,
    subject_token text        NOT NULL,
    actor         text        NOT NULL,
    reason        text        NOT NULL DEFAULT '',
    at            timestamptz NOT NULL,
    counts        jsonb       NOT NULL DEFAULT '{}'
);
CREATE INDEX erasures_subject_idx ON erasures (subject_token, id);

-- +goose Down
DROP TABLE erasures;
