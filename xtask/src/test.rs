//! `cargo xtask test`: setup, then every suite in order (continuing past failures), one summary
//! line per suite, and last a line that is exactly `N passed, N failed`.
//!
//! A new suite is one more entry in [`SUITES`].

use std::ffi::OsStr;
use std::ops::AddAssign;
use std::path::Path;
use std::time::{Duration, Instant};

use xshell::Cmd;

use crate::browser::{self, Browser, CHROMIUM, FIREFOX, WEBKIT};
use crate::ctx::{self, Ctx, Stream};
use crate::docs;
use crate::error::Error;
use crate::fuzz;
use crate::host_package;
use crate::js_tools;
use crate::native;
use crate::npm_package;
use crate::pins::WASM_TARGET;
use crate::server_build;
use crate::setup;
use crate::{bridge_js, wasm};

/// Which invocation runs a suite: every `cargo xtask test`, or only with `--fuzz` / `--long`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Group {
    /// Runs on every `cargo xtask test`.
    Always,
    /// `--fuzz` (or `--long`): the fuzz suites, each target for [`fuzz::SECONDS`] (with `--long`,
    /// [`fuzz::LONG_SECONDS`]).
    Fuzz,
    /// `--long`: long soaks.
    Long,
}

/// Checks passed and failed by one suite, or in total.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
struct Outcome {
    passed: u32,
    failed: u32,
}

impl Outcome {
    const PASS: Self = Self {
        passed: 1,
        failed: 0,
    };
    const FAIL: Self = Self {
        passed: 0,
        failed: 1,
    };
}

impl AddAssign for Outcome {
    fn add_assign(&mut self, other: Self) {
        self.passed = self.passed.saturating_add(other.passed);
        self.failed = self.failed.saturating_add(other.failed);
    }
}

/// One suite: its name in the summary, when it runs, and how.
struct Suite {
    name: &'static str,
    group: Group,
    run: Run,
}

