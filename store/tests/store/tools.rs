//! Installed tools: install, replace, read, enable, remove.

use toolbridge_protocol::ErrorCode;
use toolbridge_protocol::manifest::{ToolManifest, ToolType};

use crate::common::{assert_code, empty};

fn manifest(version: &str) -> ToolManifest {
    ToolManifest {
        name: "Demo estimator".to_owned(),
        short_name: "Demo".to_owned(),
        tool_type: ToolType::QuotingExtension,
        version: version.to_owned(),
        description: "Adds demo lines.".to_owned(),
        entry: "index.html".to_owned(),
    }
}

#[tokio::test]
async fn a_tool_installs_with_its_files_and_a_new_version_replaces_them_all() {
    let (store, _dir) = empty().await;
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

#[tokio::test]
async fn equal_bundles_have_equal_digests_whatever_the_file_order() {
    let (store, _dir) = empty().await;
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

#[tokio::test]
async fn a_slug_that_cannot_name_an_origin_is_refused() {
    let (store, _dir) = empty().await;
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
        assert_code(outcome, ErrorCode::InvalidParams);
    }
    assert!(store.tools().await.unwrap().is_empty());
}
