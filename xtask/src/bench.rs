//! `cargo xtask bench [--quick]`: measures the budgets of DESIGN.md §8 and reports them on the
//! terminal and in `target/bench/bench.json`. Being over a budget is reported (as OVER), not an
//! error.
//!
//! The size of `bridge.js` after `gzip -9` (with its wasm and glue parts alone, so that the size
//! can be worked on), the host module's `addLines` and `context.get()` in Chromium
//! ([`crate::host_bench`]), and the REST API under load ([`crate::load`]); then toolbridge side
//! by side with Penpal, Comlink and a bare echo, measured in the same Chromium session, with those
//! budgets, as `compare.md` and `compare.json` ([`crate::compare`]).

use std::fmt::Write as _;
use std::fs;
use std::path::Path;
use std::time::Instant;

use crate::bridge_js;
use crate::compare::{self, Budgets, Comparison, Source};
use crate::error::Error;
use crate::files::{create_dir, read, write};
use crate::host_bench::{self, HostFigures};
use crate::js_tools;
use crate::json;
use crate::load;
use crate::process::{self, Ctx};
use crate::server_build::BackgroundBuild;
use crate::setup;
use crate::toolbridge_server::Profile;

/// The budget for `bridge.js` after `gzip -9`, in bytes.
const BRIDGE_JS_GZIP_BUDGET: u64 = 16 * 1024;

/// The raw and `gzip -9` size of one file.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
struct Size {
    raw: u64,
    gzip: u64,
}

/// Runs the benchmarks; `--quick` shortens the load test from 10 s to 3 s and takes 30 samples of
/// each host figure instead of 100.
pub(crate) fn run(ctx: &Ctx, args: &[String]) -> Result<(), Error> {
    for arg in args {
        if arg != "--quick" {
            return Err(Error::usage(format!("`bench` does not take `{arg}`")));
        }
    }
    let started = Instant::now();
    let quick = !args.is_empty();
    let (seconds, host_samples) = if quick { (3, 30) } else { (10, 100) };
    let bench_dir = ctx.target_dir().join("bench");
    create_dir(&bench_dir)?;
    // The release server is the longest build, and it needs nothing that setup installs, nor the
    // SDK's and the host's wasm builds; so it builds alongside all of them.
    let mut server = BackgroundBuild::start(
        ctx,
        "bench",
        Profile::Release,
        bench_dir.join("server-build.log"),
    )?;
    // Everything the bench runs (wasm-bindgen, Chromium and its driver, wrk, the npm packages
    // with Penpal and Comlink) is installed first when missing, as `serve` and `test` do, so
    // that the bench runs from a fresh clone.
    println!("bench: checking the toolchain (cargo xtask setup)");
    if !setup::run(ctx, setup::Purpose::Bench) {
        return Err(Error::failed(
            "setup is incomplete: see the FAILED lines above",
        ));
    }

    // The builds in the foreground give way to the server's, whose last crates build one at a
    // time: they run when it leaves a core idle.
    let yielding = ctx.yielding();
    let script = bridge_js::build(&yielding)?;
    let pieces = bridge_js::pieces(ctx);

    // The module as bridge.js carries it: hex text, which gzip shrinks a little less than the
    // binary.
    let wasm = read(&pieces.wasm)?;
    let inlined = bench_dir.join("bridge-wasm.hex");
    write(&inlined, hex::encode(&wasm).as_bytes())?;

    let bridge = size(ctx, &script)?;
    let parts = [
        ("wasm", size(ctx, &pieces.wasm)?),
        ("wasm_hex", size(ctx, &inlined)?),
        ("glue", size(ctx, &pieces.glue)?),
    ];
    let over = bridge.gzip > BRIDGE_JS_GZIP_BUDGET;

    println!();
    println!(
        "bridge.js  raw {} bytes  gzip -9 {} bytes  budget {BRIDGE_JS_GZIP_BUDGET}  ({})",
        bridge.raw,
        bridge.gzip,
        if over { "OVER" } else { "ok" }
    );
    for (name, part) in parts {
        println!(
            "  {name:<16} raw {:>7} bytes  gzip -9 {:>6} bytes",
            part.raw, part.gzip
        );
    }

    let host = host_bench::measure(ctx, &yielding, host_samples, &mut server)?;
    println!();
    for line in host.lines() {
        println!("{line}");
    }

    let rest = load::measure(ctx, server.wait(ctx, "bench")?, seconds)?;
    println!(
        "REST GET {}  {:.0} requests/s  p99 {:.2} ms  budget >= {:.0} requests/s, p99 <= {:.0} ms  ({})",
        load::PATH,
        rest.requests_per_sec,
        rest.p99_ms,
        load::MIN_REQUESTS_PER_SEC,
        load::MAX_P99_MS,
        if rest.within_budget() { "ok" } else { "OVER" }
    );

    let budgets = Budgets {
        add_lines_ms: host.add_lines_ms,
        context_get_ratio: host.ratio(),
        rest_requests_per_sec: rest.requests_per_sec,
        rest_p99_ms: rest.p99_ms,
    };
    compare(ctx, &host, bridge.gzip, &budgets, &bench_dir)?;

    let json_path = bench_dir.join("bench.json");
    let json = report_json(bridge, over, &parts, &host, rest);
    write(&json_path, json.as_bytes())?;
    println!("bench: wrote {}", ctx.shown(&json_path));
    println!("bench: done in {:.0} s", started.elapsed().as_secs_f64());
    Ok(())
}

