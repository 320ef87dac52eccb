//! Webhooks: endpoints kept to their tenant, the outbox written with each quote write, and the
//! delivery queue (claims, leases, attempts) correct with several workers.

use std::collections::{BTreeMap, BTreeSet};

use serde_json::{Value, json};
use sqlx::{Connection, PgConnection};
use toolbridge_protocol::webhooks::{MAX_ATTEMPTS, WebhookDeliveryStatus, WebhookEventType};
use toolbridge_store::{
    ClaimedDelivery, Conditions, DeliveryOutcome, NewWebhookEndpoint, Record, Store,
    WebhookDelivery, WebhookEndpointChange,
};

use crate::common::{
    Backend, Demo, Fresh, by, demo, not_found, page, paths, raw, rest, simple_rest_body,
};
use crate::quotes::{idem, line, new_draft};

/// A new endpoint of the tenant receiving `types`; its id and secret.
async fn endpoint(
    store: &Store,
    tenant_id: &str,
    types: &[&str],
    enabled: bool,
) -> (String, String) {
    let created = store
        .create_webhook_endpoint(
            tenant_id,
            &NewWebhookEndpoint {
                url: "http://127.0.0.1:9/hook".to_owned(),
                event_types: types.iter().map(|t| (*t).to_owned()).collect(),
                enabled,
            },
        )
        .await
        .unwrap();
    (created.endpoint.id, created.secret)
}

const ALL: [&str; 3] = ["quote.created", "quote.saved", "quote.sent"];

/// Every delivery of the tenant's endpoint, newest first.
async fn log(demo: &Demo, tenant_id: &str, endpoint_id: &str) -> Vec<WebhookDelivery> {
    demo.store
        .deliveries(tenant_id, endpoint_id, page(1, 500))
        .await
        .unwrap()
        .items
}

/// The event types of a log, oldest first.
fn types(log: &[WebhookDelivery]) -> Vec<&'static str> {
    log.iter().rev().map(|d| d.event_type.as_str()).collect()
}

/// Claims everything due (leased for a minute).
async fn claim(store: &Store) -> Vec<ClaimedDelivery> {
    store.claim_deliveries(100, 60).await.unwrap()
}

fn failed(status: u16, retry_in_secs: u32) -> DeliveryOutcome {
    DeliveryOutcome::Failed {
        status: Some(status),
        error: None,
        retry_in_secs,
    }
}

