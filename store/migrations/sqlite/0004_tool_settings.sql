-- Install settings and outside origins: what each installed tool's manifest
-- declares (its `settings` array and its `permissions.connect` origins, as
-- JSON text), and the values each tenant sets for a tool (a JSON object, key
-- to value, holding only values that fit the tool's current declarations).
-- Tools installed before this migration declare nothing.

ALTER TABLE tools ADD COLUMN setting_declarations TEXT NOT NULL DEFAULT '[]';
ALTER TABLE tools ADD COLUMN connect_origins TEXT NOT NULL DEFAULT '[]';

CREATE TABLE tool_settings (
    tenant_id TEXT NOT NULL REFERENCES tenants (id) ON DELETE CASCADE,
    slug TEXT NOT NULL REFERENCES tools (slug) ON DELETE CASCADE,
    setting_values TEXT NOT NULL,
    updated_at TEXT NOT NULL,
    PRIMARY KEY (tenant_id, slug)
);

CREATE INDEX tool_settings_by_slug ON tool_settings (slug);
