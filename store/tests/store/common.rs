//! Fresh databases of either backend and shortcuts shared by the tests.

use std::path::PathBuf;

use serde_json::{Value, json};
use toolbridge_protocol::catalog::CatalogIndex;
use toolbridge_protocol::create_quote::{NewQuote, validate_bridge_create, validate_rest_create};
use toolbridge_protocol::live::Actor;
use toolbridge_protocol::paging::PageRequest;
use toolbridge_store::{Error, Location, QuoteAction, Record, Store, Tenant};

/// Products in the demo catalog of most tests (the full 1000 only where the
/// size matters).
pub(crate) const SMALL_CATALOG: u32 = 120;

/// Which database a test runs on.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Backend {
    /// A `SQLite` file in a temporary directory.
    Sqlite,
    /// A new database of the test process's throwaway `PostgreSQL` cluster.
    Postgres,
}

/// Who the tests' writes are made by, as their live events name them.
pub(crate) fn by() -> Actor {
    Actor::Key {
        name: "store tests".to_owned(),
    }
}

/// A directory removed when the test ends.
pub(crate) struct TempDir(PathBuf);

impl TempDir {
    pub(crate) fn new() -> Self {
        let path = std::env::temp_dir().join(format!("toolbridge-store-{}", uuid::Uuid::new_v4()));
        std::fs::create_dir_all(&path).unwrap();
        TempDir(path)
    }

    pub(crate) fn db(&self) -> PathBuf {
        self.0.join("toolbridge.db")
    }
}

impl Drop for TempDir {
    fn drop(&mut self) {
        let _ = std::fs::remove_dir_all(&self.0);
    }
}

/// A new, empty database of a backend; gone when dropped.
pub(crate) enum Fresh {
    Sqlite(TempDir),
    Postgres(toolbridge_test_postgres::Database),
}

impl Fresh {
    pub(crate) fn new(backend: Backend) -> Self {
        match backend {
            Backend::Sqlite => Fresh::Sqlite(TempDir::new()),
            Backend::Postgres => Fresh::Postgres(
                toolbridge_test_postgres::database().unwrap_or_else(|e| panic!("{e}")),
            ),
        }
    }

    /// Where it is, as `--db` would name it.
    pub(crate) fn location(&self) -> Location {
        match self {
            Fresh::Sqlite(dir) => Location::Sqlite(dir.db()),
            Fresh::Postgres(database) => Location::Postgres(database.url()),
        }
    }

    /// A store on it (another one on each call, as another process would have).
    pub(crate) async fn open(&self) -> Store {
        Store::connect(&self.location()).await.unwrap()
    }
}

/// A seeded database with both demo tenants.
pub(crate) struct Demo {
    pub(crate) store: Store,
    pub(crate) harbour: Tenant,
    pub(crate) other: Tenant,
    pub(crate) db: Fresh,
}

pub(crate) async fn empty(backend: Backend) -> (Store, Fresh) {
    let db = Fresh::new(backend);
    let store = db.open().await;
    (store, db)
}

pub(crate) async fn demo_with(backend: Backend, products: u32) -> Demo {
    let (store, db) = empty(backend).await;
    store.seed_demo(products).await.unwrap();
    let harbour = store.default_tenant().await.unwrap().unwrap();
    let other_id: String = raw(&db)
        .await
        .fetch_scalar("SELECT id FROM tenants WHERE name = 'Other Co'")
        .await;
    let other = store.tenant(&other_id).await.unwrap().unwrap();
    Demo {
        store,
        harbour,
        other,
        db,
    }
}

pub(crate) async fn demo(backend: Backend) -> Demo {
    demo_with(backend, SMALL_CATALOG).await
}

/// A second, direct connection to a test database, for arranging what the
/// store has no method for and for checking what it wrote. Its SQL is
/// written for both backends.
pub(crate) enum Raw {
    Sqlite(sqlx::SqlitePool),
    Postgres(sqlx::PgPool),
}

pub(crate) async fn raw(db: &Fresh) -> Raw {
    match db {
        Fresh::Sqlite(dir) => {
            let url = format!("sqlite://{}", dir.db().display());
            Raw::Sqlite(sqlx::SqlitePool::connect(&url).await.unwrap())
        }
        Fresh::Postgres(database) => {
            Raw::Postgres(sqlx::PgPool::connect(&database.url()).await.unwrap())
        }
    }
}

impl Raw {
    pub(crate) async fn fetch_scalar<T>(&self, sql: &str) -> T
    where
        T: for<'r> sqlx::Decode<'r, sqlx::Sqlite> + sqlx::Type<sqlx::Sqlite>,
        T: for<'r> sqlx::Decode<'r, sqlx::Postgres> + sqlx::Type<sqlx::Postgres>,
        T: Send + Unpin,
    {
        match self {
            Raw::Sqlite(pool) => sqlx::query_scalar(sql).fetch_one(pool).await.unwrap(),
            Raw::Postgres(pool) => sqlx::query_scalar(sql).fetch_one(pool).await.unwrap(),
        }
    }