on_both!(each_quote_write_adds_a_delivery_for_each_enabled_endpoint_of_the_tenant_that_receives_it);
async fn each_quote_write_adds_a_delivery_for_each_enabled_endpoint_of_the_tenant_that_receives_it(
    backend: Backend,
) {
    let demo = demo(backend).await;
    let (t1, t2) = (&demo.harbour.id, &demo.other.id);
    let (every, _) = endpoint(&demo.store, t1, &ALL, true).await;
    let (sent_only, _) = endpoint(&demo.store, t1, &["quote.sent"], true).await;
    let (disabled, _) = endpoint(&demo.store, t1, &ALL, false).await;
    let (theirs, _) = endpoint(&demo.store, t2, &ALL, true).await;

    let draft = new_draft(&demo).await;
    let id = &draft.header.id;
    demo.store
        .save_lines(
            t1,
            id,
            vec![line(1, "2", "10")],
            BTreeMap::new(),
            &Conditions::default(),
            &by(),
        )
        .await
        .unwrap();
    let change = toolbridge_protocol::quote_header::HeaderChange {
        expiry_days: Some(10),
        ..Default::default()
    };
    demo.store
        .update_quote_header(t1, id, &change, &Conditions::default(), &by())
        .await
        .unwrap();
    let sent = demo.store.send_quote(t1, id, &by()).await.unwrap().quote;

    let every_log = log(&demo, t1, &every).await;
    assert_eq!(
        types(&every_log),
        ["quote.created", "quote.saved", "quote.saved", "quote.sent"]
    );
    let sent_log = log(&demo, t1, &sent_only).await;
    assert_eq!(types(&sent_log), ["quote.sent"]);
    assert!(log(&demo, t1, &disabled).await.is_empty());
    assert!(log(&demo, t2, &theirs).await.is_empty());

    // One event, one id, for every endpoint that receives it; each event its own id.
    assert_eq!(every_log[0].event_id, sent_log[0].event_id);
    let ids: BTreeSet<&str> = every_log.iter().map(|d| d.event_id.as_str()).collect();
    assert_eq!(ids.len(), 4);
    for delivery in &every_log {
        assert!(
            delivery.event_id.starts_with("evt_"),
            "{}",
            delivery.event_id
        );
        assert_eq!(delivery.status, WebhookDeliveryStatus::Pending);
        assert_eq!(delivery.attempts, 0);
        assert!(delivery.next_attempt_at.is_some());
        assert_eq!(delivery.delivered_at, None);
    }

    // The payload: the quote after the change.
    let claimed = claim(&demo.store).await;
    assert_eq!(claimed.len(), 5, "only this tenant's enabled endpoints");
    let last_sent = claimed.iter().find(|c| c.endpoint_id == sent_only).unwrap();
    assert_eq!(last_sent.event_type, WebhookEventType::QuoteSent);
    let payload: Value = serde_json::from_str(&last_sent.payload).unwrap();
    assert_eq!(payload["id"], last_sent.event_id.as_str());
    assert_eq!(payload["type"], "quote.sent");
    assert_eq!(payload["tenantId"], t1.as_str());
    assert!(
        payload["created"].as_str().unwrap().ends_with('Z'),
        "{payload}"
    );
    assert_eq!(
        payload["data"]["quote"],
        serde_json::to_value(&sent).unwrap()
    );
    assert_eq!(payload["data"]["quote"]["status"], "Sent");
}

on_both!(a_refused_or_replayed_write_adds_no_delivery);
async fn a_refused_or_replayed_write_adds_no_delivery(backend: Backend) {
    let demo = demo(backend).await;
    let t1 = &demo.harbour.id;
    let (every, _) = endpoint(&demo.store, t1, &ALL, true).await;
    let body = simple_rest_body(&demo, &demo.harbour).await;
    let key = idem("k", "once", "hash");
    let first = demo
        .store
        .create_quote(t1, &rest(body.clone()), Some(&key), &by())
        .await
        .unwrap();
    let replayed = demo
        .store
        .create_quote(t1, &rest(body), Some(&key), &by())
        .await
        .unwrap();
    assert!(replayed.replayed);
    let mut bad = simple_rest_body(&demo, &demo.harbour).await;
    bad["customerId"] = json!("00000000-0000-4000-8000-000000000000");
    assert_eq!(
        paths(demo.store.create_quote(t1, &rest(bad), None, &by()).await),
        ["customerId"]
    );
    let id = &first.quote.header.id;
    demo.store.send_quote(t1, id, &by()).await.unwrap();
    assert!(demo.store.send_quote(t1, id, &by()).await.is_err());
    assert!(
        demo.store
            .save_lines(
                t1,
                id,
                vec![line(1, "2", "10")],
                BTreeMap::new(),
                &Conditions::default(),
                &by()
            )
            .await
            .is_err()
    );
    assert_eq!(
        types(&log(&demo, t1, &every).await),
        ["quote.created", "quote.sent"]
    );
}

