//! The one boundary to toolbridge's database.
//!
//! Handlers talk to a [`Store`] and never to SQL: tenants, users (made by an
//! operator, with passwords the policy of [`password_problem`] allows) and their
//! sessions, API keys, the catalog (products, task templates, cost items),
//! customers, jobs and quotes, and the installed tools with their files.
//! The store is one `SQLite` file (WAL, foreign keys on), the embedded
//! default, or a `PostgreSQL` database that several instances can share
//! ([`Location`]); each has its own migrations, run on open, and the same
//! methods answer the same on both (`db.rs` says how).
//!
//! Every read and write of a tenant's data is scoped to that tenant: another
//! tenant's id behaves exactly like an id that does not exist (`NOT_FOUND`,
//! or an `INVALID_PARAMS` violation where the id is a field of a request).
//! Installed tools belong to the platform and are the same for every tenant;
//! the values of their install settings are each tenant's own.
//!
//! What several instances of the server must share lives here too: rate-limit
//! windows counted on the database's clock ([`Store::count_request`]), and the
//! live events the app's pages hear, recorded in the transaction of each
//! change (who made it is an argument of every write that has one) and heard
//! by every instance ([`Store::live`], [`Store::live_backlog`]); and the
//! outbox of webhook deliveries, written in the transaction of each quote
//! change and claimed by one worker at a time ([`Store::claim_deliveries`]);
//! and the keys every instance signs identity tokens with
//! ([`Store::signing_key`], [`Store::rotate_signing_key`]).
//!
//! Failures come as one [`Error`], whose kinds name what happened in the
//! store (a record not found, input that breaks a rule, a quote no longer a
//! Draft, …, or a failure of the database with its cause); what each means
//! to a client is for the caller to say.

#![deny(missing_docs)]

mod accounts;
mod auth;
mod cache;
mod catalog;
mod db;
mod error;
mod health;
mod limits;
mod live;
mod migrations;
mod password;
mod preferences;
mod quotes;
mod reads;
mod sealing;
mod seed;
mod signing;
mod stats;
mod tools;
mod types;
mod util;
mod webhooks;

use std::fmt;
use std::path::{Path, PathBuf};
use std::str::FromStr;
use std::sync::Arc;
use std::time::Duration;

use sqlx::postgres::{PgConnectOptions, PgPoolOptions};
use sqlx::sqlite::{SqliteConnectOptions, SqliteJournalMode, SqlitePoolOptions, SqliteSynchronous};
use sqlx::{Connection, PgConnection};
use tokio::sync::MutexGuard;

pub use accounts::{EMAIL_MAX_CHARS, NewTenant, NewUser, new_tenant_problems, new_user_problems};
pub use auth::{KEY_NAME_MAX_CHARS, new_api_key_problems};
pub use catalog::NewProduct;
pub use error::{Cause, Error, QuoteAction, Record, Unique};
pub use health::{LiveListener, MigrationStatus};
pub use limits::Quota;
pub use live::{Backlog, Live, LiveEvent};
pub use password::{
    GENERATED_PASSWORD_CHARS, PASSWORD_MAX_CHARS, PASSWORD_MIN_CHARS, generate_password,
    is_common_password, password_problem,
};
pub use sealing::{SECRETS_KEY_BYTES, SecretsAtRest, SecretsKey};
pub use seed::{DEFAULT_SEED_PRODUCTS, DEMO_PASSWORD};
pub use signing::{PrivateKey, Rotated, Rotation, SigningKey, SigningKeyInfo};
pub use stats::{DeliveryQueue, PoolUsage};
pub use tools::{InstalledTool, ToolFile};
pub use types::{
    Account, ApiKey, Conditions, DemoSignIn, Expected, Idempotency, NewApiKey, RateLimit, Scope,
    Tenant, User, Versioned, Written,
};
pub use util::iso_from_unix;
pub use webhooks::{
    CLAIM_MAX, ClaimedDelivery, DELIVERY_ERROR_MAX_CHARS, DeliveryOutcome, NewWebhookEndpoint,
    WebhookDelivery, WebhookEndpoint, WebhookEndpointChange, WebhookEndpointWithSecret,
};

use db::{Backend, Pool, Turn, Tx, sql};

