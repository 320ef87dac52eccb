//! The browsers the suites run in, and a `WebDriver` server (chromedriver, geckodriver,
//! WebKitWebDriver) started on a free port for suites that open their own sessions, or for the
//! wasm test runner when it cannot start the driver itself.

use std::collections::HashMap;
use std::ffi::OsStr;
use std::io::{Read, Write};
use std::net::{Ipv4Addr, TcpStream};
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::time::Duration;

use serde_json::{Map, Value, json};

use crate::Error;
use crate::server::{ReservedPort, base_url, describe, log_file, wait_until_listening};
use crate::xvfb::Xvfb;

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
    /// Whether the browser opens a real window, with no headless mode: its driver then runs on
    /// an Xvfb display of its own, started with it.
    pub needs_display: bool,
    /// `None` when `wasm-bindgen-test-runner` starts the driver itself (the program that
    /// `CHROMEDRIVER` or `GECKODRIVER` names). For a driver the runner has no support for, the
    /// variable that points the runner at one `with-backends` started: WebKitWebDriver serves the
    /// same W3C `WebDriver` as geckodriver, so the runner's Gecko client drives it
    /// (`GECKODRIVER_REMOTE`), asking for the capabilities of the file that
    /// `WASM_BINDGEN_TEST_WEBDRIVER_JSON` names.
    pub wasm_runner_remote: Option<&'static str>,
}

/// Headless Chromium, through chromedriver.
pub const CHROMIUM: Browser = Browser {
    name: "chromium",
    driver: "chromedriver",
    log_option: Some("--log-path"),
    driver_env: &[],
    needs_display: false,
    wasm_runner_remote: None,
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
    needs_display: false,
    wasm_runner_remote: None,
};

/// WebKitGTK's `MiniBrowser`, through `WebKitWebDriver` (Debian's `webkit2gtk-driver`), on an
/// Xvfb display of its own: the engine of Safari, and of every browser on iPhones and iPads. It
/// fetches nothing on its own that the suites need to turn off.
pub const WEBKIT: Browser = Browser {
    name: "webkit",
    driver: "WebKitWebDriver",
    log_option: None,
    driver_env: &[],
    needs_display: true,
    wasm_runner_remote: Some("GECKODRIVER_REMOTE"),
};

impl Browser {
    /// What a new session asks the driver for: the browser headless, with whatever it would
    /// fetch from the internet on its own turned off (the machines this runs on may have no
    /// network beyond this one).
    pub fn capabilities(&self) -> Map<String, Value> {
        let (key, options) = if self.name == WEBKIT.name {
            // The MiniBrowser that WebKitWebDriver's package ships, which the driver starts with
            // `--automation` in the window of its display; it has no headless mode.
            ("browserName", json!("MiniBrowser"))
        } else if self.name == FIREFOX.name {
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
        [&CHROMIUM, &FIREFOX, &WEBKIT]
            .into_iter()
            .find(|browser| browser.name == name)
            .ok_or_else(|| {
                Error::failed(format!(
                    "no browser `{name}`: the suites run in chromium, firefox or webkit"
                ))
            })
    }
}

/// How long a driver may take to listen.
const DRIVER_WAIT: Duration = Duration::from_secs(30);

/// A browser's driver listening on a free port of this machine (on an Xvfb display of its own for
/// a browser that needs one); dropping it kills it, every browser process it started, and the
/// display.
pub struct WebDriver {
    child: Child,
    port: u16,
    /// Dropped after the driver and its browser are killed.
    display: Option<Xvfb>,
}

impl WebDriver {
    /// Starts `browser`'s driver, the program at `program`, on a free port with its log in `dir`
    /// (`<driver>.log`; `Xvfb.log` beside it, for a browser that needs a display), and waits until
    /// it listens.
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
        let display = if browser.needs_display {
            Some(Xvfb::start(dir)?)
        } else {
            None
        };
        let port = ReservedPort::new()?.release();
        let mut command = Command::new(program);
        command.arg(format!("--port={port}"));
        if let Some(display) = &display {
            command.env("DISPLAY", display.display());
        }
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
        match &display {
            Some(display) => println!(
                "{}: starting `{}` on display {}",
                browser.name,
                describe(&command),
                display.display()
            ),
            None => println!("{}: starting `{}`", browser.name, describe(&command)),
        }
        let child = command
            .spawn()
            .map_err(Error::io(format!("cannot start {}", program.display())))?;
        // Made first, so that the driver is killed if it never listens.
        let mut driver = Self {
            child,
            port,
            display,
        };
        wait_until_listening(browser.driver, &mut driver.child, port, DRIVER_WAIT, &log)?;
        Ok(driver)
    }

    /// The driver's address, `http://127.0.0.1:PORT`.
    pub fn url(&self) -> String {
        base_url(self.port)
    }

    /// Opens a session with `capabilities` and ends it again: the browser's name and version, as
    /// the driver answers them (`MiniBrowser`, `2.50.6`). Also proves that the driver can start
    /// its browser, before a suite depends on it.
    pub fn browser_version(&self, capabilities: &Map<String, Value>) -> Result<String, Error> {
        let created = self.request(
            "POST",
            "/session",
            Some(&json!({"capabilities": {"alwaysMatch": capabilities}})),
        )?;
        let value = &created["value"];
        let Some(session) = value["sessionId"].as_str() else {
            return Err(Error::failed(format!(
                "the driver at {} opened no session: {created}",
                self.url()
            )));
        };
        let answered = &value["capabilities"];
        let name = answered["browserName"].as_str().unwrap_or("the browser");
        let version = answered["browserVersion"]
            .as_str()
            .unwrap_or("(no version)");
        let described = format!("{name} {version}");
        self.request("DELETE", &format!("/session/{session}"), None)?;
        Ok(described)
    }