on_both!(endpoints_are_checked_kept_to_their_tenant_and_show_their_secret_once);
async fn endpoints_are_checked_kept_to_their_tenant_and_show_their_secret_once(backend: Backend) {
    let demo = demo(backend).await;
    let (t1, t2) = (&demo.harbour.id, &demo.other.id);
    let store = &demo.store;
    let bad = NewWebhookEndpoint {
        url: "ftp://example.com/hook".to_owned(),
        event_types: vec![
            "quote.sent".to_owned(),
            "quote.gone".to_owned(),
            "quote.sent".to_owned(),
        ],
        enabled: true,
    };
    assert_eq!(
        paths(store.create_webhook_endpoint(t1, &bad).await),
        ["url", "eventTypes[1]", "eventTypes[2]"]
    );
    let none = NewWebhookEndpoint {
        url: "https://example.com/hook".to_owned(),
        event_types: Vec::new(),
        enabled: true,
    };
    assert_eq!(
        paths(store.create_webhook_endpoint(t1, &none).await),
        ["eventTypes"]
    );

    let created = store
        .create_webhook_endpoint(
            t1,
            &NewWebhookEndpoint {
                url: "https://example.com/hook".to_owned(),
                event_types: vec!["quote.sent".to_owned(), "quote.created".to_owned()],
                enabled: true,
            },
        )
        .await
        .unwrap();
    let secret = &created.secret;
    assert!(
        secret.starts_with("whsec_") && secret.len() == 6 + 64,
        "{secret}"
    );
    assert!(!format!("{created:?}").contains(&secret[6..]));
    let endpoint = &created.endpoint;
    assert_eq!(
        endpoint.event_types,
        [WebhookEventType::QuoteSent, WebhookEventType::QuoteCreated]
    );
    assert!(endpoint.enabled);
    assert_eq!(endpoint.tenant_id, *t1);
    let id = &endpoint.id;
    assert_eq!(&store.webhook_endpoint(t1, id).await.unwrap(), endpoint);
    assert_eq!(
        store
            .webhook_endpoint(t1, &id.to_uppercase())
            .await
            .unwrap(),
        *endpoint
    );
    let listed = store.webhook_endpoints(t1).await.unwrap();
    assert_eq!(listed.len(), 1);
    assert_eq!(&listed[0], endpoint);
    assert!(store.webhook_endpoints(t2).await.unwrap().is_empty());

    // Another tenant's id is no different from one that does not exist.
    let gone = (Record::WebhookEndpoint, id.clone());
    assert_eq!(not_found(store.webhook_endpoint(t2, id).await), gone);
    let change = WebhookEndpointChange {
        enabled: Some(false),
        ..Default::default()
    };
    assert_eq!(
        not_found(store.update_webhook_endpoint(t2, id, &change).await),
        gone
    );
    assert_eq!(not_found(store.rotate_webhook_secret(t2, id).await), gone);
    assert_eq!(not_found(store.deliveries(t2, id, page(1, 10)).await), gone);
    assert_eq!(not_found(store.redeliver(t2, id, "x").await), gone);
    assert_eq!(not_found(store.delete_webhook_endpoint(t2, id).await), gone);
    assert_eq!(store.webhook_endpoint(t1, id).await.unwrap(), *endpoint);
}

