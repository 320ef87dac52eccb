//! The server's fetch for tools over HTTP (`POST /api/v1/tools/{slug}/fetch`): a real upstream
//! over https on loopback, with a CA of the test's own that the server trusts (`--trust-ca`) and
//! its address allowed (`--allow-private-fetch`). Secrets reach the upstream and nothing else;
//! bodies go both ways unchanged; every refusal comes with its code.

use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use reqwest::Method;
use serde_json::{Value, json};
use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::TcpListener;
use tokio::sync::Notify;
use tokio_rustls::TlsAcceptor;
use tokio_rustls::rustls::ServerConfig;
use tokio_rustls::rustls::pki_types::{CertificateDer, PrivateKeyDer, PrivatePkcs8KeyDer};
use toolbridge_e2e::tls::TestTls;
use toolbridge_protocol::fetch::{BODY_MAX_BYTES, IN_FLIGHT_MAX, decode_bytes, encode_bytes};
use toolbridge_server::AppState;
use toolbridge_server::outgoing::TrustedRoots;
use toolbridge_store::SecretsKey;

use crate::harness::{Server, call, json, upload};
use crate::serving::{DEMO, Serving};
use crate::tool_settings::{listed, manifest, put_settings, zip};

/// The secrets the tests set: none may show anywhere but at the upstream.
const API_KEY: &str = "sk-live-7f3a&key=1 2";
const USER: &str = "ann@vendor";
const PASSWORD: &str = "pa:ss{{token}}";

/// What the upstream received.
#[derive(Debug, Clone)]
struct Seen {
    method: String,
    target: String,
    headers: Vec<(String, String)>,
    body: Vec<u8>,
}

impl Seen {
    fn header(&self, name: &str) -> Option<&str> {
        self.headers
            .iter()
            .find(|(n, _)| n.eq_ignore_ascii_case(name))
            .map(|(_, v)| v.as_str())
    }
}

/// A tool vendor's server over https on loopback, one request per connection:
/// `/echo` answers the body it got, `/big` 5 MiB and a byte more (without a length), `/slow`
/// after 20 s, `/redirect` a 302, `/hold` once released, `/gzip`, `/br`, `/gzip-bomb` and
/// `/gzip-corrupt` compressed ([`compressed`]), anything else `ok`.
struct Upstream {
    port: u16,
    ca_pem: String,
    seen: Arc<Mutex<Vec<Seen>>>,
    holding: Arc<AtomicUsize>,
    release: Arc<Notify>,
}

impl Upstream {
    async fn start() -> Self {
        let (ca_pem, config) = tls();
        let acceptor = TlsAcceptor::from(Arc::new(config));
        let listener = TcpListener::bind("127.0.0.1:0").await.unwrap();
        let port = listener.local_addr().unwrap().port();
        let seen = Arc::new(Mutex::new(Vec::new()));
        let holding = Arc::new(AtomicUsize::new(0));
        let release = Arc::new(Notify::new());
        let (seen_, holding_, release_) = (seen.clone(), holding.clone(), release.clone());
        tokio::spawn(async move {
            loop {
                let Ok((tcp, _)) = listener.accept().await else {
                    return;
                };
                let acceptor = acceptor.clone();
                let (seen, holding, release) = (seen_.clone(), holding_.clone(), release_.clone());
                tokio::spawn(async move {
                    if let Ok(stream) = acceptor.accept(tcp).await {
                        Box::pin(answer(stream, &seen, &holding, &release)).await;
                    }
                });
            }
        });
        Self {
            port,
            ca_pem,
            seen,
            holding,
            release,
        }
    }

    fn origin(&self) -> String {
        format!("https://localhost:{}", self.port)
    }

    fn last(&self) -> Seen {
        self.seen.lock().unwrap().last().cloned().unwrap()
    }
}

