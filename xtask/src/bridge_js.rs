//! `bridge.js`: the SDK as one classic script, with its typings next to it in `sdk/dist/`.
//!
//! The SDK crate is built `no_std` for wasm32 with the size-oriented `wasm-release` profile and
//! `wasm-bindgen` writes `no-modules` glue for it. binaryen's `wasm-opt` (the npm build pinned in
//! `sdk/js-tools`, never Debian's `binaryen` 108, which corrupts wasm-bindgen output) shrinks the
//! module and gives its imports and exports short names, the glue is rewritten to those names
//! and minified with terser, and the script is that glue inside an arrow function (so
//! `wasm_bindgen` stays off the global scope) followed by `initSync` with the module inlined as
//! lower-case hex (the `hex` crate). Two digits per byte keep the module's bytes aligned in the
//! text, so gzip still finds the repeats in the binary: the module inlined as hex gzips about
//! 15 % smaller than the same module in base64, whose four-digits-per-three-bytes groups shift
//! every repeat.

use std::fs;
use std::path::{Path, PathBuf};

use crate::error::Error;
use crate::js_tools::{self, TERSER, WASM_OPT};
use crate::process::{self, Ctx, describe, run_step};
use crate::wasm_crate;
use crate::wasm_names;

/// The SDK's package name.
const PACKAGE: &str = "toolbridge-sdk";

/// The SDK's crate name as it appears in file names.
const CRATE_FILE_NAME: &str = "toolbridge_sdk";

/// How its lines start.
const LABEL: &str = "bridge.js";

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

/// Builds `sdk/dist/bridge.js` and copies `sdk/bridge.d.ts` next to it, printing each command it
/// runs. Returns the path of bridge.js.
pub(crate) fn build(ctx: &Ctx) -> Result<PathBuf, Error> {
    let module = wasm_crate::build(
        ctx,
        LABEL,
        wasm_crate::SIZE_PROFILE,
        PACKAGE,
        CRATE_FILE_NAME,
        &["--no-default-features"],
    )?;
    let mut bindgen = ctx.command("wasm-bindgen");
    bindgen.args([
        "--target",
        "no-modules",
        "--no-typescript",
        "--remove-name-section",
        "--remove-producers-section",
        "--out-dir",
        &ctx.shown(&bindgen_dir(ctx)),
        &ctx.shown(&module),
    ]);
    run_step(LABEL, &mut bindgen)?;

    let pieces = shrink(ctx)?;
    let glue = fs_err::read_to_string(&pieces.glue)?;
    let wasm = fs_err::read(&pieces.wasm)?;
    let version = sdk_version(ctx.root())?;

    let dist = dist_dir(ctx);
    fs_err::create_dir_all(&dist)?;
    let script_path = output(ctx);
    let script = compose(&version, &glue, &hex::encode(&wasm));
    fs_err::write(&script_path, script.as_bytes())?;
    println!(
        "bridge.js: wrote {} ({} bytes)",
        ctx.shown(&script_path),
        script.len()
    );

    let typings = ctx.root().join(TYPINGS);
    if !typings.is_file() {
        return Err(Error::failed(format!(
            "{TYPINGS} is missing: the SDK's typings are written by hand and copied to \
             {DIST_DIR}/bridge.d.ts; write it, then build again"
        )));
    }
    let typings_copy = dist.join("bridge.d.ts");
    fs::copy(&typings, &typings_copy).map_err(|e| {
        Error::failed(format!(
            "cannot copy {} to {}: {e}",
            typings.display(),
            typings_copy.display()
        ))
    })?;
    println!(
        "bridge.js: copied {TYPINGS} to {}",
        ctx.shown(&typings_copy)
    );
    Ok(script_path)
}

/// Optimizes the module with short import and export names, rewrites the glue to match, and
/// minifies it.
fn shrink(ctx: &Ctx) -> Result<Pieces, Error> {
    let dir = bindgen_dir(ctx);
    let pieces = pieces(ctx);
    let mut wasm_opt = js_tools::command(ctx, WASM_OPT).map_err(Error::failed)?;
    wasm_opt
        .arg(ctx.shown(&dir.join(format!("{CRATE_FILE_NAME}_bg.wasm"))))
        .arg("-Oz")
        .args(WASM_FEATURES)
        .args([
            "--strip-target-features",
            "--minify-imports-and-exports-and-modules",
            "-o",
            &ctx.shown(&pieces.wasm),
        ]);
    println!("bridge.js: running `{}`", describe(&wasm_opt));
    let map = process::capture(&mut wasm_opt)?;
    let renames = wasm_names::parse_map(&String::from_utf8_lossy(&map))?;
    let wasm = fs_err::read(&pieces.wasm)?;
    let module = wasm_names::first_import_module(&wasm)
        .ok_or_else(|| Error::failed(format!("{} has no import section", pieces.wasm.display())))?;
    let glue = fs_err::read_to_string(dir.join(format!("{CRATE_FILE_NAME}.js")))?;
    let renamed_glue = dir.join("bridge.glue.js");
    fs_err::write(
        &renamed_glue,
        wasm_names::rewrite_glue(&glue, &renames, &module)?.as_bytes(),
    )?;

    let mut terser = js_tools::command(ctx, TERSER).map_err(Error::failed)?;
    terser.args([
        &ctx.shown(&renamed_glue),
        "--compress",
        "--mangle",
        "-o",
        &ctx.shown(&pieces.glue),
    ]);
    run_step(LABEL, &mut terser)?;
    Ok(pieces)
}

