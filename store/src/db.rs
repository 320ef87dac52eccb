//! The two backends behind one set of query texts.
//!
//! The store runs on `SQLite` or `PostgreSQL` through sqlx's own driver for each, side by side in
//! small enums ([`Pool`], [`Tx`]), rather than through sqlx's `Any` driver. `Any` was weighed
//! and set aside for what it costs here (read in sqlx 0.8's source):
//! - its `SQLite` side decodes `bool` only from a boolean value, which `SQLite` never yields, and
//!   maps no column type to one: every `EXISTS` would need a workaround;
//! - `QueryBuilder<Any>` writes `?` placeholders, which `PostgreSQL` refuses;
//! - its connect options are a URL, which for `SQLite` carries none of WAL, `synchronous`,
//!   foreign keys, the busy timeout or the page cache the store sets (`lib.rs`);
//! - every row is copied into `Any`'s own values before it is decoded: a cost on every read of
//!   the `SQLite` store, the default, for a backend it is not using.
//!
//! The enums cost one `match` per statement and keep each driver's own types, options and speed.
//!
//! A query is written once ([`sql`]) with `$1`-style placeholders, which both backends read
//! (`SQLite` takes `$N` as the N-th parameter), and runs on whichever backend the store has.
//! Values bound to it are [`Arg`]s: text, whole numbers and bytes. Flags are whole numbers, 0 or 1,
//! on both backends, as `SQLite` stores them: `active = 1` then reads the same everywhere (and
//! `SQLite` keeps using its partial index, whose condition is written so). Rows are read as
//! tuples, each backend's driver decoding its own.
//!
//! Where the SQL truly differs, the difference is here, in one place per concern: how a write
//! transaction begins ([`Pool::begin_write`]), row locks ([`Tx::lock_rows`]), claiming rows that
//! no other transaction holds ([`Backend::skip_locked`]), transactions that must take turns
//! ([`Tx::take_turn`]), and reading a JSON array of text ([`Backend::text_set`]).
//! Each backend's schema has its own migrations (`migrations.rs`).

use std::borrow::Cow;

use sqlx::postgres::{PgArguments, PgConnection, PgPool, PgRow, Postgres};
use sqlx::sqlite::{Sqlite, SqliteArguments, SqliteConnection, SqlitePool, SqliteRow};
use sqlx::{Arguments, FromRow, Transaction};

/// Which database the store runs on.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Backend {
    /// One `SQLite` file.
    Sqlite,
    /// A `PostgreSQL` database.
    Postgres,
}

impl Backend {
    /// An expression for the database's clock now, in whole Unix seconds: the same for every
    /// instance of the server, whatever their own clocks say.
    pub(crate) fn unix_now(self) -> &'static str {
        match self {
            Backend::Sqlite => "unixepoch()",
            Backend::Postgres => "CAST(FLOOR(EXTRACT(EPOCH FROM now())) AS BIGINT)",
        }
    }

    /// What ends a `SELECT` that claims rows of the table `alias` in a write transaction: on
    /// `PostgreSQL`, `FOR UPDATE OF <alias> SKIP LOCKED`, so that rows another transaction holds
    /// are passed over rather than waited for (two transactions at once claim different rows);
    /// nothing on `SQLite`, whose write transaction runs alone.
    pub(crate) fn skip_locked(self, alias: &str) -> String {
        match self {
            Backend::Sqlite => String::new(),
            Backend::Postgres => format!(" FOR UPDATE OF {alias} SKIP LOCKED"),
        }
    }

    /// A subquery giving each text of the JSON array bound to `param` (e.g. `$2`) as a row.
    pub(crate) fn text_set(self, param: &str) -> String {
        match self {
            Backend::Sqlite => format!("SELECT value FROM json_each({param})"),
            Backend::Postgres => format!("SELECT json_array_elements_text({param}::json)"),
        }
    }
}

