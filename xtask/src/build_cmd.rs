//! `cargo xtask build`: every build artifact of the workspace, in order.
//!
//! A new artifact (the host module, say) is one more entry in [`BUILDS`].

use crate::bridge_js;
use crate::error::Error;
use crate::host_module;
use crate::npm_package;
use crate::pins::WASM_TARGET;
use crate::process::{Ctx, run_step};
use crate::setup;

/// One artifact: what it is, and how to build it (returning where it was put).
struct Build {
    what: &'static str,
    run: fn(&Ctx) -> Result<String, Error>,
}

/// Every build, in the order they run.
const BUILDS: &[Build] = &[
    Build {
        what: "workspace (native, debug)",
        run: workspace,
    },
    Build {
        what: "toolbridge-protocol for wasm32",
        run: protocol_wasm32,
    },
    Build {
        what: "bridge.js and bridge.d.ts",
        run: bridge_js,
    },
    Build {
        what: "host module (ES module + wasm)",
        run: host_module,
    },
    Build {
        what: "npm package @toolbridge/sdk",
        run: npm_package,
    },
];

/// Runs every build and says what it built; stops at the first failure.
pub(crate) fn run(ctx: &Ctx) -> Result<(), Error> {
    if !setup::ensure_wasm_target(ctx) {
        return Err(Error::failed(format!(
            "the {WASM_TARGET} target is missing; run `cargo xtask setup`"
        )));
    }
    let mut built = Vec::new();
    for build in BUILDS {
        let place = (build.run)(ctx)?;
        built.push(format!("  {:<32} {place}", build.what));
    }
    println!("build: built");
    for line in built {
        println!("{line}");
    }
    Ok(())
}

/// Runs a cargo build with `args`; an error names the command when it fails.
fn cargo_build(ctx: &Ctx, args: &[&str]) -> Result<(), Error> {
    let mut command = ctx.cargo();
    command.arg("build").args(args);
    run_step("build", &mut command)
}

fn workspace(ctx: &Ctx) -> Result<String, Error> {
    cargo_build(ctx, &["--workspace"])?;
    Ok(format!("{}/", ctx.shown(&ctx.target_dir().join("debug"))))
}

fn protocol_wasm32(ctx: &Ctx) -> Result<String, Error> {
    cargo_build(ctx, &["-p", "toolbridge-protocol", "--target", WASM_TARGET])?;
    Ok(ctx.shown(
        &ctx.target_dir()
            .join(WASM_TARGET)
            .join("debug")
            .join("libtoolbridge_protocol.rlib"),
    ))
}

fn bridge_js(ctx: &Ctx) -> Result<String, Error> {
    let script = bridge_js::build(ctx)?;
    Ok(format!(
        "{} (and bridge.d.ts next to it)",
        ctx.shown(&script)
    ))
}

fn host_module(ctx: &Ctx) -> Result<String, Error> {
    let script = host_module::build(ctx)?;
    Ok(format!("{} (with its .wasm and .d.ts)", ctx.shown(&script)))
}

fn npm_package(ctx: &Ctx) -> Result<String, Error> {
    let tarball = npm_package::build(ctx)?;
    Ok(format!(
        "{} (its files in {})",
        ctx.shown(&tarball),
        ctx.shown(&npm_package::stage_dir(ctx))
    ))
}
