//! Settings with the session: API tokens and installed tools, for Admin and
//! Super User only.

use std::io::Write;

use reqwest::Method;
use serde_json::json;

use crate::harness::{Server, call, json, upload};

/// A bundle .zip of a small tool, packed as `toolbridge tool pack` packs it.
fn good_zip(version: &str) -> Vec<u8> {
    let dir = tempfile::tempdir().unwrap();
    let manifest = json!({
        "name": "Deck calculator", "shortName": "Deck", "type": "standalone",
        "version": version, "description": "Sizes a deck.", "entry": "index.html",
    });
    std::fs::write(dir.path().join("manifest.json"), manifest.to_string()).unwrap();
    std::fs::write(dir.path().join("index.html"), "<!doctype html>").unwrap();
    let folder = toolbridge_bundle::read_dir(dir.path()).unwrap();
    toolbridge_bundle::pack(&folder.bundle).unwrap()
}

/// A .zip no packer of ours would write: a bad version and a program.
fn hostile_zip() -> Vec<u8> {
    let mut writer = zip::ZipWriter::new(std::io::Cursor::new(Vec::new()));
    let options = zip::write::SimpleFileOptions::default();
    writer.start_file("manifest.json", options).unwrap();
    writer
        .write_all(br#"{"name":"X","shortName":"X","type":"standalone","version":"1.0","description":"x","entry":"index.html"}"#)
        .unwrap();
    writer.start_file("index.html", options).unwrap();
    writer.write_all(b"<!doctype html>").unwrap();
    writer.start_file("tools/setup.exe", options).unwrap();
    writer.write_all(b"MZ").unwrap();
    writer.finish().unwrap().into_inner()
}

#[tokio::test]
async fn an_admin_creates_lists_and_revokes_api_tokens() {
    let server = Server::start().await;
    let admin = server.sign_in("admin@harbour.test").await;
    let (status, created) = call(
        &server,
        &admin,
        Method::POST,
        "/api/settings/keys",
        Some(&json!({"name": "ERP sync", "scopes": ["customers:read", "quotes:write"], "rateLimit": {"requests": 30, "windowSecs": 60}})),
    )
    .await;
    assert_eq!(status, 201, "{created}");
    let token = created["token"].as_str().unwrap().to_owned();
    assert_eq!(created["key"]["name"], "ERP sync");
    assert_eq!(
        created["key"]["scopes"],
        json!(["customers:read", "quotes:write"])
    );
    assert_eq!(
        created["key"]["rateLimit"],
        json!({"requests": 30, "windowSecs": 60})
    );
    assert!(
        token.contains(created["key"]["prefix"].as_str().unwrap()),
        "{created}"
    );

    let (status, _) = json(server.get(&token, "/api/v1/customers?pageSize=1").await).await;
    assert_eq!(status, 200);

    let (status, listed) = call(&server, &admin, Method::GET, "/api/settings/keys", None).await;
    assert_eq!(status, 200);
    let listed = listed.as_array().unwrap();
    assert!(
        listed.iter().all(|key| key.get("token").is_none()),
        "{listed:?}"
    );
    let id = created["key"]["id"].as_str().unwrap();
    assert!(
        listed
            .iter()
            .any(|key| key["id"] == id && key["revokedAt"].is_null())
    );

    let (status, _) = call(
        &server,
        &admin,
        Method::DELETE,
        &format!("/api/settings/keys/{id}"),
        None,
    )
    .await;
    assert_eq!(status, 204);
    let (status, _) = json(server.get(&token, "/api/v1/customers?pageSize=1").await).await;
    assert_eq!(status, 401);
    let (status, _) = call(
        &server,
        &admin,
        Method::DELETE,
        "/api/settings/keys/no-such-key",
        None,
    )
    .await;
    assert_eq!(status, 404);
}

#[tokio::test]
async fn a_bad_token_request_names_every_problem() {
    let server = Server::start().await;
    let admin = server.sign_in("admin@harbour.test").await;
    let (status, body) = call(
        &server,
        &admin,
        Method::POST,
        "/api/settings/keys",
        Some(&json!({"name": "x", "scopes": ["quotes:read", "everything"], "rateLimit": {"requests": 1, "windowSecs": 1}})),
    )
    .await;
    assert_eq!(status, 422, "{body}");
    assert_eq!(body["errors"][0]["path"], "scopes[1]", "{body}");
    let (status, body) = call(
        &server,
        &admin,
        Method::POST,
        "/api/settings/keys",
        Some(&json!({"name": "", "scopes": [], "rateLimit": {"requests": 0, "windowSecs": 60}})),
    )
    .await;
    assert_eq!(status, 422, "{body}");
    let paths: Vec<&str> = body["errors"]
        .as_array()
        .unwrap()
        .iter()
        .map(|e| e["path"].as_str().unwrap())
        .collect();
    assert_eq!(paths, ["name", "scopes", "rateLimit"], "{body}");

    // An unknown scope does not hide the other problems, and nothing is made.
    let (status, body) = call(
        &server,
        &admin,
        Method::POST,
        "/api/settings/keys",
        Some(&
            json!({"name": "", "scopes": ["nope"], "rateLimit": {"requests": 0, "windowSecs": 60}}),
        ),
    )
    .await;
    assert_eq!(status, 422, "{body}");
    let paths: Vec<&str> = body["errors"]
        .as_array()
        .unwrap()
        .iter()
        .map(|e| e["path"].as_str().unwrap())
        .collect();
    assert_eq!(paths, ["name", "rateLimit", "scopes[0]"], "{body}");
    let (_, listed) = call(&server, &admin, Method::GET, "/api/settings/keys", None).await;
    assert_eq!(listed, json!([]));
}

#[tokio::test]
async fn settings_are_for_admins_and_super_users_with_the_session() {
    let server = Server::start().await;
    for email in ["office@harbour.test", "field@harbour.test"] {
        let cookie = server.sign_in(email).await;
        for path in ["/api/settings/keys", "/api/settings/tools"] {
            let (status, body) = call(&server, &cookie, Method::GET, path, None).await;
            assert_eq!(status, 403, "{email} {path}: {body}");
            assert_eq!(body["code"], "NOT_ALLOWED");
        }
    }
    let super_user = server.sign_in("super@harbour.test").await;
    let (status, _) = call(
        &server,
        &super_user,
        Method::GET,
        "/api/settings/keys",
        None,
    )
    .await;
    assert_eq!(status, 200);
    let key = server.full_key().await;
    let (status, _) = json(server.get(&key, "/api/settings/keys").await).await;
    assert_eq!(status, 403);
    let (status, _) = json(
        server
            .request(Method::GET, "/api/settings/tools")
            .send()
            .await
            .unwrap(),
    )
    .await;
    assert_eq!(status, 401);
}

#[tokio::test]
async fn an_uploaded_bundle_is_installed_toggled_and_removed() {
    let server = Server::start().await;
    let admin = server.sign_in("admin@harbour.test").await;
    let (status, uploaded) = upload(&server, &admin, good_zip("1.0.0")).await;
    assert_eq!(status, 201, "{uploaded}");
    assert_eq!(uploaded["tool"]["slug"], "deck");
    assert_eq!(uploaded["tool"]["enabled"], true);
    assert_eq!(
        uploaded["tool"]["origin"],
        format!("http://deck.tools.localhost:{}", server.port)
    );
    assert!(uploaded["replaced"].is_null());
    let (status, page) = json(
        server
            .to_tool("deck", Method::GET, "/index.html")
            .send()
            .await
            .unwrap(),
    )
    .await;
    assert_eq!(status, 200, "{page}");

    let (_, uploaded) = upload(&server, &admin, good_zip("1.1.0")).await;
    assert_eq!(uploaded["replaced"]["version"], "1.0.0");
    assert_eq!(uploaded["tool"]["version"], "1.1.0");

    let (status, toggled) = call(
        &server,
        &admin,
        Method::PATCH,
        "/api/settings/tools/deck",
        Some(&json!({"enabled": false})),
    )
    .await;
    assert_eq!(status, 200, "{toggled}");
    assert_eq!(toggled["enabled"], false);
    let (_, listed) = call(&server, &admin, Method::GET, "/api/settings/tools", None).await;
    assert!(
        listed
            .as_array()
            .unwrap()
            .iter()
            .any(|tool| tool["slug"] == "deck" && tool["enabled"] == false)
    );
    let (status, _) = json(
        server
            .to_tool("deck", Method::GET, "/index.html")
            .send()
            .await
            .unwrap(),
    )
    .await;
    assert_eq!(status, 404);

    let (status, _) = call(
        &server,
        &admin,
        Method::DELETE,
        "/api/settings/tools/deck",
        None,
    )
    .await;
    assert_eq!(status, 204);
    let (status, _) = call(
        &server,
        &admin,
        Method::DELETE,
        "/api/settings/tools/deck",
        None,
    )
    .await;
    assert_eq!(status, 404);
}

#[tokio::test]
async fn a_hostile_upload_is_refused_naming_each_entry_and_rule() {
    let server = Server::start().await;
    let admin = server.sign_in("admin@harbour.test").await;
    let (status, refused) = upload(&server, &admin, hostile_zip()).await;
    assert_eq!(status, 422, "{refused}");
    let errors = refused["errors"].as_array().unwrap();
    assert!(
        errors.iter().any(|e| e["path"] == "tools/setup.exe"
            && e["message"].as_str().unwrap().ends_with("[extension]")),
        "{refused}"
    );

    let (status, refused) = upload(&server, &admin, b"not a zip at all".to_vec()).await;
    assert_eq!(status, 422, "{refused}");
    assert_eq!(refused["errors"][0]["path"], "bundle", "{refused}");

    let (status, refused) = upload(&server, &admin, vec![0; 10 * 1024 * 1024 + 1]).await;
    assert_eq!(status, 413, "{refused}");

    let (_, listed) = call(&server, &admin, Method::GET, "/api/settings/tools", None).await;
    assert_eq!(listed, json!([]));
}

/// Found while making the api conformance suite pass (by checking what
/// axum's extractors refuse before a handler runs): a repeated `slug` in the
/// upload's query got axum's plain-text 400 before the handler ran, even
/// without a session. The query is now read like every other (the last value
/// counts), and errors stay problem+json. The bytes are read whatever the
/// Content-Type, as the document says.
#[tokio::test]
async fn an_upload_reads_a_repeated_slug_and_any_content_type() {
    let server = Server::start().await;
    let admin = server.sign_in("admin@harbour.test").await;
    let response = server
        .as_user(
            &admin,
            Method::POST,
            "/api/settings/tools?slug=deck&slug=decking",
        )
        .header("content-type", "application/octet-stream")
        .body(good_zip("1.0.0"))
        .send()
        .await
        .unwrap();
    let (status, uploaded) = json(response).await;
    assert_eq!(status, 201, "{uploaded}");
    assert_eq!(uploaded["tool"]["slug"], "decking");

    let response = server
        .request(Method::POST, "/api/settings/tools?slug=a&slug=b")
        .send()
        .await
        .unwrap();
    assert_eq!(
        response.headers()["content-type"],
        "application/problem+json"
    );
    assert_eq!(response.status(), 401);
}

/// A key or tool id that is not UTF-8 in the path names nothing: a 404 as
/// problem+json, not axum's plain-text 400.
#[tokio::test]
async fn a_settings_id_that_is_not_utf8_is_a_documented_404() {
    let server = Server::start().await;
    let admin = server.sign_in("admin@harbour.test").await;
    for path in ["/api/settings/keys/%FF", "/api/settings/tools/%FF"] {
        let response = server
            .as_user(&admin, Method::DELETE, path)
            .send()
            .await
            .unwrap();
        assert_eq!(
            response.headers()["content-type"],
            "application/problem+json",
            "{path}"
        );
        let (status, problem) = json(response).await;
        assert_eq!(status, 404, "{path}: {problem}");
        assert_eq!(problem["code"], "NOT_FOUND");
    }
}