/// Work that must not run in two transactions at once, whatever the rows they touch: each is a
/// `PostgreSQL` advisory lock (the numbers spell `toolbrdg` and a letter).
#[derive(Debug, Clone, Copy)]
pub(crate) enum Turn {
    /// Migrating the schema and seeding the demo data (once, by whichever instance comes
    /// first), and making a tenant (whose name must be unique without regard to case, which no
    /// index says).
    Setup,
    /// Installing tools and setting their values (a tool's row may not exist yet to lock).
    Tools,
    /// Rotating the signing key (two rotations at once would each retire the other's key).
    SigningKeys,
}

impl Turn {
    /// The advisory lock's key.
    pub(crate) fn key(self) -> i64 {
        match self {
            Turn::Setup => 0x746f_6f6c_6272_6473,
            Turn::Tools => 0x746f_6f6c_6272_6474,
            Turn::SigningKeys => 0x746f_6f6c_6272_6475,
        }
    }
}

/// The connection pool of either backend.
#[derive(Debug, Clone)]
pub(crate) enum Pool {
    /// `SQLite`'s.
    Sqlite(SqlitePool),
    /// `PostgreSQL`'s.
    Postgres(PgPool),
}

impl Pool {
    /// Which backend.
    pub(crate) fn backend(&self) -> Backend {
        match self {
            Pool::Sqlite(_) => Backend::Sqlite,
            Pool::Postgres(_) => Backend::Postgres,
        }
    }

    /// A read transaction: every statement in it sees the same data. (`SQLite`'s snapshot is
    /// taken at the first read; `PostgreSQL`'s `REPEATABLE READ` at the first statement.)
    pub(crate) async fn begin_read(&self) -> Result<Tx, sqlx::Error> {
        Ok(match self {
            Pool::Sqlite(pool) => Tx::Sqlite(pool.begin().await?),
            Pool::Postgres(pool) => Tx::Postgres(
                pool.begin_with("BEGIN ISOLATION LEVEL REPEATABLE READ, READ ONLY")
                    .await?,
            ),
        })
    }

    /// A write transaction. On `SQLite` it holds the database's one write lock from the start
    /// (`BEGIN IMMEDIATE`), so what it reads stays true until it commits. On `PostgreSQL` it is
    /// `READ COMMITTED`: writes that read rows first lock them ([`Tx::lock_rows`],
    /// [`Tx::take_turn`]), and unique indexes settle concurrent inserts.
    pub(crate) async fn begin_write(&self) -> Result<Tx, sqlx::Error> {
        Ok(match self {
            Pool::Sqlite(pool) => Tx::Sqlite(pool.begin_with("BEGIN IMMEDIATE").await?),
            Pool::Postgres(pool) => Tx::Postgres(pool.begin().await?),
        })
    }

    /// Closes every connection.
    pub(crate) async fn close(&self) {
        match self {
            Pool::Sqlite(pool) => pool.close().await,
            Pool::Postgres(pool) => pool.close().await,
        }
    }
}

