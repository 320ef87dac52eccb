//! The keys identity tokens are signed with: made once, rotated, published for a token's
//! lifetime after they retire.

use toolbridge_protocol::identity::TOKEN_LIFETIME_SECS;

use crate::common::{Backend, Fresh, empty, raw};

/// A moment to start from, in Unix seconds.
const T0: i64 = 1_800_000_000;

fn lifetime() -> i64 {
    i64::try_from(TOKEN_LIFETIME_SECS).unwrap()
}

fn kids(keys: &[serde_json::Value]) -> Vec<String> {
    keys.iter()
        .map(|key| key["kid"].as_str().unwrap().to_owned())
        .collect()
}

on_both!(the_first_key_is_made_on_first_need_and_kept);
async fn the_first_key_is_made_on_first_need_and_kept(backend: Backend) {
    let (store, db) = empty(backend).await;
    assert!(store.published_signing_keys(T0).await.unwrap().is_empty());
    assert!(store.signing_keys(T0).await.unwrap().is_empty());
    let first = store.signing_key(T0).await.unwrap();
    assert_eq!(first.algorithm, "ES256");
    assert_eq!(first.created_at, T0);
    assert_eq!(first.retired_at, None);
    assert_eq!(first.public_jwk["kid"], first.kid.as_str());
    // Later calls, and another store on the same database, sign with the same key.
    assert_eq!(store.signing_key(T0 + 100).await.unwrap(), first);
    let other = db.open().await;
    assert_eq!(other.signing_key(T0 + 200).await.unwrap(), first);
    assert_eq!(
        store.published_signing_keys(T0).await.unwrap(),
        std::slice::from_ref(&first.public_jwk)
    );
    let count: i64 = raw(&db)
        .await
        .fetch_scalar("SELECT COUNT(*) FROM signing_keys")
        .await;
    assert_eq!(count, 1);
    // The private key is kept as PKCS#8, never in the published key.
    let published =
        serde_json::to_string(&store.published_signing_keys(T0).await.unwrap()).unwrap();
    assert!(!published.contains("\"d\""), "{published}");
}

on_both!(a_rotated_key_stays_published_for_a_tokens_lifetime_then_goes);
async fn a_rotated_key_stays_published_for_a_tokens_lifetime_then_goes(backend: Backend) {
    let (store, db) = empty(backend).await;
    let first = store.signing_key(T0).await.unwrap();
    let second = store.rotate_signing_key(T0 + 10).await.unwrap();
    assert_ne!(second.kid, first.kid);
    assert_eq!(store.signing_key(T0 + 11).await.unwrap(), second);
    let at = |now| {
        let store = store.clone();
        async move { kids(&store.published_signing_keys(now).await.unwrap()) }
    };
    // Until every token the first key signed has expired, both verify; then only the new one.
    assert_eq!(at(T0 + 10).await, [second.kid.clone(), first.kid.clone()]);
    assert_eq!(
        at(T0 + 10 + lifetime()).await,
        [second.kid.clone(), first.kid.clone()]
    );
    assert_eq!(
        at(T0 + 11 + lifetime()).await,
        std::slice::from_ref(&second.kid)
    );
    let listed = store.signing_keys(T0 + 11 + lifetime()).await.unwrap();
    let summary: Vec<(&str, Option<i64>, bool)> = listed
        .iter()
        .map(|key| (key.kid.as_str(), key.retired_at, key.published))
        .collect();
    assert_eq!(
        summary,
        [
            (second.kid.as_str(), None, true),
            (first.kid.as_str(), Some(T0 + 10), false)
        ]
    );
    // The next rotation deletes the key no token can need any more, and retires the second.
    let third = store
        .rotate_signing_key(T0 + 20 + lifetime())
        .await
        .unwrap();
    let kept: Vec<String> = store
        .signing_keys(T0 + 20 + lifetime())
        .await
        .unwrap()
        .into_iter()
        .map(|key| key.kid)
        .collect();
    assert_eq!(kept, [third.kid.clone(), second.kid.clone()]);
    let count: i64 = raw(&db)
        .await
        .fetch_scalar("SELECT COUNT(*) FROM signing_keys")
        .await;
    assert_eq!(count, 2);
}

on_both!(a_private_key_is_not_in_debug_output);
async fn a_private_key_is_not_in_debug_output(backend: Backend) {
    let (store, _db) = empty(backend).await;
    let key = store.signing_key(T0).await.unwrap();
    let shown = format!("{key:?}");
    assert!(shown.contains("<redacted>"), "{shown}");
    assert!(!shown.contains(&format!("{:?}", key.private_key.pkcs8_der())));
}

/// Two processes that need the first key at the same moment keep one: both sign with it.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn two_processes_making_the_first_key_at_once_keep_one() {
    for round in 0..5 {
        let db = Fresh::new(Backend::Postgres);
        let stores = [db.open().await, db.open().await, db.open().await];
        let made: Vec<_> = stores
            .iter()
            .cloned()
            .map(|store| tokio::spawn(async move { store.signing_key(T0).await }))
            .collect();
        let mut keys = Vec::new();
        for key in made {
            keys.push(key.await.unwrap().unwrap());
        }
        assert!(
            keys.iter().all(|key| *key == keys[0]),
            "round {round}: {keys:?}"
        );
        let count: i64 = raw(&db)
            .await
            .fetch_scalar("SELECT COUNT(*) FROM signing_keys")
            .await;
        assert_eq!(count, 1, "round {round}");
    }
}

/// Two rotations at once leave one active key, and each retired key still published.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn two_rotations_at_once_leave_one_active_key() {
    let db = Fresh::new(Backend::Postgres);
    let (a, b) = (db.open().await, db.open().await);
    let first = a.signing_key(T0).await.unwrap();
    let (one, two) = tokio::join!(a.rotate_signing_key(T0 + 1), b.rotate_signing_key(T0 + 1));
    let (one, two) = (one.unwrap(), two.unwrap());
    let active = a.signing_key(T0 + 2).await.unwrap();
    assert!(active == one || active == two);
    let listed = a.signing_keys(T0 + 2).await.unwrap();
    assert_eq!(
        listed.iter().filter(|key| key.retired_at.is_none()).count(),
        1
    );
    let published = kids(&a.published_signing_keys(T0 + 2).await.unwrap());
    for kid in [&first.kid, &one.kid, &two.kid] {
        assert!(published.contains(kid), "{kid} in {published:?}");
    }
}
