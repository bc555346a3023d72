-- +goose Up
-- Every erasure of a person from the books: the one-way token that now
-- stands for them (the person is named nowhere else), who asked and why,
-- when, and how many values of each column changed ({"table.column": n}).
CREATE TABLE erasures (
    id            INTEGER PRIMARY KEY,
    subject_token TEXT NOT NULL,
    actor         TEXT NOT NULL,
    reason        TEXT NOT NULL DEFAULT '',
    at            TEXT NOT NULL,
    counts        TEXT NOT NULL DEFAULT '{}'
) STRICT;
CREATE INDEX erasures_subject_idx ON erasures (subject_token, id);

-- +goose Down
DROP TABLE erasures;