/// A CA (as PEM) and a server configuration with a certificate for `localhost` it signed (the
/// suites' own CA maker, `toolbridge_e2e::tls`).
fn tls() -> (String, ServerConfig) {
    let dir = tempfile::tempdir().unwrap();
    let made = TestTls::make(dir.path(), "fetch test", &["localhost".to_owned()], &[]).unwrap();
    let provider = Arc::new(tokio_rustls::rustls::crypto::ring::default_provider());
    let config = ServerConfig::builder_with_provider(provider)
        .with_safe_default_protocol_versions()
        .unwrap()
        .with_no_client_auth()
        .with_single_cert(
            vec![CertificateDer::from(made.cert_der)],
            PrivateKeyDer::Pkcs8(PrivatePkcs8KeyDer::from(made.key_der)),
        )
        .unwrap();
    (made.ca_pem, config)
}

/// Reads one request from `stream`, records it and answers it.
async fn answer<S: tokio::io::AsyncRead + tokio::io::AsyncWrite + Unpin>(
    mut stream: S,
    seen: &Mutex<Vec<Seen>>,
    holding: &AtomicUsize,
    release: &Notify,
) {
    let mut buffer = Vec::new();
    let mut chunk = vec![0u8; 16 * 1024];
    let head_end = loop {
        if let Some(end) = buffer.windows(4).position(|w| w == b"\r\n\r\n") {
            break end;
        }
        match stream.read(&mut chunk).await {
            Ok(0) | Err(_) => return,
            Ok(n) => buffer.extend_from_slice(&chunk[..n]),
        }
    };
    let head = String::from_utf8_lossy(&buffer[..head_end]).into_owned();
    let mut lines = head.split("\r\n");
    let mut first = lines.next().unwrap_or_default().split(' ');
    let method = first.next().unwrap_or_default().to_owned();
    let target = first.next().unwrap_or_default().to_owned();
    let headers: Vec<(String, String)> = lines
        .filter_map(|line| line.split_once(':'))
        .map(|(name, value)| (name.trim().to_owned(), value.trim().to_owned()))
        .collect();
    let length: usize = headers
        .iter()
        .find(|(name, _)| name.eq_ignore_ascii_case("content-length"))
        .and_then(|(_, value)| value.parse().ok())
        .unwrap_or(0);
    let mut body = buffer[head_end + 4..].to_vec();
    while body.len() < length {
        match stream.read(&mut chunk).await {
            Ok(0) | Err(_) => return,
            Ok(n) => body.extend_from_slice(&chunk[..n]),
        }
    }
    let request = Seen {
        method,
        target: target.clone(),
        headers,
        body,
    };
    seen.lock().unwrap().push(request.clone());
    let path = target.split('?').next().unwrap_or_default();
    let (status, extra, payload): (&str, &str, Vec<u8>) = match path {
        "/echo" => (
            "200 OK",
            "Content-Type: application/octet-stream\r\nX-Echo: yes\r\nSet-Cookie: session=1\r\n",
            request.body,
        ),
        "/big" => {
            let head = "HTTP/1.1 200 OK\r\nConnection: close\r\n\r\n";
            let _ = stream.write_all(head.as_bytes()).await;
            let _ = stream.write_all(&vec![b'x'; BODY_MAX_BYTES + 1]).await;
            let _ = stream.shutdown().await;
            return;
        }
        "/slow" => {
            tokio::time::sleep(Duration::from_secs(20)).await;
            ("200 OK", "", b"late".to_vec())
        }
        "/gzip" | "/br" | "/gzip-bomb" | "/gzip-corrupt" => {
            let (extra, encoded) = compressed(path, &request).await;
            ("200 OK", extra, encoded)
        }
        "/redirect" => (
            "302 Found",
            "Location: https://example.com/elsewhere\r\n",
            Vec::new(),
        ),
        "/hold" => {
            let released = release.notified();
            holding.fetch_add(1, Ordering::SeqCst);
            let _ = tokio::time::timeout(Duration::from_secs(10), released).await;
            ("200 OK", "", b"held".to_vec())
        }
        _ => ("200 OK", "Content-Type: text/plain\r\n", b"ok".to_vec()),
    };
    let head = format!(
        "HTTP/1.1 {status}\r\n{extra}Content-Length: {}\r\nConnection: close\r\n\r\n",
        payload.len()
    );
    let _ = stream.write_all(head.as_bytes()).await;
    let _ = stream.write_all(&payload).await;
    let _ = stream.shutdown().await;
}

