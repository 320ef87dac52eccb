//! toolbridge side by side with Penpal, Comlink and a bare `MessageChannel` echo (the floor), as
//! the host's bench test measured them in one Chromium session (`host/tests/support/compare.js`):
//! the figures, each also as a ratio to the floor, written as `compare.md` and `compare.json`.

use std::collections::HashMap;
use std::fmt::Write as _;

use serde::{Deserialize, Serialize};
use toolbridge_e2e::schemathesis::grouped;

use crate::cold_load::{ColdLoad, FIRST_VISIT_GOAL_MS, REPEAT_GOAL_MS};
use crate::error::Error;
use crate::figures::{median, rounded};
use crate::open_quote::{FIRST_OPEN_GOAL_MS, OpenQuoteFigures, REPEAT_OPEN_GOAL_MS};
use crate::sizes::{HOST_WASM_BROTLI_GOAL, HostModuleSizes, ServedSize};

/// The contenders in the order of the table; `echo` is the floor.
pub(crate) const CONTENDERS: [&str; 4] = ["echo", "toolbridge", "penpal", "comlink"];

/// toolbridge's cold start by phase, in order, as `tests/pages/contender.html` cuts it (from
/// outside bridge.js, which measures nothing itself), with the row each gets: the script's fetch,
/// its parsing until the loader decodes the inlined module, the decoding, the compiling, the
/// instantiating, the making of `window.bridge`, the handshake's set-up until the script has run,
/// the handshake until `bridge.ready()` resolved, and the first call. They add up to the cold
/// start.
const PHASES: [(&str, &str); 9] = [
    ("fetch", "fetching the script"),
    ("parse", "parsing it, until the module is decoded"),
    ("decode", "decoding the inlined module"),
    ("compile", "compiling it"),
    ("instantiate", "instantiating it"),
    ("install", "making window.bridge"),
    ("connect", "the handshake's set-up, to the script's end"),
    ("handshake", "the handshake, until bridge.ready() resolves"),
    ("firstCall", "the first call"),
];

/// The `compare` object of the host bench's report: the samples of each contender.
#[derive(Clone, Debug, PartialEq, Deserialize)]
#[serde(rename_all = "camelCase")]
pub(crate) struct CompareReport {
    /// Sequential calls averaged into one call sample.
    pub(crate) batch: u64,
    /// Calls started at once in the in-flight figure.
    pub(crate) in_flight: u64,
    /// By contender name.
    pub(crate) contenders: HashMap<String, Samples>,
}

/// The samples of one contender, in milliseconds (`sequentialMs`, `inFlightMs`, ...).
#[derive(Clone, Debug, PartialEq, Deserialize)]
pub(crate) struct Samples {
    #[serde(rename = "sequentialMs")]
    sequential: Vec<f64>,
    #[serde(rename = "inFlightMs")]
    in_flight: Vec<f64>,
    #[serde(rename = "pageMs")]
    page: Vec<f64>,
    #[serde(rename = "coldStartMs")]
    cold_start: Vec<f64>,
    #[serde(rename = "scriptLoadMs")]
    script_load: Vec<f64>,
    /// By phase of [`PHASES`] (toolbridge's only; older reports have none).
    #[serde(rename = "coldPhasesMs", default)]
    cold_phases: HashMap<String, Vec<f64>>,
}

/// What one contender measured.
#[derive(Clone, Debug, PartialEq)]
pub(crate) struct Contender {
    /// `echo`, `toolbridge`, `penpal` or `comlink`.
    pub(crate) name: &'static str,
    /// What was measured and where it came from, e.g. `Penpal 7.0.6`.
    pub(crate) label: String,
    /// Round trip of the context-shaped call, per call, median and p99 of the samples.
    pub(crate) call_ms: Stat,
    /// 100 calls in flight: time until the last resolved, median.
    pub(crate) in_flight_ms: Stat,
    /// The 500-item page, median and p99.
    pub(crate) page_ms: Stat,
    /// From the script tag to the first resolved call in a fresh frame, median and p99.
    pub(crate) cold_start_ms: Stat,
    /// The part of the cold start until the library's script had loaded and run.
    pub(crate) script_load_ms: Stat,
    /// The cold start by phase, in the order of [`PHASES`], for the phases measured.
    pub(crate) cold_phases: Vec<(&'static str, Stat)>,
    /// gzip -9 bytes a tool page must load for it (0 for the echo).
    pub(crate) gzip_bytes: u64,
}

/// A median and a 99th percentile, in milliseconds, and how many samples they come from.
#[derive(Clone, Copy, Debug, PartialEq)]
pub(crate) struct Stat {
    pub(crate) median: f64,
    pub(crate) p99: f64,
    pub(crate) samples: usize,
}

impl Stat {
    fn of(samples: &[f64]) -> Option<Self> {
        let mut sorted = samples.to_vec();
        sorted.sort_by(f64::total_cmp);
        let at = |fraction: f64| {
            #[allow(
                clippy::cast_possible_truncation,
                clippy::cast_sign_loss,
                clippy::cast_precision_loss
            )] // a few hundred samples
            let index = ((sorted.len() as f64 - 1.0) * fraction).round() as usize;
            sorted.get(index).copied()
        };
        Some(Self {
            median: median(&sorted)?,
            p99: at(0.99)?,
            samples: sorted.len(),
        })
    }
}

