//! Live events: what the app's open pages hear of (a quote created, saved or sent; a tool's
//! install settings changed), recorded in the transaction of the change they describe, so that an
//! event goes out exactly when its change is committed, and is kept a while for pages that
//! reconnect and ask what they missed.
//!
//! Each event is a row of `live_events` with an id that grows, within a tenant, in the order the
//! changes were committed:
//! - on `SQLite` there is one writer at a time, so ids are in commit order anyway, and the store
//!   hands the events of a write to its subscribers once it commits ([`crate::Write::commit`]);
//! - on `PostgreSQL` each recording transaction first takes a lock of its tenant's (an advisory
//!   transaction lock), held until it ends, so that of two writes of one tenant the later id
//!   commits later; and it sends the event's id with `pg_notify`, which `PostgreSQL` delivers only
//!   on commit, in commit order, to every instance. One listener per instance (one connection)
//!   reads each event by its id and hands it to that instance's subscribers.
//!
//! When an instance cannot vouch for what it hands on (its listener lost its connection, or a
//! subscriber fell behind), subscribers get [`Live::Missed`] and the pages reload.
//!
//! Events are kept for an hour ([`KEPT_SECS`]): a page that reconnects after longer reloads.

use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use sqlx::postgres::{PgListener, PgPool};
use tokio::sync::broadcast;
use tokio::task::JoinHandle;

use crate::db::{Backend, Pool, Tx, sql};
use crate::{Error, LiveListener, Store};

/// The `PostgreSQL` channel that carries the ids of committed events.
const CHANNEL: &str = "toolbridge_live";

/// How long an event is kept for pages that reconnect, in seconds.
pub(crate) const KEPT_SECS: i64 = 3600;

/// Events older than [`KEPT_SECS`] are removed by every this-many-th recording.
const PRUNE_EVERY: i64 = 64;

/// Events a subscriber may fall behind by before it hears [`Live::Missed`].
const BACKLOG: usize = 1024;

/// How long the listener waits before it tries again to reach the database.
const RETRY: Duration = Duration::from_secs(1);

/// A `live_events` row as the listener reads it: tenant, user, name and data.
type EventRow = (String, Option<String>, String, String);

/// An event the pages of one tenant hear.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct LiveEvent {
    /// Grows in commit order within the tenant; the Server-Sent Event's id.
    pub id: i64,
    /// The tenant whose pages hear it.
    pub tenant_id: String,
    /// The one user of the tenant whose pages hear it (their own preferences changed); `None`
    /// for every page of the tenant.
    pub user_id: Option<String>,
    /// The event's name (`toolbridge_protocol::live::QUOTE`, …).
    pub name: String,
    /// Its data, JSON.
    pub data: String,
}

/// What a subscriber of [`Store::live`] hears.
#[derive(Debug, Clone)]
pub enum Live {
    /// A committed event (of any tenant).
    Event(Arc<LiveEvent>),
    /// Events may have been missed: what a page shows should be reloaded.
    Missed,
}

/// What a page that reconnects has missed since an event it names ([`Store::live_backlog`]).
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Backlog {
    /// Every event of the tenant after it, oldest first (none when it missed nothing).
    Events(Vec<LiveEvent>),
    /// What came after it is no longer known (it is older than what is kept, or not an event of
    /// this database): the page should reload. `last` is the tenant's last event id now.
    Unknown {
        /// The tenant's last event id (0 when it has none).
        last: i64,
    },
}

/// The events of one store: its subscribers, and on `PostgreSQL` its listener.
#[derive(Debug)]
pub(crate) struct Feed {
    sender: broadcast::Sender<Live>,
    listener: Mutex<Option<JoinHandle<()>>>,
    /// Whether the listener has a connection that listens now (what readiness reports).
    connected: Arc<AtomicBool>,
}

impl Default for Feed {
    fn default() -> Self {
        Feed {
            sender: broadcast::channel(BACKLOG).0,
            listener: Mutex::new(None),
            connected: Arc::default(),
        }
    }
}

impl Drop for Feed {
    fn drop(&mut self) {
        if let Some(listener) = self
            .listener
            .get_mut()
            .unwrap_or_else(std::sync::PoisonError::into_inner)
            .take()
        {
            listener.abort();
        }
    }
}

impl Feed {
    /// Where the listener stands (`PostgreSQL`).
    pub(crate) fn listener_state(&self) -> LiveListener {
        let started = self
            .listener
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner)
            .is_some();
        match (started, self.connected.load(Ordering::SeqCst)) {
            (false, _) => LiveListener::NotStarted,
            (true, true) => LiveListener::Connected,
            (true, false) => LiveListener::Disconnected,
        }
    }

    /// Hands committed events to the subscribers (`SQLite`: the store's own writes are all there
    /// is).
    pub(crate) fn publish(&self, events: Vec<LiveEvent>) {
        for event in events {
            // No page listening is no error.
            let _ = self.sender.send(Live::Event(Arc::new(event)));
        }
    }
}

