//! Quote versions: every change bumps one, a change made against another version is refused
//! with nothing changed, and an idempotency key makes a repeated change answer the first.

use std::collections::BTreeMap;
use std::sync::Arc;

use toolbridge_protocol::quote::QuoteDto;
use toolbridge_protocol::quote_header::HeaderChange;
use toolbridge_store::{Conditions, Error, Expected, Store, Versioned, Written};

use crate::common::{Backend, Demo, by, demo, page, paths, raw, refused, rest, simple_rest_body};
use crate::quotes::{idem, line, new_draft};

/// The quote as the store holds it now.
async fn now(demo: &Demo, id: &str) -> Versioned {
    demo.store.quote(&demo.harbour.id, id).await.unwrap()
}

/// Saves one line of `qty` into quote `id` under `conditions`.
async fn save(demo: &Demo, id: &str, qty: &str, conditions: &Conditions) -> Result<Written, Error> {
    demo.store
        .save_lines(
            &demo.harbour.id,
            id,
            vec![line(1, qty, "10")],
            BTreeMap::new(),
            conditions,
            &by(),
        )
        .await
}

/// Changes quote `id`'s expiry to `days` under `conditions`.
async fn expire_in(
    demo: &Demo,
    id: &str,
    days: u32,
    conditions: &Conditions,
) -> Result<Written, Error> {
    let change = HeaderChange {
        expiry_days: Some(days),
        ..HeaderChange::default()
    };
    demo.store
        .update_quote_header(&demo.harbour.id, id, &change, conditions, &by())
        .await
}

/// Conditions of a change made against `versions`.
fn against(versions: &[u64]) -> Conditions {
    Conditions {
        expected: Expected::OneOf(versions.to_vec()),
        idempotency: None,
    }
}

/// The version an [`Error::Changed`] says the quote is at, after checking it names `quote`.
fn changed(result: Result<Written, Error>, quote: &QuoteDto) -> u64 {
    match refused(result) {
        Error::Changed {
            quote_id,
            reference,
            version,
        } => {
            assert_eq!(quote_id, quote.header.id);
            assert_eq!(reference, quote.header.reference);
            version
        }
        other => panic!("expected a changed quote, got {other:?}"),
    }
}

on_both!(every_change_bumps_the_version_and_a_refused_one_does_not);
async fn every_change_bumps_the_version_and_a_refused_one_does_not(backend: Backend) {
    let demo = demo(backend).await;
    let t1 = &demo.harbour.id;
    let body = rest(simple_rest_body(&demo, &demo.harbour).await);
    let key = idem("key-1", "create-once", &"a".repeat(64));
    let created = demo
        .store
        .create_quote(t1, &body, Some(&key), &by())
        .await
        .unwrap();
    assert_eq!(created.version, 1);
    let id = created.quote.header.id.clone();
    assert_eq!(now(&demo, &id).await.version, 1);
    let replayed = demo
        .store
        .create_quote(t1, &body, Some(&key), &by())
        .await
        .unwrap();
    assert!(replayed.replayed);
    assert_eq!(replayed.version, 1, "a replayed create changes nothing");

    let saved = save(&demo, &id, "2", &Conditions::default()).await.unwrap();
    assert_eq!((saved.version, saved.replayed), (2, false));
    let headed = expire_in(&demo, &id, 10, &Conditions::default())
        .await
        .unwrap();
    assert_eq!((headed.version, headed.replayed), (3, false));
    assert_eq!(headed.quote.header.expiry_days, 10);

    // Refused changes leave the version where it was.
    let bad = demo
        .store
        .save_lines(
            t1,
            &id,
            vec![line(1, "0", "10")],
            BTreeMap::new(),
            &Conditions::default(),
            &by(),
        )
        .await;
    assert_eq!(paths(bad), ["lines[0].qty"]);
    assert_eq!(now(&demo, &id).await.version, 3);

    let sent = demo.store.send_quote(t1, &id, &by()).await.unwrap();
    assert_eq!(sent.version, 4);
    assert!(save(&demo, &id, "3", &Conditions::default()).await.is_err());
    assert!(demo.store.send_quote(t1, &id, &by()).await.is_err());
    assert_eq!(
        now(&demo, &id).await,
        sent,
        "the locked quote is where it was"
    );

    // The seeded quotes, made before any change, are at 1 too.
    let listed = demo.store.quotes(t1, page(1, 100)).await.unwrap();
    let seeded = listed.items.iter().find(|q| q.id != id).unwrap();
    assert_eq!(now(&demo, &seeded.id).await.version, 1);
}

