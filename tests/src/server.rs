//! A real `toolbridge` server for browser tests and measurements: the binary `cargo xtask` built,
//! started on a free port with a fresh demo database, and killed when the [`ToolbridgeServer`] is
//! dropped.

use std::ffi::{OsStr, OsString};
use std::fs::File;
use std::net::{Ipv4Addr, SocketAddr, TcpListener, TcpStream};
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::thread::sleep;
use std::time::{Duration, Instant};

use crate::Error;

/// The database file's name inside [`ServerOptions::dir`].
const DB_FILE: &str = "toolbridge.sqlite3";

/// The server's log's name inside [`ServerOptions::dir`].
const LOG_FILE: &str = "server.log";

/// How long the server may take to listen when it seeds nothing much.
const BASE_WAIT: Duration = Duration::from_secs(60);

/// Seeded products the server is given one more second for, on top of [`BASE_WAIT`].
const PRODUCTS_PER_EXTRA_SECOND: u32 = 1000;

/// How to run the server.
#[derive(Clone, Debug)]
pub struct ServerOptions {
    /// What prefixes the lines we print (`bench`, `e2e`).
    pub label: &'static str,
    /// Where the database and `server.log` go; an old database there is removed first.
    pub dir: PathBuf,
    /// Products in the demo catalog (`--seed-products`).
    pub seed_products: u32,
    /// Origins whose pages may use the session and read responses (`--allow-origin`, each).
    pub allow_origins: Vec<String>,
    /// Where the built SDK is (`--sdk-dir`); the working tree's `sdk/dist` when `None`.
    pub sdk_dir: Option<PathBuf>,
    /// Tool folders served live from disk (`--dev-tool`, each).
    pub dev_tools: Vec<PathBuf>,
    /// The database (`--db`: a `postgres://` URL, say) in place of a fresh `SQLite` file in
    /// [`Self::dir`]; it is used as it is, and seeded only if it is empty.
    pub database: Option<String>,
    /// What the server's log is called in [`Self::dir`] (`server.log`), for several servers there.
    pub log_name: &'static str,
    /// Lets webhook endpoints point at loopback and private addresses
    /// (`--allow-private-webhooks`), for a test receiver on this machine.
    pub allow_private_webhooks: bool,
    /// The example tools installed at start (`--example-tools`); the working tree's
    /// `example-tools` when `None`.
    pub example_tools: Option<PathBuf>,
    /// More arguments of `toolbridge serve`, after the others.
    pub extra_args: Vec<OsString>,
    /// The server's `RUST_LOG`.
    pub log_filter: &'static str,
}

impl ServerOptions {
    /// A server for `label` with its files in `dir` and `seed_products` in its catalog; no other
    /// origin may use its session, and it serves the SDK from its default place.
    pub fn new(label: &'static str, dir: PathBuf, seed_products: u32) -> Self {
        Self {
            label,
            dir,
            seed_products,
            allow_origins: Vec::new(),
            sdk_dir: None,
            dev_tools: Vec::new(),
            database: None,
            log_name: LOG_FILE,
            allow_private_webhooks: false,
            example_tools: None,
            extra_args: Vec::new(),
            log_filter: "warn",
        }
    }

    /// The server's log (its stdout and stderr), in [`Self::dir`].
    pub fn log(&self) -> PathBuf {
        self.dir.join(self.log_name)
    }
}

/// A running `toolbridge serve`. Dropping it kills the server.
pub struct ToolbridgeServer {
    child: Child,
    port: u16,
    binary: PathBuf,
    /// What `--db` names.
    db: OsString,
    log: PathBuf,
}

impl ToolbridgeServer {
    /// Starts the server `binary` on a free port; see [`Self::launch`].
    pub fn start(binary: &Path, options: &ServerOptions) -> Result<Self, Error> {
        Self::launch(binary, options, ReservedPort::new()?)
    }

    /// Starts the server `binary` on `port`, with a fresh database in `options.dir` (or on
    /// `options.database`), and waits until it listens, which takes longer the more products it
    /// seeds.
    pub fn launch(
        binary: &Path,
        options: &ServerOptions,
        port: ReservedPort,
    ) -> Result<Self, Error> {
        let label = options.label;
        fs_err::create_dir_all(&options.dir)?;
        let db = if let Some(database) = &options.database {
            OsString::from(database)
        } else {
            let file = options.dir.join(DB_FILE);
            for suffix in ["", "-wal", "-shm"] {
                let stale = PathBuf::from(format!("{}{suffix}", file.display()));
                if stale.exists() {
                    fs_err::remove_file(&stale)?;
                }
            }
            file.into_os_string()
        };
        let log = options.log();
        let stderr_log = log_file(&log)?;
        let stdout_log = stderr_log
            .try_clone()
            .map_err(Error::io(format!("cannot open {} twice", log.display())))?;

        // Let go of the port only now, for the server to take.
        let port = port.release();
        let mut serve = Command::new(binary);
        serve
            .args(["serve", "--demo", "--port", &port.to_string()])
            .args(["--seed-products", &options.seed_products.to_string()])
            .arg("--db")
            .arg(&db);
        for origin in &options.allow_origins {
            serve.args(["--allow-origin", origin]);
        }
        // The working tree's app, SDK, host module, documentation and example tools, in place of the copies
        // the binary carries: the bench's release server builds beside bridge.js, so its copies
        // may be older than what the suite just built.
        let root = workspace_root();
        let sdk_dir = options
            .sdk_dir
            .clone()
            .unwrap_or_else(|| root.join("sdk/dist"));
        serve
            .arg("--sdk-dir")
            .arg(sdk_dir)
            .arg("--www-dir")
            .arg(root.join("www"))
            .arg("--host-dir")
            .arg(root.join("host/dist"))
            .arg("--docs-dir")
            .arg(root.join("docs/book"))
            .arg("--example-tools")
            .arg(
                options
                    .example_tools
                    .clone()
                    .unwrap_or_else(|| root.join("example-tools")),
            );
        for dir in &options.dev_tools {
            serve.arg("--dev-tool").arg(dir);
        }
        if options.allow_private_webhooks {
            serve.arg("--allow-private-webhooks");
        }
        serve
            .args(&options.extra_args)
            .env("RUST_LOG", options.log_filter)
            .stdin(Stdio::null())
            // What it prints on stdout (the seeded data, the address) helps reading the log.
            .stdout(stdout_log)
            .stderr(stderr_log);
        println!("{label}: starting `{}`", describe(&serve));
        let child = serve
            .spawn()
            .map_err(Error::io(format!("cannot start {}", binary.display())))?;
        let mut server = Self {
            child,
            port,
            binary: binary.to_path_buf(),
            db,
            log,
        };
        let limit = BASE_WAIT
            + Duration::from_secs(u64::from(options.seed_products / PRODUCTS_PER_EXTRA_SECOND));
        let started = Instant::now();
        wait_until_listening("the server", &mut server.child, port, limit, &server.log)?;
        println!(
            "{label}: the server listens at {} ({:.1} s after it started)",
            server.base_url(),
            started.elapsed().as_secs_f64()
        );
        Ok(server)
    }

