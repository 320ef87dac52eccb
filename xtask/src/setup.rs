//! `cargo xtask setup`: brings this machine to the toolchain the checks need, and is cheap to
//! repeat. Every step prints one line ending in `ok`, `installed`, what to run by hand, or FAILED.

use std::path::{Path, PathBuf};

use xshell::{Cmd, cmd};

use crate::bridge_js;
use crate::ctx::{self, Ctx, Stream};
use crate::error::Error;
use crate::host_package;
use crate::js_tools;
use crate::pins::{
    self, CARGO_FUZZ, CRYPTOGRAPHY, GECKODRIVER, LYCHEE, MDBOOK, PYJWT, SCHEMATHESIS, WASM_PACK,
    WASM_TARGET,
};

/// The label of the step that builds bridge.js.
const BRIDGE_JS_STEP: &str = "sdk/dist/bridge.js (what the SDK browser tests load)";

/// A Debian package setup installs, and the programs by which it tells the package is there.
#[derive(Clone, Copy, Debug)]
struct Package {
    name: &'static str,
    programs: Programs,
}

/// Where a package's programs are, and which of them must be.
#[derive(Clone, Copy, Debug)]
enum Programs {
    /// On `PATH`; any one of the names will do (browsers go by several).
    OnPath(&'static [&'static str]),
    /// PostgreSQL's server programs, all of them, side by side: where `initdb` on `PATH` really
    /// is (other systems put it there), else in `/usr/lib/postgresql/<version>/bin`, where
    /// Debian keeps them off `PATH`. The same places the tests' throwaway PostgreSQL
    /// (`tests/postgres`) looks.
    PostgresServer(&'static [&'static str]),
}

/// The Debian packages of every purpose: browsers for the browser test suites and the bench, the
/// load generator of `cargo xtask bench`, PostgreSQL for the store's tests on it (each test
/// process starts a throwaway cluster with `initdb` and `pg_ctl`), and nginx and NSS's certutil
/// for the deployment suite, and jq for the book's examples.
const DEBIAN_PACKAGES: [Package; 11] = [
    Package {
        name: "chromium",
        programs: Programs::OnPath(&["chromium", "chromium-browser", "google-chrome"]),
    },
    Package {
        name: "chromium-driver",
        programs: Programs::OnPath(&["chromedriver"]),
    },
    Package {
        name: "firefox-esr",
        programs: Programs::OnPath(&["firefox"]),
    },
    // WebKitGTK's WebDriver server; its dependency libwebkit2gtk-4.1-0 brings the MiniBrowser
    // it drives, which has no headless mode and draws on a virtual display from xvfb.
    Package {
        name: "webkit2gtk-driver",
        programs: Programs::OnPath(&["WebKitWebDriver"]),
    },
    Package {
        name: "xvfb",
        programs: Programs::OnPath(&["Xvfb"]),
    },
    Package {
        name: "wrk",
        programs: Programs::OnPath(&["wrk"]),
    },
    Package {
        name: "postgresql",
        programs: Programs::PostgresServer(&["initdb", "pg_ctl", "postgres"]),
    },
    // The deployment suite: nginx terminates TLS in front of two servers, as deploy/nginx.conf
    // says, and Chromium trusts the suite's own CA through an NSS database made with certutil.
    Package {
        name: "nginx-light",
        programs: Programs::OnPath(&["nginx"]),
    },
    Package {
        name: "libnss3-tools",
        programs: Programs::OnPath(&["certutil"]),
    },
    // `promtool`, which checks the page of `toolbridge serve --metrics-bind` in the server's
    // tests (installed without recommends, as every package here; Prometheus is never started).
    Package {
        name: "prometheus",
        programs: Programs::OnPath(&["promtool"]),
    },
    // The book's examples that run (the docs suite) read JSON answers with jq, as a reader would.
    Package {
        name: "jq",
        programs: Programs::OnPath(&["jq"]),
    },
];

impl Package {
    /// Whether its programs are on this machine.
    fn found(self, ctx: &Ctx) -> bool {
        match self.programs {
            Programs::OnPath(names) => names.iter().any(|name| ctx.find(name).is_some()),
            Programs::PostgresServer(names) => postgres_server_programs(ctx, names).is_some(),
        }
    }

    /// What to install by hand when it is missing and there is no apt.
    fn missing(self) -> String {
        match self.programs {
            Programs::OnPath(names) => names.first().copied().unwrap_or(self.name).to_owned(),
            Programs::PostgresServer(names) => {
                format!("PostgreSQL 15 or later ({})", names.join(", "))
            }
        }
    }
}

