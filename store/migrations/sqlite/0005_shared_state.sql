-- What several instances of the server must share beyond the data itself (the same tables on
-- SQLite, where there is one instance, so that the store reads and writes them one way):
--
-- rate_windows: each rate-limit bucket's current window (an API key's id, or the email of
-- sign-in attempts), counted by one upsert per request on the database's clock. window_end is
-- Unix seconds; a row whose window has ended is swept now and then.
--
-- live_events: what the app's pages hear live, written in the transaction of the change. Ids
-- grow in commit order within a tenant (AUTOINCREMENT: an id is never given twice, even after
-- the newest row is gone). created_at is Unix seconds; events are kept an hour, for pages that
-- reconnect and ask what they missed.

CREATE TABLE rate_windows (
    bucket     TEXT PRIMARY KEY NOT NULL,
    window_end INTEGER NOT NULL,
    count      INTEGER NOT NULL
);

CREATE TABLE live_events (
    id         INTEGER PRIMARY KEY AUTOINCREMENT,
    tenant_id  TEXT NOT NULL REFERENCES tenants (id) ON DELETE CASCADE,
    name       TEXT NOT NULL,
    data       TEXT NOT NULL,
    created_at INTEGER NOT NULL
);

CREATE INDEX live_events_by_tenant ON live_events (tenant_id, id);
CREATE INDEX live_events_by_age ON live_events (created_at);
