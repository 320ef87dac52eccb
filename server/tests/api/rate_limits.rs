//! Per-key rate limits with their headers, alone and under concurrency.

use std::collections::HashMap;

use toolbridge_store::{RateLimit, Scope};

use crate::harness::Server;

fn header(response: &reqwest::Response, name: &str) -> u64 {
    response.headers()[name].to_str().unwrap().parse().unwrap()
}

#[tokio::test]
async fn request_n_plus_1_is_429_with_retry_after_and_consistent_headers() {
    let server = Server::start().await;
    let key = server
        .key(
            &[Scope::ProductsRead],
            RateLimit {
                requests: 5,
                window_secs: 3600,
            },
        )
        .await;
    let mut remaining = Vec::new();
    let mut resets = Vec::new();
    for _ in 0..5 {
        let response = server.get(&key, "/api/v1/products?pageSize=1").await;
        assert_eq!(response.status(), 200);
        assert_eq!(header(&response, "x-ratelimit-limit"), 5);
        remaining.push(header(&response, "x-ratelimit-remaining"));
        resets.push(header(&response, "x-ratelimit-reset"));
    }
    let limited = server.get(&key, "/api/v1/products?pageSize=1").await;
    assert_eq!(limited.status(), 429);
    let retry_after = header(&limited, "retry-after");
    assert!(retry_after >= 1);
    assert_eq!(header(&limited, "x-ratelimit-remaining"), 0);
    let reset = header(&limited, "x-ratelimit-reset");
    let now = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .unwrap()
        .as_secs();
    assert!(reset > now && reset - now <= 3600);
    assert!(retry_after <= reset - now + 1);
    let (_, body) = crate::harness::json(limited).await;
    assert_eq!(body["code"], "RATE_LIMITED");
    assert_eq!(body["retryAfter"], retry_after);
    if resets.iter().all(|r| *r == resets[0]) {
        assert_eq!(remaining, [4, 3, 2, 1, 0]);
    }
}

#[tokio::test]
async fn eight_concurrent_clients_get_exactly_the_limit_per_window() {
    let server = Server::start().await;
    let limit = 40;
    let key = server
        .key(
            &[Scope::ProductsRead],
            RateLimit {
                requests: limit,
                window_secs: 3600,
            },
        )
        .await;
    let mut clients = Vec::new();
    for _ in 0..8 {
        let (client, base, key) = (reqwest::Client::new(), server.base.clone(), key.clone());
        clients.push(tokio::spawn(async move {
            let mut seen = Vec::new();
            for _ in 0..15 {
                let response = client
                    .get(format!("{base}/api/v1/products?pageSize=1"))
                    .bearer_auth(&key)
                    .send()
                    .await
                    .unwrap();
                seen.push((
                    response.status().as_u16(),
                    header(&response, "x-ratelimit-reset"),
                ));
            }
            seen
        }));
    }
    let mut by_window: HashMap<u64, (u32, u32)> = HashMap::new();
    for client in clients {
        for (status, reset) in client.await.unwrap() {
            let entry = by_window.entry(reset).or_default();
            match status {
                200 => entry.0 += 1,
                429 => entry.1 += 1,
                other => panic!("unexpected status {other}"),
            }
        }
    }
    for (ok, _) in by_window.values() {
        assert!(*ok <= limit, "{by_window:?}");
    }
    if by_window.len() == 1 {
        let (ok, limited) = by_window.values().next().unwrap();
        assert_eq!((*ok, *limited), (limit, 120 - limit));
    }
}