    /// The port the server listens on.
    pub fn port(&self) -> u16 {
        self.port
    }

    /// `http://127.0.0.1:PORT`, without a trailing slash.
    pub fn base_url(&self) -> String {
        base_url(self.port)
    }

    /// The server's database, as `--db` names it (a file's path, or a URL).
    pub fn db(&self) -> &OsStr {
        &self.db
    }

    /// The server's log (its stdout and stderr).
    pub fn log(&self) -> &Path {
        &self.log
    }

    /// Creates an API key of the demo tenant with `toolbridge keys create` on the server's
    /// database and returns it. `scopes` is comma-separated (`products:read`); `rate_limit` is
    /// like `120/60s`.
    pub fn create_key(&self, name: &str, scopes: &str, rate_limit: &str) -> Result<String, Error> {
        let mut create = Command::new(&self.binary);
        create
            // A demo database has two tenants, so the CLI must be told which.
            .args(["keys", "create", "--tenant", "Harbour Flooring Ltd"])
            .args(["--name", name, "--scopes", scopes])
            .args(["--rate-limit", rate_limit, "--db"])
            .arg(&self.db)
            .stdin(Stdio::null())
            .stderr(Stdio::inherit());
        let output = create
            .output()
            .map_err(Error::io(format!("cannot run `{}`", describe(&create))))?;
        if !output.status.success() {
            return Err(Error::failed(format!(
                "`{}` failed ({})",
                describe(&create),
                output.status
            )));
        }
        String::from_utf8_lossy(&output.stdout)
            .split_whitespace()
            .find(|word| word.starts_with("tbk_"))
            .map(str::to_owned)
            .ok_or_else(|| Error::failed("`toolbridge keys create` printed no key"))
    }
}

impl Drop for ToolbridgeServer {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

/// A port of this machine that is held (bound, not listening for anyone) until the process it
/// is for is started, so that nothing else takes it in between: what is built with the address
/// can be built before the server runs.
pub struct ReservedPort {
    listener: TcpListener,
    port: u16,
}

impl ReservedPort {
    /// A port the OS picks.
    pub fn new() -> Result<Self, Error> {
        let listener = TcpListener::bind((Ipv4Addr::LOCALHOST, 0))
            .map_err(Error::io("cannot find a free port"))?;
        let port = listener
            .local_addr()
            .map_err(Error::io("cannot find a free port"))?
            .port();
        Ok(Self { listener, port })
    }

    /// The port `port`, once more: a server's after it stopped, for it to start again where the
    /// pages that knew it will look.
    pub fn at(port: u16) -> Result<Self, Error> {
        let listener = TcpListener::bind((Ipv4Addr::LOCALHOST, port))
            .map_err(Error::io(format!("cannot take port {port} again")))?;
        Ok(Self { listener, port })
    }

    /// The port.
    pub fn port(&self) -> u16 {
        self.port
    }

    /// Lets go of the port, for the process it is for to take right away.
    pub fn release(self) -> u16 {
        drop(self.listener);
        self.port
    }
}

/// The repository's root, whose folders the servers serve.
fn workspace_root() -> PathBuf {
    let manifest_dir = Path::new(env!("CARGO_MANIFEST_DIR"));
    manifest_dir
        .parent()
        .map_or_else(|| manifest_dir.join(".."), Path::to_path_buf)
}

/// `http://127.0.0.1:PORT`, without a trailing slash.
pub fn base_url(port: u16) -> String {
    format!("http://127.0.0.1:{port}")
}

/// Waits until `child` (called `what` in messages, its log at `log`) accepts connections on
/// `port` of this machine; fails if it exits first or takes longer than `limit`.
pub fn wait_until_listening(
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
                log.display()
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
        log.display()
    )))
}

/// The command as a person would type it, for messages: `toolbridge serve --port 4000`.
pub fn describe(command: &Command) -> String {
    let program = Path::new(command.get_program())
        .file_name()
        .unwrap_or_else(|| command.get_program());
    std::iter::once(program)
        .chain(command.get_args())
        .map(std::ffi::OsStr::to_string_lossy)
        .collect::<Vec<_>>()
        .join(" ")
}

/// A log file `path`, as the standard output or error of a child process.
pub(crate) fn log_file(path: &Path) -> Result<File, Error> {
    Ok(fs_err::File::create(path)?.into_parts().0)
}
