-- Secret settings: see sqlite/0009_tool_secrets.sql for what the table holds.

CREATE TABLE tool_secrets (
    tenant_id   TEXT COLLATE "C" NOT NULL REFERENCES tenants (id) ON DELETE CASCADE,
    slug        TEXT COLLATE "C" NOT NULL REFERENCES tools (slug) ON DELETE CASCADE,
    setting_key TEXT COLLATE "C" NOT NULL,
    value       TEXT COLLATE "C" NOT NULL,
    updated_at  TEXT COLLATE "C" NOT NULL,
    PRIMARY KEY (tenant_id, slug, setting_key)
);

CREATE INDEX tool_secrets_by_slug ON tool_secrets (slug);
