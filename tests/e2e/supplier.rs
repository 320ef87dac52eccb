//! A tool that talks to its vendor's own server: the Supplier prices example, against a vendor
//! server on loopback (`tests/vendor/vendor_server.py`) that verifies the platform's identity
//! tokens with `PyJWT` against `/.well-known/jwks.json`, as a vendor would, and wants the tenant's
//! API key, which only the toolbridge server knows (a secret setting put into `bridge.fetch`'s
//! request as `{{secret.apiKey}}`).
//!
//! The test runs a server of its own: one that trusts the run's certificate authority
//! (`--trust-ca`), may reach the vendor's loopback address (`--allow-private-fetch`), installs the
//! example with its manifest pointed at the vendor, and logs at `debug`, so that "the secret is in
//! no log" means something.

use std::io::{BufRead, BufReader};
use std::net::{IpAddr, Ipv4Addr, TcpStream};
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

use serde_json::{Value, json};
use toolbridge_e2e::server::{ReservedPort, ServerOptions, ToolbridgeServer};
use toolbridge_e2e::tls::TestTls;

use crate::browser::{Browser, setting};
use crate::quote_editor::{open_first_draft, open_tool};
use crate::signin::sign_in;

/// The example's slug (from its short name) and a second copy's, installed beside it.
const SLUG: &str = "supplier-prices";
const OTHER: &str = "other-supplier";

/// The tenant's key at the supplier: the secret setting.
const API_KEY: &str = "sk_e2e_7Qm2vX9pL4tR8wZ1";

/// The tool's frame in the editor's tool panel.
const TOOL_FRAME: &str = ".tool-panel iframe";

/// The largest body each way, as `protocol::fetch::BODY_MAX_BYTES`.
const BODY_MAX_BYTES: usize = toolbridge_protocol::fetch::BODY_MAX_BYTES;

/// A token lives this long at most, as `protocol::identity::TOKEN_LIFETIME_SECS`.
const TOKEN_LIFETIME_SECS: u64 = toolbridge_protocol::identity::TOKEN_LIFETIME_SECS;

/// The vendor's server, stopped when dropped.
struct Vendor {
    child: Child,
    origin: String,
    log: PathBuf,
    client: reqwest::Client,
}

impl Vendor {
    /// Starts `vendor_server.py` with the Python `cargo xtask setup` gave `PyJWT`, on `port`, over
    /// https with the run's certificate, checking tokens of `tool` at `audience` from `issuer`.
    fn start(dir: &Path, tls: &TestTls, port: ReservedPort, server: &Sites) -> Self {
        let script = Path::new(env!("CARGO_MANIFEST_DIR")).join("vendor/vendor_server.py");
        let log = dir.join("vendor-requests.jsonl");
        let _ = std::fs::remove_file(&log);
        let port = port.release();
        let output = std::fs::File::create(dir.join("vendor.log")).unwrap();
        let child = Command::new(setting("TOOLBRIDGE_E2E_VENDOR_PYTHON"))
            .arg(&script)
            .args(["--port", &port.to_string()])
            .arg("--cert")
            .arg(&tls.chain_file)
            .arg("--key")
            .arg(&tls.key_file)
            .args(["--jwks", &format!("{}/.well-known/jwks.json", server.api)])
            .args(["--issuer", &server.app])
            .args(["--audience", &server.tool_origin(SLUG)])
            .args(["--tool", SLUG, "--api-key", API_KEY])
            .arg("--log")
            .arg(&log)
            .stdin(Stdio::null())
            .stdout(output.try_clone().unwrap())
            .stderr(output)
            .spawn()
            .unwrap_or_else(|e| panic!("cannot start {}: {e}", script.display()));
        let deadline = Instant::now() + Duration::from_secs(20);
        while TcpStream::connect((Ipv4Addr::LOCALHOST, port)).is_err() {
            assert!(
                Instant::now() < deadline,
                "the vendor's server did not listen on {port} within 20 s; see {}",
                dir.join("vendor.log").display()
            );
            std::thread::sleep(Duration::from_millis(50));
        }
        let client = reqwest::Client::builder()
            .add_root_certificate(reqwest::Certificate::from_pem(tls.ca_pem.as_bytes()).unwrap())
            .build()
            .unwrap();
        Self {
            child,
            origin: format!("https://127.0.0.1:{port}"),
            log,
            client,
        }
    }

