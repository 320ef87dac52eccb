//! One file to deploy: the release binary copied alone into an empty folder outside the
//! checkout, started there with `--demo` and no folder flags, serves the app, bridge.js, the
//! host module and the documentation from the copies it carries (the same bytes as the working tree's, which
//! `cargo xtask test` built before it), compressed when asked, and gives the demo database the
//! example tools it carries.

use std::fs;
use std::io::Read as _;
use std::net::{Ipv4Addr, SocketAddr, TcpListener, TcpStream};
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

use reqwest::header::{ACCEPT_ENCODING, CONTENT_ENCODING, CONTENT_TYPE, ETAG, IF_NONE_MATCH};
use reqwest::{Client, Response};
use serde_json::{Value, json};

use crate::server::{BIN_VAR, setting, work_dir};

/// The repository's root, whose folders the binary was built from.
fn root() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .parent()
        .expect("the tests crate is in the workspace")
        .to_path_buf()
}

/// The example tools' folders (with their slugs) the demo database must get.
const EXAMPLES: [(&str, &str); 4] = [
    ("flooring-estimator", "flooring"),
    ("quick-quote", "quick-quote"),
    ("job-lookup", "job-lookup"),
    ("supplier-prices", "supplier-prices"),
];

/// The binary, running in its folder; killed when dropped.
struct Deployed {
    child: Child,
    port: u16,
    log: PathBuf,
}

impl Drop for Deployed {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

impl Deployed {
    /// Copies the release binary alone into `dir` and starts it there as an operator would:
    /// `toolbridge serve --demo`, its database in `dir`, no folder flags, nothing of the
    /// checkout in reach. Its output goes to `log`.
    async fn start(dir: &Path, log: &Path) -> Self {
        let built = setting(BIN_VAR);
        let binary = dir.join("toolbridge");
        fs::copy(&built, &binary).unwrap_or_else(|e| {
            panic!(
                "cannot copy {} into {}: {e}",
                built.display(),
                dir.display()
            )
        });
        let port = TcpListener::bind((Ipv4Addr::LOCALHOST, 0))
            .and_then(|listener| listener.local_addr())
            .map(|address| address.port())
            .expect("the OS gives out a free port");
        let output = fs::File::create(log)
            .unwrap_or_else(|e| panic!("cannot create {}: {e}", log.display()));
        let child = Command::new(&binary)
            .args(["serve", "--demo", "--port", &port.to_string()])
            .args(["--seed-products", "50"])
            .current_dir(dir)
            // The database is the default file in the folder, whatever the tests' environment says.
            .env_remove("TOOLBRIDGE_DATABASE_URL")
            .env("RUST_LOG", "warn")
            .stdin(Stdio::null())
            .stdout(output.try_clone().expect("the log opens twice"))
            .stderr(output)
            .spawn()
            .unwrap_or_else(|e| panic!("cannot start {}: {e}", binary.display()));
        let mut deployed = Self {
            child,
            port,
            log: log.to_path_buf(),
        };
        deployed.wait_until_listening().await;
        deployed
    }

    async fn wait_until_listening(&mut self) {
        let address = SocketAddr::from((Ipv4Addr::LOCALHOST, self.port));
        let started = Instant::now();
        while started.elapsed() < Duration::from_secs(60) {
            if let Some(status) = self.child.try_wait().expect("the server can be polled") {
                panic!(
                    "the copied server exited ({status}) before it listened:\n{}",
                    self.said()
                );
            }
            if TcpStream::connect_timeout(&address, Duration::from_millis(200)).is_ok() {
                return;
            }
            tokio::time::sleep(Duration::from_millis(50)).await;
        }
        panic!(
            "the copied server did not listen within 60 s:\n{}",
            self.said()
        );
    }

    /// What the server printed so far.
    fn said(&self) -> String {
        fs::read_to_string(&self.log).unwrap_or_default()
    }