/// The directory `wasm-bindgen` writes to.
fn bindgen_dir(ctx: &Ctx) -> PathBuf {
    ctx.target_dir().join("bridge-js")
}

/// The classic script: a header line, then the glue and `initSync` inside an arrow function, the
/// module decoded from its hex digits by the browser's own `Uint8Array.fromHex` where there is
/// one, else by a plain loop (several times faster than splitting the text into pairs with a
/// regular expression, yet run cold, by the interpreter, on every page load).
fn compose(version: &str, glue: &str, wasm_hex: &str) -> String {
    let mut script = String::with_capacity(glue.len() + wasm_hex.len() + 256);
    script.push_str("/*! bridge.js: toolbridge SDK ");
    script.push_str(version);
    script.push_str(" (window.bridge); built by cargo xtask build */\n(()=>{");
    script.push_str(glue);
    script.push_str("\nconst h=\"");
    script.push_str(wasm_hex);
    script.push_str(
        "\",u=Uint8Array,m=u.fromHex?u.fromHex(h):new u(h.length/2);\
         if(!u.fromHex)for(let i=0;i<m.length;i++)m[i]=parseInt(h.slice(2*i,2*i+2),16);\
         wasm_bindgen.initSync({module:m});\n})();\n",
    );
    script
}

/// The value of `SDK_VERSION` in the SDK crate's source.
pub(crate) fn sdk_version(root: &Path) -> Result<String, Error> {
    let path = root.join(VERSION_SOURCE);
    let source = fs_err::read_to_string(&path)?;
    version_const(&source).ok_or_else(|| {
        Error::failed(format!(
            "{VERSION_SOURCE} has no `pub const SDK_VERSION: &str = \"...\";` line"
        ))
    })
}

/// The string of the first `const SDK_VERSION: &str = "...";` line of Rust source.
fn version_const(source: &str) -> Option<String> {
    source.lines().find_map(|line| {
        let line = line.trim();
        let rest = line
            .strip_prefix("pub ")
            .unwrap_or(line)
            .strip_prefix("const SDK_VERSION")?;
        let value = rest.split_once('=')?.1.trim();
        let inner = value.strip_prefix('"')?;
        let end = inner.find('"')?;
        let version = &inner[..end];
        (!version.is_empty()).then(|| version.to_owned())
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_script_wraps_the_glue_and_inlines_the_module() {
        let script = compose(
            "2.1.0",
            "let wasm_bindgen = (function(exports) {})({});",
            "0061736d",
        );
        assert_eq!(
            script,
            "/*! bridge.js: toolbridge SDK 2.1.0 (window.bridge); built by cargo xtask build */\n\
             (()=>{let wasm_bindgen = (function(exports) {})({});\n\
             const h=\"0061736d\",u=Uint8Array,m=u.fromHex?u.fromHex(h):new u(h.length/2);\
             if(!u.fromHex)for(let i=0;i<m.length;i++)m[i]=parseInt(h.slice(2*i,2*i+2),16);\
             wasm_bindgen.initSync({module:m});\n})();\n"
        );
    }

    #[test]
    fn the_version_const_is_found() {
        let source = "//! docs\n\n/// The version.\npub const SDK_VERSION: &str = \"2.1.0\";\n";
        assert_eq!(version_const(source).as_deref(), Some("2.1.0"));
        assert_eq!(
            version_const("const SDK_VERSION: &str = \"0.3.0\";").as_deref(),
            Some("0.3.0")
        );
        assert_eq!(version_const("pub const PROTOCOL_VERSION: u32 = 1;"), None);
    }

    #[test]
    fn the_real_sdk_has_a_version() {
        let root = Path::new(env!("CARGO_MANIFEST_DIR")).parent().unwrap();
        let version = sdk_version(root).unwrap();
        assert!(!version.is_empty());
    }
}
