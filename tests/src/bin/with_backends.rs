//! `with-backends SUITE [OPTIONS] -- COMMAND [ARGS...]`: starts what a browser suite talks to,
//! runs COMMAND (the suite's `cargo test`) with their addresses in its environment, stops them
//! when it ends, and exits as COMMAND did. `cargo xtask test` runs the browser suites through it.
//!
//! | suite | what it starts | what COMMAND learns |
//! |---|---|---|
//! | `host` | the `toolbridge` server with the test page's origins allowed, and the fault server (in WebKit, also Xvfb and WebKitWebDriver) | `TOOLBRIDGE_TEST_API`, `TOOLBRIDGE_TEST_HARNESS`, `WASM_BINDGEN_TEST_ADDRESS` (read when the tests compile) |
//! | `e2e` | the server with the book's first tool as dev tools, and the browser's driver (in WebKit, on an Xvfb display of its own); prints the browser's version | `TOOLBRIDGE_E2E_*` (`TOOLBRIDGE_E2E_DOCS_SCREENSHOTS` in Chromium only) |
//! | `tools` | the browser's driver, and the book's first tool written out | `TOOLBRIDGE_KIT_*` |
//! | `browser` | nothing (the wasm test runner starts the driver); in WebKit, Xvfb and WebKitWebDriver | only the browser's environment |
//!
//! With `--browser chromium|firefox|webkit`, COMMAND also gets the variables the browser must see
//! whoever starts its driver (Firefox's, which keep it off the network); the suites that start
//! the driver here run the program that `CHROMEDRIVER`, `GECKODRIVER` or `WEBKITWEBDRIVER`
//! names. The wasm test runner cannot start WebKitWebDriver itself, so with `--browser webkit`
//! the `host` and `browser` suites also start it here, on an Xvfb display of their own (both
//! logs, and the capabilities asked for, in `--dir`), print the browser's version, and point the
//! runner at the driver (`GECKODRIVER_REMOTE`, `WASM_BINDGEN_TEST_WEBDRIVER_JSON`); driver,
//! browser and display are stopped when COMMAND ends, whatever it ended with. Other options:
//! `--server PATH` (the built `toolbridge`; `host`, `e2e`), `--dir DIR` (where databases, logs
//! and written files go), `--products N` (`host`, `e2e`), `--sdk-dir DIR` (`host`). `--dir` is
//! needed by all but `browser` (and by that one in WebKit).

use std::path::{Path, PathBuf};
use std::process::{Command, ExitCode};

use serde_json::Value;
use toolbridge_e2e::Error;
use toolbridge_e2e::first_tool;
use toolbridge_e2e::host_backends::HostBackends;
use toolbridge_e2e::server::{ServerOptions, ToolbridgeServer, describe};
use toolbridge_e2e::webdriver::{Browser, CHROMIUM, WebDriver, driver_from_env};

fn main() -> ExitCode {
    let args: Vec<String> = std::env::args().skip(1).collect();
    match Invocation::parse(&args).and_then(|invocation| invocation.run()) {
        Ok(code) => code,
        Err(error) => {
            eprintln!("with-backends: {}", error.chain());
            ExitCode::FAILURE
        }
    }
}

/// What the command line asks for.
struct Invocation {
    suite: String,
    browser: Option<&'static Browser>,
    server: Option<PathBuf>,
    dir: Option<PathBuf>,
    products: u32,
    sdk_dir: Option<PathBuf>,
    command: Vec<String>,
}

impl Invocation {
    fn parse(args: &[String]) -> Result<Self, Error> {
        let usage = |why: String| {
            Error::failed(format!(
                "{why}\nusage: with-backends host|e2e|tools|browser [--browser NAME] [--server PATH] \
                 [--dir DIR] [--products N] [--sdk-dir DIR] -- COMMAND [ARGS...]"
            ))
        };
        let (suite, rest) = args
            .split_first()
            .ok_or_else(|| usage("no suite named".to_owned()))?;
        let mut invocation = Self {
            suite: suite.clone(),
            browser: None,
            server: None,
            dir: None,
            products: 0,
            sdk_dir: None,
            command: Vec::new(),
        };
        let mut rest = rest.iter();
        while let Some(option) = rest.next() {
            if option == "--" {
                invocation.command = rest.cloned().collect();
                break;
            }
            let value = rest
                .next()
                .ok_or_else(|| usage(format!("`{option}` needs a value")))?;
            match option.as_str() {
                "--browser" => invocation.browser = Some(Browser::named(value)?),
                "--server" => invocation.server = Some(PathBuf::from(value)),
                "--dir" => invocation.dir = Some(PathBuf::from(value)),
                "--sdk-dir" => invocation.sdk_dir = Some(PathBuf::from(value)),
                "--products" => {
                    invocation.products = value.parse().map_err(|_| {
                        usage(format!("`--products` takes a whole number, not `{value}`"))
                    })?;
                }
                other => return Err(usage(format!("unknown option `{other}`"))),
            }
        }
        if invocation.command.is_empty() {
            return Err(usage("no command after `--`".to_owned()));
        }
        Ok(invocation)
    }

