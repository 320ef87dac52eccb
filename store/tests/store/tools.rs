//! Installed tools: install, replace, read, enable, remove.

use serde_json::{Value, json};
use toolbridge_protocol::manifest::{Permissions, ToolManifest, ToolType};
use toolbridge_protocol::settings::{read_declarations, values_to_json};

use crate::common::{Backend, demo, empty, paths, raw};

pub(crate) fn manifest(version: &str) -> ToolManifest {
    ToolManifest {
        name: "Demo estimator".to_owned(),
        short_name: "Demo".to_owned(),
        tool_type: ToolType::QuotingExtension,
        version: version.to_owned(),
        description: "Adds demo lines.".to_owned(),
        entry: "index.html".to_owned(),
        settings: Vec::new(),
        permissions: Permissions::default(),
    }
}

/// `manifest(version)` declaring these settings and origins.
pub(crate) fn declaring(version: &str, settings: &Value, connect: &[&str]) -> ToolManifest {
    ToolManifest {
        settings: read_declarations(settings).unwrap(),
        permissions: Permissions {
            connect: connect.iter().map(|&origin| origin.to_owned()).collect(),
            identity: false,
        },
        ..manifest(version)
    }
}

fn flooring_settings() -> Value {
    json!([
        {"key": "wastePercent", "label": "Waste allowance (%)", "type": "number", "default": 10},
        {"key": "region", "label": "Region", "type": "select", "options": ["North", "South"], "required": true},
        {"key": "supplier", "label": "Default supplier", "type": "string"}
    ])
}

pub(crate) const FILES: [(&str, &[u8]); 1] = [("index.html", b"<p>x")];

on_both!(a_tool_installs_with_its_files_and_a_new_version_replaces_them_all);
async fn a_tool_installs_with_its_files_and_a_new_version_replaces_them_all(backend: Backend) {
    let (store, _db) = empty(backend).await;
    let first: [(&str, &[u8]); 2] = [("index.html", b"<p>one"), ("app.js", b"1")];
    assert_eq!(
        store
            .install_tool("demo", &manifest("1.0.0"), &first)
            .await
            .unwrap(),
        None
    );
    let tool = store.tool("demo").await.unwrap().unwrap();
    assert_eq!(tool.manifest, manifest("1.0.0"));
    assert!(tool.enabled);
    assert_eq!((tool.file_count, tool.total_bytes), (2, 7));
    let file = store.tool_file("demo", "app.js").await.unwrap().unwrap();
    assert_eq!(file.body, b"1");
    assert_eq!(
        file.sha256,
        "6b86b273ff34fce19d6b804eff5a3f5747ada4eaa22f1d49c01e52ddb7875b4b"
    );

    // Disabled stays disabled across an upgrade; the old files are gone.
    assert!(store.set_tool_enabled("demo", false).await.unwrap());
    let second: [(&str, &[u8]); 1] = [("index.html", b"<p>two")];
    let replaced = store
        .install_tool("demo", &manifest("2.0.0"), &second)
        .await
        .unwrap()
        .unwrap();
    assert_eq!(replaced.manifest.version, "1.0.0");
    let tool = store.tool("demo").await.unwrap().unwrap();
    assert_eq!(tool.manifest.version, "2.0.0");
    assert!(!tool.enabled);
    assert_eq!(tool.file_count, 1);
    assert_eq!(store.tool_file("demo", "app.js").await.unwrap(), None);
    assert_ne!(tool.bundle_sha256, replaced.bundle_sha256);

    assert!(store.remove_tool("demo").await.unwrap());
    assert!(!store.remove_tool("demo").await.unwrap());
    assert_eq!(store.tool_file("demo", "index.html").await.unwrap(), None);
    assert!(store.tools().await.unwrap().is_empty());
    assert!(!store.set_tool_enabled("demo", true).await.unwrap());
}

on_both!(equal_bundles_have_equal_digests_whatever_the_file_order);
async fn equal_bundles_have_equal_digests_whatever_the_file_order(backend: Backend) {
    let (store, _db) = empty(backend).await;
    let ab: [(&str, &[u8]); 2] = [("a.js", b"1"), ("b.js", b"2")];
    let ba: [(&str, &[u8]); 2] = [("b.js", b"2"), ("a.js", b"1")];
    let moved: [(&str, &[u8]); 2] = [("a.js", b"2"), ("b.js", b"1")];
    store
        .install_tool("one", &manifest("1.0.0"), &ab)
        .await
        .unwrap();
    store
        .install_tool("two", &manifest("1.0.0"), &ba)
        .await
        .unwrap();
    store
        .install_tool("three", &manifest("1.0.0"), &moved)
        .await
        .unwrap();
    let digest = |slug: &'static str| {
        let store = store.clone();
        async move { store.tool(slug).await.unwrap().unwrap().bundle_sha256 }
    };
    assert_eq!(digest("one").await, digest("two").await);
    assert_ne!(digest("one").await, digest("three").await);
    let slugs: Vec<String> = store
        .tools()
        .await
        .unwrap()
        .into_iter()
        .map(|t| t.slug)
        .collect();
    assert_eq!(slugs, ["one", "three", "two"]);
}

