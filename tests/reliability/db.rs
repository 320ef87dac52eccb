//! The server's database file read directly and read-only, with SQLite itself rather than the
//! store crate, so the counts do not depend on the code under test: which quotes exist, how many
//! lines and idempotency records there are, and `PRAGMA integrity_check`.

use std::collections::BTreeSet;
use std::path::Path;

use sqlx::sqlite::SqliteConnectOptions;
use sqlx::{Connection, SqliteConnection};

/// A read-only connection to `db`. A file left by a killed server still has its write-ahead log;
/// SQLite reads it as a restarted server would.
async fn open(db: &Path) -> SqliteConnection {
    let options = SqliteConnectOptions::new()
        .filename(db)
        .read_only(true)
        .create_if_missing(false);
    SqliteConnection::connect_with(&options)
        .await
        .unwrap_or_else(|e| panic!("cannot open {} read-only: {e}", db.display()))
}

/// The ids of every quote in the file (of every tenant).
pub(crate) async fn quote_ids(db: &Path) -> BTreeSet<String> {
    let mut conn = open(db).await;
    let ids: Vec<String> = sqlx::query_scalar("SELECT id FROM quotes")
        .fetch_all(&mut conn)
        .await
        .expect("the quotes can be read");
    conn.close().await.expect("the connection closes");
    ids.into_iter().map(|id| id.to_ascii_lowercase()).collect()
}

/// Rows in `table` (one of ours: the name is not escaped).
pub(crate) async fn count(db: &Path, table: &str) -> i64 {
    let mut conn = open(db).await;
    let rows: i64 = sqlx::query_scalar(&format!("SELECT COUNT(*) FROM {table}"))
        .fetch_one(&mut conn)
        .await
        .unwrap_or_else(|e| panic!("cannot count {table}: {e}"));
    conn.close().await.expect("the connection closes");
    rows
}

/// What `PRAGMA integrity_check` says: `["ok"]` for a sound file, else one line per problem.
pub(crate) async fn integrity_check(db: &Path) -> Vec<String> {
    let mut conn = open(db).await;
    let lines: Vec<String> = sqlx::query_scalar("PRAGMA integrity_check")
        .fetch_all(&mut conn)
        .await
        .expect("PRAGMA integrity_check runs");
    conn.close().await.expect("the connection closes");
    lines
}
