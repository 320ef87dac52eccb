//! The example deployment, run as an operator would run it: `deploy/nginx.conf` as written (only
//! its paths and ports filled in) terminating TLS with a certificate from a CA made for the run,
//! in front of two release servers on one throwaway `PostgreSQL` database, started with
//! `--public-url` and `--tools-url` naming the proxy and with `--trust-proxy` for it; the first
//! tenant, its admin, an API key and a tool come from the CLI, as on an empty production
//! database. The browser is Chromium trusting the CA through an NSS database in a throwaway
//! `HOME`, with `--host-resolver-rules` sending `*.example.com` to this machine.
//!
//! - Through the proxy: the app's CSP frames only the tools' https origins; sign-in sets a
//!   `Secure` cookie; `Strict-Transport-Security` is sent; the tool list and every frame's `src`
//!   are https origins on the proxy's port, and no instance's own port shows anywhere; a tool
//!   opened in the app completes its handshake and adds a line to the open quote; the app's live
//!   list hears quotes made through each instance directly.
//! - Under load through the proxy, one instance is sent SIGTERM: every request is answered, the
//!   instance says 503 on `/readyz` while it drains and exits 0 within its grace, and every
//!   webhook event is delivered exactly once.
//! - No log of the run holds a secret it used: the admin's password, a session token, the API
//!   key, the webhook secret. Both instances seal secrets with one `--secrets-key-file`, and the
//!   database holds the webhook secret sealed.

mod proxy;

use std::collections::BTreeSet;
use std::io::Write;
use std::net::{Ipv4Addr, SocketAddr, TcpListener};
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::time::{Duration, Instant};

use reqwest::header::{CONTENT_SECURITY_POLICY, COOKIE, SET_COOKIE, STRICT_TRANSPORT_SECURITY};
use serde_json::{Value, json};
use toolbridge_e2e::webhook_receiver::{Received, WebhookReceiver};

use crate::db::{Backend, Db};
use crate::server::{self, Server};
use proxy::{APP_HOST, DOMAIN, Nginx, make_tls};
use toolbridge_e2e::tls::TestTls;

/// The tenant the CLI makes.
const TENANT: &str = "Harbour Flooring";

/// Its first admin, made with the CLI; the password is read from standard input.
const ADMIN: (&str, &str) = (
    "owner@harbour-flooring.example",
    "correct horse battery staple 7",
);

/// The probe tool's slug, and its folder (a real bundle the CLI packs and installs).
const PROBE: &str = "probe";

/// Seconds an instance may take to drain (`--shutdown-grace-secs`).
const GRACE_SECS: u64 = 20;

/// Seconds an instance keeps serving after SIGTERM, saying 503 on `/readyz`
/// (`--drain-delay-secs`).
const DRAIN_DELAY_SECS: u64 = 2;

/// A port nothing listens on right now.
pub(super) fn free_port() -> u16 {
    TcpListener::bind((Ipv4Addr::LOCALHOST, 0))
        .and_then(|listener| listener.local_addr())
        .map(|address| address.port())
        .expect("the OS gives out a free port")
}

/// Runs `toolbridge` (the release binary) with `args`, on `db` if given, `stdin` as its input;
/// what it printed, or a panic with everything it said when it failed.
fn toolbridge(db: Option<&Db>, args: &[&str], stdin: Option<&str>) -> String {
    let binary = server::setting(server::BIN_VAR);
    let mut command = Command::new(&binary);
    command.args(args);
    if let Some(db) = db {
        command.arg("--db").arg(db.arg());
    }
    let mut child = command
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap_or_else(|e| panic!("cannot run {}: {e}", binary.display()));
    let mut input = child.stdin.take().expect("stdin is piped");
    if let Some(text) = stdin {
        input.write_all(text.as_bytes()).unwrap();
    }
    drop(input);
    let output = child.wait_with_output().unwrap();
    let stdout = String::from_utf8_lossy(&output.stdout).into_owned();
    assert!(
        output.status.success(),
        "`toolbridge {}` failed: {stdout}{}",
        args.join(" "),
        String::from_utf8_lossy(&output.stderr)
    );
    stdout
}

/// The deployment: the proxy, two instances behind it, their database, and what the CLI made.
struct Deployment {
    dir: PathBuf,
    db: Db,
    tls: TestTls,
    nginx: Nginx,
    a: Server,
    b: Server,
    /// An API key of the tenant with every scope, made with `keys create --tenant`.
    key: String,
}

