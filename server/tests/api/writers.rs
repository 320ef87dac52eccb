//! Quote creations that have to wait for the database's write lock are served in the order they
//! came, so that under many writers none of them waits until the busy timeout and fails.

use std::time::Duration;

use sqlx::sqlite::SqliteConnectOptions;
use sqlx::{Connection, SqliteConnection};

use crate::harness::{Server, customer_and_product, json};

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn creates_waiting_for_the_write_lock_are_served_first_come_first_served() {
    let server = Server::start().await;
    let key = server.full_key().await;
    let (customer, product) = customer_and_product(&server, &key).await;

    // Another process (a `toolbridge keys create`, say) is writing to the file.
    let mut other =
        SqliteConnection::connect_with(&SqliteConnectOptions::new().filename(&server.db))
            .await
            .unwrap();
    sqlx::query("BEGIN IMMEDIATE")
        .execute(&mut other)
        .await
        .unwrap();

    // Eight creates arrive one after the other while it writes. Before they queued in the
    // server, each polled SQLite's lock on its own schedule, and whichever polled first after
    // the lock was free won: the order was chance, and a writer could lose until it failed.
    let mut writers = Vec::new();
    for n in 0..8 {
        let request = server
            .request(reqwest::Method::POST, "/api/v1/quotes")
            .bearer_auth(&key)
            .json(&serde_json::json!({
                "customerId": customer,
                "title": format!("writer {n}"),
                "lines": [{"skuId": product, "qty": 1, "unitPrice": 10}],
            }));
        writers.push(tokio::spawn(async move {
            json(request.send().await.unwrap()).await
        }));
        tokio::time::sleep(Duration::from_millis(60)).await;
    }
    tokio::time::sleep(Duration::from_millis(200)).await;
    sqlx::query("COMMIT").execute(&mut other).await.unwrap();

    let mut references = Vec::new();
    for writer in writers {
        let (status, quote) = writer.await.unwrap();
        assert_eq!(status, 201, "{quote}");
        let reference = quote["ref"].as_str().unwrap();
        references.push(reference.trim_start_matches("Q-").parse::<u64>().unwrap());
    }
    assert!(
        references.windows(2).all(|pair| pair[0] < pair[1]),
        "the creates were committed out of the order they came in: {references:?}"
    );
}