/// `SQLite` connections in the pool per core, and the bounds on the total.
/// Readers run side by side (WAL) but each keeps a core busy while it runs,
/// and writers take turns (`BEGIN IMMEDIATE`) whatever the pool's size; more
/// connections than the cores can serve only add memory (each has a thread
/// and caches of its own). On 2 cores, 4 connections answered the load test
/// as fast as 16 did.
const CONNECTIONS_PER_CORE: u32 = 2;
/// The fewest connections the `SQLite` pool may open, whatever the cores.
const MIN_CONNECTIONS: u32 = 4;
/// The most connections the `SQLite` pool may open, whatever the cores.
const MAX_CONNECTIONS: u32 = 16;

/// `PostgreSQL` connections in the pool per core, and the bounds on the total.
/// A statement there spends most of its time waiting on the network and the
/// server, not on this process's cores, so more connections than cores keep
/// them busy; the bounds leave room for several instances within the
/// server's default `max_connections` (100).
const PG_CONNECTIONS_PER_CORE: u32 = 4;
/// The fewest connections the `PostgreSQL` pool may open, whatever the cores.
const PG_MIN_CONNECTIONS: u32 = 8;
/// The most connections the `PostgreSQL` pool may open, whatever the cores.
const PG_MAX_CONNECTIONS: u32 = 32;

/// How long opening a `PostgreSQL` store waits for the server's first answer.
const PG_CONNECT_TIMEOUT: Duration = Duration::from_secs(10);

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

/// Where a store keeps its data, as `--db` gives it: a `SQLite` file's path,
/// or a `postgres://` (or `postgresql://`) URL.
#[derive(Clone, PartialEq, Eq)]
pub enum Location {
    /// A `SQLite` file (created if missing).
    Sqlite(PathBuf),
    /// A `PostgreSQL` database, by its URL (which sqlx reads: host, port,
    /// user, password, database, `sslmode`, `sslrootcert`, …).
    Postgres(String),
}

impl FromStr for Location {
    type Err = Error;

    /// A URL whose scheme is `postgres` or `postgresql` names a `PostgreSQL`
    /// database (checked here: a malformed one is refused with what is wrong
    /// in it); any other scheme is refused; anything else is a file's path.
    fn from_str(text: &str) -> Result<Self, Error> {
        let unusable = |problem: String| Error::Unusable {
            database: redacted(text),
            problem,
        };
        if text.trim().is_empty() {
            return Err(unusable(
                "it is empty; give a SQLite file's path or a postgres:// URL".to_owned(),
            ));
        }
        let scheme = text
            .split_once("://")
            .map(|(scheme, _)| scheme)
            .filter(|scheme| {
                !scheme.is_empty()
                    && scheme
                        .chars()
                        .all(|c| c.is_ascii_alphanumeric() || matches!(c, '+' | '-' | '.'))
            });
        match scheme.map(str::to_ascii_lowercase).as_deref() {
            None => Ok(Location::Sqlite(PathBuf::from(text))),
            Some("postgres" | "postgresql") => match PgConnectOptions::from_str(text) {
                Ok(_) => Ok(Location::Postgres(text.to_owned())),
                Err(error) => Err(unusable(format!(
                    "not a PostgreSQL URL toolbridge can read: {}",
                    Unwrapped(&error)
                ))),
            },
            Some(other) => Err(unusable(format!(
                "{other}:// is not a database toolbridge uses; give a SQLite file's path or a postgres:// URL"
            ))),
        }
    }
}

impl fmt::Display for Location {
    /// The path, or the URL with its password hidden.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Location::Sqlite(path) => write!(f, "{}", path.display()),
            Location::Postgres(url) => f.write_str(&redacted(url)),
        }
    }
}

impl fmt::Debug for Location {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Location::Sqlite(path) => f.debug_tuple("Sqlite").field(path).finish(),
            Location::Postgres(_) => f.debug_tuple("Postgres").field(&self.to_string()).finish(),
        }
    }
}

/// A configuration error's own words (sqlx prefixes `error with configuration: `).
struct Unwrapped<'a>(&'a sqlx::Error);

impl fmt::Display for Unwrapped<'_> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self.0 {
            sqlx::Error::Configuration(cause) => write!(f, "{cause}"),
            other => write!(f, "{other}"),
        }
    }
}

