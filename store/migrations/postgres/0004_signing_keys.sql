-- Identity tokens: the keys the server signs them with, and which tools may ask for one (see
-- sqlite/0007_signing_keys.sql for what each column holds).

CREATE TABLE signing_keys (
    kid         TEXT COLLATE "C" PRIMARY KEY NOT NULL,
    algorithm   TEXT COLLATE "C" NOT NULL,
    private_key BYTEA NOT NULL,
    public_jwk  TEXT COLLATE "C" NOT NULL,
    created_at  BIGINT NOT NULL,
    retired_at  BIGINT
);

CREATE UNIQUE INDEX signing_keys_one_active ON signing_keys (algorithm) WHERE retired_at IS NULL;

ALTER TABLE tools ADD COLUMN identity BIGINT NOT NULL DEFAULT 0 CHECK (identity IN (0, 1));
