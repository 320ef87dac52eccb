//! The host figures of `cargo xtask bench`: the host module's `bench` test in headless Chromium,
//! against the release `toolbridge` server with a 100 000-product catalog. The test times
//! `addLines` of 1000 lines, `context.get()` round trips and a bare `MessageChannel` echo, and
//! posts the samples to the harness (`/report/host-bench`); here they become medians.

use std::process::Command;

use crate::browser::{self, CHROMIUM, HostBackends};
use crate::error::Error;
use crate::files::read;
use crate::js_tools;
use crate::json::{self, Value};
use crate::process::{self, Ctx, describe, run_step};
use crate::server_build::BackgroundBuild;
use crate::toolbridge_server::Profile;
use crate::wasm_crate;

/// The median `addLines` of 1000 lines may take at most this, in milliseconds.
pub(crate) const MAX_ADD_LINES_MS: f64 = 5.0;
/// The median `context.get()` round trip may take at most this many times the bare echo.
pub(crate) const MAX_CONTEXT_GET_RATIO: f64 = 1.5;
/// Products seeded for the figures: about 5% of seeded products are inactive, so this leaves
/// just over 100 000 active ones in the catalog index the host checks `addLines` against.
const CATALOG_PRODUCTS: u32 = 105_300;
/// The names the bench test loads Penpal's and Comlink's builds under (`/files/{name}` of the
/// harness).
const PENPAL_FILE: &str = "penpal.min.js";
const COMLINK_FILE: &str = "comlink.min.js";
/// The name the bench test posts its report under.
const REPORT: &str = "host-bench";
/// Seconds the bench test binary may run in the browser.
const TIMEOUT_SECS: u32 = 300;

/// The medians of one run of the host bench.
#[derive(Clone, Debug, PartialEq)]
pub(crate) struct HostFigures {
    /// Median `addLines` of 1000 lines, host only, in milliseconds.
    pub(crate) add_lines_ms: f64,
    /// Median `context.get()` round trip, in milliseconds.
    pub(crate) context_get_ms: f64,
    /// Mean time the host spent answering `context.get()`, in milliseconds: one answer is
    /// below the resolution of the page's clock (0.1 ms without cross-origin isolation), and the
    /// mean of many rounded readings is still exact.
    pub(crate) context_get_host_ms: f64,
    /// Median bare `MessageChannel` echo, in milliseconds.
    pub(crate) echo_ms: f64,
    /// Samples behind each median (the fewest of the three series).
    pub(crate) samples: usize,
    /// Products in the catalog, as the test saw it.
    pub(crate) catalog_products: u64,
    /// The browser's user agent.
    pub(crate) browser: String,
    /// The side-by-side figures, as the test reported them (see [`crate::compare`]).
    pub(crate) compare: Value,
}

impl HostFigures {
    /// `context.get()` over the echo; `None` when the echo's median is not above zero (a timer
    /// too coarse to measure it).
    pub(crate) fn ratio(&self) -> Option<f64> {
        (self.echo_ms > 0.0).then(|| self.context_get_ms / self.echo_ms)
    }

    /// Whether `addLines` is within its budget.
    pub(crate) fn add_lines_within_budget(&self) -> bool {
        self.add_lines_ms <= MAX_ADD_LINES_MS
    }

    /// Whether the `context.get()` round trip is within its budget.
    pub(crate) fn context_get_within_budget(&self) -> bool {
        self.ratio()
            .is_some_and(|ratio| ratio <= MAX_CONTEXT_GET_RATIO)
    }

    /// The two lines `bench` prints.
    pub(crate) fn lines(&self) -> [String; 2] {
        let verdict = |ok: bool| if ok { "ok" } else { "OVER" };
        let ratio = self.ratio().map_or_else(
            || "not measurable".to_owned(),
            |ratio| format!("{ratio:.2}"),
        );
        [
            format!(
                "bench: addLines of 1000 lines against {} products (host only): median {:.2} ms \
                 (budget ≤ {MAX_ADD_LINES_MS} ms) {}",
                self.catalog_products,
                self.add_lines_ms,
                verdict(self.add_lines_within_budget())
            ),
            format!(
                "bench: context.get round trip: median {:.3} ms (host share, mean: {:.3} ms); \
                 bare MessageChannel echo: median {:.3} ms; ratio {ratio} (budget ≤ \
                 {MAX_CONTEXT_GET_RATIO}) {}",
                self.context_get_ms,
                self.context_get_host_ms,
                self.echo_ms,
                verdict(self.context_get_within_budget())
            ),
        ]
    }
}

