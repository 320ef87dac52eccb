//! The host module for parent pages: the `toolbridge-host` crate built for wasm32 with the
//! speed-oriented profile ([`wasm_crate::SPEED_PROFILE`]), and `wasm-bindgen --target web` writing an ES module
//! (`host/dist/toolbridge_host.js`), its `.wasm`, and its TypeScript declarations.

use std::path::PathBuf;

use crate::error::Error;
use crate::process::{Ctx, run_step};
use crate::wasm_crate;

/// The crate.
const PACKAGE: &str = "toolbridge-host";
/// Its file name in `target/`.
const CRATE_FILE_NAME: &str = "toolbridge_host";
/// How its lines start.
const LABEL: &str = "host module";
/// Where the module goes, relative to the workspace root.
const DIST_DIR: &str = "host/dist";

/// `host/dist`, absolute.
pub(crate) fn dist_dir(ctx: &Ctx) -> PathBuf {
    ctx.root().join(DIST_DIR)
}

/// Builds `host/dist/` and returns the path of the ES module.
pub(crate) fn build(ctx: &Ctx) -> Result<PathBuf, Error> {
    let module = wasm_crate::build(
        ctx,
        LABEL,
        wasm_crate::SPEED_PROFILE,
        PACKAGE,
        CRATE_FILE_NAME,
        &["--lib"],
    )?;
    let dist = dist_dir(ctx);
    fs_err::create_dir_all(&dist)?;
    let mut bindgen = ctx.command("wasm-bindgen");
    bindgen.args([
        "--target",
        "web",
        "--remove-producers-section",
        "--out-dir",
        &ctx.shown(&dist),
        &ctx.shown(&module),
    ]);
    run_step(LABEL, &mut bindgen)?;
    let script = dist.join(format!("{CRATE_FILE_NAME}.js"));
    let wasm = dist.join(format!("{CRATE_FILE_NAME}_bg.wasm"));
    let size = std::fs::metadata(&wasm)
        .map_err(|e| Error::failed(format!("cannot read {}: {e}", wasm.display())))?
        .len();
    println!(
        "host module: wrote {} and {} ({size} bytes)",
        ctx.shown(&script),
        ctx.shown(&wasm)
    );
    Ok(script)
}
