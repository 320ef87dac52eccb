//! Secrets at rest: sealed with the store's secrets key when it has one, read back as given, and
//! a database whose secrets need a key refused without it.

use serde_json::json;
use toolbridge_store::{Error, NewWebhookEndpoint, SecretsAtRest, SecretsKey, Store};

use crate::common::{Backend, Demo, demo, raw};
use crate::quotes::new_draft;
use crate::tools::{FILES, declaring};

const API_KEY: &str = "sk_live_a_vendor_api_key";
const NOW: i64 = 1_900_000_000;

fn new_key() -> SecretsKey {
    SecretsKey::from_hex(&SecretsKey::generate()).unwrap()
}

/// What the test writes: a tool's secret setting, a webhook endpoint (its secret) and the first
/// signing key (its private half, PKCS#8 DER).
struct Written {
    webhook_secret: String,
    private_key: Vec<u8>,
}

async fn write_secrets(demo: &Demo, store: &Store) -> Written {
    let settings = json!([
        {"key": "apiKey", "label": "API key", "type": "string", "secret": true},
        {"key": "password", "label": "Password", "type": "string", "secret": true}
    ]);
    store
        .install_tool("vendor", &declaring("1.0.0", &settings, &[]), &FILES)
        .await
        .unwrap();
    store
        .set_tool_settings(
            &demo.harbour.id,
            "vendor",
            &json!({"apiKey": API_KEY, "password": "a vendor password"}),
        )
        .await
        .unwrap()
        .unwrap();
    let endpoint = store
        .create_webhook_endpoint(
            &demo.harbour.id,
            &NewWebhookEndpoint {
                url: "http://127.0.0.1:9/hook".to_owned(),
                event_types: vec!["quote.created".to_owned()],
                enabled: true,
            },
        )
        .await
        .unwrap();
    let signing = store.signing_key(NOW).await.unwrap();
    Written {
        webhook_secret: endpoint.secret,
        private_key: signing.private_key.pkcs8_der().to_vec(),
    }
}

/// The secrets as the database holds them: each table's stored secret (text as bytes) and the
/// key that sealed it.
async fn stored(demo: &Demo) -> Vec<(Vec<u8>, Option<String>)> {
    let raw = raw(&demo.db).await;
    let mut rows: Vec<(String, Option<String>)> = raw
        .fetch_rows("SELECT value, sealed_with FROM tool_secrets ORDER BY setting_key")
        .await;
    rows.extend(
        raw.fetch_rows::<(String, Option<String>)>(
            "SELECT secret, sealed_with FROM webhook_endpoints",
        )
        .await,
    );
    let mut stored: Vec<(Vec<u8>, Option<String>)> = rows
        .into_iter()
        .map(|(text, sealed_with)| (text.into_bytes(), sealed_with))
        .collect();
    stored.extend(
        raw.fetch_rows::<(Vec<u8>, Option<String>)>(
            "SELECT private_key, sealed_with FROM signing_keys",
        )
        .await,
    );
    stored
}

/// The secrets as the store reads them back.
async fn read_back(demo: &Demo, store: &Store) -> (String, String, Vec<u8>) {
    let secrets = store
        .tool_secrets(&demo.harbour.id, "vendor")
        .await
        .unwrap();
    new_draft(demo).await;
    let claimed = store.claim_deliveries(10, 60).await.unwrap();
    assert_eq!(claimed.len(), 1);
    let signing = store.signing_key(NOW).await.unwrap();
    (
        secrets["apiKey"].clone(),
        claimed[0].secret.clone(),
        signing.private_key.pkcs8_der().to_vec(),
    )
}

fn sealing_refusal(result: Result<Store, Error>) -> String {
    match result {
        Err(error @ Error::Sealing(_)) => error.to_string(),
        other => panic!("not refused for its secrets: {other:?}"),
    }
}

on_both!(secrets_written_with_a_key_are_sealed_and_read_back_as_given);
async fn secrets_written_with_a_key_are_sealed_and_read_back_as_given(backend: Backend) {
    let demo = demo(backend).await;
    let key = new_key();
    let id = key.id().to_owned();
    let store = demo
        .store
        .clone()
        .with_secrets_key(Some(key))
        .await
        .unwrap();
    let written = write_secrets(&demo, &store).await;

    let stored = stored(&demo).await;
    assert_eq!(stored.len(), 4);
    for (value, sealed_with) in &stored {
        assert_eq!(sealed_with.as_deref(), Some(id.as_str()));
        for secret in [API_KEY.as_bytes(), written.webhook_secret.as_bytes()] {
            assert!(!value.windows(secret.len()).any(|window| window == secret));
        }
        assert_ne!(value, &written.private_key);
    }
    assert_eq!(
        store.secrets_at_rest().await.unwrap(),
        SecretsAtRest {
            plain: 0,
            sealed: [(id.clone(), 4)].into()
        }
    );
    let (api_key, webhook_secret, private_key) = read_back(&demo, &store).await;
    assert_eq!(api_key, API_KEY);
    assert_eq!(webhook_secret, written.webhook_secret);
    assert_eq!(private_key, written.private_key);

    // Another command or instance without the key, or with another, is refused, saying which.
    let without = sealing_refusal(demo.db.open().await.with_secrets_key(None).await);
    assert!(
        without.contains(&format!("holds 4 secrets sealed with key {id}"))
            && without.contains("no secrets key"),
        "{without}"
    );
    let other = new_key();
    let other_id = other.id().to_owned();
    let with_other = sealing_refusal(demo.db.open().await.with_secrets_key(Some(other)).await);
    assert!(
        with_other.contains(&id) && with_other.contains(&other_id),
        "{with_other}"
    );
    // A store that skipped the check (the library's plain `connect`) still cannot read them.
    let unchecked = demo.db.open().await;
    let refused = unchecked
        .tool_secrets(&demo.harbour.id, "vendor")
        .await
        .unwrap_err()
        .to_string();
    assert!(refused.contains("no secrets key"), "{refused}");

    // A sealed value copied into another row does not open there.
    raw(&demo.db)
        .await
        .execute(
            "UPDATE tool_secrets SET value = \
             (SELECT value FROM tool_secrets WHERE setting_key = 'apiKey') \
             WHERE setting_key = 'password'",
        )
        .await;
    let moved = store
        .tool_secrets(&demo.harbour.id, "vendor")
        .await
        .unwrap_err()
        .to_string();
    assert!(moved.contains("vendor, password)"), "{moved}");
}