/// Builds the host's `bench` test (with `build_ctx`) while `server` (the release build) may still
/// be building, then starts that server (a fresh catalog of [`CATALOG_PRODUCTS`] in `target/bench/host/`) and
/// the harness, runs the test in Chromium with `samples` samples per figure, and reads its report.
pub(crate) fn measure(
    ctx: &Ctx,
    build_ctx: &Ctx,
    samples: u32,
    server: &mut BackgroundBuild,
) -> Result<HostFigures, Error> {
    let dir = ctx.target_dir().join("bench").join("host");
    let mut backends =
        HostBackends::reserve(ctx, "bench", Profile::Release, dir, CATALOG_PRODUCTS)?;
    let mut build = bench_command(build_ctx, samples, &backends)?;
    build.arg("--no-run");
    run_step("bench", &mut build)?;
    backends.launch(ctx, server.wait(ctx, "bench")?)?;
    // The bridges toolbridge is compared with, for the pages to load from the harness.
    for (name, tool) in [
        (PENPAL_FILE, js_tools::PENPAL),
        (COMLINK_FILE, js_tools::COMLINK),
    ] {
        let path = js_tools::script_file(ctx, tool).map_err(Error::failed)?;
        backends.harness().serve_file(name, read(&path)?);
    }
    let mut command = bench_command(ctx, samples, &backends)?;
    backends.apply(&mut command);
    println!("bench: running `{}`", describe(&command));
    let succeeded = process::run(&mut command)?;
    let log = ctx.shown(&backends.server_log());
    if !succeeded {
        return Err(Error::failed(format!(
            "`{}` failed; the toolbridge server's log is {log}",
            describe(&command)
        )));
    }
    let report = backends.harness().report(REPORT).ok_or_else(|| {
        Error::failed(format!(
            "the host bench ran but posted no report to {}/report/{REPORT}, so there are no \
             host figures; see its output above (the toolbridge server's log is {log})",
            backends.harness().base_url()
        ))
    })?;
    parse_report(&report)
}

/// `cargo test` of the host's `bench` test in Chromium, built with the profile the shipped host
/// module is built with (so that the figures are the module's), taking `samples` samples, and
/// compiled with the addresses of `backends`.
fn bench_command(ctx: &Ctx, samples: u32, backends: &HostBackends) -> Result<Command, Error> {
    let mut command = browser::wasm_test_command(ctx, &CHROMIUM, "toolbridge-host", TIMEOUT_SECS)?;
    command
        .args(["--profile", wasm_crate::SPEED_PROFILE, "--test", "bench"])
        .env("TOOLBRIDGE_BENCH_SAMPLES", samples.to_string());
    backends.configure(&mut command);
    Ok(command)
}

/// Reads the report the bench test posts:
/// `{"addLinesMs": [..], "contextGetMs": [..], "contextGetHostMs": [..], "echoMs": [..],
/// "catalogProducts": n, "browser": ".."}`.
fn parse_report(text: &str) -> Result<HostFigures, Error> {
    let bad = |why: String| Error::failed(format!("the host bench report {why}: {text}"));
    let report = json::parse(text).map_err(|e| bad(format!("is not JSON ({e})")))?;
    let series = |key: &str| -> Result<Vec<f64>, Error> {
        let values = report
            .get(key)
            .and_then(Value::as_array)
            .ok_or_else(|| bad(format!("has no array `{key}`")))?;
        let samples = values
            .iter()
            .map(Value::as_f64)
            .collect::<Option<Vec<f64>>>()
            .ok_or_else(|| bad(format!("has a `{key}` sample that is not a number")))?;
        if samples.is_empty() {
            return Err(bad(format!("has no `{key}` samples")));
        }
        Ok(samples)
    };
    let add_lines = series("addLinesMs")?;
    let context_get = series("contextGetMs")?;
    let context_get_host = series("contextGetHostMs")?;
    let echo = series("echoMs")?;
    let catalog_products = report
        .get("catalogProducts")
        .and_then(Value::as_u64)
        .ok_or_else(|| bad("has no whole number `catalogProducts`".to_owned()))?;
    let browser = report
        .get("browser")
        .and_then(Value::as_str)
        .ok_or_else(|| bad("has no string `browser`".to_owned()))?
        .to_owned();
    let compare = report
        .get("compare")
        .cloned()
        .ok_or_else(|| bad("has no `compare` object".to_owned()))?;
    let median_of = |samples: &[f64]| median(samples).unwrap_or(f64::NAN);
    Ok(HostFigures {
        add_lines_ms: median_of(&add_lines),
        context_get_ms: median_of(&context_get),
        context_get_host_ms: mean(&context_get_host),
        echo_ms: median_of(&echo),
        samples: add_lines.len().min(context_get.len()).min(echo.len()),
        catalog_products,
        browser,
        compare,
    })
}

