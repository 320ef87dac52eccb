//! Chromium for the deployment suite: trusting the suite's CA through an NSS database in a
//! throwaway `HOME` (never `--ignore-certificate-errors`), with every name under the deployment's
//! domain sent to this machine, and the steps the suite takes in the app.

use std::any::Any;
use std::future::Future;
use std::process::Command;

use fantoccini::{Client, ClientBuilder, Locator};
use serde_json::{Value, json};
use toolbridge_e2e::webdriver::{CHROMIUM, WebDriver, driver_from_env};

use crate::page::element;
pub(super) use crate::page::{sign_in, until};

use super::Deployment;
use super::proxy::DOMAIN;

/// A Chromium session through chromedriver, closed by [`Chromium::run`].
pub(super) struct Chromium {
    _driver: WebDriver,
    client: Client,
}

impl Chromium {
    /// Makes the NSS database with the CA in it, starts chromedriver with `HOME` there, and opens
    /// a session whose resolver maps `*.example.com` to 127.0.0.1.
    pub(super) async fn start(deployment: &Deployment) -> Self {
        let home = deployment.dir.join("chromium-home");
        let nssdb = home.join(".pki/nssdb");
        std::fs::create_dir_all(&nssdb).unwrap();
        let database = format!("sql:{}", nssdb.display());
        certutil(&["-d", &database, "-N", "--empty-password"]);
        certutil(&[
            "-d",
            &database,
            "-A",
            "-t",
            "C,,",
            "-n",
            "toolbridge deployment suite CA",
            "-i",
            &deployment.tls.ca_file.display().to_string(),
        ]);
        let driver = WebDriver::start_with_env(
            &CHROMIUM,
            &driver_from_env(&CHROMIUM).unwrap_or_else(|e| panic!("{e}")),
            &deployment.dir.join("chromedriver"),
            &[("HOME", home.as_os_str())],
        )
        .unwrap_or_else(|e| panic!("{e}"));
        let mut capabilities = CHROMIUM.capabilities();
        if let Some(Value::Array(args)) = capabilities
            .get_mut("goog:chromeOptions")
            .and_then(|options| options.get_mut("args"))
        {
            args.push(json!(format!(
                "--host-resolver-rules=MAP *.{DOMAIN} 127.0.0.1"
            )));
            args.push(json!(format!(
                "--user-data-dir={}",
                home.join("profile").display()
            )));
        }
        let client = ClientBuilder::new(hyper_util::client::legacy::connect::HttpConnector::new())
            .capabilities(capabilities)
            .connect(&driver.url())
            .await
            .unwrap_or_else(|e| panic!("no Chromium session: {e}"));
        Self {
            _driver: driver,
            client,
        }
    }

    /// Runs `steps` on the session as a task of its own, then closes the session whatever they
    /// did (a session left open would leave Chromium running); their panic, if any.
    pub(super) async fn run<F, Fut>(self, steps: F) -> Result<(), Box<dyn Any + Send>>
    where
        F: FnOnce(Client) -> Fut,
        Fut: Future<Output = ()> + Send + 'static,
    {
        let outcome = tokio::spawn(steps(self.client.clone())).await;
        let _ = self.client.close().await;
        outcome.map_err(tokio::task::JoinError::into_panic)
    }
}

/// Runs NSS's `certutil` (`cargo xtask setup` installs it: Debian's libnss3-tools).
fn certutil(args: &[&str]) {
    let output = Command::new("certutil")
        .args(args)
        .output()
        .unwrap_or_else(|e| panic!("cannot run certutil (`cargo xtask setup` installs it): {e}"));
    assert!(
        output.status.success(),
        "certutil {}: {}",
        args.join(" "),
        String::from_utf8_lossy(&output.stderr)
    );
}

/// Opens quote `id` in the editor and the tool called `name` from its Tools menu.
pub(super) async fn open_tool_on_quote(client: &Client, app: &str, id: &str, name: &str) {
    client.goto(&format!("{app}/#/quotes/{id}")).await.unwrap();
    element(
        client,
        Locator::Css("button[aria-controls^=tools-menu]"),
        "the editor's Tools menu",
    )
    .await
    .click()
    .await
    .unwrap();
    let item = format!(
        "//button[contains(@class,'menu-item')][.//*[contains(@class,'menu-title')][normalize-space()={name:?}]]"
    );
    element(
        client,
        Locator::XPath(&item),
        &format!("{name} in the Tools menu"),
    )
    .await
    .click()
    .await
    .unwrap();
}

/// In the probe's frame: waits for its handshake (it names the signed-in `user`), presses its
/// button, and waits until the editor shows the line it added.
pub(super) async fn add_probe_line(client: &Client, user: &str) {
    element(
        client,
        Locator::Css(".tool-panel iframe"),
        "the tool's frame",
    )
    .await
    .enter_frame()
    .await
    .unwrap();
    until(
        client,
        "the probe's handshake",
        &format!("document.getElementById('context')?.textContent === 'connected as {user}'"),
    )
    .await;
    client
        .find(Locator::Css("#add"))
        .await
        .unwrap()
        .click()
        .await
        .unwrap();
    until(
        client,
        "the probe's line added",
        "document.getElementById('status')?.textContent === 'added'",
    )
    .await;
    client.enter_parent_frame().await.unwrap();
    until(
        client,
        "the probe's line in the editor",
        "Array.from(document.querySelectorAll('.lines-table input, .lines-table td')).some(cell => (cell.value ?? cell.textContent).includes('Probe line'))",
    )
    .await;
}