/// `text` with the password of a URL (`user:password@`, `password=`) hidden.
fn redacted(text: &str) -> String {
    let Some((scheme, rest)) = text.split_once("://") else {
        return text.to_owned();
    };
    let authority_end = rest.find(['/', '?', '#']).unwrap_or(rest.len());
    let (authority, tail) = rest.split_at(authority_end);
    let authority = match authority.rsplit_once('@') {
        Some((user_info, host)) => match user_info.split_once(':') {
            Some((user, _)) => format!("{user}:***@{host}"),
            None => authority.to_owned(),
        },
        None => authority.to_owned(),
    };
    let tail = match tail.split_once('?') {
        Some((path, query)) => {
            let query: Vec<String> = query
                .split('&')
                .map(|pair| match pair.split_once('=') {
                    Some((key, _)) if key.eq_ignore_ascii_case("password") => format!("{key}=***"),
                    _ => pair.to_owned(),
                })
                .collect();
            format!("{path}?{}", query.join("&"))
        }
        None => tail.to_owned(),
    };
    format!("{scheme}://{authority}{tail}")
}

/// The database. Cheap to clone: clones share one connection pool (and the
/// in-memory copies of catalog reads).
#[derive(Clone)]
pub struct Store {
    pool: Pool,
    catalogs: Arc<cache::CatalogCache>,
    /// Where this process's write transactions queue, first come first
    /// served, before they take SQLite's write lock (`BEGIN IMMEDIATE`).
    /// SQLite's own wait for that lock is a poll that is not fair: under
    /// many writers one of them could lose every time until the busy timeout
    /// and fail. (`PostgreSQL` writes lock the rows they change instead.)
    writes: Arc<tokio::sync::Mutex<()>>,
    /// The live events' subscribers, and on `PostgreSQL` this instance's
    /// listener.
    live: Arc<live::Feed>,
    /// Whether the demo password matches a demo user's hash, by hash, so that
    /// the sign-in page's list costs one argon2 check per password set.
    demo_hashes: Arc<seed::DemoHashes>,
    /// The key secrets are sealed with at rest, when the operator gave one
    /// ([`Store::with_secrets_key`]).
    secrets_key: Option<Arc<sealing::SecretsKey>>,
}

impl fmt::Debug for Store {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Store")
            .field("pool", &self.pool)
            .finish_non_exhaustive()
    }
}

/// How many connections a pool may open on this machine: `per_core` for
/// each core, within `min..=max`.
fn pool_size(per_core: u32, min: u32, max: u32) -> u32 {
    let cores = std::thread::available_parallelism()
        .ok()
        .and_then(|cores| u32::try_from(cores.get()).ok())
        .unwrap_or(1);
    cores.saturating_mul(per_core).clamp(min, max)
}