    /// What the vendor's server was asked, one JSON object a request.
    fn requests(&self) -> Vec<Value> {
        let Ok(file) = std::fs::File::open(&self.log) else {
            return Vec::new();
        };
        BufReader::new(file)
            .lines()
            .map(|line| serde_json::from_str(&line.unwrap()).unwrap())
            .collect()
    }

    /// Whether `PyJWT`, in the vendor's server, accepts `token` (with its clock `ahead` seconds
    /// ahead), and the claims or why not.
    async fn verify(&self, token: &str, ahead: u64) -> Value {
        self.client
            .post(format!("{}/v1/verify?ahead={ahead}", self.origin))
            .body(token.to_owned())
            .send()
            .await
            .unwrap()
            .json()
            .await
            .unwrap()
    }
}

impl Drop for Vendor {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

/// The addresses of the test's own server.
struct Sites {
    /// Where the test reaches it: `http://127.0.0.1:P`.
    api: String,
    /// The app's public URL, the tokens' issuer: `http://localhost:P`.
    app: String,
    port: u16,
}

impl Sites {
    /// A tool's origin, the audience of its tokens.
    fn tool_origin(&self, slug: &str) -> String {
        format!("http://{slug}.tools.localhost:{}", self.port)
    }
}

/// The example tool's folder with its manifest pointed at `vendor` (and a second origin that is
/// declared but private), and a copy of it under another short name, in `dir/tools`.
fn tools_folder(dir: &Path, vendor: &str) -> PathBuf {
    let source = Path::new(env!("CARGO_MANIFEST_DIR")).join("../example-tools/supplier-prices");
    let tools = dir.join("tools");
    let _ = std::fs::remove_dir_all(&tools);
    for (folder, short_name) in [(SLUG, "Supplier prices"), (OTHER, "Other supplier")] {
        let target = tools.join(folder);
        std::fs::create_dir_all(&target).unwrap();
        for entry in std::fs::read_dir(&source).unwrap() {
            let path = entry.unwrap().path();
            std::fs::copy(&path, target.join(path.file_name().unwrap())).unwrap();
        }
        let manifest_path = target.join("manifest.json");
        let mut manifest: Value =
            serde_json::from_slice(&std::fs::read(&manifest_path).unwrap()).unwrap();
        manifest["shortName"] = json!(short_name);
        manifest["name"] = json!(short_name);
        manifest["permissions"]["connect"] = json!([vendor, "https://127.0.0.1:1"]);
        for setting in manifest["settings"].as_array_mut().unwrap() {
            if setting["key"] == "serviceUrl" {
                setting["default"] = json!(vendor);
            }
        }
        std::fs::write(
            &manifest_path,
            serde_json::to_vec_pretty(&manifest).unwrap(),
        )
        .unwrap();
    }
    tools
}

/// Records every message posted on a `MessagePort` in this frame (`window.__portLog`), as text:
/// bytes decoded, so a secret inside a body would show.
async fn record_port_messages(browser: &Browser) {
    browser
        .client
        .execute(
            "if (!window.__portLog) {
               window.__portLog = [];
               const text = (value) => JSON.stringify(value, (_, v) =>
                 v instanceof ArrayBuffer || ArrayBuffer.isView(v) ? new TextDecoder().decode(v) : v);
               const post = MessagePort.prototype.postMessage;
               MessagePort.prototype.postMessage = function (message, ...rest) {
                 try { window.__portLog.push(text(message)); } catch (e) { window.__portLog.push(String(e)); }
                 return post.call(this, message, ...rest);
               };
             }",
            vec![],
        )
        .await
        .unwrap();
}

