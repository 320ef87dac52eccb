//! A throwaway PostgreSQL for tests.
//!
//! [`database`] hands each test a fresh, empty database of a cluster that belongs to the test
//! process: started on first use with PostgreSQL's own programs (`initdb`, `pg_ctl`, `psql`),
//! kept under the cargo target directory (`target/postgres/<pid>/`), listening on a free port of
//! 127.0.0.1 only (no Unix socket), with a random password, and without `fsync` (its data is
//! worthless once the tests end).
//!
//! Its default collation is ICU's `en-US`, not `C`, as a real database's often is: a query whose
//! order depends on the collation shows it here rather than in production.
//!
//! Nothing is left behind. A process's statics are never dropped, so a watchdog does the
//! stopping: a shell started beside the cluster, in a process group of its own (a Ctrl-C of the
//! tests does not reach it), that waits for the end of a pipe the test process holds open. The
//! kernel closes the pipe when the test process ends, however it ends; the watchdog then stops
//! the cluster and removes its directory. Should even the watchdog die (a `kill -9` of the
//! group), the next test process to start a cluster sweeps the directories of processes that no
//! longer run, stopping what still runs in them.
//!
//! It needs PostgreSQL 15 or later (ICU collations for a whole cluster, `CREATE DATABASE …
//! STRATEGY`); Debian 12 has 15.
//!
//! PostgreSQL refuses to run as root. Run as root, the harness runs the cluster as the `postgres`
//! user (which Debian's `postgresql` package makes), in a directory given to that user; otherwise
//! as the user running the tests.

use std::fmt;
use std::fs;
use std::io::{self, Write as _};
use std::net::{Ipv4Addr, TcpListener};
use std::os::unix::fs::{MetadataExt, PermissionsExt};
use std::os::unix::process::CommandExt;
use std::path::{Path, PathBuf};
use std::process::{ChildStdin, Command, Output, Stdio};
use std::sync::OnceLock;
use std::sync::atomic::{AtomicU32, Ordering};
use std::time::{Duration, Instant};

/// What to do when PostgreSQL's programs are missing.
const INSTALL_HINT: &str = "run `cargo xtask setup` (as root it installs the Debian package \
    `postgresql`), or install that package yourself: `apt-get install postgresql`";

/// The cluster's superuser.
const SUPERUSER: &str = "postgres";

/// Settings of the cluster, beyond the port: loopback only, no Unix socket (nothing outside its
/// directory), and speed over durability.
const SETTINGS: &str = "
listen_addresses = '127.0.0.1'
unix_socket_directories = ''
fsync = off
synchronous_commit = off
full_page_writes = off
max_connections = 300
";

/// The watchdog: waits for the end of its standard input (the test process's end), stops the
/// postmaster whose pid the data directory's `postmaster.pid` names (fast shutdown, then a kill
/// after 10 s), and removes the cluster's directory (`$1`).
const WATCHDOG: &str = r#"
cat >/dev/null
alive() { [ -r "/proc/$1/status" ] && ! grep -q '^State:[[:space:]]*Z' "/proc/$1/status"; }
pidfile="$1/data/postmaster.pid"
if [ -r "$pidfile" ]; then
    pid=$(head -n 1 "$pidfile")
    kill -INT "$pid" 2>/dev/null
    n=0
    while alive "$pid" && [ "$n" -lt 100 ]; do sleep 0.1; n=$((n + 1)); done
    alive "$pid" && kill -KILL "$pid" 2>/dev/null
fi
rm -rf "$1"
"#;

/// Why there is no PostgreSQL for the tests: what failed, with what PostgreSQL said.
#[derive(Debug, Clone)]
pub struct Error(String);

impl fmt::Display for Error {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.0)
    }
}

impl std::error::Error for Error {}

impl Error {
    fn new(message: impl Into<String>) -> Self {
        Error(message.into())
    }
}

/// A fresh, empty database of the test process's cluster, dropped (connections and all) when
/// this is dropped.
#[derive(Debug)]
pub struct Database {
    cluster: &'static Cluster,
    name: String,
}

