//! The npm package `@toolbridge/sdk` (`target/npm/toolbridge-sdk-<version>.tgz`), for tool authors
//! who bundle bridge.js, want its types, use the page helpers, or test their tool: bridge.js and
//! `bridge.d.ts` from `sdk/dist`; the page helpers (`ui.js`, `ui.d.ts`, `ui.css`) from `sdk/ui`;
//! the `testing` entry, hand-written in `testkit/npm/testing/`, with the host module
//! (`host/dist`) and the test kit's memory backend (the `toolbridge-testkit` crate built for
//! wasm32, `wasm-bindgen --target web`) beside it; `testkit/npm/package.json` with the SDK's
//! version; and `testkit/npm/README.md`. The files are staged in `target/npm/package/` and packed
//! there with `npm pack`. The package has no dependencies, so it installs offline.

use std::fs;
use std::path::{Path, PathBuf};

use crate::bridge_js;
use crate::error::Error;
use crate::host_module;
use crate::process::{Ctx, capture, run_step};
use crate::wasm_crate;

/// The package's name on npm.
pub(crate) const NAME: &str = "@toolbridge/sdk";
/// The test kit's crate.
const TESTKIT: &str = "toolbridge-testkit";
/// Its file name in `target/`.
const TESTKIT_FILE_NAME: &str = "toolbridge_testkit";
/// How its lines start.
const LABEL: &str = "npm package";
/// The package's hand-written sources, relative to the workspace root.
const SOURCES: &str = "testkit/npm";
/// The page helpers' sources (`@toolbridge/sdk/ui`), relative to the workspace root.
const UI_SOURCES: &str = "sdk/ui";
/// Their files, at the package's root.
const UI_FILES: [&str; 3] = ["ui.js", "ui.d.ts", "ui.css"];
/// The version in the package.json template, which the SDK's replaces.
const VERSION_PLACEHOLDER: &str = "0.0.0-set-by-cargo-xtask-build";
/// The host module's files the testing entry loads.
const HOST_FILES: [&str; 4] = [
    "toolbridge_host.js",
    "toolbridge_host_bg.wasm",
    "toolbridge_host.d.ts",
    "toolbridge_host_bg.wasm.d.ts",
];

/// `target/npm`, where the tarball goes.
pub(crate) fn dir(ctx: &Ctx) -> PathBuf {
    ctx.target_dir().join("npm")
}

/// The package's files as packed (what the tarball unpacks to).
pub(crate) fn stage_dir(ctx: &Ctx) -> PathBuf {
    dir(ctx).join("package")
}

/// Builds the package from `sdk/dist` (built first if missing) and `host/dist` (which this
/// builds), and returns the tarball's path.
pub(crate) fn build(ctx: &Ctx) -> Result<PathBuf, Error> {
    if !bridge_js::output(ctx).is_file() {
        bridge_js::build(ctx)?;
    }
    host_module::build(ctx)?;
    let version = bridge_js::sdk_version(ctx.root())?;
    let stage = stage_dir(ctx);
    if stage.exists() {
        fs::remove_dir_all(&stage)
            .map_err(|e| Error::failed(format!("cannot empty {}: {e}", stage.display())))?;
    }
    let testing = stage.join("testing");
    fs_err::create_dir_all(testing.join("host"))?;
    fs_err::create_dir_all(testing.join("memory"))?;

    let sdk = bridge_js::dist_dir(ctx);
    copy(&sdk.join("bridge.js"), &stage.join("bridge.js"))?;
    copy(&sdk.join("bridge.d.ts"), &stage.join("bridge.d.ts"))?;
    for file in UI_FILES {
        copy(&ctx.root().join(UI_SOURCES).join(file), &stage.join(file))?;
    }
    let host = host_module::dist_dir(ctx);
    for file in HOST_FILES {
        copy(&host.join(file), &testing.join("host").join(file))?;
    }
    without_dispose(&testing.join("host").join("toolbridge_host.d.ts"))?;
    let sources = ctx.root().join(SOURCES);
    for file in ["index.js", "index.d.ts"] {
        copy(&sources.join("testing").join(file), &testing.join(file))?;
    }
    copy(&sources.join("README.md"), &stage.join("README.md"))?;
    let manifest = fs_err::read_to_string(sources.join("package.json"))?;
    if !manifest.contains(VERSION_PLACEHOLDER) {
        return Err(Error::failed(format!(
            "{SOURCES}/package.json must have \"version\": \"{VERSION_PLACEHOLDER}\" (the SDK's version replaces it)"
        )));
    }
    fs_err::write(
        stage.join("package.json"),
        manifest.replace(VERSION_PLACEHOLDER, &version).as_bytes(),
    )?;

    let module = wasm_crate::build(
        ctx,
        LABEL,
        wasm_crate::SPEED_PROFILE,
        TESTKIT,
        TESTKIT_FILE_NAME,
        &["--lib"],
    )?;
    let mut bindgen = ctx.command("wasm-bindgen");
    bindgen.args([
        "--target",
        "web",
        "--remove-producers-section",
        "--out-dir",
        &ctx.shown(&testing.join("memory")),
        &ctx.shown(&module),
    ]);
    run_step(LABEL, &mut bindgen)?;
    without_dispose(
        &testing
            .join("memory")
            .join(format!("{TESTKIT_FILE_NAME}.d.ts")),
    )?;

    let tarball = pack(ctx, &stage, &version)?;
    println!("{LABEL}: wrote {} ({NAME} {version})", ctx.shown(&tarball));
    Ok(tarball)
}

