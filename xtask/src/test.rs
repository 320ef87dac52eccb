//! `cargo xtask test`: setup, then every suite in order (continuing past failures), one summary
//! line per suite, and last a line that is exactly `N passed, N failed`.
//!
//! A new suite is one more entry in [`SUITES`].

use std::ffi::OsStr;
use std::ops::AddAssign;
use std::process::Command;
use std::time::{Duration, Instant};

use crate::bridge_js;
use crate::browser::{self, Browser, CHROMIUM, FIREFOX};
use crate::e2e;
use crate::error::Error;
use crate::fuzz;
use crate::host_module;
use crate::js_tools;
use crate::npm_package;
use crate::pins::WASM_TARGET;
use crate::process::{self, Ctx, Stream, describe};
use crate::reliability;
use crate::server_build::{self, Profile};
use crate::setup;
use crate::tool_kit;

/// Which invocation runs a suite: every `cargo xtask test`, or only with `--fuzz` / `--long`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Group {
    /// Runs on every `cargo xtask test`.
    Always,
    /// `--fuzz`: the fuzz suites ([`FUZZ_SUITES`]), each target for [`fuzz::SECONDS`].
    Fuzz,
    /// `--long`: the suites of this group, and the fuzz suites with each target for
    /// [`fuzz::LONG_SECONDS`].
    Long,
}

impl Group {
    fn flag(self) -> &'static str {
        match self {
            Self::Always => "",
            Self::Fuzz => "--fuzz",
            Self::Long => "--long",
        }
    }
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
    run: fn(&Ctx) -> Outcome,
}

/// A suite of [`Group::Always`].
const fn always(name: &'static str, run: fn(&Ctx) -> Outcome) -> Suite {
    Suite {
        name,
        group: Group::Always,
        run,
    }
}

/// Every suite, in the order they run.
const SUITES: &[Suite] = &[
    always("fmt", fmt),
    always("clippy", clippy),
    always("native tests", native_tests),
    always("protocol on wasm32", protocol_wasm32),
    // Builds sdk/dist/ once; suites after it that read sdk/dist/ use this build.
    always("bridge.js build", bridge_js_build),
    always("sdk in chromium", |ctx| sdk_in_browser(ctx, &CHROMIUM)),
    always("sdk in firefox", |ctx| sdk_in_browser(ctx, &FIREFOX)),
    always("host in chromium", |ctx| host_in_browser(ctx, &CHROMIUM)),
    always("host in firefox", |ctx| host_in_browser(ctx, &FIREFOX)),
    always("sdk typings", sdk_typings),
    // Builds host/dist/, then type-checks a host page against its declarations.
    always("host module typings", host_typings),
    // Builds the npm package (and host/dist/, in no time after the suite above), installs it
    // offline into a scratch TypeScript project, type-checks a small tool there (and a misspelt
    // method, which must not compile), and runs the tool's test in Chromium.
    always("sdk package", sdk_package),
    // Each example tool's own tests on the package's test host, and again against a copy of the
    // tool with its logic broken on purpose, where they must fail.
    always("tools in chromium", |ctx| tools_in_browser(ctx, &CHROMIUM)),
    always("tools in firefox", |ctx| tools_in_browser(ctx, &FIREFOX)),
    // Each browser against a fresh server of its own.
    always("e2e in chromium", |ctx| e2e_in_browser(ctx, &CHROMIUM)),
    always("e2e in firefox", |ctx| e2e_in_browser(ctx, &FIREFOX)),
    // schemathesis against the debug server's OpenAPI document (`tests/conformance/`).
    always("api conformance", api_conformance),
    // Both build the release server (once) and run it as a child process of the test.
    // `--long` only for now: its memory rule fails on the resident set that glibc's per-thread
    // arenas keep (see `check_memory` in tests/reliability/load.rs), which no leak explains.
    Suite {
        name: "load with faults",
        group: Group::Long,
        run: |ctx| counted(reliability::command(ctx, reliability::LOAD)),
    },
    always("crash safety", |ctx| {
        counted(reliability::command(ctx, reliability::CRASH))
    }),
];

/// A fuzz suite: cargo-fuzz targets, run one after the other for the same time each.
struct FuzzSuite {
    name: &'static str,
    targets: &'static [fuzz::Target],
}

