//! Webhook deliveries end to end in one process: quotes written over REST (and a header saved with
//! the app's session, as the editor does), the delivery worker sending to a real receiver on
//! loopback, and what the receiver got and the delivery log say. Each test runs its own server
//! and worker, the worker with a quick retry (1 s, not growing) and a quick look for due
//! deliveries, so that retries do not take minutes.

use std::time::{Duration, Instant};

use reqwest::Method;
use serde_json::{Value, json};
use toolbridge_e2e::webhook_receiver::{Answer, Received, WebhookReceiver};
use toolbridge_server::webhooks::destination::Destinations;
use toolbridge_server::webhooks::worker::{self, Worker, WorkerOptions};

use crate::harness::{Server, call, customer_and_product, json, quote_body, send};

/// How long a test waits for what should come within seconds.
const WAIT: Duration = Duration::from_secs(20);
/// How long a test watches for a request that must not come.
const QUIET: Duration = Duration::from_secs(2);

/// The worker's options in these tests: an attempt may take 2 s (the product's is 10 s), a retry
/// is due 1 s after a failure (about; with jitter, whole seconds, at least 1), the queue is looked
/// at every 200 ms.
fn quick() -> WorkerOptions {
    WorkerOptions {
        timeout: Duration::from_secs(2),
        lease: Duration::from_secs(10),
        retry_base: Duration::from_secs(1),
        retry_growth: 1,
        poll: Duration::from_millis(200),
        ..WorkerOptions::default()
    }
}

/// A server that accepts loopback endpoints, a worker sending to `destinations`, and a key with
/// every scope.
async fn start(destinations: Destinations, options: WorkerOptions) -> (Server, Worker, String) {
    let server = Server::start_with(toolbridge_server::AppState::allowing_private_webhooks).await;
    let worker = worker::spawn(server.store.clone(), destinations, options).unwrap();
    let key = server.full_key().await;
    (server, worker, key)
}

/// Creates an endpoint at `url` for `types` over REST: its id and secret.
pub(crate) async fn endpoint(
    server: &Server,
    key: &str,
    url: &str,
    types: &[&str],
) -> (String, String) {
    let body = json!({"url": url, "eventTypes": types});
    let (status, created) = send(
        server,
        key,
        Method::POST,
        "/api/v1/webhook-endpoints",
        Some(&body),
    )
    .await;
    assert_eq!(status, 201, "{created}");
    (
        created["endpoint"]["id"].as_str().unwrap().to_owned(),
        created["secret"].as_str().unwrap().to_owned(),
    )
}

/// Creates a quote over REST and returns its id.
pub(crate) async fn create_quote(server: &Server, key: &str) -> String {
    let (customer, product) = customer_and_product(server, key).await;
    let (status, quote) = json(
        server
            .post(key, "/api/v1/quotes", &quote_body(&customer, &product))
            .await,
    )
    .await;
    assert_eq!(status, 201, "{quote}");
    quote["id"].as_str().unwrap().to_owned()
}

/// The endpoint's delivery log over REST, newest first.
pub(crate) async fn log(server: &Server, key: &str, endpoint: &str) -> Vec<Value> {
    let (status, page) = send(
        server,
        key,
        Method::GET,
        &format!("/api/v1/webhook-endpoints/{endpoint}/deliveries?pageSize=100"),
        None,
    )
    .await;
    assert_eq!(status, 200, "{page}");
    page["items"].as_array().unwrap().clone()
}

