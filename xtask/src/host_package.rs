//! The npm package `@toolbridge/host` (`target/npm/toolbridge-host-<version>.tgz`), for platform
//! teams whose page takes the host module through a bundler: the four files of `host/dist` (the
//! ES module whose default export `init` loads `new URL("toolbridge_host_bg.wasm",
//! import.meta.url)`, its declarations, the `.wasm` and its declarations), `host/npm/package.json`
//! with the `toolbridge-host` crate's version, and `host/npm/README.md`. They are staged in
//! `target/npm/host-package/` and packed there as the SDK's package is
//! ([`npm_package::pack`]). The package has no dependencies, so it installs offline.
//!
//! Also the bundlers it is tested with: the scratch platform page (`host/scratch-project/`) pins
//! Vite, webpack and webpack-cli in its `package.json` and `package-lock.json`; `cargo xtask
//! setup` copies those two files into [`project_dir`] and runs `npm ci` there, so that
//! `node_modules` stays under the target directory. The "host package" suite copies the page's
//! other files beside them, installs the tarball offline and builds the page with each bundler.

use std::path::PathBuf;

use serde_json::Value;

use crate::ctx::Ctx;
use crate::error::Error;
use crate::npm_package;
use crate::wasm;

/// The package's hand-written sources, relative to the workspace root.
const SOURCES: &str = "host/npm";
/// The crate whose version the package carries.
const CRATE: &str = "toolbridge-host";
/// The scratch platform page, relative to the workspace root.
pub(crate) const SCRATCH_PROJECT: &str = "host/scratch-project";
/// The files of [`SCRATCH_PROJECT`] that say what `npm ci` installs.
const MANIFESTS: [&str; 2] = ["package.json", "package-lock.json"];

/// The package's files as packed: `target/npm/host-package` (the SDK's are in
/// `target/npm/package`).
pub(crate) fn stage_dir(ctx: &Ctx) -> PathBuf {
    npm_package::dir(ctx).join("host-package")
}

/// The copy of the scratch platform page that holds the pinned bundlers in its `node_modules`:
/// `target/host-scratch-project`.
pub(crate) fn project_dir(ctx: &Ctx) -> PathBuf {
    ctx.target_dir().join("host-scratch-project")
}

/// Builds `host/dist` ([`wasm::host_module`]), then the package ([`package`]); the tarball's path.
pub(crate) fn build(ctx: &Ctx) -> Result<PathBuf, Error> {
    wasm::host_module(ctx)?;
    package(ctx)
}

/// Packs the package from `host/dist` as it is (`cargo xtask build` has just built it); the
/// tarball's path.
pub(crate) fn package(ctx: &Ctx) -> Result<PathBuf, Error> {
    let version = crate_version(ctx)?;
    let sh = ctx.sh();
    let stage = stage_dir(ctx);
    sh.remove_path(&stage)?;
    sh.create_dir(&stage)?;
    let dist = wasm::host_dist(ctx);
    for file in npm_package::HOST_FILES {
        let built = dist.join(file);
        if !built.is_file() {
            return Err(Error::failed(format!(
                "{} is missing: the host module is not built (`cargo xtask build` builds it)",
                ctx.shown(&built)
            )));
        }
        sh.copy_file(built, &stage)?;
    }
    // As in the SDK's package: a platform's TypeScript project need not have the
    // `ESNext.Disposable` library to type-check against the declarations.
    npm_package::without_dispose(ctx, &stage.join("toolbridge_host.d.ts"))?;
    sh.copy_file(ctx.root().join(SOURCES).join("README.md"), &stage)?;
    npm_package::write_manifest(ctx, SOURCES, &version, &stage)?;
    npm_package::pack(ctx, &stage, &format!("toolbridge-host-{version}.tgz"))
}

/// The version of the `toolbridge-host` crate (the workspace's), from `cargo metadata`.
pub(crate) fn crate_version(ctx: &Ctx) -> Result<String, Error> {
    let metadata = ctx
        .cargo()
        .args(["metadata", "--no-deps", "--format-version", "1"])
        .quiet()
        .read()?;
    version_in_metadata(&metadata, CRATE).ok_or_else(|| {
        Error::failed(format!(
            "`cargo metadata --no-deps` lists no package {CRATE} with a version"
        ))
    })
}

/// The version of the package `name` in the JSON `cargo metadata` prints.
fn version_in_metadata(metadata: &str, name: &str) -> Option<String> {
    let metadata: Value = serde_json::from_str(metadata).ok()?;
    let package = metadata
        .get("packages")?
        .as_array()?
        .iter()
        .find(|package| package.get("name").and_then(Value::as_str) == Some(name))?;
    package.get("version")?.as_str().map(str::to_owned)
}

