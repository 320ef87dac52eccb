-- toolbridge store on PostgreSQL: the schema that SQLite reaches through its migrations 0001 to
-- 0004, in one, under the same conventions (see sqlite/0001_init.sql): ids are UUID strings,
-- money, quantities and rates decimal strings, timestamps ISO 8601 UTC strings (session expiry in
-- Unix seconds), and the store fills the *_lower columns. The store's queries are the same text
-- on both backends; what differs is here:
--
-- * Every text column is COLLATE "C": text compares byte by byte, as SQLite's BINARY does,
--   whatever the database's default collation, so lists, pages and ETags come out in the same
--   order on both.
-- * Whole numbers are BIGINT (the store reads 64-bit integers); flags are BIGINT 0 or 1, as SQLite
--   stores them, so that `active = 1` reads the same on both; file bodies are BYTEA.
-- * tenants, api_keys and quotes have a `rowid` identity column: SQLite's implicit rowid, the
--   order in which rows were made, which the store sorts by where other columns tie.
-- * Catalog versions are bumped by statement-level triggers, once per statement rather than per
--   row: the store only asks whether the version changed.
-- * idempotency_keys and quote references are claimed by their unique indexes: of two
--   transactions inserting the same key, the second waits for the first and then sees it.

CREATE TABLE tenants (
    rowid            BIGINT GENERATED ALWAYS AS IDENTITY UNIQUE,
    id               TEXT COLLATE "C" PRIMARY KEY NOT NULL,
    name             TEXT COLLATE "C" NOT NULL,
    culture_code     TEXT COLLATE "C" NOT NULL,
    default_tax_rate TEXT COLLATE "C" NOT NULL,
    -- The number of the last generated quote reference (Q-1001 follows 1000).
    quote_seq        BIGINT NOT NULL DEFAULT 1000,
    created_at       TEXT COLLATE "C" NOT NULL,
    -- Bumped on every change to the tenant's catalog (the triggers below).
    catalog_version  BIGINT NOT NULL DEFAULT 0
);

CREATE TABLE users (
    id            TEXT COLLATE "C" PRIMARY KEY NOT NULL,
    tenant_id     TEXT COLLATE "C" NOT NULL REFERENCES tenants (id),
    name          TEXT COLLATE "C" NOT NULL,
    email         TEXT COLLATE "C" NOT NULL,
    email_lower   TEXT COLLATE "C" NOT NULL UNIQUE,
    role          TEXT COLLATE "C" NOT NULL,
    password_hash TEXT COLLATE "C" NOT NULL,
    active        BIGINT NOT NULL DEFAULT 1 CHECK (active IN (0, 1))
);

CREATE INDEX users_tenant ON users (tenant_id);

CREATE TABLE sessions (
    -- SHA-256 (hex) of the token; the token itself is never stored.
    token_hash TEXT COLLATE "C" PRIMARY KEY NOT NULL,
    user_id    TEXT COLLATE "C" NOT NULL REFERENCES users (id) ON DELETE CASCADE,
    created_at TEXT COLLATE "C" NOT NULL,
    expires_at BIGINT NOT NULL
);

CREATE INDEX sessions_expiry ON sessions (expires_at);
CREATE INDEX sessions_user ON sessions (user_id);

CREATE TABLE api_keys (
    rowid             BIGINT GENERATED ALWAYS AS IDENTITY UNIQUE,
    id                TEXT COLLATE "C" PRIMARY KEY NOT NULL,
    tenant_id         TEXT COLLATE "C" NOT NULL REFERENCES tenants (id),
    name              TEXT COLLATE "C" NOT NULL,
    -- Public part of the token; finds the row.
    prefix            TEXT COLLATE "C" NOT NULL UNIQUE,
    -- SHA-256 (hex) of the secret part of the token.
    secret_hash       TEXT COLLATE "C" NOT NULL,
    -- Space-separated scope tokens.
    scopes            TEXT COLLATE "C" NOT NULL,
    rate_requests     BIGINT NOT NULL,
    rate_window_secs  BIGINT NOT NULL,
    created_at        TEXT COLLATE "C" NOT NULL,
    revoked_at        TEXT COLLATE "C"
);

CREATE INDEX api_keys_tenant ON api_keys (tenant_id, created_at, rowid);

