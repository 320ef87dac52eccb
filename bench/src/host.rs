//! The host figures: the host module's `bench` test (`host/tests/bench.rs`) in headless Chromium,
//! against the release `toolbridge` server with a catalog of just over 100 000 active products.
//! The test times `addLines` of 1000 lines, `context.get()` round trips and a bare
//! `MessageChannel` echo, opening a quote ([`crate::open_quote`]), measures toolbridge beside
//! Penpal and Comlink, and posts the samples to the fault server (`/report/host-bench`); here they
//! become medians.

use std::ffi::OsString;
use std::io::BufRead as _;
use std::path::{Path, PathBuf};
use std::process::Command;

use serde::{Deserialize, Serialize};
use toolbridge_e2e::host_backends::HostBackends;
use toolbridge_e2e::server::{ServerOptions, describe};

use crate::compare::CompareReport;
use crate::error::Error;
use crate::figures::{mean, median};
use crate::open_quote::{OpenQuoteFigures, OpenQuoteReport};
use crate::process::{find, run};
use crate::transfer::{self, Transfers};

/// The median `addLines` of 1000 lines may take at most this, in milliseconds.
pub(crate) const MAX_ADD_LINES_MS: f64 = 5.0;
/// The median `context.get()` round trip may take at most this many times the bare echo.
pub(crate) const MAX_CONTEXT_GET_RATIO: f64 = 1.5;
/// Products seeded for the figures: about 5% of seeded products are inactive, so this leaves
/// just over 100 000 active ones in the catalog index the host checks `addLines` against.
const CATALOG_PRODUCTS: u32 = 105_300;
/// The names the bench test loads Penpal's and Comlink's builds under (`/files/{name}` of the
/// fault server).
const PENPAL_FILE: &str = "penpal.min.js";
const COMLINK_FILE: &str = "comlink.min.js";
/// The name the bench test posts its report under.
const REPORT: &str = "host-bench";

/// The release server's binary: known, or to be read from standard input when first needed
/// (`--server -`), because it may still be building when the bench starts.
pub(crate) enum ServerBinary {
    Known(PathBuf),
    FromStdin,
}

impl ServerBinary {
    /// `-` for [`Self::FromStdin`], else the path.
    pub(crate) fn new(argument: PathBuf) -> Self {
        if argument.as_os_str() == "-" {
            Self::FromStdin
        } else {
            Self::Known(argument)
        }
    }

    /// The binary's path; the first call for [`Self::FromStdin`] waits for a line on standard
    /// input, and an empty line or its end is an error (the build failed).
    pub(crate) fn path(&mut self) -> Result<PathBuf, Error> {
        if let Self::FromStdin = self {
            println!("bench: waiting for the server's path on standard input");
            let mut line = String::new();
            std::io::stdin().lock().read_line(&mut line)?;
            let path = line.trim_end_matches(['\r', '\n']);
            if path.is_empty() {
                return Err(Error::failed(
                    "no server binary came on standard input (`--server -`): its build did not \
                     finish",
                ));
            }
            *self = Self::Known(PathBuf::from(path));
        }
        match self {
            Self::Known(path) => Ok(path.clone()),
            Self::FromStdin => Err(Error::failed("no server binary")),
        }
    }
}

/// What the host bench needs besides the server.
pub(crate) struct HostBench<'a> {
    /// The command that builds and runs the host's bench test (`cargo test ... --test bench`),
    /// ready to run in the browser.
    pub(crate) command: &'a [OsString],
    /// Samples of each figure.
    pub(crate) samples: u32,
    /// Where the server's database and log go.
    pub(crate) dir: PathBuf,
    /// The built SDK the server serves (`sdk/dist`).
    pub(crate) sdk_dir: PathBuf,
    /// Penpal's and Comlink's builds, which the test's pages load from the fault server.
    pub(crate) penpal: &'a Path,
    pub(crate) comlink: &'a Path,
}

