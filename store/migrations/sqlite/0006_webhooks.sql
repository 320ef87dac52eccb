-- Webhooks: each tenant's endpoints, and the outbox of deliveries to them.
--
-- webhook_endpoints: where a tenant's events go. event_types is a JSON array of event type
-- tokens (`quote.created`, …); enabled is 0 or 1. secret is the signing secret (`whsec_…`),
-- kept as it is because every delivery is signed with it. created_at and updated_at are ISO
-- 8601 UTC.
--
-- webhook_deliveries: one row per event and endpoint, written in the transaction of the change
-- the event describes, so that a crash after the commit loses nothing. event_id is shared by the
-- deliveries of one event and kept by a redelivery (a new row); payload is the exact JSON body
-- POSTed. status is pending, delivered or failed; attempts counts the attempts made;
-- next_attempt_at is when a pending delivery is due; a worker that claims one sets lease_until,
-- and no other worker claims it until then. last_status (an HTTP status) and last_error describe
-- the last attempt. Times are Unix seconds on the database's clock.

CREATE TABLE webhook_endpoints (
    id          TEXT PRIMARY KEY NOT NULL,
    tenant_id   TEXT NOT NULL REFERENCES tenants (id) ON DELETE CASCADE,
    url         TEXT NOT NULL,
    event_types TEXT NOT NULL,
    enabled     INTEGER NOT NULL DEFAULT 1 CHECK (enabled IN (0, 1)),
    secret      TEXT NOT NULL,
    created_at  TEXT NOT NULL,
    updated_at  TEXT NOT NULL
);

CREATE INDEX webhook_endpoints_tenant ON webhook_endpoints (tenant_id, created_at);

CREATE TABLE webhook_deliveries (
    id              TEXT PRIMARY KEY NOT NULL,
    tenant_id       TEXT NOT NULL REFERENCES tenants (id) ON DELETE CASCADE,
    endpoint_id     TEXT NOT NULL REFERENCES webhook_endpoints (id) ON DELETE CASCADE,
    event_id        TEXT NOT NULL,
    event_type      TEXT NOT NULL,
    payload         TEXT NOT NULL,
    created_at      INTEGER NOT NULL,
    status          TEXT NOT NULL CHECK (status IN ('pending', 'delivered', 'failed')),
    attempts        INTEGER NOT NULL DEFAULT 0,
    next_attempt_at INTEGER NOT NULL,
    lease_until     INTEGER,
    last_status     INTEGER,
    last_error      TEXT,
    delivered_at    INTEGER
);

CREATE INDEX webhook_deliveries_due ON webhook_deliveries (status, next_attempt_at);
CREATE INDEX webhook_deliveries_log ON webhook_deliveries (endpoint_id, created_at);
