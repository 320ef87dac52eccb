//! Compression over real HTTP: the static files (the SDK, the app, the host module) come
//! compressed once per version in the coding the client asks for, each coding with its own
//! `ETag`; dynamic answers (the REST API's JSON) are compressed by the server's layer; the event
//! stream and small bodies never are. The client here decodes nothing by itself (reqwest without
//! its decompression features), so the tests see the bytes as they travel.

use std::io::Read as _;
use std::time::Duration;

use reqwest::Method;
use reqwest::header::HeaderMap;
use serde_json::Value;
use toolbridge_server::digest::sha256_hex;
use toolbridge_store::Store;

use crate::harness::{Server, customer_and_product, json, quote_body};

/// Something like a built bridge.js: 60 KB of JavaScript that compresses as code does.
fn script(version: u32) -> String {
    let lines = (0..1200).map(|i| {
        format!(
            "export function call{i}(port, args) {{ return port.request('method{}', args, {i}); }}\n",
            i % 37
        )
    });
    std::iter::once(format!("/*! bridge.js v{version} */\n"))
        .chain(lines)
        .collect()
}

fn gunzip(bytes: &[u8]) -> Vec<u8> {
    let mut out = Vec::new();
    flate2::read::GzDecoder::new(bytes)
        .read_to_end(&mut out)
        .unwrap();
    out
}

fn unbrotli(bytes: &[u8]) -> Vec<u8> {
    let mut out = Vec::new();
    brotli::Decompressor::new(bytes, 4096)
        .read_to_end(&mut out)
        .unwrap();
    out
}

fn header<'a>(headers: &'a HeaderMap, name: &str) -> Option<&'a str> {
    headers.get(name).map(|value| value.to_str().unwrap())
}

/// `GET path` with `Accept-Encoding: accept` (none when empty) and optionally `If-None-Match`:
/// the status, the headers and the body as sent.
async fn fetch(
    server: &Server,
    path: &str,
    accept: &str,
    if_none_match: Option<&str>,
) -> (u16, HeaderMap, Vec<u8>) {
    let mut request = server.request(Method::GET, path);
    if !accept.is_empty() {
        request = request.header("accept-encoding", accept);
    }
    if let Some(tag) = if_none_match {
        request = request.header("if-none-match", tag);
    }
    let response = request.send().await.unwrap();
    let status = response.status().as_u16();
    let headers = response.headers().clone();
    let body = response.bytes().await.unwrap().to_vec();
    (status, headers, body)
}

async fn sdk_server(text: &str) -> (Server, tempfile::TempDir) {
    let sdk = tempfile::tempdir().unwrap();
    std::fs::write(sdk.path().join("bridge.js"), text).unwrap();
    let dir = sdk.path().to_owned();
    let server = Server::start_with(move |state| state.serving_sdk_from(dir)).await;
    (server, sdk)
}

#[tokio::test]
async fn bridge_js_comes_in_the_coding_asked_for_each_with_its_etag() {
    let text = script(1);
    let (server, _sdk) = sdk_server(&text).await;
    let hash = sha256_hex(text.as_bytes());

    let (status, headers, body) = fetch(&server, "/sdk/bridge.js", "br", None).await;
    assert_eq!(status, 200);
    assert_eq!(header(&headers, "content-encoding"), Some("br"));
    assert_eq!(header(&headers, "vary"), Some("accept-encoding"));
    assert_eq!(header(&headers, "etag").unwrap(), format!("\"{hash}-br\""));
    assert_eq!(
        header(&headers, "content-length").unwrap(),
        body.len().to_string()
    );
    assert_eq!(
        header(&headers, "content-type"),
        Some("text/javascript; charset=utf-8")
    );
    assert_eq!(header(&headers, "access-control-allow-origin"), Some("*"));
    assert_eq!(unbrotli(&body), text.as_bytes());
    assert!(
        body.len() * 5 < text.len(),
        "{} of {}",
        body.len(),
        text.len()
    );
    let brotli_size = body.len();

    let (status, headers, body) = fetch(&server, "/sdk/bridge.js", "gzip", None).await;
    assert_eq!(status, 200);
    assert_eq!(header(&headers, "content-encoding"), Some("gzip"));
    assert_eq!(header(&headers, "vary"), Some("accept-encoding"));
    assert_eq!(header(&headers, "etag").unwrap(), format!("\"{hash}-gz\""));
    assert_eq!(gunzip(&body), text.as_bytes());
    assert!(brotli_size <= body.len());

    // What a browser sends: brotli first.
    let (_, headers, _) = fetch(&server, "/sdk/bridge.js", "gzip, deflate, br, zstd", None).await;
    assert_eq!(header(&headers, "content-encoding"), Some("br"));

    let (status, headers, body) = fetch(&server, "/sdk/bridge.js", "", None).await;
    assert_eq!(status, 200);
    assert_eq!(header(&headers, "content-encoding"), None);
    assert_eq!(header(&headers, "vary"), Some("accept-encoding"));
    assert_eq!(header(&headers, "etag").unwrap(), format!("\"{hash}\""));
    assert_eq!(
        header(&headers, "content-length").unwrap(),
        text.len().to_string()
    );
    assert_eq!(body, text.as_bytes());

    // Each representation answers 304 to its own tag, and only to it.
    for (accept, tag) in [
        ("br", format!("\"{hash}-br\"")),
        ("gzip", format!("\"{hash}-gz\"")),
        ("", format!("\"{hash}\"")),
    ] {
        let (status, headers, body) = fetch(&server, "/sdk/bridge.js", accept, Some(&tag)).await;
        assert_eq!(status, 304, "{accept:?} {tag}");
        assert_eq!(header(&headers, "etag"), Some(tag.as_str()));
        assert_eq!(header(&headers, "vary"), Some("accept-encoding"));
        assert!(body.is_empty());
    }
    let (status, headers, _) = fetch(
        &server,
        "/sdk/bridge.js",
        "br",
        Some(&format!("\"{hash}\"")),
    )
    .await;
    assert_eq!(status, 200);
    assert_eq!(header(&headers, "content-encoding"), Some("br"));
}