on_both!(secrets_kept_as_given_are_sealed_once_a_key_is_given);
async fn secrets_kept_as_given_are_sealed_once_a_key_is_given(backend: Backend) {
    let demo = demo(backend).await;
    let written = write_secrets(&demo, &demo.store).await;
    let as_given = stored(&demo).await;
    assert!(
        as_given
            .iter()
            .all(|(_, sealed_with)| sealed_with.is_none())
    );
    assert_eq!(as_given[0].0, API_KEY.as_bytes());
    assert_eq!(demo.store.secrets_at_rest().await.unwrap().plain, 4);
    // Without a key nothing changes.
    let store = demo.db.open().await.with_secrets_key(None).await.unwrap();
    assert_eq!(stored(&demo).await, as_given);

    let key = new_key();
    let id = key.id().to_owned();
    let store = store.with_secrets_key(Some(key)).await.unwrap();
    let sealed = stored(&demo).await;
    assert!(
        sealed
            .iter()
            .all(|(_, sealed_with)| sealed_with.as_deref() == Some(id.as_str()))
    );
    assert!(
        sealed
            .iter()
            .zip(&as_given)
            .all(|((sealed, _), (given, _))| sealed != given)
    );
    let (api_key, webhook_secret, private_key) = read_back(&demo, &store).await;
    assert_eq!(api_key, API_KEY);
    assert_eq!(webhook_secret, written.webhook_secret);
    assert_eq!(private_key, written.private_key);
}

on_both!(a_new_key_reseals_every_secret_and_the_old_one_opens_none);
async fn a_new_key_reseals_every_secret_and_the_old_one_opens_none(backend: Backend) {
    let demo = demo(backend).await;
    let old_text = SecretsKey::generate();
    let old = || SecretsKey::from_hex(&old_text).unwrap();
    let old_id = old().id().to_owned();
    let store = demo
        .store
        .clone()
        .with_secrets_key(Some(old()))
        .await
        .unwrap();
    let written = write_secrets(&demo, &store).await;
    // One more kept as given (a row from before the key), which the rotation seals too.
    raw(&demo.db)
        .await
        .execute(
            "UPDATE tool_secrets SET value = 'as given', sealed_with = NULL \
             WHERE setting_key = 'password'",
        )
        .await;

    let same = SecretsKey::from_hex(&SecretsKey::generate()).unwrap();
    let refused = demo
        .db
        .open()
        .await
        .rotate_secrets_key(same)
        .await
        .unwrap_err()
        .to_string();
    assert!(
        refused.contains(&format!("3 secrets sealed with key {old_id}")),
        "{refused}"
    );
    let refused = store
        .clone()
        .rotate_secrets_key(old())
        .await
        .unwrap_err()
        .to_string();
    assert!(refused.contains("already"), "{refused}");
    assert_eq!(
        store.secrets_at_rest().await.unwrap(),
        SecretsAtRest {
            plain: 1,
            sealed: [(old_id.clone(), 3)].into()
        }
    );

    let new = new_key();
    let new_id = new.id().to_owned();
    let (store, sealed) = store.rotate_secrets_key(new).await.unwrap();
    assert_eq!(sealed, 4);
    assert_eq!(
        store.secrets_at_rest().await.unwrap(),
        SecretsAtRest {
            plain: 0,
            sealed: [(new_id.clone(), 4)].into()
        }
    );
    let (api_key, webhook_secret, private_key) = read_back(&demo, &store).await;
    assert_eq!(api_key, API_KEY);
    assert_eq!(webhook_secret, written.webhook_secret);
    assert_eq!(private_key, written.private_key);
    let secrets = store
        .tool_secrets(&demo.harbour.id, "vendor")
        .await
        .unwrap();
    assert_eq!(secrets["password"], "as given");
    // The old key no longer opens the database.
    let refused = sealing_refusal(demo.db.open().await.with_secrets_key(Some(old())).await);
    assert!(
        refused.contains(&format!("4 secrets sealed with key {new_id}"))
            && refused.contains(&format!("the key given is {old_id}")),
        "{refused}"
    );
}
