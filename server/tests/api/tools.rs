//! Installed tools over HTTP: each at its own origin with its security
//! headers, the tool list the app page reads, a folder served live with
//! `--dev-tool`, and installs that survive a restart.

use std::path::Path;

use reqwest::Method;
use serde_json::json;
use toolbridge_bundle::Bundle;
use toolbridge_server::tools::{self, DevTool, ToolSites, sites};

use crate::harness::{Server, json};

const ENTRY_HTML: &str = "<!doctype html><title>Demo</title><script src=\"/sdk/bridge.js\"></script><script src=\"app.js\"></script>";

/// Writes a small tool folder into `dir`: manifest, entry page, script.
fn write_tool(dir: &Path, version: &str, script: &str) {
    std::fs::create_dir_all(dir.join("img")).unwrap();
    let manifest = json!({
        "name": "Demo estimator",
        "shortName": "Demo",
        "type": "quoting_extension",
        "version": version,
        "description": "Adds demo lines.",
        "entry": "index.html",
    });
    std::fs::write(dir.join("manifest.json"), manifest.to_string()).unwrap();
    std::fs::write(dir.join("index.html"), ENTRY_HTML).unwrap();
    std::fs::write(dir.join("app.js"), script).unwrap();
    std::fs::write(
        dir.join("img").join("logo.svg"),
        "<svg xmlns=\"http://www.w3.org/2000/svg\"/>",
    )
    .unwrap();
}

/// A checked bundle of a tool folder written by [`write_tool`].
fn bundle(version: &str, script: &str) -> Bundle {
    let dir = tempfile::tempdir().unwrap();
    write_tool(dir.path(), version, script);
    toolbridge_bundle::read_dir(dir.path()).unwrap().bundle
}

/// A server with the demo tool installed, and an SDK to serve.
async fn server_with_demo_tool() -> (Server, tempfile::TempDir) {
    let sdk = tempfile::tempdir().unwrap();
    std::fs::write(sdk.path().join("bridge.js"), "window.bridge = {};").unwrap();
    let dir = sdk.path().to_owned();
    let server = Server::start_with(move |state| state.serving_sdk_from(dir)).await;
    let installed = tools::install(&server.store, &bundle("1.0.0", "console.log(1);"), None)
        .await
        .unwrap();
    assert_eq!(installed.tool.slug, "demo");
    assert!(installed.replaced.is_none());
    (server, sdk)
}

/// `GET path` on the tool's origin, the request line written as given; the
/// status and the body.
async fn raw_get(server: &Server, slug: &str, path: &str) -> (u16, String) {
    use tokio::io::{AsyncReadExt, AsyncWriteExt};
    let mut stream = tokio::net::TcpStream::connect(("127.0.0.1", server.port))
        .await
        .unwrap();
    let request = format!(
        "GET {path} HTTP/1.1\r\nHost: {slug}.{}:{}\r\nConnection: close\r\n\r\n",
        sites::DEFAULT_DOMAIN,
        server.port
    );
    stream.write_all(request.as_bytes()).await.unwrap();
    let mut answer = String::new();
    stream.read_to_string(&mut answer).await.unwrap();
    let status = answer
        .split(' ')
        .nth(1)
        .and_then(|code| code.parse().ok())
        .unwrap_or_else(|| panic!("no status line in {answer:?}"));
    (status, answer)
}

/// `GET /api/tools` as the signed-in user of `cookie`.
async fn tool_list(server: &Server, cookie: &str) -> (u16, serde_json::Value) {
    json(
        server
            .as_user(cookie, Method::GET, "/api/tools")
            .send()
            .await
            .unwrap(),
    )
    .await
}

/// `GET path` on the tool's origin: the status and the JSON body.
async fn tool_get(server: &Server, slug: &str, path: &str) -> (u16, serde_json::Value) {
    json(
        server
            .to_tool(slug, Method::GET, path)
            .send()
            .await
            .unwrap(),
    )
    .await
}

fn header<'r>(response: &'r reqwest::Response, name: &str) -> &'r str {
    response
        .headers()
        .get(name)
        .unwrap_or_else(|| panic!("no {name} header"))
        .to_str()
        .unwrap()
}