/// The mean of `values` (NaN when empty).
fn mean(values: &[f64]) -> f64 {
    #[allow(clippy::cast_precision_loss)] // a few thousand samples
    let count = values.len() as f64;
    values.iter().sum::<f64>() / count
}

/// The median of `values` (the mean of the middle two for an even count); `None` when empty.
pub(crate) fn median(values: &[f64]) -> Option<f64> {
    let mut sorted = values.to_vec();
    sorted.sort_by(f64::total_cmp);
    let middle = sorted.len() / 2;
    match sorted.len() {
        0 => None,
        n if n % 2 == 1 => sorted.get(middle).copied(),
        _ => Some((sorted.get(middle - 1)? + sorted.get(middle)?) / 2.0),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_median_is_the_middle_value() {
        assert_eq!(median(&[]), None);
        assert_eq!(median(&[4.0]), Some(4.0));
        assert_eq!(median(&[9.0, 1.0, 5.0]), Some(5.0));
        assert_eq!(median(&[4.0, 1.0, 3.0, 2.0]), Some(2.5));
        assert_eq!(median(&[0.2, 0.1, 0.1, 10.0, 0.1]), Some(0.1));
    }

    #[test]
    fn a_report_becomes_medians_and_verdicts() {
        let figures = parse_report(
            r#"{"addLinesMs": [2.0, 2.2, 2.1], "contextGetMs": [0.2, 0.21, 0.22, 0.3],
                "contextGetHostMs": [0.02, 0.03, 0.01], "echoMs": [0.15, 0.15, 0.1], "catalogProducts": 100000,
                "browser": "Mozilla/5.0 HeadlessChrome", "compare": {"batch": 10}}"#,
        )
        .unwrap();
        assert!((figures.add_lines_ms - 2.1).abs() < 1e-9);
        assert!((figures.context_get_ms - 0.215).abs() < 1e-9);
        assert!((figures.echo_ms - 0.15).abs() < 1e-9);
        assert_eq!(figures.samples, 3);
        assert_eq!(figures.catalog_products, 100_000);
        assert_eq!(figures.browser, "Mozilla/5.0 HeadlessChrome");
        assert!(figures.add_lines_within_budget());
        assert!(figures.context_get_within_budget());
        assert_eq!(
            figures.lines(),
            [
                "bench: addLines of 1000 lines against 100000 products (host only): median \
                 2.10 ms (budget ≤ 5 ms) ok",
                "bench: context.get round trip: median 0.215 ms (host share, mean: 0.020 ms); \
                 bare MessageChannel echo: median 0.150 ms; ratio 1.43 (budget ≤ 1.5) ok",
            ]
        );
    }

    #[test]
    fn over_budget_and_unmeasurable_figures_say_so() {
        let figures = HostFigures {
            add_lines_ms: 6.0,
            context_get_ms: 0.1,
            context_get_host_ms: 0.01,
            echo_ms: 0.0,
            samples: 30,
            catalog_products: 100_000,
            browser: String::new(),
            compare: json::Value::Null,
        };
        assert!(!figures.add_lines_within_budget());
        assert_eq!(figures.ratio(), None);
        assert!(!figures.context_get_within_budget());
        let [add_lines, context_get] = figures.lines();
        assert!(add_lines.ends_with("median 6.00 ms (budget ≤ 5 ms) OVER"));
        assert!(context_get.ends_with("ratio not measurable (budget ≤ 1.5) OVER"));
    }

    #[test]
    fn a_report_without_samples_is_refused() {
        for text in [
            "this is not json",
            r#"{"addLinesMs": [], "contextGetMs": [1], "contextGetHostMs": [1], "echoMs": [1], "catalogProducts": 1, "browser": ""}"#,
            r#"{"addLinesMs": [1], "contextGetMs": [1], "echoMs": [1], "catalogProducts": 1, "browser": ""}"#,
            r#"{"addLinesMs": [1], "contextGetMs": ["1"], "echoMs": [1], "catalogProducts": 1, "browser": ""}"#,
            r#"{"addLinesMs": [1], "contextGetMs": [1], "echoMs": [1], "browser": ""}"#,
            r#"{"addLinesMs": [1], "contextGetMs": [1], "catalogProducts": 1, "browser": ""}"#,
        ] {
            assert!(parse_report(text).is_err(), "{text}");
        }
    }
}