impl Store {
    /// Opens the store at `location`: [`Store::open`] for a `SQLite` file,
    /// [`Store::open_postgres`] for a `PostgreSQL` URL.
    pub async fn connect(location: &Location) -> Result<Store, Error> {
        match location {
            Location::Sqlite(path) => Store::open(path).await,
            Location::Postgres(url) => Store::open_postgres(url).await,
        }
    }

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
            .max_connections(pool_size(
                CONNECTIONS_PER_CORE,
                MIN_CONNECTIONS,
                MAX_CONNECTIONS,
            ))
            .min_connections(1)
            .connect_with(options)
            .await?;
        migrations::migrator(Backend::Sqlite)
            .await?
            .run(&pool)
            .await?;
        Ok(Store::with(Pool::Sqlite(pool)))
    }

    /// Opens a `PostgreSQL` database by its URL (the database must exist, in
    /// UTF-8) and runs the migrations that have not run yet. Several
    /// instances may open one database at once: the first migrates while the
    /// others wait (an advisory lock, which [`Store::seed_demo`] takes too).
    pub async fn open_postgres(url: &str) -> Result<Store, Error> {
        let location = Location::from_str(url)?;
        let options = PgConnectOptions::from_str(url)
            .map_err(|error| Error::Unusable {
                database: location.to_string(),
                problem: Unwrapped(&error).to_string(),
            })?
            .application_name("toolbridge");
        // One connection first, for the server's own reason when it cannot
        // be reached (a pool retries a refused connection until its timeout,
        // and then says only that it timed out).
        let mut setup =
            tokio::time::timeout(PG_CONNECT_TIMEOUT, PgConnection::connect_with(&options))
                .await
                .map_err(|_| {
                    sqlx::Error::Io(std::io::Error::new(
                        std::io::ErrorKind::TimedOut,
                        format!("no answer within {} s", PG_CONNECT_TIMEOUT.as_secs()),
                    ))
                })??;
        let encoding: String = sql("SHOW server_encoding").fetch_scalar(&mut setup).await?;
        if encoding != "UTF8" {
            return Err(Error::Unusable {
                database: location.to_string(),
                problem: format!(
                    "its encoding is {encoding}; toolbridge needs UTF8 (CREATE DATABASE … ENCODING 'UTF8')"
                ),
            });
        }
        sql("SELECT pg_advisory_lock($1)")
            .bind(Turn::Setup.key())
            .execute(&mut setup)
            .await?;
        let migrated = match migrations::migrator(Backend::Postgres).await {
            Ok(migrator) => migrator.run_direct(&mut setup).await.map_err(Error::from),
            Err(error) => Err(error),
        };
        // Closing the session ends its advisory lock, whatever happened.
        setup.close().await?;
        migrated?;
        let pool = PgPoolOptions::new()
            .max_connections(pool_size(
                PG_CONNECTIONS_PER_CORE,
                PG_MIN_CONNECTIONS,
                PG_MAX_CONNECTIONS,
            ))
            .connect_with(options)
            .await?;
        Ok(Store::with(Pool::Postgres(pool)))
    }

    fn with(pool: Pool) -> Store {
        Store {
            pool,
            catalogs: Arc::default(),
            writes: Arc::default(),
            live: Arc::default(),
            demo_hashes: Arc::default(),
            secrets_key: None,
        }
    }

    /// A write transaction, begun in this process's turn at writing, with
    /// SQLite's write lock taken first (`BEGIN IMMEDIATE`), so that what it
    /// reads stays true until it commits. On `PostgreSQL`, a plain
    /// transaction: what it reads and must stay true, it locks.
    pub(crate) async fn begin_write(&self) -> Result<Write<'_>, Error> {
        let turn = self.write_turn().await;
        let tx = self.pool.begin_write().await?;
        Ok(Write {
            tx,
            _turn: turn,
            live: &self.live,
            recorded: Vec::new(),
        })
    }

    /// On `SQLite`, this process's turn at writing, for a write of its own
    /// or a single statement that writes; `None` on `PostgreSQL`.
    pub(crate) async fn write_turn(&self) -> Option<MutexGuard<'_, ()>> {
        match self.pool.backend() {
            Backend::Sqlite => Some(self.writes.lock().await),
            Backend::Postgres => None,
        }
    }

    /// Closes every connection (the store is unusable afterwards).
    pub async fn close(&self) {
        self.pool.close().await;
    }

    /// Whether any tenant exists yet.
    pub async fn is_seeded(&self) -> Result<bool, Error> {
        let exists: bool = sql("SELECT EXISTS (SELECT 1 FROM tenants)")
            .fetch_scalar(&self.pool)
            .await?;
        Ok(exists)
    }

    /// The first tenant made (on a demo database, Harbour Flooring Ltd).
    pub async fn default_tenant(&self) -> Result<Option<Tenant>, Error> {
        let row: Option<(String, String)> =
            sql("SELECT id, name FROM tenants ORDER BY rowid LIMIT 1")
                .fetch_optional(&self.pool)
                .await?;
        Ok(row.map(|(id, name)| Tenant { id, name }))
    }

    /// The tenant with this id.
    pub async fn tenant(&self, tenant_id: &str) -> Result<Option<Tenant>, Error> {
        let row: Option<(String, String)> = sql("SELECT id, name FROM tenants WHERE id = $1")
            .bind(toolbridge_protocol::catalog::id_key(tenant_id))
            .fetch_optional(&self.pool)
            .await?;
        Ok(row.map(|(id, name)| Tenant { id, name }))
    }
}

/// A write transaction of [`Store::begin_write`]: the transaction, on
/// `SQLite` this process's turn at writing, held until it ends, and the live
/// events it recorded.
pub(crate) struct Write<'s> {
    tx: Tx,
    _turn: Option<MutexGuard<'s, ()>>,
    live: &'s live::Feed,
    recorded: Vec<LiveEvent>,
}