/// What `npm ci` in [`project_dir`] would change: each bundler `host/scratch-project/package.json`
/// pins that is missing or at another version there (`vite 8.3.8`), and each of its manifests
/// whose copy there differs. Empty when the bundlers are in place.
pub(crate) fn stale_bundlers(ctx: &Ctx) -> Result<Vec<String>, Error> {
    let sh = ctx.sh();
    let (source, project) = (ctx.root().join(SCRATCH_PROJECT), project_dir(ctx));
    let manifest = sh.read_file(source.join("package.json"))?;
    let pins = dev_dependencies(&manifest).ok_or_else(|| {
        Error::failed(format!(
            "{SCRATCH_PROJECT}/package.json has no \"devDependencies\" of exact versions"
        ))
    })?;
    let mut stale = Vec::new();
    for (package, version) in pins {
        let installed = project
            .join("node_modules")
            .join(&package)
            .join("package.json");
        let installed = sh.read_file(installed).ok();
        let installed = installed.as_deref().and_then(|text| {
            let value: Value = serde_json::from_str(text).ok()?;
            value.get("version")?.as_str().map(str::to_owned)
        });
        if installed.as_deref() != Some(version.as_str()) {
            stale.push(format!("{package} {version}"));
        }
    }
    for file in MANIFESTS {
        let wanted = sh.read_binary_file(source.join(file))?;
        if sh.read_binary_file(project.join(file)).ok() != Some(wanted) {
            stale.push(format!("{SCRATCH_PROJECT}/{file}"));
        }
    }
    Ok(stale)
}

/// Copies the scratch project's `package.json` and `package-lock.json` into [`project_dir`], for
/// `npm ci` to install there.
pub(crate) fn copy_manifests(ctx: &Ctx) -> Result<(), Error> {
    let sh = ctx.sh();
    let project = project_dir(ctx);
    sh.create_dir(&project)?;
    for file in MANIFESTS {
        sh.copy_file(ctx.root().join(SCRATCH_PROJECT).join(file), &project)?;
    }
    Ok(())
}

/// The `devDependencies` of a `package.json`, package and version, each pinned to one version
/// (digits and dots, nothing like `^` or a range); `None` when there are none or one is not.
fn dev_dependencies(manifest: &str) -> Option<Vec<(String, String)>> {
    let manifest: Value = serde_json::from_str(manifest).ok()?;
    let pins = manifest.get("devDependencies")?.as_object()?;
    let exact = |version: &str| {
        !version.is_empty() && version.chars().all(|c| c.is_ascii_digit() || c == '.')
    };
    let pins: Option<Vec<(String, String)>> = pins
        .iter()
        .map(|(package, version)| {
            let version = version.as_str().filter(|version| exact(version))?;
            Some((package.clone(), version.to_owned()))
        })
        .collect();
    pins.filter(|pins| !pins.is_empty())
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
        assert!(manifest.contains(npm_package::VERSION_PLACEHOLDER));
        let manifest: Value = serde_json::from_str(&manifest).unwrap();
        assert_eq!(manifest["name"], "@toolbridge/host");
        assert_eq!(manifest["type"], "module");
        let main = &manifest["exports"]["."];
        assert_eq!(main["types"], "./toolbridge_host.d.ts");
        assert_eq!(main["default"], "./toolbridge_host.js");
        assert_eq!(
            manifest["exports"]["./toolbridge_host_bg.wasm"],
            "./toolbridge_host_bg.wasm"
        );
        assert!(manifest.get("dependencies").is_none());
        let files = manifest["files"].as_array().unwrap();
        for file in npm_package::HOST_FILES.iter().chain(&["README.md"]) {
            assert!(files.iter().any(|listed| listed == file), "{file}");
        }
    }

    #[test]
    fn the_crate_version_is_read_from_cargo_metadata() {
        let metadata = r#"{"packages": [
            {"name": "toolbridge-protocol", "version": "0.1.0"},
            {"name": "toolbridge-host", "version": "2.3.4"}
        ]}"#;
        assert_eq!(
            version_in_metadata(metadata, "toolbridge-host").as_deref(),
            Some("2.3.4")
        );
        assert_eq!(version_in_metadata(metadata, "toolbridge-sdk"), None);
        assert_eq!(version_in_metadata("not json", "toolbridge-host"), None);
        let ctx = Ctx::new().unwrap();
        let version = crate_version(&ctx).unwrap();
        assert_eq!(version.split('.').count(), 3, "{version}");
    }

    #[test]
    fn the_scratch_project_pins_its_bundlers_exactly() {
        let pins =
            dev_dependencies(r#"{"devDependencies": {"vite": "8.3.8", "webpack": "5.113.0"}}"#);
        assert_eq!(
            pins,
            Some(vec![
                ("vite".to_owned(), "8.3.8".to_owned()),
                ("webpack".to_owned(), "5.113.0".to_owned())
            ])
        );
        assert_eq!(
            dev_dependencies(r#"{"devDependencies": {"vite": "^8.3.8"}}"#),
            None
        );
        assert_eq!(dev_dependencies(r#"{"devDependencies": {}}"#), None);
        let ctx = Ctx::new().unwrap();
        let manifest = ctx
            .sh()
            .read_file(format!("{SCRATCH_PROJECT}/package.json"))
            .unwrap();
        let pinned: Vec<String> = dev_dependencies(&manifest)
            .unwrap()
            .into_iter()
            .map(|(package, _)| package)
            .collect();
        assert_eq!(
            pinned,
            [
                "@rollup/plugin-node-resolve",
                "@web/rollup-plugin-import-meta-assets",
                "esbuild",
                "rollup",
                "vite",
                "webpack",
                "webpack-cli"
            ]
        );
        for file in MANIFESTS {
            assert!(
                ctx.root().join(SCRATCH_PROJECT).join(file).is_file(),
                "{file}"
            );
        }
    }
}