impl Database {
    /// The database's `postgres://` URL, as the superuser (password included).
    pub fn url(&self) -> String {
        self.cluster.url(&self.name)
    }

    /// The database's name.
    pub fn name(&self) -> &str {
        &self.name
    }
}

impl Drop for Database {
    fn drop(&mut self) {
        // Best effort: the cluster goes when the process ends in any case.
        let _ = self.cluster.psql(&format!(
            "DROP DATABASE IF EXISTS {} WITH (FORCE)",
            self.name
        ));
    }
}

/// A new empty database, on the test process's cluster (started by the first call).
///
/// # Errors
///
/// When the cluster cannot start (PostgreSQL is not installed, or refused to start: the error
/// says which, with PostgreSQL's words) or the database cannot be created.
pub fn database() -> Result<Database, Error> {
    static CLUSTER: OnceLock<Result<Cluster, Error>> = OnceLock::new();
    static NEXT: AtomicU32 = AtomicU32::new(1);
    let cluster = CLUSTER
        .get_or_init(Cluster::start)
        .as_ref()
        .map_err(Clone::clone)?;
    let name = format!("test_{}", NEXT.fetch_add(1, Ordering::Relaxed));
    // Copying the template's files is several times faster than writing them through the WAL
    // (PostgreSQL 15's default), and durability is no concern here.
    cluster.psql(&format!("CREATE DATABASE {name} STRATEGY FILE_COPY"))?;
    Ok(Database { cluster, name })
}

/// The test process's cluster.
#[derive(Debug)]
struct Cluster {
    /// Where `psql` is.
    psql: PathBuf,
    port: u16,
    password: String,
    /// The pipe the watchdog waits on; never written, closed by the kernel at exit.
    _watchdog: ChildStdin,
}

/// Who runs the cluster's programs: `None` for the user running the tests.
type RunAs = Option<(u32, u32)>;

impl Cluster {
    fn start() -> Result<Cluster, Error> {
        let bin = server_programs()?;
        let run_as = run_as()?;
        let base = target_dir().join("postgres");
        sweep(&base);
        let dir = base.join(std::process::id().to_string());
        // Left by an earlier process that had this pid.
        remove_dir(&dir);
        fs::create_dir_all(&dir)
            .map_err(|e| Error::new(format!("cannot create {}: {e}", dir.display())))?;
        let watchdog = watchdog(&dir)?;
        let password = random_hex(16)?;
        let password_file = dir.join("password");
        fs::write(&password_file, &password)
            .and_then(|()| fs::set_permissions(&password_file, fs::Permissions::from_mode(0o600)))
            .map_err(|e| Error::new(format!("cannot write {}: {e}", password_file.display())))?;
        if let Some((uid, gid)) = run_as {
            for path in [&dir, &password_file] {
                std::os::unix::fs::chown(path, Some(uid), Some(gid)).map_err(|e| {
                    Error::new(format!(
                        "cannot give {} to the `postgres` user: {e}",
                        path.display()
                    ))
                })?;
            }
        }
        let data = dir.join("data");
        let initdb = program(&bin.join("initdb"), run_as, &dir)
            .arg("--pgdata")
            .arg(&data)
            .args(["--username", SUPERUSER, "--auth", "scram-sha-256"])
            .arg(format!("--pwfile={}", password_file.display()))
            .args(["--encoding", "UTF8", "--locale", "C"])
            .args(["--locale-provider", "icu", "--icu-locale", "en-US"])
            .args(["--no-sync", "--no-instructions"])
            .output();
        checked(initdb, "initdb")?;
        fs::OpenOptions::new()
            .append(true)
            .open(data.join("postgresql.conf"))
            .and_then(|mut conf| conf.write_all(SETTINGS.as_bytes()))
            .map_err(|e| Error::new(format!("cannot write the cluster's settings: {e}")))?;
        let log = dir.join("log");
        let mut attempts = 0;
        let port = loop {
            attempts += 1;
            let port = free_port()?;
            let started = program(&bin.join("pg_ctl"), run_as, &dir)
                .arg("--pgdata")
                .arg(&data)
                .arg("--log")
                .arg(&log)
                .args(["--wait", "--timeout", "60", "--options"])
                .arg(format!("-p {port}"))
                .arg("start")
                .output();
            match checked(started, "pg_ctl start") {
                Ok(()) => break port,
                // Another process took the port between our look and PostgreSQL's bind.
                Err(_) if attempts < 3 && log_says(&log, "could not bind") => {}
                Err(e) => {
                    return Err(Error::new(format!(
                        "{e}\nthe server's log:\n{}",
                        tail(&log)
                    )));
                }
            }
        };
        Ok(Cluster {
            psql: psql(&bin),
            port,
            password,
            _watchdog: watchdog,
        })
    }

