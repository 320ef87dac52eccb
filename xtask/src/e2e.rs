//! The end-to-end suites (`tests/`), once per browser: a fresh `toolbridge serve` (debug build)
//! serving the reference app, the host module and the example tools, the browser's driver
//! (chromedriver, geckodriver) on a free port, and `cargo test -p toolbridge-e2e --features e2e`
//! told which browser to ask for and where both are. Each browser gets its own server, database,
//! driver log (`target/e2e/<browser>/`) and screenshots (`target/e2e/screenshots/<browser>/`):
//! the tests leave data behind (a product, a tool, sent quotes), so a second browser on the same
//! database would not start where the first did.

use std::process::Command;

use crate::browser::{Browser, WebDriver};
use crate::error::Error;
use crate::files::create_dir;
use crate::host_module;
use crate::process::Ctx;
use crate::readme_tool;
use crate::toolbridge_server::{Profile, ServerOptions, ToolbridgeServer};

/// Products in the e2e catalog: the demo size the app shows.
const PRODUCTS: u32 = 1000;

/// What the suites need running, and the command that runs them against it.
pub(crate) struct Prepared {
    /// `cargo test` for the suites, with their settings in its environment.
    pub(crate) command: Command,
    /// The server; dropping it stops it.
    pub(crate) server: ToolbridgeServer,
    /// The browser's driver; dropping it stops it.
    _driver: WebDriver,
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

/// Builds the host module, starts a fresh server and `browser`'s driver, and returns the test
/// command that runs the suites in `browser`.
pub(crate) fn prepare(ctx: &Ctx, browser: &Browser) -> Result<Prepared, Error> {
    host_module::build(ctx)?;
    let root = ctx.target_dir().join("e2e");
    let dir = root.join(browser.name);
    // The README's first tool, and the same page with its script inline, served as folders under
    // development.
    let dev_tools = readme_tool::write_folders(ctx.root(), &dir.join("dev-tools"))?;
    let mut options = ServerOptions::new("e2e", Profile::Debug, dir.join("server"), PRODUCTS);
    options.dev_tools = dev_tools.to_vec();
    let server = ToolbridgeServer::start(ctx, &options)?;
    let driver = WebDriver::start(ctx, browser, &dir)?;
    let screenshots = root.join("screenshots").join(browser.name);
    create_dir(&screenshots)?;
    let mut command = suite_command(ctx, "e2e");
    command
        .args(["--no-fail-fast", "--", "--test-threads=1"])
        // Which capabilities `Browser::open` asks the driver for.
        .env("TOOLBRIDGE_E2E_BROWSER", browser.name)
        // `localhost`, not 127.0.0.1: tool origins are `*.localhost`, and the app's cookie is
        // for the name the page was loaded from.
        .env(
            "TOOLBRIDGE_E2E_APP",
            format!("http://localhost:{}", server.port()),
        )
        .env("TOOLBRIDGE_E2E_WEBDRIVER", driver.url())
        // Suites that need data no page can make (a catalog product) write it here.
        .env("TOOLBRIDGE_E2E_DB", server.db())
        // Where the server prints, for what it must tell a dev tool's author.
        .env("TOOLBRIDGE_E2E_SERVER_LOG", options.log())
        .env("TOOLBRIDGE_E2E_SCREENSHOTS", &screenshots);
    Ok(Prepared {
        command,
        server,
        _driver: driver,
    })
}
