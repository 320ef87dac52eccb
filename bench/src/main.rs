//! `toolbridge-bench`: the measurements of `cargo xtask bench`, against the budgets of DESIGN.md
//! §8, printed and written to `OUT/bench.json`, with toolbridge side by side with Penpal, Comlink
//! and a bare echo in `OUT/compare.md` and `OUT/compare.json`. Being over a budget is reported
//! (as OVER), not an error.
//!
//! It measures what `cargo xtask bench` built, named on its command line: the size of bridge.js
//! after `gzip -9` (`SDK_DIR/bridge.js`, with its `--wasm` module, that module as hex text and
//! its `--glue` alone), and of the host module in `--host-dist` (raw, gzip -9 and brotli); the
//! host module's figures in Chromium, from the host's `bench` test, which is the command after
//! `--` (it is built with `--no-run` first, then run: see [`host`]), opening a quote among them
//! ([`open_quote`]); the reference app's cold load in Chromium, first visit and repeat, over
//! `WebDriver` with the driver `CHROMEDRIVER` names ([`cold_load`]); the REST API under `wrk`
//! ([`load`]); and the bytes the server sends over HTTP, identity, brotli and gzip, for bridge.js, the host module, a page of
//! 500 products and the catalog index ([`transfer`], with `curl`). The toolbridge server is the release binary `--server`; with
//! `--server -` the bench reads its path from standard input when it first needs it, so that it
//! can build the bench test while the server still builds (`cargo xtask bench` writes the path
//! once its background build has finished, and closes standard input if that build fails).
//! `gzip`, `curl`, `nice` and `wrk` are found on `PATH`.

mod cold_load;
mod compare;
mod error;
mod figures;
mod host;
mod load;
mod open_quote;
mod process;
mod report;
mod sizes;
mod transfer;

use std::ffi::OsString;
use std::path::{Path, PathBuf};
use std::process::ExitCode;

use clap::Parser;

use crate::compare::{
    Budgets, ColdLoadBudget, Comparison, OpenQuoteBudget, Setting, Source, browser_version,
    cpu_model,
};
use crate::error::Error;
use crate::host::{HostBench, ServerBinary};
use crate::report::Measured;
use crate::sizes::{BridgeSizes, HostModuleSizes, size};

/// The command line.
#[derive(Parser)]
#[command(
    name = "toolbridge-bench",
    about = "Measures bridge.js, the host module in Chromium and the REST API against their \
             budgets, and toolbridge beside Penpal and Comlink (run by `cargo xtask bench`)"
)]
struct Args {
    /// Take 30 host samples instead of 100, 5 cold loads of the app of each kind instead of 15,
    /// and load the REST API for 3 s instead of 10.
    #[arg(long)]
    quick: bool,
    /// Where the reports, the hex text of the module and the servers' databases and logs go.
    #[arg(long, value_name = "DIR")]
    out: PathBuf,
    /// The release `toolbridge` binary, or `-` to read its path from standard input when the
    /// bench first needs it.
    #[arg(long, value_name = "PATH")]
    server: PathBuf,
    /// The built SDK: its `bridge.js` is measured, and the server serves it to the test pages.
    #[arg(long, value_name = "DIR")]
    sdk_dir: PathBuf,
    /// The SDK's version, for the comparison's label.
    #[arg(long, value_name = "VERSION")]
    sdk_version: String,
    /// The SDK's wasm module as bridge.js carries it (after wasm-opt).
    #[arg(long, value_name = "FILE")]
    wasm: PathBuf,
    /// bridge.js's JavaScript glue (minified).
    #[arg(long, value_name = "FILE")]
    glue: PathBuf,
    /// The built host module the server serves (`host/dist`): the size of its wasm and glue is
    /// measured.
    #[arg(long, value_name = "DIR")]
    host_dist: PathBuf,
    /// Penpal's browser build, which the bench pages load.
    #[arg(long, value_name = "FILE")]
    penpal: PathBuf,
    /// Penpal's version, for the comparison's label.
    #[arg(long, value_name = "VERSION")]
    penpal_version: String,
    /// Comlink's browser build, which the bench pages load.
    #[arg(long, value_name = "FILE")]
    comlink: PathBuf,
    /// Comlink's version, for the comparison's label.
    #[arg(long, value_name = "VERSION")]
    comlink_version: String,
    /// The command that builds and runs the host's bench test in Chromium, e.g. `cargo test -p
    /// toolbridge-host --target wasm32-unknown-unknown --profile host-release --test bench`, with
    /// the driver and the test runner in its environment.
    #[arg(last = true, required = true, value_name = "HOST-BENCH-COMMAND")]
    host_bench: Vec<OsString>,
}