/// toolbridge next to Penpal, Comlink and the bare echo, from the host bench's report: printed,
/// and written as `compare.md` and `compare.json` in `bench_dir`.
fn compare(
    ctx: &Ctx,
    host: &HostFigures,
    bridge_gzip: u64,
    budgets: &Budgets,
    bench_dir: &Path,
) -> Result<(), Error> {
    let library = |tool: js_tools::Tool, name: &str| -> Result<Source, Error> {
        let version = js_tools::installed_version(ctx.root(), tool).unwrap_or_default();
        let path = js_tools::script_file(ctx, tool).map_err(Error::failed)?;
        Ok(Source {
            label: format!("{name} {version}"),
            gzip_bytes: size(ctx, &path)?.gzip,
        })
    };
    // In the order of `compare::CONTENDERS`.
    let sources = [
        Source {
            label: "MessageChannel echo".to_owned(),
            gzip_bytes: 0,
        },
        Source {
            label: format!("toolbridge {}", bridge_js::sdk_version(ctx.root())?),
            gzip_bytes: bridge_gzip,
        },
        library(js_tools::PENPAL, "Penpal")?,
        library(js_tools::COMLINK, "Comlink")?,
    ];
    let comparison = Comparison::from_report(&host.compare, sources)?;
    let date = String::from_utf8_lossy(&process::capture(ctx.command("date").args(["-u", "+%F"]))?)
        .trim()
        .to_owned();
    let cpu = compare::cpu_model();
    let browser = compare::browser_version(&host.browser);
    let markdown = comparison.markdown(&date, &cpu, &browser, budgets);
    println!();
    println!("{markdown}");
    for (name, text) in [
        ("compare.md", markdown),
        (
            "compare.json",
            comparison.json(&date, &cpu, &browser, budgets),
        ),
    ] {
        let path = bench_dir.join(name);
        write(&path, text.as_bytes())?;
        println!("bench: wrote {}", ctx.shown(&path));
    }
    Ok(())
}

/// The sizes of `path`: on disk, and of `gzip -9 -c path`'s output.
fn size(ctx: &Ctx, path: &Path) -> Result<Size, Error> {
    let raw = fs::metadata(path)
        .map_err(|e| Error::failed(format!("cannot read {}: {e}", path.display())))?
        .len();
    if ctx.find("gzip").is_none() {
        return Err(Error::failed("gzip not found; install it (Debian: gzip)"));
    }
    let compressed = process::capture(ctx.command("gzip").arg("-9").arg("-c").arg(path))?;
    let gzip = u64::try_from(compressed.len())
        .map_err(|e| Error::failed(format!("gzip output size: {e}")))?;
    Ok(Size { raw, gzip })
}