on_both!(an_endpoint_changes_rotates_its_secret_and_goes_with_its_deliveries);
async fn an_endpoint_changes_rotates_its_secret_and_goes_with_its_deliveries(backend: Backend) {
    let demo = demo(backend).await;
    let t1 = &demo.harbour.id;
    let store = &demo.store;
    let created = store
        .create_webhook_endpoint(
            t1,
            &NewWebhookEndpoint {
                url: "https://example.com/hook".to_owned(),
                event_types: vec!["quote.sent".to_owned(), "quote.created".to_owned()],
                enabled: true,
            },
        )
        .await
        .unwrap();
    let (endpoint, secret) = (&created.endpoint, &created.secret);
    let id = &endpoint.id;
    let gone = (Record::WebhookEndpoint, id.clone());

    // A change: each field given is checked; the others stay.
    let bad_change = WebhookEndpointChange {
        url: Some("https://".to_owned()),
        event_types: Some(Vec::new()),
        enabled: None,
    };
    assert_eq!(
        paths(store.update_webhook_endpoint(t1, id, &bad_change).await),
        ["url", "eventTypes"]
    );
    let changed = store
        .update_webhook_endpoint(
            t1,
            id,
            &WebhookEndpointChange {
                url: Some("http://receiver.test:8080/x".to_owned()),
                enabled: Some(false),
                ..Default::default()
            },
        )
        .await
        .unwrap();
    assert_eq!(changed.url, "http://receiver.test:8080/x");
    assert!(!changed.enabled);
    assert_eq!(changed.event_types, endpoint.event_types);
    assert_eq!(changed.created_at, endpoint.created_at);
    let changed = store
        .update_webhook_endpoint(
            t1,
            id,
            &WebhookEndpointChange {
                event_types: Some(vec!["quote.saved".to_owned()]),
                enabled: Some(true),
                ..Default::default()
            },
        )
        .await
        .unwrap();
    assert_eq!(changed.event_types, [WebhookEventType::QuoteSaved]);
    assert!(changed.enabled);
    assert_eq!(changed.url, "http://receiver.test:8080/x");

    let rotated = store.rotate_webhook_secret(t1, id).await.unwrap();
    assert_ne!(rotated.secret, *secret);
    assert!(rotated.secret.starts_with("whsec_"));

    // Deleting it takes its deliveries with it.
    let draft = new_draft(&demo).await;
    demo.store
        .save_lines(
            t1,
            &draft.header.id,
            vec![line(1, "1", "1")],
            BTreeMap::new(),
            &Conditions::default(),
            &by(),
        )
        .await
        .unwrap();
    assert_eq!(log(&demo, t1, id).await.len(), 1);
    store.delete_webhook_endpoint(t1, id).await.unwrap();
    assert_eq!(not_found(store.webhook_endpoint(t1, id).await), gone);
    assert_eq!(not_found(store.delete_webhook_endpoint(t1, id).await), gone);
    let left: i64 = raw(&demo.db)
        .await
        .fetch_scalar("SELECT COUNT(*) FROM webhook_deliveries")
        .await;
    assert_eq!(left, 0);
}

on_both!(a_delivery_that_keeps_failing_is_tried_four_times_then_failed);
async fn a_delivery_that_keeps_failing_is_tried_four_times_then_failed(backend: Backend) {
    let demo = demo(backend).await;
    let t1 = &demo.harbour.id;
    let (every, secret) = endpoint(&demo.store, t1, &["quote.created"], true).await;
    new_draft(&demo).await;
    for attempt in 0..MAX_ATTEMPTS {
        let claimed = claim(&demo.store).await;
        assert_eq!(claimed.len(), 1, "attempt {attempt}");
        let delivery = &claimed[0];
        assert_eq!(delivery.attempts, attempt);
        assert_eq!(delivery.url, "http://127.0.0.1:9/hook");
        assert_eq!(delivery.secret, secret);
        assert!(!format!("{delivery:?}").contains(&secret[6..]));
        // Leased: no other claim takes it meanwhile.
        assert!(claim(&demo.store).await.is_empty());
        let outcome = if attempt % 2 == 0 {
            failed(500, 0)
        } else {
            DeliveryOutcome::Failed {
                status: None,
                error: Some("timed out after 10 s".to_owned()),
                retry_in_secs: 0,
            }
        };
        let now = demo
            .store
            .finish_delivery(&delivery.id, &outcome)
            .await
            .unwrap();
        let expected = if attempt + 1 < MAX_ATTEMPTS {
            WebhookDeliveryStatus::Pending
        } else {
            WebhookDeliveryStatus::Failed
        };
        assert_eq!(now, Some(expected), "attempt {attempt}");
        let logged = &log(&demo, t1, &every).await[0];
        assert_eq!(logged.attempts, attempt + 1);
        assert_eq!(logged.status, expected);
        if attempt % 2 == 0 {
            assert_eq!(
                (logged.last_status, logged.last_error.as_deref()),
                (Some(500), None)
            );
        } else {
            assert_eq!(
                (logged.last_status, logged.last_error.as_deref()),
                (None, Some("timed out after 10 s"))
            );
        }
    }
    assert!(claim(&demo.store).await.is_empty());
    let logged = &log(&demo, t1, &every).await[0];
    assert_eq!(logged.next_attempt_at, None);
    assert_eq!(logged.delivered_at, None);
    // Finishing it again changes nothing.
    assert_eq!(
        demo.store
            .finish_delivery(&logged.id, &failed(500, 0))
            .await
            .unwrap(),
        None
    );
    assert_eq!(log(&demo, t1, &every).await[0].attempts, MAX_ATTEMPTS);
}