/// The directory holding every one of PostgreSQL's server programs `names`: the real directory
/// of the `initdb` on `PATH`, else the newest `/usr/lib/postgresql/<version>/bin`.
fn postgres_server_programs(ctx: &Ctx, names: &[&str]) -> Option<PathBuf> {
    let complete = |dir: &Path| names.iter().all(|name| dir.join(name).is_file());
    let on_path = ctx
        .find("initdb")
        .and_then(|initdb| std::fs::canonicalize(initdb).ok())
        .and_then(|initdb| initdb.parent().map(Path::to_owned))
        .filter(|dir| complete(dir));
    if on_path.is_some() {
        return on_path;
    }
    newest_complete(Path::new("/usr/lib/postgresql"), names)
}

/// The `<version>/bin` under `base` of the highest version whose `bin` holds all of `names`.
fn newest_complete(base: &Path, names: &[&str]) -> Option<PathBuf> {
    std::fs::read_dir(base)
        .into_iter()
        .flatten()
        .flatten()
        .filter_map(|entry| {
            let version: u32 = entry.file_name().to_str()?.parse().ok()?;
            Some((version, entry.path().join("bin")))
        })
        .filter(|(_, dir)| names.iter().all(|name| dir.join(name).is_file()))
        .max_by_key(|(version, _)| *version)
        .map(|(_, dir)| dir)
}

/// Which command setup runs for: each installs only what it uses, so that `serve` on a fresh
/// machine does not wait for browsers and `bench` does not wait for the conformance suite's
/// Python tools.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Purpose {
    /// `setup` and `test`: everything.
    Everything,
    /// `serve`: what builds bridge.js and the host module.
    Serve,
    /// `bench`: the builds, Chromium with its driver, wrk, PostgreSQL (the REST figure is also
    /// measured on it), and the npm packages (Penpal and Comlink among them); no Firefox or
    /// WebKit.
    Bench,
}