impl Deployment {
    /// Makes the CA, the database, the tenant, its admin, a key and the probe tool (with the CLI,
    /// on the empty database), then starts both instances and nginx.
    async fn start(name: &str) -> Self {
        let dir = server::work_dir(name);
        let db = Db::new(Backend::Postgres, &dir);
        let tls = make_tls(&dir.join("tls"));
        let ports = [free_port(), free_port()];
        // The proxy's ports are known only once nginx has them; it starts first, and answers 502
        // until the instances listen.
        let nginx = Nginx::start(&dir.join("nginx"), &tls, ports);

        let key = first_steps(&db, &dir);
        // The key both instances seal secrets with, made as the operator's guide says.
        let secrets_key = dir.join("secrets.key");
        std::fs::write(
            &secrets_key,
            toolbridge(None, &["secrets-key", "generate"], None),
        )
        .unwrap_or_else(|e| panic!("cannot write {}: {e}", secrets_key.display()));
        let secrets_key = secrets_key
            .to_str()
            .expect("the work folder's path is UTF-8");

        let public_url = nginx.public_url();
        let tools_url = nginx.tools_url();
        let grace = GRACE_SECS.to_string();
        let delay = DRAIN_DELAY_SECS.to_string();
        let args = [
            "--public-url",
            public_url.as_str(),
            "--tools-url",
            tools_url.as_str(),
            "--trust-proxy",
            "127.0.0.1/32",
            "--log-format",
            "json",
            "--shutdown-grace-secs",
            grace.as_str(),
            "--drain-delay-secs",
            delay.as_str(),
            "--secrets-key-file",
            secrets_key,
        ];
        let a = Server::start_production(&dir, "a", &db, ports[0], &args).await;
        let b = Server::start_production(&dir, "b", &db, ports[1], &args).await;
        println!(
            "proxied: {name}: nginx at {public_url} (tools at {tools_url}) in front of instances \
             on ports {} and {}, on {}",
            ports[0],
            ports[1],
            db.describe()
        );
        Self {
            dir,
            db,
            tls,
            nginx,
            a,
            b,
            key,
        }
    }

    /// A client that trusts the suite's CA and sends the deployment's names to 127.0.0.1.
    fn client(&self) -> reqwest::Client {
        let proxy = SocketAddr::from((Ipv4Addr::LOCALHOST, self.nginx.https_port));
        reqwest::Client::builder()
            .add_root_certificate(
                reqwest::Certificate::from_pem(self.tls.ca_pem.as_bytes()).unwrap(),
            )
            .resolve(APP_HOST, proxy)
            .resolve(&format!("{PROBE}.tools.{DOMAIN}"), proxy)
            .redirect(reqwest::redirect::Policy::none())
            .timeout(Duration::from_secs(30))
            .build()
            .unwrap()
    }

    /// The app's public URL, `https://app.example.com:<port>`.
    fn app(&self) -> String {
        self.nginx.public_url()
    }

    /// The instances' own ports, which nothing the app shows may name.
    fn instance_ports(&self) -> [u16; 2] {
        [self.a.port(), self.b.port()]
    }

    /// Signs the admin in through the proxy; the cookie's `name=value`, and the whole
    /// `Set-Cookie`.
    async fn sign_in(&self, client: &reqwest::Client) -> (String, String) {
        let response = client
            .post(format!("{}/api/session", self.app()))
            .header("sec-fetch-site", "same-origin")
            .json(&json!({"email": ADMIN.0, "password": ADMIN.1}))
            .send()
            .await
            .unwrap();
        assert_eq!(response.status(), 200, "the CLI's admin signs in");
        let set_cookie = response
            .headers()
            .get(SET_COOKIE)
            .and_then(|value| value.to_str().ok())
            .unwrap_or_else(|| panic!("sign-in set no cookie"))
            .to_owned();
        let pair = set_cookie.split(';').next().unwrap_or_default().to_owned();
        (pair, set_cookie)
    }

