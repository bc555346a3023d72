-- +goose Up
-- The short codes registered with their provider for pulling (M-Pesa's Pull
-- Transactions API serves a pull only to a registered short code): when, by
-- whom or what, with which callback URL (its path token hidden) and masked
-- nominated number, and the provider's answer. One row per short code; a
-- registration made again replaces it.
CREATE TABLE pull_registrations (
    provider         text        NOT NULL,
    short_code       text        NOT NULL,
    registered_at    timestamptz NOT NULL,
    registered_by    text        NOT NULL,
    callback_url     text        NOT NULL DEFAULT '',
    nominated_number text        NOT NULL DEFAULT '',
    response_ref     text        NOT NULL DEFAULT '',
    status           text        NOT NULL DEFAULT '',
    description      text        NOT NULL DEFAULT '',
    PRIMARY KEY (provider, short_code)
);

-- +goose Down
DROP TABLE pull_registrations;
