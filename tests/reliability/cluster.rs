//! Several instances that behave as one: two release servers on one `PostgreSQL` database, as a
//! load balancer would have them, with clients alternating between them.
//!
//! - A key's rate limit holds across both: 10 requests per 2 s is 10 per window in all.
//! - The sign-in throttle too: of 20 wrong passwords at once, split across both, at most 5 are
//!   checked; then both answer 429.
//! - An event stream open on one hears the quotes created, saved and sent through the other.
//! - One `Idempotency-Key` sent to both at once makes one quote, and both answers name it.
//! - One instance killed with SIGKILL under load: what it left unanswered, sent again to the other
//!   with the same keys, makes exactly one quote each, and nothing answers 5xx.
//! - An instance whose listener loses its connection (`pg_terminate_backend`) tells its streams
//!   to `resync`, and the app (in Chromium) reloads what it shows.
//! - Two instances started together on an empty database seed it once.
//! - Quotes created through both, with a webhook receiver that answers at once: each event is
//!   delivered exactly once (one worker claims it), none is missing.

use std::collections::{BTreeMap, BTreeSet};
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::{Duration, Instant};

use reqwest::header::{CONTENT_TYPE, COOKIE, SET_COOKIE};
use serde_json::{Value, json};
use sqlx::{Connection, PgConnection};

use toolbridge_e2e::webhook_receiver::{Received, WebhookReceiver};

use crate::client::{self, Api, Fixtures, Reply, Rng};
use crate::db::{Backend, Db};
use crate::page::{self, until};
use crate::server::{self, Server};

/// Products in the demo catalog.
const PRODUCTS: u32 = 100;

/// Every scope a test needs.
const SCOPES: &str = "customers:read,products:read,quotes:read,quotes:write";

/// A limit no test reaches.
const ROOMY: &str = "1000000000/60s";

/// The demo user every session test signs in as, and the demo password.
const USER: (&str, &str) = ("office@harbour.test", "demo-password");

/// How long an event made on one instance may take to reach a stream on the other.
const EVENT_WAIT: Duration = Duration::from_secs(2);

/// Two servers on one fresh `PostgreSQL` database, the second started once the first has seeded
/// it, their logs in the suite's folder `name`.
struct Pair {
    db: Db,
    a: Server,
    b: Server,
}

impl Pair {
    async fn start(name: &str) -> Self {
        let dir = server::work_dir(name);
        let db = Db::new(Backend::Postgres, &dir);
        let a = Server::start_named(&dir, "a", &db, PRODUCTS).await;
        let b = Server::start_named(&dir, "b", &db, PRODUCTS).await;
        println!(
            "cluster: {name}: instances a at {} and b at {} on {}",
            a.base_url(),
            b.base_url(),
            db.describe()
        );
        Self { db, a, b }
    }

    /// The REST API of each instance, a first.
    fn apis(&self) -> [Api; 2] {
        [Api::new(&self.a.base_url()), Api::new(&self.b.base_url())]
    }
}

/// `POST /api/v1/quotes` with an idempotency key.
fn create(api: &Api, token: &str, key: &str, body: &Value) -> reqwest::RequestBuilder {
    api.post("/quotes")
        .bearer_auth(token)
        .header(CONTENT_TYPE, "application/json")
        .header("idempotency-key", key)
        .body(serde_json::to_vec(body).expect("a quote body serializes"))
}

/// `POST /api/session` with the demo user's email and `password`, on the server at `base`.
fn sign_in(api: &Api, base: &str, password: &str) -> reqwest::RequestBuilder {
    api.client
        .post(format!("{base}/api/session"))
        .json(&json!({"email": USER.0, "password": password}))
}