/// How a suite runs.
enum Run {
    /// Its function, which counts its checks.
    Checks(fn(&Ctx) -> Outcome),
    /// Each target of a fuzz crate, for the time the invocation gives (see [`fuzz_seconds`]).
    Fuzz(&'static fuzz::Crate),
}

/// A suite of [`Group::Always`].
const fn always(name: &'static str, run: fn(&Ctx) -> Outcome) -> Suite {
    let (group, run) = (Group::Always, Run::Checks(run));
    Suite { name, group, run }
}

/// Every suite, in the order they run.
const SUITES: &[Suite] = &[
    always("fmt", |ctx| {
        single_check(&ctx.cargo().args(["fmt", "--all", "--check"]))
    }),
    always("clippy", clippy),
    always("native tests", native_tests),
    always("protocol on wasm32", protocol_wasm32),
    // Builds sdk/dist/ once; suites after it that read sdk/dist/ use this build.
    always("bridge.js build", |ctx| checked(bridge_js::build(ctx))),
    always("sdk in chromium", |ctx| sdk_in_browser(ctx, &CHROMIUM)),
    always("sdk in firefox", |ctx| sdk_in_browser(ctx, &FIREFOX)),
    // WebKitGTK's MiniBrowser, whose driver `with-backends` starts on an Xvfb display of its own.
    always("sdk in webkit", |ctx| sdk_in_browser(ctx, &WEBKIT)),
    always("host in chromium", |ctx| host_in_browser(ctx, &CHROMIUM)),
    always("host in firefox", |ctx| host_in_browser(ctx, &FIREFOX)),
    always("host in webkit", |ctx| host_in_browser(ctx, &WEBKIT)),
    always("sdk typings", |ctx| {
        checked(js_tools::tsc(ctx, SDK_TYPINGS))
    }),
    // Builds host/dist/, then type-checks a host page against its declarations.
    always("host module typings", host_typings),
    // Builds the npm package, installs it offline into a scratch TypeScript project, type-checks
    // a small tool there (and a misspelt method, which must not compile), and runs the tool's
    // test in Chromium (`testkit/tests/tool_tests/package.rs`).
    always("sdk package", |ctx| tool_tests(ctx, &CHROMIUM, "package::")),
    // Packs @toolbridge/host, installs it offline beside the bundlers setup installed for the
    // scratch platform page (`host/scratch-project/`), builds the page with Vite and with webpack,
    // and opens each build in Chromium against a debug server that allows its origin: the page
    // signs in, opens a quote and mounts a tool that adds lines to it (`tests/host_package/`).
    always("host package", host_package_suite),
    // Each example tool's own tests on the package's test host, and again against a copy of the
    // tool with its logic broken on purpose, where they must fail.
    always("tools in chromium", |ctx| {
        tool_tests(ctx, &CHROMIUM, EXAMPLES)
    }),
    always("tools in firefox", |ctx| {
        tool_tests(ctx, &FIREFOX, EXAMPLES)
    }),
    // The book built into docs/book (as `cargo xtask build` does), its links and anchors checked
    // offline, and its code blocks: each says what it is, and each page's `run` blocks run
    // against a demo server (`tests/docs/`).
    always("docs", docs_suite),
    // Each browser against a fresh server of its own.
    always("e2e in chromium", |ctx| e2e_in_browser(ctx, &CHROMIUM)),
    always("e2e in firefox", |ctx| e2e_in_browser(ctx, &FIREFOX)),
    // WebKitGTK's MiniBrowser, whose driver `with-backends e2e` starts on an Xvfb display.
    always("e2e in webkit", |ctx| e2e_in_browser(ctx, &WEBKIT)),
    // schemathesis against the debug server's OpenAPI document (`tests/conformance/`).
    always("api conformance", api_conformance),
    // Both build the release server (once) and run it as a child process of the test.
    // `--long` only for now: its memory rule fails on the resident set that glibc's per-thread
    // arenas keep (see `check_memory` in tests/reliability/load.rs), which no leak explains.
    Suite {
        name: "load with faults",
        group: Group::Long,
        run: Run::Checks(|ctx| reliability(ctx, "load")),
    },
    // On SQLite, then on a throwaway PostgreSQL the test process starts under target/postgres/.
    always("crash safety", |ctx| reliability(ctx, "crash")),
    // The release server copied alone into an empty folder serves what it carries: the same
    // bytes as the working tree's app, bridge.js and host module, which it is built after.
    always("one binary", one_binary),
    // Two release servers on one PostgreSQL, as behind a load balancer; one test opens the app in
    // Chromium.
    always("multi-instance", multi_instance),
    // deploy/nginx.conf with TLS in front of two release servers on PostgreSQL, made as an
    // operator makes them (the CLI's tenant, admin, key and tool), and Chromium trusting the
    // suite's own CA (`tests/reliability/proxied/`).
    always("deployment", |ctx| chromium_reliability(ctx, "proxied")),
    Suite {
        name: "bundle fuzz",
        group: Group::Fuzz,
        run: Run::Fuzz(&fuzz::BUNDLE),
    },
    Suite {
        name: "protocol fuzz",
        group: Group::Fuzz,
        run: Run::Fuzz(&fuzz::PROTOCOL),
    },
];

/// The TypeScript project that type-checks a tool against the SDK's typings.
const SDK_TYPINGS: &str = "sdk/types-test/tsconfig.json";
/// The tool tests of the example tools (and of the page helpers they import).
const EXAMPLES: &str = "example_tools";

/// How long each fuzz target runs: longer with `--long`.
fn fuzz_seconds(groups: &[Group]) -> u32 {
    if groups.contains(&Group::Long) {
        fuzz::LONG_SECONDS
    } else {
        fuzz::SECONDS
    }
}

/// Runs setup and the suites selected by `args`; `Ok(false)` when any check failed.
pub(crate) fn run(ctx: &Ctx, args: &[String]) -> Result<bool, Error> {
    let Selection { mut groups, only } = parse_flags(args)?;
    if groups.contains(&Group::Long) && !groups.contains(&Group::Fuzz) {
        groups.push(Group::Fuzz);
    }
    let selected = |suite: &&Suite| match &only {
        Some(only) => suite.name.contains(only.as_str()),
        None => groups.contains(&suite.group),
    };
    if let Some(only) = &only {
        if !SUITES.iter().any(|suite| selected(&suite)) {
            return Err(Error::usage(format!("no suite's name contains `{only}`")));
        }
    }
    let mut summary = Vec::new();
    let mut total = Outcome::default();
    let mut record = |name: &str, outcome: Outcome, started: Instant| {
        let line = summary_line(name, outcome, started.elapsed());
        println!("{line}");
        summary.push(line);
        total += outcome;
    };
    let started = Instant::now();
    record(
        "setup",
        checked(setup::run(ctx, setup::Purpose::Everything)),
        started,
    );
    let seconds = fuzz_seconds(&groups);
    for suite in SUITES.iter().filter(selected) {
        println!("\ntest: {} ...", suite.name);
        let started = Instant::now();
        let outcome = match suite.run {
            Run::Checks(run) => run(ctx),
            Run::Fuzz(krate) => fuzz_suite(ctx, krate, seconds),
        };
        record(suite.name, outcome, started);
    }
    println!("\nsummary:");
    for line in &summary {
        println!("{line}");
    }
    println!("{} passed, {} failed", total.passed, total.failed);
    Ok(total.failed == 0)
}

/// Which suites a `test` invocation runs.
#[derive(Debug, PartialEq, Eq)]
struct Selection {
    /// The groups whose suites run.
    groups: Vec<Group>,
    /// `--only TEXT`: just the suites whose name contains TEXT, whatever their group.
    only: Option<String>,
}

fn parse_flags(args: &[String]) -> Result<Selection, Error> {
    let mut groups = vec![Group::Always];
    let mut only = None;
    let mut args = args.iter();
    while let Some(arg) = args.next() {
        let group = match arg.as_str() {
            "--fuzz" => Group::Fuzz,
            "--long" => Group::Long,
            "--only" => {
                let name = args
                    .next()
                    .ok_or_else(|| Error::usage("`--only` needs part of a suite's name"))?;
                only = Some(name.clone());
                continue;
            }
            other => return Err(Error::usage(format!("`test` does not take `{other}`"))),
        };
        if !groups.contains(&group) {
            groups.push(group);
        }
    }
    Ok(Selection { groups, only })
}

fn summary_line(name: &str, outcome: Outcome, took: Duration) -> String {
    format!(
        "  {name:<20} {:>5} passed, {:>3} failed {:>8.1}s",
        outcome.passed,
        outcome.failed,
        took.as_secs_f64()
    )
}

/// A suite that is one command: one passed check if it succeeds, one failed check otherwise.
fn single_check(command: &Cmd<'_>) -> Outcome {
    checked(command.run().map_err(Error::from))
}

/// One check from a step that succeeds or says why it did not.
fn checked<T>(result: Result<T, Error>) -> Outcome {
    match result {
        Ok(_) => Outcome::PASS,
        Err(error) => {
            println!("test: {error}");
            Outcome::FAIL
        }
    }
}

/// `cargo test` for the whole workspace (the suites' test targets, which need their features,
/// aside); every test counts, summed from libtest's result lines (unit, integration and doc
/// tests alike).
fn native_tests(ctx: &Ctx) -> Outcome {
    counted_tests(ctx.cargo().args(["test", "--workspace", "--no-fail-fast"]))
}

fn protocol_wasm32(ctx: &Ctx) -> Outcome {
    let args = ["-p", "toolbridge-protocol", "--target", WASM_TARGET];
    single_check(&ctx.cargo().arg("build").args(args))
}

/// Four checks: the workspace for the machine we run on, the SDK (with its tests) for wasm32, the
/// SDK's `no_std` library for wasm32 as bridge.js builds it, and the host module (with its tests)
/// for wasm32.
fn clippy(ctx: &Ctx) -> Outcome {
    let deny = ["--", "-D", "warnings"];
    let native = native::cargo(ctx, "clippy").arg("--all-targets");
    let mut outcome = single_check(&native.args(deny));
    let sdk = ["-p", "toolbridge-sdk", "--target", WASM_TARGET];
    let host = ["-p", "toolbridge-host", "--target", WASM_TARGET];
    let wasm: [&[&str]; 3] = [
        &[&sdk[..], &["--all-targets"]].concat(),
        &[&sdk[..], &["--no-default-features", "--lib"]].concat(),
        &[&host[..], &["--all-targets"]].concat(),
    ];
    for args in wasm {
        let clippy = ctx.cargo().arg("clippy").args(args);
        outcome += single_check(&clippy.args(deny));
    }
    outcome
}

/// `cargo test -p toolbridge-sdk --target wasm32-unknown-unknown` in one browser, through
/// `with-backends browser` (which, for WebKit, starts the driver on a display of its own, with
/// their logs in `target/sdk-tests/<browser>/`); every test counts.
fn sdk_in_browser(ctx: &Ctx, browser: &Browser) -> Outcome {
    counted(
        browser::wasm_test_command(ctx, browser, "toolbridge-sdk", 180).and_then(|command| {
            let command = command.arg("--no-fail-fast");
            let dir = ctx.target_dir().join("sdk-tests").join(browser.name);
            let args = [OsStr::new("--dir"), dir.as_os_str()];
            browser::with_backends(ctx, "browser", browser, &args, command)
        }),
    )
}

/// The host module's browser tests (`--test browser`) in one browser, against the debug
/// `toolbridge` server (a fresh database in `target/host-tests/<browser>/`, with WebKit's driver
/// and display logs) and the fault server (`tests/src/fault_server.rs`), both started by
/// `with-backends host`; every test counts.
fn host_in_browser(ctx: &Ctx, browser: &Browser) -> Outcome {
    counted((|| {
        let command = browser::wasm_test_command(ctx, browser, "toolbridge-host", 300)?;
        let command = command.args(["--no-fail-fast", "--test", "browser"]);
        let dir = ctx.target_dir().join("host-tests").join(browser.name);
        let sdk = bridge_js::dist_dir(ctx);
        let server = native::build(ctx)?.server;
        let mut args = server_args(&server, &dir).to_vec();
        args.extend([OsStr::new("--sdk-dir"), sdk.as_os_str()]);
        browser::with_backends(ctx, "host", browser, &args, command)
    })())
}

/// `with-backends` arguments for a fresh `server` (a debug build) with its database in `dir` and
/// a catalog of the demo's size, 1 000 products.
fn server_args<'a>(server: &'a Path, dir: &'a Path) -> [&'a OsStr; 6] {
    let products = OsStr::new("1000");
    let (server, dir) = (server.as_os_str(), dir.as_os_str());
    [
        OsStr::new("--server"),
        server,
        OsStr::new("--dir"),
        dir,
        OsStr::new("--products"),
        products,
    ]
}