/// The whole comparison.
#[derive(Clone, Debug, PartialEq)]
pub(crate) struct Comparison {
    pub(crate) contenders: Vec<Contender>,
    /// Sequential calls averaged into one call sample.
    pub(crate) batch: u64,
    /// Calls started at once in the in-flight figure.
    pub(crate) in_flight: u64,
}

/// The figures of DESIGN.md §8 measured in the same run, for the same report.
#[derive(Clone, Copy, Debug, PartialEq)]
pub(crate) struct Budgets {
    /// `addLines` of 1 000 lines inside the host, median, in ms.
    pub(crate) add_lines_ms: f64,
    /// `context.get()` over the echo, when measurable.
    pub(crate) context_get_ratio: Option<f64>,
    /// The REST API under the load generator.
    pub(crate) rest_requests_per_sec: f64,
    pub(crate) rest_p99_ms: f64,
    /// Opening a quote, against the goals of issue 23.
    pub(crate) open_quote: OpenQuoteBudget,
    /// The host module's bytes, against the goal of issue 34 for its wasm as brotli.
    pub(crate) host_module: HostModuleSizes,
    /// The app's cold load, against the goals of issue 34.
    pub(crate) cold_load: ColdLoadBudget,
}

/// The app's cold load to the quote editor's lines, medians in ms.
#[derive(Clone, Copy, Debug, PartialEq)]
pub(crate) struct ColdLoadBudget {
    /// A fresh profile: empty HTTP cache, no compiled code cached.
    pub(crate) first_ms: f64,
    /// The same profile again: warm HTTP cache, compiled code cached.
    pub(crate) repeat_ms: f64,
}

impl ColdLoadBudget {
    /// The figures the tables show.
    pub(crate) fn of(figures: &ColdLoad) -> Self {
        Self {
            first_ms: figures.first.median_ms,
            repeat_ms: figures.repeat.median_ms,
        }
    }
}

/// A file's raw, gzip -9 and brotli bytes, for a result cell: `923 518 / 300 000 / 236 212 B`.
fn served_cell(size: ServedSize) -> String {
    format!(
        "{} / {} / {} B",
        grouped(size.raw),
        grouped(size.gzip),
        grouped(size.brotli)
    )
}

/// Opening a quote against the bench's catalog, first (the index downloaded) and again (the index
/// revalidated), medians in ms, with the bytes of the index's body on the wire when measured.
#[derive(Clone, Copy, Debug, PartialEq)]
pub(crate) struct OpenQuoteBudget {
    pub(crate) first_ms: f64,
    pub(crate) first_index_bytes: Option<u64>,
    pub(crate) repeat_ms: f64,
    pub(crate) repeat_index_bytes: Option<u64>,
    /// The status of the repeat's answer (`304`), when the browser reported it.
    pub(crate) repeat_status: Option<u16>,
}

impl OpenQuoteBudget {
    /// The figures the tables show.
    pub(crate) fn of(figures: &OpenQuoteFigures) -> Self {
        Self {
            first_ms: figures.first.median_ms,
            first_index_bytes: figures.first_bytes().map(|b| b.body_bytes),
            repeat_ms: figures.repeat.median_ms,
            repeat_index_bytes: figures.repeat_bytes().map(|b| b.body_bytes),
            repeat_status: figures.repeat.status,
        }
    }

    /// The result cell of an open: its time and the index's bytes.
    fn cell(ms: f64, bytes: Option<u64>, status: Option<u16>) -> String {
        let status = status.map_or_else(String::new, |s| format!(" ({s})"));
        match bytes {
            Some(bytes) => format!("{ms:.1} ms; index {} B{status}", grouped(bytes)),
            None => format!("{ms:.1} ms{status}"),
        }
    }
}