/// The answer to `/gzip`, `/br`, `/gzip-bomb` and `/gzip-corrupt`, compressed as `request` asks:
/// its extra headers and body. The text as gzip or brotli, 5 MiB and a byte of zeros as gzip (a
/// few kilobytes), or bytes that say they are gzip and are not; plain when not asked.
async fn compressed(path: &str, request: &Seen) -> (&'static str, Vec<u8>) {
    let accepts = |coding: &str| {
        request
            .header("accept-encoding")
            .is_some_and(|accepted| accepted.split(',').any(|c| c.trim() == coding))
    };
    let text = b"compressed on the way, plain at the tool";
    let mut encoded = Vec::new();
    let extra = match path {
        "/br" if accepts("br") => {
            async_compression::tokio::bufread::BrotliEncoder::new(&text[..])
                .read_to_end(&mut encoded)
                .await
                .unwrap();
            "Content-Type: text/plain\r\nContent-Encoding: br\r\n"
        }
        "/gzip-corrupt" if accepts("gzip") => {
            encoded = b"\x1f\x8b not gzip after all".to_vec();
            "Content-Type: text/plain\r\nContent-Encoding: gzip\r\n"
        }
        "/gzip" | "/gzip-bomb" if accepts("gzip") => {
            let plain = if path == "/gzip" {
                text.to_vec()
            } else {
                vec![0; BODY_MAX_BYTES + 1]
            };
            async_compression::tokio::bufread::GzipEncoder::new(plain.as_slice())
                .read_to_end(&mut encoded)
                .await
                .unwrap();
            "Content-Type: text/plain\r\nContent-Encoding: gzip\r\n"
        }
        _ => {
            encoded = text.to_vec();
            "Content-Type: text/plain\r\n"
        }
    };
    (extra, encoded)
}

/// The vendor tool's manifest: three secrets, a plain setting, the upstream's origin (and the
/// same port on 127.0.0.1, which is not allowed) and the identity token.
fn vendor_manifest(upstream: &Upstream) -> Value {
    manifest(
        "Vendor",
        "1.0.0",
        &json!({
            "settings": [
                {"key": "apiKey", "label": "API key", "type": "string", "secret": true},
                {"key": "user", "label": "User", "type": "string", "secret": true},
                {"key": "password", "label": "Password", "type": "string", "secret": true},
                {"key": "unset", "label": "Never set", "type": "string", "secret": true},
                {"key": "region", "label": "Region", "type": "string"}
            ],
            "permissions": {
                "connect": [upstream.origin(), format!("https://127.0.0.1:{}", upstream.port)],
                "identity": true
            }
        }),
    )
}

/// A server trusting the upstream's CA and allowing `localhost` on its port, with the vendor
/// tool installed and its secrets set by the admin; the admin's and an office user's sessions.
async fn vendor() -> (Server, Upstream, String, String) {
    vendor_sealing(None).await
}

/// [`vendor`] on a store that seals secrets with `key`, when there is one.
async fn vendor_sealing(key: Option<SecretsKey>) -> (Server, Upstream, String, String) {
    let upstream = Upstream::start().await;
    let roots = TrustedRoots::from_pem(upstream.ca_pem.as_bytes()).unwrap();
    let allowed = format!("localhost:{}", upstream.port).parse().unwrap();
    let configure = |state: AppState| {
        state
            .trusting_roots(roots)
            .allowing_private_fetch(vec![allowed])
    };
    let server = match key {
        Some(key) => Server::start_sealing(key, configure).await,
        None => Server::start_with(configure).await,
    };
    let admin = server.sign_in("admin@harbour.test").await;
    let (status, installed) = upload(&server, &admin, zip(&vendor_manifest(&upstream))).await;
    assert_eq!(status, 201, "{installed}");
    let values = json!({"apiKey": API_KEY, "user": USER, "password": PASSWORD, "region": "North"});
    let (status, saved) = put_settings(&server, &admin, "vendor", &values).await;
    assert_eq!(status, 200, "{saved}");
    let office = server.sign_in("office@harbour.test").await;
    (server, upstream, admin, office)
}

async fn fetch(server: &Server, cookie: &str, request: &Value) -> (u16, Value) {
    call(
        server,
        cookie,
        Method::POST,
        "/api/v1/tools/vendor/fetch",
        Some(request),
    )
    .await
}