CREATE TABLE customers (
    id          TEXT COLLATE "C" PRIMARY KEY NOT NULL,
    tenant_id   TEXT COLLATE "C" NOT NULL REFERENCES tenants (id),
    name        TEXT COLLATE "C" NOT NULL,
    email       TEXT COLLATE "C" NOT NULL DEFAULT '',
    email_lower TEXT COLLATE "C" NOT NULL DEFAULT '',
    phone       TEXT COLLATE "C" NOT NULL DEFAULT ''
);

CREATE INDEX customers_by_name ON customers (tenant_id, name, id);
CREATE INDEX customers_by_email ON customers (tenant_id, email_lower);

CREATE TABLE task_templates (
    id         TEXT COLLATE "C" PRIMARY KEY NOT NULL,
    tenant_id  TEXT COLLATE "C" NOT NULL REFERENCES tenants (id),
    code       TEXT COLLATE "C" NOT NULL,
    name       TEXT COLLATE "C" NOT NULL,
    unit_price TEXT COLLATE "C" NOT NULL,
    cost_price TEXT COLLATE "C" NOT NULL,
    active     BIGINT NOT NULL DEFAULT 1 CHECK (active IN (0, 1)),
    UNIQUE (tenant_id, code)
);

CREATE TABLE cost_items (
    id        TEXT COLLATE "C" PRIMARY KEY NOT NULL,
    tenant_id TEXT COLLATE "C" NOT NULL REFERENCES tenants (id),
    code      TEXT COLLATE "C" NOT NULL,
    name      TEXT COLLATE "C" NOT NULL,
    item_type TEXT COLLATE "C" NOT NULL,
    active    BIGINT NOT NULL DEFAULT 1 CHECK (active IN (0, 1)),
    UNIQUE (tenant_id, code)
);

CREATE TABLE products (
    id         TEXT COLLATE "C" PRIMARY KEY NOT NULL,
    tenant_id  TEXT COLLATE "C" NOT NULL REFERENCES tenants (id),
    sku        TEXT COLLATE "C" NOT NULL,
    sku_lower  TEXT COLLATE "C" NOT NULL,
    name       TEXT COLLATE "C" NOT NULL,
    unit       TEXT COLLATE "C" NOT NULL,
    price      TEXT COLLATE "C" NOT NULL,
    cost_price TEXT COLLATE "C" NOT NULL,
    active     BIGINT NOT NULL DEFAULT 1 CHECK (active IN (0, 1)),
    UNIQUE (tenant_id, sku_lower)
);

-- products(): active rows of a tenant in sku order, answered from the index alone.
CREATE INDEX products_active_by_sku
    ON products (tenant_id, sku, id) INCLUDE (name, price, unit)
    WHERE active = 1;

CREATE TABLE product_tasks (
    product_id       TEXT COLLATE "C" NOT NULL REFERENCES products (id) ON DELETE CASCADE,
    position         BIGINT NOT NULL,
    task_template_id TEXT COLLATE "C" NOT NULL REFERENCES task_templates (id),
    qty_per_unit     TEXT COLLATE "C" NOT NULL,
    PRIMARY KEY (product_id, position)
);

CREATE TABLE jobs (
    id          TEXT COLLATE "C" PRIMARY KEY NOT NULL,
    tenant_id   TEXT COLLATE "C" NOT NULL REFERENCES tenants (id),
    reference   TEXT COLLATE "C" NOT NULL,
    customer_id TEXT COLLATE "C" NOT NULL REFERENCES customers (id),
    status      TEXT COLLATE "C" NOT NULL,
    closed      BIGINT NOT NULL DEFAULT 0 CHECK (closed IN (0, 1)),
    UNIQUE (tenant_id, reference)
);

CREATE TABLE quotes (
    rowid       BIGINT GENERATED ALWAYS AS IDENTITY UNIQUE,
    id          TEXT COLLATE "C" PRIMARY KEY NOT NULL,
    tenant_id   TEXT COLLATE "C" NOT NULL REFERENCES tenants (id),
    reference   TEXT COLLATE "C" NOT NULL,
    customer_id TEXT COLLATE "C" NOT NULL REFERENCES customers (id),
    job_id      TEXT COLLATE "C" REFERENCES jobs (id),
    title       TEXT COLLATE "C",
    quote_type  TEXT COLLATE "C" NOT NULL,
    status      TEXT COLLATE "C" NOT NULL,
    date        TEXT COLLATE "C" NOT NULL,
    expiry_days BIGINT NOT NULL,
    -- Sum of the lines' totals, kept with the lines for quotes().
    total       TEXT COLLATE "C" NOT NULL,
    UNIQUE (tenant_id, reference)
);

