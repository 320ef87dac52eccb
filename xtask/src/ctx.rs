//! The shell every command runs in ([`xshell`]): the workspace root as working directory, a
//! `PATH` that also holds the directory `cargo install` writes to, and for `test` and `bench` a
//! private `TMPDIR`. xshell echoes each command it runs (`$ cargo ...`) before its output.

use std::env;
use std::ffi::OsString;
use std::io::{self, BufRead, BufReader, Read, Write};
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};

use xshell::{Cmd, Shell};

use crate::error::Error;

/// Where commands run and what they see. Cheap to clone.
#[derive(Clone)]
pub(crate) struct Ctx {
    sh: Shell,
    root: PathBuf,
    cargo: OsString,
    /// Whether the cargo it starts yields the CPU to other processes (see [`Self::yielding`]).
    yielding: bool,
}

impl Ctx {
    /// The workspace root, the cargo that runs xtask, and the extended `PATH`.
    pub(crate) fn new() -> Result<Self, Error> {
        let manifest_dir = Path::new(env!("CARGO_MANIFEST_DIR"));
        let root = manifest_dir.parent().ok_or_else(|| {
            Error::failed(format!(
                "{} has no parent directory",
                manifest_dir.display()
            ))
        })?;
        let sh = Shell::new()?;
        sh.change_dir(root);
        let mut path: Vec<PathBuf> = env::var_os("PATH")
            .map(|path| env::split_paths(&path).collect())
            .unwrap_or_default();
        // Tools installed by setup must be found even when the shell that started us does not
        // have cargo's bin directory on PATH.
        if let Some(bin) = cargo_bin_dir().filter(|bin| !path.contains(bin)) {
            path.insert(0, bin);
        }
        let path = env::join_paths(path)
            .map_err(|e| Error::failed(format!("cannot build PATH for child processes: {e}")))?;
        sh.set_var("PATH", path);
        Ok(Self {
            sh,
            root: root.to_path_buf(),
            // The cargo running xtask, not whichever `cargo` comes first on PATH.
            cargo: env::var_os("CARGO")
                .filter(|cargo| !cargo.is_empty())
                .unwrap_or_else(|| "cargo".into()),
            yielding: false,
        })
    }

    /// The same, except that the cargo it starts runs at a lower CPU priority (`nice -n 10`): for
    /// builds beside a more urgent one, to fill the cores that one leaves idle.
    pub(crate) fn yielding(&self) -> Self {
        Self {
            yielding: true,
            ..self.clone()
        }
    }

    /// The same, except that every child sees `dir` as `TMPDIR` (see [`crate::scratch`]).
    pub(crate) fn with_temp_dir(&self, dir: &Path) -> Self {
        let ctx = self.clone();
        ctx.sh.set_var("TMPDIR", dir);
        ctx
    }

    /// The shell, for `cmd!` and file operations (which name the file when they fail).
    pub(crate) fn sh(&self) -> &Shell {
        &self.sh
    }

    /// The workspace root.
    pub(crate) fn root(&self) -> &Path {
        &self.root
    }

    /// `cargo`, the one that runs xtask.
    pub(crate) fn cargo(&self) -> Cmd<'_> {
        if self.yielding && self.find("nice").is_some() {
            self.sh.cmd("nice").args(["-n", "10"]).arg(&self.cargo)
        } else {
            self.sh.cmd(&self.cargo)
        }
    }

    /// Where `program` is on the extended `PATH`, if anywhere.
    pub(crate) fn find(&self, program: &str) -> Option<PathBuf> {
        let path = self.sh.var_os("PATH")?;
        env::split_paths(&path)
            .map(|dir| dir.join(program))
            .find(|candidate| is_executable(candidate))
    }

    /// Cargo's target directory: `CARGO_TARGET_DIR` (relative to the root) or `target`.
    pub(crate) fn target_dir(&self) -> PathBuf {
        let dir = env::var_os("CARGO_TARGET_DIR").filter(|dir| !dir.is_empty());
        self.root
            .join(dir.map_or_else(|| PathBuf::from("target"), PathBuf::from))
    }

    /// `path` for messages and arguments: relative to the root when it lies inside it.
    pub(crate) fn shown(&self, path: &Path) -> String {
        let shown = path.strip_prefix(&self.root).unwrap_or(path);
        shown.display().to_string()
    }
}

