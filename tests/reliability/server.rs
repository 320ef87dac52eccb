//! The `toolbridge` binary that `cargo xtask test` built, run as a child process on a database
//! (a `SQLite` file or a `PostgreSQL` database): started on a free port, killed with SIGKILL or stopped with Ctrl-C's signal, given keys
//! through its own CLI, and its memory read from `/proc/<pid>/status`.

use std::ffi::{OsStr, OsString};
use std::fs::{self, OpenOptions};
use std::net::{Ipv4Addr, SocketAddr, TcpListener, TcpStream};
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

use crate::db::Db;

/// Names the built server binary; `cargo xtask test` sets it.
pub(crate) const BIN_VAR: &str = "TOOLBRIDGE_BIN";

/// Names the folder the suites work in (databases, server logs); `cargo xtask test` sets it.
const DIR_VAR: &str = "TOOLBRIDGE_RELIABILITY_DIR";

/// How long a start may take (seeding a small catalog is quick, even on a busy machine).
const START_WAIT: Duration = Duration::from_secs(60);

/// How long a stop by signal may take before the server is killed instead.
const STOP_WAIT: Duration = Duration::from_secs(15);

/// An environment variable `cargo xtask test` sets, or a panic that says how to run the suites.
pub(crate) fn setting(name: &str) -> PathBuf {
    std::env::var_os(name)
        .filter(|value| !value.is_empty())
        .map_or_else(
            || {
                panic!(
                    "{name} is not set: these suites run the server binary that `cargo xtask test` \
                 builds; run them with `cargo xtask test --only \"crash safety\"` (or \
                 \"multi-instance\", or \"load with faults\" with --long)"
                )
            },
            PathBuf::from,
        )
}

/// A fresh, empty folder `name` in the suites' folder (an earlier run's is removed).
pub(crate) fn work_dir(name: &str) -> PathBuf {
    let dir = setting(DIR_VAR).join(name);
    if dir.exists() {
        fs::remove_dir_all(&dir).unwrap_or_else(|e| panic!("cannot remove {}: {e}", dir.display()));
    }
    fs::create_dir_all(&dir).unwrap_or_else(|e| panic!("cannot create {}: {e}", dir.display()));
    dir
}

/// The demo tenant (of `--demo`), whose keys the suites make: a demo database has two tenants,
/// so the CLI must be told which.
const DEMO_TENANT: &str = "Harbour Flooring Ltd";

/// A key made with `toolbridge keys create`.
#[derive(Clone, Debug)]
pub(crate) struct Key {
    /// The key's id (what `keys revoke` takes).
    pub(crate) id: String,
    /// The bearer token.
    pub(crate) token: String,
}

/// A running `toolbridge serve`. Dropping it kills the server.
pub(crate) struct Server {
    child: Option<Child>,
    port: u16,
    /// What `--db` names.
    db: OsString,
    log: PathBuf,
    binary: PathBuf,
}

impl Server {
    /// Starts the server on `db` (seeding `products` products if the database is new) on a free
    /// port, its output appended to `server.log` in `dir`, and waits until it listens.
    pub(crate) async fn start(dir: &Path, db: &Db, products: u32) -> Self {
        Self::start_named(dir, "server", db, products).await
    }

    /// Starts the server as [`Server::start`] does, its output appended to `<name>.log` in `dir`.
    pub(crate) async fn start_named(dir: &Path, name: &str, db: &Db, products: u32) -> Self {
        let mut server = Self::spawn(dir, name, db, products);
        server.wait_until_listening().await;
        server
    }

    /// Starts the server as [`Server::start_named`] does, without waiting until it listens
    /// ([`Server::wait_until_listening`]).
    pub(crate) fn spawn(dir: &Path, name: &str, db: &Db, products: u32) -> Self {
        Self::spawn_with(dir, name, db, products, &[])
    }

    /// Starts the server as [`Server::start_named`] does, with `extra` arguments to `serve`.
    pub(crate) async fn start_with(
        dir: &Path,
        name: &str,
        db: &Db,
        products: u32,
        extra: &[&str],
    ) -> Self {
        let mut server = Self::spawn_with(dir, name, db, products, extra);
        server.wait_until_listening().await;
        server
    }

    /// Starts the server as [`Server::spawn`] does, with `extra` arguments to `serve`.
    fn spawn_with(dir: &Path, name: &str, db: &Db, products: u32, extra: &[&str]) -> Self {
        let products = products.to_string();
        let no_tools = dir.join("no-example-tools");
        let args = [
            // Demo data on a new database: what the suites' clients read and write.
            OsStr::new("--demo"),
            OsStr::new("--seed-products"),
            OsStr::new(&products),
            // No example tools: the REST API and the app's live updates are what is under test.
            OsStr::new("--example-tools"),
            no_tools.as_os_str(),
            // Webhooks may go to the suites' receivers on this machine.
            OsStr::new("--allow-private-webhooks"),
        ];
        // The app and what it loads, for the suites that open it in a browser, come from the
        // copies the binary carries: `cargo xtask test` builds it after them.
        Self::launch(
            dir,
            name,
            db,
            free_port(),
            "warn",
            args.into_iter().chain(extra.iter().map(OsStr::new)),
        )
    }

