//! Building the `toolbridge` binary: in the foreground, or in the background while other builds
//! go on (cargo locks each profile's directory, not the whole target directory, so builds with
//! different profiles run side by side).

use std::fs::{self, File};
use std::path::PathBuf;
use std::process::{Child, Command, Stdio};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex, PoisonError};
use std::thread::{self, JoinHandle, sleep};
use std::time::{Duration, Instant};

use crate::error::Error;
use crate::process::{Ctx, describe, run_step};

/// The cargo profile the server is built with.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Profile {
    /// `cargo build` (target/debug): quick to build, what the tests use.
    Debug,
    /// `cargo build --release` (target/release): what the measurements use.
    Release,
}

impl Profile {
    /// The directory under the target directory that cargo builds this profile into.
    pub(crate) fn dir(self) -> &'static str {
        match self {
            Self::Debug => "debug",
            Self::Release => "release",
        }
    }
}

/// The crate that compiles SQLite's C source, the longest single step of a fresh server build.
/// Few crates depend on it, so cargo's scheduler, which starts the most depended-on crates first,
/// gets to it late; a background build starts it first (see [`BackgroundBuild::start`]).
const SQLITE_CRATE: &str = "libsqlite3-sys";

/// Lines of a failed build's output that are printed with the error.
const FAILED_BUILD_LINES: usize = 30;

/// How often the background thread looks whether its cargo has finished.
const POLL: Duration = Duration::from_millis(100);

/// Builds the `toolbridge` binary with `profile` (printing the command after `label:`) and
/// returns its path.
pub(crate) fn build(ctx: &Ctx, label: &str, profile: Profile) -> Result<PathBuf, Error> {
    run_step(label, &mut build_command(ctx, profile))?;
    Ok(binary(ctx, profile))
}

/// `cargo build [--release] -p toolbridge-server --bin toolbridge`.
fn build_command(ctx: &Ctx, profile: Profile) -> Command {
    cargo_build(
        ctx,
        profile,
        &["-p", "toolbridge-server", "--bin", "toolbridge"],
    )
}

/// `cargo build [--release] ARGS`.
fn cargo_build(ctx: &Ctx, profile: Profile, args: &[&str]) -> Command {
    let mut build = ctx.cargo();
    build.arg("build");
    if profile == Profile::Release {
        build.arg("--release");
    }
    build.args(args);
    build
}

/// Where cargo puts the `toolbridge` binary built with `profile`.
fn binary(ctx: &Ctx, profile: Profile) -> PathBuf {
    ctx.target_dir()
        .join(profile.dir())
        .join(format!("toolbridge{}", std::env::consts::EXE_SUFFIX))
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
    /// Starts building the binary with `profile` and says so after `label:`; cargo's output goes
    /// to `log`. SQLite's crate is built first, on its own, so that its long C compile runs
    /// beside whatever the caller builds next rather than at the end; when that first step
    /// fails, the main build still runs and reports why.
    pub(crate) fn start(
        ctx: &Ctx,
        label: &str,
        profile: Profile,
        log: PathBuf,
    ) -> Result<Self, Error> {
        let file = File::create(&log)
            .map_err(|e| Error::failed(format!("cannot create {}: {e}", log.display())))?;
        let main = build_command(ctx, profile);
        let command = describe(&main);
        println!(
            "{label}: running `{command}` in the background, {SQLITE_CRATE} first (the output \
             goes to {})",
            ctx.shown(&log)
        );
        let steps = vec![
            (cargo_build(ctx, profile, &["-p", SQLITE_CRATE]), false),
            (main, true),
        ];
        let running = Arc::new(Mutex::new(None));
        let stop = Arc::new(AtomicBool::new(false));
        let thread = {
            let running = Arc::clone(&running);
            let stop = Arc::clone(&stop);
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
            binary: binary(ctx, profile),
            started: Instant::now(),
        })
    }

    /// Whether the build has ended, well or not, so that [`Self::wait`] returns at once.
    pub(crate) fn is_finished(&self) -> bool {
        self.steps.as_ref().is_none_or(JoinHandle::is_finished)
    }

    /// Waits for the build to finish (at once when it has) and returns the binary's path. A
    /// failure prints the end of cargo's output (after `label:`) and names the log.
    pub(crate) fn wait(&mut self, ctx: &Ctx, label: &str) -> Result<PathBuf, Error> {
        if let Some(steps) = self.steps.take() {
            println!("{label}: waiting for `{}`", self.command);
            let outcome = steps
                .join()
                .unwrap_or_else(|_| Err("the thread running it stopped".to_owned()));
            match &outcome {
                Ok(()) => println!(
                    "{label}: `{}` finished, {:.0} s after it started",
                    self.command,
                    self.started.elapsed().as_secs_f64()
                ),
                Err(why) => {
                    let text = fs::read_to_string(&self.log).unwrap_or_default();
                    let lines: Vec<&str> = text.lines().collect();
                    for line in &lines[lines.len().saturating_sub(FAILED_BUILD_LINES)..] {
                        println!("{label}: | {line}");
                    }
                    println!("{label}: {why}");
                }
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
        if let Some(child) = self
            .running
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .as_mut()
        {
            let _ = child.kill();
        }
        if let Some(steps) = self.steps.take() {
            let _ = steps.join();
        }
    }
}

/// Runs each command in turn with its output appended to `log`, until one that must succeed
/// fails or `stop` is set; the child that runs is in `running`.
fn run_steps(
    steps: Vec<(Command, bool)>,
    log: &File,
    running: &Mutex<Option<Child>>,
    stop: &AtomicBool,
) -> Result<(), String> {
    for (mut command, must_succeed) in steps {
        let shown = describe(&command);
        let log_handle = || {
            log.try_clone()
                .map_err(|e| format!("cannot write its log: {e}"))
        };
        command
            .stdin(Stdio::null())
            .stdout(log_handle()?)
            .stderr(log_handle()?);
        {
            let mut slot = running.lock().unwrap_or_else(PoisonError::into_inner);
            if stop.load(Ordering::SeqCst) {
                return Err("it was stopped".to_owned());
            }
            let child = command
                .spawn()
                .map_err(|e| format!("could not start `{shown}`: {e}"))?;
            *slot = Some(child);
        }
        let succeeded = loop {
            let mut slot = running.lock().unwrap_or_else(PoisonError::into_inner);
            let Some(child) = slot.as_mut() else {
                return Err("it was stopped".to_owned());
            };
            match child.try_wait() {
                Ok(Some(status)) => {
                    *slot = None;
                    break status.success();
                }
                Ok(None) => {}
                Err(e) => return Err(format!("cannot wait for `{shown}`: {e}")),
            }
            drop(slot);
            sleep(POLL);
        };
        if !succeeded && must_succeed {
            return Err(format!("`{shown}` failed"));
        }
    }
    Ok(())
}
