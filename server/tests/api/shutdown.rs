//! The drain on SIGTERM or SIGINT: `/readyz` says 503 at once, live event streams end, requests
//! in flight finish (within the grace), new connections are refused once the drain delay is
//! over, and the process exits 0; what the grace could not wait for is cut, and the process still
//! exits 0. Run in process through `lifecycle::serve`, and as a user runs it: the built binary,
//! signalled with `kill`.

use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

use reqwest::Method;
use serde_json::Value;
use sqlx::sqlite::SqliteConnectOptions;
use sqlx::{Connection, SqliteConnection};
use tokio::task::JoinHandle;
use toolbridge_server::lifecycle::{self, DrainReport, DrainTimes, Lifecycle};
use toolbridge_server::{AppState, router};
use toolbridge_store::{RateLimit, Scope, Store};

use crate::harness::{Server, json, quote_body};
use crate::serving::{DEMO, Serving};

/// Serves `state` as `toolbridge serve` does, through [`lifecycle::serve`], on a free port of
/// loopback: its base URL, and the task that ends with the drain.
pub(crate) async fn serving(
    state: AppState,
    times: DrainTimes,
) -> (String, JoinHandle<std::io::Result<DrainReport>>) {
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let base = format!("http://{}", listener.local_addr().unwrap());
    let lifecycle = state.lifecycle.clone();
    let task = tokio::spawn(async move {
        lifecycle::serve(listener, router(state), &lifecycle, None, times).await
    });
    (base, task)
}

/// Another process's write transaction on the SQLite file at `db`: a write of the server waits
/// for it (up to the store's busy timeout, 5 s) until [`commit`] ends it.
async fn hold_write_lock(db: &Path) -> SqliteConnection {
    let mut other = SqliteConnection::connect_with(&SqliteConnectOptions::new().filename(db))
        .await
        .unwrap();
    sqlx::query("BEGIN IMMEDIATE")
        .execute(&mut other)
        .await
        .unwrap();
    other
}

/// Ends the transaction of [`hold_write_lock`].
async fn commit(mut other: SqliteConnection) {
    sqlx::query("COMMIT").execute(&mut other).await.unwrap();
}

/// A key with every scope on the demo tenant of `store`, and a customer and a product of it.
async fn key_and_ids(store: &Store, base: &str) -> (String, String, String) {
    let tenant = store.default_tenant().await.unwrap().unwrap().id;
    let key = store
        .create_api_key(
            &tenant,
            "drain",
            &Scope::ALL,
            RateLimit {
                requests: 10_000,
                window_secs: 60,
            },
        )
        .await
        .unwrap()
        .token;
    let client = reqwest::Client::new();
    let first = |path: &'static str| {
        let request = client
            .get(format!("{base}/api/v1/{path}?pageSize=1"))
            .bearer_auth(&key);
        async move {
            let (status, page) = json(request.send().await.unwrap()).await;
            assert_eq!(status, 200, "{page}");
            page["items"][0]["id"].as_str().unwrap().to_owned()
        }
    };
    let customer = first("customers").await;
    let product = first("products").await;
    (key, customer, product)
}

/// `POST /api/v1/quotes` on a connection of its own, sent now and answered whenever: the status
/// and body, or the client's error.
fn create_quote_later(
    base: &str,
    key: &str,
    customer: &str,
    product: &str,
) -> JoinHandle<Result<(u16, Value), reqwest::Error>> {
    let request = reqwest::Client::new()
        .post(format!("{base}/api/v1/quotes"))
        .bearer_auth(key)
        .json(&quote_body(customer, product));
    tokio::spawn(async move {
        let response = request.send().await?;
        let status = response.status().as_u16();
        let body = response.json::<Value>().await?;
        Ok((status, body))
    })
}