    /// Starts the server as an operator does, on `port`: no demo data (the CLI makes what the
    /// database holds), its request log at `info`, and `extra` arguments to `serve`; webhooks
    /// may still go to the suites' receivers on this machine. Waits until it listens.
    pub(crate) async fn start_production(
        dir: &Path,
        name: &str,
        db: &Db,
        port: u16,
        extra: &[&str],
    ) -> Self {
        let args = std::iter::once("--allow-private-webhooks").chain(extra.iter().copied());
        let mut server = Self::launch(dir, name, db, port, "info", args.map(OsStr::new));
        server.wait_until_listening().await;
        server
    }

    /// Starts `toolbridge serve --port <port> --db <db> <args>` in `dir` with `RUST_LOG` at
    /// `log_level`, its output appended to `<name>.log` there.
    fn launch<'a>(
        dir: &Path,
        name: &str,
        db: &Db,
        port: u16,
        log_level: &str,
        args: impl IntoIterator<Item = &'a OsStr>,
    ) -> Self {
        let binary = setting(BIN_VAR);
        let log = dir.join(format!("{name}.log"));
        let log_file = OpenOptions::new()
            .create(true)
            .append(true)
            .open(&log)
            .unwrap_or_else(|e| panic!("cannot open {}: {e}", log.display()));
        let child = Command::new(&binary)
            .args(["serve", "--port", &port.to_string()])
            .arg("--db")
            .arg(db.arg())
            .args(args)
            .current_dir(dir)
            .env("RUST_LOG", log_level)
            .stdin(Stdio::null())
            .stdout(log_file.try_clone().expect("the log opens twice"))
            .stderr(log_file)
            .spawn()
            .unwrap_or_else(|e| panic!("cannot start {}: {e}", binary.display()));
        Self {
            child: Some(child),
            port,
            db: db.arg(),
            log,
            binary,
        }
    }

    /// Waits until the server listens (a panic if it exits first or takes over a minute).
    pub(crate) async fn wait_until_listening(&mut self) {
        let address = SocketAddr::from((Ipv4Addr::LOCALHOST, self.port));
        let started = Instant::now();
        while started.elapsed() < START_WAIT {
            if let Some(status) = self
                .child_mut()
                .try_wait()
                .expect("the server can be polled")
            {
                panic!(
                    "the server exited ({status}) before it listened; see {}",
                    self.log.display()
                );
            }
            if TcpStream::connect_timeout(&address, Duration::from_millis(200)).is_ok() {
                return;
            }
            tokio::time::sleep(Duration::from_millis(50)).await;
        }
        panic!(
            "the server did not listen on port {} within {} s; see {}",
            self.port,
            START_WAIT.as_secs(),
            self.log.display()
        );
    }

    fn child_mut(&mut self) -> &mut Child {
        self.child.as_mut().expect("the server is running")
    }

    /// The port the server listens on.
    pub(crate) fn port(&self) -> u16 {
        self.port
    }

    /// `http://127.0.0.1:PORT`.
    pub(crate) fn base_url(&self) -> String {
        format!("http://127.0.0.1:{}", self.port)
    }

    /// The server's log (stdout and stderr of every start on this database).
    pub(crate) fn log(&self) -> &Path {
        &self.log
    }

    /// The server's process id.
    pub(crate) fn pid(&self) -> u32 {
        self.child.as_ref().expect("the server is running").id()
    }

    /// The server's resident memory.
    pub(crate) fn resident(&self) -> Resident {
        resident(self.pid())
    }

    /// Creates a key of the demo tenant with `toolbridge keys create` (`scopes` comma-separated,
    /// `rate_limit` like `120/60s`).
    pub(crate) fn create_key(&self, name: &str, scopes: &str, rate_limit: &str) -> Key {
        let output = self.cli(&[
            "keys",
            "create",
            "--tenant",
            DEMO_TENANT,
            "--name",
            name,
            "--scopes",
            scopes,
            "--rate-limit",
            rate_limit,
        ]);
        // "Created API key <id> (<name>) for <tenant>." then the token on a line of its own.
        let id = output
            .split_once("Created API key ")
            .and_then(|(_, rest)| rest.split_whitespace().next())
            .unwrap_or_else(|| panic!("`keys create` printed no key id:\n{output}"));
        let token = output
            .split_whitespace()
            .find(|word| word.starts_with("tbk_"))
            .unwrap_or_else(|| panic!("`keys create` printed no token:\n{output}"));
        Key {
            id: id.to_owned(),
            token: token.to_owned(),
        }
    }

    /// Revokes a key of the demo tenant with `toolbridge keys revoke`.
    pub(crate) fn revoke_key(&self, key: &Key) {
        self.cli(&["keys", "revoke", "--tenant", DEMO_TENANT, &key.id]);
    }

    /// Runs a `toolbridge` subcommand on the server's database and returns what it printed.
    fn cli(&self, args: &[&str]) -> String {
        let output = Command::new(&self.binary)
            .args(args)
            .arg("--db")
            .arg(&self.db)
            .stdin(Stdio::null())
            .output()
            .unwrap_or_else(|e| panic!("cannot run {}: {e}", self.binary.display()));
        let stdout = String::from_utf8_lossy(&output.stdout).into_owned();
        assert!(
            output.status.success(),
            "`toolbridge {}` failed: {}{}",
            args.join(" "),
            stdout,
            String::from_utf8_lossy(&output.stderr)
        );
        stdout
    }

    /// Kills the server with SIGKILL (what `Child::kill` sends on Unix) and reaps it: no chance
    /// to finish a request, flush or close anything.
    pub(crate) fn kill(mut self) {
        if let Some(mut child) = self.child.take() {
            child.kill().expect("the server can be killed");
            child.wait().expect("the killed server can be reaped");
        }
    }

    /// Sends the server the signal `name` (`TERM`, `INT`) with the system's `kill` command (so
    /// that this crate needs no `unsafe`).
    pub(crate) fn signal(&self, name: &str) {
        let sent = Command::new("kill")
            .args([format!("-{name}"), self.pid().to_string()])
            .status()
            .is_ok_and(|status| status.success());
        assert!(sent, "cannot send SIG{name} to the server");
    }

    /// Waits until the server has exited, for up to `wait`; how it exited. It is killed if it has
    /// not, and that fails the test.
    pub(crate) async fn wait_for_exit(&mut self, wait: Duration) -> std::process::ExitStatus {
        let started = Instant::now();
        loop {
            if let Some(status) = self
                .child_mut()
                .try_wait()
                .expect("the server can be polled")
            {
                self.child = None;
                return status;
            }
            if started.elapsed() > wait {
                let _ = self.child_mut().kill();
                panic!(
                    "the server did not exit within {wait:?}; see {}",
                    self.log.display()
                );
            }
            tokio::time::sleep(Duration::from_millis(50)).await;
        }
    }

    /// Stops the server the way Ctrl-C does (SIGINT, sent with the system's `kill` command, so
    /// that this crate needs no `unsafe`) and waits until it has exited; it is killed if it has
    /// not within 15 s, and that fails the test.
    pub(crate) async fn stop(mut self) {
        let Some(mut child) = self.child.take() else {
            return;
        };
        let signalled = Command::new("kill")
            .args(["-INT", &child.id().to_string()])
            .status()
            .is_ok_and(|status| status.success());
        let started = Instant::now();
        while signalled && started.elapsed() < STOP_WAIT {
            if child
                .try_wait()
                .expect("the server can be polled")
                .is_some()
            {
                return;
            }
            tokio::time::sleep(Duration::from_millis(50)).await;
        }
        let _ = child.kill();
        let _ = child.wait();
        panic!(
            "the server did not stop within {} s of SIGINT; see {}",
            STOP_WAIT.as_secs(),
            self.log.display()
        );
    }
}

