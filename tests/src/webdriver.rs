//! The browsers the suites run in, and a `WebDriver` server (chromedriver, geckodriver) started
//! on a free port for suites that open their own sessions.

use std::ffi::OsStr;
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::time::Duration;

use serde_json::{Map, Value, json};

use crate::Error;
use crate::server::{ReservedPort, base_url, describe, log_file, wait_until_listening};

/// A browser and its `WebDriver` server.
#[derive(Debug)]
pub struct Browser {
    /// The browser's name in suite names and directories, and the value of the variables that
    /// tell the suites which capabilities to ask for (`chromium`, `firefox`).
    pub name: &'static str,
    /// The driver's program name.
    pub driver: &'static str,
    /// The driver's option that takes the file to log to, as `OPTION=PATH`; `None` for a driver
    /// that only logs to its standard error, which then goes to that file.
    log_option: Option<&'static str>,
    /// Variables set for the driver, and so for the browser, which inherits them.
    pub driver_env: &'static [(&'static str, &'static str)],
}

/// Headless Chromium, through chromedriver.
pub const CHROMIUM: Browser = Browser {
    name: "chromium",
    driver: "chromedriver",
    log_option: Some("--log-path"),
    driver_env: &[],
};

/// Headless Firefox ESR, through geckodriver.
pub const FIREFOX: Browser = Browser {
    name: "firefox",
    driver: "geckodriver",
    log_option: None,
    // A release build of Firefox ignores a `services.settings.server` pref (geckodriver sets a
    // `data:` URL that goes nowhere) unless this is set, and then polls Mozilla's Remote
    // Settings server at start and while it runs. With it, the pref holds and nothing leaves the
    // machine; the other background traffic is turned off by the suites' prefs.
    driver_env: &[("MOZ_REMOTE_SETTINGS_DEVTOOLS", "1")],
};

impl Browser {
    /// What a new session asks the driver for: the browser headless, with whatever it would
    /// fetch from the internet on its own turned off (the machines this runs on may have no
    /// network beyond this one).
    pub fn capabilities(&self) -> Map<String, Value> {
        let (key, options) = if self.name == FIREFOX.name {
            // Firefox answers `localhost` and every `*.localhost` name with the loopback address
            // without asking the system's resolver (which here knows `localhost` only), so the
            // tools' origins need no pref. The prefs are written into the new profile before
            // Firefox starts, so they hold from its first moment.
            (
                "moz:firefoxOptions",
                json!({"args": ["-headless"], "prefs": firefox_quiet_prefs()}),
            )
        } else {
            // Chromium too sends every `*.localhost` name to the loopback address itself.
            (
                "goog:chromeOptions",
                json!({"args": [
                    "--headless=new", "--no-sandbox", "--disable-gpu", "--disable-dev-shm-usage",
                    "--disable-quic", "--no-first-run", "--disable-background-networking",
                    "--disable-component-update", "--disable-sync"
                ]}),
            )
        };
        Map::from_iter([(key.to_owned(), options)])
    }

    /// The browser called `name`, or an error that lists the ones there are.
    pub fn named(name: &str) -> Result<&'static Self, Error> {
        [&CHROMIUM, &FIREFOX]
            .into_iter()
            .find(|browser| browser.name == name)
            .ok_or_else(|| {
                Error::failed(format!(
                    "no browser `{name}`: the suites run in chromium or firefox"
                ))
            })
    }
}

/// How long a driver may take to listen.
const DRIVER_WAIT: Duration = Duration::from_secs(30);

/// A browser's driver listening on a free port of this machine; dropping it kills it.
pub struct WebDriver {
    child: Child,
    port: u16,
}

impl WebDriver {
    /// Starts `browser`'s driver, the program at `program`, on a free port with its log in `dir`
    /// (`<driver>.log`), and waits until it listens.
    pub fn start(browser: &Browser, program: &Path, dir: &Path) -> Result<Self, Error> {
        Self::start_with_env(browser, program, dir, &[])
    }