fn body_of(answer: &Value) -> Vec<u8> {
    decode_bytes(answer["body"].as_str().unwrap()).unwrap()
}

fn assert_no_secret(text: &str) {
    for secret in [API_KEY, USER, PASSWORD, "sk-live-7f3a"] {
        assert!(!text.contains(secret), "{secret:?} shows in {text}");
    }
}

#[tokio::test]
async fn secrets_reach_the_upstream_in_headers_query_and_body_and_nowhere_else() {
    let (server, upstream, admin, office) = vendor().await;
    let request = json!({
        "url": format!("{}/echo?key={{{{secret.apiKey}}}}&n=1", upstream.origin()),
        "method": "POST",
        "headers": [
            ["X-Api-Key", "{{secret.apiKey}}"],
            ["Authorization", "Basic {{base64:{{secret.user}}:{{secret.password}}}}"],
            ["X-Identity", "Bearer {{token}}"],
            ["Content-Type", "text/plain"]
        ],
        "body": {"text": "key={{secret.apiKey}}; literal {{name}}"}
    });
    let (status, answer) = fetch(&server, &office, &request).await;
    assert_eq!(status, 200, "{answer}");
    assert_eq!(answer["status"], 200);
    let seen = upstream.last();
    assert_eq!(seen.method, "POST");
    assert_eq!(seen.header("x-api-key"), Some(API_KEY));
    let basic = encode_bytes(format!("{USER}:{PASSWORD}").as_bytes());
    assert_eq!(
        seen.header("authorization"),
        Some(format!("Basic {basic}").as_str())
    );
    let token = seen
        .header("x-identity")
        .unwrap()
        .strip_prefix("Bearer ")
        .unwrap();
    assert_eq!(token.split('.').count(), 3, "{token}");
    // The query holds the secret percent-encoded; the body as it is, other braces untouched.
    assert_eq!(seen.target, "/echo?key=sk-live-7f3a%26key%3D1%202&n=1");
    let sent = format!("key={API_KEY}; literal {{{{name}}}}");
    assert_eq!(seen.body, sent.as_bytes());
    assert_eq!(body_of(&answer), sent.as_bytes());
    // The answer's headers come through, but for those the tool has no use for.
    let headers = answer["headers"].as_array().unwrap();
    assert!(
        headers.iter().any(|h| h[0] == "x-echo" && h[1] == "yes"),
        "{answer}"
    );
    assert!(!headers.iter().any(|h| h[0] == "set-cookie"), "{answer}");
    assert!(
        seen.header("user-agent")
            .unwrap()
            .starts_with("toolbridge-fetch/")
    );

    // Nothing else shows a secret: the tool list, the settings answers, the settings themselves.
    let tool = listed(&server, &office, "vendor").await;
    assert_eq!(tool["settings"], json!({"region": "North"}));
    let (_, tools) = call(&server, &office, Method::GET, "/api/tools", None).await;
    assert_no_secret(&tools.to_string());
    let (_, installed) = call(&server, &admin, Method::GET, "/api/settings/tools", None).await;
    assert_no_secret(&installed.to_string());
    server.stop().await;
}

#[tokio::test]
async fn sealed_secrets_and_signing_key_still_reach_the_upstream_and_the_file_holds_no_secret() {
    let key = SecretsKey::from_hex(&SecretsKey::generate()).unwrap();
    let id = key.id().to_owned();
    let (server, upstream, _, office) = vendor_sealing(Some(key)).await;
    let request = json!({
        "url": format!("{}/echo", upstream.origin()),
        "method": "GET",
        "headers": [["X-Api-Key", "{{secret.apiKey}}"], ["X-Identity", "{{token}}"]]
    });
    let (status, answer) = fetch(&server, &office, &request).await;
    assert_eq!(status, 200, "{answer}");
    let seen = upstream.last();
    assert_eq!(seen.header("x-api-key"), Some(API_KEY));
    // The token was signed with the sealed key: it verifies against the published key set.
    let token = seen.header("x-identity").unwrap().to_owned();
    let (_, jwks) = call(
        &server,
        &office,
        Method::GET,
        "/.well-known/jwks.json",
        None,
    )
    .await;
    assert_eq!(jwks["keys"].as_array().map(Vec::len), Some(1), "{jwks}");
    assert_eq!(token.split('.').count(), 3, "{token}");

    let at_rest = server.store.secrets_at_rest().await.unwrap();
    assert_eq!((at_rest.plain, at_rest.sealed.get(&id)), (0, Some(&4)));
    // Nothing in the database's files holds a secret as it was given.
    server.store.close().await;
    let mut files = vec![server.db.clone()];
    for suffix in ["-wal", "-journal"] {
        let mut file = server.db.clone().into_os_string();
        file.push(suffix);
        files.push(file.into());
    }
    for file in files.iter().filter(|file| file.exists()) {
        let bytes = std::fs::read(file).unwrap();
        for secret in [API_KEY, USER, PASSWORD] {
            assert!(
                !bytes
                    .windows(secret.len())
                    .any(|window| window == secret.as_bytes()),
                "{secret:?} is in {}",
                file.display()
            );
        }
    }
    server.stop().await;
}

