-- +goose Up
-- Whether a failed try of an alert may have posted it after all (a timeout,
-- a 5xx, a dropped connection, or a failure following one): the next try
-- looks for the earlier post (bot mode) or counts a duplicate (webhook).
-- Until now this was kept in the text of error; carried over from there.
ALTER TABLE alerts ADD COLUMN may_have_posted boolean NOT NULL DEFAULT false;
UPDATE alerts SET may_have_posted = true
WHERE split_part(error, ':', 1) IN ('server_error', 'timeout', 'network')
   OR error LIKE '%(an earlier try may have posted)';

-- +goose Down
ALTER TABLE alerts DROP COLUMN may_have_posted;
