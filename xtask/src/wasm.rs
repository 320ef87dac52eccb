//! Workspace crates built for wasm32 and taken through `wasm-bindgen`: the host module for parent
//! pages (`host/dist`), the SDK (bridge.js, see [`crate::bridge_js`]) and the test kit's memory
//! backend (see [`crate::npm_package`]).

use std::path::{Path, PathBuf};

use xshell::cmd;

use crate::ctx::Ctx;
use crate::error::Error;
use crate::pins::WASM_TARGET;

/// The size-oriented cargo profile of bridge.js (see the workspace `Cargo.toml`).
pub(crate) const SIZE_PROFILE: &str = "wasm-release";
/// The cargo profile of the host module (size-oriented, see the workspace `Cargo.toml`), which
/// the host bench measures too.
pub(crate) const HOST_PROFILE: &str = "host-release";
/// Where the host module goes, relative to the workspace root.
const HOST_DIST: &str = "host/dist";
/// Where the host module with its function names goes, relative to the target directory.
const HOST_NAMED: &str = "host-module-named";

/// Builds `package` for wasm32 with the cargo `profile` and `extra` arguments; the module's path.
pub(crate) fn build(
    ctx: &Ctx,
    profile: &str,
    package: &str,
    extra: &[&str],
) -> Result<PathBuf, Error> {
    ctx.cargo()
        .args(["build", "-p", package, "--target", WASM_TARGET])
        .args(["--profile", profile])
        .args(extra)
        .run()?;
    let file = format!("{}.wasm", package.replace('-', "_"));
    Ok(ctx.target_dir().join(WASM_TARGET).join(profile).join(file))
}

/// `wasm-bindgen --target TARGET FLAGS --out-dir OUT MODULE`.
pub(crate) fn bindgen(
    ctx: &Ctx,
    module: &Path,
    target: &str,
    flags: &[&str],
    out: &Path,
) -> Result<(), Error> {
    if ctx.find("wasm-bindgen").is_none() {
        return Err(Error::failed(
            "wasm-bindgen not found; run `cargo xtask setup`",
        ));
    }
    let (sh, module, out) = (ctx.sh(), ctx.shown(module), ctx.shown(out));
    Ok(cmd!(
        sh,
        "wasm-bindgen --target {target} {flags...} --out-dir {out} {module}"
    )
    .run()?)
}

/// `host/dist`, absolute.
pub(crate) fn host_dist(ctx: &Ctx) -> PathBuf {
    ctx.root().join(HOST_DIST)
}

/// Builds `host/dist/`: the `toolbridge-host` crate with [`HOST_PROFILE`], and
/// `wasm-bindgen --target web` writing an ES module (the JavaScript the crate imports put inside
/// it by `toolbridge_sdk_pack::inline_snippets`), its `.wasm` and its declarations. The `.wasm`
/// goes without its `name` section (the function names a debugger shows, a third of the module),
/// which nobody's page needs; the same module with its names, for a profiler, goes to
/// [`HOST_NAMED`] with its own glue (`toolbridge serve --host-dir target/host-module-named`).
/// They are made in `target/host-module/` and copied into `host/dist/` only where they differ,
/// so that an unchanged build leaves `host/dist/` as it was: the release server carries its
/// files, and cargo compiles it again whenever one of them, or the folder, is touched. The ES
/// module's path.
pub(crate) fn host_module(ctx: &Ctx) -> Result<PathBuf, Error> {
    let module = build(ctx, HOST_PROFILE, "toolbridge-host", &["--lib"])?;
    let sh = ctx.sh();
    let staging = ctx.target_dir().join("host-module");
    let named = ctx.target_dir().join(HOST_NAMED);
    for (out, flags) in [
        (
            &staging,
            &["--remove-producers-section", "--remove-name-section"][..],
        ),
        (&named, &["--remove-producers-section"][..]),
    ] {
        sh.remove_path(out)?;
        bindgen(ctx, &module, "web", flags, out)?;
        let glue = out.join("toolbridge_host.js");
        let read = |path: &str| sh.read_file(out.join(path)).map_err(Error::from);
        let inlined = toolbridge_sdk_pack::inline_snippets(&sh.read_file(&glue)?, read)?;
        sh.write_file(&glue, inlined)?;
        sh.remove_path(out.join("snippets"))?;
    }
    let dist = host_dist(ctx);
    let changed = mirror(ctx, &staging, &dist)?;
    let wasm = dist.join("toolbridge_host_bg.wasm");
    let size = sh.read_binary_file(&wasm)?.len();
    let shown = ctx.shown(&wasm);
    if changed {
        println!("host module: wrote {shown} ({size} bytes)");
    } else {
        println!("host module: {shown} ({size} bytes) is unchanged");
    }
    Ok(dist.join("toolbridge_host.js"))
}

/// Writes `bytes` to `path` unless it holds them already (leaving its modification time alone, so
/// that cargo does not compile the release server, which carries the built files, again);
/// whether it wrote.
pub(crate) fn write_if_changed(ctx: &Ctx, path: &Path, bytes: &[u8]) -> Result<bool, Error> {
    let sh = ctx.sh();
    if sh.read_binary_file(path).ok().as_deref() == Some(bytes) {
        return Ok(false);
    }
    sh.write_file(path, bytes)?;
    Ok(true)
}

/// Makes the folder `to` hold exactly the files of the folder `from` (sub-folders included),
/// writing a file only when its bytes differ and removing what `from` lacks; whether anything
/// changed.
pub(crate) fn mirror(ctx: &Ctx, from: &Path, to: &Path) -> Result<bool, Error> {
    let sh = ctx.sh();
    sh.create_dir(to)?;
    let mut changed = false;
    for source in sh.read_dir(from)? {
        let Some(name) = source.file_name() else {
            continue;
        };
        let target = to.join(name);
        if source.is_dir() {
            if target.is_file() {
                sh.remove_path(&target)?;
            }
            changed |= mirror(ctx, &source, &target)?;
        } else {
            if target.is_dir() {
                sh.remove_path(&target)?;
            }
            changed |= write_if_changed(ctx, &target, &sh.read_binary_file(&source)?)?;
        }
    }
    for target in sh.read_dir(to)? {
        let kept = target
            .file_name()
            .is_some_and(|name| from.join(name).exists());
        if !kept {
            sh.remove_path(&target)?;
            changed = true;
        }
    }
    Ok(changed)
}