/// Where and when the comparison was measured, for both reports.
pub(crate) struct Setting<'a> {
    /// `2026-11-25`.
    pub(crate) date: &'a str,
    /// The CPU model and count ([`cpu_model`]).
    pub(crate) cpu: &'a str,
    /// The browser and its version ([`browser_version`]).
    pub(crate) browser: &'a str,
}

/// What the report does not say about a contender: its label (with its version) and the gzip -9
/// bytes a tool loads for it.
pub(crate) struct Source {
    pub(crate) label: String,
    pub(crate) gzip_bytes: u64,
}

/// `compare.json`.
#[derive(Serialize)]
struct ComparisonJson<'a> {
    date: &'a str,
    cpu: &'a str,
    browser: &'a str,
    batch: u64,
    in_flight: u64,
    contenders: Vec<ContenderJson<'a>>,
    add_lines_1000_median_ms: f64,
    context_get_ratio: Option<f64>,
    rest: RestJson,
    open_quote: OpenQuoteJson,
    host_module: HostModuleJson,
    app_cold_load: ColdLoadJson,
}

/// The host module's bytes in `compare.json`.
#[derive(Serialize)]
struct HostModuleJson {
    wasm: ServedSize,
    glue: ServedSize,
    wasm_brotli_goal: u64,
}

/// The app's cold load in `compare.json`.
#[derive(Serialize)]
struct ColdLoadJson {
    first_visit_median_ms: f64,
    repeat_median_ms: f64,
}

/// Opening a quote in `compare.json`.
#[derive(Serialize)]
struct OpenQuoteJson {
    first_median_ms: f64,
    first_index_bytes: Option<u64>,
    repeat_median_ms: f64,
    repeat_index_bytes: Option<u64>,
}

/// One contender in `compare.json`; each ratio is to the floor's median, `null` when the floor
/// is not above zero.
#[derive(Serialize)]
struct ContenderJson<'a> {
    name: &'a str,
    label: &'a str,
    call: StatJson,
    call_ratio: Option<f64>,
    in_flight_100: StatJson,
    in_flight_ratio: Option<f64>,
    page_500: StatJson,
    page_ratio: Option<f64>,
    cold_start: StatJson,
    cold_start_ratio: Option<f64>,
    script_load: StatJson,
    #[serde(skip_serializing_if = "Vec::is_empty")]
    cold_phases: Vec<PhaseJson>,
    gzip_bytes: u64,
}

/// One phase of the cold start in `compare.json`.
#[derive(Serialize)]
struct PhaseJson {
    phase: &'static str,
    median_ms: f64,
    p99_ms: f64,
    samples: usize,
}

#[derive(Serialize)]
struct StatJson {
    median_ms: f64,
    p99_ms: f64,
    samples: usize,
}

impl From<Stat> for StatJson {
    fn from(stat: Stat) -> Self {
        Self {
            median_ms: rounded(stat.median, 4),
            p99_ms: rounded(stat.p99, 4),
            samples: stat.samples,
        }
    }
}

#[derive(Serialize)]
struct RestJson {
    requests_per_sec: f64,
    p99_ms: f64,
}

impl Comparison {
    /// The comparison in the host bench's report; `sources` in the order of [`CONTENDERS`].
    pub(crate) fn from_report(report: &CompareReport, sources: [Source; 4]) -> Result<Self, Error> {
        let bad = |why: String| Error::failed(format!("the comparison in the bench report {why}"));
        let mut contenders = Vec::new();
        for (name, source) in CONTENDERS.into_iter().zip(sources) {
            let samples = report
                .contenders
                .get(name)
                .ok_or_else(|| bad(format!("has no contender `{name}`")))?;
            let stat = |key: &str, samples: &[f64]| {
                Stat::of(samples).ok_or_else(|| bad(format!("has no `{name}.{key}` samples")))
            };
            contenders.push(Contender {
                name,
                label: source.label,
                call_ms: stat("sequentialMs", &samples.sequential)?,
                in_flight_ms: stat("inFlightMs", &samples.in_flight)?,
                page_ms: stat("pageMs", &samples.page)?,
                cold_start_ms: stat("coldStartMs", &samples.cold_start)?,
                script_load_ms: stat("scriptLoadMs", &samples.script_load)?,
                cold_phases: PHASES
                    .iter()
                    .filter_map(|(phase, _)| {
                        let stat = Stat::of(samples.cold_phases.get(*phase)?)?;
                        Some((*phase, stat))
                    })
                    .collect(),
                gzip_bytes: source.gzip_bytes,
            });
        }
        Ok(Self {
            contenders,
            batch: report.batch,
            in_flight: report.in_flight,
        })
    }