impl Write<'_> {
    /// Records a live event of `tenant_id` (`name`, JSON `data`), which goes
    /// out if and when this transaction commits.
    pub(crate) async fn record_live(
        &mut self,
        tenant_id: &str,
        name: &str,
        data: String,
    ) -> Result<(), Error> {
        let event = live::record(&mut self.tx, tenant_id, None, name, data).await?;
        self.recorded.push(event);
        Ok(())
    }

    /// Records a live event that only the pages of `user_id` (of `tenant_id`) hear.
    pub(crate) async fn record_live_for_user(
        &mut self,
        tenant_id: &str,
        user_id: &str,
        name: &str,
        data: String,
    ) -> Result<(), Error> {
        let event = live::record(&mut self.tx, tenant_id, Some(user_id), name, data).await?;
        self.recorded.push(event);
        Ok(())
    }

    /// Commits; dropped without this, the transaction rolls back. On `SQLite`
    /// the events it recorded go to this store's subscribers now; on
    /// `PostgreSQL` every instance's listener hears them from the database.
    pub(crate) async fn commit(self) -> Result<(), Error> {
        let backend = self.tx.backend();
        self.tx.commit().await?;
        if backend == Backend::Sqlite {
            self.live.publish(self.recorded);
        }
        Ok(())
    }
}

impl std::ops::Deref for Write<'_> {
    type Target = Tx;

    fn deref(&self) -> &Tx {
        &self.tx
    }
}

impl std::ops::DerefMut for Write<'_> {
    fn deref_mut(&mut self) -> &mut Tx {
        &mut self.tx
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn refusal(text: &str) -> String {
        match Location::from_str(text) {
            Err(error @ Error::Unusable { .. }) => error.to_string(),
            other => panic!("{text:?} was not refused: {other:?}"),
        }
    }

    #[test]
    fn a_location_is_a_sqlite_path_or_a_postgres_url() {
        assert_eq!(
            Location::from_str("toolbridge.sqlite3").unwrap(),
            Location::Sqlite(PathBuf::from("toolbridge.sqlite3"))
        );
        assert_eq!(
            Location::from_str("/var/lib/tb/db").unwrap(),
            Location::Sqlite(PathBuf::from("/var/lib/tb/db"))
        );
        for url in [
            "postgres://tb:secret@db.example:5433/toolbridge?sslmode=require",
            "postgresql://localhost/toolbridge",
            "POSTGRES://localhost/toolbridge",
        ] {
            assert_eq!(
                Location::from_str(url).unwrap(),
                Location::Postgres(url.to_owned())
            );
        }
    }

    #[test]
    fn a_location_that_is_neither_says_what_is_wrong() {
        let mysql = refusal("mysql://root:hunter2@localhost/tb");
        assert!(mysql.contains("mysql:// is not a database"), "{mysql}");
        assert!(!mysql.contains("hunter2"), "{mysql}");
        let port = refusal("postgres://tb:hunter2@localhost:notaport/tb");
        assert!(port.contains("not a PostgreSQL URL"), "{port}");
        assert!(!port.contains("hunter2"), "{port}");
        let empty = refusal("");
        assert!(empty.contains("it is empty"), "{empty}");
    }

    #[test]
    fn a_postgres_location_shows_without_its_password() {
        let location = Location::from_str(
            "postgres://tb:s3cr%40t@db.example:5433/toolbridge?sslmode=require&password=other",
        )
        .unwrap();
        let shown = location.to_string();
        assert_eq!(
            shown,
            "postgres://tb:***@db.example:5433/toolbridge?sslmode=require&password=***"
        );
        assert!(!format!("{location:?}").contains("s3cr"));
        assert_eq!(
            Location::from_str("postgres://localhost/tb")
                .unwrap()
                .to_string(),
            "postgres://localhost/tb"
        );
    }

    #[tokio::test]
    async fn an_unreachable_postgres_server_is_named_with_the_reason() {
        // A port of 127.0.0.1 that nothing listens on: bound, then let go.
        let port = std::net::TcpListener::bind("127.0.0.1:0")
            .and_then(|listener| listener.local_addr())
            .unwrap()
            .port();
        let url = format!("postgres://tb:hunter2@127.0.0.1:{port}/tb");
        let error = Store::connect(&Location::from_str(&url).unwrap())
            .await
            .expect_err("nothing listens there");
        let cause = std::error::Error::source(&error)
            .map(ToString::to_string)
            .unwrap_or_default();
        assert!(cause.contains("Connection refused"), "{error}: {cause}");
    }
}