    fn required<'a, T>(&self, value: Option<&'a T>, option: &str) -> Result<&'a T, Error>
    where
        T: ?Sized,
    {
        value.ok_or_else(|| {
            Error::failed(format!("`with-backends {}` needs `{option}`", self.suite))
        })
    }

    fn run(&self) -> Result<ExitCode, Error> {
        let Some((program, args)) = self.command.split_first() else {
            return Err(Error::failed("no command after `--`"));
        };
        let mut command = Command::new(program);
        command.args(args);
        if let Some(browser) = self.browser {
            // The driver starts the browser: both inherit these, whoever starts the driver.
            command.envs(browser.driver_env.iter().copied());
        }
        let dir = || self.required(self.dir.as_deref(), "--dir");
        // What runs until the command ends; dropped (and so stopped) after it.
        let (running, server_log) = match self.suite.as_str() {
            "host" => {
                let server = self.required(self.server.as_deref(), "--server")?;
                let sdk_dir = self.required(self.sdk_dir.as_deref(), "--sdk-dir")?;
                let mut options = ServerOptions::new("test", dir()?.to_path_buf(), self.products);
                options.sdk_dir = Some(sdk_dir.to_path_buf());
                let mut backends = HostBackends::reserve(options)?;
                backends.launch(server)?;
                // Before the page's port is let go, so that the driver cannot be given it.
                let driver = match self.browser {
                    Some(browser) => wasm_runner_driver(browser, dir, &mut command)?,
                    None => None,
                };
                backends.apply(&mut command);
                let log = backends.server_log();
                let running = Running {
                    _host: Some(backends),
                    _driver: driver,
                    ..Running::default()
                };
                (running, Some(log))
            }
            "e2e" => {
                let browser = self.required(self.browser, "--browser")?;
                let server = self.required(self.server.as_deref(), "--server")?;
                let (server, driver) = e2e(browser, server, dir()?, self.products, &mut command)?;
                let log = server.log().to_path_buf();
                let running = Running {
                    _server: Some(server),
                    _driver: Some(driver),
                    ..Running::default()
                };
                (running, Some(log))
            }
            "tools" => {
                let browser = self.required(self.browser, "--browser")?;
                let driver = tools(browser, dir()?, &mut command)?;
                let running = Running {
                    _driver: Some(driver),
                    ..Running::default()
                };
                (running, None)
            }
            // The wasm test runner starts the driver itself (only the browser's environment), but
            // for a driver it cannot start.
            "browser" => {
                let browser = self.required(self.browser, "--browser")?;
                let running = Running {
                    _driver: wasm_runner_driver(browser, dir, &mut command)?,
                    ..Running::default()
                };
                (running, None)
            }
            other => {
                return Err(Error::failed(format!(
                    "no suite `{other}`: with-backends knows host, e2e, tools and browser"
                )));
            }
        };
        println!("with-backends: running `{}`", describe(&command));
        let status = command
            .status()
            .map_err(Error::io(format!("cannot start `{}`", describe(&command))))?;
        if !status.success() {
            if let Some(log) = server_log {
                println!(
                    "with-backends: the toolbridge server's log is {}",
                    log.display()
                );
            }
        }
        drop(running);
        Ok(status
            .code()
            .and_then(|code| u8::try_from(code).ok())
            .map_or(ExitCode::FAILURE, ExitCode::from))
    }
}

/// For a browser whose driver the wasm test runner cannot start itself (WebKit's), the driver
/// started here on a display of its own (`dir()` holds its logs), a first session opened and
/// closed to print the browser's version, the capabilities written to `dir()/webdriver.json`, and
/// `command` pointed at both; `None` for the others, whose driver the runner starts.
fn wasm_runner_driver<'a>(
    browser: &Browser,
    dir: impl FnOnce() -> Result<&'a Path, Error>,
    command: &mut Command,
) -> Result<Option<WebDriver>, Error> {
    let Some(remote) = browser.wasm_runner_remote else {
        return Ok(None);
    };
    let dir = dir()?;
    let driver = WebDriver::start(browser, &driver_from_env(browser)?, dir)?;
    let capabilities = browser.capabilities();
    let version = driver.browser_version(&capabilities)?;
    println!(
        "{}: {version} through {} at {} (logs in {})",
        browser.name,
        browser.driver,
        driver.url(),
        dir.display()
    );
    // Absolute: the runner reads it from the package's folder, where cargo runs it.
    let file = std::path::absolute(dir.join("webdriver.json"))
        .map_err(Error::io(format!("cannot find {}", dir.display())))?;
    fs_err::write(&file, Value::Object(capabilities).to_string())?;
    command
        .env(remote, driver.url())
        .env("WASM_BINDGEN_TEST_WEBDRIVER_JSON", &file);
    Ok(Some(driver))
}

