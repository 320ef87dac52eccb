//! A server told its public URLs (`--public-url https://…`, `--tools-url https://{slug}.…`), as
//! behind a proxy that terminates TLS: every origin it writes is https and names no port of its
//! own, its session cookie is `Secure` with the `__Host-` prefix, and it sends
//! `Strict-Transport-Security`; the local defaults keep plain HTTP without either.

use reqwest::Method;
use serde_json::{Value, json};
use toolbridge_server::public_urls::PublicUrls;
use toolbridge_server::tools::{self, ToolSites};

use crate::harness::{Server, json};
use crate::serving::toolbridge;

const APP: &str = "https://app.example.test";
const TOOLS: &str = "https://{slug}.tools.example.test";

/// A server whose public URLs are [`APP`] and [`TOOLS`], with a tool installed as `probe`.
async fn public_server() -> Server {
    let server = Server::start_with(|state| {
        let urls = PublicUrls::new(Some(APP), Some(TOOLS), 0).unwrap();
        state.serving_tools(ToolSites::new(urls))
    })
    .await;
    let dir = tempfile::tempdir().unwrap();
    let manifest = json!({
        "name": "Probe", "shortName": "Probe", "type": "quoting_extension", "version": "1.0.0",
        "description": "A page.", "entry": "index.html",
    });
    std::fs::write(dir.path().join("manifest.json"), manifest.to_string()).unwrap();
    std::fs::write(
        dir.path().join("index.html"),
        "<!doctype html><title>Probe</title>",
    )
    .unwrap();
    let bundle = toolbridge_bundle::read_dir(dir.path()).unwrap().bundle;
    tools::install(&server.store, &bundle, Some("probe"))
        .await
        .unwrap();
    server
}

fn header(response: &reqwest::Response, name: &str) -> String {
    response
        .headers()
        .get(name)
        .map(|value| value.to_str().unwrap().to_owned())
        .unwrap_or_default()
}

/// Signs in as the demo office user; the whole `Set-Cookie`.
async fn sign_in(server: &Server) -> String {
    let response = server
        .request(Method::POST, "/api/session")
        .header("sec-fetch-site", "same-origin")
        .json(&json!({"email": "office@harbour.test", "password": "demo-password"}))
        .send()
        .await
        .unwrap();
    assert_eq!(response.status(), 200);
    header(&response, "set-cookie")
}

#[tokio::test]
async fn an_https_app_writes_only_https_origins_without_its_own_port() {
    let server = public_server().await;
    let page = server.request(Method::GET, "/").send().await.unwrap();
    assert_eq!(page.status(), 200);
    let policy = header(&page, "content-security-policy");
    assert!(
        policy.contains("frame-src https://*.tools.example.test;"),
        "{policy}"
    );
    let cookie = sign_in(&server).await;
    let session = cookie.split(';').next().unwrap().to_owned();
    let (status, listed) = json(
        server
            .as_user(&session, Method::GET, "/api/tools")
            .send()
            .await
            .unwrap(),
    )
    .await;
    assert_eq!(status, 200, "{listed}");
    assert_eq!(listed[0]["origin"], "https://probe.tools.example.test");
    let tool = server
        .request(Method::GET, "/index.html")
        .header("host", "probe.tools.example.test")
        .send()
        .await
        .unwrap();
    assert_eq!(tool.status(), 200);
    let tool_policy = header(&tool, "content-security-policy");
    assert!(
        tool_policy.ends_with(&format!("frame-ancestors {APP}")),
        "{tool_policy}"
    );
    for written in [&policy, &tool_policy, &listed.to_string()] {
        assert!(!written.contains("http://"), "{written}");
        assert!(
            !written.contains(&format!(":{}", server.port)),
            "the bound port in {written}"
        );
    }
}

