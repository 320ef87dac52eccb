-- Identity tokens: the keys the server signs them with, and which tools may ask for one.
--
-- signing_keys: every instance signs with the one active key (retired_at NULL), so the keys live
-- here rather than in each instance's memory. kid is the key's id in a token's header and in
-- the published key set; algorithm is the JOSE name (ES256); private_key is the PKCS#8 DER of
-- the private key; public_jwk is the public key as the key set publishes it (a JSON object with
-- kid, alg and use). created_at and retired_at are Unix seconds. The partial unique index allows
-- one active key per algorithm, so two instances that make the first key at once keep one.
--
-- tools.identity: 1 when the tool's manifest asks for `permissions.identity`.

CREATE TABLE signing_keys (
    kid         TEXT PRIMARY KEY NOT NULL,
    algorithm   TEXT NOT NULL,
    private_key BLOB NOT NULL,
    public_jwk  TEXT NOT NULL,
    created_at  INTEGER NOT NULL,
    retired_at  INTEGER
);

CREATE UNIQUE INDEX signing_keys_one_active ON signing_keys (algorithm) WHERE retired_at IS NULL;

ALTER TABLE tools ADD COLUMN identity INTEGER NOT NULL DEFAULT 0 CHECK (identity IN (0, 1));
