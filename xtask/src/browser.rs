//! The browsers the suites run in and their `WebDriver` servers: running wasm-bindgen tests in a
//! headless browser, and running a suite through `with-backends` (`tests/src/bin/`), which
//! starts what the suite talks to (servers, the driver) and stops it when the suite ends.

use std::ffi::OsStr;
use std::path::PathBuf;
use std::process::Command;

use xshell::Cmd;

use crate::ctx::Ctx;
use crate::error::Error;
use crate::native;
use crate::pins::WASM_TARGET;

/// A browser the suites run in, and its `WebDriver` server: the driver binary, and the variable
/// that hands its path to `wasm-bindgen-test-runner` (which picks the browser by the variable
/// that is set) and to `with-backends`. A driver the runner cannot start itself (WebKit's) is
/// started by `with-backends`, which points the runner at it (`tests/src/webdriver.rs`).
pub(crate) struct Browser {
    /// The browser's name in suite names and directories, and for `with-backends --browser`.
    pub(crate) name: &'static str,
    driver: &'static str,
    variable: &'static str,
}

/// Headless Chromium, through chromedriver.
pub(crate) const CHROMIUM: Browser = Browser {
    name: "chromium",
    driver: "chromedriver",
    variable: "CHROMEDRIVER",
};

/// Headless Firefox ESR, through geckodriver.
pub(crate) const FIREFOX: Browser = Browser {
    name: "firefox",
    driver: "geckodriver",
    variable: "GECKODRIVER",
};

/// WebKitGTK's MiniBrowser, through WebKitWebDriver, on an Xvfb display that `with-backends`
/// starts with the driver. The runner knows no such variable: `with-backends` reads it.
pub(crate) const WEBKIT: Browser = Browser {
    name: "webkit",
    driver: "WebKitWebDriver",
    variable: "WEBKITWEBDRIVER",
};

impl Browser {
    /// Where the driver is, or an error that says how to install it.
    fn driver_path(&self, ctx: &Ctx) -> Result<PathBuf, Error> {
        ctx.find(self.driver).ok_or_else(|| {
            Error::failed(format!(
                "{} not found; run `cargo xtask setup`",
                self.driver
            ))
        })
    }
}

/// Every driver variable the runner looks at, so that all but the chosen one can be removed: a
/// driver's path, or (`_REMOTE`, which it looks at first) the address of one already running.
const DRIVER_VARIABLES: [&str; 8] = [
    "CHROMEDRIVER",
    "GECKODRIVER",
    "SAFARIDRIVER",
    "MSEDGEDRIVER",
    "CHROMEDRIVER_REMOTE",
    "GECKODRIVER_REMOTE",
    "SAFARIDRIVER_REMOTE",
    "MSEDGEDRIVER_REMOTE",
];

/// `cargo test -p PACKAGE --target wasm32-unknown-unknown` (further arguments are the caller's)
/// set up to run in `browser`: its driver, and `wasm-bindgen-test-runner` as the runner, both
/// found where setup installs them, with `timeout_secs` for each test binary.
pub(crate) fn wasm_test_command<'a>(
    ctx: &'a Ctx,
    browser: &Browser,
    package: &str,
    timeout_secs: u32,
) -> Result<Cmd<'a>, Error> {
    let driver = browser.driver_path(ctx)?;
    let runner = ctx.find("wasm-bindgen-test-runner").ok_or_else(|| {
        Error::failed("wasm-bindgen-test-runner not found; run `cargo xtask setup`")
    })?;
    let mut command = ctx.cargo();
    for variable in DRIVER_VARIABLES {
        command = command.env_remove(variable);
    }
    Ok(command
        .args(["test", "-p", package, "--target", WASM_TARGET])
        .env(browser.variable, driver)
        // The runner .cargo/config.toml names, found where setup installed it.
        .env("CARGO_TARGET_WASM32_UNKNOWN_UNKNOWN_RUNNER", runner)
        .env("WASM_BINDGEN_TEST_NO_ORIGIN_ISOLATION", "1")
        .env("WASM_BINDGEN_TEST_TIMEOUT", timeout_secs.to_string()))
}

/// `command` run by `with-backends SUITE ARGS -- command` (`tests/src/bin/with_backends.rs`),
/// which starts what the suite talks to, gives `command` their addresses and `browser`'s
/// environment, and stops them when it ends; `command`'s own environment is kept.
pub(crate) fn with_backends<'a>(
    ctx: &'a Ctx,
    suite: &str,
    browser: &Browser,
    args: &[&OsStr],
    command: Cmd<'_>,
) -> Result<Cmd<'a>, Error> {
    let command = Command::from(command);
    let with_backends = native::build(ctx)?.with_backends;
    let mut wrapped = ctx
        .sh()
        .cmd(with_backends)
        .args([suite, "--browser", browser.name])
        .args(args)
        .env(browser.variable, browser.driver_path(ctx)?)
        .arg("--")
        .arg(command.get_program())
        .args(command.get_args());
    for (name, value) in command.get_envs() {
        wrapped = match value {
            Some(value) => wrapped.env(name, value),
            None => wrapped.env_remove(name),
        };
    }
    Ok(wrapped)
}
