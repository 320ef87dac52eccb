//! `GET /healthz` and `GET /readyz`: what a load balancer polls. Short JSON, never cached or
//! compressed, no key needed and none counted; readiness follows the database, the migrations,
//! the live-event listener on PostgreSQL, and the drain.

use std::str::FromStr;
use std::time::{Duration, Instant};

use serde_json::Value;
use sqlx::postgres::PgConnectOptions;
use sqlx::{Connection, PgConnection};
use toolbridge_server::AppState;
use toolbridge_server::lifecycle::{DrainTimes, Lifecycle};
use toolbridge_store::Store;

use crate::harness::{Server, json};
use crate::shutdown::serving;

/// `GET path` (with `headers`): the response's status, the headers the checks look at, and
/// its JSON body.
async fn probe(
    client: &reqwest::Client,
    base: &str,
    path: &str,
    headers: &[(&str, &str)],
) -> (u16, reqwest::header::HeaderMap, Value) {
    let mut request = client.get(format!("{base}{path}"));
    for (name, value) in headers {
        request = request.header(*name, *value);
    }
    let response = request.send().await.unwrap();
    let headers = response.headers().clone();
    let (status, body) = json(response).await;
    (status, headers, body)
}

/// Asserts what every answer of both endpoints carries: JSON, `no-store`, not compressed.
fn plain_json_never_cached(headers: &reqwest::header::HeaderMap) {
    assert_eq!(headers["content-type"], "application/json", "{headers:?}");
    assert_eq!(headers["cache-control"], "no-store", "{headers:?}");
    assert!(headers.get("content-encoding").is_none(), "{headers:?}");
    assert!(headers.get("x-ratelimit-limit").is_none(), "{headers:?}");
}

/// Each check of a `/readyz` answer: its name, whether it passed, and its detail.
fn checks(body: &Value) -> Vec<(String, bool, String)> {
    body["checks"]
        .as_object()
        .unwrap()
        .iter()
        .map(|(name, check)| {
            (
                name.clone(),
                check["ok"].as_bool().unwrap(),
                check["detail"].as_str().unwrap().to_owned(),
            )
        })
        .collect()
}

/// Whether the `/readyz` answer's check `name` passed.
fn passed(body: &Value, name: &str) -> bool {
    body["checks"][name]["ok"].as_bool().unwrap()
}

#[tokio::test]
async fn healthz_answers_ok_in_json_that_is_never_cached() {
    let server = Server::start().await;
    let (status, headers, body) = probe(
        &server.client,
        &server.base,
        "/healthz",
        &[("accept", "text/html"), ("accept-encoding", "br, gzip")],
    )
    .await;
    assert_eq!(status, 200);
    assert_eq!(body, serde_json::json!({"status": "ok"}));
    plain_json_never_cached(&headers);
    assert!(headers.contains_key("x-request-id"));
}

#[tokio::test]
async fn readyz_answers_ok_when_the_database_answers_and_is_migrated() {
    let server = Server::start().await;
    let (status, headers, body) = probe(
        &server.client,
        &server.base,
        "/readyz",
        &[("accept-encoding", "br, gzip")],
    )
    .await;
    assert_eq!(status, 200, "{body}");
    plain_json_never_cached(&headers);
    assert_eq!(body["status"], "ok");
    assert!(body.get("reason").is_none(), "{body}");
    assert_eq!(
        checks(&body),
        [
            ("database".to_owned(), true, "answers".to_owned()),
            ("drain".to_owned(), true, "serving".to_owned()),
            (
                "liveEvents".to_owned(),
                true,
                "not used on SQLite".to_owned()
            ),
            ("migrations".to_owned(), true, "all 11 applied".to_owned()),
        ]
    );
}

#[tokio::test]
async fn neither_endpoint_needs_a_key_or_counts_against_a_limit() {
    let server = Server::start().await;
    // More requests than a key's default limit (120 a minute), each naming a key that does not
    // exist: no 401, no 429, no rate-limit headers.
    for n in 0..130 {
        for path in ["/healthz", "/readyz"] {
            let (status, headers, body) = probe(
                &server.client,
                &server.base,
                path,
                &[("authorization", "Bearer tb_live_nosuchkey")],
            )
            .await;
            assert_eq!(status, 200, "{path} #{n}: {body}");
            plain_json_never_cached(&headers);
        }
    }
}

#[tokio::test]
async fn readyz_answers_503_with_the_reason_once_the_drain_starts() {
    let lifecycle = Lifecycle::new();
    let server = {
        let lifecycle = lifecycle.clone();
        Server::start_with(move |state| state.with_lifecycle(lifecycle)).await
    };
    let (status, _, _) = probe(&server.client, &server.base, "/readyz", &[]).await;
    assert_eq!(status, 200);

    assert!(lifecycle.start_draining("SIGTERM"));
    let (status, headers, body) = probe(&server.client, &server.base, "/readyz", &[]).await;
    assert_eq!(status, 503, "{body}");
    plain_json_never_cached(&headers);
    assert_eq!(body["status"], "unavailable");
    assert_eq!(body["reason"], "drain: draining (SIGTERM): shutting down");
    assert!(!passed(&body, "drain"));
    for other in ["database", "migrations", "liveEvents"] {
        assert!(passed(&body, other), "{other}: {body}");
    }
    // Clients are asked not to keep the connection.
    assert_eq!(headers["connection"], "close");
    // Alive all the same.
    let (status, _, _) = probe(&server.client, &server.base, "/healthz", &[]).await;
    assert_eq!(status, 200);
}

