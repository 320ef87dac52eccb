//! Crash safety, on each backend: eight clients create quotes (each request with its own
//! `Idempotency-Key`) while the server is killed with SIGKILL, three times, each time started
//! again on the same database. After every kill:
//!
//! - a `SQLite` file passes `PRAGMA integrity_check` as the kill left it;
//! - every quote answered 201 is in the database, and at most as many unanswered ones as there
//!   were requests in flight;
//!
//! and after every restart, every quote answered 201 so far (in any cycle) reads back through
//! `GET /api/v1/quotes/{id}` exactly as it was answered: header, lines (quantities, prices,
//! descriptions) and totals. The requests the kill left without an answer are sent again with
//! the same key and body: each is answered 201, as the first answer if the killed server had
//! committed it, else as a new quote. At the end (a last restart, then a stop) the database holds
//! exactly one quote per request ever sent (and a `SQLite` file passes `PRAGMA integrity_check`).

use std::collections::{BTreeMap, BTreeSet};
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::Duration;

use reqwest::header::CONTENT_TYPE;
use serde_json::Value;

use crate::client::{self, Api, Fixtures, Rng};
use crate::db::{Backend, Db};
use crate::server::{self, Server};

/// Clients creating quotes at once.
const CLIENTS: usize = 8;

/// Kills in one run.
const KILLS: u32 = 3;

/// Traffic before the first kill; each later cycle runs 700 ms longer, so the kills land at
/// different moments of the work.
const TRAFFIC: Duration = Duration::from_millis(2500);

/// Products in the demo catalog.
const PRODUCTS: u32 = 200;

/// Lines per quote, at most.
const MAX_LINES: usize = 5;

/// Reads at once when quotes are checked after a restart.
const READERS: usize = 8;

/// A create that was sent: its idempotency key and body.
#[derive(Clone, Debug)]
struct Sent {
    key: String,
    body: Vec<u8>,
}

/// A create the kill left without an answer.
#[derive(Clone, Debug)]
struct Unanswered {
    sent: Sent,
    /// Whether it may have reached the server: the failure came after a connection existed
    /// (in flight at the kill, or written to the dead server's connection), not a refused
    /// connection.
    in_flight: bool,
}

/// What one client saw until the kill.
#[derive(Debug, Default)]
struct ClientLog {
    /// Idempotency key → the 201 answer.
    answered: Vec<(String, Value)>,
    unanswered: Vec<Unanswered>,
    problems: Vec<String>,
}

/// Creates quotes one after another until the kill.
async fn create_until_killed(
    api: Api,
    token: String,
    fixtures: Arc<Fixtures>,
    killing: Arc<AtomicBool>,
    label: String,
    seed: u64,
) -> ClientLog {
    let mut rng = Rng::new(seed);
    let mut log = ClientLog::default();
    for serial in 1_u64.. {
        if killing.load(Ordering::SeqCst) {
            break;
        }
        let name = format!("{label}-{serial}");
        let body = client::quote_body(&mut rng, &fixtures, &name, MAX_LINES);
        let sent = Sent {
            key: name,
            body: serde_json::to_vec(&body).expect("a quote body serializes"),
        };
        match client::exchange(create(&api, &token, &sent)).await {
            Ok(reply) if reply.status == 201 => log.answered.push((sent.key, reply.json())),
            Ok(reply) => log.problems.push(format!(
                "{}: answered {} before the kill: {}",
                sent.key,
                reply.status,
                String::from_utf8_lossy(&reply.body)
            )),
            Err(error) if killing.load(Ordering::SeqCst) => {
                log.unanswered.push(Unanswered {
                    sent,
                    in_flight: !client::never_connected(&error),
                });
                break;
            }
            Err(error) => log
                .problems
                .push(format!("{}: no answer before the kill: {error}", sent.key)),
        }
    }
    log
}

/// `POST /quotes` of `sent`.
fn create(api: &Api, token: &str, sent: &Sent) -> reqwest::RequestBuilder {
    api.post("/quotes")
        .bearer_auth(token)
        .header(CONTENT_TYPE, "application/json")
        .header("idempotency-key", &sent.key)
        .body(sent.body.clone())
}

