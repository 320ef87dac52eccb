//! The browsers the suites run in and their `WebDriver` servers: running wasm-bindgen tests in a
//! headless browser, and running a suite through `with-backends` (`tests/src/bin/`), which
//! starts what the suite talks to (servers, the driver) and stops it when the suite ends.

use std::ffi::OsStr;
use std::path::PathBuf;
use std::process::Command;

use crate::bridge_js;
use crate::error::Error;
use crate::harness::Harness;
use crate::pins::WASM_TARGET;
use crate::process::Ctx;
use crate::toolbridge_server::{self, Profile, ReservedPort, ServerOptions, ToolbridgeServer};

/// A browser the suites run in, and its `WebDriver` server: the driver binary, and the variable
/// that hands its path to `wasm-bindgen-test-runner` (which picks the browser by the variable
/// that is set) and to `with-backends`.
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

/// Every driver variable the runner looks at, so that all but the chosen one can be removed.
const DRIVER_VARIABLES: [&str; 3] = ["CHROMEDRIVER", "GECKODRIVER", "SAFARIDRIVER"];

/// `cargo test -p PACKAGE --target wasm32-unknown-unknown` (further arguments are the caller's)
/// set up to run in `browser`: its driver, and `wasm-bindgen-test-runner` as the runner, both
/// found where setup installs them, with `timeout_secs` for each test binary. The error says
/// which one is missing.
pub(crate) fn wasm_test_command(
    ctx: &Ctx,
    browser: &Browser,
    package: &str,
    timeout_secs: u32,
) -> Result<Command, Error> {
    let driver = browser.driver_path(ctx)?;
    let runner = ctx.find("wasm-bindgen-test-runner").ok_or_else(|| {
        Error::failed("wasm-bindgen-test-runner not found; run `cargo xtask setup`")
    })?;
    let mut command = ctx.cargo();
    command.args(["test", "-p", package, "--target", WASM_TARGET]);
    for variable in DRIVER_VARIABLES {
        command.env_remove(variable);
    }
    command
        .env(browser.variable, driver)
        // The runner .cargo/config.toml names, found where setup installed it.
        .env("CARGO_TARGET_WASM32_UNKNOWN_UNKNOWN_RUNNER", runner)
        .env("WASM_BINDGEN_TEST_NO_ORIGIN_ISOLATION", "1")
        .env("WASM_BINDGEN_TEST_TIMEOUT", timeout_secs.to_string());
    Ok(command)
}

/// `command` run by `with-backends SUITE ARGS -- command` (`tests/src/bin/with_backends.rs`),
/// which starts what the suite talks to, gives `command` their addresses and `browser`'s
/// environment, and stops them when it ends; `command`'s own environment is kept.
pub(crate) fn with_backends(
    ctx: &Ctx,
    suite: &str,
    browser: &Browser,
    args: &[&OsStr],
    command: &Command,
) -> Result<Command, Error> {
    let mut wrapped = ctx.cargo();
    wrapped
        .args([
            "run",
            "--quiet",
            "-p",
            "toolbridge-e2e",
            "--bin",
            "with-backends",
            "--",
        ])
        .args([suite, "--browser", browser.name])
        .args(args)
        .env(browser.variable, browser.driver_path(ctx)?)
        .arg("--")
        .arg(command.get_program())
        .args(command.get_args());
    for (name, value) in command.get_envs() {
        match value {
            Some(value) => wrapped.env(name, value),
            None => wrapped.env_remove(name),
        };
    }
    Ok(wrapped)
}

/// The backends of the host's browser tests: a `toolbridge` server whose allowed origins are the
/// test page's (`http://127.0.0.1:P` and `http://localhost:P`, P reserved here for the test
/// runner), and a [`Harness`]. The tests learn both addresses when they are compiled, so the
/// ports are reserved first and the server may start after the tests are built. Both stop when
/// this is dropped.
pub(crate) struct HostBackends {
    page_port: u16,
    /// Holds the page's port so that neither backend is given it; let go by [`Self::apply`].
    page_reservation: Option<ReservedPort>,
    server_port: u16,
    /// Holds the server's port until [`Self::launch`] starts the server on it.
    server_reservation: Option<ReservedPort>,
    server: Option<ToolbridgeServer>,
    options: ServerOptions,
    harness: Harness,
}

impl HostBackends {
    /// Reserves the page's and the server's ports and starts the harness; the server, built with
    /// `profile` elsewhere, is started by [`Self::launch`].
    pub(crate) fn reserve(
        ctx: &Ctx,
        label: &'static str,
        profile: Profile,
        dir: PathBuf,
        seed_products: u32,
    ) -> Result<Self, Error> {
        let page_reservation = ReservedPort::new()?;
        let page_port = page_reservation.port();
        let server_reservation = ReservedPort::new()?;
        let server_port = server_reservation.port();
        let harness = Harness::start()?;
        println!(
            "{label}: the test harness listens at {}; the test page will be served on port \
             {page_port} and the server will listen on port {server_port}",
            harness.base_url()
        );
        Ok(Self {
            page_port,
            page_reservation: Some(page_reservation),
            server_port,
            server_reservation: Some(server_reservation),
            server: None,
            options: ServerOptions {
                label,
                profile,
                dir,
                seed_products,
                allow_origins: vec![
                    format!("http://127.0.0.1:{page_port}"),
                    format!("http://localhost:{page_port}"),
                ],
                sdk_dir: Some(bridge_js::dist_dir(ctx)),
                dev_tools: Vec::new(),
            },
            harness,
        })
    }

    /// Starts the server `binary` on the reserved port; a second call does nothing.
    pub(crate) fn launch(&mut self, ctx: &Ctx, binary: PathBuf) -> Result<(), Error> {
        if let Some(port) = self.server_reservation.take() {
            self.server = Some(ToolbridgeServer::launch(ctx, binary, &self.options, port)?);
        }
        Ok(())
    }

    /// Gives a [`wasm_test_command`] the backends' addresses: the tests learn the server's and
    /// the harness's at compile time (`TOOLBRIDGE_TEST_API`, `TOOLBRIDGE_TEST_HARNESS`), and the
    /// runner serves the page on the reserved port. The same addresses every time, so a command
    /// that only builds the tests (`--no-run`) builds what the one that runs them runs.
    pub(crate) fn configure(&self, command: &mut Command) {
        command
            .env(
                "WASM_BINDGEN_TEST_ADDRESS",
                format!("127.0.0.1:{}", self.page_port),
            )
            .env(
                "TOOLBRIDGE_TEST_API",
                toolbridge_server::base_url(self.server_port),
            )
            .env("TOOLBRIDGE_TEST_HARNESS", self.harness.base_url());
    }

    /// [`Self::configure`]s the command that runs the tests, and lets go of the page's port for
    /// the runner to take.
    pub(crate) fn apply(&mut self, command: &mut Command) {
        self.configure(command);
        self.page_reservation = None;
    }

    /// The server's log.
    pub(crate) fn server_log(&self) -> PathBuf {
        self.options.log()
    }

    /// The harness, to read what the tests reported.
    pub(crate) fn harness(&self) -> &Harness {
        &self.harness
    }
}