CREATE INDEX quotes_newest ON quotes (tenant_id, date DESC, rowid DESC);

CREATE TABLE quote_lines (
    quote_id       TEXT COLLATE "C" NOT NULL REFERENCES quotes (id) ON DELETE CASCADE,
    position       BIGINT NOT NULL,
    line_no        BIGINT NOT NULL,
    line_type      TEXT COLLATE "C" NOT NULL,
    linked_item_id TEXT COLLATE "C",
    product_code   TEXT COLLATE "C",
    description    TEXT COLLATE "C" NOT NULL,
    specification  TEXT COLLATE "C",
    location       TEXT COLLATE "C",
    qty            TEXT COLLATE "C" NOT NULL,
    unit           TEXT COLLATE "C" NOT NULL,
    unit_price     TEXT COLLATE "C" NOT NULL,
    cost_price     TEXT COLLATE "C" NOT NULL,
    tax_rate       TEXT COLLATE "C" NOT NULL,
    section        TEXT COLLATE "C",
    group_id       BIGINT NOT NULL,
    injected       BIGINT NOT NULL DEFAULT 0 CHECK (injected IN (0, 1)),
    parent_line_no BIGINT,
    PRIMARY KEY (quote_id, position),
    UNIQUE (quote_id, line_no)
);

CREATE TABLE quote_group_keys (
    quote_id  TEXT COLLATE "C" NOT NULL REFERENCES quotes (id) ON DELETE CASCADE,
    group_key TEXT COLLATE "C" NOT NULL,
    group_id  BIGINT NOT NULL,
    PRIMARY KEY (quote_id, group_key)
);

-- POST /quotes with an Idempotency-Key: one row per (key id, header value).
CREATE TABLE idempotency_keys (
    tenant_id  TEXT COLLATE "C" NOT NULL REFERENCES tenants (id),
    key_id     TEXT COLLATE "C" NOT NULL,
    idem_key   TEXT COLLATE "C" NOT NULL,
    body_hash  TEXT COLLATE "C" NOT NULL,
    quote_id   TEXT COLLATE "C" NOT NULL REFERENCES quotes (id),
    created_at TEXT COLLATE "C" NOT NULL,
    PRIMARY KEY (tenant_id, key_id, idem_key)
);

-- Installed tools (see sqlite/0003_tools.sql and 0004_tool_settings.sql).
CREATE TABLE tools (
    slug                 TEXT COLLATE "C" PRIMARY KEY NOT NULL,
    name                 TEXT COLLATE "C" NOT NULL,
    short_name           TEXT COLLATE "C" NOT NULL,
    tool_type            TEXT COLLATE "C" NOT NULL
                         CHECK (tool_type IN ('standalone', 'quoting_extension')),
    version              TEXT COLLATE "C" NOT NULL,
    description          TEXT COLLATE "C" NOT NULL,
    entry                TEXT COLLATE "C" NOT NULL,
    enabled              BIGINT NOT NULL DEFAULT 1 CHECK (enabled IN (0, 1)),
    bundle_sha256        TEXT COLLATE "C" NOT NULL,
    installed_at         TEXT COLLATE "C" NOT NULL,
    setting_declarations TEXT COLLATE "C" NOT NULL DEFAULT '[]',
    connect_origins      TEXT COLLATE "C" NOT NULL DEFAULT '[]'
);

CREATE TABLE tool_files (
    slug   TEXT COLLATE "C" NOT NULL REFERENCES tools (slug) ON DELETE CASCADE,
    path   TEXT COLLATE "C" NOT NULL,
    sha256 TEXT COLLATE "C" NOT NULL,
    body   BYTEA NOT NULL,
    PRIMARY KEY (slug, path)
);

CREATE TABLE tool_settings (
    tenant_id      TEXT COLLATE "C" NOT NULL REFERENCES tenants (id) ON DELETE CASCADE,
    slug           TEXT COLLATE "C" NOT NULL REFERENCES tools (slug) ON DELETE CASCADE,
    setting_values TEXT COLLATE "C" NOT NULL,
    updated_at     TEXT COLLATE "C" NOT NULL,
    PRIMARY KEY (tenant_id, slug)
);

CREATE INDEX tool_settings_by_slug ON tool_settings (slug);

-- Catalog versions (see sqlite/0002_catalog_version.sql): every change to a tenant's products,
-- their task sequences, task templates or cost items bumps the tenant's catalog_version, however
-- it is made. new_rows and old_rows are the statement's transition tables.

