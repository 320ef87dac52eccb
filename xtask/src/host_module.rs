//! The host module for parent pages: the `toolbridge-host` crate built for wasm32 with the
//! size-oriented `wasm-release` profile, and `wasm-bindgen --target web` writing an ES module
//! (`host/dist/toolbridge_host.js`), its `.wasm`, and its TypeScript declarations.

use std::path::PathBuf;
use std::process::Command;

use crate::error::Error;
use crate::files::create_dir;
use crate::pins::WASM_TARGET;
use crate::process::{self, Ctx, describe};

/// The crate.
const PACKAGE: &str = "toolbridge-host";
/// Its file name in `target/`.
const CRATE_FILE_NAME: &str = "toolbridge_host";
/// The cargo profile (see the workspace `Cargo.toml`).
const PROFILE: &str = "wasm-release";
/// Where the module goes, relative to the workspace root.
const DIST_DIR: &str = "host/dist";

/// `host/dist`, absolute.
pub(crate) fn dist_dir(ctx: &Ctx) -> PathBuf {
    ctx.root().join(DIST_DIR)
}

/// Builds `host/dist/` and returns the path of the ES module.
pub(crate) fn build(ctx: &Ctx) -> Result<PathBuf, Error> {
    let mut cargo = ctx.cargo();
    cargo.args([
        "build",
        "-p",
        PACKAGE,
        "--lib",
        "--target",
        WASM_TARGET,
        "--profile",
        PROFILE,
    ]);
    run(&mut cargo)?;
    if ctx.find("wasm-bindgen").is_none() {
        return Err(Error::failed(
            "wasm-bindgen not found; run `cargo xtask setup`",
        ));
    }
    let module = ctx
        .target_dir()
        .join(WASM_TARGET)
        .join(PROFILE)
        .join(format!("{CRATE_FILE_NAME}.wasm"));
    let dist = dist_dir(ctx);
    create_dir(&dist)?;
    let mut bindgen = ctx.command("wasm-bindgen");
    bindgen.args([
        "--target",
        "web",
        "--remove-producers-section",
        "--out-dir",
        &ctx.shown(&dist),
        &ctx.shown(&module),
    ]);
    run(&mut bindgen)?;
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

fn run(command: &mut Command) -> Result<(), Error> {
    println!("host module: running `{}`", describe(command));
    if process::run(command)? {
        Ok(())
    } else {
        Err(Error::failed(format!("`{}` failed", describe(command))))
    }
}