    /// Starts the driver as [`Self::start`] does, with `env` added to its environment (and so to
    /// its browser's): `HOME`, say, for a browser that reads its trusted certificates from there.
    pub fn start_with_env(
        browser: &Browser,
        program: &Path,
        dir: &Path,
        env: &[(&str, &OsStr)],
    ) -> Result<Self, Error> {
        fs_err::create_dir_all(dir)?;
        let log = dir.join(format!("{}.log", browser.driver));
        let port = ReservedPort::new()?.release();
        let mut command = Command::new(program);
        command.arg(format!("--port={port}"));
        let (stdout, stderr) = if let Some(option) = browser.log_option {
            command.arg(format!("{option}={}", log.display()));
            (Stdio::null(), Stdio::null())
        } else {
            let file = log_file(&log)?;
            let copy = file
                .try_clone()
                .map_err(Error::io(format!("cannot open {} twice", log.display())))?;
            (Stdio::from(copy), Stdio::from(file))
        };
        command
            .envs(browser.driver_env.iter().copied())
            .envs(env.iter().copied())
            .stdin(Stdio::null())
            .stdout(stdout)
            .stderr(stderr);
        println!("{}: starting `{}`", browser.name, describe(&command));
        let child = command
            .spawn()
            .map_err(Error::io(format!("cannot start {}", program.display())))?;
        // Made first, so that the driver is killed if it never listens.
        let mut driver = Self { child, port };
        wait_until_listening(browser.driver, &mut driver.child, port, DRIVER_WAIT, &log)?;
        Ok(driver)
    }

    /// The driver's address, `http://127.0.0.1:PORT`.
    pub fn url(&self) -> String {
        base_url(self.port)
    }
}

impl Drop for WebDriver {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

/// The driver program for `browser`: the path in the environment variable the wasm test runner
/// also reads (`CHROMEDRIVER`, `GECKODRIVER`), as `cargo xtask test` sets it.
pub fn driver_from_env(browser: &Browser) -> Result<PathBuf, Error> {
    let variable = browser.driver.to_ascii_uppercase();
    std::env::var_os(&variable)
        .filter(|value| !value.is_empty())
        .map(PathBuf::from)
        .ok_or_else(|| {
            Error::failed(format!(
                "{variable} is not set: it names the {} binary (`cargo xtask test` sets it)",
                browser.driver
            ))
        })
}

/// Firefox prefs that stop what it would fetch on its own: what Chromium's
/// `--disable-background-networking`, `--disable-component-update` and `--disable-sync` do.
/// Debian's build has no updater, so there are no app updates to turn off. Remote Settings (the
/// lists and rules Firefox pulls from Mozilla) also needs `MOZ_REMOTE_SETTINGS_DEVTOOLS=1` in the
/// environment, which xtask gives geckodriver and so Firefox.
fn firefox_quiet_prefs() -> Value {
    json!({
        // Remote Settings, pointed at a `data:` URL that answers nothing.
        "services.settings.server": "data:,#remote-settings-dummy/v1",
        // Telemetry and usage reports.
        "datareporting.policy.dataSubmissionEnabled": false,
        "datareporting.healthreport.uploadEnabled": false,
        "datareporting.usage.uploadEnabled": false,
        "toolkit.telemetry.enabled": false,
        "toolkit.telemetry.archive.enabled": false,
        "toolkit.telemetry.server": "data:,",
        // Studies and experiments.
        "app.normandy.enabled": false,
        "app.normandy.api_url": "",
        "app.shield.optoutstudies.enabled": false,
        // Captive portal detection and the connectivity check.
        "network.captive-portal-service.enabled": false,
        "network.connectivity-service.enabled": false,
        // Safe Browsing and tracking protection lists.
        "browser.safebrowsing.update.enabled": false,
        "browser.safebrowsing.malware.enabled": false,
        "browser.safebrowsing.phishing.enabled": false,
        "browser.safebrowsing.blockedURIs.enabled": false,
        "browser.safebrowsing.downloads.enabled": false,
        // Add-on, system add-on and media plugin (GMP) updates.
        "extensions.update.enabled": false,
        "extensions.systemAddon.update.enabled": false,
        "extensions.getAddons.cache.enabled": false,
        "media.gmp-manager.updateEnabled": false,
        // Web Push's connection to Mozilla's push service.
        "dom.push.connection.enabled": false,
        // Location, region and search engine updates.
        "geo.provider.network.url": "",
        "browser.region.network.url": "",
        "browser.region.update.enabled": false,
        "browser.search.update": false,
        // First-run and new-tab pages with remote content; local models and their downloads.
        "browser.startup.page": 0,
        "browser.startup.homepage_override.mstone": "ignore",
        "browser.newtabpage.enabled": false,
        "browser.topsites.contile.enabled": false,
        "browser.discovery.enabled": false,
        "browser.ml.enable": false,
        "browser.translations.enable": false,
        // No DNS prefetch, link prefetch or speculative connections; no DNS over HTTPS; no proxy.
        "network.dns.disablePrefetch": true,
        "network.prefetch-next": false,
        "network.http.speculative-parallel-limit": 0,
        "network.trr.mode": 5,
        "network.proxy.type": 0
    })
}
