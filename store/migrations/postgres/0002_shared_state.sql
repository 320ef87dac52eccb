-- What several instances of the server share beyond the data itself: rate-limit windows and
-- live events (see sqlite/0005_shared_state.sql for what each column holds).
--
-- A live event's id comes from an identity column; the store takes an advisory lock of the
-- tenant's before it inserts one, so that within a tenant ids grow in commit order, and sends
-- the id with pg_notify in the same transaction.

CREATE TABLE rate_windows (
    bucket     TEXT COLLATE "C" PRIMARY KEY NOT NULL,
    window_end BIGINT NOT NULL,
    count      BIGINT NOT NULL
);

CREATE TABLE live_events (
    id         BIGINT GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
    tenant_id  TEXT COLLATE "C" NOT NULL REFERENCES tenants (id) ON DELETE CASCADE,
    name       TEXT COLLATE "C" NOT NULL,
    data       TEXT COLLATE "C" NOT NULL,
    created_at BIGINT NOT NULL
);

CREATE INDEX live_events_by_tenant ON live_events (tenant_id, id);
CREATE INDEX live_events_by_age ON live_events (created_at);
