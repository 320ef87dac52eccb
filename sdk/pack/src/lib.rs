//! How bridge.js is put together from the SDK's build: the rules `cargo xtask build` applies to
//! what `wasm-bindgen` and binaryen produce, kept beside the SDK with their tests.
//!
//! The SDK crate is built `no_std` for wasm32 and `wasm-bindgen` writes `no-modules` glue for it.
//! wasm-bindgen names every import after its function plus a hash (`__wbg_set_onmessage_5e09…`),
//! and each name would appear twice in bridge.js: in the module's import section and in the
//! glue. The hashes do not compress, so binaryen's `wasm-opt` renames imports, exports and the
//! import module (`--minify-imports-and-exports-and-modules`) and prints the mapping
//! ([`Renames::from_binaryen_map`]), and the glue is rewritten to match ([`rewrite_glue`]). Every
//! rewrite is checked, so a change in wasm-bindgen's glue fails the build instead of producing a
//! broken script.
//!
//! The script ([`script`]) is the minified glue inside an arrow function (so `wasm_bindgen` stays
//! off the global scope) followed by `initSync` with the module inlined as lower-case hex. Two
//! digits per byte keep the module's bytes aligned in the text, so gzip still finds the repeats
//! in the binary: the module inlined as hex gzips about 15 % smaller than the same module in
//! base64, whose four-digits-per-three-bytes groups shift every repeat.
//!
//! Before binaryen optimizes the module, the functions only a panic reaches get the body of a trap
//! ([`trap_panic_machinery`]), so that binaryen drops the formatting code behind them.
//!
//! The host module's build uses one rule of this crate too: [`inline_snippets`] puts the
//! JavaScript the host crate imports inside its glue.

use serde_json::Value;

mod snippets;
mod traps;

pub use snippets::inline_snippets;
pub use traps::{only_a_panic_reaches, trap_panic_machinery};

/// What does not fit the rules: the rename map or the glue is not what this version of the rules
/// expects (a wasm-bindgen or binaryen version other than the pinned ones, most likely).
#[derive(Debug, thiserror::Error)]
pub enum Error {
    /// binaryen's rename map is not the expected JSON.
    #[error("unexpected rename map from wasm-opt ({why}): {map}")]
    RenameMap {
        /// What was wrong.
        why: String,
        /// The map as printed.
        map: String,
    },
    /// The glue does not have what a rename needs.
    #[error("{0}; has the pinned wasm-bindgen version changed?")]
    Glue(String),
    /// The SDK's module is not one the build can read ([`trap_panic_machinery`]).
    #[error("the SDK's wasm module is not what the build expects: {0}")]
    Module(String),
}

/// The renames binaryen reports.
#[derive(Debug, Default, PartialEq, Eq)]
pub struct Renames {
    /// `(module, old name, new name)` of each import.
    pub imports: Vec<(String, String, String)>,
    /// `(old name, new name)` of each export.
    pub exports: Vec<(String, String)>,
}

impl Renames {
    /// Reads the mapping binaryen prints: a JSON object with `"imports"` (arrays of module, old
    /// and new name) and `"exports"` (arrays of old and new name).
    pub fn from_binaryen_map(map: &str) -> Result<Renames, Error> {
        let unexpected = |why: String| Error::RenameMap {
            why,
            map: map.to_owned(),
        };
        let json: Value = serde_json::from_str(map).map_err(|e| unexpected(e.to_string()))?;
        let rows = |key: &str| -> Vec<Vec<String>> {
            let rows = json
                .get(key)
                .and_then(Value::as_array)
                .into_iter()
                .flatten();
            rows.map(|row| {
                let fields = row.as_array().into_iter().flatten();
                fields
                    .filter_map(Value::as_str)
                    .map(str::to_owned)
                    .collect()
            })
            .collect()
        };
        let mut renames = Renames::default();
        for row in rows("imports") {
            let [module, old, new] =
                <[String; 3]>::try_from(row).map_err(|row| unexpected(row.join(" ")))?;
            renames.imports.push((module, old, new));
        }
        for row in rows("exports") {
            let [old, new] =
                <[String; 2]>::try_from(row).map_err(|row| unexpected(row.join(" ")))?;
            renames.exports.push((old, new));
        }
        if renames.imports.is_empty() || renames.exports.is_empty() {
            return Err(unexpected("no import or export renames".to_owned()));
        }
        Ok(renames)
    }
}

