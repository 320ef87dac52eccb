//! The one boundary to toolbridge's database.
//!
//! Handlers talk to a [`Store`] and never to SQL: tenants, users and their
//! sessions, API keys, the catalog (products, task templates, cost items),
//! customers, jobs and quotes, and the installed tools with their files.
//! Today the store is one `SQLite` file (WAL, foreign keys on, migrations
//! run on open); a `PostgreSQL` store can sit behind the same methods later.
//!
//! Every read and write of a tenant's data is scoped to that tenant: another
//! tenant's id behaves exactly like an id that does not exist (`NOT_FOUND`,
//! or an `INVALID_PARAMS` violation where the id is a field of a request).
//! Installed tools belong to the platform and are the same for every tenant;
//! the values of their install settings are each tenant's own.
//!
//! Failures come as one [`Error`], whose kinds name what happened in the
//! store (a record not found, input that breaks a rule, a quote no longer a
//! Draft, …, or a failure of the database with its cause); what each means
//! to a client is for the caller to say.

#![deny(missing_docs)]

mod auth;
mod cache;
mod catalog;
mod error;
mod migrations;
mod quotes;
mod reads;
mod seed;
mod tools;
mod types;
mod util;

use std::fmt;
use std::path::Path;
use std::str::FromStr;
use std::sync::Arc;
use std::time::Duration;

use sqlx::sqlite::{SqliteConnectOptions, SqliteJournalMode, SqlitePoolOptions, SqliteSynchronous};
use sqlx::{Sqlite, SqliteConnection, SqlitePool, Transaction};
use tokio::sync::MutexGuard;

pub use auth::{KEY_NAME_MAX_CHARS, new_api_key_problems};
pub use catalog::NewProduct;
pub use error::{Cause, Error, QuoteAction, Record, Unique};
pub use seed::{DEFAULT_SEED_PRODUCTS, DEMO_PASSWORD};
pub use tools::{InstalledTool, ToolFile};
pub use types::{
    ApiKey, Created, DemoSignIn, Idempotency, NewApiKey, RateLimit, Scope, Tenant, User,
};

/// Connections in the pool per core, and the bounds on the total. Readers
/// run side by side (WAL) but each keeps a core busy while it runs, and
/// writers take turns (`BEGIN IMMEDIATE`) whatever the pool's size; more
/// connections than the cores can serve only add memory (each has a thread
/// and caches of its own). On 2 cores, 4 connections answered the load test
/// as fast as 16 did.
const CONNECTIONS_PER_CORE: u32 = 2;
/// The fewest connections the pool may open, whatever the cores.
const MIN_CONNECTIONS: u32 = 4;
/// The most connections the pool may open, whatever the cores.
const MAX_CONNECTIONS: u32 = 16;

/// The page cache of each connection, in KiB (`PRAGMA cache_size`, which
/// takes KiB as a negative number). The kernel's page cache already holds the
/// file, so a large cache per connection mostly duplicates it: SQLite's
/// default of 2 MiB per connection made the server's memory grow with the
/// database until every cache was full (16 connections, 32 MiB), with no
/// measurable gain in throughput over 128 KiB (which keeps the interior pages
/// of the indexes).
const PAGE_CACHE_KIB: u32 = 128;

/// How long a statement waits for another connection's write lock.
const BUSY_TIMEOUT: Duration = Duration::from_secs(5);

/// The database. Cheap to clone: clones share one connection pool (and the
/// in-memory copies of catalog reads).
#[derive(Clone)]
pub struct Store {
    pool: SqlitePool,
    catalogs: Arc<cache::CatalogCache>,
    /// Where this process's write transactions queue, first come first
    /// served, before they take SQLite's write lock (`BEGIN IMMEDIATE`).
    /// SQLite's own wait for that lock is a poll that is not fair: under
    /// many writers one of them could lose every time until the busy timeout
    /// and fail.
    writes: Arc<tokio::sync::Mutex<()>>,
}

impl fmt::Debug for Store {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Store")
            .field("pool", &self.pool)
            .finish_non_exhaustive()
    }
}