/// Two checks: `host/dist/` builds (the ES module, its wasm and declarations), and `tsc`
/// compiles the host page test project against those declarations.
fn host_typings(ctx: &Ctx) -> Outcome {
    let mut outcome = checked(wasm::host_module(ctx));
    outcome += if outcome.failed > 0 {
        Outcome::FAIL
    } else {
        checked(js_tools::tsc(ctx, "host/types-test/tsconfig.json"))
    };
    outcome
}

/// [`counted_tests`] of a command that could be made, else one failed check.
fn counted(command: Result<Cmd<'_>, Error>) -> Outcome {
    match command {
        Ok(command) => counted_tests(command),
        Err(error) => {
            println!("test: {error}");
            Outcome::FAIL
        }
    }
}

/// Runs a `cargo test` and counts its tests from libtest-style result lines. A failure that no
/// result line accounts for (a build error, a test binary or runner that crashed) adds one
/// failed check.
fn counted_tests(command: Cmd<'_>) -> Outcome {
    let shown = command.to_string();
    let mut counted = Outcome::default();
    let succeeded = ctx::run_watching(command, Stream::Stdout, &mut |line| {
        if let Some(outcome) = parse_test_result(line) {
            counted += outcome;
        }
    });
    match succeeded {
        Ok(false) if counted.failed == 0 => {
            println!("test: `{shown}` failed outside any test");
            counted += Outcome::FAIL;
        }
        Ok(true) if counted == Outcome::default() => println!("test: `{shown}` ran no tests"),
        Ok(_) => {}
        Err(error) => {
            println!("test: {error}");
            counted += Outcome::FAIL;
        }
    }
    counted
}

