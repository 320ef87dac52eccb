//! `cargo xtask bench [--quick]`: measures the budgets of DESIGN.md §8 that exist so far and
//! reports them on the terminal and in `target/bench/bench.json`. Being over a budget is
//! reported (as OVER), not an error.
//!
//! So far: the size of `bridge.js` after `gzip -9` (with its wasm and glue parts alone, so that
//! the size can be worked on), and the REST API under load ([`crate::load`]).

use std::fmt::Write as _;
use std::fs;
use std::path::Path;

use crate::base64;
use crate::bridge_js;
use crate::error::Error;
use crate::files::{create_dir, read, write};
use crate::load;
use crate::pins::WASM_TARGET;
use crate::process::{self, Ctx};
use crate::setup;

/// The budget for `bridge.js` after `gzip -9`, in bytes.
const BRIDGE_JS_GZIP_BUDGET: u64 = 16 * 1024;

/// The raw and `gzip -9` size of one file.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
struct Size {
    raw: u64,
    gzip: u64,
}

/// Runs the benchmarks; `--quick` shortens the load test from 10 s to 3 s.
pub(crate) fn run(ctx: &Ctx, args: &[String]) -> Result<(), Error> {
    for arg in args {
        if arg != "--quick" {
            return Err(Error::usage(format!("`bench` does not take `{arg}`")));
        }
    }
    let seconds = if args.is_empty() { 10 } else { 3 };
    if !setup::ensure_wasm_target(ctx) {
        return Err(Error::failed(format!(
            "the {WASM_TARGET} target is missing; run `cargo xtask setup`"
        )));
    }

    let script = bridge_js::build(ctx)?;
    let pieces = bridge_js::pieces(ctx);
    let bench_dir = ctx.target_dir().join("bench");
    create_dir(&bench_dir)?;

    // The module as bridge.js carries it: base64 text, which gzip shrinks less than the binary.
    let wasm = read(&pieces.wasm)?;
    let inlined = bench_dir.join("bridge-wasm.base64");
    write(&inlined, base64::encode(&wasm).as_bytes())?;

    let bridge = size(ctx, &script)?;
    let parts = [
        ("wasm", size(ctx, &pieces.wasm)?),
        ("wasm_base64", size(ctx, &inlined)?),
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

    let rest = load::measure(ctx, seconds)?;
    println!(
        "REST GET {}  {:.0} requests/s  p99 {:.2} ms  budget >= {:.0} requests/s, p99 <= {:.0} ms  ({})",
        load::PATH,
        rest.requests_per_sec,
        rest.p99_ms,
        load::MIN_REQUESTS_PER_SEC,
        load::MAX_P99_MS,
        if rest.within_budget() { "ok" } else { "OVER" }
    );

    let json_path = bench_dir.join("bench.json");
    let json = report_json(bridge, over, &parts, rest);
    write(&json_path, json.as_bytes())?;
    println!("bench: wrote {}", ctx.shown(&json_path));
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

/// The report as JSON: bridge.js with its budget, each part, then the REST figure.
fn report_json(bridge: Size, over: bool, parts: &[(&str, Size)], rest: load::Load) -> String {
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
            load::Load {
                requests_per_sec: 1500.25,
                p99_ms: 12.5,
            },
        );
        assert_eq!(
            json,
            "{\n  \"bridge_js\": {\"raw\": 60000, \"gzip\": 17000, \"gzip_budget\": 16384, \
             \"over\": true},\n  \"bridge_js_parts\": {\n    \"wasm\": {\"raw\": 40, \"gzip\": 30},\
             \n    \"glue\": {\"raw\": 20, \"gzip\": 10}\n  },\n  \"rest_products_500\": \
             {\"requests_per_sec\": 1500.2, \"p99_ms\": 12.50, \"min_requests_per_sec\": 1000, \
             \"max_p99_ms\": 25, \"within_budget\": true}\n}\n"
        );
    }
}