    /// One request to the driver, its JSON answer read whatever the status (`WebDriver` errors
    /// are JSON too).
    fn request(&self, method: &str, path: &str, body: Option<&Value>) -> Result<Value, Error> {
        let what = || format!("{method} {path} to the driver at {}", self.url());
        let body = body.map(Value::to_string).unwrap_or_default();
        let mut stream = TcpStream::connect((Ipv4Addr::LOCALHOST, self.port))
            .map_err(Error::io(format!("cannot send {}", what())))?;
        stream
            .set_read_timeout(Some(DRIVER_WAIT))
            .map_err(Error::io(format!("cannot send {}", what())))?;
        let request = format!(
            "{method} {path} HTTP/1.1\r\nHost: 127.0.0.1:{}\r\nContent-Type: application/json\r\n\
             Content-Length: {}\r\nConnection: close\r\n\r\n{body}",
            self.port,
            body.len()
        );
        stream
            .write_all(request.as_bytes())
            .map_err(Error::io(format!("cannot send {}", what())))?;
        // Read to the end of the body its `Content-Length` gives, not to the end of the
        // connection: chromedriver keeps it open whatever `Connection: close` asks.
        let mut answer = Vec::new();
        let mut chunk = [0_u8; 4096];
        loop {
            if let Some(length) = whole_answer(&answer) {
                answer.truncate(length);
                break;
            }
            let read = stream
                .read(&mut chunk)
                .map_err(Error::io(format!("no answer to {}", what())))?;
            if read == 0 {
                break;
            }
            answer.extend_from_slice(&chunk[..read]);
        }
        let answer = String::from_utf8_lossy(&answer);
        let json = answer.split_once("\r\n\r\n").map_or("", |(_, json)| json);
        serde_json::from_str(json)
            .map_err(|_| Error::failed(format!("{} was answered with no JSON: {answer}", what())))
    }
}

/// The length of an HTTP answer whose head and whole body (by its `Content-Length`) `bytes`
/// holds; `None` while more is to come, or when the head names no length (the body then ends
/// with the connection).
fn whole_answer(bytes: &[u8]) -> Option<usize> {
    let head_end = bytes.windows(4).position(|window| window == b"\r\n\r\n")? + 4;
    let head = String::from_utf8_lossy(&bytes[..head_end]);
    let length: usize = head.lines().find_map(|line| {
        let (name, value) = line.split_once(':')?;
        name.trim()
            .eq_ignore_ascii_case("content-length")
            .then(|| value.trim().parse().ok())
            .flatten()
    })?;
    (bytes.len() >= head_end + length).then_some(head_end + length)
}

impl Drop for WebDriver {
    fn drop(&mut self) {
        // A browser whose session is still open outlives a killed driver (WebKitWebDriver's
        // MiniBrowser does, with its web and network processes, on any signal), and the suites
        // must leave nothing running: what the driver started is killed first, while it is still
        // found below the driver. (A MiniBrowser whose window was closed has quit already.)
        let browser = descendants(self.child.id());
        if !browser.is_empty() {
            let _ = Command::new("kill")
                .arg("-KILL")
                .args(browser.iter().map(u32::to_string))
                .stdout(Stdio::null())
                .stderr(Stdio::null())
                .status();
        }
        let _ = self.child.kill();
        let _ = self.child.wait();
        // The display goes last, once nothing draws on it.
        self.display = None;
    }
}

/// Every live process below `pid`: its children, theirs, and so on, leaving out those that have
/// exited but are not yet reaped (from `/proc`; none where there is no `/proc`).
fn descendants(pid: u32) -> Vec<u32> {
    let mut children: HashMap<u32, Vec<u32>> = HashMap::new();
    for entry in std::fs::read_dir("/proc").into_iter().flatten().flatten() {
        let Some(child) = entry
            .file_name()
            .to_str()
            .and_then(|name| name.parse().ok())
        else {
            continue;
        };
        // `PID (COMMAND) STATE PPID ...`, where COMMAND may hold spaces and parentheses.
        let Ok(stat) = std::fs::read_to_string(entry.path().join("stat")) else {
            continue;
        };
        let mut fields = stat
            .rsplit_once(')')
            .map(|(_, rest)| rest.split_whitespace())
            .into_iter()
            .flatten();
        let (Some(state), Some(parent)) = (fields.next(), fields.next()) else {
            continue;
        };
        if let (false, Ok(parent)) = (state == "Z", parent.parse()) {
            children.entry(parent).or_default().push(child);
        }
    }
    let mut found = Vec::new();
    let mut next = vec![pid];
    while let Some(parent) = next.pop() {
        for &child in children.get(&parent).into_iter().flatten() {
            found.push(child);
            next.push(child);
        }
    }
    found
}

/// The driver program for `browser`: the path in the environment variable the wasm test runner
/// also reads (`CHROMEDRIVER`, `GECKODRIVER`; `WEBKITWEBDRIVER`, which the runner does not), as
/// `cargo xtask test` sets it.
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