    /// A quote made with the admin's session (the app's own form of the request) on the server
    /// at `base` (the proxy, or an instance directly); its id and reference.
    async fn create_quote(
        client: &reqwest::Client,
        base: &str,
        cookie: &str,
        customer: &str,
        idempotency_key: &str,
    ) -> Result<(String, String), String> {
        let response = client
            .post(format!("{base}/api/v1/quotes"))
            .header(COOKIE, cookie)
            .header("sec-fetch-site", "same-origin")
            .header("idempotency-key", idempotency_key)
            .json(&json!({
                "customerName": customer,
                "title": "Deployment check",
                "lines": [{"description": "Survey visit", "qty": 1, "unitPrice": 80, "taxRate": 0.15}]
            }))
            .send()
            .await
            .map_err(|e| format!("POST {base}/api/v1/quotes: {e}"))?;
        let status = response.status();
        let body: Value = response.json().await.unwrap_or(Value::Null);
        if status != 201 && status != 200 {
            return Err(format!("POST {base}/api/v1/quotes: {status} {body}"));
        }
        Ok((
            body["id"].as_str().unwrap_or_default().to_owned(),
            body["ref"].as_str().unwrap_or_default().to_owned(),
        ))
    }

    /// Every log of the run: both instances' and nginx's.
    fn logs(&self) -> Vec<PathBuf> {
        let mut logs = vec![self.a.log().to_owned(), self.b.log().to_owned()];
        if let Ok(entries) = std::fs::read_dir(&self.nginx.logs) {
            logs.extend(entries.filter_map(Result::ok).map(|entry| entry.path()));
        }
        logs
    }

    /// Fails if any log of the run holds one of `secrets`.
    fn assert_no_secret_logged(&self, secrets: &[(&str, &str)]) {
        for log in self.logs() {
            let text = std::fs::read_to_string(&log).unwrap_or_default();
            for (what, secret) in secrets {
                assert!(
                    !secret.is_empty() && !text.contains(secret),
                    "{} holds the {what}",
                    log.display()
                );
            }
        }
    }
}

/// What an operator does on the empty database with the CLI before the first start: the tenant,
/// its admin (the password on standard input), an API key with every scope (returned), and the
/// probe tool, packed from its folder and installed.
fn first_steps(db: &Db, dir: &Path) -> String {
    toolbridge(Some(db), &["tenants", "create", "--name", TENANT], None);
    toolbridge(
        Some(db),
        &[
            "users",
            "create",
            "--tenant",
            TENANT,
            "--email",
            ADMIN.0,
            "--role",
            "admin",
            "--password-stdin",
        ],
        Some(&format!("{}\n", ADMIN.1)),
    );
    let created = toolbridge(
        Some(db),
        &[
            "keys",
            "create",
            "--tenant",
            TENANT,
            "--name",
            "deployment suite",
            "--scopes",
            "customers:read,products:read,quotes:read,quotes:write,jobs:read,catalog:read,webhooks:write",
            "--rate-limit",
            "1000000/60s",
        ],
        None,
    );
    let key = created
        .split_whitespace()
        .find(|word| word.starts_with("tbk_"))
        .unwrap_or_else(|| panic!("`keys create` printed no key:\n{created}"))
        .to_owned();
    let bundle = dir.join("probe.zip");
    let probe_dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("reliability/proxied/probe-tool");
    toolbridge(
        None,
        &[
            "tool",
            "pack",
            &probe_dir.display().to_string(),
            "--output",
            &bundle.display().to_string(),
        ],
        None,
    );
    toolbridge(
        Some(db),
        &[
            "tool",
            "install",
            &bundle.display().to_string(),
            "--slug",
            PROBE,
        ],
        None,
    );
    key
}

/// Fails if `text` (what `what` is) names an instance's own port.
fn assert_no_instance_port(deployment: &Deployment, what: &str, text: &str) {
    for port in deployment.instance_ports() {
        assert!(
            !text.contains(&format!(":{port}")),
            "{what} names the instance's own port {port}: {text}"
        );
    }
}

/// The header `name` of `response`, as text (empty when absent).
fn header(response: &reqwest::Response, name: reqwest::header::HeaderName) -> String {
    response
        .headers()
        .get(name)
        .and_then(|value| value.to_str().ok())
        .unwrap_or_default()
        .to_owned()
}

