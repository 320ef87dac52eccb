//! `bridge.js`: the SDK as one classic script, with its typings next to it in `sdk/dist/`.
//!
//! The SDK crate is built `no_std` for wasm32 with the size-oriented `wasm-release` profile,
//! `wasm-bindgen` writes `no-modules` glue for it (keeping the module's function names, by which
//! the functions only a panic reaches are given the body of a trap), binaryen's `wasm-opt` (the npm build pinned in
//! `sdk/js-tools`, never Debian's `binaryen` 108, which corrupts wasm-bindgen output) shrinks the
//! module and gives its imports and exports short names, and terser minifies the glue. How the
//! pieces are put together is `toolbridge-sdk-pack`'s (`sdk/pack/`).

use std::path::PathBuf;

use xshell::cmd;

use crate::ctx::Ctx;
use crate::error::Error;
use crate::js_tools::{self, TERSER, WASM_OPT};
use crate::wasm;
use toolbridge_sdk_pack as pack;

/// Where the published files go, relative to the workspace root.
const DIST_DIR: &str = "sdk/dist";

/// The hand-written typings, relative to the workspace root.
const TYPINGS: &str = "sdk/bridge.d.ts";

/// The file of the SDK crate that holds the `SDK_VERSION` const.
const VERSION_SOURCE: &str = "sdk/src/lib.rs";

/// The WebAssembly features the module uses (Rust's defaults for wasm32), for `wasm-opt`.
const WASM_FEATURES: [&str; 6] = [
    "--enable-bulk-memory",
    "--enable-multivalue",
    "--enable-mutable-globals",
    "--enable-nontrapping-float-to-int",
    "--enable-reference-types",
    "--enable-sign-ext",
];

/// The two pieces bridge.js is composed of.
pub(crate) struct Pieces {
    /// The optimized wasm module (what is inlined).
    pub(crate) wasm: PathBuf,
    /// The minified JavaScript glue.
    pub(crate) glue: PathBuf,
}

/// The directory [`build`] writes to (`sdk/dist`), absolute.
pub(crate) fn dist_dir(ctx: &Ctx) -> PathBuf {
    ctx.root().join(DIST_DIR)
}

/// Where [`build`] writes bridge.js.
pub(crate) fn output(ctx: &Ctx) -> PathBuf {
    dist_dir(ctx).join("bridge.js")
}

/// Where [`build`] leaves the pieces.
pub(crate) fn pieces(ctx: &Ctx) -> Pieces {
    let dir = bindgen_dir(ctx);
    Pieces {
        wasm: dir.join("bridge.wasm"),
        glue: dir.join("bridge.glue.min.js"),
    }
}

/// Builds `sdk/dist/bridge.js` and copies `sdk/bridge.d.ts` next to it. The path of bridge.js.
pub(crate) fn build(ctx: &Ctx) -> Result<PathBuf, Error> {
    let sh = ctx.sh();
    let module = wasm::build(
        ctx,
        wasm::SIZE_PROFILE,
        "toolbridge-sdk",
        &["--no-default-features"],
    )?;
    // The names stay for `trap_panic_machinery`; `wasm-opt` drops them.
    let flags = ["--no-typescript", "--remove-producers-section"];
    wasm::bindgen(ctx, &module, "no-modules", &flags, &bindgen_dir(ctx))?;
    let pieces = shrink(ctx)?;
    let glue = sh.read_file(&pieces.glue)?;
    let module = sh.read_binary_file(&pieces.wasm)?;
    let script = pack::script(&sdk_version(ctx)?, &glue, &module);
    // Unchanged files are left as they are: the release server carries them, and cargo compiles it
    // again when they are touched.
    sh.create_dir(dist_dir(ctx))?;
    let wrote = wasm::write_if_changed(ctx, &output(ctx), script.as_bytes())?;
    println!(
        "bridge.js: {} {} ({} bytes)",
        if wrote { "wrote" } else { "unchanged," },
        ctx.shown(&output(ctx)),
        script.len()
    );
    // The typings are written by hand; the copy in sdk/dist is what the package ships.
    let typings = sh.read_binary_file(TYPINGS)?;
    wasm::write_if_changed(ctx, &dist_dir(ctx).join("bridge.d.ts"), &typings)?;
    Ok(output(ctx))
}

/// Gives the functions only a panic reaches the body of a trap, optimizes the module with short
/// import and export names (and without the names of its functions), rewrites the glue to match,
/// and minifies it.
fn shrink(ctx: &Ctx) -> Result<Pieces, Error> {
    let (sh, dir, pieces) = (ctx.sh(), bindgen_dir(ctx), pieces(ctx));
    let (trapped, trapped_names) =
        pack::trap_panic_machinery(&sh.read_binary_file(dir.join("toolbridge_sdk_bg.wasm"))?)?;
    if trapped_names.is_empty() {
        return Err(Error::failed(
            "no function of core::fmt or core::panicking in the SDK's module: have the names the \
             compiler gives them changed? (see sdk/pack/src/traps.rs)",
        ));
    }
    println!(
        "bridge.js: {} functions only a panic reaches made a trap",
        trapped_names.len()
    );
    let (input, output) = (dir.join("bridge.trapped.wasm"), &pieces.wasm);
    sh.write_file(&input, trapped)?;
    let wasm_opt = js_tools::script(ctx, WASM_OPT)?;
    let map = cmd!(
        sh,
        "node {wasm_opt} {input} -Oz {WASM_FEATURES...} --strip-target-features"
    )
    .args(["--minify-imports-and-exports-and-modules", "-o"])
    .arg(output)
    .read()?;
    let renames = pack::Renames::from_binaryen_map(&map)?;
    let module = pack::import_module(&sh.read_binary_file(output)?)
        .ok_or_else(|| Error::failed(format!("{} has no import section", output.display())))?;
    let glue = sh.read_file(dir.join("toolbridge_sdk.js"))?;
    let full_glue = dir.join("bridge.glue.js");
    sh.write_file(&full_glue, pack::rewrite_glue(&glue, &renames, &module)?)?;
    let (terser, minified) = (js_tools::script(ctx, TERSER)?, &pieces.glue);
    cmd!(
        sh,
        "node {terser} {full_glue} --compress --mangle -o {minified}"
    )
    .run()?;
    Ok(pieces)
}

/// The directory `wasm-bindgen` writes to.
fn bindgen_dir(ctx: &Ctx) -> PathBuf {
    ctx.target_dir().join("bridge-js")
}

/// The value of `SDK_VERSION` in the SDK crate's source.
pub(crate) fn sdk_version(ctx: &Ctx) -> Result<String, Error> {
    pack::sdk_version(&ctx.sh().read_file(VERSION_SOURCE)?).ok_or_else(|| {
        Error::failed(format!(
            "{VERSION_SOURCE} has no `pub const SDK_VERSION: &str = \"...\";` line"
        ))
    })
}