/// The report as JSON: bridge.js with its budget, each part, the host figures, then the REST
/// figure.
fn report_json(
    bridge: Size,
    over: bool,
    parts: &[(&str, Size)],
    host: &HostFigures,
    rest: load::Load,
) -> String {
    let mut json = format!(
        "{{\n  \"bridge_js\": {{\"raw\": {}, \"gzip\": {}, \"gzip_budget\": \
         {BRIDGE_JS_GZIP_BUDGET}, \"over\": {over}}},\n",
        bridge.raw, bridge.gzip
    );
    let entries: Vec<String> = parts
        .iter()
        .map(|(name, part)| {
            format!(
                "    \"{name}\": {{\"raw\": {}, \"gzip\": {}}}",
                part.raw, part.gzip
            )
        })
        .collect();
    json.push_str("  \"bridge_js_parts\": {\n");
    json.push_str(&entries.join(",\n"));
    json.push_str("\n  },\n");
    let _ = writeln!(
        json,
        "  \"host_add_lines_1000\": {{\"median_ms\": {:.3}, \"samples\": {}, \
         \"catalog_products\": {}, \"max_median_ms\": {}, \"within_budget\": {}}},",
        host.add_lines_ms,
        host.samples,
        host.catalog_products,
        host_bench::MAX_ADD_LINES_MS,
        host.add_lines_within_budget()
    );
    let _ = writeln!(
        json,
        "  \"host_context_get\": {{\"median_ms\": {:.3}, \"host_median_ms\": {:.3}, \
         \"echo_median_ms\": {:.3}, \"ratio\": {}, \"max_ratio\": {}, \"samples\": {}, \
         \"within_budget\": {}}},",
        host.context_get_ms,
        host.context_get_host_ms,
        host.echo_ms,
        host.ratio()
            .map_or_else(|| "null".to_owned(), |ratio| format!("{ratio:.3}")),
        host_bench::MAX_CONTEXT_GET_RATIO,
        host.samples,
        host.context_get_within_budget()
    );
    let _ = writeln!(json, "  \"host_browser\": {},", json::quote(&host.browser));
    let _ = writeln!(
        json,
        "  \"rest_products_500\": {{\"requests_per_sec\": {:.1}, \"p99_ms\": {:.2}, \
         \"min_requests_per_sec\": {}, \"max_p99_ms\": {}, \"within_budget\": {}}}\n}}",
        rest.requests_per_sec,
        rest.p99_ms,
        load::MIN_REQUESTS_PER_SEC,
        load::MAX_P99_MS,
        rest.within_budget()
    );
    json
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_json_report_lists_the_budget_and_every_part() {
        let json = report_json(
            Size {
                raw: 60_000,
                gzip: 17_000,
            },
            true,
            &[
                ("wasm", Size { raw: 40, gzip: 30 }),
                ("glue", Size { raw: 20, gzip: 10 }),
            ],
            &HostFigures {
                add_lines_ms: 2.1,
                context_get_ms: 0.21,
                context_get_host_ms: 0.02,
                echo_ms: 0.15,
                samples: 100,
                catalog_products: 100_000,
                browser: "HeadlessChrome \"1\"".to_owned(),
                compare: json::Value::Null,
            },
            load::Load {
                requests_per_sec: 1500.25,
                p99_ms: 12.5,
            },
        );
        assert_eq!(
            json,
            "{\n  \"bridge_js\": {\"raw\": 60000, \"gzip\": 17000, \"gzip_budget\": 16384, \
             \"over\": true},\n  \"bridge_js_parts\": {\n    \"wasm\": {\"raw\": 40, \"gzip\": 30},\
             \n    \"glue\": {\"raw\": 20, \"gzip\": 10}\n  },\n  \"host_add_lines_1000\": \
             {\"median_ms\": 2.100, \"samples\": 100, \"catalog_products\": 100000, \
             \"max_median_ms\": 5, \"within_budget\": true},\n  \"host_context_get\": \
             {\"median_ms\": 0.210, \"host_median_ms\": 0.020, \"echo_median_ms\": 0.150, \"ratio\": 1.400, \
             \"max_ratio\": 1.5, \"samples\": 100, \"within_budget\": true},\n  \
             \"host_browser\": \"HeadlessChrome \\\"1\\\"\",\n  \"rest_products_500\": \
             {\"requests_per_sec\": 1500.2, \"p99_ms\": 12.50, \"min_requests_per_sec\": 1000, \
             \"max_p99_ms\": 25, \"within_budget\": true}\n}\n"
        );
    }
}