/// How many connections the pool may open on this machine.
fn pool_size() -> u32 {
    let cores = std::thread::available_parallelism()
        .ok()
        .and_then(|cores| u32::try_from(cores.get()).ok())
        .unwrap_or(1);
    cores
        .saturating_mul(CONNECTIONS_PER_CORE)
        .clamp(MIN_CONNECTIONS, MAX_CONNECTIONS)
}

impl Store {
    /// Opens (creating if missing) a `SQLite` file: WAL, foreign keys on,
    /// busy timeout 5 s, a small page cache per connection; runs the
    /// migrations that have not run yet.
    pub async fn open(path: &Path) -> Result<Store, Error> {
        let options = SqliteConnectOptions::from_str("sqlite:")?
            .filename(path)
            .create_if_missing(true)
            .journal_mode(SqliteJournalMode::Wal)
            .synchronous(SqliteSynchronous::Normal)
            .foreign_keys(true)
            .busy_timeout(BUSY_TIMEOUT)
            .pragma("cache_size", format!("-{PAGE_CACHE_KIB}"));
        let pool = SqlitePoolOptions::new()
            .max_connections(pool_size())
            .min_connections(1)
            .connect_with(options)
            .await?;
        migrations::migrator().await?.run(&pool).await?;
        Ok(Store {
            pool,
            catalogs: Arc::default(),
            writes: Arc::default(),
        })
    }

    /// A write transaction, begun in this process's turn at writing, with
    /// SQLite's write lock taken first (`BEGIN IMMEDIATE`), so that what it
    /// reads stays true until it commits.
    pub(crate) async fn begin_write(&self) -> Result<Write<'_>, Error> {
        let turn = self.writes.lock().await;
        let tx = self.pool.begin_with("BEGIN IMMEDIATE").await?;
        Ok(Write { tx, _turn: turn })
    }

    /// Closes every connection (the store is unusable afterwards).
    pub async fn close(&self) {
        self.pool.close().await;
    }

    /// Whether any tenant exists yet.
    pub async fn is_seeded(&self) -> Result<bool, Error> {
        let exists: bool = sqlx::query_scalar("SELECT EXISTS (SELECT 1 FROM tenants)")
            .fetch_one(&self.pool)
            .await?;
        Ok(exists)
    }

    /// The first tenant made (the demo tenant), for the CLI.
    pub async fn default_tenant(&self) -> Result<Option<Tenant>, Error> {
        let row: Option<(String, String)> =
            sqlx::query_as("SELECT id, name FROM tenants ORDER BY rowid LIMIT 1")
                .fetch_optional(&self.pool)
                .await?;
        Ok(row.map(|(id, name)| Tenant { id, name }))
    }

    /// The tenant with this id.
    pub async fn tenant(&self, tenant_id: &str) -> Result<Option<Tenant>, Error> {
        let row: Option<(String, String)> =
            sqlx::query_as("SELECT id, name FROM tenants WHERE id = ?")
                .bind(toolbridge_protocol::catalog::id_key(tenant_id))
                .fetch_optional(&self.pool)
                .await?;
        Ok(row.map(|(id, name)| Tenant { id, name }))
    }
}

/// A write transaction of [`Store::begin_write`]: the connection it runs on,
/// and this process's turn at writing, held until it ends.
pub(crate) struct Write<'s> {
    tx: Transaction<'static, Sqlite>,
    _turn: MutexGuard<'s, ()>,
}

impl Write<'_> {
    /// Commits; dropped without this, the transaction rolls back.
    pub(crate) async fn commit(self) -> Result<(), Error> {
        self.tx.commit().await?;
        Ok(())
    }
}

impl std::ops::Deref for Write<'_> {
    type Target = SqliteConnection;

    fn deref(&self) -> &SqliteConnection {
        &self.tx
    }
}

impl std::ops::DerefMut for Write<'_> {
    fn deref_mut(&mut self) -> &mut SqliteConnection {
        &mut self.tx
    }
}
