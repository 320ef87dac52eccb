//! Running child processes: where they run, which `PATH` they see, and how their output reaches
//! the terminal.

use std::env;
use std::ffi::{OsStr, OsString};
use std::io::{self, BufRead, BufReader, Read, Write};
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};

use crate::error::Error;

/// What every child process shares: the workspace root as working directory, the cargo that runs
/// xtask, and a `PATH` that also contains the directory `cargo install` writes to.
#[derive(Clone)]
pub(crate) struct Ctx {
    root: PathBuf,
    cargo: OsString,
    path_dirs: Vec<PathBuf>,
    path: OsString,
    /// Whether the cargo it starts yields the CPU to other processes (see [`Self::yielding`]).
    yielding: bool,
    /// The `TMPDIR` of every child, when set (see [`Self::with_temp_dir`]).
    temp_dir: Option<PathBuf>,
}

impl Ctx {
    /// Works out the workspace root, the cargo binary and the `PATH` for child processes.
    pub(crate) fn new() -> Result<Self, Error> {
        let manifest_dir = Path::new(env!("CARGO_MANIFEST_DIR"));
        let root = manifest_dir
            .parent()
            .ok_or_else(|| {
                Error::failed(format!(
                    "xtask lives at {}, which has no parent directory to use as workspace root",
                    manifest_dir.display()
                ))
            })?
            .to_path_buf();
        let cargo = env::var_os("CARGO")
            .filter(|cargo| !cargo.is_empty())
            .unwrap_or_else(|| OsString::from("cargo"));

        let mut path_dirs: Vec<PathBuf> = env::var_os("PATH")
            .map(|path| env::split_paths(&path).collect())
            .unwrap_or_default();
        // Tools installed by `cargo xtask setup` must be found even when the shell that started
        // us does not have cargo's bin directory on PATH.
        if let Some(bin) = cargo_bin_dir() {
            if !path_dirs.contains(&bin) {
                path_dirs.insert(0, bin);
            }
        }
        let path = env::join_paths(&path_dirs)
            .map_err(|e| Error::failed(format!("cannot build PATH for child processes: {e}")))?;

        Ok(Self {
            root,
            cargo,
            path_dirs,
            path,
            yielding: false,
            temp_dir: None,
        })
    }

    /// The same, except that the cargo it starts runs at a lower CPU priority (`nice -n 10`, when
    /// `nice` is on `PATH`): for builds that run beside a more urgent one, to fill the cores that
    /// one leaves idle rather than slow it down.
    pub(crate) fn yielding(&self) -> Self {
        Self {
            yielding: true,
            ..self.clone()
        }
    }

    /// The same, except that every child it starts sees `dir` as `TMPDIR` (see
    /// [`crate::scratch::Scratch`]).
    pub(crate) fn with_temp_dir(&self, dir: &Path) -> Self {
        Self {
            temp_dir: Some(dir.to_path_buf()),
            ..self.clone()
        }
    }

    /// The workspace root (the directory of the root `Cargo.toml`).
    pub(crate) fn root(&self) -> &Path {
        &self.root
    }

    /// A `cargo` command that runs in the workspace root.
    pub(crate) fn cargo(&self) -> Command {
        match self.find("nice").filter(|_| self.yielding) {
            Some(nice) => {
                let mut command = Command::new(nice);
                command.args(["-n", "10"]).arg(&self.cargo);
                self.prepare(command)
            }
            None => self.prepare(Command::new(&self.cargo)),
        }
    }

    /// A command for `program` (looked up on the extended `PATH`) that runs in the workspace root.
    pub(crate) fn command(&self, program: &str) -> Command {
        let resolved = self
            .find(program)
            .map_or_else(|| OsString::from(program), PathBuf::into_os_string);
        self.prepare(Command::new(resolved))
    }

    /// A command for the program at `path` (not looked up on `PATH`) that runs in the workspace
    /// root.
    pub(crate) fn program(&self, path: &Path) -> Command {
        self.prepare(Command::new(path))
    }

    /// Where `program` is on the extended `PATH`, if it is anywhere.
    pub(crate) fn find(&self, program: &str) -> Option<PathBuf> {
        self.path_dirs
            .iter()
            .map(|dir| dir.join(program))
            .find(|candidate| is_executable(candidate))
    }

    /// Cargo's target directory: `CARGO_TARGET_DIR` when set (relative to the workspace root, as
    /// the cargo we start sees it), else `target` in the workspace root.
    pub(crate) fn target_dir(&self) -> PathBuf {
        let dir = env::var_os("CARGO_TARGET_DIR")
            .filter(|dir| !dir.is_empty())
            .map_or_else(|| PathBuf::from("target"), PathBuf::from);
        self.root.join(dir)
    }

    /// `path` for messages and for arguments of commands (which run in the workspace root):
    /// relative to the root when it lies inside it, else as it is.
    pub(crate) fn shown(&self, path: &Path) -> String {
        path.strip_prefix(&self.root)
            .unwrap_or(path)
            .display()
            .to_string()
    }

    fn prepare(&self, mut command: Command) -> Command {
        command.current_dir(&self.root).env("PATH", &self.path);
        if let Some(dir) = &self.temp_dir {
            command.env("TMPDIR", dir);
        }
        command
    }
}

