//! Running in production, as an operator runs it: the built binary with `--metrics-bind`,
//! `--log-format json` and `--trust-proxy`, its metrics page scraped and its log read.

use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

use reqwest::Client;
use serde_json::{Value, json};
use toolbridge_e2e::webhook_receiver::WebhookReceiver;
use toolbridge_store::{RateLimit, Scope, Store};

use crate::serving::{Serving, toolbridge};

/// How long a test waits for what should come within seconds.
const WAIT: Duration = Duration::from_secs(20);

/// A database with the demo data and two keys of the demo tenant: one with every scope and a
/// generous limit, one allowed a single request a minute.
struct Seeded {
    dir: tempfile::TempDir,
    tenant: String,
    key: String,
    limited_key: String,
}

impl Seeded {
    async fn new() -> Self {
        let dir = tempfile::tempdir().unwrap();
        let store = Store::open(&dir.path().join("toolbridge.sqlite3"))
            .await
            .unwrap();
        store.seed_demo(20).await.unwrap();
        let tenant = store.default_tenant().await.unwrap().unwrap().id;
        let key = |requests| {
            store.create_api_key(
                &tenant,
                "operations",
                &Scope::ALL,
                RateLimit {
                    requests,
                    window_secs: 60,
                },
            )
        };
        let full = key(10_000).await.unwrap().token;
        let limited = key(1).await.unwrap().token;
        store.close().await;
        Self {
            dir,
            tenant,
            key: full,
            limited_key: limited,
        }
    }

    /// `toolbridge serve --demo` on this database, with `args` and the variables `env`.
    fn serve(&self, args: &[&str], env: &[(&str, &str)]) -> Serving {
        let db = self.dir.path().join("toolbridge.sqlite3");
        let on = [
            "--demo",
            "--example-tools",
            "none",
            "--db",
            db.to_str().unwrap(),
        ];
        Serving::start(self.dir.path(), &[&on[..], args].concat(), env)
    }
}

/// The value of the sample `name{labels…}` in a Prometheus text page, if it is there.
fn sample(page: &str, name: &str, labels: &[(&str, &str)]) -> Option<f64> {
    page.lines()
        .filter(|line| !line.starts_with('#'))
        .find_map(|line| {
            let (series, value) = line.rsplit_once(' ')?;
            let (metric, rest) = series.split_once('{').unwrap_or((series, ""));
            if metric != name {
                return None;
            }
            let pairs: Vec<&str> = rest
                .trim_end_matches('}')
                .split(',')
                .filter(|pair| !pair.is_empty())
                .collect();
            if pairs.len() != labels.len() {
                return None;
            }
            let all = labels
                .iter()
                .all(|(label, want)| pairs.contains(&format!("{label}=\"{want}\"").as_str()));
            all.then(|| value.parse().unwrap())
        })
}

async fn scrape(client: &Client, url: &str) -> String {
    let response = client.get(url).send().await.unwrap();
    assert_eq!(response.status(), 200);
    let media_type = response.headers()["content-type"]
        .to_str()
        .unwrap()
        .to_owned();
    assert!(
        media_type.starts_with("text/plain; version=0.0.4"),
        "{media_type}"
    );
    response.text().await.unwrap()
}