/// Where `addLines` of 1000 lines spends its time inside the host, phase by phase, as the host
/// reports it for each batch (`Host::add_lines_phases`): the mean of each phase over the samples,
/// in milliseconds (one reading is rounded to the page's clock, 0.1 ms without cross-origin
/// isolation; the mean of many is not). `read`, `validate`, `merge` and `reply` make up the
/// `addLines` figure; `notify` follows the reply.
#[derive(Clone, Copy, Debug, Default, PartialEq, Serialize)]
pub(crate) struct AddLinesPhases {
    /// The envelope read, the lines walked into module memory (a word per field, the numbers,
    /// their strings as one text through `TextEncoder.encodeInto`; `JSON.stringify` for a batch
    /// that way does not read).
    pub(crate) read: f64,
    /// Each line given to the checks field by field and checked against the catalog index.
    pub(crate) validate: f64,
    /// The valid lines merged into the open quote (numbers, groups, task lines).
    pub(crate) merge: f64,
    /// The reply built and posted.
    pub(crate) reply: f64,
    /// After the reply: the call recorded and the change told (the quote's amounts and totals,
    /// to `onChange` listeners and tools offered `quote.changed`).
    pub(crate) notify: f64,
}

/// The samples of each phase, as the bench test posts them.
#[derive(Deserialize)]
struct PhaseSamples {
    read: Vec<f64>,
    validate: Vec<f64>,
    merge: Vec<f64>,
    reply: Vec<f64>,
    notify: Vec<f64>,
}

impl PhaseSamples {
    fn means(&self) -> AddLinesPhases {
        AddLinesPhases {
            read: mean(&self.read),
            validate: mean(&self.validate),
            merge: mean(&self.merge),
            reply: mean(&self.reply),
            notify: mean(&self.notify),
        }
    }
}

/// The medians of one run of the host bench.
#[derive(Clone, Debug, PartialEq)]
pub(crate) struct HostFigures {
    /// Median `addLines` of 1000 lines, host only, in milliseconds.
    pub(crate) add_lines_ms: f64,
    /// Where `addLines` spends its time, phase by phase (means).
    pub(crate) add_lines_phases: AddLinesPhases,
    /// Median `context.get()` round trip, in milliseconds.
    pub(crate) context_get_ms: f64,
    /// Mean time the host spent answering `context.get()`, in milliseconds: one answer is
    /// below the resolution of the page's clock (0.1 ms without cross-origin isolation), and the
    /// mean of many rounded readings is still exact.
    pub(crate) context_get_host_ms: f64,
    /// Median bare `MessageChannel` echo, in milliseconds.
    pub(crate) echo_ms: f64,
    /// Opening a quote, first and again.
    pub(crate) open_quote: OpenQuoteFigures,
    /// Samples behind each median (the fewest of the three series).
    pub(crate) samples: usize,
    /// Products in the catalog, as the test saw it.
    pub(crate) catalog_products: u64,
    /// The browser's user agent.
    pub(crate) browser: String,
    /// The side-by-side samples, as the test reported them (see [`crate::compare`]).
    pub(crate) compare: CompareReport,
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