#[tokio::test]
async fn a_binary_body_of_1_mib_goes_both_ways_unchanged() {
    let (server, upstream, _, office) = vendor().await;
    let bytes: Vec<u8> = (0..1024 * 1024_u32)
        .map(|i| u8::try_from((i * 7 + i / 256) % 256).unwrap())
        .collect();
    let request = json!({
        "url": format!("{}/echo", upstream.origin()),
        "method": "PUT",
        "headers": [["Content-Type", "application/octet-stream"]],
        "body": {"base64": encode_bytes(&bytes)}
    });
    let (status, answer) = fetch(&server, &office, &request).await;
    assert_eq!(
        status,
        200,
        "{}",
        answer.to_string().chars().take(300).collect::<String>()
    );
    assert_eq!(upstream.last().body, bytes);
    assert_eq!(body_of(&answer), bytes);
    server.stop().await;
}

#[tokio::test]
async fn refusals_come_with_their_codes_and_places() {
    let (server, upstream, _, office) = vendor().await;
    let origin = upstream.origin();
    let code = |answer: &Value| answer["code"].as_str().unwrap_or_default().to_owned();

    // An origin the manifest does not list.
    let (status, answer) = fetch(
        &server,
        &office,
        &json!({"url": "https://example.com/x", "method": "GET"}),
    )
    .await;
    assert_eq!(
        (status, code(&answer)),
        (403, "NOT_ALLOWED".to_owned()),
        "{answer}"
    );
    let detail = answer["detail"].as_str().unwrap();
    assert!(
        detail.contains("https://example.com") && detail.contains(&origin),
        "{detail}"
    );

    // A listed origin whose address is private and not allowed.
    let private = format!("https://127.0.0.1:{}/echo", upstream.port);
    let (status, answer) = fetch(&server, &office, &json!({"url": private, "method": "GET"})).await;
    assert_eq!(
        (status, code(&answer)),
        (403, "NOT_ALLOWED".to_owned()),
        "{answer}"
    );
    assert!(
        answer["detail"].as_str().unwrap().contains("loopback"),
        "{answer}"
    );

    // Every broken rule at its place; nothing is sent.
    let before = upstream.seen.lock().unwrap().len();
    let (status, answer) = fetch(
        &server,
        &office,
        &json!({
            "url": format!("{origin}/x?a={{{{secret.nope}}}}"),
            "method": "get",
            "headers": [["Cookie", "a=b"], ["X-A", "{{secret.unset}}"], ["X-B", "{{secret.region}}"]],
        }),
    )
    .await;
    assert_eq!(
        (status, code(&answer)),
        (422, "INVALID_PARAMS".to_owned()),
        "{answer}"
    );
    let paths: Vec<&str> = answer["errors"]
        .as_array()
        .unwrap()
        .iter()
        .map(|e| e["path"].as_str().unwrap())
        .collect();
    assert_eq!(paths, ["method", "headers[0][0]"], "{answer}");
    let (status, answer) = fetch(
        &server,
        &office,
        &json!({
            "url": format!("{origin}/x?a={{{{secret.nope}}}}"),
            "method": "GET",
            "headers": [["X-A", "{{secret.unset}}"], ["X-B", "{{secret.region}}"]],
        }),
    )
    .await;
    assert_eq!(status, 422, "{answer}");
    let paths: Vec<&str> = answer["errors"]
        .as_array()
        .unwrap()
        .iter()
        .map(|e| e["path"].as_str().unwrap())
        .collect();
    assert_eq!(paths, ["url", "headers[0][1]", "headers[1][1]"], "{answer}");
    assert!(answer.to_string().contains("secret.unset"), "{answer}");
    assert_eq!(upstream.seen.lock().unwrap().len(), before);

    // A body of 5 MiB and a byte: 422 at `body`, before anything is sent.
    let (status, answer) = fetch(
        &server,
        &office,
        &json!({
            "url": format!("{origin}/echo"),
            "method": "POST",
            "body": {"base64": encode_bytes(&vec![0u8; BODY_MAX_BYTES + 1])}
        }),
    )
    .await;
    assert_eq!((status, code(&answer)), (422, "INVALID_PARAMS".to_owned()));
    assert_eq!(answer["errors"][0]["path"], "body", "{answer}");
    // A JSON body over 8 MiB is not read at all.
    let (status, _) = fetch(
        &server,
        &office,
        &json!({"url": format!("{origin}/echo"), "method": "POST",
                "body": {"text": "y".repeat(9 * 1024 * 1024)}}),
    )
    .await;
    assert_eq!(status, 413);

    server.stop().await;
}

