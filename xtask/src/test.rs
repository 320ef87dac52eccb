//! `cargo xtask test`: setup, then every suite in order (continuing past failures), one summary
//! line per suite, and last a line that is exactly `N passed, N failed`.
//!
//! A new suite is one more entry in [`SUITES`].

use std::ops::AddAssign;
use std::process::Command;
use std::time::{Duration, Instant};

use crate::bridge_js;
use crate::error::Error;
use crate::js_tools;
use crate::pins::WASM_TARGET;
use crate::process::{self, Ctx, Stream, describe};
use crate::setup;

/// Which invocation runs a suite: every `cargo xtask test`, or only with `--fuzz` / `--long`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Group {
    /// Runs on every `cargo xtask test`.
    Always,
    /// Runs only with `--fuzz`.
    Fuzz,
    /// Runs only with `--long`.
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

/// Every suite, in the order they run.
const SUITES: &[Suite] = &[
    Suite {
        name: "fmt",
        group: Group::Always,
        run: fmt,
    },
    Suite {
        name: "clippy",
        group: Group::Always,
        run: clippy,
    },
    Suite {
        name: "native tests",
        group: Group::Always,
        run: native_tests,
    },
    Suite {
        name: "protocol on wasm32",
        group: Group::Always,
        run: protocol_wasm32,
    },
    // Builds sdk/dist/ once; suites after it that read sdk/dist/ use this build.
    Suite {
        name: "bridge.js build",
        group: Group::Always,
        run: bridge_js_build,
    },
    Suite {
        name: "sdk in chromium",
        group: Group::Always,
        run: sdk_in_chromium,
    },
    Suite {
        name: "sdk in firefox",
        group: Group::Always,
        run: sdk_in_firefox,
    },
    Suite {
        name: "sdk typings",
        group: Group::Always,
        run: sdk_typings,
    },
];

/// Runs setup and the suites selected by `args`; `Ok(false)` when any check failed.
pub(crate) fn run(ctx: &Ctx, args: &[String]) -> Result<bool, Error> {
    let groups = parse_flags(args)?;
    let mut summary = Vec::new();
    let mut total = Outcome::default();

    let started = Instant::now();
    let setup = if setup::run(ctx) {
        Outcome::PASS
    } else {
        Outcome::FAIL
    };
    summary.push(summary_line("setup", setup, started.elapsed()));
    total += setup;

    for group in groups.iter().filter(|group| **group != Group::Always) {
        if !SUITES.iter().any(|suite| suite.group == *group) {
            println!(
                "test: there are no {} suites yet, so {} adds nothing",
                group.flag(),
                group.flag()
            );
        }
    }

    for suite in SUITES.iter().filter(|suite| groups.contains(&suite.group)) {
        println!("\ntest: {} ...", suite.name);
        let started = Instant::now();
        let outcome = (suite.run)(ctx);
        let line = summary_line(suite.name, outcome, started.elapsed());
        println!("{line}");
        summary.push(line);
        total += outcome;
    }

    println!("\nsummary:");
    for line in &summary {
        println!("{line}");
    }
    println!("{} passed, {} failed", total.passed, total.failed);
    Ok(total.failed == 0)
}

fn parse_flags(args: &[String]) -> Result<Vec<Group>, Error> {
    let mut groups = vec![Group::Always];
    for arg in args {
        let group = match arg.as_str() {
            "--fuzz" => Group::Fuzz,
            "--long" => Group::Long,
            other => return Err(Error::usage(format!("`test` does not take `{other}`"))),
        };
        if !groups.contains(&group) {
            groups.push(group);
        }
    }
    Ok(groups)
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
    match process::run(&mut command) {
        Ok(true) => Outcome::PASS,
        Ok(false) => Outcome::FAIL,
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

/// Three checks: the workspace for the host, the SDK (with its tests) for wasm32, and the SDK's
/// `no_std` library for wasm32 as bridge.js builds it.
fn clippy(ctx: &Ctx) -> Outcome {
    let runs: [&[&str]; 3] = [
        &["--workspace", "--all-targets"],
        &[
            "-p",
            "toolbridge-sdk",
            "--target",
            WASM_TARGET,
            "--all-targets",
        ],
        &[
            "-p",
            "toolbridge-sdk",
            "--target",
            WASM_TARGET,
            "--no-default-features",
            "--lib",
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
    match bridge_js::build(ctx) {
        Ok(_) => Outcome::PASS,
        Err(error) => {
            println!("test: {error}");
            Outcome::FAIL
        }
    }
}

/// A browser for the SDK's wasm-bindgen tests: the driver binary and the variable that hands its
/// path to `wasm-bindgen-test-runner` (which picks the browser by the variable that is set).
struct Browser {
    driver: &'static str,
    variable: &'static str,
}

/// The browsers the SDK's tests run in.
const CHROMIUM: Browser = Browser {
    driver: "chromedriver",
    variable: "CHROMEDRIVER",
};
const FIREFOX: Browser = Browser {
    driver: "geckodriver",
    variable: "GECKODRIVER",
};

/// Every driver variable the runner looks at, so that all but the chosen one can be removed.
const DRIVER_VARIABLES: [&str; 3] = ["CHROMEDRIVER", "GECKODRIVER", "SAFARIDRIVER"];

fn sdk_in_chromium(ctx: &Ctx) -> Outcome {
    sdk_in_browser(ctx, &CHROMIUM)
}

fn sdk_in_firefox(ctx: &Ctx) -> Outcome {
    sdk_in_browser(ctx, &FIREFOX)
}

/// `cargo test -p toolbridge-sdk --target wasm32-unknown-unknown` in one headless browser; every
/// test counts.
fn sdk_in_browser(ctx: &Ctx, browser: &Browser) -> Outcome {
    let Some(driver) = ctx.find(browser.driver) else {
        println!(
            "test: {} not found; run `cargo xtask setup`",
            browser.driver
        );
        return Outcome::FAIL;
    };
    let Some(runner) = ctx.find("wasm-bindgen-test-runner") else {
        println!("test: wasm-bindgen-test-runner not found; run `cargo xtask setup`");
        return Outcome::FAIL;
    };
    let mut command = ctx.cargo();
    command.args([
        "test",
        "-p",
        "toolbridge-sdk",
        "--target",
        WASM_TARGET,
        "--no-fail-fast",
    ]);
    for variable in DRIVER_VARIABLES {
        command.env_remove(variable);
    }
    command
        .env(browser.variable, driver)
        // The runner .cargo/config.toml names, found where setup installed it.
        .env("CARGO_TARGET_WASM32_UNKNOWN_UNKNOWN_RUNNER", runner)
        .env("WASM_BINDGEN_TEST_NO_ORIGIN_ISOLATION", "1")
        .env("WASM_BINDGEN_TEST_TIMEOUT", "180");
    counted_tests(command)
}

/// One check: `tsc` compiles the typings test project without errors.
fn sdk_typings(ctx: &Ctx) -> Outcome {
    match js_tools::typings_check(ctx) {
        Ok(command) => single_check(command),
        Err(why) => {
            println!("test: {why}");
            Outcome::FAIL
        }
    }
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
            parse_flags(&args).unwrap(),
            [Group::Always, Group::Long, Group::Fuzz]
        );
        assert!(parse_flags(&["--fast".to_owned()]).is_err());
    }

    #[test]
    fn suite_names_are_unique() {
        for (i, suite) in SUITES.iter().enumerate() {
            assert!(SUITES[i + 1..].iter().all(|other| other.name != suite.name));
        }
    }
}
