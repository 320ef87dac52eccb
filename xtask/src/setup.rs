//! `cargo xtask setup`: brings this machine to the toolchain the checks need, and is cheap to
//! repeat. Every step prints one line ending in `ok`, `installed`, what to run by hand, or FAILED.

use std::path::{Path, PathBuf};

use xshell::{Cmd, cmd};

use crate::bridge_js;
use crate::ctx::{self, Ctx, Stream};
use crate::error::Error;
use crate::js_tools;
use crate::pins::{self, CARGO_FUZZ, GECKODRIVER, SCHEMATHESIS, WASM_PACK, WASM_TARGET};

/// The label of the step that builds bridge.js.
const BRIDGE_JS_STEP: &str = "sdk/dist/bridge.js (what the SDK browser tests load)";

/// Debian packages with the programs each provides (any one will do): browsers for the browser
/// test suites and the bench, and the load generator of `cargo xtask bench`.
const DEBIAN_PACKAGES: [(&str, &[&str]); 4] = [
    (
        "chromium",
        &["chromium", "chromium-browser", "google-chrome"],
    ),
    ("chromium-driver", &["chromedriver"]),
    ("firefox-esr", &["firefox"]),
    ("wrk", &["wrk"]),
];

/// Which command setup runs for: each installs only what it uses, so that `serve` on a fresh
/// machine does not wait for browsers and `bench` does not wait for the conformance suite's
/// Python tools.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Purpose {
    /// `setup` and `test`: everything.
    Everything,
    /// `serve`: what builds bridge.js and the host module.
    Serve,
    /// `bench`: the builds, Chromium with its driver, wrk, and the npm packages (Penpal and
    /// Comlink among them).
    Bench,
}

