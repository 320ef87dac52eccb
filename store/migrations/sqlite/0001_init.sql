-- toolbridge store, first schema.
--
-- Conventions: ids are UUID strings; every row that belongs to a tenant
-- carries tenant_id and every query filters on it. Money, quantities and
-- rates are decimal strings (exact, never binary floats). Timestamps are
-- ISO 8601 UTC strings ("2025-01-31T09:30:00Z"), except session expiry,
-- which is Unix seconds so that it compares as a number.
-- Case-insensitive lookups use *_lower columns filled by the store, so that
-- non-ASCII letters fold the same way everywhere.

CREATE TABLE tenants (
    id               TEXT PRIMARY KEY NOT NULL,
    name             TEXT NOT NULL,
    culture_code     TEXT NOT NULL,
    default_tax_rate TEXT NOT NULL,
    -- The number of the last generated quote reference (Q-1001 follows 1000).
    quote_seq        INTEGER NOT NULL DEFAULT 1000,
    created_at       TEXT NOT NULL
);

CREATE TABLE users (
    id            TEXT PRIMARY KEY NOT NULL,
    tenant_id     TEXT NOT NULL REFERENCES tenants (id),
    name          TEXT NOT NULL,
    email         TEXT NOT NULL,
    email_lower   TEXT NOT NULL UNIQUE,
    role          TEXT NOT NULL,
    password_hash TEXT NOT NULL,
    active        INTEGER NOT NULL DEFAULT 1
);

CREATE INDEX users_tenant ON users (tenant_id);

CREATE TABLE sessions (
    -- SHA-256 (hex) of the token; the token itself is never stored.
    token_hash TEXT PRIMARY KEY NOT NULL,
    user_id    TEXT NOT NULL REFERENCES users (id) ON DELETE CASCADE,
    created_at TEXT NOT NULL,
    expires_at INTEGER NOT NULL
);

CREATE INDEX sessions_expiry ON sessions (expires_at);

CREATE TABLE api_keys (
    id                TEXT PRIMARY KEY NOT NULL,
    tenant_id         TEXT NOT NULL REFERENCES tenants (id),
    name              TEXT NOT NULL,
    -- Public part of the token; finds the row.
    prefix            TEXT NOT NULL UNIQUE,
    -- SHA-256 (hex) of the secret part of the token.
    secret_hash       TEXT NOT NULL,
    -- Space-separated scope tokens.
    scopes            TEXT NOT NULL,
    rate_requests     INTEGER NOT NULL,
    rate_window_secs  INTEGER NOT NULL,
    created_at        TEXT NOT NULL,
    revoked_at        TEXT
);

CREATE INDEX api_keys_tenant ON api_keys (tenant_id, created_at);

CREATE TABLE customers (
    id          TEXT PRIMARY KEY NOT NULL,
    tenant_id   TEXT NOT NULL REFERENCES tenants (id),
    name        TEXT NOT NULL,
    email       TEXT NOT NULL DEFAULT '',
    email_lower TEXT NOT NULL DEFAULT '',
    phone       TEXT NOT NULL DEFAULT ''
);

CREATE INDEX customers_by_name ON customers (tenant_id, name, id);
CREATE INDEX customers_by_email ON customers (tenant_id, email_lower);

CREATE TABLE task_templates (
    id         TEXT PRIMARY KEY NOT NULL,
    tenant_id  TEXT NOT NULL REFERENCES tenants (id),
    code       TEXT NOT NULL,
    name       TEXT NOT NULL,
    unit_price TEXT NOT NULL,
    cost_price TEXT NOT NULL,
    active     INTEGER NOT NULL DEFAULT 1,
    UNIQUE (tenant_id, code)
);

CREATE TABLE cost_items (
    id        TEXT PRIMARY KEY NOT NULL,
    tenant_id TEXT NOT NULL REFERENCES tenants (id),
    code      TEXT NOT NULL,
    name      TEXT NOT NULL,
    item_type TEXT NOT NULL,
    active    INTEGER NOT NULL DEFAULT 1,
    UNIQUE (tenant_id, code)
);

