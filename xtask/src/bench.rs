//! `cargo xtask bench [--quick]`: builds what the bench measures and runs the bench binary
//! (`bench/`, package `toolbridge-bench`) on it, which measures the budgets of DESIGN.md §8 and
//! writes `target/bench/bench.json`, `compare.md` and `compare.json`.
//!
//! The release server, the longest build, builds in the background from the start. Meanwhile
//! setup runs, then bridge.js, the host module (`host/dist`, whose bytes the bench measures and
//! which the server serves to the app's cold load) and the bench binary build at a lower
//! priority, and the bench
//! starts with `--server -`: it measures bridge.js and builds the host's bench test (whose
//! addresses are compiled in, so the bench reserves the ports first) while the server builds,
//! and reads the server's path from its standard input, which gets it here once the build has
//! finished (or is closed if the build fails).

use std::io::Write as _;
use std::process::{Child, Command, Stdio};
use std::thread::sleep;
use std::time::{Duration, Instant};

use crate::browser::{self, CHROMIUM};
use crate::ctx::Ctx;
use crate::error::Error;
use crate::js_tools::{self, Tool};
use crate::server_build::BackgroundBuild;
use crate::{bridge_js, setup, wasm};

/// Runs the bench; `--quick` shortens the load test from 10 s to 3 s, takes 30 samples of
/// each host figure instead of 100 and 5 cold loads of the app of each kind instead of 15.
pub(crate) fn run(ctx: &Ctx, args: &[String]) -> Result<(), Error> {
    if let Some(arg) = args.iter().find(|arg| *arg != "--quick") {
        return Err(Error::usage(format!("`bench` does not take `{arg}`")));
    }
    let started = Instant::now();
    let bench_dir = ctx.target_dir().join("bench");
    ctx.sh().create_dir(&bench_dir)?;
    // The release server needs nothing that setup installs, nor the other builds.
    let mut server = BackgroundBuild::start(ctx, bench_dir.join("server-build.log"))?;
    // Everything the bench runs (wasm-bindgen, Chromium and its driver, wrk, the npm packages
    // with Penpal and Comlink) is installed first when missing, so that it runs from a fresh
    // clone.
    println!("bench: checking the toolchain (cargo xtask setup)");
    setup::run(ctx, setup::Purpose::Bench)?;

    // The builds in the foreground give way to the server's, whose last crates build one at a
    // time: they run when it leaves a core idle.
    let yielding = ctx.yielding();
    bridge_js::build(&yielding)?;
    // The host module the server serves (`host/dist`), whose bytes the bench measures and whose
    // load the app's cold load times.
    wasm::host_module(&yielding)?;
    let pieces = bridge_js::pieces(ctx);
    yielding
        .cargo()
        .args(["build", "-p", "toolbridge-bench"])
        .run()?;

    // The host's bench test in Chromium, built with the profile the shipped host module is
    // built with, so that the figures are the module's.
    let host = browser::wasm_test_command(ctx, &CHROMIUM, "toolbridge-host", 300)?.args([
        "--profile",
        wasm::HOST_PROFILE,
        "--test",
        "bench",
    ]);
    let host = Command::from(host);
    let library = |tool: Tool| -> Result<(String, String), Error> {
        let script = ctx.shown(&js_tools::script(ctx, tool)?);
        Ok((
            script,
            js_tools::installed_version(ctx, tool).unwrap_or_default(),
        ))
    };
    let (penpal, penpal_version) = library(js_tools::PENPAL)?;
    let (comlink, comlink_version) = library(js_tools::COMLINK)?;
    let mut bench = Command::new(ctx.target_dir().join("debug/toolbridge-bench"));
    bench
        .current_dir(ctx.root())
        .args(args)
        .args(["--out", &ctx.shown(&bench_dir), "--server", "-"])
        .args(["--sdk-dir", &ctx.shown(&bridge_js::dist_dir(ctx))])
        .args(["--sdk-version", &bridge_js::sdk_version(ctx)?])
        .args(["--wasm", &ctx.shown(&pieces.wasm)])
        .args(["--glue", &ctx.shown(&pieces.glue)])
        .args(["--host-dist", &ctx.shown(&wasm::host_dist(ctx))])
        .args(["--penpal", &penpal, "--penpal-version", &penpal_version])
        .args(["--comlink", &comlink, "--comlink-version", &comlink_version])
        .arg("--")
        .arg(host.get_program())
        .args(host.get_args())
        .stdin(Stdio::piped());
    // The bench runs the host's command with the environment it inherits.
    for (name, value) in host.get_envs() {
        match value {
            Some(value) => bench.env(name, value),
            None => bench.env_remove(name),
        };
    }
    println!("$ {bench:?}");
    let mut child = bench
        .spawn()
        .map_err(|e| Error::failed(format!("cannot start the bench: {e}")))?;
    let built = hand_over_server(ctx, &mut server, &mut child);
    let status = child
        .wait()
        .map_err(|e| Error::failed(format!("cannot wait for the bench: {e}")))?;
    // A failed server build is why the bench failed, if it did.
    built?;
    if !status.success() {
        return Err(Error::failed(format!(
            "the bench failed ({status}); see its output above"
        )));
    }
    println!("bench: done in {:.0} s", started.elapsed().as_secs_f64());
    Ok(())
}

/// Waits until the server build has finished and writes the binary's path to the bench's
/// standard input, or closes it when the build failed (the result is then the build's error).
/// When the bench ends first (it failed before it needed the server), stops waiting.
fn hand_over_server(
    ctx: &Ctx,
    server: &mut BackgroundBuild,
    bench: &mut Child,
) -> Result<(), Error> {
    let mut stdin = bench.stdin.take();
    while !server.is_finished() {
        if let Ok(Some(_)) = bench.try_wait() {
            return Ok(());
        }
        sleep(Duration::from_millis(100));
    }
    let binary = server.wait(ctx)?;
    if let Some(pipe) = stdin.as_mut() {
        // A bench that has ended already has nobody to read it: its exit status says why.
        let _ = writeln!(pipe, "{}", ctx.shown(&binary));
    }
    Ok(())
}