/// Scrapes until the sample reads `want`, and returns the page.
async fn scrape_until(
    client: &Client,
    url: &str,
    name: &str,
    labels: &[(&str, &str)],
    want: f64,
) -> String {
    let started = Instant::now();
    loop {
        let page = scrape(client, url).await;
        if sample(&page, name, labels) == Some(want) {
            return page;
        }
        assert!(
            started.elapsed() < WAIT,
            "{name}{labels:?} is not {want} after {WAIT:?}:\n{page}"
        );
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
}

/// Signs in as the demo office user; the session cookie (`name=value`).
async fn sign_in(client: &Client, server: &Serving, password: &str) -> reqwest::Response {
    client
        .post(server.url("/api/session"))
        .header("sec-fetch-site", "same-origin")
        .json(&json!({"email": "office@harbour.test", "password": password}))
        .send()
        .await
        .unwrap()
}

/// A server with `--metrics-bind`, and what the checks of its page use.
struct Watched {
    seeded: Seeded,
    server: Serving,
    client: Client,
    metrics: String,
}

impl Watched {
    async fn get(&self, path: &str, key: &str) -> reqwest::Response {
        self.client
            .get(self.server.url(path))
            .bearer_auth(key)
            .send()
            .await
            .unwrap()
    }

    async fn scrape(&self) -> String {
        scrape(&self.client, &self.metrics).await
    }

    async fn scrape_until(&self, name: &str, labels: &[(&str, &str)], want: f64) -> String {
        scrape_until(&self.client, &self.metrics, name, labels, want).await
    }
}

/// The labels of a `GET` of `route` answered `status`.
fn get_of(route: &'static str, status: &'static str) -> [(&'static str, &'static str); 3] {
    [("route", route), ("method", "GET"), ("status", status)]
}

#[tokio::test]
async fn metrics_count_requests_limits_streams_and_webhooks_on_their_own_listener() {
    let seeded = Seeded::new().await;
    let server = seeded.serve(
        &["--allow-private-webhooks", "--metrics-bind", "127.0.0.1:0"],
        &[],
    );
    let metrics = server
        .metrics
        .clone()
        .expect("the server says where its metrics are");
    assert!(metrics.ends_with("/metrics"), "{metrics}");
    let watched = Watched {
        seeded,
        server,
        client: Client::new(),
        metrics,
    };

    // Nothing yet, but every fixed series is there from the start.
    let first = watched.scrape().await;
    let zero = |name, labels: &[(&str, &str)]| {
        assert_eq!(sample(&first, name, labels), Some(0.0), "{name}: {first}");
    };
    zero(
        "toolbridge_webhook_delivery_attempts_total",
        &[("outcome", "delivered")],
    );
    zero(
        "toolbridge_rate_limited_requests_total",
        &[("limit", "api_key")],
    );
    zero("toolbridge_sign_in_failures_total", &[]);
    zero("toolbridge_event_streams_open", &[]);
    zero("toolbridge_webhook_queue_pending", &[]);
    assert!(
        sample(&first, "toolbridge_db_connections_open", &[]).unwrap() >= 1.0,
        "{first}"
    );
    assert!(
        sample(&first, "toolbridge_db_connections_in_use", &[]).is_some(),
        "{first}"
    );
    let customers = get_of("/api/v1/customers", "200");
    assert_eq!(
        sample(&first, "toolbridge_http_requests_total", &customers),
        None
    );

    only_the_metrics_listener_serves_metrics(&watched).await;
    requests_count_by_route(&watched).await;
    refusals_count_by_limit(&watched).await;
    open_streams_count_while_open(&watched).await;
    webhook_attempts_count_by_outcome(&watched).await;
}

async fn only_the_metrics_listener_serves_metrics(watched: &Watched) {
    // The public listener's 404 for a page it does not have.
    let public = watched
        .client
        .get(watched.server.url("/metrics"))
        .send()
        .await
        .unwrap();
    assert_eq!(public.status(), 404);
    assert_eq!(public.headers()["content-type"], "application/problem+json");
    // And the metrics listener serves nothing else.
    let other = watched
        .client
        .get(watched.metrics.replace("/metrics", "/"))
        .send()
        .await
        .unwrap();
    assert_eq!(other.status(), 404);
}

async fn requests_count_by_route(watched: &Watched) {
    let key = &watched.seeded.key;
    for _ in 0..3 {
        let answer = watched.get("/api/v1/customers?pageSize=1", key).await;
        assert_eq!(answer.status(), 200);
    }
    let missing = watched.get("/api/v1/quotes/q_nope", key).await;
    assert_eq!(missing.status(), 404);
    let page = watched.scrape().await;
    let count = |labels: &[(&str, &str)]| sample(&page, "toolbridge_http_requests_total", labels);
    assert_eq!(
        count(&get_of("/api/v1/customers", "200")),
        Some(3.0),
        "{page}"
    );
    assert_eq!(
        count(&get_of("/api/v1/quotes/{id}", "404")),
        Some(1.0),
        "{page}"
    );
    // The public /metrics.
    assert_eq!(count(&get_of("(app file)", "404")), Some(1.0), "{page}");
    let timed = [("route", "/api/v1/customers"), ("method", "GET")];
    assert_eq!(
        sample(
            &page,
            "toolbridge_http_request_duration_seconds_count",
            &timed
        ),
        Some(3.0),
        "{page}"
    );
}

async fn refusals_count_by_limit(watched: &Watched) {
    let limited = &watched.seeded.limited_key;
    assert_eq!(
        watched.get("/api/v1/customers", limited).await.status(),
        200
    );
    assert_eq!(
        watched.get("/api/v1/customers", limited).await.status(),
        429
    );
    let wrong = sign_in(&watched.client, &watched.server, "wrong").await;
    assert_eq!(wrong.status(), 401);
    let page = watched.scrape().await;
    let refused = |limit| {
        sample(
            &page,
            "toolbridge_rate_limited_requests_total",
            &[("limit", limit)],
        )
    };
    assert_eq!(refused("api_key"), Some(1.0), "{page}");
    assert_eq!(refused("sign_in"), Some(0.0), "{page}");
    assert_eq!(
        sample(&page, "toolbridge_sign_in_failures_total", &[]),
        Some(1.0),
        "{page}"
    );
}

async fn open_streams_count_while_open(watched: &Watched) {
    let signed_in = sign_in(&watched.client, &watched.server, "demo-password").await;
    assert_eq!(signed_in.status(), 200);
    let cookie = signed_in.headers()["set-cookie"].to_str().unwrap();
    let cookie = cookie.split(';').next().unwrap().to_owned();
    let stream = watched
        .client
        .get(watched.server.url("/api/events"))
        .header("cookie", &cookie)
        .header("sec-fetch-site", "same-origin")
        .send()
        .await
        .unwrap();
    assert_eq!(stream.status(), 200);
    watched
        .scrape_until("toolbridge_event_streams_open", &[], 1.0)
        .await;
    drop(stream);
    watched
        .scrape_until("toolbridge_event_streams_open", &[], 0.0)
        .await;
}

async fn webhook_attempts_count_by_outcome(watched: &Watched) {
    let receiver = WebhookReceiver::start().unwrap();
    let key = &watched.seeded.key;
    let customers: Value = watched
        .get("/api/v1/customers?pageSize=1", key)
        .await
        .json()
        .await
        .unwrap();
    let products: Value = watched
        .get("/api/v1/products?pageSize=1", key)
        .await
        .json()
        .await
        .unwrap();
    let post = |path: &str, body: Value| {
        watched
            .client
            .post(watched.server.url(path))
            .bearer_auth(key)
            .json(&body)
            .send()
    };
    let endpoint = post(
        "/api/v1/webhook-endpoints",
        json!({"url": receiver.url(), "eventTypes": ["quote.created"]}),
    )
    .await
    .unwrap();
    assert_eq!(endpoint.status(), 201);
    let created = post(
        "/api/v1/quotes",
        json!({
            "customerId": customers["items"][0]["id"],
            "lines": [{"skuId": products["items"][0]["id"], "qty": 2, "unitPrice": 89.5}]
        }),
    )
    .await
    .unwrap();
    assert_eq!(created.status(), 201);
    receiver.wait_for_async(1, WAIT).await.unwrap();
    let delivered = [("outcome", "delivered")];
    let page = watched
        .scrape_until(
            "toolbridge_webhook_delivery_attempts_total",
            &delivered,
            1.0,
        )
        .await;
    let retrying = [("outcome", "retrying")];
    assert_eq!(
        sample(
            &page,
            "toolbridge_webhook_delivery_attempts_total",
            &retrying
        ),
        Some(0.0),
        "{page}"
    );
    assert_eq!(
        sample(&page, "toolbridge_webhook_queue_pending", &[]),
        Some(0.0),
        "{page}"
    );
    assert_eq!(
        sample(
            &page,
            "toolbridge_webhook_queue_oldest_due_age_seconds",
            &[]
        ),
        Some(0.0),
        "{page}"
    );
}

#[tokio::test]
async fn the_metrics_page_passes_promtool() {
    let seeded = Seeded::new().await;
    let server = seeded.serve(&["--metrics-bind", "127.0.0.1:0"], &[]);
    let client = Client::new();
    // Some traffic, so that every kind of series is on the page.
    for path in ["/api/v1/customers", "/api/v1/openapi.json", "/nope"] {
        client
            .get(server.url(path))
            .bearer_auth(&seeded.key)
            .send()
            .await
            .unwrap();
    }
    let page = scrape(&client, server.metrics.as_deref().unwrap()).await;
    assert!(
        page.contains("toolbridge_http_request_duration_seconds_bucket"),
        "{page}"
    );

    let mut promtool = Command::new("promtool")
        .args(["check", "metrics"])
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap_or_else(|error| {
            panic!(
                "cannot run promtool ({error}): install Debian's `prometheus` package \
                 (`cargo xtask setup` does: apt-get install --no-install-recommends prometheus)"
            )
        });
    {
        use std::io::Write as _;
        let mut stdin = promtool.stdin.take().unwrap();
        stdin.write_all(page.as_bytes()).unwrap();
    }
    let checked = promtool.wait_with_output().unwrap();
    assert!(
        checked.status.success(),
        "promtool check metrics: {}{}\n{page}",
        String::from_utf8_lossy(&checked.stdout),
        String::from_utf8_lossy(&checked.stderr)
    );
}

#[tokio::test]
async fn the_json_log_names_the_client_behind_a_trusted_proxy_only() {
    let seeded = Seeded::new().await;
    let client = Client::new();

    // Behind a proxy on 127.0.0.1: the address it forwards is the client's.
    let trusting = seeded.serve(
        &["--log-format", "json", "--trust-proxy", "127.0.0.1/32"],
        &[],
    );
    let response = client
        .get(trusting.url("/api/v1/customers?pageSize=1&token=not-logged"))
        .bearer_auth(&seeded.key)
        .header("x-forwarded-for", "198.51.100.1, 203.0.113.7")
        .send()
        .await
        .unwrap();
    assert_eq!(response.status(), 200);
    let id = response.headers()["x-request-id"]
        .to_str()
        .unwrap()
        .to_owned();
    let line = trusting.request_line(&id, WAIT);
    assert_eq!(line["client"], "203.0.113.7", "{line}");
    assert_eq!(line["tenant"], seeded.tenant.as_str(), "{line}");
    assert_eq!(line["route"], "/api/v1/customers", "{line}");
    assert_eq!(line["path"], "/api/v1/customers", "{line}");
    assert_eq!(line["method"], "GET", "{line}");
    assert_eq!(line["status"], 200, "{line}");
    assert_eq!(line["level"], "INFO", "{line}");
    assert_eq!(line["message"], "request", "{line}");
    assert!(line["timestamp"].is_string(), "{line}");
    assert!(line["duration_ms"].as_f64().unwrap() >= 0.0, "{line}");

    // A request without a caller has no tenant; a tool origin's has its kind as its route.
    let anonymous = client
        .get(trusting.url("/api/v1/customers"))
        .header("x-forwarded-for", "203.0.113.8")
        .send()
        .await
        .unwrap();
    assert_eq!(anonymous.status(), 401);
    let id = anonymous.headers()["x-request-id"]
        .to_str()
        .unwrap()
        .to_owned();
    let line = trusting.request_line(&id, WAIT);
    assert_eq!(line["client"], "203.0.113.8", "{line}");
    assert!(line.get("tenant").is_none(), "{line}");
    let port = trusting.base.rsplit(':').next().unwrap().to_owned();
    let tool = client
        .get(trusting.url("/sdk/bridge.js"))
        .header("host", format!("nosuchtool.tools.localhost:{port}"))
        .send()
        .await
        .unwrap();
    let id = tool.headers()["x-request-id"].to_str().unwrap().to_owned();
    let line = trusting.request_line(&id, WAIT);
    assert_eq!(line["route"], "(tool origin)", "{line}");

    // Nothing secret anywhere in the log: not the key, not the password, not the query string.
    assert_eq!(
        sign_in(&client, &trusting, "demo-password").await.status(),
        200
    );
    std::thread::sleep(Duration::from_millis(300));
    let log = trusting.stderr();
    assert!(!log.contains(&seeded.key), "{log}");
    assert!(!log.contains("demo-password"), "{log}");
    assert!(!log.contains("not-logged"), "{log}");
    drop(trusting);

    // Without --trust-proxy (and json from the variable): the header is a forgery, ignored.
    let direct = seeded.serve(&[], &[("TOOLBRIDGE_LOG_FORMAT", "json")]);
    let response = client
        .get(direct.url("/api/v1/openapi.json"))
        .header("x-forwarded-for", "203.0.113.7")
        .header("forwarded", "for=203.0.113.9")
        .send()
        .await
        .unwrap();
    assert_eq!(response.status(), 200);
    let id = response.headers()["x-request-id"]
        .to_str()
        .unwrap()
        .to_owned();
    let line = direct.request_line(&id, WAIT);
    assert_eq!(line["client"], "127.0.0.1", "{line}");
    assert_eq!(line["route"], "/api/v1/openapi.json", "{line}");
}

#[test]
fn a_bad_trusted_proxy_is_refused_at_start_with_the_reason() {
    let work = tempfile::tempdir().unwrap();
    let refused = |args: &[&str], env: &[(&str, &str)]| {
        let output = toolbridge(work.path())
            .envs(env.iter().copied())
            .args(["serve", "--port", "0"])
            .args(args)
            .output()
            .unwrap();
        assert!(!output.status.success());
        String::from_utf8_lossy(&output.stderr).into_owned()
    };
    let said = refused(&["--trust-proxy", "10.0.0.0/33"], &[]);
    assert!(said.contains("/33 is not a prefix length"), "{said}");
    let said = refused(
        &[],
        &[("TOOLBRIDGE_TRUST_PROXY", "10.0.0.0/8,proxy.internal")],
    );
    assert!(
        said.contains("\"proxy.internal\" is not an IP address"),
        "{said}"
    );
    let said = refused(&["--log-format", "xml"], &[]);
    assert!(said.contains("xml"), "{said}");
    assert!(
        !work.path().join("toolbridge.sqlite3").exists(),
        "nothing was started"
    );
}