/// Reads `test result: ok. 3 passed; 0 failed; 1 ignored; ...` into its passed and failed counts.
fn parse_test_result(line: &str) -> Option<Outcome> {
    let rest = line.trim().strip_prefix("test result: ")?;
    let mut outcome = Outcome::default();
    let mut seen = false;
    for part in rest.split(';') {
        let mut words = part.split_whitespace().rev();
        let (Some(kind), Some(Ok(count))) = (words.next(), words.next().map(str::parse::<u32>))
        else {
            continue;
        };
        match kind {
            "passed" => outcome.passed = count,
            "failed" => outcome.failed = count,
            _ => continue,
        }
        seen = true;
    }
    seen.then_some(outcome)
}

/// The tool author's kit (`testkit/tests/tool_tests/`): the tests whose names contain `filter`
/// (`package::` or `example_tools`) in one headless browser, on the npm package as built (its
/// staged files and its tarball), through `with-backends tools` (the driver, and the book's
/// example under `target/tool-tests/`). One check for the package's build, and every test.
fn tool_tests(ctx: &Ctx, browser: &Browser, filter: &str) -> Outcome {
    let tarball = match npm_package::build(ctx) {
        Ok(tarball) => tarball,
        Err(error) => return checked::<()>(Err(error)),
    };
    let tests = native::cargo(ctx, "test")
        .args(["--test", "tool_tests", "--", filter, "--test-threads=1"])
        .env("TOOLBRIDGE_KIT_PACKAGE", npm_package::stage_dir(ctx))
        .env("TOOLBRIDGE_KIT_TARBALL", tarball);
    let dir = ctx.target_dir().join("tool-tests");
    let args = [OsStr::new("--dir"), dir.as_os_str()];
    let mut outcome = Outcome::PASS;
    outcome += counted(browser::with_backends(ctx, "tools", browser, &args, tests));
    outcome
}