    fn url(&self, database: &str) -> String {
        format!(
            "postgres://{SUPERUSER}:{}@127.0.0.1:{}/{database}",
            self.password, self.port
        )
    }

    /// Runs one SQL command on the cluster's `postgres` database.
    fn psql(&self, command: &str) -> Result<(), Error> {
        let output = Command::new(&self.psql)
            .args(["--no-psqlrc", "--quiet", "--set", "ON_ERROR_STOP=1"])
            .args(["--host", "127.0.0.1", "--username", SUPERUSER])
            .args(["--port", &self.port.to_string(), "--dbname", "postgres"])
            .args(["--command", command])
            .env("PGPASSWORD", &self.password)
            .env("PGCONNECT_TIMEOUT", "10")
            .stdin(Stdio::null())
            .output();
        checked(output, &format!("psql `{command}`"))
    }
}

/// A command for one of PostgreSQL's programs, run as `run_as`, in `dir`.
fn program(path: &Path, run_as: RunAs, dir: &Path) -> Command {
    let mut command = Command::new(path);
    command.current_dir(dir).stdin(Stdio::null());
    if let Some((uid, gid)) = run_as {
        command.uid(uid).gid(gid);
    }
    command
}

/// `Ok` when the program ran and succeeded; else what it said.
fn checked(output: io::Result<Output>, what: &str) -> Result<(), Error> {
    let output = output.map_err(|e| Error::new(format!("cannot run {what}: {e}")))?;
    if output.status.success() {
        return Ok(());
    }
    Err(Error::new(format!(
        "{what} failed ({}):\n{}{}",
        output.status,
        String::from_utf8_lossy(&output.stdout),
        String::from_utf8_lossy(&output.stderr)
    )))
}

/// The directory of PostgreSQL's server programs: where `initdb` on `PATH` really is (Debian
/// puts none there, other systems do), else the newest `/usr/lib/postgresql/<version>/bin`.
fn server_programs() -> Result<PathBuf, Error> {
    let complete = |dir: &Path| {
        ["initdb", "pg_ctl", "postgres"]
            .iter()
            .all(|p| dir.join(p).is_file())
    };
    let on_path = std::env::var_os("PATH")
        .map(|path| std::env::split_paths(&path).collect::<Vec<_>>())
        .unwrap_or_default()
        .into_iter()
        .map(|dir| dir.join("initdb"))
        .find(|initdb| initdb.is_file())
        .and_then(|initdb| fs::canonicalize(initdb).ok())
        .and_then(|initdb| initdb.parent().map(Path::to_owned))
        .filter(|dir| complete(dir));
    if let Some(dir) = on_path {
        return Ok(dir);
    }
    let newest = fs::read_dir("/usr/lib/postgresql")
        .into_iter()
        .flatten()
        .flatten()
        .filter_map(|entry| {
            let version: u32 = entry.file_name().to_str()?.parse().ok()?;
            Some((version, entry.path().join("bin")))
        })
        .filter(|(_, dir)| complete(dir))
        .max_by_key(|(version, _)| *version);
    newest.map(|(_, dir)| dir).ok_or_else(|| {
        Error::new(format!(
            "PostgreSQL's server programs (initdb, pg_ctl, postgres) are neither on PATH nor \
             in /usr/lib/postgresql/<version>/bin: {INSTALL_HINT}"
        ))
    })
}