/// What a reply said, for a failed expectation.
fn shown(reply: &Reply) -> String {
    format!("{} {}", reply.status, String::from_utf8_lossy(&reply.body))
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_rate_limit_counts_requests_on_both_instances_together() {
    let pair = Pair::start("cluster-rate").await;
    let key = pair.a.create_key("limited", SCOPES, "10/2s");
    let apis = pair.apis();
    // Eight clients, alternating instances request by request, for three windows and a bit.
    let until = Instant::now() + Duration::from_millis(6500);
    let clients: Vec<_> = (0..8)
        .map(|client| {
            let (apis, token) = (apis.clone(), key.token.clone());
            tokio::spawn(async move {
                let mut replies = Vec::new();
                let mut turn = client;
                while Instant::now() < until {
                    let api = &apis[turn % 2];
                    turn += 1;
                    let reply =
                        client::exchange(api.get("/customers?pageSize=1").bearer_auth(&token))
                            .await
                            .unwrap_or_else(|e| panic!("GET /customers: {e}"));
                    replies.push(reply);
                }
                replies
            })
        })
        .collect();
    // Window end (X-RateLimit-Reset) → (answered 200, answered 429).
    let mut windows: BTreeMap<u64, (u32, u32)> = BTreeMap::new();
    for client in clients {
        for reply in client.await.expect("a client does not panic") {
            let rate = reply
                .rate()
                .unwrap_or_else(|| panic!("no rate-limit headers: {}", shown(&reply)));
            let counts = windows.entry(rate.reset).or_default();
            match reply.status {
                200 => counts.0 += 1,
                429 => counts.1 += 1,
                _ => panic!("a limited key's request answered {}", shown(&reply)),
            }
        }
    }
    println!("cluster: rate: window end → (200, 429): {windows:?}");
    let full: Vec<_> = windows
        .iter()
        .filter(|(_, (_, refused))| *refused > 0)
        .collect();
    assert!(
        full.len() >= 2,
        "fewer than two windows reached the limit: {windows:?}"
    );
    for (end, (allowed, _)) in &windows {
        assert!(
            *allowed <= 10,
            "window ending {end}: {allowed} requests allowed, over 10"
        );
    }
    for (end, (allowed, _)) in full {
        assert_eq!(
            *allowed, 10,
            "window ending {end} refused some but allowed {allowed}"
        );
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn wrong_passwords_on_both_instances_share_one_throttle() {
    let pair = Pair::start("cluster-sign-in").await;
    let bases = [pair.a.base_url(), pair.b.base_url()];
    let api = Api::new(&bases[0]);
    let attempts: Vec<_> = (0..20)
        .map(|n| {
            let (api, base) = (api.clone(), bases[n % 2].clone());
            tokio::spawn(async move {
                client::exchange(sign_in(&api, &base, &format!("wrong-{n}")))
                    .await
                    .unwrap_or_else(|e| panic!("POST /api/session: {e}"))
            })
        })
        .collect();
    let mut statuses = BTreeMap::<u16, u32>::new();
    for attempt in attempts {
        let reply = attempt.await.expect("an attempt does not panic");
        *statuses.entry(reply.status).or_default() += 1;
    }
    println!("cluster: sign-in: 20 wrong passwords at once → {statuses:?}");
    let checked = statuses.get(&401).copied().unwrap_or_default();
    let refused = statuses.get(&429).copied().unwrap_or_default();
    assert!(
        (1..=5).contains(&checked) && checked + refused == 20,
        "expected at most 5 checked (401) and the rest 429: {statuses:?}"
    );
    // Now even the right password is not checked, on either instance.
    for base in &bases {
        let reply = client::exchange(sign_in(&api, base, USER.1))
            .await
            .unwrap_or_else(|e| panic!("POST /api/session: {e}"));
        assert_eq!(reply.status, 429, "{base}: {}", shown(&reply));
        assert!(
            reply.header("retry-after").is_some(),
            "{base}: no Retry-After"
        );
    }
}

/// A signed-in session's cookie, from the server at `base`.
async fn session_cookie(api: &Api, base: &str) -> String {
    let reply = client::exchange(sign_in(api, base, USER.1))
        .await
        .unwrap_or_else(|e| panic!("POST /api/session: {e}"));
    assert_eq!(reply.status, 200, "sign-in: {}", shown(&reply));
    let cookie = reply
        .headers
        .get(SET_COOKIE)
        .and_then(|value| value.to_str().ok())
        .and_then(|value| value.split(';').next())
        .unwrap_or_else(|| panic!("sign-in set no cookie"));
    cookie.to_owned()
}

/// An open `GET /api/events` stream, read event by event.
struct Stream {
    response: reqwest::Response,
    buffer: String,
}

/// One Server-Sent Event: its name, data and id.
#[derive(Debug, Clone)]
struct SseEvent {
    name: String,
    data: String,
    id: Option<String>,
}

impl Stream {
    /// Opens the stream on the server at `base` with a session cookie, and `Last-Event-ID` if
    /// given.
    async fn open(api: &Api, base: &str, cookie: &str, last_event_id: Option<&str>) -> Self {
        let mut request = api
            .client
            .get(format!("{base}/api/events"))
            .header(COOKIE, cookie)
            // What a browser says of the app's own page; the session API needs it.
            .header("sec-fetch-site", "same-origin")
            // The stream runs for as long as the test reads it.
            .timeout(Duration::from_secs(600));
        if let Some(id) = last_event_id {
            request = request.header("last-event-id", id);
        }
        let response = request
            .send()
            .await
            .unwrap_or_else(|e| panic!("GET /api/events: {e}"));
        assert_eq!(response.status(), 200, "GET /api/events");
        Self {
            response,
            buffer: String::new(),
        }
    }

    /// The next event (comments and keep-alives skipped), or `None` when none came within
    /// `wait`.
    async fn next(&mut self, wait: Duration) -> Option<SseEvent> {
        let deadline = Instant::now() + wait;
        loop {
            if let Some(end) = self.buffer.find("\n\n") {
                let block: String = self.buffer.drain(..end + 2).collect();
                let mut event = SseEvent {
                    name: "message".to_owned(),
                    data: String::new(),
                    id: None,
                };
                let mut any = false;
                for line in block.lines() {
                    if let Some(value) = line.strip_prefix("event:") {
                        value.trim().clone_into(&mut event.name);
                        any = true;
                    } else if let Some(value) = line.strip_prefix("data:") {
                        if !event.data.is_empty() {
                            event.data.push('\n');
                        }
                        event
                            .data
                            .push_str(value.strip_prefix(' ').unwrap_or(value));
                        any = true;
                    } else if let Some(value) = line.strip_prefix("id:") {
                        event.id = Some(value.trim().to_owned());
                    }
                }
                if any {
                    return Some(event);
                }
                continue;
            }
            let left = deadline.checked_duration_since(Instant::now())?;
            match tokio::time::timeout(left, self.response.chunk()).await {
                Ok(Ok(Some(chunk))) => self.buffer.push_str(&String::from_utf8_lossy(&chunk)),
                Ok(Ok(None)) => panic!("the event stream ended"),
                Ok(Err(error)) => panic!("the event stream failed: {error}"),
                Err(_) => return None,
            }
        }
    }

    /// The next `quote` event of quote `id`, within [`EVENT_WAIT`]; its `kind`.
    async fn quote_event(&mut self, id: &str) -> String {
        let deadline = Instant::now() + EVENT_WAIT;
        loop {
            let left = deadline.saturating_duration_since(Instant::now());
            let event = self
                .next(left)
                .await
                .unwrap_or_else(|| panic!("no event of quote {id} within {EVENT_WAIT:?}"));
            if event.name != "quote" {
                continue;
            }
            let data: Value = serde_json::from_str(&event.data).unwrap_or(Value::Null);
            if data["quote"]["id"].as_str() == Some(id) {
                assert!(event.id.is_some(), "a quote event without an id: {event:?}");
                return data["kind"].as_str().unwrap_or_default().to_owned();
            }
        }
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_stream_on_one_instance_hears_what_is_done_through_the_other() {
    let pair = Pair::start("cluster-events").await;
    let [api_a, api_b] = pair.apis();
    let key = pair.b.create_key("writer", SCOPES, ROOMY);
    let fixtures = Fixtures::fetch(&api_b, &key.token).await;
    let cookie = session_cookie(&api_a, &pair.a.base_url()).await;
    let mut stream = Stream::open(&api_a, &pair.a.base_url(), &cookie, None).await;

    let body = client::quote_body(&mut Rng::new(7), &fixtures, "events", 3);
    let created = client::exchange(create(&api_b, &key.token, "events-1", &body))
        .await
        .unwrap_or_else(|e| panic!("POST /quotes on b: {e}"));
    assert_eq!(created.status, 201, "create on b: {}", shown(&created));
    let id = created.json()["id"].as_str().unwrap_or_default().to_owned();
    assert_eq!(stream.quote_event(&id).await, "created");

    let saved = client::exchange(
        api_b
            .client
            .patch(format!("{}/api/v1/quotes/{id}", pair.b.base_url()))
            .bearer_auth(&key.token)
            .json(&json!({"expiryDays": 45})),
    )
    .await
    .unwrap_or_else(|e| panic!("PATCH on b: {e}"));
    assert_eq!(saved.status, 200, "save on b: {}", shown(&saved));
    assert_eq!(stream.quote_event(&id).await, "saved");

    let sent = client::exchange(
        api_b
            .post(&format!("/quotes/{id}/send"))
            .bearer_auth(&key.token),
    )
    .await
    .unwrap_or_else(|e| panic!("send on b: {e}"));
    assert_eq!(sent.status, 200, "send on b: {}", shown(&sent));
    assert_eq!(stream.quote_event(&id).await, "sent");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_stream_that_reconnects_hears_what_it_missed_or_resync() {
    let pair = Pair::start("cluster-replay").await;
    let [api_a, api_b] = pair.apis();
    let key = pair.a.create_key("writer", SCOPES, ROOMY);
    let fixtures = Fixtures::fetch(&api_a, &key.token).await;
    let cookie = session_cookie(&api_a, &pair.a.base_url()).await;
    let mut stream = Stream::open(&api_a, &pair.a.base_url(), &cookie, None).await;
    let mut rng = Rng::new(11);
    let first = client::exchange(create(
        &api_a,
        &key.token,
        "replay-1",
        &client::quote_body(&mut rng, &fixtures, "replay", 2),
    ))
    .await
    .unwrap_or_else(|e| panic!("create: {e}"));
    let first_id = first.json()["id"].as_str().unwrap_or_default().to_owned();
    let heard = loop {
        let event = stream
            .next(EVENT_WAIT)
            .await
            .expect("the first quote's event");
        if event.name == "quote" {
            break event;
        }
    };
    assert!(heard.data.contains(&first_id), "{heard:?}");
    drop(stream);

    // While no stream is open, two more quotes, one through each instance.
    let mut missed = Vec::new();
    for (n, api) in [&api_a, &api_b].into_iter().enumerate() {
        let reply = client::exchange(create(
            api,
            &key.token,
            &format!("replay-{}", n + 2),
            &client::quote_body(&mut rng, &fixtures, "replay", 2),
        ))
        .await
        .unwrap_or_else(|e| panic!("create: {e}"));
        assert_eq!(reply.status, 201, "{}", shown(&reply));
        missed.push(reply.json()["id"].as_str().unwrap_or_default().to_owned());
    }
    // Reconnecting to the other instance with the last id heard: both, in order.
    let mut stream = Stream::open(&api_b, &pair.b.base_url(), &cookie, heard.id.as_deref()).await;
    for id in &missed {
        assert_eq!(stream.quote_event(id).await, "created");
    }
    // An id this database never gave: resync.
    let mut stream = Stream::open(&api_b, &pair.b.base_url(), &cookie, Some("999999999")).await;
    let event = stream
        .next(EVENT_WAIT)
        .await
        .expect("an answer to an unknown id");
    assert_eq!(event.name, "resync", "{event:?}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn one_idempotency_key_sent_to_both_at_once_makes_one_quote() {
    let pair = Pair::start("cluster-idempotency").await;
    let apis = pair.apis();
    let key = pair.a.create_key("writer", SCOPES, ROOMY);
    let fixtures = Fixtures::fetch(&apis[0], &key.token).await;
    let mut rng = Rng::new(3);
    for round in 0..10 {
        let title = format!("idempotent-{round}");
        let body = client::quote_body(&mut rng, &fixtures, &title, 4);
        let both: Vec<_> = apis
            .iter()
            .map(|api| {
                let (api, token, body, title) =
                    (api.clone(), key.token.clone(), body.clone(), title.clone());
                tokio::spawn(async move {
                    client::exchange(create(&api, &token, &title, &body))
                        .await
                        .unwrap_or_else(|e| panic!("POST /quotes: {e}"))
                })
            })
            .collect();
        let mut ids = BTreeSet::new();
        for reply in both {
            let reply = reply.await.expect("a request does not panic");
            assert_eq!(reply.status, 201, "round {round}: {}", shown(&reply));
            ids.insert(reply.json()["id"].as_str().unwrap_or_default().to_owned());
        }
        assert_eq!(
            ids.len(),
            1,
            "round {round}: two answers, two quotes: {ids:?}"
        );
        let made: Vec<i64> = pair
            .db
            .fetch_all(&format!(
                "SELECT COUNT(*) FROM quotes WHERE title = '{title}'"
            ))
            .await;
        assert_eq!(made, [1], "round {round}: quotes titled {title}");
    }
}

/// A create sent by the kill test: its key and body, and its answer once it has one.
struct Sent {
    key: String,
    body: Value,
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn requests_a_killed_instance_left_unanswered_make_one_quote_each_on_the_other() {
    let pair = Pair::start("cluster-kill").await;
    let [api_a, api_b] = pair.apis();
    let key = pair.a.create_key("writer", SCOPES, ROOMY);
    let fixtures = Arc::new(Fixtures::fetch(&api_a, &key.token).await);
    let killing = Arc::new(AtomicBool::new(false));
    // Six clients alternate between the instances; each keeps what went unanswered.
    let clients: Vec<_> = (0..6_u64)
        .map(|client| {
            let (api_a, api_b) = (api_a.clone(), api_b.clone());
            let (token, fixtures, killing) = (
                key.token.clone(),
                Arc::clone(&fixtures),
                Arc::clone(&killing),
            );
            tokio::spawn(async move {
                let mut rng = Rng::new(client + 100);
                let (mut answered, mut unanswered, mut problems) =
                    (Vec::new(), Vec::new(), Vec::new());
                for serial in 0_u64.. {
                    let on_a = (serial + client) % 2 == 0;
                    if killing.load(Ordering::SeqCst) && on_a {
                        continue;
                    }
                    if serial > 2000 || (killing.load(Ordering::SeqCst) && serial % 50 == 0) {
                        break;
                    }
                    let sent = Sent {
                        key: format!("kill-{client}-{serial}"),
                        body: client::quote_body(&mut rng, &fixtures, "kill", 3),
                    };
                    let api = if on_a { &api_a } else { &api_b };
                    match client::exchange(create(api, &token, &sent.key, &sent.body)).await {
                        Ok(reply) if reply.status == 201 => answered.push(sent.key),
                        Ok(reply) => problems.push(format!("{}: {}", sent.key, shown(&reply))),
                        Err(_) if on_a => unanswered.push(sent),
                        Err(error) => problems.push(format!("{} on b: {error}", sent.key)),
                    }
                }
                (answered, unanswered, problems)
            })
        })
        .collect();
    tokio::time::sleep(Duration::from_secs(3)).await;
    killing.store(true, Ordering::SeqCst);
    pair.a.kill();

    let (mut answered, mut problems) = (BTreeSet::new(), Vec::new());
    let mut unanswered = Vec::new();
    for client in clients {
        let (yes, left, wrong) = client.await.expect("a client does not panic");
        answered.extend(yes);
        unanswered.extend(left);
        problems.extend(wrong);
    }
    let mut replayed = 0;
    for sent in &unanswered {
        match client::exchange(create(&api_b, &key.token, &sent.key, &sent.body)).await {
            Ok(reply) if reply.status == 201 => {
                replayed += usize::from(reply.header("idempotent-replayed") == Some("true"));
                answered.insert(sent.key.clone());
            }
            Ok(reply) => problems.push(format!("{} again on b: {}", sent.key, shown(&reply))),
            Err(error) => problems.push(format!("{} again on b: {error}", sent.key)),
        }
    }
    let keys: Vec<String> = pair
        .db
        .fetch_all("SELECT idem_key FROM idempotency_keys WHERE idem_key LIKE 'kill-%'")
        .await;
    let quotes: Vec<i64> = pair
        .db
        .fetch_all("SELECT COUNT(*) FROM quotes WHERE title = 'kill'")
        .await;
    println!(
        "cluster: kill: {} requests answered 201; a killed with {} unanswered, sent again to b \
         ({replayed} had been committed by a); {} quotes titled kill, {} keys",
        answered.len(),
        unanswered.len(),
        quotes.first().copied().unwrap_or_default(),
        keys.len()
    );
    assert!(
        problems.is_empty(),
        "{} problems:\n  {}",
        problems.len(),
        problems.join("\n  ")
    );
    let answered_count = i64::try_from(answered.len()).expect("a count fits");
    assert_eq!(
        quotes,
        [answered_count],
        "one quote per request answered 201"
    );
    assert_eq!(
        keys.into_iter().collect::<BTreeSet<_>>(),
        answered,
        "one idempotency record per request"
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_listener_that_loses_its_connection_tells_the_streams_to_resync() {
    let pair = Pair::start("cluster-resync").await;
    let [api_a, api_b] = pair.apis();
    let key = pair.b.create_key("writer", SCOPES, ROOMY);
    let fixtures = Fixtures::fetch(&api_b, &key.token).await;
    let cookie = session_cookie(&api_a, &pair.a.base_url()).await;
    let mut stream = Stream::open(&api_a, &pair.a.base_url(), &cookie, None).await;

    assert!(
        end_listeners(&pair.db.url()).await > 0,
        "no listener connection found"
    );
    let event = stream
        .next(Duration::from_secs(10))
        .await
        .expect("an event after the listener's connection ended");
    assert_eq!(event.name, "resync", "{event:?}");
    assert!(
        event.id.is_some(),
        "resync names where to pick up: {event:?}"
    );

    // Listening again: what is done through b reaches a's stream.
    let body = client::quote_body(&mut Rng::new(5), &fixtures, "after resync", 2);
    let created = client::exchange(create(&api_b, &key.token, "after-resync", &body))
        .await
        .unwrap_or_else(|e| panic!("create: {e}"));
    assert_eq!(created.status, 201, "{}", shown(&created));
    let id = created.json()["id"].as_str().unwrap_or_default().to_owned();
    assert_eq!(stream.quote_event(&id).await, "created");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn two_instances_started_together_on_an_empty_database_seed_it_once() {
    let dir = server::work_dir("cluster-seed");
    let db = Db::new(Backend::Postgres, &dir);
    let mut a = Server::spawn(&dir, "a", &db, PRODUCTS);
    let mut b = Server::spawn(&dir, "b", &db, PRODUCTS);
    a.wait_until_listening().await;
    b.wait_until_listening().await;
    let tenants: Vec<i64> = db.fetch_all("SELECT COUNT(*) FROM tenants").await;
    let products: Vec<i64> = db.fetch_all("SELECT COUNT(*) FROM products").await;
    let users: Vec<i64> = db.fetch_all("SELECT COUNT(*) FROM users").await;
    println!("cluster: seed: {tenants:?} tenants, {products:?} products, {users:?} users");
    assert_eq!(tenants, [2], "the demo data has two tenants");
    let one = Server::start_named(&dir, "c", &db, PRODUCTS).await;
    let again: Vec<i64> = db.fetch_all("SELECT COUNT(*) FROM products").await;
    assert_eq!(again, products, "a third start seeds nothing more");
    drop((a, b, one));
}

/// Ends every instance's listener connection on the database at `url`; how many there were.
async fn end_listeners(url: &str) -> usize {
    let mut admin = PgConnection::connect(url)
        .await
        .expect("an admin connection");
    // The listener's last statement is its LISTEN; the pools' connections run other statements.
    let ended: Vec<bool> = sqlx::query_scalar(
        "SELECT pg_terminate_backend(pid) FROM pg_stat_activity \
         WHERE datname = current_database() AND application_name = 'toolbridge' \
         AND query ILIKE 'LISTEN %'",
    )
    .fetch_all(&mut admin)
    .await
    .expect("the listeners can be ended");
    ended.len()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_app_reloads_what_it_shows_when_its_stream_resyncs() {
    use fantoccini::ClientBuilder;
    use toolbridge_e2e::webdriver::{CHROMIUM, WebDriver, driver_from_env};

    let pair = Pair::start("cluster-app").await;
    let driver = WebDriver::start(
        &CHROMIUM,
        &driver_from_env(&CHROMIUM).unwrap_or_else(|e| panic!("{e}")),
        &server::work_dir("cluster-app-driver"),
    )
    .unwrap_or_else(|e| panic!("{e}"));
    let client = ClientBuilder::new(hyper_util::client::legacy::connect::HttpConnector::new())
        .capabilities(CHROMIUM.capabilities())
        .connect(&driver.url())
        .await
        .unwrap_or_else(|e| panic!("no Chromium session: {e}"));
    let app = format!("http://localhost:{}", pair.a.port());
    let db_url = pair.db.url();
    // The steps run as a task of their own, so that the browser is closed whatever they do: a
    // session left open would leave Chromium running after the test.
    let steps = {
        let client = client.clone();
        tokio::spawn(async move {
            page::sign_in(&client, &app, USER).await;
            until(
                &client,
                "the quotes page's rows",
                "document.querySelector('#main tbody tr')",
            )
            .await;
            // A mark on what is shown now: a view rendered again is a new element, without it.
            client
                .execute(
                    "document.querySelector('#main .view').dataset.before = 'resync';",
                    vec![],
                )
                .await
                .expect("the page can be marked");

            assert!(
                end_listeners(&db_url).await > 0,
                "no listener connection found"
            );
            until(
                &client,
                "the quotes page rendered again after resync",
                "document.querySelector('#main .view') && !document.querySelector('#main .view').dataset.before \
                 && document.querySelector('#main h1')?.textContent === 'Quotes'",
            )
            .await;
        })
    };
    let outcome = steps.await;
    let _ = client.close().await;
    if let Err(failed) = outcome {
        std::panic::resume_unwind(failed.into_panic());
    }
}

/// Quotes the webhook test creates, half through each instance.
const WEBHOOK_QUOTES: usize = 50;

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn each_webhook_event_is_delivered_exactly_once_by_two_instances() {
    let pair = Pair::start("cluster-webhooks").await;
    let receiver = WebhookReceiver::start().unwrap();
    let token = pair
        .a
        .create_key("webhooks", &format!("{SCOPES},webhooks:write"), ROOMY)
        .token;
    let apis = pair.apis();
    let reply = client::exchange(
        apis[0]
            .post("/webhook-endpoints")
            .bearer_auth(&token)
            .json(&json!({"url": receiver.url(), "eventTypes": ["quote.created"]})),
    )
    .await
    .unwrap();
    assert_eq!(reply.status, 201, "{}", shown(&reply));
    let secret = reply.json()["secret"].as_str().unwrap().to_owned();
    let fixtures = Arc::new(Fixtures::fetch(&apis[0], &token).await);

    // Two clients at once, one on each instance, so both workers hear events and claim.
    let creators: Vec<_> = apis
        .iter()
        .enumerate()
        .map(|(n, api)| {
            let (api, token, fixtures) = (api.clone(), token.clone(), Arc::clone(&fixtures));
            tokio::spawn(async move {
                let mut rng = Rng::new(700 + n as u64);
                let mut ids = Vec::new();
                for serial in 0..WEBHOOK_QUOTES / 2 {
                    let body = client::quote_body(&mut rng, &fixtures, "webhooks", 2);
                    let reply =
                        client::exchange(create(&api, &token, &format!("wh-{n}-{serial}"), &body))
                            .await
                            .unwrap();
                    assert_eq!(reply.status, 201, "{}", shown(&reply));
                    ids.push(reply.json()["id"].as_str().unwrap().to_owned());
                }
                ids
            })
        })
        .collect();
    let mut created = BTreeSet::new();
    for creator in creators {
        created.extend(creator.await.unwrap());
    }
    assert_eq!(created.len(), WEBHOOK_QUOTES);

    let started = Instant::now();
    receiver
        .wait_for_async(WEBHOOK_QUOTES, Duration::from_secs(60))
        .await
        .unwrap();
    let arrived = started.elapsed();
    // Long enough for a second worker's duplicate to show, were there one.
    tokio::time::sleep(Duration::from_secs(3)).await;
    let got = receiver.requests();
    let events: BTreeSet<&str> = got.iter().filter_map(Received::event_id).collect();
    let quotes: BTreeSet<String> = got
        .iter()
        .map(|request| {
            request.verify(&secret).unwrap();
            let payload = request.json().unwrap();
            assert_eq!(payload["id"].as_str(), request.event_id());
            payload["data"]["quote"]["id"].as_str().unwrap().to_owned()
        })
        .collect();
    println!(
        "cluster: webhooks: {} quotes through both instances, {} requests received ({} events) \
         within {:.1} s of the last create",
        created.len(),
        got.len(),
        events.len(),
        arrived.as_secs_f64()
    );
    assert_eq!(got.len(), WEBHOOK_QUOTES, "a duplicate delivery");
    assert_eq!(events.len(), WEBHOOK_QUOTES, "an event sent twice");
    assert_eq!(quotes, created, "an event missing or for another quote");
    let delivered: Vec<i64> = pair
        .db
        .fetch_all("SELECT COUNT(*) FROM webhook_deliveries WHERE status = 'delivered'")
        .await;
    assert_eq!(delivered, [i64::try_from(WEBHOOK_QUOTES).unwrap()]);
}
