//! The JavaScript tools the build, the checks and the bench use, pinned in one npm project
//! (`sdk/js-tools/package.json`): `tsc` for the typings check and binaryen's `wasm-opt` and
//! `terser` for the size of bridge.js, run with `node`; and Penpal and Comlink, the bridges
//! `cargo xtask bench` compares toolbridge with, loaded by its pages.

use std::fs;
use std::path::{Path, PathBuf};
use std::process::Command;

use serde_json::Value;

use crate::process::Ctx;

/// The npm project, relative to the workspace root.
pub(crate) const PROJECT_DIR: &str = "sdk/js-tools";

/// The TypeScript project the typings check compiles, relative to the workspace root.
const SDK_TYPINGS_TSCONFIG: &str = "sdk/types-test/tsconfig.json";
/// The TypeScript project that type-checks a host page against the host module's declarations.
const HOST_TYPINGS_TSCONFIG: &str = "host/types-test/tsconfig.json";

/// A pinned tool: its npm package and its entry script inside the package (for a bridge library,
/// the build a page loads).
#[derive(Clone, Copy, Debug)]
pub(crate) struct Tool {
    /// The npm package.
    pub(crate) package: &'static str,
    /// The script `node` runs, relative to the package directory.
    script: &'static str,
}

/// The TypeScript compiler.
pub(crate) const TSC: Tool = Tool {
    package: "typescript",
    script: "bin/tsc",
};

/// binaryen's optimizer (a JavaScript build; never Debian's `binaryen` 108, which corrupts
/// wasm-bindgen output).
pub(crate) const WASM_OPT: Tool = Tool {
    package: "binaryen",
    script: "bin/wasm-opt",
};

/// The JavaScript minifier.
pub(crate) const TERSER: Tool = Tool {
    package: "terser",
    script: "bin/terser",
};

/// Penpal: its minified browser build, which defines the `Penpal` global.
pub(crate) const PENPAL: Tool = Tool {
    package: "penpal",
    script: "dist/penpal.min.js",
};

/// Comlink: its minified UMD build, which defines the `Comlink` global.
pub(crate) const COMLINK: Tool = Tool {
    package: "comlink",
    script: "dist/umd/comlink.min.js",
};

/// Every tool the project pins.
pub(crate) const ALL: [Tool; 5] = [TSC, WASM_OPT, TERSER, PENPAL, COMLINK];

/// The project directory.
pub(crate) fn project_dir(ctx: &Ctx) -> PathBuf {
    ctx.root().join(PROJECT_DIR)
}

/// The version `package.json` pins for `tool` in `devDependencies`, without a leading `=`, `^`,
/// `~` or `v`. `Err` says why there is none.
pub(crate) fn pinned_version(root: &Path, tool: Tool) -> Result<String, String> {
    let path = root.join(PROJECT_DIR).join("package.json");
    let text =
        fs::read_to_string(&path).map_err(|e| format!("cannot read {}: {e}", path.display()))?;
    dev_dependency(&text, tool.package)
        .map(|requirement| {
            requirement
                .trim_start_matches(['=', '^', '~', 'v'])
                .to_owned()
        })
        .ok_or_else(|| {
            format!(
                "{PROJECT_DIR}/package.json has no \"{}\" in \"devDependencies\"",
                tool.package
            )
        })
}

/// The version of `tool` installed in the project's `node_modules`, if any.
pub(crate) fn installed_version(root: &Path, tool: Tool) -> Option<String> {
    let path = package_dir(root, tool).join("package.json");
    string_field(&fs::read_to_string(path).ok()?, "version")
}

/// Whether the project has a `package-lock.json` (then `npm ci` installs exactly that).
pub(crate) fn has_lock_file(ctx: &Ctx) -> bool {
    project_dir(ctx).join("package-lock.json").is_file()
}

/// `node <tool's script>`, or `Err` with what is missing.
pub(crate) fn command(ctx: &Ctx, tool: Tool) -> Result<Command, String> {
    if ctx.find("node").is_none() {
        return Err("node not found; install Node.js".to_owned());
    }
    let script = script_file(ctx, tool)?;
    let mut command = ctx.command("node");
    command.arg(ctx.shown(&script));
    Ok(command)
}

/// The file of `tool`: the script `node` runs, or the build a page loads (a bridge library), or
/// `Err` with what is missing.
pub(crate) fn script_file(ctx: &Ctx, tool: Tool) -> Result<PathBuf, String> {
    let script = package_dir(ctx.root(), tool).join(tool.script);
    if script.is_file() {
        Ok(script)
    } else {
        Err(format!(
            "{} is missing; run `cargo xtask setup` (it runs npm in {PROJECT_DIR})",
            ctx.shown(&script)
        ))
    }
}

/// `tsc -p sdk/types-test/tsconfig.json`: the SDK's typings check.
pub(crate) fn sdk_typings_check(ctx: &Ctx) -> Result<Command, String> {
    let mut tsc = command(ctx, TSC)?;
    tsc.args(["-p", SDK_TYPINGS_TSCONFIG]);
    Ok(tsc)
}

/// `tsc -p host/types-test/tsconfig.json`: the host module's typings check (needs `host/dist`).
pub(crate) fn host_typings_check(ctx: &Ctx) -> Result<Command, String> {
    let mut tsc = command(ctx, TSC)?;
    tsc.args(["-p", HOST_TYPINGS_TSCONFIG]);
    Ok(tsc)
}

fn package_dir(root: &Path, tool: Tool) -> PathBuf {
    root.join(PROJECT_DIR)
        .join("node_modules")
        .join(tool.package)
}

/// The string value of `name` inside the `"devDependencies"` object of a `package.json`.
fn dev_dependency(package_json: &str, name: &str) -> Option<String> {
    let json: Value = serde_json::from_str(package_json).ok()?;
    json.get("devDependencies")?
        .get(name)?
        .as_str()
        .map(str::to_owned)
}

/// The string value of the top-level `key` of a JSON object.
fn string_field(json: &str, key: &str) -> Option<String> {
    let json: Value = serde_json::from_str(json).ok()?;
    json.get(key)?.as_str().map(str::to_owned)
}

#[cfg(test)]
mod tests {
    use super::*;

    const PACKAGE: &str = r#"{
  "name": "toolbridge-js-tools",
  "private": true,
  "dependencies": { "typescript": "1.0.0" },
  "devDependencies": {
    "left-pad": "1.3.0",
    "typescript": "5.9.3"
  }
}"#;

    #[test]
    fn the_dev_dependency_is_read_not_the_plain_one() {
        assert_eq!(
            dev_dependency(PACKAGE, "typescript").as_deref(),
            Some("5.9.3")
        );
        assert_eq!(dev_dependency(PACKAGE, "eslint"), None);
        assert_eq!(dev_dependency("{\"name\": \"x\"}", "typescript"), None);
    }

    #[test]
    fn a_key_that_is_also_a_value_is_skipped() {
        let json = r#"{"name": "version", "nested": {"version": "1"}, "version": "5.9.3"}"#;
        assert_eq!(string_field(json, "version").as_deref(), Some("5.9.3"));
        assert_eq!(string_field(json, "missing"), None);
        assert_eq!(string_field("not json", "version"), None);
    }

    #[test]
    fn the_real_project_pins_every_tool() {
        let root = Path::new(env!("CARGO_MANIFEST_DIR")).parent().unwrap();
        for tool in ALL {
            let version = pinned_version(root, tool).unwrap();
            assert_eq!(version.split('.').count(), 3, "{}: {version}", tool.package);
        }
    }
}
