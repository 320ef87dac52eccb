//! The keys identity tokens are signed with: made once, rotated (published a cache age before
//! they sign, or at once), published for a token's lifetime after they stop signing.

use toolbridge_protocol::identity::{JWKS_MAX_AGE_SECS, TOKEN_LIFETIME_SECS};
use toolbridge_store::Rotation;

use crate::common::{Backend, Fresh, empty, raw};

/// A moment to start from, in Unix seconds.
const T0: i64 = 1_800_000_000;

fn lifetime() -> i64 {
    i64::try_from(TOKEN_LIFETIME_SECS).unwrap()
}

fn max_age() -> i64 {
    i64::try_from(JWKS_MAX_AGE_SECS).unwrap()
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

on_both!(a_rotation_publishes_the_new_key_first_and_signs_with_it_once_caches_expired);
async fn a_rotation_publishes_the_new_key_first_and_signs_with_it_once_caches_expired(
    backend: Backend,
) {
    let (store, db) = empty(backend).await;
    let first = store.signing_key(T0).await.unwrap();
    let rotated = store
        .rotate_signing_key(T0 + 10, Rotation::Staged)
        .await
        .unwrap();
    let second = rotated.key;
    assert_ne!(second.kid, first.kid);
    let handover = T0 + 10 + max_age();
    assert_eq!(rotated.signs_from, handover);
    let at = |now| {
        let store = store.clone();
        async move { kids(&store.published_signing_keys(now).await.unwrap()) }
    };
    let signer = |now| {
        let store = store.clone();
        async move { store.signing_key(now).await.unwrap().kid }
    };
    // Published at once, while the first key signs on until every key set cached before the
    // rotation has expired.
    assert_eq!(at(T0 + 10).await, [second.kid.clone(), first.kid.clone()]);
    assert_eq!(signer(T0 + 10).await, first.kid);
    assert_eq!(signer(handover - 1).await, first.kid);
    assert_eq!(store.signing_key(handover).await.unwrap(), second);
    // The first stays published until every token it signed has expired; then only the new one.
    assert_eq!(
        at(handover + lifetime()).await,
        [second.kid.clone(), first.kid.clone()]
    );
    assert_eq!(
        at(handover + lifetime() + 1).await,
        std::slice::from_ref(&second.kid)
    );
    let listed = store.signing_keys(T0 + 10).await.unwrap();
    let summary: Vec<(&str, Option<i64>, bool, bool)> = listed
        .iter()
        .map(|key| (key.kid.as_str(), key.retired_at, key.signs, key.published))
        .collect();
    assert_eq!(
        summary,
        [
            (second.kid.as_str(), None, false, true),
            (first.kid.as_str(), Some(handover), true, true)
        ]
    );
    let listed = store.signing_keys(handover + lifetime() + 1).await.unwrap();
    let summary: Vec<(&str, bool, bool)> = listed
        .iter()
        .map(|key| (key.kid.as_str(), key.signs, key.published))
        .collect();
    assert_eq!(
        summary,
        [
            (second.kid.as_str(), true, true),
            (first.kid.as_str(), false, false)
        ]
    );
    // The next rotation deletes the key no token can need any more.
    let later = handover + lifetime() + 10;
    let third = store
        .rotate_signing_key(later, Rotation::Staged)
        .await
        .unwrap()
        .key;
    let kept: Vec<String> = store
        .signing_keys(later)
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

on_both!(a_rotation_during_a_handover_waits_its_turn_and_one_at_once_signs_now);
async fn a_rotation_during_a_handover_waits_its_turn_and_one_at_once_signs_now(backend: Backend) {
    let (store, _db) = empty(backend).await;
    // On a database without a key, a rotation's key signs at once: there is none to wait for.
    let first = store
        .rotate_signing_key(T0, Rotation::Staged)
        .await
        .unwrap();
    assert_eq!(first.signs_from, T0);
    let first = first.key;
    assert_eq!(store.signing_key(T0).await.unwrap(), first);

    let second = store
        .rotate_signing_key(T0 + 1, Rotation::Staged)
        .await
        .unwrap()
        .key;
    let third = store
        .rotate_signing_key(T0 + 100, Rotation::Staged)
        .await
        .unwrap();
    assert_eq!(third.signs_from, T0 + 100 + max_age());
    let third = third.key;
    let signer = |now| {
        let store = store.clone();
        async move { store.signing_key(now).await.unwrap().kid }
    };
    // Each key signs in its turn, each published a full cache age before.
    assert_eq!(signer(T0 + 100).await, first.kid);
    assert_eq!(signer(T0 + max_age()).await, first.kid);
    assert_eq!(signer(T0 + 1 + max_age()).await, second.kid);
    assert_eq!(signer(T0 + 99 + max_age()).await, second.kid);
    assert_eq!(signer(T0 + 100 + max_age()).await, third.kid);
    let published = kids(&store.published_signing_keys(T0 + 100).await.unwrap());
    assert_eq!(
        published,
        [third.kid.clone(), second.kid.clone(), first.kid.clone()]
    );

    // At once: the new key signs now, and every other stops now (still published for the
    // tokens it signed).
    let now = T0 + 150;
    let fourth = store
        .rotate_signing_key(now, Rotation::AtOnce)
        .await
        .unwrap();
    assert_eq!(fourth.signs_from, now);
    assert_eq!(store.signing_key(now).await.unwrap(), fourth.key);
    let listed = store.signing_keys(now).await.unwrap();
    assert!(
        listed
            .iter()
            .filter(|key| key.kid != fourth.key.kid)
            .all(|key| key.retired_at == Some(now) && !key.signs && key.published),
        "{listed:?}"
    );
    assert_eq!(
        kids(
            &store
                .published_signing_keys(now + lifetime() + 1)
                .await
                .unwrap()
        ),
        std::slice::from_ref(&fourth.key.kid)
    );
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

/// Two rotations at once leave one newest key, the old key signing until the handover and one
/// of theirs after it, and every key published.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn two_rotations_at_once_leave_one_newest_key() {
    let db = Fresh::new(Backend::Postgres);
    let (a, b) = (db.open().await, db.open().await);
    let first = a.signing_key(T0).await.unwrap();
    let (one, two) = tokio::join!(
        a.rotate_signing_key(T0 + 1, Rotation::Staged),
        b.rotate_signing_key(T0 + 1, Rotation::Staged)
    );
    let (one, two) = (one.unwrap().key, two.unwrap().key);
    assert_eq!(a.signing_key(T0 + 2).await.unwrap().kid, first.kid);
    let after = a.signing_key(T0 + 1 + max_age()).await.unwrap();
    assert!(after == one || after == two, "{after:?}");
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