/// A transaction of either backend; dropped without [`Tx::commit`], it rolls back.
#[derive(Debug)]
pub(crate) enum Tx {
    /// On `SQLite`.
    Sqlite(Transaction<'static, Sqlite>),
    /// On `PostgreSQL`.
    Postgres(Transaction<'static, Postgres>),
}

impl Tx {
    /// Which backend.
    pub(crate) fn backend(&self) -> Backend {
        match self {
            Tx::Sqlite(_) => Backend::Sqlite,
            Tx::Postgres(_) => Backend::Postgres,
        }
    }

    /// Commits.
    pub(crate) async fn commit(self) -> Result<(), sqlx::Error> {
        match self {
            Tx::Sqlite(tx) => tx.commit().await,
            Tx::Postgres(tx) => tx.commit().await,
        }
    }

    /// Locks the rows `select` finds until the transaction ends, so that another transaction
    /// changing them waits. `PostgreSQL` takes them `FOR UPDATE`; a `SQLite` write transaction
    /// holds the whole database's write lock from its start, so there is nothing more to take.
    pub(crate) async fn lock_rows(&mut self, select: Sql<'_>) -> Result<(), sqlx::Error> {
        if self.backend() == Backend::Postgres {
            Sql {
                text: Cow::Owned(format!("{} FOR UPDATE", select.text)),
                ..select
            }
            .execute(&mut *self)
            .await?;
        }
        Ok(())
    }

    /// Waits until no other transaction holds `turn`, and holds it until this one ends
    /// (`pg_advisory_xact_lock`). A `SQLite` write transaction already runs alone.
    pub(crate) async fn take_turn(&mut self, turn: Turn) -> Result<(), sqlx::Error> {
        if self.backend() == Backend::Postgres {
            sql("SELECT pg_advisory_xact_lock($1)")
                .bind(turn.key())
                .execute(&mut *self)
                .await?;
        }
        Ok(())
    }
}

/// A value bound to a query's parameter.
#[derive(Debug, Clone)]
pub(crate) enum Arg<'q> {
    /// Text, or `NULL`.
    Text(Option<Cow<'q, str>>),
    /// A whole number (a flag is 0 or 1), or `NULL`.
    Int(Option<i64>),
    /// Bytes.
    Bytes(&'q [u8]),
}

impl<'q> From<&'q str> for Arg<'q> {
    fn from(text: &'q str) -> Self {
        Arg::Text(Some(Cow::Borrowed(text)))
    }
}

impl<'q> From<&'q String> for Arg<'q> {
    fn from(text: &'q String) -> Self {
        Arg::Text(Some(Cow::Borrowed(text)))
    }
}

impl From<String> for Arg<'_> {
    fn from(text: String) -> Self {
        Arg::Text(Some(Cow::Owned(text)))
    }
}

impl<'q> From<Option<&'q str>> for Arg<'q> {
    fn from(text: Option<&'q str>) -> Self {
        Arg::Text(text.map(Cow::Borrowed))
    }
}

impl<'q> From<&'q Option<String>> for Arg<'q> {
    fn from(text: &'q Option<String>) -> Self {
        Arg::Text(text.as_deref().map(Cow::Borrowed))
    }
}

impl From<Option<String>> for Arg<'_> {
    fn from(text: Option<String>) -> Self {
        Arg::Text(text.map(Cow::Owned))
    }
}

impl From<i64> for Arg<'_> {
    fn from(number: i64) -> Self {
        Arg::Int(Some(number))
    }
}

impl From<Option<i64>> for Arg<'_> {
    fn from(number: Option<i64>) -> Self {
        Arg::Int(number)
    }
}

impl From<u32> for Arg<'_> {
    fn from(number: u32) -> Self {
        Arg::Int(Some(i64::from(number)))
    }
}

impl From<bool> for Arg<'_> {
    /// 1 or 0.
    fn from(flag: bool) -> Self {
        Arg::Int(Some(i64::from(flag)))
    }
}

impl<'q> From<&'q [u8]> for Arg<'q> {
    fn from(bytes: &'q [u8]) -> Self {
        Arg::Bytes(bytes)
    }
}

/// A row as both backends' drivers decode it: a tuple of `String`, `i64`, `bool` (from
/// `EXISTS`), `Vec<u8>` and their `Option`s.
pub(crate) trait Decoded:
    for<'r> FromRow<'r, SqliteRow> + for<'r> FromRow<'r, PgRow> + Send + Unpin
{
}

impl<T> Decoded for T where
    T: for<'r> FromRow<'r, SqliteRow> + for<'r> FromRow<'r, PgRow> + Send + Unpin
{
}

