-- Installed tools: one row per tool (its slug names its origin), the checked
-- manifest's fields, and every file of its bundle. Installing again replaces
-- a tool's row and files in one transaction, so a tool is never half there.

CREATE TABLE tools (
    slug TEXT PRIMARY KEY NOT NULL,
    name TEXT NOT NULL,
    short_name TEXT NOT NULL,
    tool_type TEXT NOT NULL CHECK (tool_type IN ('standalone', 'quoting_extension')),
    version TEXT NOT NULL,
    description TEXT NOT NULL,
    entry TEXT NOT NULL,
    enabled INTEGER NOT NULL DEFAULT 1 CHECK (enabled IN (0, 1)),
    bundle_sha256 TEXT NOT NULL,
    installed_at TEXT NOT NULL
);

CREATE TABLE tool_files (
    slug TEXT NOT NULL REFERENCES tools (slug) ON DELETE CASCADE,
    path TEXT NOT NULL,
    sha256 TEXT NOT NULL,
    body BLOB NOT NULL,
    PRIMARY KEY (slug, path)
);