/// The app's page through the proxy: its CSP frames only the tools' https origins on the proxy's
/// port, it names no instance's port and no http origin, and HSTS is sent.
async fn check_app_page(deployment: &Deployment, client: &reqwest::Client) {
    let app = deployment.app();
    let tools_source = format!("https://*.tools.{DOMAIN}:{}", deployment.nginx.https_port);
    let page = client.get(format!("{app}/")).send().await.unwrap();
    assert_eq!(page.status(), 200, "the app loads through the proxy");
    let policy = header(&page, CONTENT_SECURITY_POLICY);
    assert!(
        policy.contains(&format!("frame-src {tools_source};")),
        "the app's CSP: {policy}"
    );
    assert!(!policy.contains("http://"), "the app's CSP: {policy}");
    assert_no_instance_port(deployment, "the app's CSP", &policy);
    assert!(
        header(&page, STRICT_TRANSPORT_SECURITY).starts_with("max-age="),
        "no Strict-Transport-Security on the app's page"
    );
    let html = page.text().await.unwrap();
    assert!(html.contains("<html"), "the app's page: {html}");
}

/// The tool list names the probe at its https origin on the proxy's port, and that origin, through
/// the proxy, lets only the app's public origin frame it. The probe's origin.
async fn check_tool_origins(
    deployment: &Deployment,
    client: &reqwest::Client,
    cookie: &str,
) -> String {
    let app = deployment.app();
    let tools: Value = client
        .get(format!("{app}/api/tools"))
        .header(COOKIE, cookie)
        .header("sec-fetch-site", "same-origin")
        .send()
        .await
        .unwrap()
        .json()
        .await
        .unwrap();
    let probe_origin = format!(
        "https://{PROBE}.tools.{DOMAIN}:{}",
        deployment.nginx.https_port
    );
    let origins: Vec<&str> = tools
        .as_array()
        .unwrap_or_else(|| panic!("the tool list: {tools}"))
        .iter()
        .filter_map(|tool| tool["origin"].as_str())
        .collect();
    assert_eq!(origins, [probe_origin.as_str()], "the tool list: {tools}");
    assert_no_instance_port(deployment, "the tool list", &tools.to_string());
    let entry = client
        .get(format!("{probe_origin}/index.html"))
        .send()
        .await
        .unwrap();
    assert_eq!(entry.status(), 200, "the tool's page through the proxy");
    let tool_policy = header(&entry, CONTENT_SECURITY_POLICY);
    assert!(
        tool_policy.ends_with(&format!("frame-ancestors {app}")),
        "the tool's CSP: {tool_policy}"
    );
    assert_no_instance_port(deployment, "the tool's CSP", &tool_policy);
    probe_origin
}

/// What the steps in Chromium need to know.
#[derive(Clone)]
struct BrowserCheck {
    app: String,
    client: reqwest::Client,
    cookie: String,
    /// Each instance's own address, to make quotes through it directly.
    instances: [String; 2],
    /// The instances' ports, which no frame may name.
    ports: [u16; 2],
    probe_origin: String,
    /// The quote the probe adds its line to.
    quote: String,
}