    fn floor(&self) -> Option<&Contender> {
        self.contenders.iter().find(|c| c.name == "echo")
    }

    /// The rows of the table: figure name, then one cell per contender.
    fn rows(&self) -> Vec<(String, Vec<String>)> {
        type Cell = fn(&Contender) -> f64;
        let floor = self.floor();
        let ratio = |value: f64, base: Option<f64>| match base {
            Some(base) if base > 0.0 => format!(" ({:.2}×)", value / base),
            _ => String::new(),
        };
        let per_sec = |ms: f64, calls: f64| if ms > 0.0 { calls * 1000.0 / ms } else { 0.0 };
        #[allow(clippy::cast_precision_loss)] // 100
        let in_flight = self.in_flight as f64;
        let figures: [(&str, Cell, bool, f64); 8] = [
            (
                "call round trip, median (ms)",
                |c| c.call_ms.median,
                false,
                1.0,
            ),
            ("call round trip, p99 (ms)", |c| c.call_ms.p99, false, 1.0),
            ("calls/s, one at a time", |c| c.call_ms.median, true, 1.0),
            (
                "calls/s, 100 in flight",
                |c| c.in_flight_ms.median,
                true,
                in_flight,
            ),
            (
                "500-item page, median (ms)",
                |c| c.page_ms.median,
                false,
                1.0,
            ),
            ("500-item page, p99 (ms)", |c| c.page_ms.p99, false, 1.0),
            (
                "script tag to first call, median (ms)",
                |c| c.cold_start_ms.median,
                false,
                1.0,
            ),
            (
                "of which loading and running the script, median (ms)",
                |c| c.script_load_ms.median,
                false,
                1.0,
            ),
        ];
        let mut rows = Vec::new();
        let phase_rows = PHASES.iter().map(|(phase, title)| {
            let cells = self.contenders.iter().map(|c| {
                let stat = c.cold_phases.iter().find(|(p, _)| p == phase);
                stat.map_or_else(|| "–".to_owned(), |(_, s)| format!("{:.3}", s.median))
            });
            (
                format!("cold start phase: {title}, median (ms)"),
                cells.collect(),
            )
        });
        let phase_rows: Vec<(String, Vec<String>)> = phase_rows
            .filter(|(_, cells): &(String, Vec<String>)| cells.iter().any(|c| c != "–"))
            .collect();
        for (title, cell, rate, calls) in figures {
            let base = floor.map(cell);
            let cells = self
                .contenders
                .iter()
                .map(|c| {
                    let value = cell(c);
                    if rate {
                        let value = per_sec(value, calls);
                        let base = base.map(|b| per_sec(b, calls));
                        format!("{value:.0}{}", ratio(value, base))
                    } else {
                        format!("{value:.3}{}", ratio(value, base))
                    }
                })
                .collect();
            rows.push((title.to_owned(), cells));
            if title.starts_with("of which loading") {
                rows.extend(phase_rows.iter().cloned());
            }
        }
        rows.push((
            "what a tool loads, gzip -9 (bytes)".to_owned(),
            self.contenders
                .iter()
                .map(|c| {
                    if c.name == "echo" {
                        "0".to_owned()
                    } else {
                        grouped(c.gzip_bytes)
                    }
                })
                .collect(),
        ));
        rows
    }

