-- +goose Up
-- amount_minor becomes a plain column that the writers fill with
-- minor_units(amount, currency): the set statements call the function, the
-- COPY of a large import computes the same value in Go (pgstore.AmountMinor,
-- tested against the function on every currency). As a generated column
-- it cost an insert up to about a second of the server's time per million
-- rows, measured in isolation: the expression, and each row formed a
-- second time to hold it. In a whole import that is within the noise.
--
-- A row whose amount has minor units must store them: a reader takes a
-- NULL for an amount without exact minor units and hands the row on as
-- unreadable. So an insert that leaves the column out while the amount
-- has minor units fails on the CHECK below, which costs a row that has
-- its value nothing (the function is only evaluated for a NULL). An UPDATE
-- that changes amount or currency (no write path of the service does; only
-- hand-written SQL) recomputes the column in a trigger that fires for such
-- updates only. Inserts have no trigger: a row trigger would also stop COPY
-- from writing its rows in multi-row batches.
-- +goose StatementBegin
CREATE FUNCTION amount_minor_follows() RETURNS trigger
LANGUAGE plpgsql AS $$
BEGIN
    NEW.amount_minor := minor_units(NEW.amount, NEW.currency);
    RETURN NEW;
END
$$;
-- +goose StatementEnd
ALTER TABLE intents ALTER COLUMN amount_minor DROP EXPRESSION;
ALTER TABLE provider_txns ALTER COLUMN amount_minor DROP EXPRESSION;
ALTER TABLE intents ADD CONSTRAINT intents_amount_minor_written
    CHECK (amount_minor IS NOT NULL OR minor_units(amount, currency) IS NULL);
ALTER TABLE provider_txns ADD CONSTRAINT provider_txns_amount_minor_written
    CHECK (amount_minor IS NOT NULL OR minor_units(amount, currency) IS NULL);
CREATE TRIGGER intents_amount_minor BEFORE UPDATE OF amount, currency ON intents
    FOR EACH ROW EXECUTE FUNCTION amount_minor_follows();
CREATE TRIGGER provider_txns_amount_minor BEFORE UPDATE OF amount, currency ON provider_txns
    FOR EACH ROW EXECUTE FUNCTION amount_minor_follows();

-- +goose Down
DROP TRIGGER provider_txns_amount_minor ON provider_txns;
DROP TRIGGER intents_amount_minor ON intents;
DROP FUNCTION amount_minor_follows();
ALTER TABLE provider_txns DROP COLUMN amount_minor;
ALTER TABLE provider_txns ADD COLUMN amount_minor bigint GENERATED ALWAYS AS (minor_units(amount, currency)) STORED;
ALTER TABLE intents DROP COLUMN amount_minor;
ALTER TABLE intents ADD COLUMN amount_minor bigint GENERATED ALWAYS AS (minor_units(amount, currency)) STORED;