/// The module name of the first import of a wasm module.
pub fn import_module(wasm: &[u8]) -> Option<String> {
    let mut at = 8; // magic and version
    while at < wasm.len() {
        let id = *wasm.get(at)?;
        let (size, body) = leb128(wasm, at + 1)?;
        if id == 2 {
            let (_count, entry) = leb128(wasm, body)?;
            let (length, name) = leb128(wasm, entry)?;
            let bytes = wasm.get(name..name.checked_add(usize::try_from(length).ok()?)?)?;
            return String::from_utf8(bytes.to_vec()).ok();
        }
        at = body.checked_add(usize::try_from(size).ok()?)?;
    }
    None
}

/// An unsigned LEB128 number at `at`, and the position after it.
fn leb128(bytes: &[u8], mut at: usize) -> Option<(u32, usize)> {
    let mut value: u32 = 0;
    for shift in (0..35).step_by(7) {
        let byte = *bytes.get(at)?;
        at += 1;
        value |= u32::from(byte & 0x7f).checked_shl(shift)?;
        if byte & 0x80 == 0 {
            return Some((value, at));
        }
    }
    None
}

/// What the `no-modules` glue runs first: the script's own URL, for `__wbg_init` to fetch the
/// module next to it. bridge.js inlines the module and calls `initSync`, so the URL is never
/// used: left out, it is 79 bytes less after gzip -9 and no `URL` made in every tool frame.
const SCRIPT_URL: &str =
    "    if (typeof document !== 'undefined' && document.currentScript !== null) {
        script_src = new URL(document.currentScript.src, location.href).toString();
    }
";

/// How `initSync` reads its argument: `{module}`, or the module itself with a warning that the
/// form is deprecated. bridge.js's loader passes the bytes, with neither.
const INIT_SYNC_ARGUMENT: &str = "        if (module !== undefined) {
            if (Object.getPrototypeOf(module) === Object.prototype) {
                ({module} = module)
            } else {
                console.warn('using deprecated parameters for `initSync()`; pass a single object instead')
            }
        }
";

/// How the glue frees a closure's Rust side once the browser has collected its JS function: a
/// `FinalizationRegistry` that every closure is registered with as it is made. The SDK's
/// functions live as long as the page (and its allocator never frees), so bridge.js makes its
/// thirty-odd functions at start without registering them.
const CLOSURE_FINALIZER: &str =
    "    const CLOSURE_DTORS = (typeof FinalizationRegistry === 'undefined')
        ? { register: () => {}, unregister: () => {} }
        : new FinalizationRegistry(state => wasm.__wbindgen_destroy_closure(state.a, state.b));
";

/// What the glue returns: its asynchronous loader (`__wbg_init`, which fetches and instantiates
/// the module) with `initSync` and the exports attached.
const GLUE_RETURNS: &str = "return Object.assign(__wbg_init, { initSync }, exports);";

/// The glue with every import key, export access and the import module renamed, without the
/// script's URL (`SCRIPT_URL`), with an `initSync` that takes the module's bytes as they are
/// (`INIT_SYNC_ARGUMENT`), with closures that are never finalized (`CLOSURE_FINALIZER`), and
/// returning `initSync` alone (`GLUE_RETURNS`): bridge.js calls nothing else, so the minifier
/// then drops the asynchronous loader and what only it uses.
pub fn rewrite_glue(glue: &str, renames: &Renames, new_module: &str) -> Result<String, Error> {
    let glue = replace_once(glue, SCRIPT_URL, "")?;
    let glue = replace_once(
        &glue,
        CLOSURE_FINALIZER,
        "    const CLOSURE_DTORS = { register: () => {}, unregister: () => {} };\n",
    )?;
    let glue = replace_once(&glue, INIT_SYNC_ARGUMENT, "")?;
    let mut glue = replace_once(&glue, GLUE_RETURNS, "return { initSync };")?;
    let mut modules: Vec<&str> = renames.imports.iter().map(|(m, _, _)| m.as_str()).collect();
    modules.dedup();
    let [old_module] = modules.as_slice() else {
        return Err(Error::Glue(format!(
            "the SDK module imports from {} modules where bridge.js expects one",
            modules.len()
        )));
    };
    glue = replace_once(
        &glue,
        &format!("\"{old_module}\":"),
        &format!("\"{new_module}\":"),
    )?;
    for (_, old, new) in &renames.imports {
        glue = replace_once(&glue, &format!("{old}:"), &format!("\"{new}\":"))?;
    }
    for (old, new) in &renames.exports {
        glue = replace_member(&glue, "wasm.", old, &format!("wasm[\"{new}\"]"));
    }
    Ok(glue)
}