on_both!(a_change_against_a_version_the_quote_no_longer_has_changes_nothing);
async fn a_change_against_a_version_the_quote_no_longer_has_changes_nothing(backend: Backend) {
    let demo = demo(backend).await;
    let draft = new_draft(&demo).await;
    let id = &draft.header.id;

    let first = save(&demo, id, "2", &against(&[1])).await.unwrap();
    assert_eq!(first.version, 2);
    // Another device saved version 2; this one still has version 1.
    assert_eq!(
        changed(save(&demo, id, "3", &against(&[1])).await, &draft),
        2
    );
    assert_eq!(
        changed(expire_in(&demo, id, 9, &against(&[1])).await, &draft),
        2
    );
    // A list names the version the quote is at, among others; an empty one names none.
    assert_eq!(
        changed(save(&demo, id, "3", &against(&[])).await, &draft),
        2
    );
    assert_eq!(
        now(&demo, id).await,
        Versioned {
            quote: first.quote,
            version: 2
        },
        "nothing was changed"
    );

    let second = save(&demo, id, "3", &against(&[1, 2])).await.unwrap();
    assert_eq!(second.version, 3);
    let third = expire_in(&demo, id, 9, &against(&[3])).await.unwrap();
    assert_eq!(third.version, 4);
    // Any version (no If-Match, or `*`).
    let fourth = save(&demo, id, "4", &Conditions::default()).await.unwrap();
    assert_eq!(fourth.version, 5);

    // A quote that cannot change says so before the version is looked at.
    demo.store
        .send_quote(&demo.harbour.id, id, &by())
        .await
        .unwrap();
    assert!(matches!(
        refused(save(&demo, id, "5", &against(&[1])).await),
        Error::QuoteLocked { .. }
    ));
}

on_both!(a_repeated_change_with_its_idempotency_key_answers_the_first_and_changes_nothing);
async fn a_repeated_change_with_its_idempotency_key_answers_the_first_and_changes_nothing(
    backend: Backend,
) {
    let demo = demo(backend).await;
    let t1 = &demo.harbour.id;
    let draft = new_draft(&demo).await;
    let id = &draft.header.id;
    let keyed = |key: &str, hash: char, versions: Option<&[u64]>| Conditions {
        expected: versions.map_or(Expected::Any, |versions| Expected::OneOf(versions.to_vec())),
        idempotency: Some(idem("key-1", key, &hash.to_string().repeat(64))),
    };

    // The first attempt landed, and its answer was lost: the retry, made against the version
    // before it, gets the first answer, not a refusal of its own change.
    let first = save(&demo, id, "2", &keyed("save-1", 'a', Some(&[1])))
        .await
        .unwrap();
    assert_eq!((first.version, first.replayed), (2, false));
    let again = save(&demo, id, "2", &keyed("save-1", 'a', Some(&[1])))
        .await
        .unwrap();
    assert!(again.replayed);
    assert_eq!(again.version, 2);
    assert_eq!(again.quote, first.quote);
    assert_eq!(now(&demo, id).await.version, 2, "saved once");

    // The same key with another body, for another kind of change, for another quote, or for
    // a new quote: refused.
    let reused = |result: Result<Written, Error>| {
        assert!(
            matches!(refused(result), Error::IdempotencyKeyReused),
            "the key was reused"
        );
    };
    reused(save(&demo, id, "3", &keyed("save-1", 'b', Some(&[2]))).await);
    reused(expire_in(&demo, id, 9, &keyed("save-1", 'a', None)).await);
    let other = new_draft(&demo).await;
    reused(save(&demo, &other.header.id, "2", &keyed("save-1", 'a', None)).await);
    let body = rest(simple_rest_body(&demo, &demo.harbour).await);
    let create_key = idem("key-1", "save-1", &"a".repeat(64));
    assert!(matches!(
        refused(
            demo.store
                .create_quote(t1, &body, Some(&create_key), &by())
                .await
        ),
        Error::IdempotencyKeyReused
    ));
    // …and a key first used for a create is refused for a change.
    let created_with = idem("key-1", "create-1", &"c".repeat(64));
    demo.store
        .create_quote(t1, &body, Some(&created_with), &by())
        .await
        .unwrap();
    reused(save(&demo, id, "2", &keyed("create-1", 'c', None)).await);
    assert_eq!(now(&demo, id).await.version, 2);

    // Once the quote changed again, the first answer is gone: a retry made against a version
    // is refused as that version's change would be; one without a condition answers the quote
    // as it is now.
    let later = save(&demo, id, "5", &Conditions::default()).await.unwrap();
    assert_eq!(later.version, 3);
    assert_eq!(
        changed(
            save(&demo, id, "2", &keyed("save-1", 'a', Some(&[1]))).await,
            &draft
        ),
        3
    );
    let as_now = save(&demo, id, "2", &keyed("save-1", 'a', None))
        .await
        .unwrap();
    assert!(as_now.replayed);
    assert_eq!((as_now.version, as_now.quote), (3, later.quote));

    // A refused change leaves its key free.
    assert_eq!(
        changed(
            save(&demo, id, "6", &keyed("save-2", 'd', Some(&[1]))).await,
            &draft
        ),
        3
    );
    let forced = save(&demo, id, "6", &keyed("save-2", 'd', None))
        .await
        .unwrap();
    assert_eq!((forced.version, forced.replayed), (4, false));

    // The header's changes work the same.
    let headed = expire_in(&demo, id, 12, &keyed("head-1", 'e', Some(&[4])))
        .await
        .unwrap();
    assert_eq!((headed.version, headed.replayed), (5, false));
    let again = expire_in(&demo, id, 12, &keyed("head-1", 'e', Some(&[4])))
        .await
        .unwrap();
    assert!(again.replayed);
    assert_eq!((again.version, again.quote), (5, headed.quote));
    assert_eq!(now(&demo, id).await.version, 5);

    // Keys must be 1 to 255 characters.
    assert_eq!(
        paths(save(&demo, id, "7", &keyed("", 'f', None)).await),
        ["Idempotency-Key"]
    );
}

