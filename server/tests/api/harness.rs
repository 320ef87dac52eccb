//! Starting a server and talking to it.

use std::path::{Path, PathBuf};

use reqwest::{Client, Method, RequestBuilder, Response};
use serde_json::Value;
use tokio::sync::oneshot;
use tokio::task::JoinHandle;
use toolbridge_server::public_urls::PublicUrls;
use toolbridge_server::tools::{ToolSites, sites};
use toolbridge_server::{AppState, router};
use toolbridge_store::{Location, RateLimit, Scope, SecretsKey, Store};

/// Products in the test catalog: enough for paging, quick to seed.
const PRODUCTS: u32 = 120;

/// Which database a server runs on.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Backend {
    /// A `SQLite` file of its own.
    Sqlite,
    /// A database of its own in the test process's throwaway `PostgreSQL` cluster.
    Postgres,
}

/// A running server on its own database (a file, or a `PostgreSQL` database).
pub(crate) struct Server {
    pub(crate) base: String,
    pub(crate) port: u16,
    pub(crate) store: Store,
    /// The `SQLite` file (empty on `PostgreSQL`).
    pub(crate) db: PathBuf,
    pub(crate) client: Client,
    stop: Option<oneshot::Sender<()>>,
    task: Option<JoinHandle<()>>,
    dir: Option<tempfile::TempDir>,
    /// The `PostgreSQL` database, dropped (and removed) with the server.
    postgres: Option<toolbridge_test_postgres::Database>,
}

impl Server {
    /// A server on a new, seeded database.
    pub(crate) async fn start() -> Self {
        Self::start_allowing(&[]).await
    }

    /// A server on a new, seeded database that also trusts these origins.
    pub(crate) async fn start_allowing(origins: &[&str]) -> Self {
        let origins: Vec<String> = origins.iter().map(|origin| (*origin).to_owned()).collect();
        Self::start_with(move |state| state.allowing_origins(origins)).await
    }

    /// A server on a new, seeded database, its state adjusted by `configure`.
    pub(crate) async fn start_with(configure: impl FnOnce(AppState) -> AppState) -> Self {
        let dir = tempfile::tempdir().unwrap();
        let db = dir.path().join("toolbridge.sqlite3");
        let mut server = Self::serve(&db, configure).await;
        server.dir = Some(dir);
        server
    }

    /// A server on `db` (seeded if new).
    pub(crate) async fn start_on(db: &Path) -> Self {
        Self::serve(db, |state| state).await
    }

    /// A server on a new, seeded database of `backend`.
    pub(crate) async fn start_with_backend(backend: Backend) -> Self {
        match backend {
            Backend::Sqlite => Self::start().await,
            Backend::Postgres => {
                let database =
                    toolbridge_test_postgres::database().unwrap_or_else(|e| panic!("{e}"));
                let mut server =
                    Self::serve_on(&Location::Postgres(database.url()), |state| state).await;
                server.postgres = Some(database);
                server
            }
        }
    }

    /// A server on a new, seeded database whose store seals secrets with `key`, its state
    /// adjusted by `configure`.
    pub(crate) async fn start_sealing(
        key: SecretsKey,
        configure: impl FnOnce(AppState) -> AppState,
    ) -> Self {
        let dir = tempfile::tempdir().unwrap();
        let db = dir.path().join("toolbridge.sqlite3");
        let mut server =
            Self::serve_keeping(&Location::Sqlite(db.clone()), Some(key), configure).await;
        server.dir = Some(dir);
        server
    }

    async fn serve(db: &Path, configure: impl FnOnce(AppState) -> AppState) -> Self {
        Self::serve_on(&Location::Sqlite(db.to_owned()), configure).await
    }

    async fn serve_on(location: &Location, configure: impl FnOnce(AppState) -> AppState) -> Self {
        Self::serve_keeping(location, None, configure).await
    }

    async fn serve_keeping(
        location: &Location,
        secrets_key: Option<SecretsKey>,
        configure: impl FnOnce(AppState) -> AppState,
    ) -> Self {
        let store = Store::connect(location)
            .await
            .unwrap()
            .with_secrets_key(secrets_key)
            .await
            .unwrap();
        if !store.is_seeded().await.unwrap() {
            store.seed_demo(PRODUCTS).await.unwrap();
        }
        let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
        let port = listener.local_addr().unwrap().port();
        let base = format!("http://127.0.0.1:{port}");
        let (stop, stopped) = oneshot::channel::<()>();
        let state =
            AppState::new(store.clone()).serving_tools(ToolSites::new(PublicUrls::local(port)));
        let app = router(configure(state));
        let task = tokio::spawn(async move {
            axum::serve(listener, app)
                .with_graceful_shutdown(async {
                    let _ = stopped.await;
                })
                .await
                .unwrap();
        });
        Self {
            base,
            port,
            store,
            db: match location {
                Location::Sqlite(db) => db.clone(),
                Location::Postgres(_) => PathBuf::new(),
            },
            client: Client::new(),
            stop: Some(stop),
            task: Some(task),
            dir: None,
            postgres: None,
        }
    }

    /// Stops the server and waits until it has.
    pub(crate) async fn stop(mut self) -> Option<tempfile::TempDir> {
        if let Some(stop) = self.stop.take() {
            let _ = stop.send(());
        }
        if let Some(task) = self.task.take() {
            task.await.unwrap();
        }
        self.dir.take()
    }