impl Drop for Server {
    fn drop(&mut self) {
        if let Some(mut child) = self.child.take() {
            let _ = child.kill();
            let _ = child.wait();
        }
    }
}

/// What a process holds in memory, in KiB, as `/proc/<pid>/status` tells.
#[derive(Clone, Copy, Debug)]
pub(crate) struct Resident {
    /// All of its resident set (`VmRSS`), as an operator sees it.
    pub(crate) total: u64,
    /// The anonymous part (`RssAnon`): heap, stacks and SQLite's caches, without the mapped
    /// binary, which stays the same.
    pub(crate) anon: u64,
}

/// The resident memory of process `pid`.
pub(crate) fn resident(pid: u32) -> Resident {
    let path = format!("/proc/{pid}/status");
    let status = fs::read_to_string(&path).unwrap_or_else(|e| panic!("cannot read {path}: {e}"));
    let field = |name: &str| {
        status
            .lines()
            .find_map(|line| line.strip_prefix(name)?.strip_prefix(':'))
            .and_then(|value| value.trim().strip_suffix("kB"))
            .and_then(|value| value.trim().parse().ok())
            .unwrap_or_else(|| panic!("{path} has no {name} line"))
    };
    Resident {
        total: field("VmRSS"),
        anon: field("RssAnon"),
    }
}

/// A port nothing listens on right now (the OS picks it; we let it go at once).
fn free_port() -> u16 {
    TcpListener::bind((Ipv4Addr::LOCALHOST, 0))
        .and_then(|listener| listener.local_addr())
        .map(|address| address.port())
        .expect("the OS gives out a free port")
}