/// Waits until the log's newest delivery is no longer pending, and returns it.
async fn settled(server: &Server, key: &str, endpoint: &str) -> Value {
    let started = Instant::now();
    loop {
        let entries = log(server, key, endpoint).await;
        if let Some(newest) = entries.first().filter(|entry| entry["status"] != "pending") {
            return newest.clone();
        }
        assert!(
            started.elapsed() < WAIT,
            "still pending after {WAIT:?}: {entries:?}"
        );
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
}

/// Checks that nothing more than `count` requests reaches `receiver` for a while.
async fn stays_at(receiver: &WebhookReceiver, count: usize) {
    tokio::time::sleep(QUIET).await;
    let got = receiver.requests();
    assert_eq!(
        got.len(),
        count,
        "{:?}",
        got.iter().map(Received::event_id).collect::<Vec<_>>()
    );
}

/// The payload's `type`.
fn event_type(request: &Received) -> String {
    request.json().unwrap()["type"].as_str().unwrap().to_owned()
}

/// Checks one delivery of an event about quote `quote` of `tenant`: a signed `POST` of JSON from
/// toolbridge's worker, its event id in the header and the payload alike.
fn signed_event_of(request: &Received, secret: &str, tenant: &str, quote: &str) {
    let payload = request.json().unwrap();
    request.verify(secret).unwrap();
    assert_eq!(request.method, "POST");
    assert_eq!(request.path, "/hook");
    assert_eq!(request.header("content-type"), Some("application/json"));
    assert!(
        request
            .header("user-agent")
            .is_some_and(|agent| agent.starts_with("toolbridge-webhooks/")),
        "{:?}",
        request.headers
    );
    let event = request.event_id().unwrap();
    assert!(event.starts_with("evt_"), "{event}");
    assert_eq!(payload["id"], event);
    assert_eq!(payload["tenantId"], tenant);
    assert_eq!(payload["data"]["quote"]["id"], quote);
    assert!(
        payload["created"].as_str().unwrap().ends_with('Z'),
        "{payload}"
    );
}

#[tokio::test]
async fn each_quote_event_reaches_the_receiver_once_signed_with_its_id() {
    let (server, worker, key) = start(Destinations::AllowPrivate, quick()).await;
    let receiver = WebhookReceiver::start().unwrap();
    let all = ["quote.created", "quote.saved", "quote.sent"];
    let (hook, secret) = endpoint(&server, &key, &receiver.url(), &all).await;
    let tenant = server.tenant().await;

    let id = create_quote(&server, &key).await;
    let (_, quote) = send(
        &server,
        &key,
        Method::GET,
        &format!("/api/v1/quotes/{id}"),
        None,
    )
    .await;
    let mut lines = quote["lines"].clone();
    lines[0]["qty"] = json!(5);
    let (status, saved) = send(
        &server,
        &key,
        Method::PUT,
        &format!("/api/v1/quotes/{id}/lines"),
        Some(&json!({"lines": lines, "groupKeys": {}})),
    )
    .await;
    assert_eq!(status, 200, "{saved}");
    // The app's editor saves a header change with the session.
    let office = server.sign_in("office@harbour.test").await;
    let (status, changed) = call(
        &server,
        &office,
        Method::PATCH,
        &format!("/api/v1/quotes/{id}"),
        Some(&json!({"quoteType": "Estimate"})),
    )
    .await;
    assert_eq!(status, 200, "{changed}");
    let (status, sent) = send(
        &server,
        &key,
        Method::POST,
        &format!("/api/v1/quotes/{id}/send"),
        Some(&json!({})),
    )
    .await;
    assert_eq!(status, 200, "{sent}");

    receiver.wait_for_async(4, WAIT).await.unwrap();
    stays_at(&receiver, 4).await;
    let got = receiver.requests();
    let mut types: Vec<String> = got.iter().map(event_type).collect();
    types.sort();
    assert_eq!(
        types,
        ["quote.created", "quote.saved", "quote.saved", "quote.sent"]
    );
    for request in &got {
        signed_event_of(request, &secret, &tenant, &id);
    }
    let sent_event = got.iter().find(|r| event_type(r) == "quote.sent").unwrap();
    assert_eq!(
        sent_event.json().unwrap()["data"]["quote"]["status"],
        "Sent"
    );
    // The lines saved over REST, then the header changed in the app, in that order.
    let saved: Vec<Value> = got
        .iter()
        .filter(|r| event_type(r) == "quote.saved")
        .map(|r| r.json().unwrap()["data"]["quote"].clone())
        .collect();
    let lines_saved = saved.iter().find(|q| q["quoteType"] == "Quote").unwrap();
    assert_eq!(lines_saved["lines"][0]["qty"], 5.0);
    let header_saved = saved.iter().find(|q| q["quoteType"] == "Estimate").unwrap();
    assert_eq!(header_saved["lines"][0]["qty"], 5.0);
    // Four different events, each once.
    let mut ids: Vec<&str> = got.iter().filter_map(Received::event_id).collect();
    ids.sort_unstable();
    ids.dedup();
    assert_eq!(ids.len(), 4);

    let entries = log(&server, &key, &hook).await;
    assert_eq!(entries.len(), 4, "{entries:?}");
    for entry in &entries {
        assert_eq!(entry["status"], "delivered", "{entry}");
        assert_eq!(entry["attempts"], 1, "{entry}");
        assert_eq!(entry["lastStatus"], 200, "{entry}");
        assert!(ids.contains(&entry["eventId"].as_str().unwrap()), "{entry}");
    }
    worker.stop().await;
}

#[tokio::test]
async fn a_receiver_failing_twice_gets_three_attempts_and_the_log_shows_them() {
    let (server, worker, key) = start(Destinations::AllowPrivate, quick()).await;
    let receiver = WebhookReceiver::start().unwrap();
    receiver.answers([Answer::Status(500), Answer::Status(500)]);
    let (hook, secret) = endpoint(&server, &key, &receiver.url(), &["quote.created"]).await;
    create_quote(&server, &key).await;

    let got = receiver.wait_for_async(3, WAIT).await.unwrap();
    let answers: Vec<Answer> = got.iter().map(|request| request.answer).collect();
    assert_eq!(
        answers,
        [
            Answer::Status(500),
            Answer::Status(500),
            Answer::Status(200)
        ]
    );
    // The same event every time, signed each time.
    assert!(
        got.iter()
            .all(|request| request.event_id() == got[0].event_id())
    );
    assert!(got.iter().all(|request| request.body == got[0].body));
    for request in &got {
        request.verify(&secret).unwrap();
    }
    let entry = settled(&server, &key, &hook).await;
    assert_eq!(entry["status"], "delivered", "{entry}");
    assert_eq!(entry["attempts"], 3, "{entry}");
    assert_eq!(entry["lastStatus"], 200, "{entry}");
    assert_eq!(entry["eventId"].as_str(), got[0].event_id(), "{entry}");
    assert!(entry["deliveredAt"].is_string(), "{entry}");
    assert_eq!(entry["nextAttemptAt"], Value::Null, "{entry}");
    stays_at(&receiver, 3).await;
    worker.stop().await;
}

#[tokio::test]
async fn a_receiver_that_never_answers_gets_four_attempts_then_the_delivery_fails() {
    // A 1 s timeout keeps this test short; the product's is 10 s (WorkerOptions::default).
    let options = WorkerOptions {
        timeout: Duration::from_secs(1),
        ..quick()
    };
    let (server, worker, key) = start(Destinations::AllowPrivate, options).await;
    let receiver = WebhookReceiver::start().unwrap();
    receiver.answers([Answer::Never; 5]);
    let (hook, _) = endpoint(&server, &key, &receiver.url(), &["quote.created"]).await;
    create_quote(&server, &key).await;

    let got = receiver.wait_for_async(4, WAIT).await.unwrap();
    assert!(
        got.iter()
            .all(|request| request.event_id() == got[0].event_id())
    );
    let entry = settled(&server, &key, &hook).await;
    assert_eq!(entry["status"], "failed", "{entry}");
    assert_eq!(entry["attempts"], 4, "{entry}");
    assert_eq!(entry["lastStatus"], Value::Null, "{entry}");
    assert_eq!(entry["lastError"], "timed out after 1 s", "{entry}");
    assert_eq!(entry["nextAttemptAt"], Value::Null, "{entry}");
    assert_eq!(entry["deliveredAt"], Value::Null, "{entry}");
    // No fifth attempt.
    stays_at(&receiver, 4).await;
    worker.stop().await;
}

#[tokio::test]
async fn another_tenants_endpoint_never_receives_this_tenants_events() {
    let (server, worker, key) = start(Destinations::AllowPrivate, quick()).await;
    let receiver = WebhookReceiver::start().unwrap();
    let (_, mine_secret) =
        endpoint(&server, &key, &receiver.url_at("/mine"), &["quote.created"]).await;
    let other = server.sign_in("admin@other.test").await;
    let body = json!({"url": receiver.url_at("/theirs"), "eventTypes": ["quote.created"]});
    let (status, theirs) = call(
        &server,
        &other,
        Method::POST,
        "/api/v1/webhook-endpoints",
        Some(&body),
    )
    .await;
    assert_eq!(status, 201, "{theirs}");

    let id = create_quote(&server, &key).await;
    let got = receiver.wait_for_async(1, WAIT).await.unwrap();
    stays_at(&receiver, 1).await;
    assert_eq!(got[0].path, "/mine");
    assert_eq!(got[0].json().unwrap()["data"]["quote"]["id"], id.as_str());
    got[0].verify(&mine_secret).unwrap();

    // And the other way round: their quote, made in the app, goes to their endpoint only.
    let body = json!({
        "customerName": "Bondi Builders",
        "lines": [{"description": "Site visit", "qty": 1, "unitPrice": 120, "taxRate": 0.1}],
    });
    let (status, quote) = call(&server, &other, Method::POST, "/api/v1/quotes", Some(&body)).await;
    assert_eq!(status, 201, "{quote}");
    let got = receiver.wait_for_async(2, WAIT).await.unwrap();
    stays_at(&receiver, 2).await;
    assert_eq!(got[1].path, "/theirs");
    let payload = got[1].json().unwrap();
    assert_eq!(payload["data"]["quote"]["id"], quote["id"]);
    assert_ne!(payload["tenantId"], server.tenant().await.as_str());
    got[1].verify(theirs["secret"].as_str().unwrap()).unwrap();
    assert!(got[1].verify(&mine_secret).is_err());
    worker.stop().await;
}

#[tokio::test]
async fn after_a_rotation_mid_stream_deliveries_are_signed_with_the_new_secret() {
    // A retry a few seconds after the failure (2 to 5 s with the jitter), so that the rotation
    // comes before it.
    let options = WorkerOptions {
        retry_base: Duration::from_secs(3),
        ..quick()
    };
    let (server, worker, key) = start(Destinations::AllowPrivate, options).await;
    let receiver = WebhookReceiver::start().unwrap();
    // The first quote's event goes through; the second's fails once, so that its retry comes
    // after the rotation.
    receiver.answers([Answer::Status(200), Answer::Status(503)]);
    let (hook, old) = endpoint(&server, &key, &receiver.url(), &["quote.created"]).await;
    create_quote(&server, &key).await;
    let got = receiver.wait_for_async(1, WAIT).await.unwrap();
    got[0].verify(&old).unwrap();
    create_quote(&server, &key).await;
    let got = receiver.wait_for_async(2, WAIT).await.unwrap();
    got[1].verify(&old).unwrap();

    let (status, rotated) = send(
        &server,
        &key,
        Method::POST,
        &format!("/api/v1/webhook-endpoints/{hook}/rotate-secret"),
        None,
    )
    .await;
    assert_eq!(status, 200, "{rotated}");
    let new = rotated["secret"].as_str().unwrap().to_owned();
    assert_ne!(new, old);

    // The retry of the second event, then a third quote's event: both with the new secret only.
    let got = receiver.wait_for_async(3, WAIT).await.unwrap();
    assert_eq!(got[2].event_id(), got[1].event_id());
    create_quote(&server, &key).await;
    let got = receiver.wait_for_async(4, WAIT).await.unwrap();
    for later in &got[2..] {
        later.verify(&new).unwrap();
        let refused = later.verify(&old).unwrap_err();
        assert!(refused.to_string().contains("does not match"), "{refused}");
    }
    stays_at(&receiver, 4).await;
    worker.stop().await;
}

#[tokio::test]
async fn a_redelivery_sends_the_same_event_again() {
    let (server, worker, key) = start(Destinations::AllowPrivate, quick()).await;
    let receiver = WebhookReceiver::start().unwrap();
    let (hook, secret) = endpoint(&server, &key, &receiver.url(), &["quote.created"]).await;
    create_quote(&server, &key).await;
    let first = receiver.wait_for_async(1, WAIT).await.unwrap()[0].clone();
    let delivered = settled(&server, &key, &hook).await;
    assert_eq!(delivered["status"], "delivered");

    let (status, again) = send(
        &server,
        &key,
        Method::POST,
        &format!(
            "/api/v1/webhook-endpoints/{hook}/deliveries/{}/redeliver",
            delivered["id"].as_str().unwrap()
        ),
        None,
    )
    .await;
    assert_eq!(status, 201, "{again}");
    assert_ne!(again["id"], delivered["id"]);
    assert_eq!(again["eventId"], delivered["eventId"]);

    let got = receiver.wait_for_async(2, WAIT).await.unwrap();
    stays_at(&receiver, 2).await;
    assert_eq!(got[1].event_id(), first.event_id());
    assert_eq!(got[1].body, first.body);
    got[1].verify(&secret).unwrap();
    let entries = log(&server, &key, &hook).await;
    assert_eq!(entries.len(), 2, "{entries:?}");
    assert!(
        entries.iter().all(|entry| entry["status"] == "delivered"),
        "{entries:?}"
    );
    worker.stop().await;
}

#[tokio::test]
async fn a_private_address_is_refused_on_delivery_without_the_flag() {
    // The endpoint is saved while private addresses are allowed; the worker then runs without
    // the flag, as a server restarted without it would.
    let (server, worker, key) = start(Destinations::PublicOnly, quick()).await;
    let receiver = WebhookReceiver::start().unwrap();
    let (hook, _) = endpoint(&server, &key, &receiver.url(), &["quote.created"]).await;
    create_quote(&server, &key).await;

    let started = Instant::now();
    let entry = loop {
        let entries = log(&server, &key, &hook).await;
        if let Some(tried) = entries.first().filter(|entry| entry["attempts"] != 0) {
            break tried.clone();
        }
        assert!(started.elapsed() < WAIT, "never tried: {entries:?}");
        tokio::time::sleep(Duration::from_millis(100)).await;
    };
    let error = entry["lastError"].as_str().unwrap_or_default();
    assert!(
        error.contains("127.0.0.1") && error.contains("webhooks go to public addresses only"),
        "{entry}"
    );
    assert_eq!(entry["lastStatus"], Value::Null, "{entry}");
    stays_at(&receiver, 0).await;
    worker.stop().await;
}