/// `psql` beside the server programs, else whichever is on `PATH`.
fn psql(bin: &Path) -> PathBuf {
    let beside = bin.join("psql");
    if beside.is_file() {
        beside
    } else {
        PathBuf::from("psql")
    }
}

/// Who runs the cluster: the `postgres` user when the tests run as root, else the tests' user.
fn run_as() -> Result<RunAs, Error> {
    let uid = fs::metadata("/proc/self")
        .map(|meta| meta.uid())
        .map_err(|e| Error::new(format!("cannot tell which user runs the tests: {e}")))?;
    if uid != 0 {
        return Ok(None);
    }
    let passwd = fs::read_to_string("/etc/passwd")
        .map_err(|e| Error::new(format!("cannot read /etc/passwd: {e}")))?;
    passwd
        .lines()
        .find_map(|line| {
            let fields: Vec<&str> = line.split(':').collect();
            match fields.as_slice() {
                [name, _, uid, gid, ..] if *name == SUPERUSER => {
                    Some((uid.parse().ok()?, gid.parse().ok()?))
                }
                _ => None,
            }
        })
        .map(Some)
        .ok_or_else(|| {
            Error::new(format!(
                "the tests run as root, which PostgreSQL refuses, and there is no `postgres` \
                 user to run it as: {INSTALL_HINT}"
            ))
        })
}

/// The cargo target directory: `CARGO_TARGET_DIR` (relative to the workspace), else the
/// workspace's `target/`.
fn target_dir() -> PathBuf {
    let workspace = Path::new(env!("CARGO_MANIFEST_DIR")).join("../..");
    let workspace = fs::canonicalize(&workspace).unwrap_or(workspace);
    match std::env::var_os("CARGO_TARGET_DIR") {
        Some(dir) if !dir.is_empty() => workspace.join(dir),
        _ => workspace.join("target"),
    }
}

/// Starts the watchdog of the cluster in `dir`; the pipe to its standard input is its life line.
fn watchdog(dir: &Path) -> Result<ChildStdin, Error> {
    let mut child = Command::new("sh")
        .args(["-c", WATCHDOG, "toolbridge-postgres-watchdog"])
        .arg(dir)
        .stdin(Stdio::piped())
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .process_group(0)
        .spawn()
        .map_err(|e| Error::new(format!("cannot start the cluster's watchdog: {e}")))?;
    child
        .stdin
        .take()
        .ok_or_else(|| Error::new("the watchdog has no standard input"))
}

/// Stops the clusters of test processes that no longer run, and removes their directories.
fn sweep(base: &Path) {
    let Ok(entries) = fs::read_dir(base) else {
        return;
    };
    for entry in entries.flatten() {
        let Some(pid) = entry
            .file_name()
            .to_str()
            .and_then(|name| name.parse::<u32>().ok())
        else {
            continue;
        };
        if alive(pid) {
            continue;
        }
        let dir = entry.path();
        if let Some(postmaster) = postmaster(&dir) {
            stop(postmaster);
        }
        remove_dir(&dir);
    }
}

/// The running postmaster of the cluster in `dir`, if any.
fn postmaster(dir: &Path) -> Option<u32> {
    let pidfile = fs::read_to_string(dir.join("data/postmaster.pid")).ok()?;
    let pid: u32 = pidfile.lines().next()?.trim().parse().ok()?;
    let command = fs::read_to_string(format!("/proc/{pid}/comm")).ok()?;
    (alive(pid) && command.trim() == "postgres").then_some(pid)
}

/// Fast shutdown of a postmaster, then a kill if it has not stopped within 10 s.
fn stop(pid: u32) {
    let signal = |name: &str| {
        let _ = Command::new("kill")
            .args([name, &pid.to_string()])
            .stderr(Stdio::null())
            .status();
    };
    signal("-INT");
    let deadline = Instant::now() + Duration::from_secs(10);
    while alive(pid) {
        if Instant::now() > deadline {
            signal("-KILL");
            return;
        }
        std::thread::sleep(Duration::from_millis(100));
    }
}