/// Records an event of `tenant_id` (for the pages of `user_id` alone, when given) in `tx`; it
/// goes out when `tx` commits. Returns it (its id given).
pub(crate) async fn record(
    tx: &mut Tx,
    tenant_id: &str,
    user_id: Option<&str>,
    name: &str,
    data: String,
) -> Result<LiveEvent, Error> {
    let backend = tx.backend();
    if backend == Backend::Postgres {
        // The two-key form, whose key space is apart from the store's other advisory locks.
        sql("SELECT pg_advisory_xact_lock(1953459318, hashtext($1))")
            .bind(tenant_id)
            .execute(&mut *tx)
            .await?;
    }
    let id: i64 = sql(format!(
        "INSERT INTO live_events (tenant_id, user_id, name, data, created_at) \
         VALUES ($1, $4, $2, $3, {}) RETURNING id",
        backend.unix_now()
    ))
    .bind(tenant_id)
    .bind(name)
    .bind(data.as_str())
    .bind(user_id)
    .fetch_scalar(&mut *tx)
    .await?;
    if id % PRUNE_EVERY == 0 {
        // The newest event is never removed: it tells which ids this database has given out.
        sql(format!(
            "DELETE FROM live_events WHERE created_at < {} - $1 AND id < $2",
            backend.unix_now()
        ))
        .bind(KEPT_SECS)
        .bind(id)
        .execute(&mut *tx)
        .await?;
    }
    if backend == Backend::Postgres {
        sql("SELECT pg_notify($1, $2)")
            .bind(CHANNEL)
            .bind(id.to_string())
            .execute(&mut *tx)
            .await?;
    }
    Ok(LiveEvent {
        id,
        tenant_id: tenant_id.to_owned(),
        user_id: user_id.map(str::to_owned),
        name: name.to_owned(),
        data,
    })
}

impl Store {
    /// Every event committed from now on, of every tenant, on whichever instance it was made
    /// (on `PostgreSQL`), in commit order within a tenant.
    ///
    /// On `PostgreSQL` the first call starts this instance's listener if [`Store::listen`] has
    /// not; until it listens, events are missed, and subscribers then hear [`Live::Missed`].
    pub fn live(&self) -> broadcast::Receiver<Live> {
        let receiver = self.live.sender.subscribe();
        if let Pool::Postgres(pool) = &self.pool {
            let mut listener = self
                .live
                .listener
                .lock()
                .unwrap_or_else(std::sync::PoisonError::into_inner);
            if listener.is_none() {
                let (pool, sender) = (pool.clone(), self.live.sender.clone());
                let connected = Arc::clone(&self.live.connected);
                *listener = Some(tokio::spawn(async move {
                    if let Some(first) = connect(&pool).await {
                        connected.store(true, Ordering::SeqCst);
                        let _ = sender.send(Live::Missed);
                        relay(pool, first, sender, &connected).await;
                    }
                }));
            }
        }
        receiver
    }

    /// Starts this instance's listener and waits until it listens (on `PostgreSQL`; nothing to do
    /// on `SQLite`), so that no event committed after this returns is missed. A server calls it
    /// before it serves. (Once [`Store::live`] has started the listener, it returns at once.)
    ///
    /// # Errors
    ///
    /// When the database cannot be reached or refuses to listen.
    pub async fn listen(&self) -> Result<(), Error> {
        let Pool::Postgres(pool) = &self.pool else {
            return Ok(());
        };
        if self.listening() {
            return Ok(());
        }
        let mut listener = PgListener::connect_with(pool).await?;
        listener.eager_reconnect(false);
        listener.listen(CHANNEL).await?;
        let mut slot = self
            .live
            .listener
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner);
        if slot.is_none() {
            let (pool, sender) = (pool.clone(), self.live.sender.clone());
            let connected = Arc::clone(&self.live.connected);
            connected.store(true, Ordering::SeqCst);
            *slot = Some(tokio::spawn(async move {
                relay(pool, listener, sender, &connected).await;
            }));
        }
        Ok(())
    }

    /// Whether this instance's listener has been started.
    fn listening(&self) -> bool {
        self.live
            .listener
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner)
            .is_some()
    }

    /// What a page of `tenant_id`'s user `user_id` missed after the event `after`: the events
    /// since (those of the tenant's pages, and those of this user's alone), or
    /// [`Backlog::Unknown`] when that can no longer be told.
    pub async fn live_backlog(
        &self,
        tenant_id: &str,
        user_id: &str,
        after: i64,
    ) -> Result<Backlog, Error> {
        let mut tx = self.pool.begin_read().await?;
        let (oldest, newest): (Option<i64>, Option<i64>) =
            sql("SELECT MIN(id), MAX(id) FROM live_events")
                .fetch_one(&mut tx)
                .await?;
        // Every id from the oldest kept on is still there; one past the newest was never given.
        let known = matches!((oldest, newest), (Some(oldest), Some(newest)) if oldest <= after && after <= newest);
        let backlog = if known {
            let rows: Vec<(i64, Option<String>, String, String)> = sql(
                "SELECT id, user_id, name, data FROM live_events WHERE tenant_id = $1 AND id > $2 \
                 AND (user_id IS NULL OR user_id = $3) ORDER BY id",
            )
            .bind(tenant_id)
            .bind(after)
            .bind(user_id)
            .fetch_all(&mut tx)
            .await?;
            Backlog::Events(
                rows.into_iter()
                    .map(|(id, user_id, name, data)| LiveEvent {
                        id,
                        tenant_id: tenant_id.to_owned(),
                        user_id,
                        name,
                        data,
                    })
                    .collect(),
            )
        } else {
            Backlog::Unknown {
                last: last_id(&mut tx, tenant_id).await?,
            }
        };
        tx.commit().await?;
        Ok(backlog)
    }

    /// The id of the tenant's last committed event (0 when it has none).
    pub async fn last_live_event_id(&self, tenant_id: &str) -> Result<i64, Error> {
        let mut tx = self.pool.begin_read().await?;
        let last = last_id(&mut tx, tenant_id).await?;
        tx.commit().await?;
        Ok(last)
    }
}