on_both!(a_slug_that_cannot_name_an_origin_is_refused);
async fn a_slug_that_cannot_name_an_origin_is_refused(backend: Backend) {
    let (store, _db) = empty(backend).await;
    for slug in [
        "",
        "Demo",
        "-demo",
        "demo-",
        "de mo",
        "de.mo",
        &"a".repeat(64),
    ] {
        let files: [(&str, &[u8]); 1] = [("index.html", b"x")];
        let outcome = store.install_tool(slug, &manifest("1.0.0"), &files).await;
        assert_eq!(paths(outcome), ["slug"]);
    }
    assert!(store.tools().await.unwrap().is_empty());
}

on_both!(declarations_and_origins_are_kept_with_the_tool);
async fn declarations_and_origins_are_kept_with_the_tool(backend: Backend) {
    let (store, _db) = empty(backend).await;
    let mut declared = declaring(
        "1.0.0",
        &flooring_settings(),
        &[
            "https://api.vendor.example",
            "https://prices.vendor.example:8443",
        ],
    );
    declared.permissions.identity = true;
    store
        .install_tool("floor", &declared, &FILES)
        .await
        .unwrap();
    assert_eq!(
        store.tool("floor").await.unwrap().unwrap().manifest,
        declared
    );
    // A new version that declares nothing declares nothing.
    store
        .install_tool("floor", &manifest("2.0.0"), &FILES)
        .await
        .unwrap();
    let tool = store.tool("floor").await.unwrap().unwrap();
    assert!(tool.manifest.settings.is_empty() && tool.manifest.permissions.is_empty());
}

on_both!(each_tenant_has_its_own_checked_values);
async fn each_tenant_has_its_own_checked_values(backend: Backend) {
    let demo = demo(backend).await;
    let store = &demo.store;
    let (harbour, other) = (&demo.harbour.id, &demo.other.id);
    store
        .install_tool(
            "floor",
            &declaring("1.0.0", &flooring_settings(), &[]),
            &FILES,
        )
        .await
        .unwrap();

    let seen = store
        .set_tool_settings(
            harbour,
            "floor",
            &json!({"region": "South", "supplier": "Acme"}),
        )
        .await
        .unwrap()
        .unwrap();
    assert_eq!(
        values_to_json(&seen),
        json!({"wastePercent": 10, "region": "South", "supplier": "Acme"})
    );
    let stored = store.tenant_tool_settings(harbour).await.unwrap();
    assert_eq!(
        values_to_json(&stored["floor"]),
        json!({"region": "South", "supplier": "Acme"})
    );
    assert!(store.tenant_tool_settings(other).await.unwrap().is_empty());

    // Every problem at once, by key; nothing is written.
    let refused = store
        .set_tool_settings(
            harbour,
            "floor",
            &json!({"wastePercent": "12", "region": "East", "colour": "red"}),
        )
        .await;
    assert_eq!(paths(refused), ["colour", "region", "wastePercent"]);
    assert_eq!(
        paths(store.set_tool_settings(other, "floor", &json!({})).await),
        ["region"]
    );
    assert_eq!(
        values_to_json(&store.tenant_tool_settings(harbour).await.unwrap()["floor"]),
        json!({"region": "South", "supplier": "Acme"})
    );

    // The whole object replaces the last: a key left out is unset.
    store
        .set_tool_settings(harbour, "floor", &json!({"region": "North"}))
        .await
        .unwrap();
    assert_eq!(
        values_to_json(&store.tenant_tool_settings(harbour).await.unwrap()["floor"]),
        json!({"region": "North"})
    );
    assert_eq!(
        store
            .set_tool_settings(harbour, "nothing", &json!({}))
            .await
            .unwrap(),
        None
    );
}