/// What a suite's command runs against, held until it ends and stopped when dropped.
#[derive(Default)]
struct Running {
    _host: Option<HostBackends>,
    _server: Option<ToolbridgeServer>,
    _driver: Option<WebDriver>,
}

/// The workspace's root: the book lives there.
fn workspace_root() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .parent()
        .map_or_else(|| PathBuf::from("."), Path::to_path_buf)
}

/// The end-to-end suites: a fresh server (database and log in `dir/<browser>/server`) with the
/// book's first tool and the same page with its script inline as dev tools, and the browser's
/// driver (its log in `dir/<browser>/`, with Xvfb's for WebKit, whose driver gets a display of its
/// own); screenshots go to `dir/screenshots/<browser>/`, and in
/// Chromium the book's to `<workspace>/target/docs/screenshots/`. Each browser gets its own
/// server, because the tests leave data behind.
fn e2e(
    browser: &Browser,
    binary: &Path,
    dir: &Path,
    products: u32,
    command: &mut Command,
) -> Result<(ToolbridgeServer, WebDriver), Error> {
    let own = dir.join(browser.name);
    let dev_tools = first_tool::write_folders(&workspace_root(), &own.join("dev-tools"))?;
    let mut options = ServerOptions::new("e2e", own.join("server"), products);
    options.dev_tools = dev_tools.to_vec();
    // The webhook tests' receiver listens on this machine.
    options.allow_private_webhooks = true;
    let server = ToolbridgeServer::start(binary, &options)?;
    let driver = WebDriver::start(browser, &driver_from_env(browser)?, &own)?;
    // Which build of the browser the suite drives (and that the driver can start it).
    let version = driver.browser_version(&browser.capabilities())?;
    println!(
        "{}: {version} through {} at {}",
        browser.name,
        browser.driver,
        driver.url()
    );
    let screenshots = dir.join("screenshots").join(browser.name);
    fs_err::create_dir_all(&screenshots)?;
    command
        // Which capabilities the suites ask the driver for.
        .env("TOOLBRIDGE_E2E_BROWSER", browser.name)
        // `localhost`, not 127.0.0.1: tool origins are `*.localhost`, and the app's cookie is
        // for the name the page was loaded from.
        .env(
            "TOOLBRIDGE_E2E_APP",
            format!("http://localhost:{}", server.port()),
        )
        .env("TOOLBRIDGE_E2E_WEBDRIVER", driver.url())
        // For a test that needs a server of its own, untouched by the others (the book's tour).
        .env("TOOLBRIDGE_E2E_BIN", binary)
        // Suites that need data no page can make (a catalog product) write it here.
        .env("TOOLBRIDGE_E2E_DB", server.db())
        // Where the server prints, for what it must tell a dev tool's author.
        .env("TOOLBRIDGE_E2E_SERVER_LOG", server.log())
        .env("TOOLBRIDGE_E2E_SCREENSHOTS", &screenshots);
    // The book's screenshots (tests/e2e/tour.rs) come from Chromium alone, so that its pictures
    // all show one engine; the Firefox and WebKit runs check the same pages and write none.
    if browser.name == CHROMIUM.name {
        let docs = workspace_root()
            .join("target")
            .join("docs")
            .join("screenshots");
        fs_err::create_dir_all(&docs)?;
        command.env("TOOLBRIDGE_E2E_DOCS_SCREENSHOTS", &docs);
    }
    Ok((server, driver))
}

/// The tool kit's browser tests: the browser's driver (its log in `dir/<browser>/`) and the
/// book's first tool and its test as `docs/src/tools/first-tool.md` has them now
/// (`dir/<browser>/first-tool/`).
fn tools(browser: &Browser, dir: &Path, command: &mut Command) -> Result<WebDriver, Error> {
    let own = dir.join(browser.name);
    let example = own.join("first-tool");
    first_tool::write_example(&workspace_root(), &example)?;
    let driver = WebDriver::start(browser, &driver_from_env(browser)?, &own)?;
    command
        .env("TOOLBRIDGE_KIT_BROWSER", browser.name)
        .env("TOOLBRIDGE_KIT_WEBDRIVER", driver.url())
        .env("TOOLBRIDGE_KIT_FIRST_TOOL", &example);
    Ok(driver)
}
