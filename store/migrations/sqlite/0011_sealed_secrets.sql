-- Secrets at rest: the values the server reads back in the clear (tools' secret settings,
-- webhook endpoints' signing secrets, the signing keys' private halves) may be sealed with
-- AES-256-GCM under a key kept outside the database (`--secrets-key-file`). sealed_with is the id
-- of the key that sealed the row's secret (16 hex digits of a digest of the key); NULL when the
-- secret is kept as given, from before a key was configured. A sealed text secret is its sealed
-- bytes as hex; a sealed private key, the sealed bytes.

ALTER TABLE tool_secrets ADD COLUMN sealed_with TEXT;
ALTER TABLE webhook_endpoints ADD COLUMN sealed_with TEXT;
ALTER TABLE signing_keys ADD COLUMN sealed_with TEXT;
