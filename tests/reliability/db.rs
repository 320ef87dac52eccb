//! The server's database, of either backend, and reading it directly with the database's own
//! driver rather than the store crate, so the counts do not depend on the code under test: which
//! quotes exist, how many lines and idempotency records there are, and (`SQLite`) `PRAGMA
//! integrity_check`.

use std::collections::BTreeSet;
use std::ffi::OsString;
use std::path::{Path, PathBuf};

use sqlx::sqlite::SqliteConnectOptions;
use sqlx::{Connection, PgConnection, SqliteConnection};

/// Which database a suite runs the server on.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Backend {
    /// A `SQLite` file.
    Sqlite,
    /// A database of the test process's throwaway `PostgreSQL` cluster.
    Postgres,
}

impl Backend {
    /// `sqlite` or `postgres`, for what the suites print.
    pub(crate) fn name(self) -> &'static str {
        match self {
            Backend::Sqlite => "sqlite",
            Backend::Postgres => "postgres",
        }
    }
}

/// A server's database: where `--db` points.
#[derive(Debug)]
pub(crate) enum Db {
    /// A `SQLite` file.
    Sqlite(PathBuf),
    /// A fresh `PostgreSQL` database, dropped with this.
    Postgres(toolbridge_test_postgres::Database),
}

impl Db {
    /// A new, empty database of `backend`; a `SQLite` file goes into `dir`.
    pub(crate) fn new(backend: Backend, dir: &Path) -> Self {
        match backend {
            Backend::Sqlite => Db::Sqlite(dir.join("toolbridge.sqlite3")),
            Backend::Postgres => {
                Db::Postgres(toolbridge_test_postgres::database().unwrap_or_else(|e| panic!("{e}")))
            }
        }
    }

    /// What `--db` takes.
    pub(crate) fn arg(&self) -> OsString {
        match self {
            Db::Sqlite(path) => path.clone().into_os_string(),
            Db::Postgres(database) => database.url().into(),
        }
    }

    /// The database as the suites print it.
    pub(crate) fn describe(&self) -> String {
        match self {
            Db::Sqlite(path) => path.display().to_string(),
            Db::Postgres(database) => format!("PostgreSQL database {}", database.name()),
        }
    }

    /// The `PostgreSQL` database's URL (a panic on `SQLite`).
    pub(crate) fn url(&self) -> String {
        match self {
            Db::Postgres(database) => database.url(),
            Db::Sqlite(path) => panic!("{} is not a PostgreSQL database", path.display()),
        }
    }

    /// The ids of every quote (of every tenant), lowercase.
    pub(crate) async fn quote_ids(&self) -> BTreeSet<String> {
        let ids: Vec<String> = self.fetch_all("SELECT id FROM quotes").await;
        ids.into_iter().map(|id| id.to_ascii_lowercase()).collect()
    }

    /// Rows in `table` (one of ours: the name is not escaped).
    pub(crate) async fn count(&self, table: &str) -> i64 {
        let rows: Vec<i64> = self
            .fetch_all(&format!("SELECT COUNT(*) FROM {table}"))
            .await;
        rows.first().copied().unwrap_or_default()
    }

    /// What `PRAGMA integrity_check` says of a `SQLite` file (`["ok"]` for a sound one, else one
    /// line per problem); `None` on `PostgreSQL`, whose server a suite never kills (only
    /// toolbridge's process dies, and the database's own crash safety is not under test).
    pub(crate) async fn integrity_check(&self) -> Option<Vec<String>> {
        match self {
            Db::Sqlite(_) => Some(self.fetch_all("PRAGMA integrity_check").await),
            Db::Postgres(_) => None,
        }
    }

    /// The database's size in KiB: a `SQLite` file and its write-ahead log, or what
    /// `pg_database_size` says.
    pub(crate) async fn size_kib(&self) -> u64 {
        match self {
            Db::Sqlite(path) => {
                let mut wal = path.as_os_str().to_owned();
                wal.push("-wal");
                [path.as_os_str(), wal.as_os_str()]
                    .iter()
                    .filter_map(|path| std::fs::metadata(path).ok())
                    .map(|metadata| metadata.len() / 1024)
                    .sum()
            }
            Db::Postgres(_) => {
                let bytes: Vec<i64> = self
                    .fetch_all("SELECT pg_database_size(current_database())")
                    .await;
                bytes
                    .first()
                    .and_then(|bytes| u64::try_from(*bytes).ok())
                    .unwrap_or_default()
                    / 1024
            }
        }
    }

    /// The first column of every row `query` gives.
    pub(crate) async fn fetch_all<T>(&self, query: &str) -> Vec<T>
    where
        T: for<'r> sqlx::Decode<'r, sqlx::Sqlite> + sqlx::Type<sqlx::Sqlite>,
        T: for<'r> sqlx::Decode<'r, sqlx::Postgres> + sqlx::Type<sqlx::Postgres>,
        T: Send + Unpin,
    {
        let rows = match self {
            Db::Sqlite(path) => {
                let mut conn = open_sqlite(path).await;
                let rows = sqlx::query_scalar(query).fetch_all(&mut conn).await;
                conn.close().await.expect("the connection closes");
                rows
            }
            Db::Postgres(database) => {
                let mut conn = PgConnection::connect(&database.url())
                    .await
                    .unwrap_or_else(|e| panic!("cannot connect to {}: {e}", database.name()));
                let rows = sqlx::query_scalar(query).fetch_all(&mut conn).await;
                conn.close().await.expect("the connection closes");
                rows
            }
        };
        rows.unwrap_or_else(|e| panic!("`{query}` on {}: {e}", self.describe()))
    }
}

/// A read-only connection to the file `db`. A file left by a killed server still has its
/// write-ahead log; SQLite reads it as a restarted server would.
async fn open_sqlite(db: &Path) -> SqliteConnection {
    let options = SqliteConnectOptions::new()
        .filename(db)
        .read_only(true)
        .create_if_missing(false);
    SqliteConnection::connect_with(&options)
        .await
        .unwrap_or_else(|e| panic!("cannot open {} read-only: {e}", db.display()))
}
