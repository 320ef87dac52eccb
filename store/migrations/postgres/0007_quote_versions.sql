-- Quote versions, and idempotent changes to a quote: see sqlite/0010_quote_versions.sql for what
-- each column holds.

ALTER TABLE quotes ADD COLUMN version BIGINT NOT NULL DEFAULT 1;

ALTER TABLE idempotency_keys ADD COLUMN operation TEXT COLLATE "C" NOT NULL DEFAULT 'create'
    CHECK (operation IN ('create', 'lines', 'header'));
ALTER TABLE idempotency_keys ADD COLUMN version BIGINT;