on_both!(a_2xx_delivers_and_a_back_off_makes_the_next_attempt_wait);
async fn a_2xx_delivers_and_a_back_off_makes_the_next_attempt_wait(backend: Backend) {
    let demo = demo(backend).await;
    let t1 = &demo.harbour.id;
    let (every, _) = endpoint(&demo.store, t1, &["quote.created"], true).await;
    new_draft(&demo).await;
    let claimed = claim(&demo.store).await;
    let id = &claimed[0].id;
    assert_eq!(
        demo.store
            .finish_delivery(id, &failed(503, 3600))
            .await
            .unwrap(),
        Some(WebhookDeliveryStatus::Pending)
    );
    let waiting = &log(&demo, t1, &every).await[0];
    let due = waiting.next_attempt_at.unwrap();
    assert!(
        due >= waiting.created_at + 3600,
        "{due} {}",
        waiting.created_at
    );
    assert!(claim(&demo.store).await.is_empty(), "not due for an hour");
    raw(&demo.db)
        .await
        .execute("UPDATE webhook_deliveries SET next_attempt_at = next_attempt_at - 3600")
        .await;
    let again = claim(&demo.store).await;
    assert_eq!((again.len(), again[0].attempts), (1, 1));
    assert_eq!(
        demo.store
            .finish_delivery(id, &DeliveryOutcome::Delivered { status: 204 })
            .await
            .unwrap(),
        Some(WebhookDeliveryStatus::Delivered)
    );
    let delivered = &log(&demo, t1, &every).await[0];
    assert_eq!(delivered.status, WebhookDeliveryStatus::Delivered);
    assert_eq!((delivered.attempts, delivered.last_status), (2, Some(204)));
    assert_eq!(delivered.last_error, None);
    assert_eq!(delivered.next_attempt_at, None);
    assert!(delivered.delivered_at.is_some());
    assert!(claim(&demo.store).await.is_empty());
    assert_eq!(
        demo.store.delivery(t1, &every, id).await.unwrap(),
        *delivered
    );
}

on_both!(a_claimed_delivery_is_claimed_again_once_its_lease_ends);
async fn a_claimed_delivery_is_claimed_again_once_its_lease_ends(backend: Backend) {
    let demo = demo(backend).await;
    let t1 = &demo.harbour.id;
    endpoint(&demo.store, t1, &ALL, true).await;
    new_draft(&demo).await;
    let first = claim(&demo.store).await;
    assert_eq!(first.len(), 1);
    // Another process's store sees the lease too.
    let other = demo.db.open().await;
    assert!(claim(&other).await.is_empty());
    // The worker died: once the lease is over, the next claim takes it, as it was.
    raw(&demo.db)
        .await
        .execute("UPDATE webhook_deliveries SET lease_until = lease_until - 61")
        .await;
    let again = claim(&other).await;
    assert_eq!(again.len(), 1);
    assert_eq!(
        (
            &again[0].id,
            &again[0].event_id,
            &again[0].payload,
            again[0].attempts
        ),
        (&first[0].id, &first[0].event_id, &first[0].payload, 0)
    );
    assert!(again[0].lease_until >= first[0].lease_until - 61);
    assert!(claim(&demo.store).await.is_empty());
    // A claim takes at most `limit`, oldest due first.
    let (t1, store) = (&demo.harbour.id, &demo.store);
    for _ in 0..3 {
        let body = simple_rest_body(&demo, &demo.harbour).await;
        store
            .create_quote(t1, &rest(body), None, &by())
            .await
            .unwrap();
    }
    assert_eq!(store.claim_deliveries(2, 60).await.unwrap().len(), 2);
    assert_eq!(store.claim_deliveries(2, 60).await.unwrap().len(), 1);
    assert!(store.claim_deliveries(0, 60).await.unwrap().is_empty());
}

