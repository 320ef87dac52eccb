//! Webhooks survive a crash, on each backend: the release server is killed with SIGKILL while a
//! delivery is in flight (after the quote's commit, before the receiver has answered), then
//! started again on the same database; the event is delivered, with the same id and the same
//! body. Delivery is at least once: the receiver sees the event twice, once cut off, once
//! answered.
//!
//! The tests live in `webhooks::crash::`, so that `cargo xtask test`'s crash safety suite (the
//! reliability tests whose names hold `crash::`) runs them.

use std::time::{Duration, Instant};

use reqwest::header::CONTENT_TYPE;
use serde_json::{Value, json};
use toolbridge_e2e::webhook_receiver::{Answer, WebhookReceiver};

use crate::client::{self, Api, Fixtures, Rng};
use crate::db::{Backend, Db};
use crate::server::{self, Server};

/// Products in the demo catalog.
const PRODUCTS: u32 = 50;

/// Scopes for creating quotes and endpoints.
const SCOPES: &str = "customers:read,products:read,quotes:write,webhooks:write";

/// A limit no test reaches.
const ROOMY: &str = "1000000000/60s";

/// The worker's settings for these runs: an attempt may take 5 s (the kill cuts it off well
/// before), and a claimed delivery is free again 8 s after its claim (the default 60 s would only
/// make the test wait longer).
const SERVE: &[&str] = &["--webhook-timeout-secs", "5", "--webhook-lease-secs", "8"];

/// How long a delivery may take to arrive: the lease's end, a look for due deliveries, and
/// room for a busy machine.
const WAIT: Duration = Duration::from_secs(60);

mod crash {
    use super::*;

    #[tokio::test(flavor = "multi_thread", worker_threads = 2)]
    async fn a_delivery_cut_off_by_sigkill_is_sent_again_after_a_restart_on_sqlite() {
        delivered_after_a_kill(Backend::Sqlite).await;
    }

    #[tokio::test(flavor = "multi_thread", worker_threads = 2)]
    async fn a_delivery_cut_off_by_sigkill_is_sent_again_after_a_restart_on_postgres() {
        delivered_after_a_kill(Backend::Postgres).await;
    }
}

/// `(status, attempts)` of every delivery in the database, read with its own driver.
async fn deliveries(db: &Db) -> Vec<(String, i64)> {
    let statuses: Vec<String> = db
        .fetch_all("SELECT status FROM webhook_deliveries ORDER BY id")
        .await;
    let attempts: Vec<i64> = db
        .fetch_all("SELECT CAST(attempts AS BIGINT) FROM webhook_deliveries ORDER BY id")
        .await;
    statuses.into_iter().zip(attempts).collect()
}

async fn delivered_after_a_kill(backend: Backend) {
    let label = format!("webhooks: crash: {}", backend.name());
    let dir = server::work_dir(&format!("webhooks-crash-{}", backend.name()));
    let db = Db::new(backend, &dir);
    let receiver = WebhookReceiver::start().unwrap();
    // The first attempt is held unanswered until the server is dead; later ones get 200.
    receiver.answer(Answer::Never);
    let server = Server::start_with(&dir, "server", &db, PRODUCTS, SERVE).await;
    let api = Api::new(&server.base_url());
    let token = server.create_key("webhooks", SCOPES, ROOMY).token;
    let reply = client::exchange(
        api.post("/webhook-endpoints")
            .bearer_auth(&token)
            .json(&json!({"url": receiver.url(), "eventTypes": ["quote.created"]})),
    )
    .await
    .unwrap();
    assert_eq!(
        reply.status,
        201,
        "{}",
        String::from_utf8_lossy(&reply.body)
    );
    let secret = reply.json()["secret"].as_str().unwrap().to_owned();

    let fixtures = Fixtures::fetch(&api, &token).await;
    let body = client::quote_body(&mut Rng::new(22), &fixtures, "webhook", 3);
    let reply = client::exchange(
        api.post("/quotes")
            .bearer_auth(&token)
            .header(CONTENT_TYPE, "application/json")
            .body(serde_json::to_vec(&body).unwrap()),
    )
    .await
    .unwrap();
    assert_eq!(
        reply.status,
        201,
        "{}",
        String::from_utf8_lossy(&reply.body)
    );
    let quote: Value = reply.json();

    let first = receiver.wait_for_async(1, WAIT).await.unwrap()[0].clone();
    let killed_at = Instant::now();
    server.kill();
    println!("{label}: the server was killed while its first attempt was unanswered");
    // The kill left the delivery claimed, not finished: pending, no attempt counted.
    assert_eq!(deliveries(&db).await, [("pending".to_owned(), 0)]);

    let server = Server::start_with(&dir, "server", &db, PRODUCTS, SERVE).await;
    let got = receiver.wait_for_async(2, WAIT).await.unwrap();
    println!(
        "{label}: delivered again {:.1} s after the kill (its lease was 8 s)",
        killed_at.elapsed().as_secs_f64()
    );
    let again = &got[1];
    assert_eq!(again.answer, Answer::Status(200));
    assert_eq!(again.event_id(), first.event_id());
    assert_eq!(again.body, first.body);
    again.verify(&secret).unwrap();
    let payload = again.json().unwrap();
    assert_eq!(payload["id"].as_str(), again.event_id());
    assert_eq!(payload["type"], "quote.created");
    assert_eq!(payload["data"]["quote"]["id"], quote["id"]);

    // Recorded as delivered, once the worker has written it down; and sent no more.
    let started = Instant::now();
    while deliveries(&db).await != [("delivered".to_owned(), 1)] {
        assert!(
            started.elapsed() < Duration::from_secs(10),
            "{:?}",
            deliveries(&db).await
        );
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
    tokio::time::sleep(Duration::from_secs(2)).await;
    assert_eq!(receiver.requests().len(), 2);
    // The worker stops with the server on Ctrl-C's signal.
    server.stop().await;
}
