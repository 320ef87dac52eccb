//! The JavaScript tools the build, the checks and the bench use, pinned in one npm project
//! (`sdk/js-tools/package.json`): `tsc` for the typings checks and binaryen's `wasm-opt` and
//! `terser` for the size of bridge.js, run with `node`; Penpal and Comlink, the bridges
//! `cargo xtask bench` compares toolbridge with, loaded by its pages; Redoc, whose standalone
//! script the API reference page of the documentation loads; and axe-core, which the e2e suite
//! puts into the app's pages to check their accessibility.

use std::path::PathBuf;

use serde_json::Value;
use xshell::cmd;

use crate::ctx::Ctx;
use crate::error::Error;

/// The npm project, relative to the workspace root.
pub(crate) const PROJECT_DIR: &str = "sdk/js-tools";

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

/// Redoc: its standalone build, which renders the API reference page at `/docs/api/`.
pub(crate) const REDOC: Tool = Tool {
    package: "redoc",
    script: "bundles/redoc.standalone.js",
};

/// axe-core: its minified build, which the e2e suite runs in the app's pages
/// (`tests/e2e/accessibility.rs` reads it from `sdk/js-tools/node_modules`).
pub(crate) const AXE_CORE: Tool = Tool {
    package: "axe-core",
    script: "axe.min.js",
};

/// Every tool the project pins.
pub(crate) const ALL: [Tool; 7] = [TSC, WASM_OPT, TERSER, PENPAL, COMLINK, REDOC, AXE_CORE];

/// The version `package.json` pins for `tool` in `devDependencies`, without a leading `=`, `^`,
/// `~` or `v`.
pub(crate) fn pinned_version(ctx: &Ctx, tool: Tool) -> Result<String, Error> {
    // From the root, whatever directory the shell is in (setup runs npm inside the project).
    let manifest = ctx
        .sh()
        .read_file(ctx.root().join(PROJECT_DIR).join("package.json"))?;
    let pinned = string_at(&manifest, &["devDependencies", tool.package]);
    let pinned = pinned.ok_or_else(|| {
        Error::failed(format!(
            "{PROJECT_DIR}/package.json has no \"{}\" in \"devDependencies\"",
            tool.package
        ))
    })?;
    Ok(pinned.trim_start_matches(['=', '^', '~', 'v']).to_owned())
}

/// The version of `tool` installed in the project's `node_modules`, if any.
pub(crate) fn installed_version(ctx: &Ctx, tool: Tool) -> Option<String> {
    let manifest = ctx
        .sh()
        .read_file(package_dir(ctx, tool).join("package.json"));
    string_at(&manifest.ok()?, &["version"])
}

/// The file of `tool`: the script `node` runs, or the build a page loads (a bridge library).
pub(crate) fn script(ctx: &Ctx, tool: Tool) -> Result<PathBuf, Error> {
    let script = package_dir(ctx, tool).join(tool.script);
    if script.is_file() {
        Ok(script)
    } else {
        Err(Error::failed(format!(
            "{} is missing; run `cargo xtask setup` (it runs npm in {PROJECT_DIR})",
            ctx.shown(&script)
        )))
    }
}

/// `tsc -p TSCONFIG`: one TypeScript project compiles without errors.
pub(crate) fn tsc(ctx: &Ctx, tsconfig: &str) -> Result<(), Error> {
    let (sh, tsc) = (ctx.sh(), script(ctx, TSC)?);
    Ok(cmd!(sh, "node {tsc} -p {tsconfig}").run()?)
}

fn package_dir(ctx: &Ctx, tool: Tool) -> PathBuf {
    let modules = ctx.root().join(PROJECT_DIR).join("node_modules");
    modules.join(tool.package)
}

/// The string at `path` (object keys from the top) in a JSON text.
fn string_at(json: &str, path: &[&str]) -> Option<String> {
    let mut value = &serde_json::from_str::<Value>(json).ok()?;
    for key in path {
        value = value.get(key)?;
    }
    value.as_str().map(str::to_owned)
}

#[cfg(test)]
mod tests {
    use super::*;

    const PACKAGE: &str = r#"{
  "name": "version",
  "dependencies": { "typescript": "1.0.0" },
  "devDependencies": { "left-pad": "1.3.0", "typescript": "5.9.3" },
  "version": "2.0.0"
}"#;

    #[test]
    fn strings_are_read_at_their_path_only() {
        let dev = string_at(PACKAGE, &["devDependencies", "typescript"]);
        assert_eq!(dev.as_deref(), Some("5.9.3"));
        assert_eq!(string_at(PACKAGE, &["version"]).as_deref(), Some("2.0.0"));
        assert_eq!(string_at(PACKAGE, &["devDependencies", "eslint"]), None);
        assert_eq!(string_at("not json", &["version"]), None);
    }

    #[test]
    fn the_real_project_pins_every_tool() {
        let ctx = Ctx::new().unwrap();
        for tool in ALL {
            let version = pinned_version(&ctx, tool).unwrap();
            assert_eq!(version.split('.').count(), 3, "{}: {version}", tool.package);
        }
    }

    #[test]
    fn pins_are_read_from_inside_the_project_too() {
        // Setup asks again once npm has run in the project's directory.
        let ctx = Ctx::new().unwrap();
        let _inside = ctx.sh().push_dir(PROJECT_DIR);
        for tool in ALL {
            assert!(pinned_version(&ctx, tool).is_ok(), "{}", tool.package);
        }
    }
}