#[tokio::test]
async fn a_coding_weighed_zero_is_refused() {
    let text = script(1);
    let (server, _sdk) = sdk_server(&text).await;
    let (_, headers, body) = fetch(&server, "/sdk/bridge.js", "br;q=0, gzip", None).await;
    assert_eq!(header(&headers, "content-encoding"), Some("gzip"));
    assert_eq!(gunzip(&body), text.as_bytes());
    let (_, headers, body) = fetch(&server, "/sdk/bridge.js", "br;q=0.2, gzip;q=0.9", None).await;
    assert_eq!(header(&headers, "content-encoding"), Some("gzip"));
    assert_eq!(gunzip(&body), text.as_bytes());
    let (_, headers, body) = fetch(&server, "/sdk/bridge.js", "br;q=0, gzip;q=0", None).await;
    assert_eq!(header(&headers, "content-encoding"), None);
    assert_eq!(body, text.as_bytes());
    let (_, headers, body) = fetch(&server, "/sdk/bridge.js", "identity", None).await;
    assert_eq!(header(&headers, "content-encoding"), None);
    assert_eq!(body, text.as_bytes());

    // The same for a dynamic answer.
    let key = server.full_key().await;
    for (accept, coding) in [
        ("br;q=0, gzip", Some("gzip")),
        ("gzip;q=0, br", Some("br")),
        ("br;q=0, gzip;q=0", None),
    ] {
        let response = server
            .request(Method::GET, "/api/v1/products?pageSize=100")
            .bearer_auth(&key)
            .header("accept-encoding", accept)
            .send()
            .await
            .unwrap();
        assert_eq!(response.status(), 200);
        assert_eq!(
            header(response.headers(), "content-encoding"),
            coding,
            "{accept}"
        );
    }
}

#[tokio::test]
async fn a_rebuilt_sdk_is_served_fresh_with_a_new_etag() {
    let first = script(1);
    let (server, sdk) = sdk_server(&first).await;
    let (_, headers, body) = fetch(&server, "/sdk/bridge.js", "br", None).await;
    let old_tag = header(&headers, "etag").unwrap().to_owned();
    assert_eq!(unbrotli(&body), first.as_bytes());

    // A rebuild of the same length, at once: only the bytes differ.
    let second = first.replace("v1 */", "v2 */");
    assert_eq!(second.len(), first.len());
    std::fs::write(sdk.path().join("bridge.js"), &second).unwrap();
    let (status, headers, body) = fetch(&server, "/sdk/bridge.js", "br", Some(&old_tag)).await;
    assert_eq!(status, 200);
    let new_tag = header(&headers, "etag").unwrap().to_owned();
    assert_eq!(new_tag, format!("\"{}-br\"", sha256_hex(second.as_bytes())));
    assert_eq!(unbrotli(&body), second.as_bytes());

    // A rebuild of another length.
    let third = script(3).repeat(2);
    std::fs::write(sdk.path().join("bridge.js"), &third).unwrap();
    let (status, headers, body) = fetch(&server, "/sdk/bridge.js", "gzip", Some(&new_tag)).await;
    assert_eq!(status, 200);
    assert_eq!(
        header(&headers, "etag").unwrap(),
        format!("\"{}-gz\"", sha256_hex(third.as_bytes()))
    );
    assert_eq!(gunzip(&body), third.as_bytes());
}