impl BrowserCheck {
    /// In Chromium: the app over https with a `Secure` session cookie; the live list hearing quotes
    /// made through each instance; the probe's frame at its https origin completing its handshake
    /// and adding its line to the open quote.
    async fn run(self, browser: fantoccini::Client) {
        browser::sign_in(&browser, &self.app, ADMIN).await;
        let protocol: Value = browser
            .execute("return window.location.protocol;", vec![])
            .await
            .unwrap();
        assert_eq!(protocol, "https:");
        let session = browser
            .get_named_cookie("__Host-tb_session")
            .await
            .unwrap_or_else(|e| panic!("no session cookie in the browser: {e}"));
        assert_eq!(session.secure(), Some(true), "the browser's session cookie");

        for (n, base) in self.instances.iter().enumerate() {
            let (_, reference) = Deployment::create_quote(
                &self.client,
                base,
                &self.cookie,
                &format!("Live {n}"),
                &format!("proxied-live-{n}"),
            )
            .await
            .unwrap_or_else(|e| panic!("{e}"));
            browser::until(
                &browser,
                &format!("quote {reference}, made through {base}, in the live list"),
                &format!(
                    "Array.from(document.querySelectorAll('#main tbody tr')).some(row => row.textContent.includes({reference:?}))"
                ),
            )
            .await;
        }

        browser::open_tool_on_quote(&browser, &self.app, &self.quote, "Deployment probe").await;
        let frames: Value = browser
            .execute(
                "return Array.from(document.querySelectorAll('iframe')).map(f => f.src);",
                vec![],
            )
            .await
            .unwrap();
        let srcs: Vec<&str> = frames
            .as_array()
            .unwrap()
            .iter()
            .filter_map(Value::as_str)
            .collect();
        assert!(!srcs.is_empty(), "no tool frame");
        for src in &srcs {
            assert!(
                src.starts_with(&format!("{}/", self.probe_origin)),
                "a frame's src: {src}"
            );
            for port in self.ports {
                assert!(!src.contains(&format!(":{port}")), "a frame's src: {src}");
            }
        }
        browser::add_probe_line(&browser, ADMIN.0).await;
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn through_nginx_with_tls_the_app_and_its_tools_are_https_on_the_public_port() {
    let deployment = Deployment::start("proxied-https").await;
    let client = deployment.client();
    check_app_page(&deployment, &client).await;
    let (cookie, set_cookie) = deployment.sign_in(&client).await;
    assert!(
        cookie.starts_with("__Host-tb_session=") && set_cookie.contains("; Secure"),
        "the session cookie: {set_cookie}"
    );
    let probe_origin = check_tool_origins(&deployment, &client, &cookie).await;
    let app = deployment.app();
    let (quote, _) = Deployment::create_quote(&client, &app, &cookie, "Pier Cafe", "proxied-open")
        .await
        .unwrap_or_else(|e| panic!("{e}"));
    let check = BrowserCheck {
        app,
        client,
        cookie: cookie.clone(),
        instances: [deployment.a.base_url(), deployment.b.base_url()],
        ports: deployment.instance_ports(),
        probe_origin,
        quote,
    };
    let outcome = browser::Chromium::start(&deployment)
        .await
        .run(|browser| check.run(browser))
        .await;
    if let Err(failed) = outcome {
        std::panic::resume_unwind(failed);
    }
    deployment.assert_no_secret_logged(&[
        ("admin's password", ADMIN.1),
        ("API key", &deployment.key),
        ("session token", token_of(&cookie)),
    ]);
}

/// The value of a cookie's `name=value`.
fn token_of(cookie: &str) -> &str {
    cookie
        .split_once('=')
        .map(|(_, token)| token)
        .unwrap_or_default()
}

/// A webhook endpoint for `quote.created` at a receiver on this machine, made through the proxy
/// with the key; the receiver and the endpoint's signing secret.
async fn webhook_receiver(
    deployment: &Deployment,
    client: &reqwest::Client,
) -> (WebhookReceiver, String) {
    let receiver = WebhookReceiver::start().unwrap();
    let endpoint: Value = client
        .post(format!("{}/api/v1/webhook-endpoints", deployment.app()))
        .bearer_auth(&deployment.key)
        .json(&json!({"url": receiver.url(), "eventTypes": ["quote.created"]}))
        .send()
        .await
        .unwrap()
        .json()
        .await
        .unwrap();
    let secret = endpoint["secret"]
        .as_str()
        .unwrap_or_else(|| panic!("no webhook secret: {endpoint}"))
        .to_owned();
    (receiver, secret)
}

/// Clients through the proxy, each creating quotes (an idempotency key each) with the admin's
/// session and reading the list with the key, until stopped.
struct Load {
    stop: Arc<AtomicBool>,
    answered: Arc<AtomicUsize>,
    clients: Vec<tokio::task::JoinHandle<(Vec<String>, Vec<String>)>>,
}

/// What a [`Load`] did: the quotes it created, and every request that got no good answer.
struct LoadOutcome {
    created: BTreeSet<String>,
    failures: Vec<String>,
    answered: usize,
}

impl Load {
    /// Starts `clients` clients.
    fn start(
        deployment: &Deployment,
        client: &reqwest::Client,
        cookie: &str,
        clients: usize,
    ) -> Self {
        let stop = Arc::new(AtomicBool::new(false));
        let answered = Arc::new(AtomicUsize::new(0));
        let clients = (0..clients)
            .map(|n| {
                let (client, app, cookie, key) = (
                    client.clone(),
                    deployment.app(),
                    cookie.to_owned(),
                    deployment.key.clone(),
                );
                let (stop, answered) = (Arc::clone(&stop), Arc::clone(&answered));
                tokio::spawn(async move {
                    let mut created = Vec::new();
                    let mut failures = Vec::new();
                    let mut serial = 0;
                    while !stop.load(Ordering::Relaxed) {
                        serial += 1;
                        let key_of_request = format!("drain-{n}-{serial}");
                        match Deployment::create_quote(
                            &client,
                            &app,
                            &cookie,
                            "Drain Ltd",
                            &key_of_request,
                        )
                        .await
                        {
                            Ok((id, _)) => created.push(id),
                            Err(failure) => failures.push(failure),
                        }
                        let read = client
                            .get(format!("{app}/api/v1/quotes?pageSize=5"))
                            .bearer_auth(&key)
                            .send()
                            .await;
                        match read {
                            Ok(response) if response.status() == 200 => {}
                            Ok(response) => {
                                failures.push(format!("GET /api/v1/quotes: {}", response.status()));
                            }
                            Err(error) => failures.push(format!("GET /api/v1/quotes: {error}")),
                        }
                        answered.fetch_add(2, Ordering::Relaxed);
                    }
                    (created, failures)
                })
            })
            .collect();
        Self {
            stop,
            answered,
            clients,
        }
    }

    /// Requests answered so far.
    fn answered(&self) -> usize {
        self.answered.load(Ordering::Relaxed)
    }

    /// Stops the clients and says what they did.
    async fn finish(self) -> LoadOutcome {
        self.stop.store(true, Ordering::Relaxed);
        let mut created = BTreeSet::new();
        let mut failures = Vec::new();
        for client in self.clients {
            let (ids, failed) = client.await.unwrap();
            created.extend(ids);
            failures.extend(failed);
        }
        LoadOutcome {
            created,
            failures,
            answered: self.answered.load(Ordering::Relaxed),
        }
    }
}

/// Sends `server` SIGTERM and asks its `/readyz` directly until it stops answering; every status
/// it said, how it exited, and how long after the signal.
async fn drain(server: &mut Server) -> (BTreeSet<u16>, std::process::ExitStatus, Duration) {
    let readyz = format!("{}/readyz", server.base_url());
    let signalled = Instant::now();
    server.signal("TERM");
    let direct = reqwest::Client::new();
    let mut said = BTreeSet::new();
    while signalled.elapsed() < Duration::from_secs(GRACE_SECS) {
        match direct
            .get(&readyz)
            .timeout(Duration::from_secs(1))
            .send()
            .await
        {
            Ok(response) => {
                said.insert(response.status().as_u16());
            }
            Err(_) => break,
        }
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
    let status = server
        .wait_for_exit(Duration::from_secs(GRACE_SECS + DRAIN_DELAY_SECS + 10))
        .await;
    (said, status, signalled.elapsed())
}

/// Every quote in `created` had its `quote.created` event delivered exactly once, signed with
/// `secret`, whichever instance sent it, and the database records each delivery as delivered.
async fn check_each_event_delivered_once(
    deployment: &Deployment,
    receiver: &WebhookReceiver,
    secret: &str,
    created: &BTreeSet<String>,
) {
    receiver
        .wait_for_async(created.len(), Duration::from_secs(60))
        .await
        .unwrap_or_else(|e| panic!("webhooks: {e}"));
    // Long enough for a duplicate to show, were there one.
    tokio::time::sleep(Duration::from_secs(3)).await;
    let got = receiver.requests();
    let events: BTreeSet<&str> = got.iter().filter_map(Received::event_id).collect();
    let quotes: BTreeSet<String> = got
        .iter()
        .map(|request| {
            request.verify(secret).unwrap();
            request.json().unwrap()["data"]["quote"]["id"]
                .as_str()
                .unwrap_or_default()
                .to_owned()
        })
        .collect();
    assert_eq!(
        got.len(),
        created.len(),
        "a webhook sent twice, or one lost"
    );
    assert_eq!(events.len(), created.len(), "an event sent twice");
    assert_eq!(&quotes, created, "an event missing or for another quote");
    let delivered: Vec<i64> = deployment
        .db
        .fetch_all("SELECT COUNT(*) FROM webhook_deliveries WHERE status = 'delivered'")
        .await;
    assert_eq!(
        delivered,
        [i64::try_from(created.len()).unwrap()],
        "deliveries recorded as delivered"
    );
    // Both instances signed with the secret sealed in the database: none is kept as given.
    let unsealed: Vec<i64> = deployment
        .db
        .fetch_all("SELECT COUNT(*) FROM webhook_endpoints WHERE sealed_with IS NULL")
        .await;
    assert_eq!(unsealed, [0], "webhook secrets kept unsealed");
    let stored: Vec<String> = deployment
        .db
        .fetch_all("SELECT secret FROM webhook_endpoints")
        .await;
    assert!(
        !stored.iter().any(|stored| stored.contains(secret)),
        "the webhook secret is in the database as given"
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn sigterm_to_one_instance_under_load_loses_no_request_and_no_webhook() {
    let mut deployment = Deployment::start("proxied-drain").await;
    let client = deployment.client();
    let (cookie, _) = deployment.sign_in(&client).await;
    let (receiver, secret) = webhook_receiver(&deployment, &client).await;

    let load = Load::start(&deployment, &client, &cookie, 6);
    tokio::time::sleep(Duration::from_secs(3)).await;
    let before = load.answered();
    let (said, status, drained_in) = drain(&mut deployment.a).await;
    let at_exit = load.answered();
    // The other instance carries the load on its own for a while.
    tokio::time::sleep(Duration::from_secs(3)).await;
    let outcome = load.finish().await;
    println!(
        "proxied: drain: {} requests answered through the proxy ({before} before SIGTERM, \
         {at_exit} when instance a had exited), {} quotes, {} failed; instance a said {said:?} \
         on /readyz and exited {status} {:.1} s after SIGTERM",
        outcome.answered,
        outcome.created.len(),
        outcome.failures.len(),
        drained_in.as_secs_f64()
    );
    assert!(
        outcome.failures.is_empty(),
        "requests failed: {:#?}",
        outcome.failures
    );
    assert!(status.success(), "instance a exited {status}");
    assert!(
        drained_in < Duration::from_secs(GRACE_SECS),
        "instance a took {drained_in:?} to drain"
    );
    assert!(
        said.contains(&503),
        "/readyz said {said:?} while draining, never 503"
    );
    assert!(
        before < at_exit && at_exit < outcome.answered,
        "requests stopped being answered around the drain: {before}, {at_exit}, {}",
        outcome.answered
    );

    check_each_event_delivered_once(&deployment, &receiver, &secret, &outcome.created).await;
    deployment.assert_no_secret_logged(&[
        ("admin's password", ADMIN.1),
        ("API key", &deployment.key),
        ("session token", token_of(&cookie)),
        ("webhook secret", &secret),
    ]);
}

mod browser;

/// `deploy/toolbridge.service` with its binary's path filled in: `systemd-analyze verify` takes
/// it, and `systemd-analyze security` rates its sandbox at 2.0 or better (of 10, lower is
/// safer). Where systemd is not installed there is nothing to check this with, and it says so.
#[test]
fn the_systemd_unit_verifies_and_is_sandboxed() {
    let analyze = Path::new("/usr/bin/systemd-analyze");
    if !analyze.exists() {
        println!("proxied: no systemd-analyze on this machine: the unit is not checked");
        return;
    }
    let root = Path::new(env!("CARGO_MANIFEST_DIR"))
        .parent()
        .expect("the tests crate is in the workspace");
    let unit = std::fs::read_to_string(root.join("deploy/toolbridge.service")).unwrap();
    let binary = server::setting(server::BIN_VAR);
    assert!(
        unit.contains("ExecStart=/usr/local/bin/toolbridge serve"),
        "{unit}"
    );
    let dir = server::work_dir("proxied-systemd");
    let file = dir.join("toolbridge.service");
    std::fs::write(
        &file,
        unit.replace("/usr/local/bin/toolbridge", &binary.display().to_string()),
    )
    .unwrap();
    for args in [
        vec!["verify".to_owned()],
        vec![
            "security".to_owned(),
            "--offline=true".to_owned(),
            "--threshold=20".to_owned(),
        ],
    ] {
        let output = Command::new(analyze)
            .args(&args)
            .arg(&file)
            .output()
            .unwrap();
        let said = format!(
            "{}{}",
            String::from_utf8_lossy(&output.stdout),
            String::from_utf8_lossy(&output.stderr)
        );
        assert!(
            output.status.success(),
            "systemd-analyze {}: {said}",
            args.join(" ")
        );
        if args[0] == "security" {
            let overall = said
                .lines()
                .find(|line| line.contains("Overall exposure level"))
                .unwrap_or_default();
            println!("proxied: {}", overall.trim());
        }
    }
}