on_both!(a_redelivery_is_a_new_delivery_of_the_same_event);
async fn a_redelivery_is_a_new_delivery_of_the_same_event(backend: Backend) {
    let demo = demo(backend).await;
    let t1 = &demo.harbour.id;
    let (every, _) = endpoint(&demo.store, t1, &ALL, true).await;
    new_draft(&demo).await;
    let first = claim(&demo.store).await.remove(0);
    demo.store
        .finish_delivery(&first.id, &DeliveryOutcome::Delivered { status: 200 })
        .await
        .unwrap();
    let again = demo.store.redeliver(t1, &every, &first.id).await.unwrap();
    assert_ne!(again.id, first.id);
    assert_eq!(again.event_id, first.event_id);
    assert_eq!(again.event_type, WebhookEventType::QuoteCreated);
    assert_eq!(
        (again.status, again.attempts, again.last_status),
        (WebhookDeliveryStatus::Pending, 0, None)
    );
    let logged = log(&demo, t1, &every).await;
    assert_eq!(logged.len(), 2);
    assert_eq!(logged[0], again, "newest first");
    assert_eq!(logged[1].status, WebhookDeliveryStatus::Delivered);
    let claimed = claim(&demo.store).await;
    assert_eq!(claimed.len(), 1);
    assert_eq!(
        (&claimed[0].id, &claimed[0].event_id, &claimed[0].payload),
        (&again.id, &first.event_id, &first.payload)
    );
    // Only a delivery of that endpoint.
    let (elsewhere, _) = endpoint(&demo.store, t1, &ALL, true).await;
    assert_eq!(
        not_found(demo.store.redeliver(t1, &elsewhere, &first.id).await),
        (Record::WebhookDelivery, first.id.clone())
    );
    let unknown = "00000000-0000-4000-8000-000000000000";
    assert_eq!(
        not_found(demo.store.redeliver(t1, unknown, &first.id).await),
        (Record::WebhookEndpoint, unknown.to_owned())
    );
}

on_both!(a_rotated_secret_signs_the_deliveries_claimed_after_it);
async fn a_rotated_secret_signs_the_deliveries_claimed_after_it(backend: Backend) {
    let demo = demo(backend).await;
    let t1 = &demo.harbour.id;
    let (every, old) = endpoint(&demo.store, t1, &ALL, true).await;
    new_draft(&demo).await;
    let first = claim(&demo.store).await.remove(0);
    assert_eq!(first.secret, old);
    demo.store
        .finish_delivery(&first.id, &failed(500, 0))
        .await
        .unwrap();
    let new = demo
        .store
        .rotate_webhook_secret(t1, &every)
        .await
        .unwrap()
        .secret;
    new_draft(&demo).await;
    let claimed = claim(&demo.store).await;
    assert_eq!(claimed.len(), 2);
    assert!(
        claimed.iter().all(|c| c.secret == new),
        "the retry and the new event"
    );
}

