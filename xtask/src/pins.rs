//! Tool versions: the ones pinned here, and the `wasm-bindgen` version the workspace pins.

use std::fs;
use std::path::Path;

use crate::error::Error;

/// The rustup target every wasm crate builds for.
pub(crate) const WASM_TARGET: &str = "wasm32-unknown-unknown";

/// The `wasm-pack` release `cargo xtask setup` installs.
pub(crate) const WASM_PACK: &str = "0.15.1";

/// The `cargo-fuzz` release `cargo xtask test --fuzz` installs.
pub(crate) const CARGO_FUZZ: &str = "0.13.2";

/// The `geckodriver` release `cargo xtask setup` installs.
pub(crate) const GECKODRIVER: &str = "0.37.1";

/// The `schemathesis` release (from the Python Package Index) that `cargo xtask setup` installs into a virtualenv
/// for the "api conformance" suite: the newest release when the suite was written, of the 4.x
/// line whose command line (`st run --phases`, `--report json`, dictionaries in
/// `schemathesis.toml`) the suite uses; 3.x had another. Pinned exactly, because each release
/// changes what it generates and checks, and a new one must not turn CI red on its own.
pub(crate) const SCHEMATHESIS: &str = "4.32.5";

/// The `wasm-bindgen` version the workspace uses, which the `wasm-bindgen-cli` must match exactly.
///
/// Cargo.lock wins once a crate depends on `wasm-bindgen`; until then, the exact (`=X.Y.Z`)
/// requirement in the root `Cargo.toml`'s `[workspace.dependencies]` says what it will be.
pub(crate) fn wasm_bindgen_version(root: &Path) -> Result<String, Error> {
    let lock_path = root.join("Cargo.lock");
    if let Ok(lock) = fs::read_to_string(&lock_path) {
        let mut versions = locked_versions(&lock, "wasm-bindgen");
        versions.dedup();
        match versions.as_slice() {
            [] => {}
            [version] => return Ok(version.clone()),
            several => {
                return Err(Error::failed(format!(
                    "Cargo.lock has several wasm-bindgen versions ({}); the CLI can match only one",
                    several.join(", ")
                )));
            }
        }
    }

    let manifest_path = root.join("Cargo.toml");
    let manifest = fs::read_to_string(&manifest_path)
        .map_err(|e| Error::failed(format!("cannot read {}: {e}", manifest_path.display())))?;
    let requirement =
        workspace_dependency_requirement(&manifest, "wasm-bindgen").ok_or_else(|| {
            Error::failed(format!(
                "neither Cargo.lock nor [workspace.dependencies] in {} names wasm-bindgen",
                manifest_path.display()
            ))
        })?;
    exact_version(&requirement).ok_or_else(|| {
        Error::failed(format!(
            "wasm-bindgen = \"{requirement}\" in [workspace.dependencies] is not an exact pin; \
             write it as \"=X.Y.Z\" so the CLI version is known"
        ))
    })
}

/// The versions of every `[[package]]` called `name` in a Cargo.lock, sorted.
fn locked_versions(lock: &str, name: &str) -> Vec<String> {
    let mut versions = Vec::new();
    let mut current_name: Option<String> = None;
    let mut current_version: Option<String> = None;
    let mut flush = |name_seen: &mut Option<String>, version_seen: &mut Option<String>| {
        if let (Some(seen), Some(version)) = (name_seen.take(), version_seen.take()) {
            if seen == name {
                versions.push(version);
            }
        }
    };
    for line in lock.lines().map(str::trim) {
        if line.starts_with('[') {
            flush(&mut current_name, &mut current_version);
        } else if let Some(value) = key_value(line, "name") {
            current_name = quoted(value);
        } else if let Some(value) = key_value(line, "version") {
            current_version = quoted(value);
        }
    }
    flush(&mut current_name, &mut current_version);
    versions.sort();
    versions
}

