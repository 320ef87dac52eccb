//! `toolbridge serve` as a user runs it: the built binary, started as a child process on a free
//! port, its standard error read as it prints, and killed when dropped.

use std::io::{BufRead, BufReader};
use std::path::Path;
use std::process::{Child, Command, ExitStatus, Stdio};
use std::sync::{Arc, Condvar, Mutex, MutexGuard, PoisonError};
use std::time::{Duration, Instant};

use serde_json::Value;

use crate::harness::json;

/// A demo database of 20 products, and no example tools: quick to make.
pub(crate) const DEMO: [&str; 5] = ["--demo", "--seed-products", "20", "--example-tools", "none"];

/// The built `toolbridge` in the folder `work`, without the tests' own `TOOLBRIDGE_*` variables
/// and `RUST_LOG`: what it does depends only on what a test gives it. It logs at `info`, its
/// default.
pub(crate) fn toolbridge(work: &Path) -> Command {
    let mut command = Command::new(env!("CARGO_BIN_EXE_toolbridge"));
    command.current_dir(work);
    for (name, _) in std::env::vars_os() {
        if name.as_encoded_bytes().starts_with(b"TOOLBRIDGE_") || name == "RUST_LOG" {
            command.env_remove(name);
        }
    }
    command
}

/// `toolbridge serve --port 0 …`, running until dropped.
pub(crate) struct Serving {
    /// Where it listens: `http://127.0.0.1:<port>`.
    pub(crate) base: String,
    /// Its metrics page, if it said where (`--metrics-bind`).
    pub(crate) metrics: Option<String>,
    child: Child,
    stderr: Arc<Stderr>,
    /// How many lines of `stderr` the waits for a line have read.
    read: Mutex<usize>,
}

/// The lines of a server's standard error, added by the thread that reads them.
#[derive(Default)]
struct Stderr {
    lines: Mutex<Lines>,
    /// Told of every line added, and of the end.
    added: Condvar,
}

/// What has come on standard error.
#[derive(Default)]
struct Lines {
    /// Every line so far, in order.
    all: Vec<String>,
    /// Whether standard error is closed: no more lines come.
    ended: bool,
}

impl Stderr {
    /// The lines so far. A test that failed while it held them does not keep others from them.
    fn lines(&self) -> MutexGuard<'_, Lines> {
        self.lines.lock().unwrap_or_else(PoisonError::into_inner)
    }
}

impl Serving {
    /// Starts `toolbridge serve --port 0 args…` in the folder `work`, with the variables `env`
    /// besides those [`toolbridge`] leaves, and waits until it says where it listens.
    pub(crate) fn start(work: &Path, args: &[&str], env: &[(&str, &str)]) -> Self {
        let mut child = toolbridge(work)
            .envs(env.iter().copied())
            .args(["serve", "--port", "0"])
            .args(args)
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .spawn()
            .unwrap();
        let stderr = Arc::new(Stderr::default());
        let reader = {
            let lines = BufReader::new(child.stderr.take().unwrap());
            let stderr = Arc::clone(&stderr);
            std::thread::spawn(move || {
                for line in lines.lines().map_while(Result::ok) {
                    stderr.lines().all.push(line);
                    stderr.added.notify_all();
                }
                stderr.lines().ended = true;
                stderr.added.notify_all();
            })
        };
        let mut stdout = BufReader::new(child.stdout.take().unwrap()).lines();
        let (mut base, mut metrics) = (None, None);
        for line in stdout.by_ref() {
            let line = line.unwrap();
            if let Some(rest) = line.strip_prefix("toolbridge metrics on ") {
                metrics = Some(rest.trim().to_owned());
            }
            if let Some(rest) = line.strip_prefix("toolbridge listening on ") {
                base = rest.split_whitespace().next().map(str::to_owned);
                break;
            }
        }
        // Whatever it prints later is read too, so that it never blocks on a full pipe or writes
        // to a closed one.
        std::thread::spawn(move || for _ in stdout.map_while(Result::ok) {});
        let Some(base) = base else {
            let _ = child.kill();
            let _ = child.wait();
            let _ = reader.join();
            panic!(
                "the server did not say where it listens: {:?}",
                stderr.lines().all
            )
        };
        Self {
            base,
            metrics,
            child,
            stderr,
            read: Mutex::new(0),
        }
    }