/// Whether process `pid` runs (a zombie does not).
fn alive(pid: u32) -> bool {
    fs::read_to_string(format!("/proc/{pid}/status")).is_ok_and(|status| {
        !status
            .lines()
            .any(|line| line.starts_with("State:") && line.contains('Z'))
    })
}

fn remove_dir(dir: &Path) {
    match fs::remove_dir_all(dir) {
        Ok(()) => {}
        Err(e) if e.kind() == io::ErrorKind::NotFound => {}
        Err(e) => eprintln!("warning: cannot remove {}: {e}", dir.display()),
    }
}

/// A port of 127.0.0.1 that is free now.
fn free_port() -> Result<u16, Error> {
    TcpListener::bind((Ipv4Addr::LOCALHOST, 0))
        .and_then(|listener| listener.local_addr())
        .map(|address| address.port())
        .map_err(|e| Error::new(format!("cannot find a free port on 127.0.0.1: {e}")))
}

/// `bytes` random bytes as hex, from the kernel.
fn random_hex(bytes: usize) -> Result<String, Error> {
    use std::io::Read as _;
    let mut buffer = vec![0_u8; bytes];
    fs::File::open("/dev/urandom")
        .and_then(|mut random| random.read_exact(&mut buffer))
        .map_err(|e| Error::new(format!("cannot read /dev/urandom: {e}")))?;
    Ok(buffer.iter().fold(String::new(), |mut hex, byte| {
        use std::fmt::Write as _;
        let _ = write!(hex, "{byte:02x}");
        hex
    }))
}

/// Whether the server's log holds `text`.
fn log_says(log: &Path, text: &str) -> bool {
    fs::read_to_string(log).is_ok_and(|log| log.contains(text))
}

/// The last lines of the server's log.
fn tail(log: &Path) -> String {
    let text = fs::read_to_string(log).unwrap_or_default();
    let lines: Vec<&str> = text.lines().collect();
    lines[lines.len().saturating_sub(20)..].join("\n")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn each_database_is_new_and_empty_and_goes_when_dropped() {
        let first = database().unwrap_or_else(|e| panic!("{e}"));
        let second = database().unwrap_or_else(|e| panic!("{e}"));
        assert_ne!(first.name(), second.name());
        assert!(first.url().starts_with("postgres://postgres:"));
        assert!(first.url().ends_with(&format!("/{}", first.name())));
        let cluster = first.cluster;
        cluster
            .psql(&format!(
                "SELECT 1 FROM pg_database WHERE datname = '{}'",
                first.name()
            ))
            .unwrap_or_else(|e| panic!("{e}"));
        let name = first.name().to_owned();
        drop(first);
        let error = cluster
            .psql(&format!("CREATE DATABASE {name}_copy TEMPLATE {name}"))
            .expect_err("the dropped database is gone");
        assert!(error.to_string().contains("does not exist"), "{error}");
    }

    #[test]
    fn the_cluster_lives_under_the_target_directory_of_this_process() {
        let _database = database().unwrap_or_else(|e| panic!("{e}"));
        let dir = target_dir()
            .join("postgres")
            .join(std::process::id().to_string());
        let postmaster = postmaster(&dir).expect("the cluster's postmaster runs");
        assert!(alive(postmaster));
    }

    #[test]
    fn the_sweep_stops_and_removes_the_clusters_of_ended_processes() {
        let base = target_dir().join("postgres");
        // A directory of a process that cannot be running (pids are below 2^22 on Linux).
        let stale = base.join("4294967");
        fs::create_dir_all(stale.join("data")).unwrap();
        fs::write(stale.join("data/postmaster.pid"), "1\n").unwrap();
        // Our own directory is kept: this process runs.
        let _database = database().unwrap_or_else(|e| panic!("{e}"));
        sweep(&base);
        assert!(!stale.exists());
        assert!(base.join(std::process::id().to_string()).exists());
        assert!(
            alive(1),
            "pid 1 named by the stale pid file is not a postmaster: left alone"
        );
    }
}