/// One check for packing `@toolbridge/host`, and the tests of `tests/host_package/`: the tarball
/// installed offline into [`host_package::project_dir`] (where setup installed the pinned
/// bundlers), the page built with Vite and with webpack, and each build opened in Chromium
/// (through `with-backends browser`, for the driver) against a debug server of the test's own,
/// with its files in `target/host-package-test/`.
fn host_package_suite(ctx: &Ctx) -> Outcome {
    let tarball = match host_package::build(ctx) {
        Ok(tarball) => tarball,
        Err(error) => return checked::<()>(Err(error)),
    };
    let mut outcome = Outcome::PASS;
    outcome += counted(native::build(ctx).and_then(|binaries| {
        let suite = e2e_suite(ctx, "host_package")
            .args(["--", "--test-threads=1"])
            .env("TOOLBRIDGE_BIN", binaries.server)
            .env("TOOLBRIDGE_HOST_TARBALL", tarball)
            .env("TOOLBRIDGE_HOST_PROJECT", host_package::project_dir(ctx))
            .env(
                "TOOLBRIDGE_HOST_PACKAGE_DIR",
                ctx.target_dir().join("host-package-test"),
            );
        browser::with_backends(ctx, "browser", &CHROMIUM, &[], suite)
    }));
    outcome
}

/// `cargo test … --test SUITE`: one of the `tests/` crate's suites, each a test target behind
/// the feature of the same name (built as [`native::cargo`] builds everything).
fn e2e_suite<'a>(ctx: &'a Ctx, suite: &str) -> Cmd<'a> {
    native::cargo(ctx, "test").args(["--test", suite])
}

/// The reference app, the host, real tools and the server, end to end in one browser (headless,
/// or WebKit's MiniBrowser on an Xvfb display): `with-backends e2e` gives each browser a fresh
/// debug server and its driver (and WebKit's its display), under `target/e2e/<browser>/`; every
/// test counts.
fn e2e_in_browser(ctx: &Ctx, browser: &Browser) -> Outcome {
    counted((|| {
        wasm::host_module(ctx)?;
        docs::build(ctx)?;
        let server = native::build(ctx)?.server;
        let dir = ctx.target_dir().join("e2e");
        // The tool vendor's server (tests/vendor/) verifies tokens with PyJWT from setup.
        let suite = e2e_suite(ctx, "e2e")
            .args(["--no-fail-fast", "--", "--test-threads=1"])
            .env(
                "TOOLBRIDGE_E2E_VENDOR_PYTHON",
                setup::PythonTools::vendor().program(ctx, "python"),
            );
        let args = server_args(&server, &dir);
        browser::with_backends(ctx, "e2e", browser, &args, suite)
    })())
}