impl Purpose {
    /// The Debian packages this purpose needs.
    fn debian_packages(self) -> Vec<(&'static str, &'static [&'static str])> {
        DEBIAN_PACKAGES
            .into_iter()
            .filter(|(package, _)| match self {
                Purpose::Everything => true,
                Purpose::Serve => false,
                Purpose::Bench => *package != "firefox-esr",
            })
            .collect()
    }
}

/// How one step ended.
enum Step {
    /// It was already in place.
    Ok,
    /// This run installed it.
    Installed,
    /// Missing, and we may not install it ourselves: a person should run this command. The
    /// suites that need it will fail until then, but setup itself carries on and succeeds.
    Manual(String),
    /// Missing and could not be installed: setup as a whole fails.
    Failed(String),
}

/// Runs every step `purpose` needs, printing one line each; fails when a step failed.
pub(crate) fn run(ctx: &Ctx, purpose: Purpose) -> Result<(), Error> {
    let everything = purpose == Purpose::Everything;
    let mut all_ok = ensure_wasm_target(ctx).is_ok();
    all_ok &= match pins::wasm_bindgen_version(ctx) {
        Ok(version) => report(
            &format!("wasm-bindgen-cli {version}"),
            cargo_tool(ctx, "wasm-bindgen-cli", "wasm-bindgen", &version),
        ),
        Err(error) => report("wasm-bindgen-cli", Step::Failed(error.to_string())),
    };
    if everything {
        all_ok &= report(
            &format!("wasm-pack {WASM_PACK}"),
            cargo_tool(ctx, "wasm-pack", "wasm-pack", WASM_PACK),
        );
    }
    let packages = purpose.debian_packages();
    if !packages.is_empty() {
        let names: Vec<&str> = packages.iter().map(|(package, _)| *package).collect();
        all_ok &= report(
            &format!("Debian packages ({})", names.join(", ")),
            debian_packages(ctx, &packages),
        );
    }
    if everything {
        all_ok &= report(
            &format!("geckodriver {GECKODRIVER}"),
            cargo_tool(ctx, "geckodriver", "geckodriver", GECKODRIVER),
        );
    }
    all_ok &= report(
        &format!("js tools (npm in {})", js_tools::PROJECT_DIR),
        npm_tools(ctx),
    );
    if everything {
        let venv = ctx.shown(&venv_dir(ctx));
        all_ok &= report(
            &format!("schemathesis {SCHEMATHESIS} (virtualenv in {venv})"),
            schemathesis(ctx),
        );
        // Last: building it needs the steps above. (`serve` and `bench` build it themselves.)
        all_ok &= report(BRIDGE_JS_STEP, bridge_js(ctx));
    }
    if all_ok {
        Ok(())
    } else {
        Err(Error::failed(
            "setup is incomplete: see the FAILED lines above",
        ))
    }
}

/// The rustup toolchain the fuzz suites build with (cargo-fuzz needs nightly's sanitizer flags).
pub(crate) const FUZZ_TOOLCHAIN: &str = "nightly";

/// What the fuzz suites need beyond the usual setup: a nightly toolchain and `cargo-fuzz`,
/// installed when missing. Prints one line each; `false` when either is missing afterwards.
pub(crate) fn ensure_fuzz_tools(ctx: &Ctx) -> bool {
    report(
        &format!("rustup toolchain {FUZZ_TOOLCHAIN}"),
        fuzz_toolchain(ctx),
    ) && report(
        &format!("cargo-fuzz {CARGO_FUZZ}"),
        cargo_tool(ctx, "cargo-fuzz", "cargo-fuzz", CARGO_FUZZ),
    )
}

fn fuzz_toolchain(ctx: &Ctx) -> Step {
    let sh = ctx.sh();
    let Some(installed) = probe(cmd!(sh, "rustup toolchain list")) else {
        return Step::Failed("`rustup toolchain list` failed; is rustup installed?".to_owned());
    };
    if installed
        .lines()
        .any(|line| line.starts_with(&format!("{FUZZ_TOOLCHAIN}-")))
    {
        return Step::Ok;
    }
    let add = cmd!(
        sh,
        "rustup toolchain install {FUZZ_TOOLCHAIN} --profile minimal"
    );
    install(
        &format!("rustup toolchain {FUZZ_TOOLCHAIN}"),
        add,
        || true,
        "",
    )
}

/// The rustup step alone, for commands that only need to build for wasm32. Prints its line.
pub(crate) fn ensure_wasm_target(ctx: &Ctx) -> Result<(), Error> {
    let label = format!("rustup target {WASM_TARGET}");
    if report(&label, wasm_target(ctx)) {
        Ok(())
    } else {
        Err(Error::failed(format!("{label} is missing")))
    }
}

/// Prints the step's line; `false` only for a failed step.
fn report(label: &str, step: Step) -> bool {
    match step {
        Step::Ok => println!("setup: {label} ... ok"),
        Step::Installed => println!("setup: {label} ... installed"),
        Step::Manual(command) => println!("setup: {label} ... missing; run by hand: {command}"),
        Step::Failed(why) => {
            println!("setup: {label} ... FAILED: {why}");
            return false;
        }
    }
    true
}

/// Runs a question such as "which version is installed?" quietly: its stdout, or `None` when it
/// cannot start or fails.
fn probe(cmd: Cmd<'_>) -> Option<String> {
    cmd.quiet().ignore_stderr().read().ok()
}

/// Says what is about to be installed, runs the installer, and checks with `verify`:
/// `Installed`, or `Failed(unverified)` when it succeeded but `verify` does not agree.
fn install(what: &str, installer: Cmd<'_>, verify: impl Fn() -> bool, unverified: &str) -> Step {
    println!("setup: {what} ... installing: {installer}");
    match installer.quiet().run() {
        Ok(()) if verify() => Step::Installed,
        Ok(()) => Step::Failed(unverified.to_owned()),
        Err(error) => Step::Failed(format!(
            "{error} (its output is above); fix that and run it by hand"
        )),
    }
}

fn wasm_target(ctx: &Ctx) -> Step {
    let sh = ctx.sh();
    let Some(installed) = probe(cmd!(sh, "rustup target list --installed")) else {
        return Step::Failed(format!(
            "`rustup target list --installed` failed; add the {WASM_TARGET} target to your Rust \
             toolchain by hand"
        ));
    };
    if installed.lines().any(|line| line.trim() == WASM_TARGET) {
        return Step::Ok;
    }
    let add = cmd!(sh, "rustup target add {WASM_TARGET}");
    install(&format!("rustup target {WASM_TARGET}"), add, || true, "")
}

/// A binary installed with `cargo install --locked <krate> --version =<version>`, checked with
/// `<binary> --version`. A different installed version is replaced.
fn cargo_tool(ctx: &Ctx, krate: &str, binary: &str, version: &str) -> Step {
    let found = installed_version(ctx, binary);
    if found.as_deref() == Some(version) {
        return Step::Ok;
    }
    let what = match &found {
        Some(other) => format!("{krate} {version} (found {other})"),
        None => format!("{krate} {version}"),
    };
    let exact = format!("={version}");
    let cargo_install = || ctx.cargo().args(["install", krate, "--version", &exact]);
    let locked = cargo_install().arg("--locked");
    println!("setup: {what} ... installing: {locked}");
    let mut unresolvable = false;
    let result = ctx::run_watching(locked, Stream::Stderr, &mut |line| {
        unresolvable |= line.contains("failed to select a version");
    });
    let verify = || installed_version(ctx, binary).as_deref() == Some(version);
    let unverified = format!(
        "installed, but `{binary} --version` does not report {version}; another {binary} comes \
         first on PATH"
    );
    match result {
        Ok(true) if verify() => Step::Installed,
        Ok(true) => Step::Failed(unverified),
        // The registry (a mirror that lags behind crates.io, say) lacks a dependency version that
        // the crate's own Cargo.lock pins. The tool stays at its exact version; only its
        // dependencies are resolved afresh.
        Ok(false) if unresolvable => install(
            &format!("{what}, unlocked (the registry lacks a version its Cargo.lock pins)"),
            cargo_install(),
            verify,
            &unverified,
        ),
        Ok(false) => Step::Failed(format!(
            "`cargo install {krate}` failed (its output is above)"
        )),
        Err(error) => Step::Failed(error.to_string()),
    }
}

/// The version `<binary> --version` reports (second word of the first line), if it runs.
fn installed_version(ctx: &Ctx, binary: &str) -> Option<String> {
    let binary = ctx.find(binary)?;
    let output = probe(ctx.sh().cmd(binary).arg("--version"))?;
    let word = output.lines().next()?.split_whitespace().nth(1)?;
    Some(word.trim_start_matches('v').to_owned())
}

/// The JavaScript tools `sdk/js-tools/package.json` pins (tsc, wasm-opt, terser, Penpal,
/// Comlink), installed by npm into its `node_modules`: `npm ci` when there is a lock file, else
/// `npm install`.
fn npm_tools(ctx: &Ctx) -> Step {
    let mut stale = Vec::new();
    for tool in js_tools::ALL {
        let pinned = match js_tools::pinned_version(ctx, tool) {
            Ok(version) => version,
            Err(why) => return Step::Failed(why.to_string()),
        };
        if js_tools::installed_version(ctx, tool).as_deref() != Some(pinned.as_str()) {
            stale.push(format!("{} {pinned}", tool.package));
        }
    }
    if stale.is_empty() {
        return Step::Ok;
    }
    let dir = js_tools::PROJECT_DIR;
    let verb = if ctx.root().join(dir).join("package-lock.json").is_file() {
        "ci"
    } else {
        "install"
    };
    if ctx.find("npm").is_none() {
        return Step::Manual(format!("cd {dir} && npm {verb} --no-audit --no-fund"));
    }
    let sh = ctx.sh();
    let _in_project = sh.push_dir(dir);
    let all_pinned = || {
        js_tools::ALL.into_iter().all(|tool| {
            js_tools::pinned_version(ctx, tool).ok() == js_tools::installed_version(ctx, tool)
        })
    };
    install(
        &format!("{} (in {dir})", stale.join(", ")),
        cmd!(sh, "npm {verb} --no-audit --no-fund"),
        all_pinned,
        &format!(
            "npm finished, but {dir}/node_modules does not hold the pinned versions; check \
             package-lock.json"
        ),
    )
}

/// The built SDK, so that `wasm-pack test` inside `sdk/` works right after setup. Built only when
/// missing: after changing the SDK, `cargo xtask build` (or `cargo xtask test`) rebuilds it.
fn bridge_js(ctx: &Ctx) -> Step {
    if bridge_js::output(ctx).is_file() {
        return Step::Ok;
    }
    println!("setup: {BRIDGE_JS_STEP} ... building");
    match bridge_js::build(ctx) {
        Ok(_) => Step::Installed,
        Err(error) => Step::Failed(error.to_string()),
    }
}

/// schemathesis for the api conformance suite, from the Python Package Index with pip, in a
/// virtualenv of its own under the target directory (made with the machine's `python3`), so
/// that nothing outside the target directory changes. Another version there is replaced.
fn schemathesis(ctx: &Ctx) -> Step {
    if schemathesis_version(ctx).as_deref() == Some(SCHEMATHESIS) {
        return Step::Ok;
    }
    let (sh, dir) = (ctx.sh(), venv_dir(ctx));
    let shown = ctx.shown(&dir);
    let what = format!("schemathesis {SCHEMATHESIS}");
    if ctx.find("python3").is_none() {
        return Step::Manual(format!(
            "install Python 3 with its venv module (Debian: python3-venv), then \
             `python3 -m venv {shown} && {shown}/bin/pip install schemathesis=={SCHEMATHESIS}`"
        ));
    }
    // Whatever is there (another version, an install that was interrupted) is made afresh.
    if let Err(error) = sh.remove_path(&dir) {
        return Step::Failed(error.to_string());
    }
    let python = venv_program(ctx, "python");
    let venv = install(
        &what,
        cmd!(sh, "python3 -m venv {dir}"),
        || python.is_file(),
        &format!(
            "`python3 -m venv` made no {}; is Python's venv module installed (Debian: \
             python3-venv)?",
            ctx.shown(&python)
        ),
    );
    if let Step::Failed(why) = venv {
        return Step::Failed(why);
    }
    let package = format!("schemathesis=={SCHEMATHESIS}");
    install(
        &what,
        cmd!(
            sh,
            "{python} -m pip install --disable-pip-version-check --progress-bar off {package}"
        ),
        || schemathesis_version(ctx).as_deref() == Some(SCHEMATHESIS),
        &format!("pip finished, but `st --version` in {shown} does not report {SCHEMATHESIS}"),
    )
}

/// The virtualenv that setup installs schemathesis into.
fn venv_dir(ctx: &Ctx) -> PathBuf {
    let venv = format!("tools/schemathesis-{SCHEMATHESIS}");
    ctx.target_dir().join(venv)
}

/// A program of the virtualenv (`python`, `pip`, `st`).
pub(crate) fn venv_program(ctx: &Ctx, name: &str) -> PathBuf {
    venv_dir(ctx).join("bin").join(name)
}

/// The version `st --version` reports (`st, version 4.32.5`), if the virtualenv has it.
fn schemathesis_version(ctx: &Ctx) -> Option<String> {
    let st = venv_program(ctx, "st");
    let output = probe(ctx.sh().cmd(st).arg("--version"))?;
    output.split_whitespace().last().map(str::to_owned)
}

/// Debian `packages` (with the programs each provides), from apt when we are root on Debian.
/// Elsewhere, each package's programs are looked for on `PATH`.
fn debian_packages(ctx: &Ctx, packages: &[(&str, &[&str])]) -> Step {
    let sh = ctx.sh();
    if !Path::new("/etc/debian_version").exists() {
        let missing: Vec<&str> = packages
            .iter()
            .filter(|(_, programs)| programs.iter().all(|name| ctx.find(name).is_none()))
            .filter_map(|(_, programs)| programs.first().copied())
            .collect();
        return if missing.is_empty() {
            Step::Ok
        } else {
            Step::Manual(format!(
                "install {} with your system's package manager (Chrome will do for Chromium, \
                 with a chromedriver of the same version)",
                missing.join(", ")
            ))
        };
    }
    let installed = |package: &str| {
        let status = probe(sh.cmd("dpkg-query").args(["-W", "-f=${Status}", package]));
        status.is_some_and(|status| status.contains("install ok installed"))
    };
    let missing: Vec<&str> = packages
        .iter()
        .map(|(package, _)| *package)
        .filter(|package| !installed(package))
        .collect();
    if missing.is_empty() {
        return Step::Ok;
    }
    let list = missing.join(" ");
    let root = probe(cmd!(sh, "id -u")).is_some_and(|uid| uid.trim() == "0");
    if !root {
        return Step::Manual(format!(
            "sudo apt-get update && sudo DEBIAN_FRONTEND=noninteractive \
             apt-get install -y --no-install-recommends {list}"
        ));
    }
    let what = format!("Debian packages ({list})");
    if let Step::Failed(why) = install(&what, cmd!(sh, "apt-get update"), || true, "") {
        return Step::Failed(why);
    }
    install(
        &what,
        cmd!(sh, "apt-get install -y --no-install-recommends")
            .args(&missing)
            .env("DEBIAN_FRONTEND", "noninteractive"),
        || missing.iter().all(|package| installed(package)),
        &format!("apt-get finished, but dpkg does not list all of {list} as installed"),
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    fn packages(purpose: Purpose) -> Vec<&'static str> {
        purpose
            .debian_packages()
            .into_iter()
            .map(|(package, _)| package)
            .collect()
    }

    #[test]
    fn each_command_asks_apt_only_for_what_it_runs() {
        assert_eq!(
            packages(Purpose::Everything),
            ["chromium", "chromium-driver", "firefox-esr", "wrk"]
        );
        assert_eq!(
            packages(Purpose::Bench),
            ["chromium", "chromium-driver", "wrk"]
        );
        assert!(packages(Purpose::Serve).is_empty());
    }
}