#[tokio::test]
async fn the_app_and_the_host_module_come_compressed_but_not_small_files() {
    let www = tempfile::tempdir().unwrap();
    let page = format!(
        "<!doctype html><title>App</title>{}",
        "<p>text</p>\n".repeat(300)
    );
    std::fs::write(www.path().join("index.html"), &page).unwrap();
    std::fs::write(www.path().join("small.js"), "export {};").unwrap();
    std::fs::write(www.path().join("logo.png"), vec![7_u8; 5000]).unwrap();
    let host = tempfile::tempdir().unwrap();
    let mut wasm = b"\0asm\x01\0\0\0".to_vec();
    wasm.extend((0..40_000_u32).flat_map(|i| (i % 251).to_le_bytes()));
    std::fs::write(host.path().join("toolbridge_host_bg.wasm"), &wasm).unwrap();
    let (www_dir, host_dir) = (www.path().to_owned(), host.path().to_owned());
    let server = Server::start_with(move |state| state.serving_app_from(www_dir, host_dir)).await;

    let (status, headers, body) = fetch(&server, "/", "br, gzip", None).await;
    assert_eq!(status, 200);
    assert_eq!(header(&headers, "content-encoding"), Some("br"));
    assert!(header(&headers, "content-security-policy").is_some());
    assert_eq!(unbrotli(&body), page.as_bytes());

    let (status, headers, body) =
        fetch(&server, "/host/toolbridge_host_bg.wasm", "gzip", None).await;
    assert_eq!(status, 200);
    assert_eq!(header(&headers, "content-type"), Some("application/wasm"));
    assert_eq!(header(&headers, "content-encoding"), Some("gzip"));
    assert_eq!(gunzip(&body), wasm);

    // Small, or already compressed: as it is, and not varying.
    for path in ["/small.js", "/logo.png"] {
        let (status, headers, body) = fetch(&server, path, "br, gzip", None).await;
        assert_eq!(status, 200, "{path}");
        assert_eq!(header(&headers, "content-encoding"), None, "{path}");
        assert_eq!(header(&headers, "vary"), None, "{path}");
        assert_eq!(
            header(&headers, "content-length").unwrap(),
            body.len().to_string()
        );
    }
    // The page helpers built into the server too.
    let (status, headers, body) = fetch(&server, "/sdk/ui.js", "br", None).await;
    assert_eq!(status, 200);
    assert_eq!(header(&headers, "content-encoding"), Some("br"));
    assert_eq!(
        unbrotli(&body),
        include_bytes!("../../../sdk/ui/ui.js").to_vec()
    );
    // A small error answer goes as it is.
    let (status, headers, _) = fetch(&server, "/host/other.js", "br, gzip", None).await;
    assert_eq!(status, 404);
    assert_eq!(header(&headers, "content-encoding"), None);
}

#[tokio::test]
async fn a_page_of_500_products_is_much_smaller_compressed_and_the_same_json() {
    let dir = tempfile::tempdir().unwrap();
    let db = dir.path().join("toolbridge.sqlite3");
    Store::open(&db)
        .await
        .unwrap()
        .seed_demo(600)
        .await
        .unwrap();
    let server = Server::start_on(&db).await;
    let key = server.full_key().await;
    let get = |accept: &'static str| {
        let mut request = server
            .request(Method::GET, "/api/v1/products?pageSize=500")
            .bearer_auth(&key);
        if !accept.is_empty() {
            request = request.header("accept-encoding", accept);
        }
        async move {
            let response = request.send().await.unwrap();
            assert_eq!(response.status(), 200);
            let headers = response.headers().clone();
            (headers, response.bytes().await.unwrap().to_vec())
        }
    };
    let (headers, plain) = get("").await;
    assert_eq!(header(&headers, "content-encoding"), None);
    assert_eq!(header(&headers, "vary"), Some("accept-encoding"));
    let plain: Value = serde_json::from_slice(&plain).unwrap();
    assert_eq!(plain["items"].as_array().unwrap().len(), 500);
    let identity_size = serde_json::to_vec(&plain).unwrap().len();

    let (headers, body) = get("gzip").await;
    assert_eq!(header(&headers, "content-encoding"), Some("gzip"));
    assert_eq!(header(&headers, "vary"), Some("accept-encoding"));
    assert!(
        body.len() * 3 < identity_size,
        "{} of {identity_size}",
        body.len()
    );
    assert_eq!(
        serde_json::from_slice::<Value>(&gunzip(&body)).unwrap(),
        plain
    );

    let (headers, body) = get("br, gzip").await;
    assert_eq!(header(&headers, "content-encoding"), Some("br"));
    assert!(body.len() * 3 < identity_size);
    assert_eq!(
        serde_json::from_slice::<Value>(&unbrotli(&body)).unwrap(),
        plain
    );
    server.stop().await;
}