/// Four checks and the tests of `tests/docs/`: the book builds; lychee finds no broken link or
/// anchor in it (`--offline`: only links inside the built documentation); the crates' API
/// documentation builds without a warning (`cargo doc --no-deps --workspace`, warnings denied);
/// every code block says what it is, and the `run` blocks run against a fresh debug server per
/// page, with their logs in `target/docs-examples/`.
fn docs_suite(ctx: &Ctx) -> Outcome {
    let built = docs::build(ctx);
    let links = match &built {
        Ok(book) => checked(docs::check_links(ctx, book)),
        Err(_) => Outcome::FAIL,
    };
    let mut outcome = checked(built);
    outcome += links;
    outcome += single_check(
        &ctx.cargo()
            .args(["doc", "--no-deps", "--workspace"])
            .env("RUSTDOCFLAGS", "-D warnings"),
    );
    outcome += counted(native::build(ctx).map(|binaries| {
        e2e_suite(ctx, "docs")
            .args(["--", "--test-threads=1", "--nocapture"])
            .env("TOOLBRIDGE_BIN", binaries.server)
            .env(
                "TOOLBRIDGE_DOCS_DIR",
                ctx.target_dir().join("docs-examples"),
            )
    }));
    outcome
}

/// A reliability suite (`tests/reliability/`, the tests of module `module`): the release server
/// (so that the load figures say something about the server, not debug code) named in
/// `TOOLBRIDGE_BIN`, which the tests start, load, kill and restart on databases in
/// `target/reliability/`; their figures are printed as they come.
fn reliability(ctx: &Ctx, module: &str) -> Outcome {
    counted(reliability_suite(ctx, module))
}

/// The `cargo test` command of [`reliability`], the release server built first.
fn reliability_suite<'a>(ctx: &'a Ctx, module: &str) -> Result<Cmd<'a>, Error> {
    let binary = server_build::build_release(ctx)?;
    let dir = ctx.target_dir().join("reliability");
    ctx.sh().create_dir(&dir)?;
    Ok(e2e_suite(ctx, "reliability")
        .args([
            "--",
            "--nocapture",
            "--test-threads=1",
            &format!("{module}::"),
        ])
        .env("TOOLBRIDGE_BIN", binary)
        .env("TOOLBRIDGE_RELIABILITY_DIR", dir))
}

/// The `one_binary::` test of the reliability suite: the release server, built after the host module
/// and the documentation (built here too for `--only`; setup has built bridge.js when it was
/// missing), run from an empty folder of its own.
fn one_binary(ctx: &Ctx) -> Outcome {
    counted((|| {
        wasm::host_module(ctx)?;
        docs::build(ctx)?;
        reliability_suite(ctx, "one_binary")
    })())
}

/// The `cluster::` tests of the reliability suite, which also open the app (and so need the host
/// module) in Chromium, whose driver they start from `CHROMEDRIVER`.
fn multi_instance(ctx: &Ctx) -> Outcome {
    chromium_reliability(ctx, "cluster")
}

/// The `module::` tests of the reliability suite with Chromium's driver named in `CHROMEDRIVER`
/// and the host module built, for tests that open the app.
fn chromium_reliability(ctx: &Ctx, module: &str) -> Outcome {
    counted((|| {
        wasm::host_module(ctx)?;
        let suite = reliability_suite(ctx, module)?;
        browser::with_backends(ctx, "browser", &CHROMIUM, &[], suite)
    })())
}

/// Each target of a fuzz crate under libFuzzer for `seconds`; one check per target, which fails
/// on a finding. Each target's figures are printed when it ends, and all of them again at the end
/// of the suite, below libFuzzer's output.
fn fuzz_suite(ctx: &Ctx, krate: &fuzz::Crate, seconds: u32) -> Outcome {
    let mut outcome = Outcome::default();
    let mut figures = Vec::new();
    for target in krate.targets {
        let (clean, figure) = fuzz::run(ctx, krate, target, seconds)
            .unwrap_or_else(|error| (false, format!("fuzz: {target}: {error}")));
        outcome += if clean { Outcome::PASS } else { Outcome::FAIL };
        println!("{figure}");
        figures.push(figure);
    }
    println!("\n{}", figures.join("\n"));
    outcome
}

