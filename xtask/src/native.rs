//! The workspace built for this machine as every test suite uses it: one package selection and
//! one feature set for all of them.
//!
//! Cargo resolves features over the packages a command selects (and over dev-dependencies only
//! when the command builds tests), and a crate built with other features is built again. When
//! clippy, the native tests, the debug server, `with-backends` and each suite's test target were
//! built by commands that each selected their own package, tokio, hyper, sqlx and every crate
//! above them were compiled several times over in one run. Every native `cargo` command of a test
//! run selects the whole workspace in test mode instead ([`cargo`]), so each crate is compiled
//! once (and once more by clippy, whose checks cannot be reused for a build). The suites'
//! features turn on test targets only, no dependency's feature, so the native tests, which run
//! without them, share every dependency's build too.

use std::path::PathBuf;

use xshell::Cmd;

use crate::ctx::Ctx;
use crate::error::Error;

/// The features that let the suites' test targets build: the e2e, reliability, conformance,
/// docs and host package suites of the `tests/` crate, and the tool author's kit's browser tests.
const SUITE_FEATURES: &str = "toolbridge-e2e/e2e,toolbridge-e2e/reliability,\
                              toolbridge-e2e/conformance,toolbridge-e2e/docs,\
                              toolbridge-e2e/host-package,toolbridge-testkit/browser";

/// `cargo SUBCOMMAND --workspace --features SUITE_FEATURES`.
pub(crate) fn cargo<'a>(ctx: &'a Ctx, subcommand: &str) -> Cmd<'a> {
    ctx.cargo()
        .arg(subcommand)
        .args(["--workspace", "--features", SUITE_FEATURES])
}

/// The debug binaries the suites start, from [`build`].
pub(crate) struct Binaries {
    /// `toolbridge`, the server.
    pub(crate) server: PathBuf,
    /// `with-backends` (`tests/src/bin/`), which starts what a browser suite talks to.
    pub(crate) with_backends: PathBuf,
}

/// Builds every native target of the workspace as the test run does (after the native tests, only
/// the suites' own test targets are left to build) and answers where the binaries the suites
/// start are.
pub(crate) fn build(ctx: &Ctx) -> Result<Binaries, Error> {
    cargo(ctx, "test").arg("--no-run").run()?;
    let dir = ctx.target_dir().join("debug");
    Ok(Binaries {
        server: dir.join("toolbridge"),
        with_backends: dir.join("with-backends"),
    })
}