#[tokio::test]
async fn what_the_upstream_answers_is_passed_on_or_refused_as_a_whole() {
    let (server, upstream, _, office) = vendor().await;
    let origin = upstream.origin();
    let code = |answer: &Value| answer["code"].as_str().unwrap_or_default().to_owned();

    // An answer of 5 MiB and a byte: 502.
    let (status, answer) = fetch(
        &server,
        &office,
        &json!({"url": format!("{origin}/big"), "method": "GET"}),
    )
    .await;
    assert_eq!(
        (status, code(&answer)),
        (502, "BACKEND_UNAVAILABLE".to_owned()),
        "{answer}"
    );
    assert!(
        answer["detail"].as_str().unwrap().contains("5 MiB"),
        "{answer}"
    );

    // A redirect is answered as it is.
    let (status, answer) = fetch(
        &server,
        &office,
        &json!({"url": format!("{origin}/redirect"), "method": "GET"}),
    )
    .await;
    assert_eq!(
        (status, answer["status"].as_u64()),
        (200, Some(302)),
        "{answer}"
    );
    assert!(
        answer["headers"]
            .as_array()
            .unwrap()
            .iter()
            .any(|h| h[0] == "location" && h[1] == "https://example.com/elsewhere"),
        "{answer}"
    );

    // An API key has no user to fetch for.
    let key = server.full_key().await;
    let response = server
        .request(Method::POST, "/api/v1/tools/vendor/fetch")
        .bearer_auth(&key)
        .json(&json!({"url": format!("{origin}/"), "method": "GET"}))
        .send()
        .await
        .unwrap();
    assert_eq!(response.status(), 403);
    server.stop().await;
}

