//! Building the release `toolbridge` binary: in the foreground, or in the background while other
//! builds go on (cargo locks each profile's directory, not the whole target directory, so builds
//! with different profiles run side by side).

use std::fs::File;
use std::path::PathBuf;
use std::process::{Child, Command, Stdio};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex, PoisonError};
use std::thread::{self, JoinHandle, sleep};
use std::time::{Duration, Instant};

use xshell::Cmd;

use crate::ctx::Ctx;
use crate::error::Error;

/// The crate that compiles SQLite's C source, the longest single step of a fresh server build.
/// Few crates depend on it, so cargo's scheduler, which starts the most depended-on crates first,
/// gets to it late; a background build starts it first (see [`BackgroundBuild::start`]).
const SQLITE_CRATE: &str = "libsqlite3-sys";

/// What `cargo build` builds: the server's binary.
const SERVER: &[&str] = &["-p", "toolbridge-server", "--bin", "toolbridge"];

/// Lines of a failed background build's log that are printed with the error.
const FAILED_BUILD_LINES: usize = 30;

/// Builds the release `toolbridge` binary (what `cargo xtask build` builds last, and the
/// reliability suites run; the tests' debug build comes from `native::build`) and returns its
/// path. It carries `www/`, `sdk/dist`, `host/dist` and `example-tools/` as they are now
/// (`server/src/embedded.rs`), so build bridge.js and the host module before it.
pub(crate) fn build_release(ctx: &Ctx) -> Result<PathBuf, Error> {
    cargo_build_release(ctx, SERVER).run()?;
    Ok(release_binary(ctx))
}

/// `cargo build --release ARGS`.
fn cargo_build_release<'a>(ctx: &'a Ctx, args: &[&str]) -> Cmd<'a> {
    ctx.cargo().args(["build", "--release"]).args(args)
}

/// Where cargo puts the release `toolbridge` binary.
fn release_binary(ctx: &Ctx) -> PathBuf {
    ctx.target_dir().join("release").join("toolbridge")
}

/// A build of the `toolbridge` binary that runs in the background while other work goes on, its
/// output going to a log file. Dropping it before it has finished stops it.
pub(crate) struct BackgroundBuild {
    /// Runs the build's cargo commands one after the other; `None` once joined.
    steps: Option<JoinHandle<Result<(), String>>>,
    /// The cargo running now, for `drop` to stop.
    running: Arc<Mutex<Option<Child>>>,
    /// Tells the thread to start nothing more.
    stop: Arc<AtomicBool>,
    /// What [`Self::wait`] found, kept for a second call.
    outcome: Option<Result<(), String>>,
    command: String,
    log: PathBuf,
    binary: PathBuf,
    started: Instant,
}

impl BackgroundBuild {
    /// Starts building the release binary, cargo's output going to `log`. SQLite's crate is
    /// built first, on its own, so that its long C compile runs beside whatever the caller builds
    /// next rather than at the end; when that first step fails, the main build still runs and
    /// reports why.
    pub(crate) fn start(ctx: &Ctx, log: PathBuf) -> Result<Self, Error> {
        let file = File::create(&log)
            .map_err(|e| Error::failed(format!("cannot create {}: {e}", log.display())))?;
        let main = cargo_build_release(ctx, SERVER);
        let command = main.to_string();
        println!(
            "$ {command} (in the background, {SQLITE_CRATE} first; its output goes to {})",
            ctx.shown(&log)
        );
        let sqlite = cargo_build_release(ctx, &["-p", SQLITE_CRATE]);
        let steps = vec![(Command::from(sqlite), false), (Command::from(main), true)];
        let (running, stop) = (Arc::default(), Arc::new(AtomicBool::new(false)));
        let thread = {
            let (running, stop) = (Arc::clone(&running), Arc::clone(&stop));
            thread::Builder::new()
                .name("server-build".to_owned())
                .spawn(move || run_steps(steps, &file, &running, &stop))
                .map_err(|e| Error::failed(format!("cannot start a thread for `{command}`: {e}")))?
        };
        Ok(Self {
            steps: Some(thread),
            running,
            stop,
            outcome: None,
            command,
            log,
            binary: release_binary(ctx),
            started: Instant::now(),
        })
    }

    /// Whether the build has ended, well or not, so that [`Self::wait`] returns at once.
    pub(crate) fn is_finished(&self) -> bool {
        self.steps.as_ref().is_none_or(JoinHandle::is_finished)
    }

    /// Waits for the build to finish (at once when it has) and returns the binary's path. A
    /// failure prints the end of cargo's output and names the log.
    pub(crate) fn wait(&mut self, ctx: &Ctx) -> Result<PathBuf, Error> {
        if let Some(steps) = self.steps.take() {
            println!("waiting for `{}`", self.command);
            let outcome = steps
                .join()
                .unwrap_or_else(|_| Err("the thread running it stopped".to_owned()));
            if let Err(why) = &outcome {
                let text = ctx.sh().read_file(&self.log).unwrap_or_default();
                let lines: Vec<&str> = text.lines().collect();
                for line in &lines[lines.len().saturating_sub(FAILED_BUILD_LINES)..] {
                    println!("| {line}");
                }
                println!("{why}");
            } else {
                let took = self.started.elapsed().as_secs();
                println!("`{}` finished, {took} s after it started", self.command);
            }
            self.outcome = Some(outcome);
        }
        match &self.outcome {
            Some(Ok(())) => Ok(self.binary.clone()),
            Some(Err(_)) | None => Err(Error::failed(format!(
                "`{}` failed; its output is in {}",
                self.command,
                ctx.shown(&self.log)
            ))),
        }
    }
}

impl Drop for BackgroundBuild {
    fn drop(&mut self) {
        self.stop.store(true, Ordering::SeqCst);
        let mut running = self.running.lock().unwrap_or_else(PoisonError::into_inner);
        if let Some(child) = running.as_mut() {
            let _ = child.kill();
        }
        drop(running);
        if let Some(steps) = self.steps.take() {
            let _ = steps.join();
        }
    }
}

/// Runs each command in turn with its output appended to `log`, until one that must succeed
/// fails or `stop` is set; the child that runs is in `running`, polled so that `drop` can kill it.
fn run_steps(
    steps: Vec<(Command, bool)>,
    log: &File,
    running: &Mutex<Option<Child>>,
    stop: &AtomicBool,
) -> Result<(), String> {
    let lock = || running.lock().unwrap_or_else(PoisonError::into_inner);
    for (mut command, must_succeed) in steps {
        let shown = format!("{command:?}");
        let log = || {
            log.try_clone()
                .map_err(|e| format!("cannot write its log: {e}"))
        };
        command.stdin(Stdio::null()).stdout(log()?).stderr(log()?);
        {
            let mut slot = lock();
            if stop.load(Ordering::SeqCst) {
                return Err("it was stopped".to_owned());
            }
            let child = command
                .spawn()
                .map_err(|e| format!("cannot start {shown}: {e}"))?;
            *slot = Some(child);
        }
        let succeeded = loop {
            let mut slot = lock();
            let Some(child) = slot.as_mut() else {
                return Err("it was stopped".to_owned());
            };
            match child.try_wait() {
                Ok(Some(status)) => break status.success(),
                Ok(None) => {}
                Err(e) => return Err(format!("cannot wait for {shown}: {e}")),
            }
            drop(slot);
            sleep(Duration::from_millis(100));
        };
        if !succeeded && must_succeed {
            return Err(format!("{shown} failed"));
        }
    }
    Ok(())
}