    /// The Markdown report: a heading line with the date and the machine, the table, and how the
    /// figures were taken.
    pub(crate) fn markdown(&self, setting: &Setting, budgets: &Budgets) -> String {
        let Setting { date, cpu, browser } = setting;
        let mut out = format!(
            "Measured {date} by `cargo xtask bench` on {cpu}, in {browser}, one session. Ratios are \
             to the bare MessageChannel echo (the floor).\n\n| | "
        );
        let header: Vec<String> = self.contenders.iter().map(|c| c.label.clone()).collect();
        out.push_str(&header.join(" | "));
        out.push_str(" |\n|---|");
        out.push_str(&"---|".repeat(self.contenders.len()));
        out.push('\n');
        for (title, cells) in self.rows() {
            let _ = writeln!(out, "| {title} | {} |", cells.join(" | "));
        }
        let _ = write!(
            out,
            "\nA call sample is the mean of {} sequential calls (the page's clock is too coarse for \
             one); \"100 in flight\" starts {} calls at once and counts until the last resolves. The \
             small call answers a context-shaped object from memory; the page is the same \
             `GET /api/v1/products?page=1&pageSize=500` on the real server for every contender \
             (toolbridge's host makes it for `products.list`; the others' bench page makes it in \
             the exposed method). Cold start is a fresh frame per sample, from the tool page's \
             script tag to its first resolved call; toolbridge's phases of it are cut from outside \
             bridge.js by the tool page (`host/tests/pages/contender.html` wraps the browser APIs \
             the loader calls), and add up to it.\n",
            self.batch, self.in_flight
        );
        let ratio = budgets
            .context_get_ratio
            .map_or_else(|| "not measurable".to_owned(), |r| format!("{r:.2}×"));
        let open = budgets.open_quote;
        let _ = write!(
            out,
            "\nIn the same run, against the budgets of DESIGN.md §8:\n\n| figure | result | budget |\n\
             |---|---|---|\n\
             | `addLines` of 1 000 lines against 100 000 products, host only, median | {:.2} ms | ≤ 5 ms |\n\
             | `context.get()` round trip over the bare echo, median | {ratio} | ≤ 1.5× |\n\
             | REST `GET /api/v1/products?pageSize=500`, load generator on the same machine | {:.0} requests/s, p99 {:.1} ms | ≥ 1 000 requests/s, p99 ≤ 25 ms |\n\
             | opening a quote against 100 000 products, first open (the index downloaded), median | {} | < {FIRST_OPEN_GOAL_MS} ms (goal) |\n\
             | opening a quote against 100 000 products, repeat open (the index revalidated), median | {} | < {REPEAT_OPEN_GOAL_MS} ms (goal) |\n\
             | host module wasm (`toolbridge_host_bg.wasm`), raw / gzip -9 / brotli 11 | {} | brotli ≤ {} B (goal) |\n\
             | host module glue (`toolbridge_host.js`), raw / gzip -9 / brotli 11 | {} | – |\n\
             | the app's cold load to the quote editor's lines (demo data), first visit (empty caches), median | {:.1} ms | < {FIRST_VISIT_GOAL_MS} ms (goal) |\n\
             | the app's cold load to the quote editor's lines (demo data), repeat (warm HTTP cache, compiled code cached), median | {:.1} ms | < {REPEAT_GOAL_MS} ms (goal) |\n",
            budgets.add_lines_ms,
            budgets.rest_requests_per_sec,
            budgets.rest_p99_ms,
            OpenQuoteBudget::cell(open.first_ms, open.first_index_bytes, None),
            OpenQuoteBudget::cell(open.repeat_ms, open.repeat_index_bytes, open.repeat_status),
            served_cell(budgets.host_module.wasm),
            grouped(HOST_WASM_BROTLI_GOAL),
            served_cell(budgets.host_module.glue),
            budgets.cold_load.first_ms,
            budgets.cold_load.repeat_ms,
        );
        out
    }

