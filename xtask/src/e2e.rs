//! The end-to-end suites (`tests/`): a fresh `toolbridge serve` (debug build) serving the
//! reference app, the host module and the example tools, chromedriver on a free port, and
//! `cargo test -p toolbridge-e2e --features e2e` told where both are. Screenshots land in
//! `target/e2e/screenshots/`.

use std::path::PathBuf;
use std::process::{Child, Command, Stdio};
use std::time::Duration;

use crate::error::Error;
use crate::files::create_dir;
use crate::host_module;
use crate::process::{Ctx, describe};
use crate::toolbridge_server::{
    Profile, ServerOptions, ToolbridgeServer, free_port, wait_until_listening,
};

/// Products in the e2e catalog: the demo size the app shows.
const PRODUCTS: u32 = 1000;

/// How long chromedriver may take to listen.
const DRIVER_WAIT: Duration = Duration::from_secs(30);

/// What the suites need running, and the command that runs them against it.
pub(crate) struct Prepared {
    /// `cargo test` for the suites, with their settings in its environment.
    pub(crate) command: Command,
    /// The server; dropping it stops it.
    pub(crate) server: ToolbridgeServer,
    /// Chromedriver; dropping it stops it.
    _driver: ChromeDriver,
}

/// `cargo test -p toolbridge-e2e --features <suite> --test <suite>`: one of the `tests/` crate's
/// suites, each a test target behind the feature of the same name.
pub(crate) fn suite_command(ctx: &Ctx, suite: &str) -> Command {
    let mut command = ctx.cargo();
    command.args([
        "test",
        "-p",
        "toolbridge-e2e",
        "--features",
        suite,
        "--test",
        suite,
    ]);
    command
}

/// Builds the host module, starts the server and chromedriver, and returns the test command.
pub(crate) fn prepare(ctx: &Ctx) -> Result<Prepared, Error> {
    host_module::build(ctx)?;
    let dir = ctx.target_dir().join("e2e");
    let server = ToolbridgeServer::start(
        ctx,
        &ServerOptions::new("e2e", Profile::Debug, dir.join("server"), PRODUCTS),
    )?;
    let driver = ChromeDriver::start(ctx, &dir)?;
    let screenshots = dir.join("screenshots");
    create_dir(&screenshots)?;
    let mut command = suite_command(ctx, "e2e");
    command
        .args(["--no-fail-fast", "--", "--test-threads=1"])
        // `localhost`, not 127.0.0.1: tool origins are `*.localhost`, and the app's cookie is
        // for the name the page was loaded from.
        .env(
            "TOOLBRIDGE_E2E_APP",
            format!("http://localhost:{}", server.port()),
        )
        .env("TOOLBRIDGE_E2E_WEBDRIVER", driver.url())
        // Suites that need data no page can make (a catalog product) write it here.
        .env("TOOLBRIDGE_E2E_DB", server.db())
        .env("TOOLBRIDGE_E2E_SCREENSHOTS", &screenshots);
    Ok(Prepared {
        command,
        server,
        _driver: driver,
    })
}

/// A running chromedriver; dropping it kills it.
struct ChromeDriver {
    child: Child,
    port: u16,
}

impl ChromeDriver {
    fn start(ctx: &Ctx, dir: &std::path::Path) -> Result<Self, Error> {
        if ctx.find("chromedriver").is_none() {
            return Err(Error::failed(
                "chromedriver not found; run `cargo xtask setup` (as root it installs Debian's chromium-driver)",
            ));
        }
        create_dir(dir)?;
        let log: PathBuf = dir.join("chromedriver.log");
        let port = free_port()?;
        let mut command = ctx.command("chromedriver");
        command
            .arg(format!("--port={port}"))
            .arg(format!("--log-path={}", log.display()))
            .stdin(Stdio::null())
            .stdout(Stdio::null())
            .stderr(Stdio::null());
        println!("e2e: starting `{}`", describe(&command));
        let child = command
            .spawn()
            .map_err(|e| Error::failed(format!("cannot start chromedriver: {e}")))?;
        // Made first, so that the driver is killed if it never listens.
        let mut driver = Self { child, port };
        wait_until_listening(
            ctx,
            "chromedriver",
            &mut driver.child,
            port,
            DRIVER_WAIT,
            &log,
        )?;
        Ok(driver)
    }

    fn url(&self) -> String {
        format!("http://127.0.0.1:{}", self.port)
    }
}

impl Drop for ChromeDriver {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}