impl Purpose {
    /// The Debian packages this purpose needs.
    fn debian_packages(self) -> Vec<Package> {
        DEBIAN_PACKAGES
            .into_iter()
            .filter(|package| match self {
                Purpose::Everything => true,
                Purpose::Serve => false,
                Purpose::Bench => !matches!(
                    package.name,
                    "firefox-esr" | "webkit2gtk-driver" | "xvfb" | "prometheus" | "jq"
                ),
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
            cargo_tool(ctx, "wasm-bindgen-cli", "wasm-bindgen", &version, &[]),
        ),
        Err(error) => report("wasm-bindgen-cli", Step::Failed(error.to_string())),
    };
    if everything {
        all_ok &= report(
            &format!("wasm-pack {WASM_PACK}"),
            cargo_tool(ctx, "wasm-pack", "wasm-pack", WASM_PACK, &[]),
        );
    }
    // `serve` builds the book too.
    all_ok &= report(
        &format!("mdbook {MDBOOK}"),
        cargo_tool(ctx, "mdbook", "mdbook", MDBOOK, MDBOOK_FEATURES),
    );
    if everything {
        all_ok &= report(
            &format!("lychee {LYCHEE}"),
            cargo_tool(ctx, "lychee", "lychee", LYCHEE, &["--no-default-features"]),
        );
    }
    let packages = purpose.debian_packages();
    if !packages.is_empty() {
        let names: Vec<&str> = packages.iter().map(|package| package.name).collect();
        all_ok &= report(
            &format!("Debian packages ({})", names.join(", ")),
            debian_packages(ctx, &packages),
        );
    }
    if everything {
        all_ok &= report(
            &format!("geckodriver {GECKODRIVER}"),
            cargo_tool(ctx, "geckodriver", "geckodriver", GECKODRIVER, &[]),
        );
    }
    all_ok &= report(
        &format!("js tools (npm in {})", js_tools::PROJECT_DIR),
        npm_tools(ctx),
    );
    if everything {
        all_ok &= report(
            &format!(
                "host package bundlers (npm ci in {})",
                ctx.shown(&host_package::project_dir(ctx))
            ),
            host_bundlers(ctx),
        );
        for tools in [PythonTools::schemathesis(), PythonTools::vendor()] {
            let venv = ctx.shown(&tools.dir(ctx));
            all_ok &= report(
                &format!("{} (virtualenv in {venv})", tools.what),
                tools.install(ctx),
            );
        }
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
        cargo_tool(ctx, "cargo-fuzz", "cargo-fuzz", CARGO_FUZZ, &[]),
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
/// mdBook's features: search in the built book, without its own server and file watcher.
const MDBOOK_FEATURES: &[&str] = &["--no-default-features", "--features", "search"];

/// `cargo install KRATE --version =VERSION` (with `options`, such as features) unless `BINARY
/// --version` already says VERSION.
fn cargo_tool(ctx: &Ctx, krate: &str, binary: &str, version: &str, options: &[&str]) -> Step {
    let found = installed_version(ctx, binary);
    if found.as_deref() == Some(version) {
        return Step::Ok;
    }
    let what = match &found {
        Some(other) => format!("{krate} {version} (found {other})"),
        None => format!("{krate} {version}"),
    };
    let exact = format!("={version}");
    let cargo_install = || {
        let install = ctx.cargo().args(["install", krate, "--version", &exact]);
        install.args(options)
    };
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

/// The bundlers the scratch platform page pins (`host/scratch-project/package.json`: Vite, webpack
/// and webpack-cli), for the "host package" suite: its `package.json` and `package-lock.json`
/// copied into [`host_package::project_dir`] under the target directory and `npm ci` run there,
/// whenever a pinned version is missing there or either file has changed.
fn host_bundlers(ctx: &Ctx) -> Step {
    let stale = match host_package::stale_bundlers(ctx) {
        Ok(stale) => stale,
        Err(why) => return Step::Failed(why.to_string()),
    };
    if stale.is_empty() {
        return Step::Ok;
    }
    let (dir, source) = (
        host_package::project_dir(ctx),
        host_package::SCRATCH_PROJECT,
    );
    let shown = ctx.shown(&dir);
    if ctx.find("npm").is_none() {
        return Step::Manual(format!(
            "mkdir -p {shown} && cp {source}/package.json {source}/package-lock.json {shown}/ && \
             cd {shown} && npm ci --no-audit --no-fund"
        ));
    }
    if let Err(why) = host_package::copy_manifests(ctx) {
        return Step::Failed(why.to_string());
    }
    let sh = ctx.sh();
    let _in_project = sh.push_dir(&dir);
    install(
        &format!("{} (in {shown})", stale.join(", ")),
        cmd!(sh, "npm ci --no-audit --no-fund"),
        || host_package::stale_bundlers(ctx).is_ok_and(|stale| stale.is_empty()),
        &format!(
            "npm ci finished, but {shown}/node_modules does not hold the versions \
             {source}/package.json pins; check its package-lock.json"
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

/// A virtualenv of pinned packages from the Python Package Index, under the target directory
/// (made with the machine's `python3`), so that nothing outside it changes.
pub(crate) struct PythonTools {
    /// What setup calls it.
    what: String,
    /// The folder under `target/tools`.
    folder: String,
    /// `name==version` of each package.
    packages: Vec<String>,
    /// A program of the virtualenv and its arguments, whose output ends with `version` when
    /// the right packages are there.
    probe: (&'static str, &'static [&'static str], String),
}

impl PythonTools {
    /// schemathesis, for the api conformance suite.
    pub(crate) fn schemathesis() -> Self {
        Self {
            what: format!("schemathesis {SCHEMATHESIS}"),
            folder: format!("schemathesis-{SCHEMATHESIS}"),
            packages: vec![format!("schemathesis=={SCHEMATHESIS}")],
            probe: ("st", &["--version"], SCHEMATHESIS.to_owned()),
        }
    }

    /// `PyJWT` with its cryptography backend, for the tool vendor's server of the e2e suite.
    pub(crate) fn vendor() -> Self {
        Self {
            what: format!("PyJWT {PYJWT} with cryptography {CRYPTOGRAPHY}"),
            folder: format!("vendor-pyjwt-{PYJWT}-cryptography-{CRYPTOGRAPHY}"),
            packages: vec![
                format!("PyJWT=={PYJWT}"),
                format!("cryptography=={CRYPTOGRAPHY}"),
            ],
            probe: (
                "python",
                &[
                    "-c",
                    "import jwt, cryptography; print(jwt.__version__ + '+' + cryptography.__version__)",
                ],
                format!("{PYJWT}+{CRYPTOGRAPHY}"),
            ),
        }
    }

    /// The virtualenv's folder.
    pub(crate) fn dir(&self, ctx: &Ctx) -> PathBuf {
        ctx.target_dir().join("tools").join(&self.folder)
    }

    /// A program of the virtualenv (`python`, `pip`, `st`).
    pub(crate) fn program(&self, ctx: &Ctx, name: &str) -> PathBuf {
        self.dir(ctx).join("bin").join(name)
    }

    /// Whether the virtualenv has the pinned packages.
    fn installed(&self, ctx: &Ctx) -> bool {
        let (program, args, version) = &self.probe;
        probe(ctx.sh().cmd(self.program(ctx, program)).args(*args))
            .is_some_and(|output| output.split_whitespace().last() == Some(version.as_str()))
    }

    /// Installs the packages; whatever is there (other versions, an install that was
    /// interrupted) is made afresh.
    fn install(&self, ctx: &Ctx) -> Step {
        if self.installed(ctx) {
            return Step::Ok;
        }
        let (sh, dir) = (ctx.sh(), self.dir(ctx));
        let shown = ctx.shown(&dir);
        let packages = &self.packages;
        if ctx.find("python3").is_none() {
            return Step::Manual(format!(
                "install Python 3 with its venv module (Debian: python3-venv), then \
                 `python3 -m venv {shown} && {shown}/bin/pip install {}`",
                packages.join(" ")
            ));
        }
        if let Err(error) = sh.remove_path(&dir) {
            return Step::Failed(error.to_string());
        }
        let python = self.program(ctx, "python");
        let venv = install(
            &self.what,
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
        install(
            &self.what,
            cmd!(
                sh,
                "{python} -m pip install --disable-pip-version-check --progress-bar off {packages...}"
            ),
            || self.installed(ctx),
            &format!(
                "pip finished, but {shown} does not have {}",
                packages.join(" ")
            ),
        )
    }
}

/// Debian `packages`, from apt when we are root on Debian. Elsewhere, each package's programs
/// are looked for where they would be. A package counts as there when dpkg lists it, or (for
/// PostgreSQL, whose versioned packages may be installed without the `postgresql` one) when its
/// programs are found.
fn debian_packages(ctx: &Ctx, packages: &[Package]) -> Step {
    let sh = ctx.sh();
    if !Path::new("/etc/debian_version").exists() {
        let missing: Vec<String> = packages
            .iter()
            .filter(|package| !package.found(ctx))
            .map(|package| package.missing())
            .collect();
        return if missing.is_empty() {
            Step::Ok
        } else {
            Step::Manual(format!(
                "install {} with your system's package manager (Chrome will do for Chromium, \
                 with a chromedriver of the same version; WebKitWebDriver comes with WebKitGTK)",
                missing.join(", ")
            ))
        };
    }
    let listed = |package: &str| {
        let status = probe(sh.cmd("dpkg-query").args(["-W", "-f=${Status}", package]));
        status.is_some_and(|status| status.contains("install ok installed"))
    };
    let installed = |package: &Package| {
        listed(package.name)
            || (matches!(package.programs, Programs::PostgresServer(_)) && package.found(ctx))
    };
    let missing: Vec<&str> = packages
        .iter()
        .filter(|package| !installed(package))
        .map(|package| package.name)
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
        || {
            packages
                .iter()
                .filter(|package| missing.contains(&package.name))
                .all(&installed)
        },
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
            .map(|package| package.name)
            .collect()
    }

    #[test]
    fn each_command_asks_apt_only_for_what_it_runs() {
        assert_eq!(
            packages(Purpose::Everything),
            [
                "chromium",
                "chromium-driver",
                "firefox-esr",
                "webkit2gtk-driver",
                "xvfb",
                "wrk",
                "postgresql",
                "nginx-light",
                "libnss3-tools",
                "prometheus",
                "jq"
            ]
        );
        assert_eq!(
            packages(Purpose::Bench),
            [
                "chromium",
                "chromium-driver",
                "wrk",
                "postgresql",
                "nginx-light",
                "libnss3-tools"
            ]
        );
        assert!(packages(Purpose::Serve).is_empty());
    }

    #[test]
    fn postgres_server_programs_are_found_in_debians_versioned_directories() {
        // Debian's layout, in a directory standing for /usr/lib/postgresql: the newest complete
        // version wins, an incomplete one is passed over.
        let root = std::env::temp_dir().join(format!("xtask-setup-pg-{}", std::process::id()));
        let bin = |version: &str| root.join(version).join("bin");
        for (version, names) in [
            ("13", &["initdb", "pg_ctl", "postgres"][..]),
            ("15", &["initdb", "pg_ctl", "postgres"][..]),
            ("16", &["initdb"][..]),
        ] {
            std::fs::create_dir_all(bin(version)).unwrap();
            for name in names {
                std::fs::write(bin(version).join(name), "").unwrap();
            }
        }
        let found = newest_complete(&root, &["initdb", "pg_ctl", "postgres"]);
        std::fs::remove_dir_all(&root).unwrap();
        assert_eq!(found, Some(bin("15")));
    }
}