/// The version requirement of `name` in the `[workspace.dependencies]` table of a Cargo.toml,
/// written either as `name = "req"` or as `name = { version = "req", ... }`.
fn workspace_dependency_requirement(manifest: &str, name: &str) -> Option<String> {
    let mut in_table = false;
    for line in manifest.lines().map(str::trim) {
        if line.starts_with('[') {
            in_table = line == "[workspace.dependencies]";
            continue;
        }
        if !in_table {
            continue;
        }
        let Some(value) = key_value(line, name).or_else(|| key_value(line, &format!("\"{name}\"")))
        else {
            continue;
        };
        if value.starts_with('"') {
            return quoted(value);
        }
        let table = value.strip_prefix('{')?;
        return table
            .split(',')
            .find_map(|entry| key_value(entry.trim(), "version"))
            .and_then(quoted);
    }
    None
}

/// For `key = value` returns `value` (trimmed); `None` for any other key.
fn key_value<'a>(line: &'a str, key: &str) -> Option<&'a str> {
    let rest = line.strip_prefix(key)?.trim_start();
    rest.strip_prefix('=').map(str::trim)
}

/// The text between the first pair of double quotes.
fn quoted(value: &str) -> Option<String> {
    let inner = value.strip_prefix('"')?;
    let end = inner.find('"')?;
    Some(inner[..end].to_owned())
}

/// `X.Y.Z` from an exact requirement `=X.Y.Z`; `None` for anything looser.
fn exact_version(requirement: &str) -> Option<String> {
    let version = requirement.strip_prefix('=')?.trim();
    let parts: Vec<&str> = version.split('.').collect();
    let numeric = |part: &&str| !part.is_empty() && part.bytes().all(|b| b.is_ascii_digit());
    (parts.len() == 3 && parts.iter().all(numeric)).then(|| version.to_owned())
}

#[cfg(test)]
mod tests {
    use super::*;

    const LOCK: &str = r#"
version = 4

[[package]]
name = "wasm-bindgen-macro"
version = "0.2.130"

[[package]]
name = "wasm-bindgen"
version = "0.2.130"
source = "registry+https://github.com/rust-lang/crates.io-index"
dependencies = [
 "cfg-if",
]

[[package]]
name = "serde"
version = "1.0.228"
"#;

    #[test]
    fn lock_versions_match_the_exact_package_name_only() {
        assert_eq!(locked_versions(LOCK, "wasm-bindgen"), ["0.2.130"]);
        assert_eq!(locked_versions(LOCK, "serde"), ["1.0.228"]);
        assert!(locked_versions(LOCK, "wasm").is_empty());
    }

    #[test]
    fn workspace_requirement_in_plain_and_table_form() {
        let plain = "[workspace]\nmembers = []\n\n[workspace.dependencies]\n\
                     wasm-bindgen-futures = \"0.4\"\n# pinned\nwasm-bindgen = \"=0.2.130\"\n";
        assert_eq!(
            workspace_dependency_requirement(plain, "wasm-bindgen").as_deref(),
            Some("=0.2.130")
        );
        let table = "[workspace.dependencies]\nwasm-bindgen = { version = \"=0.2.99\", \
                     default-features = false }\n";
        assert_eq!(
            workspace_dependency_requirement(table, "wasm-bindgen").as_deref(),
            Some("=0.2.99")
        );
    }

    #[test]
    fn requirement_outside_workspace_dependencies_is_ignored() {
        let manifest = "[dependencies]\nwasm-bindgen = \"=0.2.1\"\n[workspace.dependencies]\n";
        assert_eq!(
            workspace_dependency_requirement(manifest, "wasm-bindgen"),
            None
        );
    }

    #[test]
    fn only_exact_requirements_give_a_version() {
        assert_eq!(exact_version("=0.2.130").as_deref(), Some("0.2.130"));
        assert_eq!(exact_version("0.2.130"), None);
        assert_eq!(exact_version("=0.2"), None);
        assert_eq!(exact_version("^0.2.130"), None);
    }

    #[test]
    fn the_real_workspace_pins_wasm_bindgen_exactly() {
        let root = Path::new(env!("CARGO_MANIFEST_DIR")).parent().unwrap();
        let version = wasm_bindgen_version(root).unwrap();
        assert_eq!(version.split('.').count(), 3, "{version}");
    }
}