on_both!(a_reinstall_drops_values_that_no_longer_fit_and_a_removal_drops_them_all);
async fn a_reinstall_drops_values_that_no_longer_fit_and_a_removal_drops_them_all(
    backend: Backend,
) {
    let demo = demo(backend).await;
    let store = &demo.store;
    let harbour = &demo.harbour.id;
    store
        .install_tool(
            "floor",
            &declaring("1.0.0", &flooring_settings(), &[]),
            &FILES,
        )
        .await
        .unwrap();
    store
        .set_tool_settings(
            harbour,
            "floor",
            &json!({"wastePercent": 12, "region": "South", "supplier": "Acme"}),
        )
        .await
        .unwrap();
    // 2.0.0: South is gone, supplier became a number, waste is unchanged.
    let next = json!([
        {"key": "wastePercent", "label": "Waste allowance (%)", "type": "number", "default": 10},
        {"key": "region", "label": "Region", "type": "select", "options": ["North", "East"], "default": "North"},
        {"key": "supplier", "label": "Supplier number", "type": "number"}
    ]);
    store
        .install_tool("floor", &declaring("2.0.0", &next, &[]), &FILES)
        .await
        .unwrap();
    assert_eq!(
        values_to_json(&store.tenant_tool_settings(harbour).await.unwrap()["floor"]),
        json!({"wastePercent": 12})
    );
    // Going back to 1.0.0 does not bring the dropped values back.
    store
        .install_tool(
            "floor",
            &declaring("1.0.0", &flooring_settings(), &[]),
            &FILES,
        )
        .await
        .unwrap();
    assert_eq!(
        values_to_json(&store.tenant_tool_settings(harbour).await.unwrap()["floor"]),
        json!({"wastePercent": 12})
    );

    assert!(store.remove_tool("floor").await.unwrap());
    let rows: i64 = raw(&demo.db)
        .await
        .fetch_scalar("SELECT COUNT(*) FROM tool_settings")
        .await;
    assert_eq!(rows, 0);
}

on_both!(secrets_are_kept_apart_kept_by_a_reinstall_that_keeps_them_secret_and_go_with_the_tool);
async fn secrets_are_kept_apart_kept_by_a_reinstall_that_keeps_them_secret_and_go_with_the_tool(
    backend: Backend,
) {
    let demo = demo(backend).await;
    let store = &demo.store;
    let harbour = &demo.harbour.id;
    let secrets = json!([
        {"key": "region", "label": "Region", "type": "string"},
        {"key": "apiKey", "label": "API key", "type": "string", "secret": true},
        {"key": "password", "label": "Password", "type": "string", "secret": true}
    ]);
    store
        .install_tool("vendor", &declaring("1.0.0", &secrets, &[]), &FILES)
        .await
        .unwrap();
    let seen = store
        .set_tool_settings(
            harbour,
            "vendor",
            &json!({"region": "N", "apiKey": "k-1", "password": "pw"}),
        )
        .await
        .unwrap()
        .unwrap();
    // What a tool sees holds no secret; the secrets are read back only by tool_secrets.
    assert_eq!(values_to_json(&seen), json!({"region": "N"}));
    let read = store.tool_secrets(harbour, "vendor").await.unwrap();
    assert_eq!(read.get("apiKey").map(String::as_str), Some("k-1"));
    assert_eq!(
        store.tenant_secret_keys(harbour).await.unwrap()["vendor"],
        ["apiKey".to_owned(), "password".to_owned()].into()
    );
    // Left out, a secret stays; null clears it; a refused update writes nothing.
    store
        .set_tool_settings(harbour, "vendor", &json!({"password": null}))
        .await
        .unwrap();
    assert_eq!(
        paths(
            store
                .set_tool_settings(harbour, "vendor", &json!({"region": "S", "apiKey": 7}))
                .await
        ),
        ["apiKey"]
    );
    let read = store.tool_secrets(harbour, "vendor").await.unwrap();
    assert_eq!(read.keys().collect::<Vec<_>>(), ["apiKey"]);
    // The plain values are the complete set: the update that cleared the password left region out.
    assert!(
        !store
            .tenant_tool_settings(harbour)
            .await
            .unwrap()
            .contains_key("vendor")
    );
    assert!(
        store
            .tool_secrets(&demo.other.id, "vendor")
            .await
            .unwrap()
            .is_empty()
    );
    // 2.0.0: apiKey is still secret, password gone; 3.0.0 makes apiKey plain.
    let next = json!([
        {"key": "apiKey", "label": "API key", "type": "string", "secret": true}
    ]);
    store
        .set_tool_settings(harbour, "vendor", &json!({"password": "pw2"}))
        .await
        .unwrap();
    store
        .install_tool("vendor", &declaring("2.0.0", &next, &[]), &FILES)
        .await
        .unwrap();
    let read = store.tool_secrets(harbour, "vendor").await.unwrap();
    assert_eq!(read.keys().collect::<Vec<_>>(), ["apiKey"]);
    let plain = json!([{"key": "apiKey", "label": "API key", "type": "string"}]);
    store
        .install_tool("vendor", &declaring("3.0.0", &plain, &[]), &FILES)
        .await
        .unwrap();
    assert!(
        store
            .tool_secrets(harbour, "vendor")
            .await
            .unwrap()
            .is_empty()
    );
    store
        .install_tool("vendor", &declaring("2.0.0", &next, &[]), &FILES)
        .await
        .unwrap();
    store
        .set_tool_settings(harbour, "vendor", &json!({"apiKey": "k-2"}))
        .await
        .unwrap();
    assert!(store.remove_tool("vendor").await.unwrap());
    let rows: i64 = raw(&demo.db)
        .await
        .fetch_scalar("SELECT COUNT(*) FROM tool_secrets")
        .await;
    assert_eq!(rows, 0);
}
