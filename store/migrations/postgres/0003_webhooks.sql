-- Webhooks: each tenant's endpoints, and the outbox of deliveries to them (see
-- sqlite/0006_webhooks.sql for what each column holds).
--
-- Both tables have a `rowid` identity column, SQLite's implicit rowid: the order rows were made
-- in, which the store sorts by where times tie. Workers claim due deliveries with
-- `FOR UPDATE SKIP LOCKED`, so that two never claim the same row.

CREATE TABLE webhook_endpoints (
    rowid       BIGINT GENERATED ALWAYS AS IDENTITY UNIQUE,
    id          TEXT COLLATE "C" PRIMARY KEY NOT NULL,
    tenant_id   TEXT COLLATE "C" NOT NULL REFERENCES tenants (id) ON DELETE CASCADE,
    url         TEXT COLLATE "C" NOT NULL,
    event_types TEXT COLLATE "C" NOT NULL,
    enabled     BIGINT NOT NULL DEFAULT 1 CHECK (enabled IN (0, 1)),
    secret      TEXT COLLATE "C" NOT NULL,
    created_at  TEXT COLLATE "C" NOT NULL,
    updated_at  TEXT COLLATE "C" NOT NULL
);

CREATE INDEX webhook_endpoints_tenant ON webhook_endpoints (tenant_id, created_at);

CREATE TABLE webhook_deliveries (
    rowid           BIGINT GENERATED ALWAYS AS IDENTITY UNIQUE,
    id              TEXT COLLATE "C" PRIMARY KEY NOT NULL,
    tenant_id       TEXT COLLATE "C" NOT NULL REFERENCES tenants (id) ON DELETE CASCADE,
    endpoint_id     TEXT COLLATE "C" NOT NULL REFERENCES webhook_endpoints (id) ON DELETE CASCADE,
    event_id        TEXT COLLATE "C" NOT NULL,
    event_type      TEXT COLLATE "C" NOT NULL,
    payload         TEXT COLLATE "C" NOT NULL,
    created_at      BIGINT NOT NULL,
    status          TEXT COLLATE "C" NOT NULL CHECK (status IN ('pending', 'delivered', 'failed')),
    attempts        BIGINT NOT NULL DEFAULT 0,
    next_attempt_at BIGINT NOT NULL,
    lease_until     BIGINT,
    last_status     BIGINT,
    last_error      TEXT COLLATE "C",
    delivered_at    BIGINT
);

CREATE INDEX webhook_deliveries_due ON webhook_deliveries (status, next_attempt_at);
CREATE INDEX webhook_deliveries_log ON webhook_deliveries (endpoint_id, created_at);