CREATE TABLE products (
    id         TEXT PRIMARY KEY NOT NULL,
    tenant_id  TEXT NOT NULL REFERENCES tenants (id),
    sku        TEXT NOT NULL,
    sku_lower  TEXT NOT NULL,
    name       TEXT NOT NULL,
    unit       TEXT NOT NULL,
    price      TEXT NOT NULL,
    cost_price TEXT NOT NULL,
    active     INTEGER NOT NULL DEFAULT 1,
    UNIQUE (tenant_id, sku_lower)
);

-- products(): active rows of a tenant in sku order, answered from the index
-- alone (it covers every listed column).
CREATE INDEX products_active_by_sku
    ON products (tenant_id, sku, id, name, price, unit)
    WHERE active = 1;

CREATE TABLE product_tasks (
    product_id       TEXT NOT NULL REFERENCES products (id) ON DELETE CASCADE,
    position         INTEGER NOT NULL,
    task_template_id TEXT NOT NULL REFERENCES task_templates (id),
    qty_per_unit     TEXT NOT NULL,
    PRIMARY KEY (product_id, position)
);

CREATE TABLE jobs (
    id          TEXT PRIMARY KEY NOT NULL,
    tenant_id   TEXT NOT NULL REFERENCES tenants (id),
    reference   TEXT NOT NULL,
    customer_id TEXT NOT NULL REFERENCES customers (id),
    status      TEXT NOT NULL,
    closed      INTEGER NOT NULL DEFAULT 0,
    UNIQUE (tenant_id, reference)
);

CREATE TABLE quotes (
    id          TEXT PRIMARY KEY NOT NULL,
    tenant_id   TEXT NOT NULL REFERENCES tenants (id),
    reference   TEXT NOT NULL,
    customer_id TEXT NOT NULL REFERENCES customers (id),
    job_id      TEXT REFERENCES jobs (id),
    title       TEXT,
    quote_type  TEXT NOT NULL,
    status      TEXT NOT NULL,
    date        TEXT NOT NULL,
    expiry_days INTEGER NOT NULL,
    -- Sum of the lines' totals, kept with the lines for quotes().
    total       TEXT NOT NULL,
    UNIQUE (tenant_id, reference)
);

CREATE INDEX quotes_newest ON quotes (tenant_id, date DESC);

CREATE TABLE quote_lines (
    quote_id       TEXT NOT NULL REFERENCES quotes (id) ON DELETE CASCADE,
    position       INTEGER NOT NULL,
    line_no        INTEGER NOT NULL,
    line_type      TEXT NOT NULL,
    linked_item_id TEXT,
    product_code   TEXT,
    description    TEXT NOT NULL,
    specification  TEXT,
    location       TEXT,
    qty            TEXT NOT NULL,
    unit           TEXT NOT NULL,
    unit_price     TEXT NOT NULL,
    cost_price     TEXT NOT NULL,
    tax_rate       TEXT NOT NULL,
    section        TEXT,
    group_id       INTEGER NOT NULL,
    injected       INTEGER NOT NULL DEFAULT 0,
    parent_line_no INTEGER,
    PRIMARY KEY (quote_id, position),
    UNIQUE (quote_id, line_no)
);

CREATE TABLE quote_group_keys (
    quote_id  TEXT NOT NULL REFERENCES quotes (id) ON DELETE CASCADE,
    group_key TEXT NOT NULL,
    group_id  INTEGER NOT NULL,
    PRIMARY KEY (quote_id, group_key)
);

-- POST /quotes with an Idempotency-Key: one row per (key id, header value).
CREATE TABLE idempotency_keys (
    tenant_id  TEXT NOT NULL REFERENCES tenants (id),
    key_id     TEXT NOT NULL,
    idem_key   TEXT NOT NULL,
    body_hash  TEXT NOT NULL,
    quote_id   TEXT NOT NULL REFERENCES quotes (id),
    created_at TEXT NOT NULL,
    PRIMARY KEY (tenant_id, key_id, idem_key)
);