    /// The comparison as JSON (`compare.json`).
    pub(crate) fn json(&self, setting: &Setting, budgets: &Budgets) -> Result<String, Error> {
        let floor = self.floor();
        let ratio = |value: f64, base: Option<f64>| match base {
            Some(base) if base > 0.0 => Some(rounded(value / base, 3)),
            _ => None,
        };
        let contenders = self
            .contenders
            .iter()
            .map(|c| ContenderJson {
                name: c.name,
                label: &c.label,
                call: c.call_ms.into(),
                call_ratio: ratio(c.call_ms.median, floor.map(|f| f.call_ms.median)),
                in_flight_100: c.in_flight_ms.into(),
                in_flight_ratio: ratio(c.in_flight_ms.median, floor.map(|f| f.in_flight_ms.median)),
                page_500: c.page_ms.into(),
                page_ratio: ratio(c.page_ms.median, floor.map(|f| f.page_ms.median)),
                cold_start: c.cold_start_ms.into(),
                cold_start_ratio: ratio(
                    c.cold_start_ms.median,
                    floor.map(|f| f.cold_start_ms.median),
                ),
                script_load: c.script_load_ms.into(),
                cold_phases: c
                    .cold_phases
                    .iter()
                    .map(|(phase, stat)| PhaseJson {
                        phase,
                        median_ms: rounded(stat.median, 4),
                        p99_ms: rounded(stat.p99, 4),
                        samples: stat.samples,
                    })
                    .collect(),
                gzip_bytes: c.gzip_bytes,
            })
            .collect();
        let json = ComparisonJson {
            date: setting.date,
            cpu: setting.cpu,
            browser: setting.browser,
            batch: self.batch,
            in_flight: self.in_flight,
            contenders,
            add_lines_1000_median_ms: rounded(budgets.add_lines_ms, 3),
            context_get_ratio: budgets.context_get_ratio.map(|r| rounded(r, 3)),
            rest: RestJson {
                requests_per_sec: rounded(budgets.rest_requests_per_sec, 1),
                p99_ms: rounded(budgets.rest_p99_ms, 3),
            },
            open_quote: OpenQuoteJson {
                first_median_ms: rounded(budgets.open_quote.first_ms, 2),
                first_index_bytes: budgets.open_quote.first_index_bytes,
                repeat_median_ms: rounded(budgets.open_quote.repeat_ms, 2),
                repeat_index_bytes: budgets.open_quote.repeat_index_bytes,
            },
            host_module: HostModuleJson {
                wasm: budgets.host_module.wasm,
                glue: budgets.host_module.glue,
                wasm_brotli_goal: HOST_WASM_BROTLI_GOAL,
            },
            app_cold_load: ColdLoadJson {
                first_visit_median_ms: rounded(budgets.cold_load.first_ms, 1),
                repeat_median_ms: rounded(budgets.cold_load.repeat_ms, 1),
            },
        };
        let mut text = serde_json::to_string_pretty(&json)
            .map_err(|e| Error::failed(format!("cannot write compare.json: {e}")))?;
        text.push('\n');
        Ok(text)
    }
}

/// The machine's CPU model, from `/proc/cpuinfo`, with the number of logical CPUs.
pub(crate) fn cpu_model() -> String {
    let info = std::fs::read_to_string("/proc/cpuinfo").unwrap_or_default();
    let model = info
        .lines()
        .find_map(|line| line.strip_prefix("model name"))
        .and_then(|rest| rest.split_once(':'))
        .map_or("an unknown CPU", |(_, model)| model.trim())
        .to_owned();
    let count = info.lines().filter(|l| l.starts_with("processor")).count();
    format!("{model} ({count} logical CPUs)")
}

/// The browser's name and version from a user agent, e.g. `Chrome/131.0.6778.85`.
pub(crate) fn browser_version(user_agent: &str) -> String {
    user_agent
        .split_whitespace()
        .find(|part| part.starts_with("HeadlessChrome/") || part.starts_with("Chrome/"))
        .map_or_else(
            || user_agent.to_owned(),
            |part| part.replace("HeadlessChrome", "headless Chromium"),
        )
}

#[cfg(test)]
mod tests {
    use serde_json::Value;

    use super::*;

    fn report() -> CompareReport {
        let figures = |base: f64| {
            format!(
                "{{\"sequentialMs\": [{b}, {b}, {c}], \"inFlightMs\": [{d}], \"pageMs\": [{e}, {e}], \
                 \"coldStartMs\": [{f}], \"scriptLoadMs\": [{g}]}}",
                b = base,
                c = base * 3.0,
                d = base * 100.0,
                e = base * 50.0,
                f = base * 200.0,
                g = base * 20.0
            )
        };
        serde_json::from_str(&format!(
            "{{\"batch\": 10, \"inFlight\": 100, \"contenders\": {{\"echo\": {}, \"toolbridge\": {}, \
             \"penpal\": {}, \"comlink\": {}}}}}",
            figures(0.1),
            figures(0.12).replacen(
                '}',
                ", \"coldPhasesMs\": {\"fetch\": [1.5, 2.5, 2.0], \"compile\": [0.75]}}",
                1
            ),
            figures(0.2),
            figures(0.3)
        ))
        .unwrap()
    }

    fn sources() -> [Source; 4] {
        [
            ("MessageChannel echo", 0),
            ("toolbridge 2.1.0", 15_779),
            ("Penpal 7.0.6", 3_767),
            ("Comlink 4.4.2", 2_096),
        ]
        .map(|(label, gzip_bytes)| Source {
            label: label.to_owned(),
            gzip_bytes,
        })
    }

    const OPEN_QUOTE: OpenQuoteBudget = OpenQuoteBudget {
        first_ms: 412.34,
        first_index_bytes: Some(2_450_123),
        repeat_ms: 12.34,
        repeat_index_bytes: Some(0),
        repeat_status: Some(304),
    };