    /// The three lines the bench prints.
    pub(crate) fn lines(&self) -> [String; 3] {
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
                "bench: addLines phases (host, mean ms): read {:.3} (the lines walked, encodeInto), \
                 validate {:.3} (check against the catalog), merge {:.3}, reply {:.3}; after the \
                 reply, notify {:.3}",
                self.add_lines_phases.read,
                self.add_lines_phases.validate,
                self.add_lines_phases.merge,
                self.add_lines_phases.reply,
                self.add_lines_phases.notify,
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

/// Reserves the ports and starts the fault server, builds the bench test with their addresses
/// (at a lower priority, so that a server build beside it goes first), then starts the server
/// (a fresh catalog of [`CATALOG_PRODUCTS`] in `bench.dir`), runs the test with `bench.samples`
/// samples per figure, and reads its report; then measures the bytes the same server sends over
/// HTTP ([`transfer`]), against the same catalog.
pub(crate) fn measure(
    bench: &HostBench,
    server: &mut ServerBinary,
) -> Result<(HostFigures, Transfers), Error> {
    let mut options = ServerOptions::new("bench", bench.dir.clone(), CATALOG_PRODUCTS);
    options.sdk_dir = Some(bench.sdk_dir.clone());
    let mut backends = HostBackends::reserve(options)?;
    let mut build = command(bench, true)?;
    backends.configure(&mut build);
    println!("bench: running `{}`", describe(&build));
    if !run(&mut build)? {
        return Err(Error::failed(format!("`{}` failed", describe(&build))));
    }
    backends.launch(&server.path()?)?;
    // The bridges toolbridge is compared with, for the pages to load from the fault server.
    for (name, path) in [(PENPAL_FILE, bench.penpal), (COMLINK_FILE, bench.comlink)] {
        backends
            .fault_server()
            .serve_file(name, fs_err::read(path)?);
    }
    let mut test = command(bench, false)?;
    backends.apply(&mut test);
    println!("bench: running `{}`", describe(&test));
    let succeeded = run(&mut test)?;
    let log = backends.server_log();
    if !succeeded {
        return Err(Error::failed(format!(
            "`{}` failed; the toolbridge server's log is {}",
            describe(&test),
            log.display()
        )));
    }
    let report = backends.fault_server().report(REPORT).ok_or_else(|| {
        Error::failed(format!(
            "the host bench ran but posted no report to {}/report/{REPORT}, so there are no \
             host figures; see its output above (the toolbridge server's log is {})",
            backends.fault_server().base_url(),
            log.display()
        ))
    })?;
    let figures = parse_report(&report)?;
    let server = backends
        .server()
        .ok_or_else(|| Error::failed("the toolbridge server for the host bench is not running"))?;
    let transfers = transfer::measure(server, CATALOG_PRODUCTS)?;
    let mut figures = figures;
    figures.open_quote.add_transfers(&transfers);
    Ok((figures, transfers))
}

/// The host bench command with `TOOLBRIDGE_BENCH_SAMPLES`; to `build` only, with `--no-run`
/// (before a `--` that passes arguments to the test binary, if any) and under `nice -n 10` when
/// there is a `nice`.
fn command(bench: &HostBench, build: bool) -> Result<Command, Error> {
    let Some((program, args)) = bench.command.split_first() else {
        return Err(Error::failed(
            "no host bench command after `--` (e.g. `cargo test -p toolbridge-host --target \
             wasm32-unknown-unknown --profile host-release --test bench`)",
        ));
    };
    let mut args = args.to_vec();
    let nice = find("nice").filter(|_| build);
    if build {
        let at = args
            .iter()
            .position(|arg| arg == "--")
            .unwrap_or(args.len());
        args.insert(at, OsString::from("--no-run"));
    }
    let mut command = match nice {
        Some(nice) => {
            let mut command = Command::new(nice);
            command.args(["-n", "10"]).arg(program);
            command
        }
        None => Command::new(program),
    };
    command
        .args(args)
        .env("TOOLBRIDGE_BENCH_SAMPLES", bench.samples.to_string());
    Ok(command)
}

/// The report the bench test posts.
#[derive(Deserialize)]
#[serde(rename_all = "camelCase")]
struct Report {
    add_lines_ms: Vec<f64>,
    add_lines_phases_ms: PhaseSamples,
    context_get_ms: Vec<f64>,
    context_get_host_ms: Vec<f64>,
    echo_ms: Vec<f64>,
    open_quote: OpenQuoteReport,
    catalog_products: u64,
    browser: String,
    compare: CompareReport,
}

/// Reads the report the bench test posts:
/// `{"addLinesMs": [..], "addLinesPhasesMs": {"read": [..], "validate": [..], "merge": [..],
/// "reply": [..], "notify": [..]}, "contextGetMs": [..], "contextGetHostMs": [..], "echoMs": [..],
/// "openQuote": {..}, "catalogProducts": n, "browser": "..", "compare": {..}}`
/// (`openQuote` as [`crate::open_quote`] reads it).
fn parse_report(text: &str) -> Result<HostFigures, Error> {
    let bad = |why: String| Error::failed(format!("the host bench report {why}: {text}"));
    let report: Report =
        serde_json::from_str(text).map_err(|e| bad(format!("cannot be read ({e})")))?;
    for (key, samples) in [
        ("addLinesMs", &report.add_lines_ms),
        ("contextGetMs", &report.context_get_ms),
        ("contextGetHostMs", &report.context_get_host_ms),
        ("echoMs", &report.echo_ms),
    ] {
        if samples.is_empty() {
            return Err(bad(format!("has no `{key}` samples")));
        }
    }
    let median_of = |samples: &[f64]| median(samples).unwrap_or(f64::NAN);
    let open_quote = OpenQuoteFigures::from_report(&report.open_quote)
        .ok_or_else(|| bad("has no `openQuote` samples".to_owned()))?;
    Ok(HostFigures {
        add_lines_ms: median_of(&report.add_lines_ms),
        add_lines_phases: report.add_lines_phases_ms.means(),
        context_get_ms: median_of(&report.context_get_ms),
        context_get_host_ms: mean(&report.context_get_host_ms),
        echo_ms: median_of(&report.echo_ms),
        open_quote,
        samples: report
            .add_lines_ms
            .len()
            .min(report.context_get_ms.len())
            .min(report.echo_ms.len()),
        catalog_products: report.catalog_products,
        browser: report.browser,
        compare: report.compare,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    const COMPARE: &str = r#"{"batch": 10, "inFlight": 100, "contenders": {}}"#;
    const PHASES: &str = r#"{"read": [0.4, 0.6], "validate": [1.0, 1.0], "merge": [0.4, 0.4],
        "reply": [0.1, 0.1], "notify": [0.0, 0.1]}"#;

    /// The report's `openQuote`.
    fn open_quote() -> String {
        format!(
            r#""openQuote": {}"#,
            crate::open_quote::tests::report_json(true)
        )
    }

    #[test]
    fn a_report_becomes_medians_and_verdicts() {
        let figures = parse_report(&format!(
            r#"{{"addLinesMs": [2.0, 2.2, 2.1], "addLinesPhasesMs": {PHASES},
                "contextGetMs": [0.2, 0.21, 0.22, 0.3],
                "contextGetHostMs": [0.02, 0.03, 0.01], "echoMs": [0.15, 0.15, 0.1], {},
                "catalogProducts": 100000,
                "browser": "Mozilla/5.0 HeadlessChrome", "compare": {COMPARE}}}"#,
            open_quote()
        ))
        .unwrap();
        assert!((figures.add_lines_ms - 2.1).abs() < 1e-9);
        assert!((figures.add_lines_phases.read - 0.5).abs() < 1e-9);
        assert!((figures.add_lines_phases.validate - 1.0).abs() < 1e-9);
        assert!((figures.add_lines_phases.notify - 0.05).abs() < 1e-9);
        assert!((figures.context_get_ms - 0.215).abs() < 1e-9);
        assert!((figures.context_get_host_ms - 0.02).abs() < 1e-9);
        assert!((figures.echo_ms - 0.15).abs() < 1e-9);
        assert_eq!(figures.samples, 3);
        assert_eq!(figures.catalog_products, 100_000);
        assert_eq!(figures.browser, "Mozilla/5.0 HeadlessChrome");
        assert_eq!(figures.compare.batch, 10);
        assert!((figures.open_quote.first.median_ms - 200.0).abs() < 1e-9);
        assert!((figures.open_quote.cold.median_ms - 450.0).abs() < 1e-9);
        assert!(figures.add_lines_within_budget());
        assert!(figures.context_get_within_budget());
        assert_eq!(
            figures.lines(),
            [
                "bench: addLines of 1000 lines against 100000 products (host only): median \
                 2.10 ms (budget ≤ 5 ms) ok",
                "bench: addLines phases (host, mean ms): read 0.500 (the lines walked, \
                 encodeInto), validate 1.000 (check against the catalog), merge 0.400, reply \
                 0.100; after the reply, notify 0.050",
                "bench: context.get round trip: median 0.215 ms (host share, mean: 0.020 ms); \
                 bare MessageChannel echo: median 0.150 ms; ratio 1.43 (budget ≤ 1.5) ok",
            ]
        );
    }

    #[test]
    fn over_budget_and_unmeasurable_figures_say_so() {
        let mut figures = parse_report(&format!(
            r#"{{"addLinesMs": [6], "addLinesPhasesMs": {PHASES}, "contextGetMs": [0.1], "contextGetHostMs": [0.01],
                "echoMs": [0], {}, "catalogProducts": 100000, "browser": "", "compare": {COMPARE}}}"#,
            open_quote()
        ))
        .unwrap();
        assert!(!figures.add_lines_within_budget());
        assert_eq!(figures.ratio(), None);
        assert!(!figures.context_get_within_budget());
        let [add_lines, _, context_get] = figures.lines();
        assert!(add_lines.ends_with("median 6.00 ms (budget ≤ 5 ms) OVER"));
        assert!(context_get.ends_with("ratio not measurable (budget ≤ 1.5) OVER"));
        figures.echo_ms = 0.05;
        assert!(!figures.context_get_within_budget());
    }

    #[test]
    fn a_report_without_samples_is_refused_with_the_reason() {
        let complete = |replace: &str, with: &str| {
            format!(
                r#"{{"addLinesMs": [1], "addLinesPhasesMs": {PHASES}, "contextGetMs": [1], "contextGetHostMs": [1], "echoMs": [1],
                    {}, "catalogProducts": 1, "browser": "", "compare": {COMPARE}}}"#,
                open_quote()
            )
            .replace(replace, with)
        };
        assert!(parse_report(&complete("", "")).is_ok());
        for (text, why) in [
            ("this is not json".to_owned(), "cannot be read"),
            (
                complete(r#""addLinesMs": [1]"#, r#""addLinesMs": []"#),
                "has no `addLinesMs` samples",
            ),
            (
                complete(r#""contextGetHostMs": [1], "#, ""),
                "missing field `contextGetHostMs`",
            ),
            (
                complete(r#""contextGetMs": [1]"#, r#""contextGetMs": ["1"]"#),
                "invalid type: string \"1\"",
            ),
            (
                complete(r#""catalogProducts": 1"#, r#""catalogProducts": 1.5"#),
                "invalid type: floating point `1.5`",
            ),
            (
                complete(&format!(r#", "compare": {COMPARE}"#), ""),
                "missing field `compare`",
            ),
        ] {
            let error = parse_report(&text).unwrap_err().to_string();
            assert!(error.contains(why), "{text}: {error}");
        }
    }

    #[test]
    fn the_build_command_does_not_run_the_tests() {
        let args = ["cargo", "test", "--test", "bench", "--", "--nocapture"].map(OsString::from);
        let bench = HostBench {
            command: &args,
            samples: 30,
            dir: PathBuf::new(),
            sdk_dir: PathBuf::new(),
            penpal: Path::new("p.js"),
            comlink: Path::new("c.js"),
        };
        let build = command(&bench, true).unwrap();
        let shown = describe(&build);
        assert!(
            shown.ends_with("cargo test --test bench --no-run -- --nocapture"),
            "{shown}"
        );
        let test = command(&bench, false).unwrap();
        assert_eq!(describe(&test), "cargo test --test bench -- --nocapture");
        assert!(test.get_envs().any(
            |(name, value)| name == "TOOLBRIDGE_BENCH_SAMPLES" && value == Some("30".as_ref())
        ));
        let none = HostBench {
            command: &[],
            ..bench
        };
        assert!(command(&none, false).is_err());
    }
}