/// Every quote in `answered` reads back through REST exactly as it was answered; the problems.
async fn check_whole(api: &Api, token: &str, answered: &BTreeMap<String, Value>) -> Vec<String> {
    let answers: Vec<Value> = answered.values().cloned().collect();
    let chunk = answers.len().div_ceil(READERS).max(1);
    let tasks: Vec<_> = answers
        .chunks(chunk)
        .map(|part| {
            let api = api.clone();
            let token = token.to_owned();
            let part = part.to_vec();
            tokio::spawn(async move {
                let mut problems = Vec::new();
                for answer in part {
                    let id = answer["id"].as_str().unwrap_or_default();
                    match client::exchange(api.get(&format!("/quotes/{id}")).bearer_auth(&token))
                        .await
                    {
                        Ok(reply) if reply.status == 200 => {
                            let stored = reply.json();
                            if stored != answer {
                                problems.push(format!(
                                    "quote {id} is not as it was answered:\n    answered {answer}\n    now      {stored}"
                                ));
                            }
                        }
                        Ok(reply) => {
                            problems.push(format!("quote {id} answered 201 is now {}", reply.status));
                        }
                        Err(error) => problems.push(format!("GET quote {id}: {error}")),
                    }
                }
                problems
            })
        })
        .collect();
    let mut problems = Vec::new();
    for task in tasks {
        problems.extend(task.await.expect("a reader does not panic"));
    }
    problems
}

/// `PRAGMA integrity_check` says `ok` (on `SQLite`), or a problem says what it said.
async fn integrity(db: &Db, when: &str, problems: &mut Vec<String>) -> String {
    let Some(result) = db.integrity_check().await else {
        return "not applicable (the PostgreSQL server keeps running)".to_owned();
    };
    let text = result.join("; ");
    if result != ["ok"] {
        problems.push(format!("PRAGMA integrity_check {when}: {text}"));
    }
    text
}

/// What the run has seen so far, over every cycle.
struct Run<'d> {
    db: &'d Db,
    token: String,
    fixtures: Arc<Fixtures>,
    /// The quotes of the demo data, there before any client ran.
    before: BTreeSet<String>,
    /// Idempotency key → the 201 answer.
    answered: BTreeMap<String, Value>,
    /// Every idempotency key sent.
    sent: BTreeSet<String>,
    /// What the last kill left without an answer.
    unanswered: Vec<Unanswered>,
    problems: Vec<String>,
}