    const HOST_MODULE: HostModuleSizes = HostModuleSizes {
        wasm: ServedSize {
            raw: 923_518,
            gzip: 300_000,
            brotli: 236_212,
        },
        glue: ServedSize {
            raw: 59_665,
            gzip: 12_000,
            brotli: 10_500,
        },
    };

    const COLD_LOAD: ColdLoadBudget = ColdLoadBudget {
        first_ms: 652.34,
        repeat_ms: 141.26,
    };

    const SETTING: Setting = Setting {
        date: "2026-11-22",
        cpu: "a CPU",
        browser: "headless Chromium/1",
    };

    #[test]
    fn every_row_has_a_cell_per_contender_with_its_ratio_to_the_floor() {
        let comparison = Comparison::from_report(&report(), sources()).unwrap();
        let budgets = Budgets {
            add_lines_ms: 4.6,
            context_get_ratio: Some(1.21),
            rest_requests_per_sec: 2845.0,
            rest_p99_ms: 11.14,
            open_quote: OPEN_QUOTE,
            host_module: HOST_MODULE,
            cold_load: COLD_LOAD,
        };
        let markdown = comparison.markdown(&SETTING, &budgets);
        assert!(markdown.starts_with(
            "Measured 2026-11-22 by `cargo xtask bench` on a CPU, in headless Chromium/1, one \
             session."
        ));
        assert!(markdown.contains(
            "| | MessageChannel echo | toolbridge 2.1.0 | Penpal 7.0.6 | Comlink 4.4.2 |"
        ));
        assert!(
            markdown.contains("| call round trip, median (ms) | 0.100 (1.00×) | 0.120 (1.20×) | 0.200 (2.00×) | 0.300 (3.00×) |"),
            "{markdown}"
        );
        assert!(
            markdown.contains("| calls/s, one at a time | 10000 (1.00×) | 8333 (0.83×)"),
            "{markdown}"
        );
        assert!(
            markdown
                .contains("| what a tool loads, gzip -9 (bytes) | 0 | 15 779 | 3 767 | 2 096 |"),
            "{markdown}"
        );
        assert!(
            markdown.contains(
                "| of which loading and running the script, median (ms) | 2.000 (1.00×) | 2.400 \
                 (1.20×) | 4.000 (2.00×) | 6.000 (3.00×) |\n\
                 | cold start phase: fetching the script, median (ms) | – | 2.000 | – | – |\n\
                 | cold start phase: compiling it, median (ms) | – | 0.750 | – | – |\n\
                 | what a tool loads"
            ),
            "{markdown}"
        );
        assert!(markdown.contains("| 4.60 ms | ≤ 5 ms |"), "{markdown}");
        assert!(markdown.contains("| 1.21× | ≤ 1.5× |"), "{markdown}");
        assert!(
            markdown.contains("| 2845 requests/s, p99 11.1 ms |"),
            "{markdown}"
        );
        assert!(
            markdown.contains(
                "| opening a quote against 100 000 products, first open (the index downloaded), \
                 median | 412.3 ms; index 2 450 123 B | < 300 ms (goal) |\n\
                 | opening a quote against 100 000 products, repeat open (the index revalidated), \
                 median | 12.3 ms; index 0 B (304) | < 50 ms (goal) |\n\
                 | host module wasm (`toolbridge_host_bg.wasm`), raw / gzip -9 / brotli 11 | \
                 923 518 / 300 000 / 236 212 B | brotli ≤ 102 400 B (goal) |\n\
                 | host module glue (`toolbridge_host.js`), raw / gzip -9 / brotli 11 | 59 665 / \
                 12 000 / 10 500 B | – |\n\
                 | the app's cold load to the quote editor's lines (demo data), first visit \
                 (empty caches), median | 652.3 ms | < 500 ms (goal) |\n\
                 | the app's cold load to the quote editor's lines (demo data), repeat (warm HTTP \
                 cache, compiled code cached), median | 141.3 ms | < 150 ms (goal) |\n"
            ),
            "{markdown}"
        );
        let unmeasured = Budgets {
            open_quote: OpenQuoteBudget {
                first_index_bytes: None,
                ..OPEN_QUOTE
            },
            ..budgets
        };
        assert!(
            comparison
                .markdown(&SETTING, &unmeasured)
                .contains("| 412.3 ms | < 300 ms (goal) |")
        );
    }