    /// The URL of `path` on it.
    pub(crate) fn url(&self, path: &str) -> String {
        format!("{}{path}", self.base)
    }

    /// Reads the stderr lines not read yet, as they come, until `take` takes one: what it gives
    /// then, or `None` when `wait` is over or standard error has ended first.
    fn next_line<T>(&self, wait: Duration, mut take: impl FnMut(&str) -> Option<T>) -> Option<T> {
        let until = Instant::now() + wait;
        let mut read = self.read.lock().unwrap();
        let mut lines = self.stderr.lines();
        loop {
            while let Some(line) = lines.all.get(*read) {
                *read += 1;
                if let Some(taken) = take(line) {
                    return Some(taken);
                }
            }
            let left = until.saturating_duration_since(Instant::now());
            if lines.ended || left.is_zero() {
                return None;
            }
            lines = self
                .stderr
                .added
                .wait_timeout(lines, left)
                .unwrap_or_else(PoisonError::into_inner)
                .0;
        }
    }

    /// The next stderr line that starts with `prefix`, if one comes within `wait`.
    pub(crate) fn next_stderr_line(&self, prefix: &str, wait: Duration) -> Option<String> {
        self.next_line(wait, |line| {
            line.starts_with(prefix).then(|| line.to_owned())
        })
    }

    /// The next JSON log line of the request whose `X-Request-Id` is `id`, which must come within
    /// `wait`; every line before it must be JSON too.
    pub(crate) fn request_line(&self, id: &str, wait: Duration) -> Value {
        let mut seen = Vec::new();
        let found = self.next_line(wait, |line| {
            let parsed: Value = serde_json::from_str(line)
                .unwrap_or_else(|e| panic!("not a JSON log line ({e}): {line}"));
            if parsed["request_id"] == id {
                return Some(parsed);
            }
            seen.push(line.to_owned());
            None
        });
        found.unwrap_or_else(|| panic!("no log line for {id}; saw {seen:#?}"))
    }

    /// All it has logged so far, read or not.
    pub(crate) fn stderr(&self) -> String {
        self.stderr.lines().all.join("\n")
    }

    /// Sends `signal` (`TERM`, `INT`) to the server, as `kill` does.
    pub(crate) fn signal(&self, signal: &str) {
        let sent = Command::new("kill")
            .arg(format!("-{signal}"))
            .arg(self.child.id().to_string())
            .status()
            .unwrap();
        assert!(sent.success(), "kill -{signal}");
    }

    /// Whether the process still runs.
    pub(crate) fn running(&mut self) -> bool {
        self.child.try_wait().unwrap().is_none()
    }

    /// Waits up to `limit` for the process to exit; its status.
    pub(crate) async fn exits_within(&mut self, limit: Duration) -> ExitStatus {
        let started = Instant::now();
        loop {
            if let Some(status) = self.child.try_wait().unwrap() {
                return status;
            }
            assert!(
                started.elapsed() < limit,
                "still running {limit:?} after the signal: {:?}",
                self.stderr()
            );
            tokio::time::sleep(Duration::from_millis(20)).await;
        }
    }

    /// Whether a new connection to it is refused now.
    pub(crate) async fn refuses_connections(&self) -> bool {
        let address = self.base.trim_start_matches("http://");
        tokio::net::TcpStream::connect(address).await.is_err()
    }

    /// `GET /readyz` on a connection of its own: the status and body, or `None` when no
    /// connection could be made.
    pub(crate) async fn readyz(&self) -> Option<(u16, Value)> {
        let client = reqwest::Client::builder()
            .pool_max_idle_per_host(0)
            .build()
            .unwrap();
        let response = client.get(self.url("/readyz")).send().await.ok()?;
        Some(json(response).await)
    }
}

impl Drop for Serving {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}