async fn last_id(tx: &mut Tx, tenant_id: &str) -> Result<i64, Error> {
    let last: Option<i64> = sql("SELECT MAX(id) FROM live_events WHERE tenant_id = $1")
        .bind(tenant_id)
        .fetch_scalar(tx)
        .await?;
    Ok(last.unwrap_or(0))
}

/// A listener on [`CHANNEL`], trying until the database answers (`None` once the pool is
/// closed).
async fn connect(pool: &PgPool) -> Option<PgListener> {
    while !pool.is_closed() {
        let listening = async {
            let mut listener = PgListener::connect_with(pool).await?;
            // A lost connection is told at once (`Ok(None)`), for `relay` to listen again on a
            // new one, rather than first waited for while the listener seemed connected.
            listener.eager_reconnect(false);
            listener.listen(CHANNEL).await?;
            Ok::<_, sqlx::Error>(listener)
        };
        match listening.await {
            Ok(listener) => return Some(listener),
            Err(error) => {
                tracing::warn!(%error, "live events: cannot listen; trying again");
                tokio::time::sleep(RETRY).await;
            }
        }
    }
    None
}

/// Hands each event whose id `listener` hears to the subscribers, until the store is dropped.
/// When the connection is lost, listens again on a new one, then tells the subscribers that they
/// may have missed events. `connected` says meanwhile whether it listens.
async fn relay(
    pool: PgPool,
    mut listener: PgListener,
    sender: broadcast::Sender<Live>,
    connected: &AtomicBool,
) {
    // However the relay ends (the pool closed, or the task aborted), it no longer listens.
    let _ending = NotConnectedOnDrop(connected);
    while !pool.is_closed() {
        match listener.try_recv().await {
            Ok(Some(notification)) => {
                let Ok(id) = notification.payload().parse::<i64>() else {
                    continue;
                };
                let row: Result<Option<EventRow>, sqlx::Error> =
                    sql("SELECT tenant_id, user_id, name, data FROM live_events WHERE id = $1")
                        .bind(id)
                        .fetch_optional(&Pool::Postgres(pool.clone()))
                        .await;
                let live = match row {
                    Ok(Some((tenant_id, user_id, name, data))) => {
                        Live::Event(Arc::new(LiveEvent {
                            id,
                            tenant_id,
                            user_id,
                            name,
                            data,
                        }))
                    }
                    // Pruned already, or unreadable: the pages reload instead.
                    Ok(None) => Live::Missed,
                    Err(error) => {
                        tracing::warn!(%error, id, "live events: cannot read an event");
                        Live::Missed
                    }
                };
                let _ = sender.send(live);
            }
            Ok(None) | Err(_) if pool.is_closed() => return,
            Ok(None) | Err(_) => {
                connected.store(false, Ordering::SeqCst);
                tracing::warn!("live events: the listener lost its connection; listening again");
                drop(listener);
                let Some(again) = connect(&pool).await else {
                    return;
                };
                listener = again;
                connected.store(true, Ordering::SeqCst);
                let _ = sender.send(Live::Missed);
            }
        }
    }
}

/// Marks the listener as not connected when dropped.
struct NotConnectedOnDrop<'a>(&'a AtomicBool);

impl Drop for NotConnectedOnDrop<'_> {
    fn drop(&mut self) {
        self.0.store(false, Ordering::SeqCst);
    }
}