/// The server asks for a compressed answer (a tool may not) and hands the tool the body decoded,
/// without the coding's headers, as a browser's fetch does.
#[tokio::test]
async fn a_compressed_answer_reaches_the_tool_decoded_and_within_the_limit() {
    let (server, upstream, _, office) = vendor().await;
    let origin = upstream.origin();
    let code = |answer: &Value| answer["code"].as_str().unwrap_or_default().to_owned();
    let ask = async |path: &str, method: &str| {
        fetch(
            &server,
            &office,
            &json!({"url": format!("{origin}{path}"), "method": method}),
        )
        .await
    };
    let (status, answer) = ask("/gzip", "GET").await;
    assert_eq!(
        (status, answer["status"].as_u64()),
        (200, Some(200)),
        "{answer}"
    );
    assert_eq!(
        body_of(&answer),
        b"compressed on the way, plain at the tool"
    );
    let names: Vec<&str> = answer["headers"]
        .as_array()
        .unwrap()
        .iter()
        .map(|h| h[0].as_str().unwrap())
        .collect();
    assert!(
        !names.contains(&"content-encoding") && !names.contains(&"content-length"),
        "{answer}"
    );
    let asked = upstream.last();
    assert_eq!(
        asked.header("accept-encoding"),
        Some("gzip, br"),
        "{asked:?}"
    );
    // HEAD: the coding's header, and no body to decode.
    let (status, answer) = ask("/gzip", "HEAD").await;
    assert_eq!(
        (status, answer["status"].as_u64()),
        (200, Some(200)),
        "{answer}"
    );
    assert_eq!(body_of(&answer), b"");
    let (status, answer) = ask("/br", "GET").await;
    assert_eq!(status, 200, "{answer}");
    assert_eq!(
        body_of(&answer),
        b"compressed on the way, plain at the tool"
    );
    // A body that says it is gzip and is not: 502, naming the coding.
    let (status, answer) = ask("/gzip-corrupt", "GET").await;
    assert_eq!(
        (status, code(&answer)),
        (502, "BACKEND_UNAVAILABLE".to_owned()),
        "{answer}"
    );
    assert!(
        answer["detail"]
            .as_str()
            .unwrap()
            .contains("does not decode as gzip"),
        "{answer}"
    );
    // The 5 MiB limit holds for the body decoded, however small it came.
    let (status, answer) = ask("/gzip-bomb", "GET").await;
    assert_eq!(
        (status, code(&answer)),
        (502, "BACKEND_UNAVAILABLE".to_owned()),
        "{answer}"
    );

    server.stop().await;
}

#[tokio::test]
async fn an_upstream_that_keeps_the_answer_past_15_s_is_a_timeout() {
    let (server, upstream, _, office) = vendor().await;
    let (status, answer) = fetch(
        &server,
        &office,
        &json!({"url": format!("{}/slow", upstream.origin()), "method": "GET"}),
    )
    .await;
    assert_eq!(
        (status, answer["code"].as_str()),
        (504, Some("TIMEOUT")),
        "{answer}"
    );
    server.stop().await;
}

