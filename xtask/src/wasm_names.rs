//! Short names for the SDK module's imports and exports.
//!
//! wasm-bindgen names every import after its function plus a hash (`__wbg_set_onmessage_5e09…`),
//! and each name appears twice in bridge.js: in the module's import section and in the glue. The
//! hashes do not compress, so binaryen renames imports, exports and the import module
//! (`--minify-imports-and-exports-and-modules`) and prints the mapping; the glue is rewritten to
//! match here. Every rewrite is checked, so a change in wasm-bindgen's glue fails the build
//! instead of producing a broken script.

use crate::error::Error;

/// The renames binaryen reports.
#[derive(Debug, Default, PartialEq, Eq)]
pub(crate) struct Renames {
    /// `(module, old name, new name)` of each import.
    pub(crate) imports: Vec<(String, String, String)>,
    /// `(old name, new name)` of each export.
    pub(crate) exports: Vec<(String, String)>,
}

/// Reads the mapping binaryen prints: a JSON object with `"imports"` (arrays of module, old and
/// new name) and `"exports"` (arrays of old and new name), one array per line.
pub(crate) fn parse_map(text: &str) -> Result<Renames, Error> {
    let mut renames = Renames::default();
    let mut section = "";
    for line in text.lines().map(str::trim) {
        if line.starts_with("\"imports\"") {
            section = "imports";
            continue;
        }
        if line.starts_with("\"exports\"") {
            section = "exports";
            continue;
        }
        if !line.starts_with('[') || line.starts_with("[]") {
            continue;
        }
        let fields = quoted_strings(line);
        match (section, fields.as_slice()) {
            ("imports", [module, old, new]) => {
                renames
                    .imports
                    .push((module.clone(), old.clone(), new.clone()));
            }
            ("exports", [old, new]) => renames.exports.push((old.clone(), new.clone())),
            _ => {
                return Err(Error::failed(format!(
                    "unexpected line in wasm-opt's rename map: {line}"
                )));
            }
        }
    }
    if renames.imports.is_empty() || renames.exports.is_empty() {
        return Err(Error::failed(
            "wasm-opt printed no import or export renames; is the binaryen version the pinned one?",
        ));
    }
    Ok(renames)
}

/// The strings between double quotes on a line (names have no escapes).
fn quoted_strings(line: &str) -> Vec<String> {
    line.split('"')
        .skip(1)
        .step_by(2)
        .map(str::to_owned)
        .collect()
}

/// The module name of the first import of a wasm module.
pub(crate) fn first_import_module(wasm: &[u8]) -> Option<String> {
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

/// The glue with every import key, export access and the import module renamed.
pub(crate) fn rewrite_glue(
    glue: &str,
    renames: &Renames,
    new_module: &str,
) -> Result<String, Error> {
    let mut glue = glue.to_owned();
    let mut modules: Vec<&str> = renames.imports.iter().map(|(m, _, _)| m.as_str()).collect();
    modules.dedup();
    let [old_module] = modules.as_slice() else {
        return Err(Error::failed(format!(
            "the SDK module imports from {} modules; bridge.js expects exactly one",
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
        count => Err(Error::failed(format!(
            "the wasm-bindgen glue has {count} occurrences of `{from}` where bridge.js expects one; \
             has the pinned wasm-bindgen version changed?"
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
        let renames = parse_map(MAP).unwrap();
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
        assert!(parse_map("{}").is_err());
        assert!(parse_map("{\n \"imports\": [\n  [\"a\", \"b\"]\n ]\n}").is_err());
    }

    #[test]
    fn the_glue_is_rewritten_and_longer_names_are_left_alone() {
        let glue = "const import0 = { __wbg_is_undefined_be5b: function(a) {}, \
                    __wbg_set_onmessage_5e09: function(a) {} };\n\
                    return { \"./m_bg.js\": import0 };\n\
                    wasm.start(); wasm.memory.buffer; wasm.started; wasm.memory_x;";
        let out = rewrite_glue(glue, &parse_map(MAP).unwrap(), "a").unwrap();
        assert_eq!(
            out,
            "const import0 = { \"$\": function(a) {}, \"A\": function(a) {} };\n\
             return { \"a\": import0 };\n\
             wasm[\"fa\"](); wasm[\"ea\"].buffer; wasm.started; wasm.memory_x;"
        );
    }

    #[test]
    fn an_import_missing_from_the_glue_fails_the_build() {
        let glue = "return { \"./m_bg.js\": import0 };";
        assert!(rewrite_glue(glue, &parse_map(MAP).unwrap(), "a").is_err());
    }

    #[test]
    fn the_import_module_is_read_from_the_module() {
        // magic, version, then an import section: 1 import, module "a", name "b", func type 0.
        let wasm = [0, 97, 115, 109, 1, 0, 0, 0, 2, 7, 1, 1, b'a', 1, b'b', 0, 0];
        assert_eq!(first_import_module(&wasm).as_deref(), Some("a"));
        assert_eq!(first_import_module(&wasm[..12]), None);
    }
}
