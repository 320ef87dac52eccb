//! `cargo xtask build`: every build artifact of the workspace, in order: the release `toolbridge`
//! last, so that it carries the bridge.js and host module just built (`server/src/embedded.rs`).

use crate::bridge_js;
use crate::ctx::Ctx;
use crate::docs;
use crate::error::Error;
use crate::host_package;
use crate::npm_package;
use crate::pins::WASM_TARGET;
use crate::server_build;
use crate::setup;
use crate::wasm;

/// Runs every build and says what it built; stops at the first failure.
pub(crate) fn run(ctx: &Ctx) -> Result<(), Error> {
    setup::ensure_wasm_target(ctx)?;
    ctx.cargo().args(["build", "--workspace"]).run()?;
    let protocol = [
        "build",
        "-p",
        "toolbridge-protocol",
        "--target",
        WASM_TARGET,
    ];
    ctx.cargo().args(protocol).run()?;
    let built = [
        ("workspace (native, debug)", ctx.target_dir().join("debug")),
        (
            "toolbridge-protocol for wasm32",
            ctx.target_dir().join(WASM_TARGET).join("debug"),
        ),
        ("bridge.js and bridge.d.ts", bridge_js::build(ctx)?),
        ("host module (with .wasm, .d.ts)", wasm::host_module(ctx)?),
        ("npm package @toolbridge/sdk", npm_package::build(ctx)?),
        // From host/dist as just built.
        ("npm package @toolbridge/host", host_package::package(ctx)?),
        ("documentation (/docs/)", docs::build(ctx)?),
        // After bridge.js, the host module and the documentation: the binary carries them, and
        // needs nothing else.
        ("release toolbridge", server_build::build_release(ctx)?),
    ];
    println!("build: built");
    for (what, place) in built {
        println!("  {what:<32} {}", ctx.shown(&place));
    }
    Ok(())
}
