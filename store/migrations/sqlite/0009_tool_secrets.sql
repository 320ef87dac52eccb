-- Secret settings: the values of the settings a tool's manifest declares `"secret": true`, kept
-- one row per tenant, tool and key, apart from tool_settings, whose values every user of the
-- tenant's tools reads. Only the server reads these, to put them into the requests it makes for
-- the tool; no answer and no log holds a value. A row goes with its tenant or its tool, and an
-- install drops the keys its declarations no longer name secret.

CREATE TABLE tool_secrets (
    tenant_id TEXT NOT NULL REFERENCES tenants (id) ON DELETE CASCADE,
    slug TEXT NOT NULL REFERENCES tools (slug) ON DELETE CASCADE,
    setting_key TEXT NOT NULL,
    value TEXT NOT NULL,
    updated_at TEXT NOT NULL,
    PRIMARY KEY (tenant_id, slug, setting_key)
);

CREATE INDEX tool_secrets_by_slug ON tool_secrets (slug);