/// schemathesis against the REST API's own OpenAPI document (`tests/conformance/`), on a fresh
/// debug server: one test per run (a key of every scope, then a key of each scope alone).
fn api_conformance(ctx: &Ctx) -> Outcome {
    counted(native::build(ctx).map(|binaries| {
        let server = binaries.server;
        let dir = ctx.target_dir().join("api-conformance");
        e2e_suite(ctx, "conformance")
            .env("TOOLBRIDGE_BIN", server)
            .env(
                "TOOLBRIDGE_SCHEMATHESIS",
                setup::PythonTools::schemathesis().program(ctx, "st"),
            )
            .env("TOOLBRIDGE_CONFORMANCE_DIR", dir)
    }))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn result_lines_are_counted() {
        assert_eq!(
            parse_test_result(
                "test result: ok. 12 passed; 0 failed; 1 ignored; 0 measured; \
                 0 filtered out; finished in 0.01s"
            ),
            Some(Outcome {
                passed: 12,
                failed: 0
            })
        );
        assert_eq!(
            parse_test_result("test result: FAILED. 3 passed; 2 failed; 0 ignored"),
            Some(Outcome {
                passed: 3,
                failed: 2
            })
        );
    }

    #[test]
    fn other_lines_are_not_counted() {
        assert_eq!(parse_test_result("test foo ... ok"), None);
        assert_eq!(parse_test_result("running 3 tests"), None);
        assert_eq!(parse_test_result("12 passed, 0 failed"), None);
    }

    #[test]
    fn flags_select_groups_and_unknown_flags_are_refused() {
        let args = vec![
            "--long".to_owned(),
            "--fuzz".to_owned(),
            "--long".to_owned(),
        ];
        assert_eq!(
            parse_flags(&args).unwrap().groups,
            [Group::Always, Group::Long, Group::Fuzz]
        );
        let only = vec!["--only".to_owned(), "host in".to_owned()];
        assert_eq!(parse_flags(&only).unwrap().only.as_deref(), Some("host in"));
        assert!(parse_flags(&["--only".to_owned()]).is_err());
        assert!(parse_flags(&["--fast".to_owned()]).is_err());
    }

    #[test]
    fn suite_names_are_unique() {
        let names: Vec<&str> = SUITES.iter().map(|suite| suite.name).collect();
        for (i, name) in names.iter().enumerate() {
            assert!(!names[i + 1..].contains(name), "{name}");
        }
    }

    #[test]
    fn e2e_runs_in_chromium_then_in_firefox_then_in_webkit() {
        let e2e: Vec<&str> = SUITES
            .iter()
            .map(|suite| suite.name)
            .filter(|name| name.contains("e2e in"))
            .collect();
        assert_eq!(e2e, ["e2e in chromium", "e2e in firefox", "e2e in webkit"]);
    }

    #[test]
    fn the_sdk_and_the_host_run_in_every_engine_webkit_last() {
        for part in ["sdk", "host"] {
            let suites: Vec<&str> = SUITES
                .iter()
                .map(|suite| suite.name)
                .filter(|name| name.starts_with(&format!("{part} in ")))
                .collect();
            let engines: Vec<String> = [CHROMIUM, FIREFOX, WEBKIT]
                .iter()
                .map(|browser| format!("{part} in {}", browser.name))
                .collect();
            assert_eq!(suites, engines);
        }
    }

    #[test]
    fn long_runs_each_fuzz_target_longer() {
        assert_eq!(fuzz_seconds(&[Group::Always, Group::Fuzz]), fuzz::SECONDS);
        assert_eq!(
            fuzz_seconds(&[Group::Always, Group::Long]),
            fuzz::LONG_SECONDS
        );
        let both = [Group::Always, Group::Fuzz, Group::Long];
        assert_eq!(fuzz_seconds(&both), fuzz::LONG_SECONDS);
    }

    #[test]
    fn the_book_describes_every_suite() {
        let ctx = Ctx::new().unwrap();
        let page = ctx.sh().read_file("docs/src/inside/checks.md").unwrap();
        let named: Vec<&str> = page
            .lines()
            .filter_map(|row| row.strip_prefix("| ")?.split(" | ").next())
            .collect();
        for suite in SUITES {
            assert!(
                named.iter().any(|names| names
                    .split(", ")
                    .any(|name| { name.split(" (").next() == Some(suite.name) })),
                "the Checks table of docs/src/inside/checks.md has no row for `{}`",
                suite.name
            );
        }
    }
}