/// `text` with its one occurrence of `from` replaced; an error if there is not exactly one.
fn replace_once(text: &str, from: &str, to: &str) -> Result<String, Error> {
    match text.matches(from).count() {
        1 => Ok(text.replacen(from, to, 1)),
        count => Err(Error::Glue(format!(
            "the wasm-bindgen glue has {count} occurrences of `{from}` where bridge.js expects one"
        ))),
    }
}

/// `text` with every `{prefix}{name}` that is not followed by more of an identifier replaced.
fn replace_member(text: &str, prefix: &str, name: &str, to: &str) -> String {
    let needle = format!("{prefix}{name}");
    let mut out = String::with_capacity(text.len());
    let mut rest = text;
    while let Some(found) = rest.find(&needle) {
        let after = &rest[found + needle.len()..];
        let continues = after
            .chars()
            .next()
            .is_some_and(|c| c.is_ascii_alphanumeric() || c == '_' || c == '$');
        out.push_str(&rest[..found]);
        out.push_str(if continues { &needle } else { to });
        rest = after;
    }
    out.push_str(rest);
    out
}

/// The classic script: V8's compile hint, a header line, then the glue and `initSync` inside an
/// arrow function, the module decoded from its hex digits by the browser's own
/// `Uint8Array.fromHex` where there is one, else by a plain loop (several times faster than
/// splitting the text into pairs with a regular expression, yet run cold, by the interpreter, on
/// every page load).
///
/// The hint (`//# allFunctionsCalledOnLoad`, which Chromium reads from version 136 and other
/// engines take for a comment) has V8 compile every function of the script as it parses it, off
/// the main thread while the script streams in, rather than each glue function on the main thread
/// at its first call: nearly all of them run while the script starts the bridge.
pub fn script(version: &str, glue: &str, module: &[u8]) -> String {
    let wasm_hex = hex::encode(module);
    let mut script = String::with_capacity(glue.len() + wasm_hex.len() + 256);
    script.push_str(COMPILE_HINT);
    script.push_str("/*! bridge.js: toolbridge SDK ");
    script.push_str(version);
    script.push_str(" (window.bridge); built by cargo xtask build */\n(()=>{");
    script.push_str(glue);
    script.push_str("\nconst h=\"");
    script.push_str(&wasm_hex);
    script.push_str(
        "\",u=Uint8Array,m=u.fromHex?u.fromHex(h):new u(h.length/2);\
         if(!u.fromHex)for(let i=0;i<m.length;i++)m[i]=parseInt(h.slice(2*i,2*i+2),16);\
         wasm_bindgen.initSync(m);\n})();\n",
    );
    script
}

/// V8's explicit compile hint for a whole file; it must come first in the script.
const COMPILE_HINT: &str = "//# allFunctionsCalledOnLoad\n";