#[tokio::test]
async fn an_installed_tool_is_served_at_its_own_origin_with_its_policy() {
    let (server, _sdk) = server_with_demo_tool().await;
    let page = server
        .to_tool("demo", Method::GET, "/index.html")
        .send()
        .await
        .unwrap();
    assert_eq!(page.status(), 200);
    assert_eq!(header(&page, "content-type"), "text/html; charset=utf-8");
    assert_eq!(header(&page, "x-content-type-options"), "nosniff");
    let policy = header(&page, "content-security-policy").to_owned();
    assert!(
        policy.contains("script-src 'self' 'wasm-unsafe-eval'"),
        "{policy}"
    );
    assert!(
        policy.contains(&format!(
            "frame-ancestors http://localhost:{0} http://127.0.0.1:{0}",
            server.port
        )),
        "{policy}"
    );
    let etag = header(&page, "etag").to_owned();
    assert_eq!(page.text().await.unwrap(), ENTRY_HTML);

    let again = server
        .to_tool("demo", Method::GET, "/index.html")
        .header("if-none-match", &etag)
        .send()
        .await
        .unwrap();
    assert_eq!(again.status(), 304);

    let logo = server
        .to_tool("demo", Method::GET, "/img/logo.svg")
        .send()
        .await
        .unwrap();
    assert_eq!(logo.status(), 200);
    assert_eq!(header(&logo, "content-type"), "image/svg+xml");

    // The platform's SDK, at the same path on every tool origin.
    let sdk = server
        .to_tool("demo", Method::GET, sites::SDK_PATH)
        .send()
        .await
        .unwrap();
    assert_eq!(sdk.status(), 200);
    assert!(header(&sdk, "content-type").starts_with("text/javascript"));
    assert_eq!(sdk.text().await.unwrap(), "window.bridge = {};");
    // The page helpers beside it; the typings only on the app's origin.
    for path in sites::HELPER_PATHS {
        let helper = server
            .to_tool("demo", Method::GET, path)
            .send()
            .await
            .unwrap();
        assert_eq!(helper.status(), 200, "{path}");
        assert!(header(&helper, "content-security-policy").contains("script-src 'self'"));
    }
    let ui = server
        .to_tool("demo", Method::GET, "/sdk/ui.js")
        .send()
        .await
        .unwrap();
    assert!(header(&ui, "content-type").starts_with("text/javascript"));
    assert!(
        ui.text()
            .await
            .unwrap()
            .contains("export function formatter(")
    );
    let (status, _) = tool_get(&server, "demo", "/sdk/ui.d.ts").await;
    assert_eq!(status, 404);

    // The app's own origin does not serve tool files: its index.html is the app's page.
    let (status, _) = json(server.request(Method::GET, "/app.js").send().await.unwrap()).await;
    assert_eq!(status, 404);
    let page = server
        .request(Method::GET, "/index.html")
        .send()
        .await
        .unwrap();
    assert_eq!(page.status(), 200);
    assert_ne!(page.text().await.unwrap(), ENTRY_HTML);
}

#[tokio::test]
async fn a_tool_origin_redirects_its_root_to_the_entry_page() {
    let (server, _sdk) = server_with_demo_tool().await;
    let client = reqwest::Client::builder()
        .redirect(reqwest::redirect::Policy::none())
        .build()
        .unwrap();
    let response = client
        .get(format!("{}/", server.base))
        .header(
            "host",
            format!("demo.{}:{}", sites::DEFAULT_DOMAIN, server.port),
        )
        .send()
        .await
        .unwrap();
    assert_eq!(response.status(), 302);
    assert_eq!(header(&response, "location"), "/index.html");
}

#[tokio::test]
async fn a_tool_origin_refuses_what_is_not_a_file_of_the_tool() {
    let (server, _sdk) = server_with_demo_tool().await;
    // Sent byte for byte: an HTTP client library would tidy `..` away.
    for path in [
        "/missing.js",
        "/../manifest.json",
        "/%2e%2e/manifest.json",
        "/img/../../etc/passwd",
        "/img/%2e%2e/%2e%2e/etc/passwd",
        "/img%5clogo.svg",
        "/index.html%00.js",
        "/C:/windows/win.ini",
        "/img/",
        "//index.html",
    ] {
        let (status, body) = raw_get(&server, "demo", path).await;
        assert_eq!(status, 404, "{path}: {body}");
        assert!(body.contains("NOT_FOUND"), "{path}: {body}");
    }

    let (status, body) = tool_get(&server, "nobody", "/index.html").await;
    assert_eq!(status, 404);
    assert!(
        body["detail"].as_str().unwrap().contains("\"nobody\""),
        "{body}"
    );

    let posted = server
        .to_tool("demo", Method::POST, "/index.html")
        .send()
        .await
        .unwrap();
    assert_eq!(posted.status(), 405);
    assert_eq!(header(&posted, "allow"), "GET, HEAD");

    assert!(server.store.set_tool_enabled("demo", false).await.unwrap());
    let (status, body) = tool_get(&server, "demo", "/index.html").await;
    assert_eq!(status, 404);
    assert!(
        body["detail"].as_str().unwrap().contains("disabled"),
        "{body}"
    );
}