    #[test]
    fn the_json_has_every_figure_with_its_ratio() {
        let comparison = Comparison::from_report(&report(), sources()).unwrap();
        let budgets = Budgets {
            add_lines_ms: 4.6,
            context_get_ratio: None,
            rest_requests_per_sec: 2845.04,
            rest_p99_ms: 11.14,
            open_quote: OPEN_QUOTE,
            host_module: HOST_MODULE,
            cold_load: COLD_LOAD,
        };
        let text = comparison.json(&SETTING, &budgets).unwrap();
        let parsed: Value = serde_json::from_str(&text).unwrap();
        assert_eq!(parsed["date"], "2026-11-22");
        assert_eq!(parsed["browser"], "headless Chromium/1");
        assert_eq!(parsed["batch"], 10);
        assert_eq!(parsed["in_flight"], 100);
        let penpal = &parsed["contenders"][2];
        assert_eq!(penpal["name"], "penpal");
        assert_eq!(penpal["label"], "Penpal 7.0.6");
        assert_eq!(penpal["call_ratio"].as_f64(), Some(2.0));
        assert_eq!(penpal["call"]["median_ms"].as_f64(), Some(0.2));
        assert_eq!(penpal["call"]["p99_ms"].as_f64(), Some(0.6));
        assert_eq!(penpal["call"]["samples"], 3);
        assert_eq!(penpal["page_500"]["median_ms"].as_f64(), Some(10.0));
        assert_eq!(penpal["gzip_bytes"], 3767);
        assert!(penpal.get("cold_phases").is_none());
        let phases = &parsed["contenders"][1]["cold_phases"];
        assert_eq!(phases[0]["phase"], "fetch");
        assert_eq!(phases[0]["median_ms"].as_f64(), Some(2.0));
        assert_eq!(phases[1]["phase"], "compile");
        assert_eq!(parsed["add_lines_1000_median_ms"].as_f64(), Some(4.6));
        assert_eq!(parsed["context_get_ratio"], Value::Null);
        assert_eq!(parsed["rest"]["requests_per_sec"].as_f64(), Some(2845.0));
        assert_eq!(
            parsed["open_quote"]["first_median_ms"].as_f64(),
            Some(412.34)
        );
        assert_eq!(parsed["open_quote"]["first_index_bytes"], 2_450_123);
        assert_eq!(parsed["open_quote"]["repeat_index_bytes"], 0);
        assert_eq!(parsed["host_module"]["wasm"]["brotli"], 236_212);
        assert_eq!(parsed["host_module"]["glue"]["raw"], 59_665);
        assert_eq!(parsed["host_module"]["wasm_brotli_goal"], 102_400);
        assert_eq!(
            parsed["app_cold_load"]["first_visit_median_ms"].as_f64(),
            Some(652.3)
        );
        assert_eq!(
            parsed["app_cold_load"]["repeat_median_ms"].as_f64(),
            Some(141.3)
        );
        // The keys in the order they always had.
        let order = [
            "\"date\"",
            "\"cpu\"",
            "\"browser\"",
            "\"batch\"",
            "\"in_flight\"",
            "\"contenders\"",
            "\"add_lines_1000_median_ms\"",
            "\"context_get_ratio\"",
            "\"rest\"",
            "\"open_quote\"",
            "\"host_module\"",
            "\"app_cold_load\"",
        ]
        .map(|key| text.find(key).unwrap());
        assert!(order.is_sorted(), "{text}");
    }

    #[test]
    fn a_missing_contender_or_empty_samples_are_named() {
        let mut report = report();
        report.contenders.remove("echo");
        let error = Comparison::from_report(&report, sources()).unwrap_err();
        assert!(error.to_string().contains("`echo`"), "{error}");

        let mut report = self::report();
        if let Some(penpal) = report.contenders.get_mut("penpal") {
            penpal.page.clear();
        }
        let error = Comparison::from_report(&report, sources()).unwrap_err();
        assert!(error.to_string().contains("`penpal.pageMs`"), "{error}");
    }

    #[test]
    fn the_browser_is_named_from_its_user_agent() {
        let agent = "Mozilla/5.0 (X11; Linux x86_64) AppleWebKit/537.36 (KHTML, like Gecko) HeadlessChrome/131.0.6778.85 Safari/537.36";
        assert_eq!(browser_version(agent), "headless Chromium/131.0.6778.85");
        assert_eq!(browser_version("Firefox"), "Firefox");
    }
}
