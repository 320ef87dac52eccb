//! `cargo xtask`: the project's own automation, in Rust so it runs wherever cargo does.
//!
//! `setup` installs the toolchain pieces the checks need, `test` runs every check suite and
//! prints their totals, `build` builds the artifacts, `bench` measures the budgets, `serve` runs
//! the local server.
//! Everything runs from the workspace root.

mod bench;
mod bridge_js;
mod browser;
mod build_cmd;
mod ctx;
mod docs;
mod error;
mod fuzz;
mod host_package;
mod js_tools;
mod native;
mod npm_package;
mod pins;
mod scratch;
mod serve;
mod server_build;
mod setup;
mod test;
mod wasm;

use std::env;
use std::process::ExitCode;

use crate::ctx::Ctx;
use crate::error::Error;
use crate::scratch::Scratch;

const USAGE: &str = "\
usage: cargo xtask <command>

commands:
  setup                   install what the checks need: the wasm32-unknown-unknown target,
                          wasm-bindgen-cli (the version Cargo.lock pins), wasm-pack, Chromium,
                          chromedriver, Firefox ESR, geckodriver, WebKitWebDriver with
                          WebKitGTK's MiniBrowser and Xvfb (webkit2gtk-driver, xvfb), wrk, the Node
                          tools pinned in sdk/js-tools (TypeScript, wasm-opt, terser, Penpal,
                          Comlink, Redoc, axe-core), the bundlers host/scratch-project pins (Vite,
                          webpack; npm ci in target/host-scratch-project), mdbook and lychee,
                          schemathesis (in a Python virtualenv under target/tools), and
                          sdk/dist/bridge.js when it is missing; re-running installs nothing
  test [--fuzz] [--long] [--only TEXT]
                          run setup, then every check suite (fmt, clippy, native tests, wasm32
                          builds, the SDK and the host module in Chromium, Firefox and WebKit
                          (MiniBrowser on an Xvfb display the suite starts and stops), the
                          typings, the npm packages (the SDK's in a scratch TypeScript project,
                          the host's built into a page by Vite and webpack), the example
                          tools' own tests, the documentation's links and examples, the app end
                          to end, API conformance, the release
                          server killed mid-write); ends with `N passed, N failed` (--fuzz adds the
                          fuzz targets, 60 s each; --long runs them 5 min each and adds the
                          release server under load with faults; --only runs just the suites
                          whose name contains TEXT, e.g. --only 'host in chromium')
  build                   build the workspace, the protocol crate for wasm32, the SDK as
                          sdk/dist/bridge.js with sdk/dist/bridge.d.ts, the host module in
                          host/dist, the npm packages in target/npm: @toolbridge/sdk
                          (bridge.js, its types and the test kit) as
                          toolbridge-sdk-<SDK version>.tgz and @toolbridge/host (the host
                          module for bundlers) as toolbridge-host-<crate version>.tgz,
                          the documentation (the book and the API reference) in docs/book,
                          and the release server, which carries them
  docs                    build the documentation alone into docs/book: the book (docs/src, with
                          mdBook), the error code page and the API reference page
  bench [--quick]         measure the budgets: bridge.js size (gzip -9), the host module's
                          bytes (raw, gzip -9, brotli), its addLines, context.get() and opening
                          a quote in Chromium (against the release server with 100 000
                          products), the app's cold load to the quote editor in Chromium (first
                          visit and repeat, demo data), and the REST API under load (wrk against
                          the release server); also in target/bench/bench.json; and toolbridge
                          side by side with Penpal, Comlink and a bare MessageChannel echo in
                          the same Chromium session, in target/bench/compare.md and
                          compare.json (--quick: a 3 s load, not 10 s, 30 host samples, not
                          100, 5 cold loads of each kind, not 15); runs the part of setup it
                          uses first (not Firefox or schemathesis)
  serve [ARGS]            run the part of setup the builds use (no browsers, no schemathesis),
                          then the builds, then the toolbridge server on
                          http://localhost:8080 with demo data (database in target/serve/)
                          and the documentation at http://localhost:8080/docs/;
                          ARGS go to `toolbridge serve`, e.g. --port 9000
  help                    print this text
";

fn main() -> ExitCode {
    let args: Result<Vec<String>, _> = env::args_os()
        .skip(1)
        .map(std::ffi::OsString::into_string)
        .collect();
    let result = match args {
        Ok(args) => dispatch(&args),
        Err(arg) => Err(Error::usage(format!(
            "argument {} is not valid UTF-8",
            arg.to_string_lossy()
        ))),
    };
    match result {
        Ok(code) => code,
        Err(Error::Usage(message)) => {
            eprintln!("xtask: {message}\n");
            eprint!("{USAGE}");
            ExitCode::from(2)
        }
        Err(error) => {
            eprintln!("xtask: error: {error}");
            ExitCode::FAILURE
        }
    }
}

fn dispatch(args: &[String]) -> Result<ExitCode, Error> {
    let Some((command, rest)) = args.split_first() else {
        print!("{USAGE}");
        return Ok(ExitCode::SUCCESS);
    };
    match command.as_str() {
        "help" | "--help" | "-h" => {
            no_arguments(command, rest)?;
            print!("{USAGE}");
            Ok(ExitCode::SUCCESS)
        }
        "setup" => {
            no_arguments(command, rest)?;
            setup::run(&Ctx::new()?, setup::Purpose::Everything).map(|()| ExitCode::SUCCESS)
        }
        "test" => {
            let scratch = Scratch::create()?;
            let ctx = Ctx::new()?.with_temp_dir(scratch.path());
            Ok(if test::run(&ctx, rest)? {
                ExitCode::SUCCESS
            } else {
                ExitCode::FAILURE
            })
        }
        "build" => {
            no_arguments(command, rest)?;
            build_cmd::run(&Ctx::new()?).map(|()| ExitCode::SUCCESS)
        }
        "docs" => {
            no_arguments(command, rest)?;
            let ctx = Ctx::new()?;
            let book = docs::build(&ctx)?;
            println!(
                "docs: built {}; a running server serves it at /docs/ (with --docs-dir {0} it \
                 serves this copy at once)",
                ctx.shown(&book)
            );
            Ok(ExitCode::SUCCESS)
        }
        "bench" => {
            let scratch = Scratch::create()?;
            let ctx = Ctx::new()?.with_temp_dir(scratch.path());
            bench::run(&ctx, rest).map(|()| ExitCode::SUCCESS)
        }
        "serve" => serve::run(&Ctx::new()?, rest).map(|()| ExitCode::SUCCESS),
        other => Err(Error::usage(format!("unknown command `{other}`"))),
    }
}

fn no_arguments(command: &str, rest: &[String]) -> Result<(), Error> {
    match rest.first() {
        None => Ok(()),
        Some(extra) => Err(Error::usage(format!(
            "`{command}` takes no arguments, got `{extra}`"
        ))),
    }
}
