-- +goose Up
-- Amounts in integer minor units of their currency, stored beside the exact
-- numeric, so that a reconcile reads a bigint instead of converting every
-- numeric. minor_units is exact or NULL: an amount with more decimals than
-- its currency allows, or one beyond ±(2^63-1) minor units, has no minor
-- units (NULL), never a rounded value. The exponents are those of the money
-- package (ISO 4217); a test checks that the two agree for every currency.
-- +goose StatementBegin
CREATE FUNCTION minor_units(amount numeric, currency text) RETURNS bigint
LANGUAGE sql IMMUTABLE STRICT PARALLEL SAFE AS $$
    SELECT CASE WHEN m = trunc(m) AND m BETWEEN -9223372036854775807 AND 9223372036854775807 THEN m::bigint END
    FROM (SELECT amount * CASE
        WHEN currency IN ('BIF', 'CLP', 'DJF', 'GNF', 'ISK', 'JPY', 'KMF', 'KRW', 'PYG', 'RWF', 'UGX', 'UYI', 'VND',
                          'VUV', 'XAF', 'XOF', 'XPF') THEN 1
        WHEN currency IN ('BHD', 'IQD', 'JOD', 'KWD', 'LYD', 'OMR', 'TND') THEN 1000
        WHEN currency IN ('CLF', 'UYW') THEN 10000
        ELSE 100 END AS m) s
$$;
-- +goose StatementEnd
ALTER TABLE intents ADD COLUMN amount_minor bigint GENERATED ALWAYS AS (minor_units(amount, currency)) STORED;
ALTER TABLE provider_txns ADD COLUMN amount_minor bigint GENERATED ALWAYS AS (minor_units(amount, currency)) STORED;

-- +goose Down
ALTER TABLE provider_txns DROP COLUMN amount_minor;
ALTER TABLE intents DROP COLUMN amount_minor;
DROP FUNCTION minor_units(numeric, text);