#[tokio::test]
async fn the_event_stream_is_never_compressed() {
    let server = Server::start().await;
    let office = server.sign_in("office@harbour.test").await;
    let mut stream = server
        .as_user(&office, Method::GET, "/api/events")
        .header("accept-encoding", "br, gzip")
        .send()
        .await
        .unwrap();
    assert_eq!(stream.status(), 200);
    assert!(
        header(stream.headers(), "content-type")
            .unwrap()
            .starts_with("text/event-stream")
    );
    assert_eq!(header(stream.headers(), "content-encoding"), None);

    let key = server.full_key().await;
    let (customer, product) = customer_and_product(&server, &key).await;
    let (status, _) = json(
        server
            .post(&key, "/api/v1/quotes", &quote_body(&customer, &product))
            .await,
    )
    .await;
    assert_eq!(status, 201);
    // The event arrives as it is sent, as plain text.
    let mut text = String::new();
    while !text.contains("event: quote") {
        let chunk = tokio::time::timeout(Duration::from_secs(5), stream.chunk())
            .await
            .unwrap_or_else(|_| panic!("no quote event within 5 s; got {text:?}"))
            .unwrap()
            .unwrap();
        text.push_str(std::str::from_utf8(&chunk).unwrap());
    }
}

#[tokio::test]
async fn a_tools_file_is_compressed_as_it_is_sent() {
    let folder = tempfile::tempdir().unwrap();
    let manifest = serde_json::json!({
        "name": "Big estimator",
        "shortName": "Big",
        "type": "quoting_extension",
        "version": "1.0.0",
        "description": "Ships a large script.",
        "entry": "index.html",
    });
    std::fs::write(folder.path().join("manifest.json"), manifest.to_string()).unwrap();
    std::fs::write(
        folder.path().join("index.html"),
        "<!doctype html><script src=\"app.js\"></script>",
    )
    .unwrap();
    let text = script(7);
    std::fs::write(folder.path().join("app.js"), &text).unwrap();
    let bundle = toolbridge_bundle::read_dir(folder.path()).unwrap().bundle;
    let server = Server::start().await;
    let installed = toolbridge_server::tools::install(&server.store, &bundle, None)
        .await
        .unwrap();
    let slug = installed.tool.slug;

    let response = server
        .to_tool(&slug, Method::GET, "/app.js")
        .header("accept-encoding", "gzip, deflate, br, zstd")
        .send()
        .await
        .unwrap();
    assert_eq!(response.status(), 200);
    assert_eq!(header(response.headers(), "content-encoding"), Some("br"));
    assert_eq!(header(response.headers(), "vary"), Some("accept-encoding"));
    assert!(header(response.headers(), "content-security-policy").is_some());
    let body = response.bytes().await.unwrap();
    assert_eq!(unbrotli(&body), text.as_bytes());

    let response = server
        .to_tool(&slug, Method::GET, "/app.js")
        .send()
        .await
        .unwrap();
    assert_eq!(header(response.headers(), "content-encoding"), None);
    assert_eq!(response.bytes().await.unwrap(), text.as_bytes());
}