on_both!(a_handed_back_delivery_is_claimed_at_once_by_another_worker);
async fn a_handed_back_delivery_is_claimed_at_once_by_another_worker(backend: Backend) {
    let demo = demo(backend).await;
    let t1 = &demo.harbour.id;
    let (every, _) = endpoint(&demo.store, t1, &ALL, true).await;
    new_draft(&demo).await;
    let first = claim(&demo.store).await.remove(0);
    // Another process's worker finds nothing while the lease holds (a minute)...
    let other = demo.db.open().await;
    assert!(claim(&other).await.is_empty());
    // ...and the delivery at once when the first worker hands it back, unsent: no attempt is
    // counted, and it carries what it carried.
    assert!(
        demo.store
            .hand_back_delivery(&first.id, first.lease_until)
            .await
            .unwrap()
    );
    let again = claim(&other).await;
    assert_eq!(again.len(), 1, "{again:?}");
    assert_eq!(
        (
            &again[0].id,
            &again[0].event_id,
            &again[0].payload,
            again[0].attempts
        ),
        (&first.id, &first.event_id, &first.payload, 0)
    );
    let logged = &log(&demo, t1, &every).await[0];
    assert_eq!(
        (logged.status, logged.attempts),
        (WebhookDeliveryStatus::Pending, 0)
    );
    // A lease that is not the one the delivery has now is not handed back: the other worker
    // keeps it.
    assert!(
        !demo
            .store
            .hand_back_delivery(&first.id, again[0].lease_until - 61)
            .await
            .unwrap()
    );
    assert!(claim(&demo.store).await.is_empty());
    // Nor is a delivery that is done.
    other
        .finish_delivery(&again[0].id, &DeliveryOutcome::Delivered { status: 200 })
        .await
        .unwrap();
    assert!(
        !other
            .hand_back_delivery(&again[0].id, again[0].lease_until)
            .await
            .unwrap()
    );
    assert!(claim(&demo.store).await.is_empty());
    assert_eq!(
        log(&demo, t1, &every).await[0].status,
        WebhookDeliveryStatus::Delivered
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn workers_of_two_processes_claiming_at_once_never_claim_one_delivery_twice() {
    const DELIVERIES: usize = 400;
    let demo = demo(Backend::Postgres).await;
    let t1 = &demo.harbour.id;
    let (every, _) = endpoint(&demo.store, t1, &ALL, true).await;
    raw(&demo.db)
        .await
        .execute(&format!(
            "INSERT INTO webhook_deliveries (id, tenant_id, endpoint_id, event_id, event_type, \
             payload, created_at, status, attempts, next_attempt_at) \
             SELECT 'd-' || i, '{t1}', '{every}', 'evt_' || i, 'quote.created', '{{}}', 0, \
             'pending', 0, 0 FROM generate_series(1, {DELIVERIES}) AS i"
        ))
        .await;
    // Rows another transaction holds are passed over, not waited for.
    let Fresh::Postgres(database) = &demo.db else {
        unreachable!("a PostgreSQL database")
    };
    let mut holder = PgConnection::connect(&database.url()).await.unwrap();
    sqlx::query("BEGIN").execute(&mut holder).await.unwrap();
    sqlx::query(
        "SELECT id FROM webhook_deliveries ORDER BY next_attempt_at, rowid LIMIT 10 FOR UPDATE",
    )
    .execute(&mut holder)
    .await
    .unwrap();
    let passed_over = tokio::time::timeout(
        std::time::Duration::from_secs(5),
        demo.store.claim_deliveries(20, 0),
    )
    .await
    .expect("a claim does not wait for rows another transaction holds")
    .unwrap();
    let ids: Vec<&str> = passed_over.iter().map(|c| c.id.as_str()).collect();
    let expected: Vec<String> = (11..=30).map(|i| format!("d-{i}")).collect();
    assert_eq!(ids, expected);
    sqlx::query("COMMIT").execute(&mut holder).await.unwrap();
    // Those 20 were leased for 0 s: due again now, with the rest.
    let other = demo.db.open().await;
    let workers: Vec<_> = [demo.store.clone(), other.clone()]
        .into_iter()
        .cycle()
        .take(6)
        .map(|store| {
            tokio::spawn(async move {
                let mut mine = Vec::new();
                loop {
                    let claimed = store.claim_deliveries(7, 60).await.unwrap();
                    if claimed.is_empty() {
                        return mine;
                    }
                    mine.extend(claimed.into_iter().map(|c| c.id));
                }
            })
        })
        .collect();
    let mut all = Vec::new();
    for worker in workers {
        all.extend(worker.await.unwrap());
    }
    let distinct: BTreeSet<&String> = all.iter().collect();
    assert_eq!(distinct.len(), all.len(), "a delivery was claimed twice");
    assert_eq!(all.len(), DELIVERIES, "every delivery was claimed");
}
