//! Opening a test page in the headless browser `cargo xtask test` names, and reading the outcome
//! of its tests (`runTests` of `@toolbridge/sdk/testing` sets `window.toolbridgeTestResults`).

use std::time::Duration;

use fantoccini::ClientBuilder;
use serde::Deserialize;
use serde_json::{Value, json};

/// How long a test page may take to finish all its tests.
const PAGE_DEADLINE: Duration = Duration::from_secs(120);

/// An environment variable `cargo xtask test` sets.
pub(crate) fn setting(name: &str) -> String {
    std::env::var(name).unwrap_or_else(|_| {
        panic!("{name} is not set: run these tests with `cargo xtask test --only \"tools in\"` or `--only \"sdk package\"`")
    })
}

/// One test's outcome, as the page reports it.
#[derive(Debug, Clone, Deserialize)]
pub(crate) struct Outcome {
    pub(crate) name: String,
    pub(crate) ok: bool,
    #[serde(default)]
    pub(crate) error: Option<String>,
}

/// What the browser is asked for: headless, fetching nothing on its own.
fn capabilities() -> serde_json::Map<String, Value> {
    let capabilities = match setting("TOOLBRIDGE_KIT_BROWSER").as_str() {
        "chromium" => json!({
            "goog:chromeOptions": {
                "args": [
                    "--headless=new", "--no-sandbox", "--disable-gpu", "--disable-dev-shm-usage",
                    "--no-first-run", "--disable-background-networking",
                    "--disable-component-update", "--disable-sync"
                ]
            }
        }),
        "firefox" => json!({
            "moz:firefoxOptions": {
                "args": ["-headless"],
                "prefs": {
                    "services.settings.server": "data:,#remote-settings-dummy/v1",
                    "datareporting.policy.dataSubmissionEnabled": false,
                    "datareporting.healthreport.uploadEnabled": false,
                    "toolkit.telemetry.enabled": false,
                    "app.normandy.enabled": false,
                    "network.captive-portal-service.enabled": false,
                    "network.connectivity-service.enabled": false,
                    "browser.safebrowsing.update.enabled": false,
                    "extensions.update.enabled": false,
                    "media.gmp-manager.updateEnabled": false,
                    "dom.push.connection.enabled": false,
                    "browser.region.update.enabled": false,
                    "browser.search.update": false,
                    "browser.startup.page": 0,
                    "network.dns.disablePrefetch": true,
                    "network.prefetch-next": false,
                    "network.trr.mode": 5
                }
            }
        }),
        other => panic!("TOOLBRIDGE_KIT_BROWSER is {other:?}, not chromium or firefox"),
    };
    let Value::Object(capabilities) = capabilities else {
        unreachable!("an object literal")
    };
    capabilities
}

/// Opens `url` in a new session, waits for its tests to finish, closes the session, and returns
/// the outcomes; `Err` says why there are none.
pub(crate) async fn run_page(url: &str) -> Result<Vec<Outcome>, String> {
    let webdriver = setting("TOOLBRIDGE_KIT_WEBDRIVER");
    let client = ClientBuilder::new(hyper_util::client::legacy::connect::HttpConnector::new())
        .capabilities(capabilities())
        .connect(&webdriver)
        .await
        .map_err(|e| format!("no session from the driver at {webdriver}: {e}"))?;
    let outcome = async {
        client
            .goto(url)
            .await
            .map_err(|e| format!("cannot open {url}: {e}"))?;
        let deadline = tokio::time::Instant::now() + PAGE_DEADLINE;
        loop {
            let results = client
                .execute("return window.toolbridgeTestResults || null;", vec![])
                .await
                .map_err(|e| format!("cannot read the results of {url}: {e}"))?;
            if !results.is_null() {
                return serde_json::from_value::<Vec<Outcome>>(results)
                    .map_err(|e| format!("the results of {url} are not a list of outcomes: {e}"));
            }
            if tokio::time::Instant::now() > deadline {
                let text = client
                    .execute("return document.body ? document.body.innerText : '';", vec![])
                    .await
                    .unwrap_or_default();
                return Err(format!(
                    "{url} did not finish its tests within {PAGE_DEADLINE:?}; the page shows: {text}"
                ));
            }
            tokio::time::sleep(Duration::from_millis(100)).await;
        }
    }
    .await;
    let _ = client.close().await;
    outcome
}

/// Runs a test page and prints each outcome as libtest does for its own.
pub(crate) async fn outcomes(url: &str) -> Vec<Outcome> {
    let outcomes = run_page(url).await.unwrap_or_else(|why| panic!("{why}"));
    for outcome in &outcomes {
        match &outcome.error {
            None => println!("  page test {} ... ok", outcome.name),
            Some(error) => println!("  page test {} ... FAILED\n    {error}", outcome.name),
        }
    }
    assert!(!outcomes.is_empty(), "{url} ran no tests");
    outcomes
}