#[tokio::test]
async fn the_catalog_index_is_compressed_once_per_version_with_an_etag_per_coding() {
    let server = Server::start().await;
    let key = server.full_key().await;
    let get = |accept: &'static str, tag: Option<String>| {
        let mut request = server
            .request(Method::GET, "/api/v1/catalog/index")
            .bearer_auth(&key);
        if !accept.is_empty() {
            request = request.header("accept-encoding", accept);
        }
        if let Some(tag) = tag {
            request = request.header("if-none-match", tag);
        }
        async move {
            let response = request.send().await.unwrap();
            let status = response.status().as_u16();
            let headers = response.headers().clone();
            (status, headers, response.bytes().await.unwrap().to_vec())
        }
    };
    let (status, headers, plain) = get("", None).await;
    assert_eq!(status, 200);
    assert_eq!(header(&headers, "content-encoding"), None);
    assert_eq!(header(&headers, "content-type"), Some("application/json"));
    assert_eq!(header(&headers, "cache-control"), Some("private, no-cache"));
    assert_eq!(header(&headers, "vary"), Some("accept-encoding"));
    let tag = header(&headers, "etag").unwrap().to_owned();
    let version = tag.trim_matches('"').to_owned();
    let plain: Value = serde_json::from_slice(&plain).unwrap();

    let (status, headers, body) = get("br, gzip", None).await;
    assert_eq!(status, 200);
    assert_eq!(header(&headers, "content-encoding"), Some("br"));
    assert_eq!(
        header(&headers, "etag").unwrap(),
        format!("\"{version}-br\"")
    );
    assert_eq!(
        header(&headers, "content-length").unwrap(),
        body.len().to_string()
    );
    assert_eq!(
        serde_json::from_slice::<Value>(&unbrotli(&body)).unwrap(),
        plain
    );

    let (status, headers, body) = get("gzip", None).await;
    assert_eq!(status, 200);
    assert_eq!(
        header(&headers, "etag").unwrap(),
        format!("\"{version}-gz\"")
    );
    assert_eq!(
        serde_json::from_slice::<Value>(&gunzip(&body)).unwrap(),
        plain
    );

    for (accept, tag) in [
        ("br, gzip", format!("\"{version}-br\"")),
        ("gzip", format!("\"{version}-gz\"")),
        ("", tag.clone()),
    ] {
        let (status, headers, body) = get(accept, Some(tag.clone())).await;
        assert_eq!(status, 304, "{accept:?}");
        assert_eq!(header(&headers, "etag"), Some(tag.as_str()));
        assert!(body.is_empty());
    }

    // A change to the catalog is a new version, written and compressed afresh.
    let tenant = server.tenant().await;
    let product = plain["products"][0]["id"].as_str().unwrap().to_owned();
    sqlx_deactivate(&server, &tenant, &product).await;
    let (status, headers, body) = get("br, gzip", Some(format!("\"{version}-br\""))).await;
    assert_eq!(status, 200);
    assert_ne!(
        header(&headers, "etag").unwrap(),
        format!("\"{version}-br\"")
    );
    let fresh: Value = serde_json::from_slice(&unbrotli(&body)).unwrap();
    assert_eq!(
        fresh["products"].as_array().unwrap().len() + 1,
        plain["products"].as_array().unwrap().len()
    );
}

/// Marks `product` of `tenant` inactive from outside the server, as another process would; the
/// database's triggers bump the tenant's catalog version.
async fn sqlx_deactivate(server: &Server, tenant: &str, product: &str) {
    use sqlx::Connection as _;
    let mut connection = sqlx::SqliteConnection::connect_with(
        &sqlx::sqlite::SqliteConnectOptions::new().filename(&server.db),
    )
    .await
    .unwrap();
    let done = sqlx::query("UPDATE products SET active = 0 WHERE tenant_id = $1 AND id = $2")
        .bind(tenant)
        .bind(product)
        .execute(&mut connection)
        .await
        .unwrap();
    assert_eq!(done.rows_affected(), 1);
}

#[tokio::test]
async fn an_allowed_origin_keeps_the_answer_varying_by_accept_encoding() {
    let page = "http://localhost:3000";
    let server = Server::start_allowing(&[page]).await;
    let key = server.full_key().await;
    for path in ["/api/v1/catalog/index", "/api/v1/products?pageSize=500"] {
        let response = server
            .request(Method::GET, path)
            .bearer_auth(&key)
            .header("origin", page)
            .header("accept-encoding", "br")
            .send()
            .await
            .unwrap();
        assert_eq!(response.status(), 200, "{path}");
        assert_eq!(
            header(response.headers(), "content-encoding"),
            Some("br"),
            "{path}"
        );
        assert_eq!(
            header(response.headers(), "access-control-allow-origin"),
            Some(page)
        );
        let vary: Vec<String> = response
            .headers()
            .get_all("vary")
            .iter()
            .flat_map(|value| value.to_str().unwrap().split(','))
            .map(|name| name.trim().to_ascii_lowercase())
            .collect();
        assert!(
            vary.contains(&"accept-encoding".to_owned()) && vary.contains(&"origin".to_owned()),
            "{path}: Vary is {vary:?}"
        );
    }
}
