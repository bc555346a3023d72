-- +goose Up
-- The short codes registered with their provider for pulling (M-Pesa's Pull
-- Transactions API serves a pull only to a registered short code): when, by
-- whom or what, with which callback URL (its path token hidden) and masked
-- nominated number, and the provider's answer. One row per short code; a
-- registration made again replaces it.
CREATE TABLE pull_registrations (
    provider         TEXT NOT NULL,
    short_code       TEXT NOT NULL,
    registered_at    TEXT NOT NULL,
    registered_by    TEXT NOT NULL,
    callback_url     TEXT NOT NULL DEFAULT '',
    nominated_number TEXT NOT NULL DEFAULT '',
    response_ref     TEXT NOT NULL DEFAULT '',
    status           TEXT NOT NULL DEFAULT '',
    description      TEXT NOT NULL DEFAULT '',
    PRIMARY KEY (provider, short_code)
) STRICT;

-- +goose Down
DROP TABLE pull_registrations;