/// What was recorded on this frame's ports, joined.
async fn port_messages(browser: &Browser) -> String {
    let log = browser
        .client
        .execute("return (window.__portLog || []).join('\\n');", vec![])
        .await
        .unwrap();
    log.as_str().unwrap().to_owned()
}

/// The page's whole DOM, as HTML.
async fn dom(browser: &Browser) -> String {
    let html = browser
        .client
        .execute(
            "return document.documentElement.outerHTML + [...document.querySelectorAll('input')].map((i) => i.value).join(' ');",
            vec![],
        )
        .await
        .unwrap();
    html.as_str().unwrap().to_owned()
}

/// Sets the secret in Settings → Tools, as an admin does; the page then says it is set.
async fn set_secret(browser: &Browser) {
    browser.go("/#/settings/tools").await;
    browser
        .click(
            &browser
                .find(&format!("button[aria-controls=settings-{SLUG}]"))
                .await,
        )
        .await;
    let input = browser.find(&format!("#setting-{SLUG}-apiKey")).await;
    assert_eq!(
        input.attr("type").await.unwrap().as_deref(),
        Some("password")
    );
    input.send_keys(API_KEY).await.unwrap();
    browser.press("Save settings").await;
    browser
        .until(
            "the saved toast",
            "[...document.querySelectorAll('.toast')].some((t) => t.textContent.includes('Settings of Supplier prices saved'))",
        )
        .await;
}

/// The claims of a compact JWS, unverified (to compare with what the vendor verified).
fn claims_of(token: &str) -> Value {
    use base64::Engine as _;
    let payload = token.split('.').nth(1).unwrap();
    let bytes = base64::engine::general_purpose::URL_SAFE_NO_PAD
        .decode(payload)
        .unwrap();
    serde_json::from_slice(&bytes).unwrap()
}

/// `token` with its `tid` claim changed and its signature kept.
fn with_changed_tenant(token: &str) -> String {
    use base64::Engine as _;
    let mut parts: Vec<String> = token.split('.').map(str::to_owned).collect();
    let mut claims = claims_of(token);
    claims["tid"] = json!("another-tenant");
    parts[1] = base64::engine::general_purpose::URL_SAFE_NO_PAD
        .encode(serde_json::to_vec(&claims).unwrap());
    parts.join(".")
}

/// The `kid` of a compact JWS's header.
fn kid_of(token: &str) -> String {
    use base64::Engine as _;
    let header = token.split('.').next().unwrap();
    let bytes = base64::engine::general_purpose::URL_SAFE_NO_PAD
        .decode(header)
        .unwrap();
    let header: Value = serde_json::from_slice(&bytes).unwrap();
    header["kid"].as_str().unwrap().to_owned()
}

/// A token for `slug` from the session API, as the host asks for one (from the app's page).
async fn session_token(browser: &Browser, slug: &str) -> String {
    let answer = browser.run(
        &format!(
            "const r = await fetch('/api/v1/tools/{slug}/token', {{ method: 'POST', credentials: 'same-origin' }});
             return {{ status: r.status, body: await r.json() }};"
        ),
    )
    .await;
    assert_eq!(answer["status"], 200, "{answer}");
    answer["body"]["token"].as_str().unwrap().to_owned()
}

