//! The figures the server's metrics read from the store: the delivery queue and the pool.

use toolbridge_store::{DeliveryOutcome, DeliveryQueue, NewWebhookEndpoint, Store};

use crate::common::{Backend, demo, raw};
use crate::quotes::new_draft;

/// A new endpoint of the tenant receiving every quote event; its id.
async fn endpoint(store: &Store, tenant_id: &str, enabled: bool) -> String {
    store
        .create_webhook_endpoint(
            tenant_id,
            &NewWebhookEndpoint {
                url: "http://127.0.0.1:9/hook".to_owned(),
                event_types: vec![
                    "quote.created".to_owned(),
                    "quote.saved".to_owned(),
                    "quote.sent".to_owned(),
                ],
                enabled,
            },
        )
        .await
        .unwrap()
        .endpoint
        .id
}

on_both!(the_delivery_queue_counts_what_waits_and_ages_what_is_due);
async fn the_delivery_queue_counts_what_waits_and_ages_what_is_due(backend: Backend) {
    let demo = demo(backend).await;
    let store = &demo.store;
    let empty = DeliveryQueue {
        pending: 0,
        due: 0,
        oldest_due_age_secs: 0,
    };
    assert_eq!(store.delivery_queue().await.unwrap(), empty);

    endpoint(store, &demo.harbour.id, true).await;
    // A disabled endpoint's deliveries wait for it, and are not counted.
    endpoint(store, &demo.harbour.id, false).await;
    new_draft(&demo).await;
    new_draft(&demo).await;
    let queue = store.delivery_queue().await.unwrap();
    assert_eq!((queue.pending, queue.due), (2, 2), "{queue:?}");
    assert!(queue.oldest_due_age_secs <= 5, "{queue:?}");

    // One due for 100 seconds already (its clock is the database's).
    let db = raw(&demo.db).await;
    db.execute(
        "UPDATE webhook_deliveries SET next_attempt_at = next_attempt_at - 100 \
         WHERE id = (SELECT MIN(id) FROM webhook_deliveries)",
    )
    .await;
    let queue = store.delivery_queue().await.unwrap();
    assert_eq!((queue.pending, queue.due), (2, 2), "{queue:?}");
    assert!(
        (100..=110).contains(&queue.oldest_due_age_secs),
        "{queue:?}"
    );

    // Claimed: still pending, no longer waiting for a worker.
    let claimed = store.claim_deliveries(10, 60).await.unwrap();
    assert_eq!(claimed.len(), 2);
    let queue = store.delivery_queue().await.unwrap();
    assert_eq!(
        queue,
        DeliveryQueue {
            pending: 2,
            due: 0,
            oldest_due_age_secs: 0,
        }
    );

    // One delivered, one to be retried in an hour: one pending, none due.
    store
        .finish_delivery(&claimed[0].id, &DeliveryOutcome::Delivered { status: 200 })
        .await
        .unwrap();
    store
        .finish_delivery(
            &claimed[1].id,
            &DeliveryOutcome::Failed {
                status: Some(500),
                error: None,
                retry_in_secs: 3600,
            },
        )
        .await
        .unwrap();
    let queue = store.delivery_queue().await.unwrap();
    assert_eq!(
        queue,
        DeliveryQueue {
            pending: 1,
            due: 0,
            oldest_due_age_secs: 0,
        }
    );
}

on_both!(the_pool_says_how_many_connections_are_in_use);
async fn the_pool_says_how_many_connections_are_in_use(backend: Backend) {
    let demo = demo(backend).await;
    let idle = demo.store.pool_usage();
    assert!(idle.max >= idle.open, "{idle:?}");
    assert!(idle.open >= idle.in_use, "{idle:?}");
    demo.store.delivery_queue().await.unwrap();
    let after = demo.store.pool_usage();
    assert!(after.open >= 1, "a query opened a connection: {after:?}");
    assert!(after.in_use <= after.open, "{after:?}");
    assert_eq!(after.max, idle.max);
}