#[tokio::test]
async fn installing_again_replaces_the_whole_tool_and_a_restart_keeps_it() {
    let (server, _sdk) = server_with_demo_tool().await;
    let newer = tempfile::tempdir().unwrap();
    write_tool(newer.path(), "1.1.0", "console.log(2);");
    std::fs::remove_file(newer.path().join("img").join("logo.svg")).unwrap();
    let newer_bundle = toolbridge_bundle::read_dir(newer.path()).unwrap().bundle;
    let installed = tools::install(&server.store, &newer_bundle, None)
        .await
        .unwrap();
    assert_eq!(installed.replaced.unwrap().manifest.version, "1.0.0");
    assert_eq!(installed.tool.manifest.version, "1.1.0");
    assert_eq!(installed.tool.file_count, 3);

    let db = server.db.clone();
    let dir = server.stop().await;
    let server = Server::start_on(&db).await;
    let script = server
        .to_tool("demo", Method::GET, "/app.js")
        .send()
        .await
        .unwrap();
    assert_eq!(script.status(), 200);
    assert_eq!(script.text().await.unwrap(), "console.log(2);");
    let gone = server
        .to_tool("demo", Method::GET, "/img/logo.svg")
        .send()
        .await
        .unwrap();
    assert_eq!(gone.status(), 404);
    drop(dir);
}

#[tokio::test]
async fn the_app_page_lists_the_enabled_tools_ready_to_mount() {
    let (server, _sdk) = server_with_demo_tool().await;
    let cookie = server.sign_in("office@harbour.test").await;
    let (status, listed) = tool_list(&server, &cookie).await;
    assert_eq!(status, 200, "{listed}");
    assert_eq!(
        listed,
        json!([{
            "slug": "demo",
            "name": "Demo estimator",
            "shortName": "Demo",
            "type": "quoting_extension",
            "version": "1.0.0",
            "description": "Adds demo lines.",
            "origin": format!("http://demo.tools.localhost:{}", server.port),
            "entry": "/index.html",
            "dev": false,
            "settings": {},
            "identity": false,
            "connect": [],
        }])
    );

    server.store.set_tool_enabled("demo", false).await.unwrap();
    let (_, listed) = tool_list(&server, &cookie).await;
    assert_eq!(listed, json!([]));

    let (status, _) = json(
        server
            .request(Method::GET, "/api/tools")
            .send()
            .await
            .unwrap(),
    )
    .await;
    assert_eq!(status, 401);
    let key = server.full_key().await;
    let (status, body) = json(server.get(&key, "/api/tools").await).await;
    assert_eq!(status, 403, "{body}");
}

#[tokio::test]
async fn a_dev_tool_folder_is_served_as_it_is_now() {
    let folder = tempfile::tempdir().unwrap();
    write_tool(folder.path(), "0.1.0", "console.log('first');");
    let dir = folder.path().to_owned();
    let server = Server::start_with(move |state| {
        let sites = ToolSites::clone(&state.tool_sites).with_dev_tool(DevTool {
            slug: "demo".to_owned(),
            dir,
        });
        state.serving_tools(sites)
    })
    .await;
    let read = |server: &Server| server.to_tool("demo", Method::GET, "/app.js").send();
    assert_eq!(
        read(&server).await.unwrap().text().await.unwrap(),
        "console.log('first');"
    );
    std::fs::write(folder.path().join("app.js"), "console.log('edited');").unwrap();
    assert_eq!(
        read(&server).await.unwrap().text().await.unwrap(),
        "console.log('edited');"
    );

    let cookie = server.sign_in("office@harbour.test").await;
    let (_, listed) = tool_list(&server, &cookie).await;
    assert_eq!(listed[0]["slug"], "demo");
    assert_eq!(listed[0]["dev"], true);

    // A file the bundle rules refuse makes the whole folder refuse, naming it.
    std::fs::write(folder.path().join("setup.exe"), "MZ").unwrap();
    let (status, body) = json(read(&server).await.unwrap()).await;
    assert_eq!(status, 422, "{body}");
    assert_eq!(body["errors"][0]["path"], "setup.exe", "{body}");
    let (_, listed) = tool_list(&server, &cookie).await;
    assert_eq!(listed, json!([]));
}

#[tokio::test]
async fn the_example_tools_install_on_a_new_database() {
    let server = Server::start().await;
    let examples = Path::new(env!("CARGO_MANIFEST_DIR")).join("../example-tools");
    let outcomes = tools::install_examples(&server.store, &examples).await;
    let installed: Vec<_> = outcomes
        .into_iter()
        .map(|outcome| outcome.unwrap())
        .map(|installed| {
            (
                installed.tool.slug,
                installed.tool.manifest.tool_type.token(),
            )
        })
        .collect();
    assert_eq!(
        installed,
        [
            ("flooring".to_owned(), "quoting_extension"),
            ("job-lookup".to_owned(), "standalone"),
            ("quick-quote".to_owned(), "standalone"),
            ("supplier-prices".to_owned(), "quoting_extension"),
        ]
    );
}