impl Run<'_> {
    /// After a restart: everything answered so far reads back whole, and what the kill left
    /// unanswered is sent again and answered 201 now, once.
    async fn after_restart(&mut self, api: &Api, restart: u32) {
        let found = check_whole(api, &self.token, &self.answered).await;
        println!(
            "crash: restart {restart}: {} of {} quotes answered 201 so far read back whole",
            self.answered.len() - found.len(),
            self.answered.len()
        );
        self.problems.extend(found);
        let mut replayed = 0;
        let mut created = 0;
        for left in std::mem::take(&mut self.unanswered) {
            match client::exchange(create(api, &self.token, &left.sent)).await {
                Ok(reply) if reply.status == 201 => {
                    if reply.header("idempotent-replayed") == Some("true") {
                        replayed += 1;
                    } else {
                        created += 1;
                    }
                    self.answered.insert(left.sent.key, reply.json());
                }
                Ok(reply) => self.problems.push(format!(
                    "{} sent again after the restart: {}",
                    left.sent.key, reply.status
                )),
                Err(error) => self.problems.push(format!(
                    "{} sent again after the restart: {error}",
                    left.sent.key
                )),
            }
        }
        println!(
            "crash: restart {restart}: the unanswered requests sent again: {replayed} had been \
             committed before the kill (answered with that quote), {created} had not (created \
             now)"
        );
    }

    /// Clients create quotes for `traffic`, then the server is killed; the file is checked as
    /// the kill left it.
    async fn traffic_then_kill(&mut self, server: Server, kill: u32, traffic: Duration) {
        let api = Api::new(&server.base_url());
        let killing = Arc::new(AtomicBool::new(false));
        let clients: Vec<_> = (0..CLIENTS)
            .map(|client| {
                tokio::spawn(create_until_killed(
                    api.clone(),
                    self.token.clone(),
                    Arc::clone(&self.fixtures),
                    Arc::clone(&killing),
                    format!("crash-{}-{kill}-{client}", std::process::id()),
                    u64::from(kill) * 100 + u64::try_from(client).expect("a client number fits"),
                ))
            })
            .collect();
        tokio::time::sleep(traffic).await;
        killing.store(true, Ordering::SeqCst);
        server.kill();

        let mut answered_now = 0;
        let (mut in_flight, mut refused) = (0, 0);
        for task in clients {
            let log = task.await.expect("a client does not panic");
            answered_now += log.answered.len();
            self.problems.extend(log.problems);
            for left in &log.unanswered {
                self.sent.insert(left.sent.key.clone());
                if left.in_flight {
                    in_flight += 1;
                } else {
                    refused += 1;
                }
            }
            self.unanswered.extend(log.unanswered);
            for (key, answer) in log.answered {
                self.sent.insert(key.clone());
                self.answered.insert(key, answer);
            }
        }

        let check = integrity(self.db, &format!("after kill {kill}"), &mut self.problems).await;
        let in_file = self.new_quotes().await;
        let answered = self.answered_ids();
        let missing = answered.difference(&in_file).count();
        let extra = in_file.difference(&answered).count();
        if missing > 0 {
            self.problems.push(format!(
                "after kill {kill}: {missing} quotes answered 201 are not in the file"
            ));
        }
        if extra > in_flight {
            self.problems.push(format!(
                "after kill {kill}: {extra} quotes in the file were never answered, more than \
                 the {in_flight} requests in flight"
            ));
        }
        println!(
            "crash: kill {kill} (SIGKILL after {:.1} s of {CLIENTS} clients): {answered_now} \
             quotes answered 201 in this cycle ({} in all); {} requests without an answer \
             ({in_flight} in flight, {refused} refused); in the file: {missing} answered quotes \
             missing, {extra} committed but unanswered; integrity_check: {check}",
            traffic.as_secs_f64(),
            self.answered.len(),
            in_flight + refused,
        );
    }

    /// The quotes in the file that the demo data did not have.
    async fn new_quotes(&self) -> BTreeSet<String> {
        self.db
            .quote_ids()
            .await
            .difference(&self.before)
            .cloned()
            .collect()
    }

    /// The ids of every quote answered 201.
    fn answered_ids(&self) -> BTreeSet<String> {
        self.answered
            .values()
            .map(|answer| {
                answer["id"]
                    .as_str()
                    .unwrap_or_default()
                    .to_ascii_lowercase()
            })
            .collect()
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn on_sqlite_quotes_answered_201_survive_sigkill_whole_and_the_file_stays_sound() {
    crash_run(Backend::Sqlite).await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn on_postgres_quotes_answered_201_survive_sigkill_whole() {
    crash_run(Backend::Postgres).await;
}

/// Kills and restarts on a fresh database of `backend`; see the module's documentation.
async fn crash_run(backend: Backend) {
    let dir = server::work_dir(&format!("crash-{}", backend.name()));
    let db = Db::new(backend, &dir);
    let first = Server::start(&dir, &db, PRODUCTS).await;
    println!(
        "crash: server pid {} on {} (log {})",
        first.pid(),
        db.describe(),
        first.log().display()
    );
    let key = first.create_key(
        "crash",
        "customers:read,products:read,quotes:read,quotes:write",
        "1000000000/60s",
    );
    let mut run = Run {
        fixtures: Arc::new(Fixtures::fetch(&Api::new(&first.base_url()), &key.token).await),
        before: db.quote_ids().await,
        db: &db,
        token: key.token,
        answered: BTreeMap::new(),
        sent: BTreeSet::new(),
        unanswered: Vec::new(),
        problems: Vec::new(),
    };

    let mut server = first;
    for kill in 1..=KILLS {
        let traffic = TRAFFIC + Duration::from_millis(700) * (kill - 1);
        run.traffic_then_kill(server, kill, traffic).await;
        server = Server::start(&dir, &db, PRODUCTS).await;
        run.after_restart(&Api::new(&server.base_url()), kill).await;
    }
    // The requests sent again after the last restart read back whole too.
    let found = check_whole(&Api::new(&server.base_url()), &run.token, &run.answered).await;
    run.problems.extend(found);
    server.stop().await;

    let check = integrity(&db, "after the last stop", &mut run.problems).await;
    let in_file = run.new_quotes().await;
    let answered = run.answered_ids();
    if in_file != answered || answered.len() != run.sent.len() {
        run.problems.push(format!(
            "at the end: {} requests sent, {} distinct quotes answered, {} new quotes in the \
             file (expected one quote per request)",
            run.sent.len(),
            answered.len(),
            in_file.len()
        ));
    }
    println!(
        "crash: at the end: {} requests sent over {KILLS} kills, {} quotes answered 201, {} new \
         quotes in the file; integrity_check after the last stop: {check}",
        run.sent.len(),
        answered.len(),
        in_file.len()
    );
    assert!(
        run.problems.is_empty(),
        "{} problems (the first 30 below); the server's log is {}:\n  {}",
        run.problems.len(),
        dir.join("server.log").display(),
        run.problems
            .iter()
            .take(30)
            .cloned()
            .collect::<Vec<_>>()
            .join("\n  ")
    );
}