    pub(crate) async fn fetch_all<T>(&self, sql: &str) -> Vec<T>
    where
        T: for<'r> sqlx::Decode<'r, sqlx::Sqlite> + sqlx::Type<sqlx::Sqlite>,
        T: for<'r> sqlx::Decode<'r, sqlx::Postgres> + sqlx::Type<sqlx::Postgres>,
        T: Send + Unpin,
    {
        match self {
            Raw::Sqlite(pool) => sqlx::query_scalar(sql).fetch_all(pool).await.unwrap(),
            Raw::Postgres(pool) => sqlx::query_scalar(sql).fetch_all(pool).await.unwrap(),
        }
    }

    /// Every row, as a tuple.
    pub(crate) async fn fetch_rows<T>(&self, sql: &str) -> Vec<T>
    where
        T: for<'r> sqlx::FromRow<'r, sqlx::sqlite::SqliteRow>,
        T: for<'r> sqlx::FromRow<'r, sqlx::postgres::PgRow>,
        T: Send + Unpin,
    {
        match self {
            Raw::Sqlite(pool) => sqlx::query_as(sql).fetch_all(pool).await.unwrap(),
            Raw::Postgres(pool) => sqlx::query_as(sql).fetch_all(pool).await.unwrap(),
        }
    }

    pub(crate) async fn execute(&self, sql: &str) {
        match self {
            Raw::Sqlite(pool) => sqlx::query(sql).execute(pool).await.map(drop).unwrap(),
            Raw::Postgres(pool) => sqlx::query(sql).execute(pool).await.map(drop).unwrap(),
        }
    }
}

pub(crate) fn page(page: u32, size: u32) -> PageRequest {
    PageRequest::new(page, size).unwrap()
}

#[allow(clippy::needless_pass_by_value)] // called with json! literals
pub(crate) fn rest(body: Value) -> NewQuote {
    validate_rest_create(&body).unwrap()
}

#[allow(clippy::needless_pass_by_value)] // called with json! literals
pub(crate) fn bridge(params: Value) -> NewQuote {
    validate_bridge_create(&params).unwrap()
}

/// The store's error, or a failure of the test.
pub(crate) fn refused(result: Result<impl std::fmt::Debug, Error>) -> Error {
    match result {
        Err(error) => error,
        Ok(value) => panic!("expected an error, got {value:?}"),
    }
}

/// The paths of an [`Error::Invalid`].
pub(crate) fn paths(result: Result<impl std::fmt::Debug, Error>) -> Vec<String> {
    match refused(result) {
        Error::Invalid(violations) => violations.iter().map(|v| v.path.clone()).collect(),
        other => panic!("expected invalid input, got {other:?}"),
    }
}

/// What an [`Error::NotFound`] did not find: the kind of record and its id.
pub(crate) fn not_found(result: Result<impl std::fmt::Debug, Error>) -> (Record, String) {
    match refused(result) {
        Error::NotFound { what, id } => (what, id),
        other => panic!("expected not found, got {other:?}"),
    }
}

/// What an [`Error::QuoteLocked`] refused, and the quote's reference.
pub(crate) fn locked(result: Result<impl std::fmt::Debug, Error>) -> (QuoteAction, String) {
    match refused(result) {
        Error::QuoteLocked {
            action, reference, ..
        } => (action, reference),
        other => panic!("expected a locked quote, got {other:?}"),
    }
}

/// The tenant's catalog index and its `ETag`, copied out of the store's shared copy.
pub(crate) async fn catalog_index(store: &Store, tenant: &str) -> (CatalogIndex, String) {
    std::sync::Arc::unwrap_or_clone(store.catalog_index(tenant).await.unwrap())
}

/// The id of the tenant's product with this sku.
pub(crate) async fn product_id(demo: &Demo, tenant: &Tenant, sku: &str) -> String {
    let index = catalog_index(&demo.store, &tenant.id).await.0;
    index
        .products
        .into_iter()
        .find(|p| p.sku == sku)
        .unwrap_or_else(|| panic!("no active {sku}"))
        .id
}

/// Some customer id of the tenant.
pub(crate) async fn a_customer(demo: &Demo, tenant: &Tenant) -> String {
    demo.store
        .customers(&tenant.id, page(1, 1))
        .await
        .unwrap()
        .items[0]
        .id
        .clone()
}

/// A small valid REST body for the tenant.
pub(crate) async fn simple_rest_body(demo: &Demo, tenant: &Tenant) -> Value {
    json!({
        "customerId": a_customer(demo, tenant).await,
        "lines": [{"skuId": product_id(demo, tenant, "OAK-01").await, "qty": 10, "unitPrice": 89.5}],
    })
}
