//! A real `toolbridge` server for measurements and browser tests: built with cargo, started on a
//! free port with a fresh demo database, and killed when the [`ToolbridgeServer`] is dropped.

#![allow(dead_code)] // Goes when the bench has moved out of xtask.

use std::fs::{self, File};
use std::net::{Ipv4Addr, SocketAddr, TcpListener, TcpStream};
use std::path::{Path, PathBuf};
use std::process::{Child, Stdio};
use std::thread::sleep;
use std::time::{Duration, Instant};

use crate::error::Error;
use crate::files::create_dir;
use crate::process::{self, Ctx, describe};
use crate::server_build;

/// The database file's name inside [`ServerOptions::dir`].
const DB_FILE: &str = "toolbridge.sqlite3";

/// The server's log's name inside [`ServerOptions::dir`].
const LOG_FILE: &str = "server.log";

/// How long the server may take to listen when it seeds nothing much.
const BASE_WAIT: Duration = Duration::from_secs(60);

/// Seeded products the server is given one more second for, on top of [`BASE_WAIT`].
const PRODUCTS_PER_EXTRA_SECOND: u32 = 1000;

pub(crate) use crate::server_build::Profile;

/// How to run the server.
#[derive(Clone, Debug)]
pub(crate) struct ServerOptions {
    /// What prefixes the lines we print (`bench`, `test`).
    pub(crate) label: &'static str,
    /// The profile to build and run.
    pub(crate) profile: Profile,
    /// Where the database and `server.log` go; an old database there is removed first.
    pub(crate) dir: PathBuf,
    /// Products in the demo catalog (`--seed-products`).
    pub(crate) seed_products: u32,
    /// Origins whose pages may use the session and read responses (`--allow-origin`, each).
    pub(crate) allow_origins: Vec<String>,
    /// Where the built SDK is (`--sdk-dir`); the server's default (`sdk/dist`) when `None`.
    pub(crate) sdk_dir: Option<PathBuf>,
    /// Tool folders served live from disk (`--dev-tool`, each).
    pub(crate) dev_tools: Vec<PathBuf>,
}

impl ServerOptions {
    /// The server's log (its stdout and stderr), in [`Self::dir`].
    pub(crate) fn log(&self) -> PathBuf {
        self.dir.join(LOG_FILE)
    }

    /// A server for `label` built with `profile`, with its files in `dir` and `seed_products`
    /// in its catalog; no other origin may use its session, and it serves the SDK from its
    /// default place.
    pub(crate) fn new(
        label: &'static str,
        profile: Profile,
        dir: PathBuf,
        seed_products: u32,
    ) -> Self {
        Self {
            label,
            profile,
            dir,
            seed_products,
            allow_origins: Vec::new(),
            sdk_dir: None,
            dev_tools: Vec::new(),
        }
    }
}

/// A running `toolbridge serve`. Dropping it kills the server.
pub(crate) struct ToolbridgeServer {
    child: Child,
    port: u16,
    binary: PathBuf,
    db: PathBuf,
    log: PathBuf,
}

impl ToolbridgeServer {
    /// Builds the server (printing the command), starts it on a free port with a fresh database
    /// in `options.dir`, and waits until it listens, which takes longer the more products it
    /// seeds.
    pub(crate) fn start(ctx: &Ctx, options: &ServerOptions) -> Result<Self, Error> {
        let binary = server_build::build(ctx, options.label, options.profile)?;
        Self::launch(ctx, binary, options, ReservedPort::new()?)
    }

    /// Starts the server `binary` that is already built (with `options.profile`) on `port`, with
    /// a fresh database in `options.dir`, and waits until it listens.
    pub(crate) fn launch(
        ctx: &Ctx,
        binary: PathBuf,
        options: &ServerOptions,
        port: ReservedPort,
    ) -> Result<Self, Error> {
        let label = options.label;
        create_dir(&options.dir)?;
        let db = options.dir.join(DB_FILE);
        for suffix in ["", "-wal", "-shm"] {
            let stale = PathBuf::from(format!("{}{suffix}", db.display()));
            if stale.exists() {
                fs::remove_file(&stale).map_err(|e| {
                    Error::failed(format!("cannot remove {}: {e}", stale.display()))
                })?;
            }
        }
        let log = options.log();
        let log_file = File::create(&log)
            .map_err(|e| Error::failed(format!("cannot create {}: {e}", log.display())))?;
        let stdout_log = log_file
            .try_clone()
            .map_err(|e| Error::failed(format!("cannot open {} twice: {e}", log.display())))?;

        // Let go of the port only now, for the server to take.
        let port = port.release();
        let mut serve = ctx.program(&binary);
        serve
            .args(["serve", "--port", &port.to_string()])
            .args(["--seed-products", &options.seed_products.to_string()])
            .arg("--db")
            .arg(&db);
        for origin in &options.allow_origins {
            serve.args(["--allow-origin", origin]);
        }
        if let Some(sdk_dir) = &options.sdk_dir {
            serve.arg("--sdk-dir").arg(sdk_dir);
        }
        for dir in &options.dev_tools {
            serve.arg("--dev-tool").arg(dir);
        }
        serve
            .env("RUST_LOG", "warn")
            .stdin(Stdio::null())
            // What it prints on stdout (the seeded data, the address) helps reading the log.
            .stdout(stdout_log)
            .stderr(log_file);
        println!("{label}: starting `{}`", describe(&serve));
        let child = serve
            .spawn()
            .map_err(|e| Error::failed(format!("cannot start {}: {e}", binary.display())))?;
        let mut server = Self {
            child,
            port,
            binary,
            db,
            log,
        };
        let limit = BASE_WAIT
            + Duration::from_secs(u64::from(options.seed_products / PRODUCTS_PER_EXTRA_SECOND));
        let started = Instant::now();
        server.wait_until_listening(ctx, limit)?;
        println!(
            "{label}: the server listens at {} ({:.1} s after it started)",
            server.base_url(),
            started.elapsed().as_secs_f64()
        );
        Ok(server)
    }

