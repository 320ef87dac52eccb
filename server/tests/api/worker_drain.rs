//! Stopping the webhook delivery worker, as the drain does: it claims no more, lets an attempt
//! in flight finish within the grace, and hands back what it cuts off, so that another worker
//! takes it at once rather than when its lease runs out.

use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::{Duration, Instant};

use serde_json::json;
use tokio::io::{AsyncReadExt as _, AsyncWriteExt as _};
use toolbridge_e2e::webhook_receiver::{Answer, WebhookReceiver};
use toolbridge_server::webhooks::destination::Destinations;
use toolbridge_server::webhooks::worker::{self, Drained, WorkerOptions};

use crate::deliveries::{create_quote, endpoint, log};
use crate::harness::Server;

/// How long a test waits for what should come within seconds.
const WAIT: Duration = Duration::from_secs(20);

/// A worker whose attempts may take 30 s and whose leases last a minute: longer than any test,
/// so that only a hand-back lets a delivery be claimed again during one.
fn patient() -> WorkerOptions {
    WorkerOptions {
        timeout: Duration::from_secs(30),
        lease: Duration::from_secs(60),
        poll: Duration::from_millis(200),
        ..WorkerOptions::default()
    }
}

/// A server that takes loopback endpoints, and a key with every scope.
async fn start() -> (Server, String) {
    let server = Server::start_with(toolbridge_server::AppState::allowing_private_webhooks).await;
    let key = server.full_key().await;
    (server, key)
}

#[tokio::test]
async fn stopping_the_worker_hands_back_the_delivery_it_was_sending() {
    let (server, key) = start().await;
    let receiver = WebhookReceiver::start().unwrap();
    // The receiver never answers: the attempt is in flight until it is cut off.
    receiver.answer(Answer::Never);
    let hook = endpoint(&server, &key, &receiver.url(), &["quote.created"])
        .await
        .0;
    let worker =
        worker::spawn(server.store.clone(), Destinations::AllowPrivate, patient()).unwrap();
    create_quote(&server, &key).await;
    receiver.wait_for_async(1, WAIT).await.unwrap();

    let started = Instant::now();
    let drained = worker.drain(Duration::from_millis(300)).await;
    assert!(
        started.elapsed() < Duration::from_secs(5),
        "{:?}",
        started.elapsed()
    );
    assert_eq!(
        drained,
        Drained {
            cut: 1,
            ..Drained::default()
        }
    );
    // Handed back: claimable now, not in a minute, and the cut attempt is not counted.
    let entries = log(&server, &key, &hook).await;
    assert_eq!(entries.len(), 1, "{entries:?}");
    assert_eq!(
        (&entries[0]["status"], &entries[0]["attempts"]),
        (&json!("pending"), &json!(0))
    );
    let claimed = server.store.claim_deliveries(10, 60).await.unwrap();
    assert_eq!(claimed.len(), 1, "{claimed:?}");
    assert_eq!(claimed[0].id, entries[0]["id"].as_str().unwrap());
    assert_eq!(claimed[0].attempts, 0);
}

#[tokio::test]
async fn a_held_delivery_waits_for_its_lease_until_the_worker_stops() {
    // A delivery held by a running worker is not claimable by another while its lease lasts;
    // stopping the worker (no grace) hands it back.
    let (server, key) = start().await;
    let receiver = WebhookReceiver::start().unwrap();
    receiver.answer(Answer::Never);
    endpoint(&server, &key, &receiver.url(), &["quote.created"]).await;
    let worker =
        worker::spawn(server.store.clone(), Destinations::AllowPrivate, patient()).unwrap();
    create_quote(&server, &key).await;
    receiver.wait_for_async(1, WAIT).await.unwrap();
    assert!(
        server
            .store
            .claim_deliveries(10, 60)
            .await
            .unwrap()
            .is_empty()
    );
    worker.stop().await;
    assert_eq!(
        server.store.claim_deliveries(10, 60).await.unwrap().len(),
        1
    );
}

/// A webhook receiver on loopback that answers every request 200 after `delay`; its URL, and
/// how many requests it has been sent.
async fn slow_receiver(delay: Duration) -> (String, Arc<AtomicUsize>) {
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let url = format!("http://{}/hook", listener.local_addr().unwrap());
    let received = Arc::new(AtomicUsize::new(0));
    let counted = Arc::clone(&received);
    tokio::spawn(async move {
        while let Ok((mut connection, _)) = listener.accept().await {
            counted.fetch_add(1, Ordering::SeqCst);
            tokio::spawn(async move {
                let mut request = vec![0_u8; 64 * 1024];
                let _ = connection.read(&mut request).await;
                tokio::time::sleep(delay).await;
                let _ = connection
                    .write_all(b"HTTP/1.1 200 OK\r\ncontent-length: 0\r\nconnection: close\r\n\r\n")
                    .await;
                let _ = connection.shutdown().await;
            });
        }
    });
    (url, received)
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_draining_worker_finishes_its_attempt_and_claims_no_more() {
    let (server, key) = start().await;
    let (url, received) = slow_receiver(Duration::from_secs(1)).await;
    let hook = endpoint(&server, &key, &url, &["quote.created"]).await.0;
    let worker =
        worker::spawn(server.store.clone(), Destinations::AllowPrivate, patient()).unwrap();
    create_quote(&server, &key).await;
    let started = Instant::now();
    while received.load(Ordering::SeqCst) == 0 {
        assert!(started.elapsed() < WAIT, "the receiver got nothing");
        tokio::time::sleep(Duration::from_millis(20)).await;
    }

    let draining = tokio::spawn(worker.drain(Duration::from_secs(10)));
    tokio::time::sleep(Duration::from_millis(100)).await;
    // A delivery made during the drain is left for another worker.
    create_quote(&server, &key).await;
    let drained = draining.await.unwrap();
    assert_eq!(
        drained,
        Drained {
            finished: 1,
            ..Drained::default()
        }
    );
    assert!(
        started.elapsed() < Duration::from_secs(5),
        "{:?}",
        started.elapsed()
    );
    tokio::time::sleep(Duration::from_millis(500)).await;
    assert_eq!(received.load(Ordering::SeqCst), 1);
    let entries = log(&server, &key, &hook).await;
    let states: Vec<(&str, u64)> = entries
        .iter()
        .map(|entry| {
            (
                entry["status"].as_str().unwrap(),
                entry["attempts"].as_u64().unwrap(),
            )
        })
        .collect();
    assert_eq!(states, [("pending", 0), ("delivered", 1)]);
    assert_eq!(
        server.store.claim_deliveries(10, 60).await.unwrap().len(),
        1
    );
}
