-- +goose Up
-- The append-only history of every decision on a finding or a quarantined
-- item: who (a person, or a run), through which surface, when, and the note.
CREATE TABLE history (
    id           INTEGER PRIMARY KEY,
    subject_kind TEXT NOT NULL CHECK (subject_kind IN ('finding', 'quarantine')),
    subject_id   TEXT NOT NULL,
    action       TEXT NOT NULL,
    actor        TEXT NOT NULL,
    surface      TEXT NOT NULL DEFAULT '',
    run_id       INTEGER NOT NULL DEFAULT 0,
    note         TEXT NOT NULL DEFAULT '',
    at           TEXT NOT NULL
) STRICT;
CREATE INDEX history_subject_idx ON history (subject_kind, subject_id, id);

-- Findings raised before there was a history start theirs with the run that
-- first saw them.
INSERT INTO history (subject_kind, subject_id, action, actor, surface, run_id, note, at)
SELECT 'finding', id, 'opened', 'run', 'run', first_run_id, '', first_seen_at FROM findings ORDER BY first_seen_at, id;

ALTER TABLE findings ADD COLUMN acknowledged_by TEXT NOT NULL DEFAULT '';
ALTER TABLE findings ADD COLUMN resolver TEXT NOT NULL DEFAULT '';

ALTER TABLE quarantine ADD COLUMN status TEXT NOT NULL DEFAULT 'kept'
    CHECK (status IN ('kept', 'dismissed', 'replayed'));

-- +goose Down
ALTER TABLE quarantine DROP COLUMN status;
ALTER TABLE findings DROP COLUMN resolver;
ALTER TABLE findings DROP COLUMN acknowledged_by;
DROP TABLE history;