/// `npm pack` of `stage` into `target/npm`; the tarball's path.
fn pack(ctx: &Ctx, stage: &Path, version: &str) -> Result<PathBuf, Error> {
    if ctx.find("npm").is_none() {
        return Err(Error::failed(
            "npm not found; install Node.js (it comes with npm)",
        ));
    }
    let out = dir(ctx);
    let mut npm = npm(ctx);
    npm.current_dir(stage)
        .args(["pack", "--pack-destination"])
        .arg(&out);
    let printed = String::from_utf8_lossy(&capture(&mut npm)?).into_owned();
    // npm prints the name of the tarball it wrote last.
    let name = tarball_name(version);
    if !printed.lines().any(|line| line.trim() == name) {
        return Err(Error::failed(format!(
            "npm pack did not write {name}; it printed: {}",
            printed.trim()
        )));
    }
    Ok(out.join(name))
}

/// `toolbridge-sdk-<version>.tgz`: the name `npm pack` gives the package's tarball.
pub(crate) fn tarball_name(version: &str) -> String {
    format!("toolbridge-sdk-{version}.tgz")
}

/// `npm`, quiet and offline: no update check, no audit, no funding notice, nothing fetched.
pub(crate) fn npm(ctx: &Ctx) -> std::process::Command {
    let mut npm = ctx.command("npm");
    npm.env("NPM_CONFIG_UPDATE_NOTIFIER", "false")
        .env("NPM_CONFIG_AUDIT", "false")
        .env("NPM_CONFIG_FUND", "false")
        .env("NPM_CONFIG_OFFLINE", "true");
    npm
}

/// The member wasm-bindgen declares on its classes for `using`, which only compiles with the
/// `ESNext.Disposable` library: left out of the package's declarations, so that a tool's project
/// type-checks them with the libraries it already has (`free()` stays).
const DISPOSE_MEMBER: &str = "[Symbol.dispose](): void;";

/// Removes [`DISPOSE_MEMBER`] from the declarations in `path`.
fn without_dispose(path: &Path) -> Result<(), Error> {
    let text = fs_err::read_to_string(path)?;
    let kept: Vec<&str> = text
        .lines()
        .filter(|line| line.trim() != DISPOSE_MEMBER)
        .collect();
    Ok(fs_err::write(path, format!("{}\n", kept.join("\n")))?)
}

fn copy(from: &Path, to: &Path) -> Result<(), Error> {
    fs::copy(from, to).map(|_| ()).map_err(|e| {
        Error::failed(format!(
            "cannot copy {} to {}: {e}",
            from.display(),
            to.display()
        ))
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_template_carries_the_placeholder_and_the_exports() {
        let root = Path::new(env!("CARGO_MANIFEST_DIR")).parent().unwrap();
        let manifest = fs::read_to_string(root.join(SOURCES).join("package.json")).unwrap();
        assert!(manifest.contains(VERSION_PLACEHOLDER));
        for entry in [
            "\"./testing\"",
            "\"./bridge.d.ts\"",
            "\"./testing/index.d.ts\"",
        ] {
            assert!(manifest.contains(entry), "{entry}");
        }
        assert!(!manifest.contains("\"dependencies\""));
    }

    #[test]
    fn the_tarball_is_named_as_npm_names_it() {
        assert_eq!(tarball_name("2.1.0"), "toolbridge-sdk-2.1.0.tgz");
    }
}