/// The fuzz suites, which run after [`SUITES`] with `--fuzz` or `--long` (see [`Group`]).
const FUZZ_SUITES: &[FuzzSuite] = &[
    FuzzSuite {
        name: "bundle fuzz",
        targets: fuzz::BUNDLE,
    },
    FuzzSuite {
        name: "protocol fuzz",
        targets: fuzz::PROTOCOL,
    },
];

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
    let Selection { groups, only } = parse_flags(args)?;
    let mut summary = Vec::new();
    let mut total = Outcome::default();

    let started = Instant::now();
    let setup = if setup::run(ctx, setup::Purpose::Everything) {
        Outcome::PASS
    } else {
        Outcome::FAIL
    };
    summary.push(summary_line("setup", setup, started.elapsed()));
    total += setup;

    let long = Group::Long;
    if groups.contains(&long) && !SUITES.iter().any(|suite| suite.group == long) {
        println!(
            "test: {} has no suites of its own yet; it runs the fuzz suites, {} s per target",
            long.flag(),
            fuzz::LONG_SECONDS
        );
    }

    let selected = |suite: &&Suite| match &only {
        Some(only) => suite.name.contains(only.as_str()),
        None => groups.contains(&suite.group),
    };
    let fuzz_selected = |suite: &&FuzzSuite| match &only {
        Some(only) => suite.name.contains(only.as_str()),
        None => groups.contains(&Group::Fuzz) || groups.contains(&Group::Long),
    };
    if let Some(only) = &only {
        if !SUITES.iter().any(|suite| selected(&suite))
            && !FUZZ_SUITES.iter().any(|suite| fuzz_selected(&suite))
        {
            return Err(Error::usage(format!("no suite's name contains `{only}`")));
        }
    }
    let mut run_suite = |name: &str, body: &dyn Fn() -> Outcome| {
        println!("\ntest: {name} ...");
        let started = Instant::now();
        let outcome = body();
        let line = summary_line(name, outcome, started.elapsed());
        println!("{line}");
        summary.push(line);
        total += outcome;
    };
    for suite in SUITES.iter().filter(selected) {
        run_suite(suite.name, &|| (suite.run)(ctx));
    }
    let seconds = fuzz_seconds(&groups);
    for suite in FUZZ_SUITES.iter().filter(fuzz_selected) {
        run_suite(suite.name, &|| fuzz_suite(ctx, suite.targets, seconds));
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
fn single_check(mut command: Command) -> Outcome {
    println!("test: running `{}`", describe(&command));
    checked(process::run(&mut command).and_then(|succeeded| {
        if succeeded {
            Ok(())
        } else {
            Err(Error::failed(format!("`{}` failed", describe(&command))))
        }
    }))
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

/// [`counted_tests`] of a command that could be made, else one failed check.
fn counted(command: Result<Command, Error>) -> Outcome {
    match command {
        Ok(command) => counted_tests(command),
        Err(error) => {
            println!("test: {error}");
            Outcome::FAIL
        }
    }
}

fn fmt(ctx: &Ctx) -> Outcome {
    let mut command = ctx.cargo();
    command.args(["fmt", "--all", "--check"]);
    single_check(command)
}

/// Four checks: the workspace for the machine we run on, the SDK (with its tests) for wasm32, the
/// SDK's `no_std` library for wasm32 as bridge.js builds it, and the host module (with its tests)
/// for wasm32.
fn clippy(ctx: &Ctx) -> Outcome {
    // The e2e, reliability and tool suites build only with their features.
    let features = "toolbridge-e2e/e2e,toolbridge-e2e/reliability,toolbridge-e2e/conformance,\
                    toolbridge-testkit/browser";
    let sdk = ["-p", "toolbridge-sdk", "--target", WASM_TARGET];
    let runs: [&[&str]; 4] = [
        &["--workspace", "--all-targets", "--features", features],
        &[&sdk[..], &["--all-targets"]].concat(),
        &[&sdk[..], &["--no-default-features", "--lib"]].concat(),
        &[
            "-p",
            "toolbridge-host",
            "--target",
            WASM_TARGET,
            "--all-targets",
        ],
    ];
    let mut outcome = Outcome::default();
    for args in runs {
        let mut command = ctx.cargo();
        command
            .arg("clippy")
            .args(args)
            .args(["--", "-D", "warnings"]);
        outcome += single_check(command);
    }
    outcome
}

fn protocol_wasm32(ctx: &Ctx) -> Outcome {
    let mut command = ctx.cargo();
    command.args([
        "build",
        "-p",
        "toolbridge-protocol",
        "--target",
        WASM_TARGET,
    ]);
    single_check(command)
}

/// `cargo test` for the whole workspace; every test counts, summed from libtest's result lines
/// (unit, integration and doc tests alike).
fn native_tests(ctx: &Ctx) -> Outcome {
    let mut command = ctx.cargo();
    command.args(["test", "--workspace", "--no-fail-fast"]);
    counted_tests(command)
}

/// One check: `sdk/dist/` builds (bridge.js and its typings).
fn bridge_js_build(ctx: &Ctx) -> Outcome {
    checked(bridge_js::build(ctx))
}

/// `cargo test -p toolbridge-sdk --target wasm32-unknown-unknown` in one headless browser; every
/// test counts.
fn sdk_in_browser(ctx: &Ctx, browser: &Browser) -> Outcome {
    counted(
        browser::wasm_test_command(ctx, browser, "toolbridge-sdk", 180).and_then(|mut command| {
            command.arg("--no-fail-fast");
            browser::with_backends(ctx, "browser", browser, &[], &command)
        }),
    )
}

/// The host module's browser tests (`--test browser`) in one headless browser, against the debug
/// `toolbridge` server (a fresh database in `target/host-tests/<browser>/`) and the fault server
/// (`tests/src/fault_server.rs`), both started by `with-backends host`; every test counts.
fn host_in_browser(ctx: &Ctx, browser: &Browser) -> Outcome {
    counted(
        browser::wasm_test_command(ctx, browser, "toolbridge-host", 300).and_then(|mut command| {
            command.args(["--no-fail-fast", "--test", "browser"]);
            let server = server_build::build(ctx, "test", Profile::Debug)?;
            let dir = ctx.target_dir().join("host-tests").join(browser.name);
            let sdk = bridge_js::dist_dir(ctx);
            let args = [
                OsStr::new("--server"),
                server.as_os_str(),
                OsStr::new("--dir"),
                dir.as_os_str(),
                OsStr::new("--products"),
                OsStr::new(HOST_TEST_PRODUCTS),
                OsStr::new("--sdk-dir"),
                sdk.as_os_str(),
            ];
            browser::with_backends(ctx, "host", browser, &args, &command)
        }),
    )
}

/// Products in the catalog of the server the host's browser tests use.
const HOST_TEST_PRODUCTS: &str = "1000";

/// One check: `tsc` compiles the SDK's typings test project without errors.
fn sdk_typings(ctx: &Ctx) -> Outcome {
    match js_tools::sdk_typings_check(ctx) {
        Ok(command) => single_check(command),
        Err(why) => checked::<()>(Err(Error::failed(why))),
    }
}

/// Two checks: `host/dist/` builds (the ES module, its wasm and declarations), and `tsc`
/// compiles the host page test project against those declarations.
fn host_typings(ctx: &Ctx) -> Outcome {
    let mut outcome = checked(host_module::build(ctx));
    if outcome.failed > 0 {
        outcome.failed += 1;
        return outcome;
    }
    outcome += match js_tools::host_typings_check(ctx) {
        Ok(command) => single_check(command),
        Err(why) => checked::<()>(Err(Error::failed(why))),
    };
    outcome
}

/// Runs a `cargo test` and counts its tests from libtest-style result lines. A failure that no
/// result line accounts for (a build error, a test binary or runner that crashed) adds one
/// failed check.
fn counted_tests(mut command: Command) -> Outcome {
    println!("test: running `{}`", describe(&command));
    let mut counted = Outcome::default();
    let succeeded = process::run_watching(&mut command, Stream::Stdout, &mut |line| {
        if let Some(outcome) = parse_test_result(line) {
            counted += outcome;
        }
    });
    match succeeded {
        // A failure no result line accounts for (a build error, a crashed test binary).
        Ok(false) if counted.failed == 0 => {
            println!("test: `{}` failed outside any test", describe(&command));
            counted += Outcome::FAIL;
        }
        Ok(true) if counted == Outcome::default() => {
            println!("test: `{}` ran no tests", describe(&command));
        }
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
        let (Some(kind), Some(count)) = (words.next(), words.next()) else {
            continue;
        };
        let Ok(count) = count.parse::<u32>() else {
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

/// Five checks and the browser test's: the package builds; it installs offline into the scratch
/// project; the project's tool and test compile against it; a misspelt method does not; and the
/// tool's test passes in Chromium (every test counts).
fn sdk_package(ctx: &Ctx) -> Outcome {
    let checks = 5;
    let tarball = match npm_package::build(ctx) {
        Ok(tarball) => tarball,
        Err(error) => {
            println!("test: {error}");
            return Outcome {
                passed: 0,
                failed: checks,
            };
        }
    };
    let mut outcome = Outcome::PASS;
    let project = match tool_kit::install_project(ctx, &tarball) {
        Ok(project) => project,
        Err(error) => {
            println!("test: {error}");
            outcome.failed += checks - 1;
            return outcome;
        }
    };
    outcome += Outcome::PASS;
    let compiled = match tool_kit::compile(ctx, &project) {
        Ok(command) => single_check(command),
        Err(why) => checked::<()>(Err(Error::failed(why))),
    };
    outcome += compiled;
    outcome += checked(tool_kit::misspelt_method_is_refused(ctx, &project).map_err(Error::failed));
    if compiled.failed > 0 {
        println!("test: the scratch tool did not compile, so its test cannot run");
        outcome += Outcome::FAIL;
        return outcome;
    }
    let package = project.join("node_modules").join("@toolbridge").join("sdk");
    outcome += counted(tool_kit::command(
        ctx,
        &CHROMIUM,
        "package::",
        &package,
        Some(&project),
    ));
    outcome
}

/// The example tools' tests (`example-tools/tests/`) in one headless browser, on the package as
/// staged by its build; every test counts.
fn tools_in_browser(ctx: &Ctx, browser: &Browser) -> Outcome {
    counted(npm_package::build(ctx).and_then(|_| {
        let staged = npm_package::stage_dir(ctx);
        tool_kit::command(ctx, browser, "example_tools", &staged, None)
    }))
}

/// The reference app, the host, real tools and the server, end to end in one headless browser
/// (a fresh server in `target/e2e/<browser>/`); every test counts.
fn e2e_in_browser(ctx: &Ctx, browser: &Browser) -> Outcome {
    counted(e2e::command(ctx, browser))
}

/// Each target of a fuzz suite under libFuzzer for `seconds`; one check per target, which fails
/// on a finding. Each target's figures are printed when it ends, and all of them again at the end
/// of the suite, below libFuzzer's output.
fn fuzz_suite(ctx: &Ctx, targets: &[fuzz::Target], seconds: u32) -> Outcome {
    let mut outcome = Outcome::default();
    let mut figures = Vec::new();
    for target in targets {
        let figure = match fuzz::run(ctx, target, seconds) {
            Ok(report) => {
                outcome += if report.clean {
                    Outcome::PASS
                } else {
                    Outcome::FAIL
                };
                report.stats.figure(ctx, target.name, report.clean)
            }
            Err(error) => {
                outcome += Outcome::FAIL;
                format!("fuzz: {}: {error}", target.name)
            }
        };
        println!("{figure}");
        figures.push(figure);
    }
    println!();
    for figure in &figures {
        println!("{figure}");
    }
    outcome
}

/// schemathesis against the REST API's own OpenAPI document (`tests/conformance/`), on a fresh
/// debug server: one test per run (a key of every scope, then a key of each scope alone).
fn api_conformance(ctx: &Ctx) -> Outcome {
    counted(
        server_build::build(ctx, "test", Profile::Debug).map(|server| {
            let mut command = e2e::suite_command(ctx, "conformance");
            command
                .env("TOOLBRIDGE_BIN", server)
                .env("TOOLBRIDGE_SCHEMATHESIS", setup::venv_program(ctx, "st"))
                .env(
                    "TOOLBRIDGE_CONFORMANCE_DIR",
                    ctx.target_dir().join("api-conformance"),
                );
            command
        }),
    )
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
        let names: Vec<&str> = SUITES
            .iter()
            .map(|suite| suite.name)
            .chain(FUZZ_SUITES.iter().map(|suite| suite.name))
            .collect();
        for (i, name) in names.iter().enumerate() {
            assert!(!names[i + 1..].contains(name), "{name}");
        }
    }

    #[test]
    fn e2e_runs_in_chromium_then_in_firefox() {
        let e2e: Vec<&str> = SUITES
            .iter()
            .map(|suite| suite.name)
            .filter(|name| name.contains("e2e in"))
            .collect();
        assert_eq!(e2e, ["e2e in chromium", "e2e in firefox"]);
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
}