/// What a statement runs on: a pool (any free connection) or one connection (a transaction's, or
/// one opened alone).
#[derive(Debug)]
pub(crate) enum Link<'c> {
    /// A `SQLite` pool.
    SqlitePool(&'c SqlitePool),
    /// A `SQLite` connection.
    Sqlite(&'c mut SqliteConnection),
    /// A `PostgreSQL` pool.
    PostgresPool(&'c PgPool),
    /// A `PostgreSQL` connection.
    Postgres(&'c mut PgConnection),
}

/// Something a statement can run on.
pub(crate) trait Exec<'c>: Send {
    /// Where the statement runs.
    fn link(self) -> Link<'c>;
}

impl<'c> Exec<'c> for &'c Pool {
    fn link(self) -> Link<'c> {
        match self {
            Pool::Sqlite(pool) => Link::SqlitePool(pool),
            Pool::Postgres(pool) => Link::PostgresPool(pool),
        }
    }
}

impl<'c> Exec<'c> for &'c mut Tx {
    fn link(self) -> Link<'c> {
        match self {
            Tx::Sqlite(tx) => Link::Sqlite(tx),
            Tx::Postgres(tx) => Link::Postgres(tx),
        }
    }
}

/// A `PostgreSQL` connection of its own, outside any pool: the one that opens a store
/// (`Store::open_postgres`) and holds its session's locks.
impl<'c> Exec<'c> for &'c mut PgConnection {
    fn link(self) -> Link<'c> {
        Link::Postgres(self)
    }
}

/// A statement and the values bound to its parameters.
#[derive(Debug)]
pub(crate) struct Sql<'q> {
    text: Cow<'q, str>,
    args: Vec<Arg<'q>>,
    /// Whether the connection keeps the prepared statement for next time.
    persistent: bool,
}

/// A statement (`$1`, `$2`, … for its parameters).
pub(crate) fn sql<'q>(text: impl Into<Cow<'q, str>>) -> Sql<'q> {
    Sql {
        text: text.into(),
        args: Vec::new(),
        persistent: true,
    }
}

/// `INSERT <head> VALUES ($1, …), (…)`: `rows` rows of `columns` parameters each.
pub(crate) fn insert_rows(head: &str, columns: usize, rows: usize) -> String {
    let mut text = String::with_capacity(head.len() + rows * columns * 6);
    text.push_str(head);
    text.push_str(" VALUES ");
    for row in 0..rows {
        text.push_str(if row == 0 { "(" } else { ", (" });
        for column in 0..columns {
            if column > 0 {
                text.push_str(", ");
            }
            text.push('$');
            text.push_str(&(row * columns + column + 1).to_string());
        }
        text.push(')');
    }
    text
}

/// Runs `$sql` built by `$make` (`query_with` or `query_as_with`) on `$on`, calling `$method`,
/// and then `$after` on what it gives (each backend's own type), if named.
macro_rules! run {
    ($sql:ident, $on:expr, $make:path, $method:ident $(, $after:ident)?) => {{
        let text: &str = &$sql.text;
        match $on.link() {
            Link::SqlitePool(pool) => {
                $make(text, $sql.sqlite_args()?)
                    .persistent($sql.persistent)
                    .$method(pool)
                    .await
                    $(.map(|done| done.$after()))?
            }
            Link::Sqlite(conn) => {
                $make(text, $sql.sqlite_args()?)
                    .persistent($sql.persistent)
                    .$method(conn)
                    .await
                    $(.map(|done| done.$after()))?
            }
            Link::PostgresPool(pool) => {
                $make(text, $sql.postgres_args()?)
                    .persistent($sql.persistent)
                    .$method(pool)
                    .await
                    $(.map(|done| done.$after()))?
            }
            Link::Postgres(conn) => {
                $make(text, $sql.postgres_args()?)
                    .persistent($sql.persistent)
                    .$method(conn)
                    .await
                    $(.map(|done| done.$after()))?
            }
        }
    }};
}

impl<'q> Sql<'q> {
    /// Binds the next parameter.
    pub(crate) fn bind(mut self, value: impl Into<Arg<'q>>) -> Self {
        self.args.push(value.into());
        self
    }

    /// Binds the next parameter of a statement being built.
    pub(crate) fn push_bind(&mut self, value: impl Into<Arg<'q>>) {
        self.args.push(value.into());
    }

