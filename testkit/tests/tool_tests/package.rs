//! The npm package as a tool author meets it: `npm install --offline` of the tarball
//! (`TOOLBRIDGE_KIT_TARBALL`) into a copy of the scratch TypeScript project
//! (`testkit/scratch-project/`, copied to cargo's test scratch directory), type-checked with the
//! pinned `tsc` (`sdk/js-tools`), and the project's two tools tested in the browser.
//!
//! Each step runs once per test run, the first time a test needs it; a test whose step failed
//! before it reports that step's failure.

use std::path::{Path, PathBuf};
use std::process::{Command, Output};
use std::sync::OnceLock;

use crate::assert_all_passed;
use crate::browser::{outcomes, setting};
use crate::site::Site;

/// The project's file that must not compile: a misspelt bridge method.
const MISSPELT_TSCONFIG: &str = "tsconfig.misspelt.json";
/// What tsc must say about it: the method that does not exist, and the one meant.
const MISSPELT_ERRORS: [&str; 2] = ["Property 'lst' does not exist", "Did you mean 'list'?"];

fn repository() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("..")
}

/// The scratch project with the package installed, made afresh once per run.
fn installed() -> &'static Path {
    static PROJECT: OnceLock<Result<PathBuf, String>> = OnceLock::new();
    match PROJECT.get_or_init(install) {
        Ok(project) => project,
        Err(why) => panic!("the package did not install: {why}"),
    }
}

fn install() -> Result<PathBuf, String> {
    let tarball = PathBuf::from(setting("TOOLBRIDGE_KIT_TARBALL"));
    let project = Path::new(env!("CARGO_TARGET_TMPDIR")).join("npm-test/project");
    if project.exists() {
        std::fs::remove_dir_all(&project)
            .map_err(|e| format!("cannot empty {}: {e}", project.display()))?;
    }
    copy_tree(&repository().join("testkit/scratch-project"), &project).map_err(|e| {
        format!(
            "cannot copy the scratch project to {}: {e}",
            project.display()
        )
    })?;
    let mut npm = Command::new("npm");
    npm.current_dir(&project)
        .args(["install", "--offline", "--no-audit", "--no-fund"])
        .arg(&tarball)
        .env("NPM_CONFIG_UPDATE_NOTIFIER", "false");
    let output = run(&mut npm)?;
    if !output.status.success() {
        return Err(format!(
            "npm could not install {} offline",
            tarball.display()
        ));
    }
    Ok(project)
}

/// The project compiled with `tsc` (its tool and test, into `dist/`), once per run.
fn compiled() -> &'static Path {
    static COMPILED: OnceLock<Result<(), String>> = OnceLock::new();
    let project = installed();
    let compiled =
        COMPILED.get_or_init(|| {
            let output = run(tsc().arg("-p").arg(project.join("tsconfig.json")))?;
            output.status.success().then_some(()).ok_or_else(|| {
                "tsc found errors in the scratch tool (its output is above)".to_owned()
            })
        });
    match compiled {
        Ok(()) => project,
        Err(why) => panic!("{why}"),
    }
}

/// `node <the pinned tsc>`.
fn tsc() -> Command {
    let mut tsc = Command::new("node");
    tsc.arg(repository().join("sdk/js-tools/node_modules/typescript/bin/tsc"));
    tsc
}

/// Runs `command`, printing its output (libtest shows it for a failed test).
fn run(command: &mut Command) -> Result<Output, String> {
    let output = command
        .output()
        .map_err(|e| format!("cannot start {command:?}: {e}"))?;
    print!("{}", String::from_utf8_lossy(&output.stdout));
    eprint!("{}", String::from_utf8_lossy(&output.stderr));
    Ok(output)
}

/// Copies the folder `from` to `to`.
fn copy_tree(from: &Path, to: &Path) -> std::io::Result<()> {
    std::fs::create_dir_all(to)?;
    for entry in std::fs::read_dir(from)? {
        let entry = entry?;
        let target = to.join(entry.file_name());
        if entry.file_type()?.is_dir() {
            copy_tree(&entry.path(), &target)?;
        } else {
            std::fs::copy(entry.path(), target)?;
        }
    }
    Ok(())
}

#[test]
fn the_package_installs_offline_with_its_version() {
    let installed = installed().join("node_modules/@toolbridge/sdk/package.json");
    let manifest = std::fs::read_to_string(&installed).expect("the installed package.json");
    let manifest: serde_json::Value = serde_json::from_str(&manifest).expect("JSON");
    assert_eq!(manifest["name"], "@toolbridge/sdk");
    let version = manifest["version"].as_str().unwrap_or_default();
    assert!(
        version.split('.').count() == 3 && !version.starts_with("0.0.0"),
        "the installed package has version {version:?}, not the SDK's"
    );
}

#[test]
fn the_tool_and_its_test_compile_against_the_package() {
    assert!(compiled().join("dist/tool.js").is_file());
}

#[test]
fn a_misspelt_method_does_not_compile() {
    let project = installed();
    let output = run(tsc().arg("-p").arg(project.join(MISSPELT_TSCONFIG))).unwrap();
    assert!(
        !output.status.success(),
        "tsc compiled a call of bridge.products.lst(), a method that does not exist"
    );
    let said = String::from_utf8_lossy(&output.stdout);
    for error in MISSPELT_ERRORS {
        assert!(
            said.contains(error),
            "tsc refused it, but without {error:?}"
        );
    }
}

/// The project's small tool, compiled from TypeScript against the installed package, passes its
/// test, which imports the package's testing entry.
#[tokio::test]
async fn the_scratch_tool_passes_its_test() {
    let project = compiled();
    // Nothing at /sdk/bridge.js: the tool imports bridge.js from the package.
    let served = Site::default().mount("/", project).serve().await;
    let page = format!("{}/test.html", served.origin);
    assert_all_passed("the scratch tool's test", &outcomes(&page).await);
}

/// The project's second tool, which has a vendor server behind it, passes its tests: its
/// identity token verified with the browser's Web Crypto API against the test host's key set, a
/// token from the test host's clock set in the past refused as expired, the refusals of a tool
/// whose manifest does not ask for identity, secret settings kept from the tool, and the fetch
/// stand-in replacing placeholders before the test's handler answers.
#[tokio::test]
async fn the_scratch_vendor_tool_passes_its_tests() {
    let project = compiled();
    let served = Site::default().mount("/", project).serve().await;
    let page = format!("{}/whoami-test.html", served.origin);
    assert_all_passed("the vendor-backed tool's tests", &outcomes(&page).await);
}