#[tokio::test]
async fn one_request_beyond_those_in_flight_is_rate_limited() {
    let (server, upstream, _, office) = vendor().await;
    let server = Arc::new(server);
    let request = json!({"url": format!("{}/hold", upstream.origin()), "method": "GET"});
    let mut held = Vec::new();
    for _ in 0..IN_FLIGHT_MAX {
        let (server, office, request) = (server.clone(), office.clone(), request.clone());
        held.push(tokio::spawn(async move {
            fetch(&server, &office, &request).await
        }));
    }
    // Once every one of them is at the upstream, one more is refused.
    for _ in 0..200 {
        if upstream.holding.load(Ordering::SeqCst) == IN_FLIGHT_MAX {
            break;
        }
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
    assert_eq!(upstream.holding.load(Ordering::SeqCst), IN_FLIGHT_MAX);
    let response = server
        .as_user(&office, Method::POST, "/api/v1/tools/vendor/fetch")
        .json(&request)
        .send()
        .await
        .unwrap();
    assert_eq!(response.status(), 429);
    assert!(response.headers().contains_key("retry-after"));
    let (_, answer) = json(response).await;
    assert_eq!(answer["code"], "RATE_LIMITED");
    upstream.release.notify_waiters();
    for handle in held {
        let (status, answer) = handle.await.unwrap();
        assert_eq!(status, 200, "{answer}");
    }
}

#[tokio::test]
async fn the_servers_log_holds_no_secret_of_a_fetch() {
    let upstream = Upstream::start().await;
    let work = tempfile::tempdir().unwrap();
    let ca = work.path().join("ca.pem");
    std::fs::write(&ca, &upstream.ca_pem).unwrap();
    let allowed = format!("localhost:{}", upstream.port);
    let mut args = vec!["--db", "tb.sqlite3", "--trust-ca", ca.to_str().unwrap()];
    args.extend(DEMO);
    let serving = Serving::start(
        work.path(),
        &args,
        &[("TOOLBRIDGE_ALLOW_PRIVATE_FETCH", allowed.as_str())],
    );
    let client = reqwest::Client::new();
    let sign_in = |email: &'static str| {
        let client = client.clone();
        let url = serving.url("/api/session");
        async move {
            let response = client
                .post(url)
                .header("sec-fetch-site", "same-origin")
                .json(&json!({"email": email, "password": "demo-password"}))
                .send()
                .await
                .unwrap();
            assert_eq!(response.status(), 200);
            let cookie = response.headers()["set-cookie"]
                .to_str()
                .unwrap()
                .to_owned();
            cookie.split(';').next().unwrap().to_owned()
        }
    };
    let admin = sign_in("admin@harbour.test").await;
    let as_admin = |method: Method, path: &str| {
        client
            .request(method, serving.url(path))
            .header("cookie", &admin)
            .header("sec-fetch-site", "same-origin")
    };
    let uploaded = as_admin(Method::POST, "/api/settings/tools")
        .header("content-type", "application/zip")
        .body(zip(&vendor_manifest(&upstream)))
        .send()
        .await
        .unwrap();
    assert_eq!(uploaded.status(), 201);
    let values = json!({"apiKey": API_KEY, "user": USER, "password": PASSWORD});
    let saved = as_admin(Method::PUT, "/api/settings/tools/vendor/settings")
        .json(&values)
        .send()
        .await
        .unwrap();
    assert_eq!(saved.status(), 200);
    let refused = as_admin(Method::PUT, "/api/settings/tools/vendor/settings")
        .json(&json!({"apiKey": format!("{API_KEY}\n")}))
        .send()
        .await
        .unwrap();
    assert_eq!(refused.status(), 422);
    assert_no_secret(&refused.text().await.unwrap());
    let request = json!({
        "url": format!("{}/echo?key={{{{secret.apiKey}}}}", upstream.origin()),
        "method": "POST",
        "headers": [["Authorization", "Basic {{base64:{{secret.user}}:{{secret.password}}}}"]],
        "body": {"text": "{{secret.apiKey}}"}
    });
    let fetched = as_admin(Method::POST, "/api/v1/tools/vendor/fetch")
        .json(&request)
        .send()
        .await
        .unwrap();
    assert_eq!(fetched.status(), 200);
    let basic = format!(
        "Basic {}",
        encode_bytes(format!("{USER}:{PASSWORD}").as_bytes())
    );
    assert_eq!(
        upstream.last().header("authorization"),
        Some(basic.as_str())
    );
    // The fetch is logged (without its query) and no secret is, whatever else is.
    tokio::time::sleep(Duration::from_millis(200)).await;
    let logged = serving.stderr();
    assert!(logged.contains("fetch for a tool"), "{logged}");
    assert!(logged.contains("/echo"), "{logged}");
    assert_no_secret(&logged);
    // The tool's base64 of user:password is not logged either.
    assert!(!logged.contains(&encode_bytes(format!("{USER}:{PASSWORD}").as_bytes())));
}

#[tokio::test]
async fn an_upstream_whose_certificate_is_not_trusted_is_unavailable_and_named() {
    let upstream = Upstream::start().await;
    let allowed = format!("localhost:{}", upstream.port).parse().unwrap();
    // No --trust-ca: the test's CA is no root the server knows.
    let server = Server::start_with(|state| state.allowing_private_fetch(vec![allowed])).await;
    let admin = server.sign_in("admin@harbour.test").await;
    let (status, installed) = upload(&server, &admin, zip(&vendor_manifest(&upstream))).await;
    assert_eq!(status, 201, "{installed}");
    put_settings(&server, &admin, "vendor", &json!({"apiKey": API_KEY})).await;
    let request = json!({
        "url": format!("{}/echo?k={{{{secret.apiKey}}}}", upstream.origin()),
        "method": "GET",
        "headers": [["X-Api-Key", "{{secret.apiKey}}"]]
    });
    let (status, answer) = fetch(&server, &admin, &request).await;
    assert_eq!(
        (status, answer["code"].as_str()),
        (502, Some("BACKEND_UNAVAILABLE")),
        "{answer}"
    );
    let detail = answer["detail"].as_str().unwrap();
    assert!(
        detail.starts_with(&format!("cannot reach {}", upstream.origin())),
        "{detail}"
    );
    assert!(detail.contains("certificate"), "{detail}");
    assert_no_secret(&answer.to_string());
    assert!(upstream.seen.lock().unwrap().is_empty());
    server.stop().await;
}