    /// The port the server listens on.
    pub(crate) fn port(&self) -> u16 {
        self.port
    }

    /// `http://127.0.0.1:PORT`, without a trailing slash.
    pub(crate) fn base_url(&self) -> String {
        base_url(self.port)
    }

    /// The server's log (its stdout and stderr).
    pub(crate) fn log(&self) -> &Path {
        &self.log
    }

    /// Creates an API key with `toolbridge keys create` on the server's database and returns it.
    /// `scopes` is comma-separated (`products:read`); `rate_limit` is like `120/60s`.
    pub(crate) fn create_key(
        &self,
        ctx: &Ctx,
        name: &str,
        scopes: &str,
        rate_limit: &str,
    ) -> Result<String, Error> {
        let mut create = ctx.program(&self.binary);
        create
            .args(["keys", "create", "--name", name, "--scopes", scopes])
            .args(["--rate-limit", rate_limit, "--db"])
            .arg(&self.db);
        let output = process::capture(&mut create)?;
        String::from_utf8_lossy(&output)
            .split_whitespace()
            .find(|word| word.starts_with("tbk_"))
            .map(str::to_owned)
            .ok_or_else(|| Error::failed("`toolbridge keys create` printed no key"))
    }

    /// Polls the port until the server accepts a connection; fails at once when the server
    /// exits, and after `limit`.
    fn wait_until_listening(&mut self, ctx: &Ctx, limit: Duration) -> Result<(), Error> {
        wait_until_listening(
            ctx,
            "the server",
            &mut self.child,
            self.port,
            limit,
            &self.log,
        )
    }
}

/// A port of this machine that is held (bound, not listening for anyone) until the process it
/// is for is started, so that nothing else takes it in between: what is built with the address
/// can be built before the server runs.
pub(crate) struct ReservedPort {
    listener: TcpListener,
    port: u16,
}

impl ReservedPort {
    /// A port the OS picks.
    pub(crate) fn new() -> Result<Self, Error> {
        let fail = |e: std::io::Error| Error::failed(format!("cannot find a free port: {e}"));
        let listener = TcpListener::bind((Ipv4Addr::LOCALHOST, 0)).map_err(fail)?;
        let port = listener.local_addr().map_err(fail)?.port();
        Ok(Self { listener, port })
    }

    /// The port.
    pub(crate) fn port(&self) -> u16 {
        self.port
    }

    /// Lets go of the port, for the process it is for to take right away.
    pub(crate) fn release(self) -> u16 {
        drop(self.listener);
        self.port
    }
}

/// `http://127.0.0.1:PORT`, without a trailing slash.
pub(crate) fn base_url(port: u16) -> String {
    format!("http://127.0.0.1:{port}")
}

/// Waits until `child` (called `what` in messages, its log at `log`) accepts connections on
/// `port` of this machine; fails if it exits first or takes longer than `limit`.
pub(crate) fn wait_until_listening(
    ctx: &Ctx,
    what: &str,
    child: &mut Child,
    port: u16,
    limit: Duration,
    log: &Path,
) -> Result<(), Error> {
    let address = SocketAddr::from((Ipv4Addr::LOCALHOST, port));
    let started = Instant::now();
    while started.elapsed() < limit {
        if let Ok(Some(status)) = child.try_wait() {
            return Err(Error::failed(format!(
                "{what} exited ({status}) before it listened; see {}",
                ctx.shown(log)
            )));
        }
        if TcpStream::connect_timeout(&address, Duration::from_millis(200)).is_ok() {
            return Ok(());
        }
        sleep(Duration::from_millis(100));
    }
    Err(Error::failed(format!(
        "{what} did not listen on port {port} within {} s; see {}",
        limit.as_secs(),
        ctx.shown(log)
    )))
}

impl Drop for ToolbridgeServer {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}