#[tokio::test]
#[allow(clippy::too_many_lines)] // one flow, read top to bottom
async fn a_tool_reaches_its_vendor_with_a_secret_and_a_token_the_vendor_verifies() {
    let browser_name = setting("TOOLBRIDGE_E2E_BROWSER");
    let dir = std::env::temp_dir().join(format!("supplier-{browser_name}"));
    std::fs::create_dir_all(&dir).unwrap();
    let tls = TestTls::make(
        &dir.join("tls"),
        "e2e vendor",
        &["localhost".to_owned()],
        &[IpAddr::V4(Ipv4Addr::LOCALHOST)],
    )
    .unwrap();
    let vendor_port = ReservedPort::new().unwrap();
    let server_port = ReservedPort::new().unwrap();
    let sites = Sites {
        api: format!("http://127.0.0.1:{}", server_port.port()),
        app: format!("http://localhost:{}", server_port.port()),
        port: server_port.port(),
    };
    let vendor_address = format!("127.0.0.1:{}", vendor_port.port());
    let vendor_origin = format!("https://{vendor_address}");
    let vendor = Vendor::start(&dir, &tls, vendor_port, &sites);
    assert_eq!(vendor.origin, vendor_origin);

    let mut options = ServerOptions::new("supplier", dir.join("server"), 200);
    options.example_tools = Some(tools_folder(&dir, &vendor_origin));
    options.extra_args = vec![
        "--trust-ca".into(),
        tls.ca_file.clone().into_os_string(),
        "--allow-private-fetch".into(),
        vendor_address.clone().into(),
    ];
    options.log_filter = "debug";
    let binary = PathBuf::from(setting("TOOLBRIDGE_E2E_BIN"));
    let server = ToolbridgeServer::launch(&binary, &options, server_port).unwrap();

    // An admin sets the supplier key; the page shows that it is set, never the key.
    let browser = Browser::open_on(sites.app.clone()).await;
    sign_in(&browser, "admin@harbour.test", "Alex Admin").await;
    set_secret(&browser).await;
    browser.go("/#/settings/tools").await;
    browser
        .find(&format!("button[aria-controls=settings-{SLUG}]"))
        .await;
    assert!(
        !dom(&browser).await.contains(API_KEY),
        "the key is in Settings → Tools"
    );
    let listed = browser
        .run("return await (await fetch('/api/tools')).text();")
        .await;
    assert!(
        !listed.as_str().unwrap().contains(API_KEY),
        "GET /api/tools: {listed}"
    );

    // The tool on a draft quote: the lookup goes through the server to the vendor.
    browser.go("/#/quotes").await;
    open_first_draft(&browser).await;
    record_port_messages(&browser).await;
    open_tool(&browser, "Supplier prices").await;
    browser.enter_frame(TOOL_FRAME).await;
    record_port_messages(&browser).await;
    browser
        .until(
            "the lookup form",
            "!document.getElementById('lookup').hidden",
        )
        .await;
    let search = browser.find("#search").await;
    browser.type_into(&search, "oak").await;
    browser.click(&browser.find("#look-up").await).await;
    browser
        .until(
            "the supplier's parts",
            "document.querySelectorAll('#parts .part').length === 2",
        )
        .await;
    let parts = browser.text("#parts").await;
    assert!(
        parts.contains("OAK-12") && parts.contains("$42.50"),
        "{parts}"
    );
    assert!(parts.contains("$55.25"), "30% markup on $42.50: {parts}");
    // 20:30 UTC on the 27th is 9:30 the next morning in Auckland, the tenant's zone.
    let updated = browser.text("#updated").await;
    assert!(
        updated.contains("9:30") && updated.contains("Pacific/Auckland"),
        "{updated}"
    );
    let qty = browser.find("#qty-0").await;
    qty.clear().await.unwrap();
    browser.type_into(&qty, "3").await;
    browser
        .click(&browser.find("#parts .part [data-role=add]").await)
        .await;
    browser
        .until(
            "the added part",
            "document.getElementById('status').textContent.includes('Added 3 × OAK-12')",
        )
        .await;

    // The vendor saw the key and a token PyJWT verified, with the right claims.
    let context = browser.run("return await bridge.context.get();").await;
    let store = toolbridge_store::Store::open(Path::new(server.db()))
        .await
        .unwrap();
    let admin = store
        .user_by_email("admin@harbour.test")
        .await
        .unwrap()
        .unwrap();
    store.close().await;
    let asked = vendor.requests();
    let lookup = asked
        .iter()
        .find(|r| r["path"] == "/v1/prices")
        .unwrap_or_else(|| panic!("the vendor was not asked for prices: {asked:?}"));
    assert_eq!(lookup["keyOk"], true, "{lookup}");
    assert_eq!(lookup["tokenOk"], true, "{lookup}");
    assert_eq!(lookup["claims"]["tool"], SLUG);
    assert_eq!(lookup["claims"]["aud"], sites.tool_origin(SLUG));
    assert_eq!(lookup["claims"]["iss"], sites.app);
    assert_eq!(lookup["claims"]["tid"], context["tenantId"]);
    assert_eq!(lookup["claims"]["sub"], json!(admin.user.id));

    // What the tool passes to getToken changes no claim; a changed claim, another tool's token
    // and an expired one are refused by the same library.
    let tokens = browser.run(
        "const plain = await bridge.auth.getToken();
         const asked = await bridge.auth.getToken({ sub: 'someone-else', tid: 'other', aud: 'https://evil.example', tool: 'x', exp: 9999999999 });
         return [plain, asked];",
    )
    .await;
    let token = tokens[0].as_str().unwrap().to_owned();
    let verified = vendor.verify(&token, 0).await;
    assert_eq!(verified["ok"], true, "{verified}");
    let asked = vendor.verify(tokens[1].as_str().unwrap(), 0).await;
    assert_eq!(asked["ok"], true, "{asked}");
    for claim in ["sub", "tid", "aud", "tool", "iss"] {
        assert_eq!(asked["claims"][claim], verified["claims"][claim], "{claim}");
    }
    assert!(
        verified["claims"]["exp"].as_u64().unwrap() - verified["claims"]["iat"].as_u64().unwrap()
            <= TOKEN_LIFETIME_SECS
    );
    let changed = vendor.verify(&with_changed_tenant(&token), 0).await;
    assert_eq!(changed["ok"], false, "{changed}");
    assert!(
        changed["error"].as_str().unwrap().contains("Signature"),
        "{changed}"
    );
    let expired = vendor.verify(&token, TOKEN_LIFETIME_SECS + 1).await;
    assert_eq!(expired["ok"], false, "{expired}");
    assert!(
        expired["error"].as_str().unwrap().contains("Expired"),
        "{expired}"
    );
    browser.leave_frame().await;
    let other = vendor
        .verify(&session_token(&browser, OTHER).await, 0)
        .await;
    assert_eq!(other["ok"], false, "another tool's token: {other}");
    assert!(
        other["error"].as_str().unwrap().contains("Audience"),
        "{other}"
    );

    // A rotation publishes the new key first: tokens keep the old key's id until every key set
    // cached before has expired. One `--at-once` signs with a new key now; the vendor fetches
    // the key set again for it, and every token verifies.
    let rotate = |more: &[&str]| {
        let rotated = Command::new(&binary)
            .args(["signing-keys", "rotate"])
            .args(more)
            .arg("--db")
            .arg(server.db())
            .output()
            .unwrap();
        assert!(rotated.status.success(), "{rotated:?}");
        String::from_utf8_lossy(&rotated.stdout).into_owned()
    };
    let before = session_token(&browser, SLUG).await;
    let staged = rotate(&[]);
    assert!(staged.contains("is published now"), "{staged}");
    let during = session_token(&browser, SLUG).await;
    assert_eq!(kid_of(&before), kid_of(&during));
    let at_once = rotate(&["--at-once"]);
    assert!(at_once.contains("from now on"), "{at_once}");
    let after = session_token(&browser, SLUG).await;
    assert_ne!(kid_of(&before), kid_of(&after));
    for token in [&before, &during, &after] {
        let verified = vendor.verify(token, 0).await;
        assert_eq!(verified["ok"], true, "{verified}");
    }

    // Bytes go both ways unchanged; each limit gives its typed error, and the tool goes on.
    browser.enter_frame(TOOL_FRAME).await;
    let echoed = browser.run(
        &format!(
            "const sent = new Uint8Array(1024 * 1024).map((_, i) => (i * 7 + (i >> 10)) & 255);
             const r = await bridge.fetch('{vendor_origin}/v1/echo', {{ method: 'POST', body: new Blob([sent]),
               headers: {{ 'Content-Type': 'application/octet-stream', 'X-Api-Key': '{{{{secret.apiKey}}}}', Authorization: 'Bearer {{{{token}}}}' }} }});
             const back = new Uint8Array(await r.arrayBuffer());
             return {{ status: r.status, length: back.length, same: back.length === sent.length && back.every((b, i) => b === sent[i]), vendor: r.headers.get('x-vendor') }};"
        ),
    )
    .await;
    assert_eq!(
        echoed,
        json!({"status": 200, "length": 1_048_576, "same": true, "vendor": "supplier"})
    );
    let keyed = "{ headers: { 'X-Api-Key': '{{secret.apiKey}}' } }";
    let failures = [
        (
            "https://elsewhere.example/v1/prices".to_owned(),
            "{}".to_owned(),
            "NOT_ALLOWED",
        ),
        (
            "https://127.0.0.1:1/v1/prices".to_owned(),
            "{}".to_owned(),
            "NOT_ALLOWED",
        ),
        (
            format!("{vendor_origin}/v1/echo"),
            format!(
                "{{ method: 'POST', body: new Uint8Array({}) }}",
                BODY_MAX_BYTES + 1
            ),
            "INVALID_PARAMS",
        ),
        (
            format!("{vendor_origin}/v1/big?bytes={}", BODY_MAX_BYTES + 1),
            keyed.to_owned(),
            "BACKEND_UNAVAILABLE",
        ),
        (
            format!("{vendor_origin}/v1/slow?secs=20"),
            keyed.to_owned(),
            "TIMEOUT",
        ),
    ];
    for (url, init, code) in failures {
        let answer = browser
            .run(&format!("return await bridge.fetch('{url}', {init});"))
            .await;
        assert_eq!(answer["thrown"]["code"], code, "{url}: {answer}");
    }
    let search = browser.find("#search").await;
    search.clear().await.unwrap();
    browser.type_into(&search, "underlay").await;
    browser.click(&browser.find("#look-up").await).await;
    browser
        .until(
            "the lookup after the failures",
            "document.querySelectorAll('#parts .part').length === 1",
        )
        .await;

    // The key is nowhere the browser can see, nor in the server's log.
    let settings = browser.run("return await bridge.settings.get();").await;
    assert!(settings.get("apiKey").is_none(), "{settings}");
    assert!(!settings.to_string().contains(API_KEY), "{settings}");
    assert!(!dom(&browser).await.contains(API_KEY), "in the tool's page");
    let tool_ports = port_messages(&browser).await;
    assert!(
        tool_ports.contains("{{secret.apiKey}}"),
        "the tool's port log is empty?"
    );
    assert!(!tool_ports.contains(API_KEY), "on the tool's port");
    browser.leave_frame().await;
    let app_ports = port_messages(&browser).await;
    assert!(
        app_ports.contains("x-vendor"),
        "the app's port log is empty?"
    );
    assert!(
        !app_ports.contains(API_KEY),
        "on the app's side of the port"
    );
    assert!(!dom(&browser).await.contains(API_KEY), "in the app's page");
    browser.close().await;
    let log = std::fs::read_to_string(server.log()).unwrap();
    assert!(
        log.contains("fetch"),
        "the server logged no fetch at debug?"
    );
    assert!(
        !log.contains(API_KEY),
        "the key is in {}",
        server.log().display()
    );
}
