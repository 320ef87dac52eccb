//! The reliability suites (`tests/reliability/`): the release `toolbridge` binary, built here and
//! named in `TOOLBRIDGE_BIN`, which the tests start, load, kill and restart themselves on
//! databases in `target/reliability/`; and `cargo test -p toolbridge-e2e --features reliability
//! --test reliability` with their output shown as it comes, so that their figures are in the log.

use std::process::Command;

use crate::e2e;
use crate::error::Error;
use crate::process::Ctx;
use crate::server_build;
use crate::server_build::Profile;

/// One of the suites: the name filter of its test in the `reliability` test target.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) struct Reliability {
    /// The test module whose tests make up the suite (`load`, `crash`).
    module: &'static str,
}

/// Load with faults: 16 clients for 60 s, the counts, rate-limit windows and memory afterwards.
pub(crate) const LOAD: Reliability = Reliability { module: "load" };

/// Crash safety: SIGKILL mid-write and restart on the same file, three times.
pub(crate) const CRASH: Reliability = Reliability { module: "crash" };

/// Builds the release server and returns the `cargo test` command that runs `suite` against it.
pub(crate) fn command(ctx: &Ctx, suite: Reliability) -> Result<Command, Error> {
    // Release, so that the load figures say something about the server and not about debug code.
    let binary = server_build::build(ctx, "test", Profile::Release)?;
    let dir = ctx.target_dir().join("reliability");
    fs_err::create_dir_all(&dir)?;
    let mut command = e2e::suite_command(ctx, "reliability");
    command
        .args([
            "--",
            // The figures are printed by the tests; show them as they come.
            "--nocapture",
            "--test-threads=1",
        ])
        .arg(format!("{}::", suite.module))
        .env("TOOLBRIDGE_BIN", binary)
        .env("TOOLBRIDGE_RELIABILITY_DIR", dir);
    Ok(command)
}
