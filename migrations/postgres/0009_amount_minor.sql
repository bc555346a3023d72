-- +goose Up
-- Amounts in integer minor units of their currency, stored beside the exact
-- numeric, so that a reconcile reads a bigint instead of converting every
-- numeric. minor_units is exact or NULL: an amount with more decimals than
-- its currency allows (trailing zeros aside), or one beyond ±(2^63-1) minor
-- units, has no minor units (NULL), never a rounded or clamped value. The
-- exponents are those of the money package (ISO 4217); a test checks that
-- the two agree for every currency.
--
-- The function is one SQL expression (no FROM, not STRICT, no SET), so that
-- PostgreSQL inlines it into the column's expression instead of calling a
-- SQL function for every row written.
-- +goose StatementBegin
CREATE FUNCTION minor_units(amount numeric, currency text) RETURNS bigint
LANGUAGE sql IMMUTABLE PARALLEL SAFE AS $$
    SELECT CASE
        WHEN currency IN ('BIF', 'CLP', 'DJF', 'GNF', 'ISK', 'JPY', 'KMF', 'KRW', 'PYG', 'RWF', 'UGX', 'UYI', 'VND',
                          'VUV', 'XAF', 'XOF', 'XPF') THEN
            CASE WHEN (scale(amount) <= 0 OR scale(trim_scale(amount)) <= 0) AND abs(amount) <= 9223372036854775807
                 THEN amount::bigint END
        WHEN currency IN ('BHD', 'IQD', 'JOD', 'KWD', 'LYD', 'OMR', 'TND') THEN
            CASE WHEN (scale(amount) <= 3 OR scale(trim_scale(amount)) <= 3) AND abs(amount) <= 9223372036854775.807
                 THEN (amount * 1000)::bigint END
        WHEN currency IN ('CLF', 'UYW') THEN
            CASE WHEN (scale(amount) <= 4 OR scale(trim_scale(amount)) <= 4) AND abs(amount) <= 922337203685477.5807
                 THEN (amount * 10000)::bigint END
        ELSE
            CASE WHEN (scale(amount) <= 2 OR scale(trim_scale(amount)) <= 2) AND abs(amount) <= 92233720368547758.07
                 THEN (amount * 100)::bigint END
    END
$$;
-- +goose StatementEnd
ALTER TABLE intents ADD COLUMN amount_minor bigint GENERATED ALWAYS AS (minor_units(amount, currency)) STORED;
ALTER TABLE provider_txns ADD COLUMN amount_minor bigint GENERATED ALWAYS AS (minor_units(amount, currency)) STORED;

-- +goose Down
ALTER TABLE provider_txns DROP COLUMN amount_minor;
ALTER TABLE intents DROP COLUMN amount_minor;
DROP FUNCTION minor_units(numeric, text);