    fn url(&self, path: &str) -> String {
        format!("http://127.0.0.1:{}{path}", self.port)
    }
}

/// A file of the working tree, which the binary must carry byte for byte.
fn checkout_file(path: &str) -> Vec<u8> {
    let path = root().join(path);
    fs::read(&path).unwrap_or_else(|e| {
        panic!(
            "cannot read {}: {e}; `cargo xtask test` builds it before the release server",
            path.display()
        )
    })
}

/// The body of `response`, decoded from brotli when it says it is.
async fn body(response: Response) -> Vec<u8> {
    let brotli = response
        .headers()
        .get(CONTENT_ENCODING)
        .is_some_and(|coding| coding == "br");
    let bytes = response.bytes().await.expect("the body arrives").to_vec();
    if !brotli {
        return bytes;
    }
    let mut decoded = Vec::new();
    brotli::Decompressor::new(&bytes[..], 4096)
        .read_to_end(&mut decoded)
        .expect("the brotli body decodes");
    decoded
}

fn header(response: &Response, name: &reqwest::header::HeaderName) -> String {
    response
        .headers()
        .get(name)
        .and_then(|value| value.to_str().ok())
        .unwrap_or_default()
        .to_owned()
}

/// `path` is served as `media_type` with the bytes of `file`: as they are without
/// `Accept-Encoding`, and in brotli when a browser asks (for a file big enough to compress),
/// answering `304` to its `ETag`.
async fn serves_the_checkouts_file(
    client: &Client,
    server: &Deployed,
    path: &str,
    file: &str,
    media_type: &str,
) {
    let expected = checkout_file(file);
    assert!(!expected.is_empty(), "{file} is empty");
    let plain = client.get(server.url(path)).send().await.unwrap();
    assert_eq!(plain.status(), 200, "GET {path}:\n{}", server.said());
    assert!(
        header(&plain, &CONTENT_TYPE).starts_with(media_type),
        "GET {path}: {:?}",
        plain.headers()
    );
    assert_eq!(header(&plain, &CONTENT_ENCODING), "");
    assert!(body(plain).await == expected, "GET {path} is not {file}");

    let compressed = client
        .get(server.url(path))
        .header(ACCEPT_ENCODING, "gzip, deflate, br")
        .send()
        .await
        .unwrap();
    assert_eq!(compressed.status(), 200);
    if expected.len() >= 1024 {
        assert_eq!(header(&compressed, &CONTENT_ENCODING), "br", "GET {path}");
    }
    let etag = header(&compressed, &ETAG);
    assert!(
        body(compressed).await == expected,
        "GET {path} in brotli is not {file}"
    );
    let again = client
        .get(server.url(path))
        .header(ACCEPT_ENCODING, "gzip, deflate, br")
        .header(IF_NONE_MATCH, &etag)
        .send()
        .await
        .unwrap();
    assert_eq!(again.status(), 304, "GET {path} with If-None-Match: {etag}");
}

/// What the binary carries, by address: the file of the working tree it must answer with, and
/// its media type. The app's page and stylesheet; the SDK; the host module; the documentation's
/// start page, its error code page at the address problems name, and the API reference's
/// renderer.
const CARRIED: [(&str, &str, &str); 8] = [
    ("/", "www/index.html", "text/html"),
    ("/css/app.css", "www/css/app.css", "text/css"),
    ("/sdk/bridge.js", "sdk/dist/bridge.js", "text/javascript"),
    (
        "/host/toolbridge_host.js",
        "host/dist/toolbridge_host.js",
        "text/javascript",
    ),
    (
        "/host/toolbridge_host_bg.wasm",
        "host/dist/toolbridge_host_bg.wasm",
        "application/wasm",
    ),
    ("/docs/", "docs/book/index.html", "text/html"),
    ("/docs/errors", "docs/book/errors.html", "text/html"),
    (
        "/docs/api/redoc.standalone.js",
        "docs/book/api/redoc.standalone.js",
        "text/javascript",
    ),
];

#[tokio::test]
async fn the_release_binary_alone_serves_the_app_the_sdk_the_host_the_docs_and_the_example_tools() {
    let logs = work_dir("one-binary");
    // Outside the checkout: no `www` or `sdk/dist` the server could find by a relative path.
    let folder = tempfile::tempdir().expect("a temporary folder");
    let server = Deployed::start(folder.path(), &logs.join("server.log")).await;
    let client = Client::builder()
        .timeout(Duration::from_secs(30))
        .build()
        .unwrap();

    // The app's page, at the root and at one of the app's own addresses.
    for path in ["/", "/quotes/3f2a"] {
        let page = client.get(server.url(path)).send().await.unwrap();
        assert_eq!(page.status(), 200, "GET {path}:\n{}", server.said());
        assert!(header(&page, &CONTENT_TYPE).starts_with("text/html"));
        assert!(
            !header(&page, &reqwest::header::CONTENT_SECURITY_POLICY).is_empty(),
            "the app's page has a Content-Security-Policy"
        );
        assert!(body(page).await == checkout_file("www/index.html"));
    }
    for (path, file, media_type) in CARRIED {
        serves_the_checkouts_file(&client, &server, path, file, media_type).await;
    }

    // The demo database got the example tools the binary carries: the app lists them, and each
    // tool's origin serves its page.
    let signed_in = client
        .post(server.url("/api/session"))
        .header("sec-fetch-site", "same-origin")
        .json(&json!({"email": "office@harbour.test", "password": "demo-password"}))
        .send()
        .await
        .unwrap();
    assert_eq!(signed_in.status(), 200, "{}", server.said());
    let cookie = header(&signed_in, &reqwest::header::SET_COOKIE);
    let cookie = cookie.split(';').next().unwrap_or_default().to_owned();
    let listed = client
        .get(server.url("/api/tools"))
        .header("cookie", &cookie)
        .header("sec-fetch-site", "same-origin")
        .send()
        .await
        .unwrap();
    assert_eq!(listed.status(), 200);
    let listed: Value = listed.json().await.unwrap();
    let slugs: Vec<&str> = listed
        .as_array()
        .expect("the tool list is an array")
        .iter()
        .filter_map(|tool| tool["slug"].as_str())
        .collect();
    for (folder, slug) in EXAMPLES {
        assert!(
            slugs.contains(&slug),
            "{slug} in {listed}:\n{}",
            server.said()
        );
        let page = client
            .get(server.url("/index.html"))
            .header("host", format!("{slug}.tools.localhost:{}", server.port))
            .send()
            .await
            .unwrap();
        assert_eq!(page.status(), 200, "{slug}'s page");
        assert!(
            body(page).await == checkout_file(&format!("example-tools/{folder}/index.html")),
            "{slug}'s page is its folder's index.html"
        );
    }
    let said = server.said();
    assert!(
        !said.contains("was not installed") && !said.contains("No example tools"),
        "{said}"
    );
}