#[tokio::test]
async fn readyz_answers_503_when_the_database_does_not_answer() {
    let server = Server::start().await;
    server.store.close().await;
    let started = Instant::now();
    let (status, headers, body) = probe(&server.client, &server.base, "/readyz", &[]).await;
    assert!(started.elapsed() < Duration::from_secs(5));
    assert_eq!(status, 503, "{body}");
    plain_json_never_cached(&headers);
    assert_eq!(body["status"], "unavailable");
    assert_eq!(
        body["reason"],
        "database: the query failed (the server's log says why)"
    );
    assert!(!passed(&body, "database"));
    assert!(!passed(&body, "migrations"));
    assert!(passed(&body, "drain"));
    // Liveness is about the process, not the database.
    let (status, _, _) = probe(&server.client, &server.base, "/healthz", &[]).await;
    assert_eq!(status, 200);
}

/// `/readyz` until `ready` says its answer is the one awaited, for up to 20 s; that answer.
async fn readyz_until(base: &str, ready: impl Fn(u16, &Value) -> bool) -> (u16, Value) {
    let client = reqwest::Client::new();
    let started = Instant::now();
    loop {
        let (status, _, body) = probe(&client, base, "/readyz", &[]).await;
        if ready(status, &body) {
            return (status, body);
        }
        assert!(
            started.elapsed() < Duration::from_secs(20),
            "still {status} {body} after 20 s"
        );
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn on_postgres_readyz_follows_the_live_event_listener() {
    let database = toolbridge_test_postgres::database().unwrap_or_else(|e| panic!("{e}"));
    let store = Store::open_postgres(&database.url()).await.unwrap();
    let lifecycle = Lifecycle::new();
    let state = AppState::new(store.clone()).with_lifecycle(lifecycle.clone());
    let (base, served) = serving(state, DrainTimes::default()).await;

    // Not listening yet: the pages served here would miss other instances' changes.
    let (status, body) = readyz_until(&base, |_, _| true).await;
    assert_eq!(status, 503, "{body}");
    assert_eq!(body["reason"], "liveEvents: not started");
    assert_eq!(checks(&body).iter().filter(|(_, ok, _)| !ok).count(), 1);

    store.listen().await.unwrap();
    let (status, body) = readyz_until(&base, |_, _| true).await;
    assert_eq!(status, 200, "{body}");
    assert_eq!(body["checks"]["liveEvents"]["detail"], "connected");

    // The listener's connection is lost, and the database takes no new connection for now.
    // From another database of the cluster: a database cannot refuse connections to itself.
    let options = PgConnectOptions::from_str(&database.url())
        .unwrap()
        .database("postgres");
    let mut admin = PgConnection::connect_with(&options).await.unwrap();
    let name = database.name().to_owned();
    sqlx::query(&format!(
        "ALTER DATABASE \"{name}\" WITH ALLOW_CONNECTIONS false"
    ))
    .execute(&mut admin)
    .await
    .unwrap();
    // Every connection of the server's goes, its listener's among them (the listener takes its
    // connection from the pool, which would otherwise hand it an idle one).
    let listening: i64 = sqlx::query_scalar(
        "SELECT COUNT(*) FROM pg_stat_activity WHERE datname = $1 AND query LIKE 'LISTEN %'",
    )
    .bind(&name)
    .fetch_one(&mut admin)
    .await
    .unwrap();
    assert_eq!(listening, 1);
    sqlx::query("SELECT pg_terminate_backend(pid) FROM pg_stat_activity WHERE datname = $1")
        .bind(&name)
        .execute(&mut admin)
        .await
        .unwrap();
    let (status, body) = readyz_until(&base, |_, body| !passed(body, "liveEvents")).await;
    assert_eq!(status, 503, "{body}");
    assert_eq!(
        body["checks"]["liveEvents"]["detail"],
        "not connected; trying again"
    );

    // Connections are taken again: the listener reconnects by itself, and the instance is ready.
    sqlx::query(&format!(
        "ALTER DATABASE \"{name}\" WITH ALLOW_CONNECTIONS true"
    ))
    .execute(&mut admin)
    .await
    .unwrap();
    let (_, body) = readyz_until(&base, |status, _| status == 200).await;
    assert_eq!(body["checks"]["liveEvents"]["detail"], "connected");

    lifecycle.start_draining("the test's end");
    served.await.unwrap().unwrap();
    store.close().await;
}

#[tokio::test]
async fn the_document_lists_both_under_operations_without_security() {
    let document = crate::openapi::document().await;
    for (path, statuses) in [("/healthz", &["200"][..]), ("/readyz", &["200", "503"][..])] {
        let operation = &document["paths"][path]["get"];
        assert_eq!(
            operation["tags"],
            serde_json::json!(["operations"]),
            "{path}"
        );
        assert!(operation.get("security").is_none(), "{path}");
        let responses = operation["responses"].as_object().unwrap();
        assert_eq!(
            responses.keys().map(String::as_str).collect::<Vec<_>>(),
            statuses,
            "{path}"
        );
        for (status, response) in responses {
            assert_eq!(
                response["headers"]["Cache-Control"]["required"], true,
                "{path} {status}"
            );
            assert!(
                response["content"]["application/json"]["schema"]["$ref"]
                    .as_str()
                    .is_some(),
                "{path} {status}"
            );
        }
    }
    assert!(
        document["tags"]
            .as_array()
            .unwrap()
            .iter()
            .any(|tag| tag["name"] == "operations")
    );
}