/// The SDK's version: the string of the first `const SDK_VERSION: &str = "...";` line of the
/// SDK crate's source (`sdk/src/lib.rs`).
pub fn sdk_version(source: &str) -> Option<String> {
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

    const MAP: &str = r#"{
 "imports": [
  ["./m_bg.js", "__wbg_is_undefined_be5b", "$"],
  ["./m_bg.js", "__wbg_set_onmessage_5e09", "A"]
 ],
 "exports": [
  ["memory", "ea"],
  ["start", "fa"]
 ]
}"#;

    #[test]
    fn the_map_is_read() {
        let renames = Renames::from_binaryen_map(MAP).unwrap();
        assert_eq!(
            renames.imports[1],
            (
                "./m_bg.js".into(),
                "__wbg_set_onmessage_5e09".into(),
                "A".into()
            )
        );
        assert_eq!(
            renames.exports,
            [
                ("memory".into(), "ea".into()),
                ("start".into(), "fa".into())
            ]
        );
        assert!(Renames::from_binaryen_map("{}").is_err());
        assert!(Renames::from_binaryen_map("{\n \"imports\": [\n  [\"a\", \"b\"]\n ]\n}").is_err());
    }

    #[test]
    fn the_glue_is_rewritten_and_longer_names_are_left_alone() {
        let glue = [
            SCRIPT_URL,
            CLOSURE_FINALIZER,
            "const import0 = { __wbg_is_undefined_be5b: function(a) {}, \
             __wbg_set_onmessage_5e09: function(a) {} };\n\
             return { \"./m_bg.js\": import0 };\n",
            INIT_SYNC_ARGUMENT,
            "wasm.start(); wasm.memory.buffer; wasm.started; wasm.memory_x;\n",
            GLUE_RETURNS,
        ]
        .concat();
        let out = rewrite_glue(&glue, &Renames::from_binaryen_map(MAP).unwrap(), "a").unwrap();
        assert_eq!(
            out,
            "    const CLOSURE_DTORS = { register: () => {}, unregister: () => {} };\n\
             const import0 = { \"$\": function(a) {}, \"A\": function(a) {} };\n\
             return { \"a\": import0 };\n\
             wasm[\"fa\"](); wasm[\"ea\"].buffer; wasm.started; wasm.memory_x;\n\
             return { initSync };"
        );
    }

    #[test]
    fn an_import_missing_from_the_glue_fails_the_build() {
        let renames = Renames::from_binaryen_map(MAP).unwrap();
        let glue = format!(
            "{SCRIPT_URL}{CLOSURE_FINALIZER}{INIT_SYNC_ARGUMENT}return {{ \"./m_bg.js\": import0 }};\n{GLUE_RETURNS}"
        );
        let error = rewrite_glue(&glue, &renames, "a").unwrap_err();
        assert!(
            error.to_string().contains("__wbg_is_undefined_be5b"),
            "{error}"
        );
        // So does glue that no longer starts with the script's URL.
        let glue = "return { \"./m_bg.js\": import0 };";
        let error = rewrite_glue(glue, &renames, "a").unwrap_err();
        assert!(error.to_string().contains("currentScript"), "{error}");
    }

    #[test]
    fn the_import_module_is_read_from_the_module() {
        // magic, version, then an import section: 1 import, module "a", name "b", func type 0.
        let wasm = [0, 97, 115, 109, 1, 0, 0, 0, 2, 7, 1, 1, b'a', 1, b'b', 0, 0];
        assert_eq!(import_module(&wasm).as_deref(), Some("a"));
        assert_eq!(import_module(&wasm[..12]), None);
    }

    #[test]
    fn the_script_wraps_the_glue_and_inlines_the_module() {
        let script = script(
            "2.1.0",
            "let wasm_bindgen = (function(exports) {})({});",
            &[0, 0x61, 0x73, 0x6d],
        );
        assert_eq!(
            script,
            "//# allFunctionsCalledOnLoad\n\
             /*! bridge.js: toolbridge SDK 2.1.0 (window.bridge); built by cargo xtask build */\n\
             (()=>{let wasm_bindgen = (function(exports) {})({});\n\
             const h=\"0061736d\",u=Uint8Array,m=u.fromHex?u.fromHex(h):new u(h.length/2);\
             if(!u.fromHex)for(let i=0;i<m.length;i++)m[i]=parseInt(h.slice(2*i,2*i+2),16);\
             wasm_bindgen.initSync(m);\n})();\n"
        );
    }

    #[test]
    fn the_version_const_is_found() {
        let source = "//! docs\n\n/// The version.\npub const SDK_VERSION: &str = \"2.1.0\";\n";
        assert_eq!(sdk_version(source).as_deref(), Some("2.1.0"));
        assert_eq!(
            sdk_version("const SDK_VERSION: &str = \"0.3.0\";").as_deref(),
            Some("0.3.0")
        );
        assert_eq!(sdk_version("pub const PROTOCOL_VERSION: u32 = 1;"), None);
    }

    #[test]
    fn the_real_sdk_has_a_version() {
        let source = include_str!("../../src/lib.rs");
        assert!(sdk_version(source).is_some_and(|version| version.split('.').count() == 3));
    }
}
