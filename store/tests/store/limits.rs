//! Rate-limit windows in the database: exact under concurrency, shared by every process on the
//! database, and a window that ends starts the count again.

use std::time::Duration;

use toolbridge_store::{Quota, RateLimit, Store};

use crate::common::{Backend, Fresh, empty};

const TEN_PER_MINUTE: RateLimit = RateLimit {
    requests: 10,
    window_secs: 60,
};

/// `count` requests of `bucket` at once, shared out over `stores`; their quotas.
async fn at_once(stores: &[Store], bucket: &str, limit: RateLimit, count: usize) -> Vec<Quota> {
    let tasks: Vec<_> = (0..count)
        .map(|n| {
            let (store, bucket) = (stores[n % stores.len()].clone(), bucket.to_owned());
            tokio::spawn(async move { store.count_request(&bucket, limit).await.unwrap() })
        })
        .collect();
    let mut quotas = Vec::new();
    for task in tasks {
        quotas.push(task.await.unwrap());
    }
    quotas
}

on_both!(requests_at_once_get_exactly_the_limit);
async fn requests_at_once_get_exactly_the_limit(backend: Backend) {
    let (store, _db) = empty(backend).await;
    let quotas = at_once(std::slice::from_ref(&store), "key:a", TEN_PER_MINUTE, 40).await;
    assert_eq!(quotas.iter().filter(|quota| quota.allowed).count(), 10);
    // One window for all of them (unless this ran across a minute's end: then two, each exact).
    let ends: std::collections::BTreeSet<u64> = quotas.iter().map(|quota| quota.reset).collect();
    assert!(ends.len() <= 2, "{ends:?}");
    let mut remaining: Vec<u32> = quotas
        .iter()
        .filter(|quota| quota.allowed)
        .map(|quota| quota.remaining)
        .collect();
    remaining.sort_unstable();
    if ends.len() == 1 {
        assert_eq!(remaining, (0..10).collect::<Vec<_>>());
    }
    for quota in quotas.iter().filter(|quota| !quota.allowed) {
        assert_eq!((quota.limit, quota.remaining), (10, 0));
        assert!((1..=60).contains(&quota.retry_after), "{quota:?}");
    }
    // Another bucket is another window.
    assert!(
        store
            .count_request("key:b", TEN_PER_MINUTE)
            .await
            .unwrap()
            .allowed
    );
}

on_both!(a_request_given_back_frees_its_place);
async fn a_request_given_back_frees_its_place(backend: Backend) {
    let (store, _db) = empty(backend).await;
    let limit = RateLimit {
        requests: 2,
        window_secs: 600,
    };
    let first = store.count_request("sign-in:x", limit).await.unwrap();
    store
        .uncount_request("sign-in:x", first.reset)
        .await
        .unwrap();
    assert!(
        store
            .count_request("sign-in:x", limit)
            .await
            .unwrap()
            .allowed
    );
    assert!(
        store
            .count_request("sign-in:x", limit)
            .await
            .unwrap()
            .allowed
    );
    assert!(
        !store
            .count_request("sign-in:x", limit)
            .await
            .unwrap()
            .allowed
    );
    // Given back for a window that is over: nothing happens.
    store
        .uncount_request("sign-in:x", first.reset - 600)
        .await
        .unwrap();
    assert!(
        !store
            .count_request("sign-in:x", limit)
            .await
            .unwrap()
            .allowed
    );
}

on_both!(a_window_that_ends_counts_again_from_one);
async fn a_window_that_ends_counts_again_from_one(backend: Backend) {
    let (store, _db) = empty(backend).await;
    let limit = RateLimit {
        requests: 1,
        window_secs: 1,
    };
    let first = store.count_request("key:short", limit).await.unwrap();
    let refused = store.count_request("key:short", limit).await.unwrap();
    if refused.reset == first.reset {
        assert!(!refused.allowed);
    }
    // Past the end of the window the second request fell in, by the database's clock.
    tokio::time::sleep(Duration::from_millis(1100)).await;
    let next = store.count_request("key:short", limit).await.unwrap();
    assert!(next.allowed, "{next:?}");
    assert!(next.reset > refused.reset);
    assert_eq!(next.remaining, 0);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn on_postgres_processes_on_one_database_share_each_window() {
    let db = Fresh::new(Backend::Postgres);
    // Three processes, each with a store (and a pool) of its own.
    let stores = [db.open().await, db.open().await, db.open().await];
    let quotas = at_once(&stores, "key:shared", TEN_PER_MINUTE, 45).await;
    let ends: std::collections::BTreeSet<u64> = quotas.iter().map(|quota| quota.reset).collect();
    let allowed = quotas.iter().filter(|quota| quota.allowed).count();
    assert_eq!(allowed, 10 * ends.len(), "{ends:?}");
}

on_both!(a_request_that_read_the_clock_late_counts_in_the_newer_window);
async fn a_request_that_read_the_clock_late_counts_in_the_newer_window(backend: Backend) {
    let (store, _db) = empty(backend).await;
    let limit = RateLimit {
        requests: 3,
        window_secs: 10,
    };
    let count = |unix_time| store.count_request_at("key:late", limit, unix_time);
    // Two in the window that ends at 1 000 010, then one in the next.
    for unix_time in [1_000_005, 1_000_009] {
        assert_eq!(count(unix_time).await.unwrap().reset, 1_000_010);
    }
    let next = count(1_000_010).await.unwrap();
    assert_eq!((next.reset, next.remaining), (1_000_020, 2));
    // A request that read the clock before that window ended, reaching the row after it: it
    // counts in the newer window rather than starting the old one again.
    let late = count(1_000_009).await.unwrap();
    assert_eq!(
        (late.reset, late.remaining, late.allowed),
        (1_000_020, 1, true)
    );
    // So the newer window still lets through exactly its three.
    assert!(count(1_000_011).await.unwrap().allowed);
    let over = count(1_000_012).await.unwrap();
    assert_eq!((over.reset, over.allowed), (1_000_020, false));
}