/// `$CARGO_HOME/bin`, or `~/.cargo/bin`.
fn cargo_bin_dir() -> Option<PathBuf> {
    let var = |name| env::var_os(name).filter(|value| !value.is_empty());
    var("CARGO_HOME")
        .map(PathBuf::from)
        .or_else(|| var("HOME").map(|home| PathBuf::from(home).join(".cargo")))
        .map(|cargo_home| cargo_home.join("bin"))
}

fn is_executable(path: &Path) -> bool {
    use std::os::unix::fs::PermissionsExt;
    path.metadata()
        .is_ok_and(|meta| meta.is_file() && meta.permissions().mode() & 0o111 != 0)
}

/// Which output stream of a child [`run_watching`] reads.
#[derive(Clone, Copy, Debug)]
pub(crate) enum Stream {
    /// The child's stdout.
    Stdout,
    /// The child's stderr.
    Stderr,
}

/// Runs `cmd` (echoed first, as xshell does) with one output stream read line by line: each line
/// is echoed to the same stream of ours as it arrives and handed to `on_line`. `Ok(true)` when
/// the command succeeds.
pub(crate) fn run_watching(
    cmd: Cmd<'_>,
    stream: Stream,
    on_line: &mut dyn FnMut(&str),
) -> Result<bool, Error> {
    eprintln!("$ {cmd}");
    let shown = cmd.to_string();
    let mut command = Command::from(cmd);
    command.stdin(Stdio::null());
    match stream {
        Stream::Stdout => command.stdout(Stdio::piped()),
        Stream::Stderr => command.stderr(Stdio::piped()),
    };
    let cannot = |what: &str, e: io::Error| Error::failed(format!("cannot {what} `{shown}`: {e}"));
    let mut child = command.spawn().map_err(|e| cannot("start", e))?;
    if let Some(out) = child.stdout.take() {
        pump(out, &mut io::stdout(), on_line);
    }
    if let Some(err) = child.stderr.take() {
        pump(err, &mut io::stderr(), on_line);
    }
    let status = child.wait().map_err(|e| cannot("wait for", e))?;
    Ok(status.success())
}

/// Copies `from` to `to` line by line until it ends, handing each line to `on_line`.
fn pump(from: impl Read, to: &mut dyn Write, on_line: &mut dyn FnMut(&str)) {
    let mut reader = BufReader::new(from);
    let mut line = Vec::new();
    while reader
        .read_until(b'\n', &mut line)
        .is_ok_and(|read| read > 0)
    {
        // An echo failure (a closed terminal) must not stop us draining the child.
        to.write_all(&line).and_then(|()| to.flush()).ok();
        on_line(String::from_utf8_lossy(&line).trim_end());
        line.clear();
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn each_line_is_seen_and_the_exit_status_counts() {
        let ctx = Ctx::new().unwrap();
        let script = "echo one; echo two >&2; echo three; exit 3";
        let mut lines = Vec::new();
        let cmd = ctx.sh().cmd("sh").args(["-c", script]);
        let ok = run_watching(cmd, Stream::Stdout, &mut |line| lines.push(line.to_owned()));
        assert!(!ok.unwrap());
        assert_eq!(lines, ["one", "three"]);
        let cmd = ctx.sh().cmd("sh").args(["-c", "echo fine >&2"]);
        let mut lines = Vec::new();
        let ok = run_watching(cmd, Stream::Stderr, &mut |line| lines.push(line.to_owned()));
        assert!(ok.unwrap());
        assert_eq!(lines, ["fine"]);
    }

    #[test]
    fn a_missing_program_is_an_error_that_names_it() {
        let ctx = Ctx::new().unwrap();
        let cmd = ctx.sh().cmd("toolbridge-no-such-program");
        let error = run_watching(cmd, Stream::Stdout, &mut |_| {}).unwrap_err();
        assert!(
            error.to_string().contains("toolbridge-no-such-program"),
            "{error}"
        );
    }

    #[test]
    fn paths_in_the_workspace_are_shown_relative_to_it() {
        let ctx = Ctx::new().unwrap();
        assert_eq!(ctx.shown(&ctx.root().join("sdk/dist")), "sdk/dist");
        assert_eq!(ctx.shown(Path::new("/elsewhere/x")), "/elsewhere/x");
        assert!(ctx.find("sh").is_some());
        assert!(ctx.find("toolbridge-no-such-program").is_none());
    }
}
