//! Building a workspace crate into a `.wasm` module for `wasm-bindgen`: the SDK (bridge.js) and
//! the host module share the step.

use std::path::PathBuf;

use crate::error::Error;
use crate::pins::WASM_TARGET;
use crate::process::{Ctx, run_step};

/// The size-oriented cargo profile of bridge.js (see the workspace `Cargo.toml`).
pub(crate) const SIZE_PROFILE: &str = "wasm-release";
/// The speed-oriented cargo profile of the host module, which the host bench measures too.
pub(crate) const SPEED_PROFILE: &str = "host-release";

/// Builds `package` for wasm32 with the cargo `profile` (and `extra` cargo arguments), checks that
/// `wasm-bindgen` is there to take it further, and returns the module's path. `crate_file` is
/// the crate's name as file names spell it (`toolbridge_sdk`).
pub(crate) fn build(
    ctx: &Ctx,
    label: &str,
    profile: &str,
    package: &str,
    crate_file: &str,
    extra: &[&str],
) -> Result<PathBuf, Error> {
    let mut cargo = ctx.cargo();
    cargo
        .args([
            "build",
            "-p",
            package,
            "--target",
            WASM_TARGET,
            "--profile",
            profile,
        ])
        .args(extra);
    run_step(label, &mut cargo)?;
    if ctx.find("wasm-bindgen").is_none() {
        return Err(Error::failed(
            "wasm-bindgen not found; run `cargo xtask setup`",
        ));
    }
    Ok(ctx
        .target_dir()
        .join(WASM_TARGET)
        .join(profile)
        .join(format!("{crate_file}.wasm")))
}