    /// The demo tenant's id.
    pub(crate) async fn tenant(&self) -> String {
        self.store.default_tenant().await.unwrap().unwrap().id
    }

    /// A new API key of the demo tenant.
    pub(crate) async fn key(&self, scopes: &[Scope], limit: RateLimit) -> String {
        let tenant = self.tenant().await;
        self.store
            .create_api_key(&tenant, "test", scopes, limit)
            .await
            .unwrap()
            .token
    }

    /// A key with every scope and a generous limit.
    pub(crate) async fn full_key(&self) -> String {
        self.key(
            &Scope::ALL,
            RateLimit {
                requests: 10_000,
                window_secs: 60,
            },
        )
        .await
    }

    /// A request to `path`.
    pub(crate) fn request(&self, method: Method, path: &str) -> RequestBuilder {
        self.client.request(method, format!("{}{path}", self.base))
    }

    /// A request to the origin of the tool `slug` (the same server, named
    /// by the `Host` header as a browser names it).
    pub(crate) fn to_tool(&self, slug: &str, method: Method, path: &str) -> RequestBuilder {
        self.request(method, path).header(
            "host",
            format!("{slug}.{}:{}", sites::DEFAULT_DOMAIN, self.port),
        )
    }

    /// A request from the app's own page, with the session `cookie`.
    pub(crate) fn as_user(&self, cookie: &str, method: Method, path: &str) -> RequestBuilder {
        self.request(method, path)
            .header("cookie", cookie)
            .header("sec-fetch-site", "same-origin")
    }

    /// `GET path` with a key.
    pub(crate) async fn get(&self, key: &str, path: &str) -> Response {
        self.request(Method::GET, path)
            .bearer_auth(key)
            .send()
            .await
            .unwrap()
    }

    /// `POST path` with a key and a JSON body.
    pub(crate) async fn post(&self, key: &str, path: &str, body: &Value) -> Response {
        self.request(Method::POST, path)
            .bearer_auth(key)
            .json(body)
            .send()
            .await
            .unwrap()
    }

    /// The id of the user who signs in as `email`.
    pub(crate) async fn user_id(&self, email: &str) -> String {
        let account = self.store.user_by_email(email).await.unwrap();
        account.unwrap_or_else(|| panic!("no user {email}")).user.id
    }

    /// Signs in as `email` and returns the session cookie (`name=value`).
    pub(crate) async fn sign_in(&self, email: &str) -> String {
        let response = self
            .request(Method::POST, "/api/session")
            .header("sec-fetch-site", "same-origin")
            .json(&serde_json::json!({"email": email, "password": "demo-password"}))
            .send()
            .await
            .unwrap();
        assert_eq!(response.status(), 200, "{}", response.text().await.unwrap());
        let cookie = response.headers()["set-cookie"]
            .to_str()
            .unwrap()
            .to_owned();
        cookie.split(';').next().unwrap().to_owned()
    }
}

/// The status and the JSON body of a response.
pub(crate) async fn json(response: Response) -> (u16, Value) {
    let status = response.status().as_u16();
    let text = response.text().await.unwrap();
    let body = serde_json::from_str(&text).unwrap_or(Value::String(text));
    (status, body)
}

/// `method path` as the signed-in user of `cookie`, with an optional JSON body: the status and
/// the JSON answer.
pub(crate) async fn call(
    server: &Server,
    cookie: &str,
    method: reqwest::Method,
    path: &str,
    body: Option<&Value>,
) -> (u16, Value) {
    let mut request = server.as_user(cookie, method, path);
    if let Some(body) = body {
        request = request.json(body);
    }
    json(request.send().await.unwrap()).await
}

/// `method path` with the API key `key` and an optional JSON body: the status and the JSON
/// answer.
pub(crate) async fn send(
    server: &Server,
    key: &str,
    method: reqwest::Method,
    path: &str,
    body: Option<&Value>,
) -> (u16, Value) {
    let mut request = server.request(method, path).bearer_auth(key);
    if let Some(body) = body {
        request = request.json(body);
    }
    json(request.send().await.unwrap()).await
}

/// Uploads `zip` as a tool bundle in Settings → Tools, as the signed-in user of `cookie`.
pub(crate) async fn upload(server: &Server, cookie: &str, zip: Vec<u8>) -> (u16, Value) {
    json(
        server
            .as_user(cookie, reqwest::Method::POST, "/api/settings/tools")
            .header("content-type", "application/zip")
            .body(zip)
            .send()
            .await
            .unwrap(),
    )
    .await
}

/// A REST quote body for `customer` with one line of `product`.
pub(crate) fn quote_body(customer: &str, product: &str) -> Value {
    serde_json::json!({"customerId": customer, "lines": [{"skuId": product, "qty": 2, "unitPrice": 89.5}]})
}

/// The first customer and first product the key can see.
pub(crate) async fn customer_and_product(server: &Server, key: &str) -> (String, String) {
    let (_, customers) = json(server.get(key, "/api/v1/customers?pageSize=1").await).await;
    let (_, products) = json(server.get(key, "/api/v1/products?pageSize=1").await).await;
    (
        customers["items"][0]["id"].as_str().unwrap().to_owned(),
        products["items"][0]["id"].as_str().unwrap().to_owned(),
    )
}