fn main() -> ExitCode {
    match run(&Args::parse()) {
        Ok(()) => ExitCode::SUCCESS,
        Err(error) => {
            eprintln!("bench: error: {}", toolbridge_e2e::error::chain(&error));
            ExitCode::FAILURE
        }
    }
}

fn run(args: &Args) -> Result<(), Error> {
    let (seconds, host_samples, cold_samples) = if args.quick {
        (3, 30, 5)
    } else {
        (10, 100, 15)
    };
    fs_err::create_dir_all(&args.out)?;
    let mut server = ServerBinary::new(args.server.clone());

    let sizes = BridgeSizes::measure(
        &args.sdk_dir.join("bridge.js"),
        &args.wasm,
        &args.glue,
        &args.out.join("bridge-wasm.hex"),
    )?;
    let host_module = HostModuleSizes::measure(&args.host_dist)?;
    print_lines(sizes.lines().into_iter().chain(host_module.lines()));

    let (host, transfers) = host::measure(
        &HostBench {
            command: &args.host_bench,
            samples: host_samples,
            dir: args.out.join("host"),
            sdk_dir: args.sdk_dir.clone(),
            penpal: &args.penpal,
            comlink: &args.comlink,
        },
        &mut server,
    )?;
    print_lines(
        host.lines()
            .into_iter()
            .chain(host.open_quote.lines(host.catalog_products)),
    );
    print_lines(transfers.lines());

    let cold_load = cold_load::measure(&server.path()?, &args.out.join("cold-load"), cold_samples)?;
    print_lines(cold_load.lines());

    let rest = load::measure(&server.path()?, &args.out.join("rest"), seconds)?;
    print_lines(rest.lines());

    let budgets = Budgets {
        add_lines_ms: host.add_lines_ms,
        context_get_ratio: host.ratio(),
        rest_requests_per_sec: rest.sqlite.requests_per_sec,
        rest_p99_ms: rest.sqlite.p99_ms,
        open_quote: OpenQuoteBudget::of(&host.open_quote),
        host_module,
        cold_load: ColdLoadBudget::of(&cold_load),
    };
    // In the order of `compare::CONTENDERS`.
    let sources = [
        Source {
            label: "MessageChannel echo".to_owned(),
            gzip_bytes: 0,
        },
        Source {
            label: format!("toolbridge {}", args.sdk_version),
            gzip_bytes: sizes.bridge.gzip,
        },
        library("Penpal", &args.penpal_version, &args.penpal)?,
        library("Comlink", &args.comlink_version, &args.comlink)?,
    ];
    let comparison = Comparison::from_report(&host.compare, sources)?;
    let date = time::OffsetDateTime::now_utc().date().to_string();
    let cpu = cpu_model();
    let browser = browser_version(&host.browser);
    let setting = Setting {
        date: &date,
        cpu: &cpu,
        browser: &browser,
    };
    let markdown = comparison.markdown(&setting, &budgets);
    println!();
    println!("{markdown}");
    write(&args.out.join("compare.md"), &markdown)?;
    write(
        &args.out.join("compare.json"),
        &comparison.json(&setting, &budgets)?,
    )?;
    write(
        &args.out.join("bench.json"),
        &report::json(&Measured {
            sizes: &sizes,
            host_module: &host_module,
            host: &host,
            cold_load: &cold_load,
            rest: &rest,
            transfers: &transfers,
        })?,
    )?;
    Ok(())
}

/// A library toolbridge is compared with: its label and the gzip -9 size of its `script`.
fn library(name: &str, version: &str, script: &Path) -> Result<Source, Error> {
    Ok(Source {
        label: format!("{name} {version}"),
        gzip_bytes: size(script)?.gzip,
    })
}

/// Prints an empty line, then `lines`.
fn print_lines(lines: impl IntoIterator<Item = String>) {
    println!();
    for line in lines {
        println!("{line}");
    }
}

/// Writes `text` to `path` and says so.
fn write(path: &Path, text: &str) -> Result<(), Error> {
    fs_err::write(path, text)?;
    println!("bench: wrote {}", path.display());
    Ok(())
}
