//! The end-to-end suites (`tests/e2e/`), once per browser: `cargo test -p toolbridge-e2e
//! --features e2e` run by `with-backends e2e`, which gives each browser a fresh debug
//! `toolbridge serve` (the reference app, the host module, the example tools and the README's
//! tool) and the browser's driver, all under `target/e2e/<browser>/`.

use std::ffi::OsStr;
use std::process::Command;

use crate::browser::{self, Browser};
use crate::error::Error;
use crate::host_module;
use crate::process::Ctx;
use crate::server_build::{self, Profile};

/// Products in the e2e catalog: the demo size the app shows.
const PRODUCTS: &str = "1000";

/// `cargo test -p toolbridge-e2e --features <suite> --test <suite>`: one of the `tests/` crate's
/// suites, each a test target behind the feature of the same name.
pub(crate) fn suite_command(ctx: &Ctx, suite: &str) -> Command {
    let mut command = ctx.cargo();
    command.args([
        "test",
        "-p",
        "toolbridge-e2e",
        "--features",
        suite,
        "--test",
        suite,
    ]);
    command
}

/// Builds the host module and the debug server, and returns the command that runs the suites in
/// `browser` against them.
pub(crate) fn command(ctx: &Ctx, browser: &Browser) -> Result<Command, Error> {
    host_module::build(ctx)?;
    let server = server_build::build(ctx, "e2e", Profile::Debug)?;
    let dir = ctx.target_dir().join("e2e");
    let mut suite = suite_command(ctx, "e2e");
    suite.args(["--no-fail-fast", "--", "--test-threads=1"]);
    let args = [
        OsStr::new("--server"),
        server.as_os_str(),
        OsStr::new("--dir"),
        dir.as_os_str(),
        OsStr::new("--products"),
        OsStr::new(PRODUCTS),
    ];
    browser::with_backends(ctx, "e2e", browser, &args, &suite)
}
