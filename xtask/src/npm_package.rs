//! The npm package `@toolbridge/sdk` (`target/npm/toolbridge-sdk-<version>.tgz`), for tool authors
//! who bundle bridge.js, want its types, use the page helpers, or test their tool: bridge.js and
//! `bridge.d.ts` from `sdk/dist`; the page helpers (`ui.js`, `ui.d.ts`, `ui.css`) from `sdk/ui`;
//! the `testing` entry, hand-written in `testkit/npm/testing/`, with the host module
//! (`host/dist`) and the test kit's memory backend (the `toolbridge-testkit` crate built for
//! wasm32, `wasm-bindgen --target web`) beside it; `testkit/npm/package.json` with the SDK's
//! version; and `testkit/npm/README.md`. The files are staged in `target/npm/package/` and packed
//! there with `npm pack`. The package has no dependencies, so it installs offline.
//!
//! The version-stamped `package.json`, `npm pack` and the declarations without `Symbol.dispose`
//! are shared with `@toolbridge/host` ([`crate::host_package`]).

use std::path::{Path, PathBuf};

use xshell::cmd;

use crate::bridge_js;
use crate::ctx::Ctx;
use crate::error::Error;
use crate::wasm;

/// The package's hand-written sources, relative to the workspace root.
const SOURCES: &str = "testkit/npm";
/// The page helpers' files (`@toolbridge/sdk/ui`), at the package's root.
const UI_FILES: [&str; 3] = ["sdk/ui/ui.js", "sdk/ui/ui.d.ts", "sdk/ui/ui.css"];
/// The version in the package.json templates, which the package's own replaces.
pub(crate) const VERSION_PLACEHOLDER: &str = "0.0.0-set-by-cargo-xtask-build";
/// The host module's files, as `wasm::host_module` writes them into `host/dist` (the testing entry
/// loads them; `@toolbridge/host` is them).
pub(crate) const HOST_FILES: [&str; 4] = [
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
    wasm::host_module(ctx)?;
    let sh = ctx.sh();
    let version = bridge_js::sdk_version(ctx)?;
    let stage = stage_dir(ctx);
    sh.remove_path(&stage)?;
    let (testing, host) = (stage.join("testing"), stage.join("testing/host"));
    sh.create_dir(&host)?;
    let sdk = bridge_js::dist_dir(ctx);
    for file in [sdk.join("bridge.js"), sdk.join("bridge.d.ts")] {
        sh.copy_file(file, &stage)?;
    }
    for file in UI_FILES {
        sh.copy_file(file, &stage)?;
    }
    for file in HOST_FILES {
        sh.copy_file(wasm::host_dist(ctx).join(file), &host)?;
    }
    without_dispose(ctx, &host.join("toolbridge_host.d.ts"))?;
    for file in ["testing/index.js", "testing/index.d.ts"] {
        sh.copy_file(format!("{SOURCES}/{file}"), &testing)?;
    }
    sh.copy_file(format!("{SOURCES}/README.md"), &stage)?;
    write_manifest(ctx, SOURCES, &version, &stage)?;

    // The test kit's memory backend.
    let module = wasm::build(ctx, wasm::HOST_PROFILE, "toolbridge-testkit", &["--lib"])?;
    let memory = testing.join("memory");
    let flags = ["--remove-producers-section"];
    wasm::bindgen(ctx, &module, "web", &flags, &memory)?;
    without_dispose(ctx, &memory.join("toolbridge_testkit.d.ts"))?;

    pack(ctx, &stage, &format!("toolbridge-sdk-{version}.tgz"))
}

/// Writes `SOURCES/package.json` (a package's hand-written sources, relative to the root) into
/// `stage` with `version` in place of [`VERSION_PLACEHOLDER`], which the template must hold.
pub(crate) fn write_manifest(
    ctx: &Ctx,
    sources: &str,
    version: &str,
    stage: &Path,
) -> Result<(), Error> {
    let sh = ctx.sh();
    let manifest = sh.read_file(format!("{sources}/package.json"))?;
    if !manifest.contains(VERSION_PLACEHOLDER) {
        return Err(Error::failed(format!(
            "{sources}/package.json must have \"version\": \"{VERSION_PLACEHOLDER}\" (the \
             package's version replaces it)"
        )));
    }
    let manifest = manifest.replace(VERSION_PLACEHOLDER, version);
    Ok(sh.write_file(stage.join("package.json"), manifest)?)
}

/// `npm pack` of the package staged in `stage`, into [`dir`]: the tarball's path, which npm must
/// have called `name`.
pub(crate) fn pack(ctx: &Ctx, stage: &Path, name: &str) -> Result<PathBuf, Error> {
    // Offline and quiet; npm prints the name of the tarball it wrote last.
    let (sh, out) = (ctx.sh(), dir(ctx));
    let _stage = sh.push_dir(stage);
    let printed = cmd!(sh, "npm pack --pack-destination {out}")
        .env("NPM_CONFIG_OFFLINE", "true")
        .env("NPM_CONFIG_UPDATE_NOTIFIER", "false")
        .read()?;
    if !printed.lines().any(|line| line.trim() == name) {
        return Err(Error::failed(format!(
            "npm pack in {} did not write {name}; it printed: {printed}",
            ctx.shown(stage)
        )));
    }
    let tarball = out.join(name);
    let size = sh.read_binary_file(&tarball)?.len();
    println!("npm package: wrote {} ({size} bytes)", ctx.shown(&tarball));
    Ok(tarball)
}

/// The member wasm-bindgen declares on its classes for `using`, which only compiles with the
/// `ESNext.Disposable` library: left out of the package's declarations, so that a tool's project
/// type-checks them with the libraries it already has (`free()` stays).
const DISPOSE_MEMBER: &str = "[Symbol.dispose](): void;";

/// Removes [`DISPOSE_MEMBER`] from the declarations in `path`.
pub(crate) fn without_dispose(ctx: &Ctx, path: &Path) -> Result<(), Error> {
    let text = ctx.sh().read_file(path)?;
    let kept: Vec<&str> = text
        .lines()
        .filter(|line| line.trim() != DISPOSE_MEMBER)
        .collect();
    Ok(ctx.sh().write_file(path, kept.join("\n") + "\n")?)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_template_carries_the_placeholder_and_the_exports() {
        let ctx = Ctx::new().unwrap();
        let manifest = ctx
            .sh()
            .read_file(format!("{SOURCES}/package.json"))
            .unwrap();
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
}