    /// A statement whose text is made for one run (many rows to an `INSERT`): the connection
    /// does not keep it.
    pub(crate) fn once(mut self) -> Self {
        self.persistent = false;
        self
    }

    /// Runs it; how many rows it changed.
    pub(crate) async fn execute<'c>(self, on: impl Exec<'c>) -> Result<u64, sqlx::Error> {
        run!(self, on, sqlx::query_with, execute, rows_affected)
    }

    /// Every row.
    pub(crate) async fn fetch_all<'c, T: Decoded>(
        self,
        on: impl Exec<'c>,
    ) -> Result<Vec<T>, sqlx::Error> {
        run!(self, on, sqlx::query_as_with, fetch_all)
    }

    /// The one row (an error when there is none).
    pub(crate) async fn fetch_one<'c, T: Decoded>(
        self,
        on: impl Exec<'c>,
    ) -> Result<T, sqlx::Error> {
        run!(self, on, sqlx::query_as_with, fetch_one)
    }

    /// The first row, if any.
    pub(crate) async fn fetch_optional<'c, T: Decoded>(
        self,
        on: impl Exec<'c>,
    ) -> Result<Option<T>, sqlx::Error> {
        run!(self, on, sqlx::query_as_with, fetch_optional)
    }

    /// The one row's one column.
    pub(crate) async fn fetch_scalar<'c, T>(self, on: impl Exec<'c>) -> Result<T, sqlx::Error>
    where
        (T,): Decoded,
    {
        let (value,) = self.fetch_one::<(T,)>(on).await?;
        Ok(value)
    }

    /// The first row's one column, if there is a row.
    pub(crate) async fn fetch_optional_scalar<'c, T>(
        self,
        on: impl Exec<'c>,
    ) -> Result<Option<T>, sqlx::Error>
    where
        (T,): Decoded,
    {
        Ok(self.fetch_optional::<(T,)>(on).await?.map(|(value,)| value))
    }

    fn sqlite_args(&self) -> Result<SqliteArguments<'_>, sqlx::Error> {
        let mut args = SqliteArguments::default();
        for arg in &self.args {
            match arg {
                Arg::Text(text) => args.add(text.as_deref()),
                Arg::Int(number) => args.add(*number),
                Arg::Bytes(bytes) => args.add(*bytes),
            }
            .map_err(sqlx::Error::Encode)?;
        }
        Ok(args)
    }

    fn postgres_args(&self) -> Result<PgArguments, sqlx::Error> {
        let mut args = PgArguments::default();
        for arg in &self.args {
            match arg {
                Arg::Text(text) => args.add(text.as_deref()),
                Arg::Int(number) => args.add(*number),
                Arg::Bytes(bytes) => args.add(*bytes),
            }
            .map_err(sqlx::Error::Encode)?;
        }
        Ok(args)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn many_rows_to_an_insert_number_their_parameters_in_order() {
        assert_eq!(
            insert_rows("INSERT INTO t (a, b)", 2, 3),
            "INSERT INTO t (a, b) VALUES ($1, $2), ($3, $4), ($5, $6)"
        );
    }

    #[tokio::test]
    async fn sqlite_reads_dollar_placeholders_by_their_number() {
        let pool = Pool::Sqlite(SqlitePool::connect("sqlite::memory:").await.unwrap());
        let (a, b, again): (String, i64, String) = sql("SELECT $2, $1, $2")
            .bind(7_i64)
            .bind("seven")
            .fetch_one(&pool)
            .await
            .unwrap();
        assert_eq!((a.as_str(), b, again.as_str()), ("seven", 7, "seven"));
        let flag: i64 = sql("SELECT $1")
            .bind(true)
            .fetch_scalar(&pool)
            .await
            .unwrap();
        assert_eq!(flag, 1);
        let nothing: Option<String> = sql("SELECT $1")
            .bind(None::<&str>)
            .fetch_scalar(&pool)
            .await
            .unwrap();
        assert_eq!(nothing, None);
    }
}