#[tokio::test]
async fn an_https_app_sets_a_secure_host_only_cookie_and_sends_hsts() {
    let server = public_server().await;
    let cookie = sign_in(&server).await;
    assert!(cookie.starts_with("__Host-tb_session="), "{cookie}");
    let attributes: Vec<&str> = cookie.split("; ").collect();
    for attribute in ["Secure", "HttpOnly", "SameSite=Strict", "Path=/"] {
        assert!(attributes.contains(&attribute), "{attribute}: {cookie}");
    }
    assert!(!cookie.contains("Domain"), "{cookie}");
    let session = cookie.split(';').next().unwrap().to_owned();
    let me = server
        .as_user(&session, Method::GET, "/api/session")
        .send()
        .await
        .unwrap();
    assert_eq!(me.status(), 200);
    assert_eq!(header(&me, "strict-transport-security"), "max-age=31536000");
    // The plain name is not the session on an https app.
    let token = session.split_once('=').unwrap().1;
    let plain = server
        .as_user(&format!("tb_session={token}"), Method::GET, "/api/session")
        .send()
        .await
        .unwrap();
    assert_eq!(plain.status(), 401);
    // A tool's origin gets HSTS too.
    let tool = server
        .request(Method::GET, "/")
        .header("host", "probe.tools.example.test")
        .send()
        .await
        .unwrap();
    assert_eq!(
        header(&tool, "strict-transport-security"),
        "max-age=31536000"
    );
    // Without Sec-Fetch-Site, an Origin naming the public URL is the app's own.
    let (status, body): (u16, Value) = json(
        server
            .request(Method::GET, "/api/session")
            .header("cookie", &session)
            .header("origin", APP)
            .send()
            .await
            .unwrap(),
    )
    .await;
    assert_eq!(status, 200, "{body}");
    let (status, body) = json(
        server
            .request(Method::GET, "/api/session")
            .header("cookie", &session)
            .header("origin", "https://evil.example.test")
            .send()
            .await
            .unwrap(),
    )
    .await;
    assert_eq!(status, 403, "{body}");
}

#[tokio::test]
async fn the_local_defaults_keep_plain_http_without_hsts() {
    let server = Server::start().await;
    let cookie = sign_in(&server).await;
    assert!(cookie.starts_with("tb_session="), "{cookie}");
    assert!(!cookie.contains("Secure"), "{cookie}");
    let page = server
        .request(Method::GET, "/api/session")
        .send()
        .await
        .unwrap();
    assert!(page.headers().get("strict-transport-security").is_none());
}

/// `toolbridge serve` with `args` on a fresh database in a folder of its own; what it said and
/// whether it succeeded. Every case here is refused before it listens.
fn serve_refused(args: &[&str]) -> String {
    let work = tempfile::tempdir().unwrap();
    let output = toolbridge(work.path())
        .args(["serve", "--port", "0", "--db", "db.sqlite3"])
        .args(args)
        .output()
        .unwrap();
    assert!(!output.status.success(), "{args:?} was taken");
    assert!(
        !work.path().join("db.sqlite3").exists(),
        "{args:?}: a database was made before the refusal"
    );
    String::from_utf8_lossy(&output.stderr).into_owned()
}

#[test]
fn serve_refuses_public_urls_it_cannot_serve_with_the_reason() {
    let said = serve_refused(&["--tools-url", "https://tools.example.com"]);
    assert!(
        said.contains("--tools-url https://tools.example.com: there is no {slug}"),
        "{said}"
    );
    let said = serve_refused(&["--tools-url", "https://{slug}.tools.example.com/app"]);
    assert!(said.contains("no path (/app)"), "{said}");
    let said = serve_refused(&[
        "--public-url",
        "https://app.example.com",
        "--tools-url",
        "http://{slug}.tools.example.com",
    ]);
    assert!(said.contains("browsers refuse an http frame"), "{said}");
    let said = serve_refused(&["--public-url", "app.example.com"]);
    assert!(
        said.contains("--public-url app.example.com: not a URL"),
        "{said}"
    );
}