/// Waits up to `limit` for `done`, looking every 20 ms.
async fn wait_until(what: &str, limit: Duration, done: impl Fn() -> bool) {
    let started = Instant::now();
    while !done() {
        assert!(started.elapsed() < limit, "{what}: not within {limit:?}");
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn in_process_a_drain_cuts_what_outlasts_the_grace_and_says_so() {
    let dir = tempfile::tempdir().unwrap();
    let db = dir.path().join("toolbridge.sqlite3");
    let store = Store::open(&db).await.unwrap();
    store.seed_demo(20).await.unwrap();
    let lifecycle = Lifecycle::new();
    let state = AppState::new(store.clone()).with_lifecycle(lifecycle.clone());
    let times = DrainTimes {
        delay: Duration::ZERO,
        grace: Duration::from_millis(500),
    };
    let (base, served) = serving(state, times).await;
    let (key, customer, product) = key_and_ids(&store, &base).await;

    let lock = hold_write_lock(&db).await;
    let write = create_quote_later(&base, &key, &customer, &product);
    wait_until("the write in flight", Duration::from_secs(5), || {
        lifecycle.requests_in_flight() == 1
    })
    .await;
    let started = Instant::now();
    lifecycle.start_draining("the test");
    let report = served.await.unwrap().unwrap();
    let took = started.elapsed();
    assert!(
        took >= Duration::from_millis(450) && took < Duration::from_secs(3),
        "{took:?}"
    );
    assert_eq!(report.reason, "the test");
    assert!(!report.connections_finished, "{report:?}");
    assert_eq!(report.requests_cut, 1, "{report:?}");
    assert!(report.cut_anything());
    // In a process the cut connection lives on with the runtime (in `toolbridge serve` the
    // process ends): let it end.
    commit(lock).await;
    let _ = write.await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn in_process_a_drain_with_nothing_in_flight_cuts_nothing() {
    let server_dir = tempfile::tempdir().unwrap();
    let store = Store::open(&server_dir.path().join("t.sqlite3"))
        .await
        .unwrap();
    let lifecycle = Lifecycle::new();
    let state = AppState::new(store).with_lifecycle(lifecycle.clone());
    let (base, served) = serving(state, DrainTimes::default()).await;
    // A connection kept alive after its request does not hold the drain up.
    let client = reqwest::Client::new();
    let answered = client.get(format!("{base}/healthz")).send().await.unwrap();
    assert_eq!(answered.status(), 200);
    let started = Instant::now();
    lifecycle.start_draining("the test");
    let report = served.await.unwrap().unwrap();
    assert!(started.elapsed() < Duration::from_secs(2));
    assert!(report.connections_finished, "{report:?}");
    assert!(!report.cut_anything(), "{report:?}");
    assert!(client.get(format!("{base}/healthz")).send().await.is_err());
}

/// Reads Server-Sent Events from `stream` until it ends; fails if it has not within `limit`.
async fn ends_within(stream: &mut reqwest::Response, limit: Duration) {
    let started = Instant::now();
    loop {
        let left = limit.saturating_sub(started.elapsed());
        let Ok(read) = tokio::time::timeout(left, stream.chunk()).await else {
            panic!("the event stream did not end within {limit:?}");
        };
        if !matches!(read, Ok(Some(_))) {
            return;
        }
    }
}

#[tokio::test]
async fn event_streams_end_when_the_drain_starts_and_new_ones_end_at_once() {
    let lifecycle = Lifecycle::new();
    let server = {
        let lifecycle = lifecycle.clone();
        Server::start_with(move |state| state.with_lifecycle(lifecycle)).await
    };
    let office = server.sign_in("office@harbour.test").await;
    let mut stream = server
        .as_user(&office, Method::GET, "/api/events")
        .send()
        .await
        .unwrap();
    assert_eq!(stream.status(), 200);
    // Open, with nothing to say: no end in sight.
    assert!(
        tokio::time::timeout(Duration::from_millis(300), stream.chunk())
            .await
            .is_err()
    );
    lifecycle.start_draining("the test");
    ends_within(&mut stream, Duration::from_secs(2)).await;
    // A page that reconnects meanwhile gets a stream (an error would stop its EventSource for
    // good) that ends at once, and reconnects again, elsewhere.
    let mut again = server
        .as_user(&office, Method::GET, "/api/events")
        .header("last-event-id", "1")
        .send()
        .await
        .unwrap();
    assert_eq!(again.status(), 200);
    assert_eq!(again.headers()["connection"], "close");
    ends_within(&mut again, Duration::from_secs(2)).await;
}

/// `toolbridge serve` as a user runs it, on a fresh SQLite file in a folder of its own, with
/// `args`: the folder (there until dropped), the file, and the server.
fn serve_demo(args: &[&str]) -> (tempfile::TempDir, PathBuf, Serving) {
    let dir = tempfile::tempdir().unwrap();
    let db = dir.path().join("toolbridge.sqlite3");
    let on = ["--db", db.to_str().unwrap()];
    let server = Serving::start(dir.path(), &[&DEMO[..], &on, args].concat(), &[]);
    (dir, db, server)
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn sigterm_drains_finishing_the_request_in_flight_and_exits_0() {
    const DELAY: Duration = Duration::from_secs(2);
    let (_dir, db, mut server) =
        serve_demo(&["--drain-delay-secs", "2", "--shutdown-grace-secs", "30"]);
    assert_eq!(server.readyz().await.unwrap().0, 200);
    let store = Store::open(&db).await.unwrap();
    let (key, customer, product) = key_and_ids(&store, &server.base).await;
    let client = reqwest::Client::new();
    let mut stream = reqwest::Client::new()
        .get(format!("{}/api/events", server.base))
        .header("sec-fetch-site", "same-origin")
        .header("cookie", session_cookie(&client, &server.base).await)
        .send()
        .await
        .unwrap();
    assert_eq!(stream.status(), 200);

    // A write that waits for another process's write lock: in flight when the signal comes.
    let lock = hold_write_lock(&db).await;
    let write = create_quote_later(&server.base, &key, &customer, &product);
    tokio::time::sleep(Duration::from_millis(300)).await;
    assert!(!write.is_finished());

    let signalled = Instant::now();
    server.signal("TERM");
    // At once: not ready, though still serving during the delay.
    let (status, body) = loop {
        let (status, body) = server.readyz().await.expect("still accepting");
        if status != 200 {
            break (status, body);
        }
        tokio::time::sleep(Duration::from_millis(20)).await;
    };
    assert!(signalled.elapsed() < DELAY, "{:?}", signalled.elapsed());
    assert_eq!(status, 503, "{body}");
    assert_eq!(body["reason"], "drain: draining (SIGTERM): shutting down");
    // The event stream ends at once too, not when the delay or the grace is over.
    ends_within(&mut stream, Duration::from_millis(1500)).await;
    assert!(signalled.elapsed() < DELAY, "{:?}", signalled.elapsed());

    // Once the delay is over the listener closes, while the write still waits.
    wait_until_async(&server, DELAY + Duration::from_secs(3)).await;
    let refused_after = signalled.elapsed();
    assert!(
        refused_after >= DELAY.saturating_sub(Duration::from_millis(200)),
        "refused after {refused_after:?}"
    );
    assert!(server.running());
    assert!(!write.is_finished());

    // The write gets its whole answer, and then the server exits, well within the grace.
    commit(lock).await;
    let (status, quote) = write.await.unwrap().unwrap();
    assert_eq!(status, 201, "{quote}");
    assert!(quote["id"].as_str().is_some(), "{quote}");
    let exit = server.exits_within(Duration::from_secs(10)).await;
    assert_eq!(exit.code(), Some(0), "{}", server.stderr());
    assert!(signalled.elapsed() < Duration::from_secs(15));
    let log = server.stderr();
    assert!(log.contains("draining (SIGTERM)"), "{log}");
    assert!(log.contains("nothing cut"), "{log}");
    // The quote was committed.
    let tenant = store.default_tenant().await.unwrap().unwrap().id;
    let id = quote["id"].as_str().unwrap();
    assert!(store.quote(&tenant, id).await.is_ok());
}

/// Waits until `server` refuses new connections, up to `limit`.
async fn wait_until_async(server: &Serving, limit: Duration) {
    let started = Instant::now();
    while !server.refuses_connections().await {
        assert!(
            started.elapsed() < limit,
            "still accepting connections after {limit:?}"
        );
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
}

/// Signs in as the office user on `base` and gives the session cookie (`name=value`).
async fn session_cookie(client: &reqwest::Client, base: &str) -> String {
    let response = client
        .post(format!("{base}/api/session"))
        .header("sec-fetch-site", "same-origin")
        .json(&serde_json::json!({"email": "office@harbour.test", "password": "demo-password"}))
        .send()
        .await
        .unwrap();
    assert_eq!(response.status(), 200);
    let cookie = response.headers()["set-cookie"].to_str().unwrap();
    cookie.split(';').next().unwrap().to_owned()
}

#[tokio::test]
async fn sigint_drains_and_exits_0() {
    let (_dir, _, mut server) = serve_demo(&[]);
    assert_eq!(server.readyz().await.unwrap().0, 200);
    server.signal("INT");
    let exit = server.exits_within(Duration::from_secs(10)).await;
    assert_eq!(exit.code(), Some(0), "{}", server.stderr());
    let log = server.stderr();
    assert!(log.contains("draining (SIGINT)"), "{log}");
    assert!(log.contains("nothing cut"), "{log}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn when_the_grace_runs_out_the_server_cuts_what_is_left_and_still_exits_0() {
    let (_dir, db, mut server) = serve_demo(&["--shutdown-grace-secs", "1"]);
    let store = Store::open(&db).await.unwrap();
    let (key, customer, product) = key_and_ids(&store, &server.base).await;
    let lock = hold_write_lock(&db).await;
    let write = create_quote_later(&server.base, &key, &customer, &product);
    tokio::time::sleep(Duration::from_millis(300)).await;
    let signalled = Instant::now();
    server.signal("TERM");
    let exit = server.exits_within(Duration::from_secs(4)).await;
    assert_eq!(exit.code(), Some(0), "{}", server.stderr());
    assert!(signalled.elapsed() >= Duration::from_millis(900));
    // The write lost its connection, unanswered.
    assert!(write.await.unwrap().is_err());
    let log = server.stderr();
    assert!(log.contains("1 requests unanswered; they are cut"), "{log}");
    assert!(log.contains("some work was cut"), "{log}");
    commit(lock).await;
}