on_both!(concurrent_repeats_of_one_change_make_it_once);
async fn concurrent_repeats_of_one_change_make_it_once(backend: Backend) {
    let demo = demo(backend).await;
    let draft = new_draft(&demo).await;
    let conditions = Arc::new(Conditions {
        expected: Expected::OneOf(vec![1]),
        idempotency: Some(idem("key-1", "once", &"f".repeat(64))),
    });
    let tasks: Vec<_> = (0..8)
        .map(|_| {
            let (store, t1, id, conditions): (Store, _, _, _) = (
                demo.store.clone(),
                demo.harbour.id.clone(),
                draft.header.id.clone(),
                conditions.clone(),
            );
            tokio::spawn(async move {
                store
                    .save_lines(
                        &t1,
                        &id,
                        vec![line(1, "2", "10")],
                        BTreeMap::new(),
                        &conditions,
                        &by(),
                    )
                    .await
            })
        })
        .collect();
    let mut results = Vec::new();
    for task in tasks {
        results.push(task.await.unwrap().unwrap());
    }
    assert_eq!(results.iter().filter(|r| !r.replayed).count(), 1);
    assert!(results.iter().all(|r| r.version == 2));
    assert_eq!(now(&demo, &draft.header.id).await.version, 2);
}

on_both!(a_key_is_remembered_for_a_day_and_then_forgotten_as_its_client_claims_another);
async fn a_key_is_remembered_for_a_day_and_then_forgotten_as_its_client_claims_another(
    backend: Backend,
) {
    let demo = demo(backend).await;
    let draft = new_draft(&demo).await;
    let id = &draft.header.id;
    let keyed = |client: &str, key: &str| Conditions {
        expected: Expected::Any,
        idempotency: Some(idem(client, key, &"a".repeat(64))),
    };
    save(&demo, id, "2", &keyed("key-1", "old")).await.unwrap();
    save(&demo, id, "2", &keyed("key-2", "other-client"))
        .await
        .unwrap();
    // Both claimed a day and an hour ago.
    let raw = raw(&demo.db).await;
    raw.execute(
        "UPDATE idempotency_keys SET created_at = '2000-01-01T00:00:00Z' \
         WHERE idem_key IN ('old', 'other-client')",
    )
    .await;

    // A new claim of key-1's forgets key-1's old key, and only that.
    save(&demo, id, "3", &keyed("key-1", "new")).await.unwrap();
    let kept: Vec<String> = raw
        .fetch_all("SELECT idem_key FROM idempotency_keys ORDER BY idem_key")
        .await;
    assert_eq!(kept, ["new", "other-client"]);
    // The forgotten key is a new request again.
    let again = save(&demo, id, "4", &keyed("key-1", "old")).await.unwrap();
    assert!(!again.replayed);
    assert_eq!(now(&demo, id).await.version, 5);
}