CREATE FUNCTION catalog_changed() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
    IF TG_OP = 'INSERT' THEN
        UPDATE tenants SET catalog_version = catalog_version + 1
        WHERE id IN (SELECT tenant_id FROM new_rows);
    ELSIF TG_OP = 'DELETE' THEN
        UPDATE tenants SET catalog_version = catalog_version + 1
        WHERE id IN (SELECT tenant_id FROM old_rows);
    ELSE
        UPDATE tenants SET catalog_version = catalog_version + 1
        WHERE id IN (SELECT tenant_id FROM old_rows UNION SELECT tenant_id FROM new_rows);
    END IF;
    RETURN NULL;
END;
$$;

-- The same for product_tasks, whose tenant is their product's.
CREATE FUNCTION product_tasks_changed() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
    IF TG_OP = 'INSERT' THEN
        UPDATE tenants SET catalog_version = catalog_version + 1
        WHERE id IN (SELECT p.tenant_id FROM products p JOIN new_rows r ON p.id = r.product_id);
    ELSIF TG_OP = 'DELETE' THEN
        UPDATE tenants SET catalog_version = catalog_version + 1
        WHERE id IN (SELECT p.tenant_id FROM products p JOIN old_rows r ON p.id = r.product_id);
    ELSE
        UPDATE tenants SET catalog_version = catalog_version + 1
        WHERE id IN (
            SELECT p.tenant_id FROM products p
            JOIN (SELECT product_id FROM old_rows UNION SELECT product_id FROM new_rows) r
            ON p.id = r.product_id
        );
    END IF;
    RETURN NULL;
END;
$$;

CREATE TRIGGER products_inserted AFTER INSERT ON products
    REFERENCING NEW TABLE AS new_rows
    FOR EACH STATEMENT EXECUTE FUNCTION catalog_changed();
CREATE TRIGGER products_updated AFTER UPDATE ON products
    REFERENCING OLD TABLE AS old_rows NEW TABLE AS new_rows
    FOR EACH STATEMENT EXECUTE FUNCTION catalog_changed();
CREATE TRIGGER products_deleted AFTER DELETE ON products
    REFERENCING OLD TABLE AS old_rows
    FOR EACH STATEMENT EXECUTE FUNCTION catalog_changed();

CREATE TRIGGER product_tasks_inserted AFTER INSERT ON product_tasks
    REFERENCING NEW TABLE AS new_rows
    FOR EACH STATEMENT EXECUTE FUNCTION product_tasks_changed();
CREATE TRIGGER product_tasks_updated AFTER UPDATE ON product_tasks
    REFERENCING OLD TABLE AS old_rows NEW TABLE AS new_rows
    FOR EACH STATEMENT EXECUTE FUNCTION product_tasks_changed();
CREATE TRIGGER product_tasks_deleted AFTER DELETE ON product_tasks
    REFERENCING OLD TABLE AS old_rows
    FOR EACH STATEMENT EXECUTE FUNCTION product_tasks_changed();

CREATE TRIGGER task_templates_inserted AFTER INSERT ON task_templates
    REFERENCING NEW TABLE AS new_rows
    FOR EACH STATEMENT EXECUTE FUNCTION catalog_changed();
CREATE TRIGGER task_templates_updated AFTER UPDATE ON task_templates
    REFERENCING OLD TABLE AS old_rows NEW TABLE AS new_rows
    FOR EACH STATEMENT EXECUTE FUNCTION catalog_changed();
CREATE TRIGGER task_templates_deleted AFTER DELETE ON task_templates
    REFERENCING OLD TABLE AS old_rows
    FOR EACH STATEMENT EXECUTE FUNCTION catalog_changed();

CREATE TRIGGER cost_items_inserted AFTER INSERT ON cost_items
    REFERENCING NEW TABLE AS new_rows
    FOR EACH STATEMENT EXECUTE FUNCTION catalog_changed();
CREATE TRIGGER cost_items_updated AFTER UPDATE ON cost_items
    REFERENCING OLD TABLE AS old_rows NEW TABLE AS new_rows
    FOR EACH STATEMENT EXECUTE FUNCTION catalog_changed();
CREATE TRIGGER cost_items_deleted AFTER DELETE ON cost_items
    REFERENCING OLD TABLE AS old_rows
    FOR EACH STATEMENT EXECUTE FUNCTION catalog_changed();