/// `$CARGO_HOME/bin`, or `~/.cargo/bin` when `CARGO_HOME` is not set.
fn cargo_bin_dir() -> Option<PathBuf> {
    let non_empty = |value: &OsString| !value.is_empty();
    env::var_os("CARGO_HOME")
        .filter(non_empty)
        .map(PathBuf::from)
        .or_else(|| {
            env::var_os("HOME")
                .filter(non_empty)
                .map(|home| PathBuf::from(home).join(".cargo"))
        })
        .map(|cargo_home| cargo_home.join("bin"))
}

#[cfg(unix)]
fn is_executable(path: &Path) -> bool {
    use std::os::unix::fs::PermissionsExt;
    path.metadata()
        .is_ok_and(|meta| meta.is_file() && meta.permissions().mode() & 0o111 != 0)
}

#[cfg(not(unix))]
fn is_executable(path: &Path) -> bool {
    path.is_file()
}

/// The command as a person would type it, for messages: `cargo test --workspace`.
pub(crate) fn describe(command: &Command) -> String {
    let program = Path::new(command.get_program())
        .file_name()
        .unwrap_or_else(|| command.get_program());
    std::iter::once(program)
        .chain(command.get_args())
        .map(OsStr::to_string_lossy)
        .collect::<Vec<_>>()
        .join(" ")
}

fn spawn_error(command: &Command, error: &io::Error) -> Error {
    Error::failed(format!("could not start `{}`: {error}", describe(command)))
}

/// Runs `command` with the terminal as its stdout and stderr; `Ok(true)` when it succeeds.
pub(crate) fn run(command: &mut Command) -> Result<bool, Error> {
    command
        .status()
        .map(|status| status.success())
        .map_err(|e| spawn_error(command, &e))
}

/// Runs one step of a longer task: prints "LABEL: running" and the command first, and fails with the command
/// named when it does.
pub(crate) fn run_step(label: &str, command: &mut Command) -> Result<(), Error> {
    println!("{label}: running `{}`", describe(command));
    if run(command)? {
        Ok(())
    } else {
        Err(Error::failed(format!("`{}` failed", describe(command))))
    }
}

/// Runs `command` quietly and returns its stdout, or `None` when it cannot be started or fails.
/// For questions such as "which version is installed?".
pub(crate) fn probe(command: &mut Command) -> Option<String> {
    let output = command
        .stdin(Stdio::null())
        .stderr(Stdio::null())
        .output()
        .ok()?;
    output
        .status
        .success()
        .then(|| String::from_utf8_lossy(&output.stdout).into_owned())
}

/// Runs `command` with stdin closed and stderr on the terminal, and returns its stdout as bytes.
/// An error names the command when it cannot start or fails.
pub(crate) fn capture(command: &mut Command) -> Result<Vec<u8>, Error> {
    let output = command
        .stdin(Stdio::null())
        .stderr(Stdio::inherit())
        .output()
        .map_err(|e| spawn_error(command, &e))?;
    if output.status.success() {
        Ok(output.stdout)
    } else {
        Err(Error::failed(format!("`{}` failed", describe(command))))
    }
}

/// Which output stream of a child [`run_watching`] captures.
#[derive(Clone, Copy, Debug)]
pub(crate) enum Stream {
    /// The child's stdout.
    Stdout,
    /// The child's stderr.
    Stderr,
}

/// Runs `command` with one output stream captured: each of its lines is echoed to the same stream
/// of ours as soon as it arrives, and handed to `on_line`. The other stream goes straight to the
/// terminal. `Ok(true)` when the command succeeds.
pub(crate) fn run_watching(
    command: &mut Command,
    stream: Stream,
    on_line: &mut dyn FnMut(&str),
) -> Result<bool, Error> {
    match stream {
        Stream::Stdout => command.stdout(Stdio::piped()),
        Stream::Stderr => command.stderr(Stdio::piped()),
    };
    let mut child = command.spawn().map_err(|e| spawn_error(command, &e))?;
    match stream {
        Stream::Stdout => {
            if let Some(out) = child.stdout.take() {
                pump(out, &mut io::stdout(), on_line);
            }
        }
        Stream::Stderr => {
            if let Some(err) = child.stderr.take() {
                pump(err, &mut io::stderr(), on_line);
            }
        }
    }
    child
        .wait()
        .map(|status| status.success())
        .map_err(|e| Error::failed(format!("waiting for `{}` failed: {e}", describe(command))))
}

/// Copies `from` to `to` line by line until it ends, handing each line to `on_line`.
fn pump(from: impl Read, to: &mut dyn Write, on_line: &mut dyn FnMut(&str)) {
    let mut reader = BufReader::new(from);
    let mut line = Vec::new();
    loop {
        line.clear();
        match reader.read_until(b'\n', &mut line) {
            Ok(0) | Err(_) => break,
            Ok(_) => {
                // An echo failure (a closed terminal) must not stop us draining the child.
                to.write_all(&line).and_then(|()| to.flush()).ok();
                on_line(String::from_utf8_lossy(&line).trim_end());
            }
        }
    }
}
