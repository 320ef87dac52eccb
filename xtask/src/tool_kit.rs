//! The tool author's kit under test: the npm package installed into a scratch TypeScript project
//! (`testkit/scratch-project/`, copied to `target/npm-test/project/`) offline from its tarball,
//! type-checked with the pinned `tsc`, and the browser tests written with its testing entry (the
//! scratch tool's, and each example tool's own in `example-tools/tests/`), run by
//! `cargo test -p toolbridge-testkit --features browser --test tool_tests` against the browser's
//! driver.

use std::ffi::OsStr;
use std::fs;
use std::path::{Path, PathBuf};
use std::process::Command;

use crate::browser::{self, Browser};
use crate::error::Error;
use crate::js_tools::{self, TSC};
use crate::npm_package;
use crate::process::{Ctx, describe};

/// The scratch project's template, relative to the workspace root.
const TEMPLATE: &str = "testkit/scratch-project";
/// Its file that must not compile: a misspelt bridge method.
const MISSPELT_TSCONFIG: &str = "tsconfig.misspelt.json";
/// What tsc must say about it: the method that does not exist, and the one meant.
const MISSPELT_ERRORS: [&str; 2] = ["Property 'lst' does not exist", "Did you mean 'list'?"];

/// `target/npm-test/project`.
pub(crate) fn project_dir(ctx: &Ctx) -> PathBuf {
    ctx.target_dir().join("npm-test").join("project")
}

/// A fresh copy of the scratch project with `tarball` installed by `npm install --offline`;
/// the project's directory.
pub(crate) fn install_project(ctx: &Ctx, tarball: &Path) -> Result<PathBuf, Error> {
    let project = project_dir(ctx);
    if project.exists() {
        fs::remove_dir_all(&project)
            .map_err(|e| Error::failed(format!("cannot empty {}: {e}", project.display())))?;
    }
    copy_tree(&ctx.root().join(TEMPLATE), &project)?;
    let mut npm = npm_package::npm(ctx);
    npm.current_dir(&project)
        .args(["install", "--offline", "--no-audit", "--no-fund"])
        .arg(tarball);
    println!(
        "sdk package: running `{}` in {}",
        describe(&npm),
        ctx.shown(&project)
    );
    let status = npm
        .status()
        .map_err(|e| Error::failed(format!("cannot start npm: {e}")))?;
    if !status.success() {
        return Err(Error::failed(format!(
            "npm could not install {} offline",
            ctx.shown(tarball)
        )));
    }
    let installed = project.join("node_modules/@toolbridge/sdk/package.json");
    if !installed.is_file() {
        return Err(Error::failed(format!(
            "npm install left no {}",
            ctx.shown(&installed)
        )));
    }
    Ok(project)
}

/// `tsc -p <project>/tsconfig.json`: the tool and its test compile against the installed
/// package (into the project's `dist/`).
pub(crate) fn compile(ctx: &Ctx, project: &Path) -> Result<Command, String> {
    let mut tsc = js_tools::command(ctx, TSC)?;
    tsc.arg("-p").arg(project.join("tsconfig.json"));
    Ok(tsc)
}

/// Compiles the misspelt file, which must fail with tsc naming the method; `Err` says what
/// happened instead.
pub(crate) fn misspelt_method_is_refused(ctx: &Ctx, project: &Path) -> Result<(), String> {
    let mut tsc = js_tools::command(ctx, TSC)?;
    tsc.arg("-p").arg(project.join(MISSPELT_TSCONFIG));
    println!("sdk package: running `{}` (it must fail)", describe(&tsc));
    let output = tsc.output().map_err(|e| format!("cannot start tsc: {e}"))?;
    let said = String::from_utf8_lossy(&output.stdout);
    print!("{said}");
    if output.status.success() {
        return Err(
            "tsc compiled a call of bridge.products.lst(), a method that does not exist".into(),
        );
    }
    match MISSPELT_ERRORS.iter().find(|error| !said.contains(*error)) {
        Some(missing) => Err(format!(
            "tsc refused the misspelt file, but without {missing:?}"
        )),
        None => Ok(()),
    }
}

/// The command that runs the browser tests whose names contain `filter` (`package::` or
/// `example_tools`) in `browser`, through `with-backends tools` (the driver and the README's
/// example under `target/tool-tests/<browser>/`), serving `package` (the package's files) and
/// `project` (the scratch project).
pub(crate) fn command(
    ctx: &Ctx,
    browser: &Browser,
    filter: &str,
    package: &Path,
    project: Option<&Path>,
) -> Result<Command, Error> {
    let dir = ctx.target_dir().join("tool-tests");
    let mut command = ctx.cargo();
    command
        .args(["test", "-p", "toolbridge-testkit", "--features", "browser"])
        .args(["--test", "tool_tests", "--", filter, "--test-threads=1"])
        .env("TOOLBRIDGE_KIT_PACKAGE", package);
    if let Some(project) = project {
        command.env("TOOLBRIDGE_KIT_PROJECT", project);
    }
    let args = [OsStr::new("--dir"), dir.as_os_str()];
    browser::with_backends(ctx, "tools", browser, &args, &command)
}

/// Copies the folder `from` to `to`, which must not exist yet.
fn copy_tree(from: &Path, to: &Path) -> Result<(), Error> {
    fs_err::create_dir_all(to)?;
    let entries = fs::read_dir(from)
        .map_err(|e| Error::failed(format!("cannot read {}: {e}", from.display())))?;
    for entry in entries {
        let entry =
            entry.map_err(|e| Error::failed(format!("cannot read {}: {e}", from.display())))?;
        let path = entry.path();
        let target = to.join(entry.file_name());
        if path.is_dir() {
            copy_tree(&path, &target)?;
        } else {
            fs::copy(&path, &target).map_err(|e| {
                Error::failed(format!(
                    "cannot copy {} to {}: {e}",
                    path.display(),
                    target.display()
                ))
            })?;
        }
    }
    Ok(())
}
