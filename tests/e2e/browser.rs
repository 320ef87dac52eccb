//! A `WebDriver` session in headless Chromium against the app that `cargo xtask test` started,
//! and the waits and screenshots the suites share.

use std::path::PathBuf;
use std::time::Duration;

use fantoccini::elements::Element;
use fantoccini::{Client, ClientBuilder, Locator};
use serde_json::{Value, json};

/// How long a wait for the page may take before the test fails.
pub(crate) const PATIENCE: Duration = Duration::from_secs(20);

/// An environment variable `cargo xtask test` sets.
fn setting(name: &str) -> String {
    std::env::var(name).unwrap_or_else(|_| {
        panic!("{name} is not set: run these suites with `cargo xtask test --only e2e`")
    })
}

/// The app's origin, `http://localhost:<port>`.
pub(crate) fn app() -> String {
    setting("TOOLBRIDGE_E2E_APP")
}

/// The server's database, for data no page can make.
pub(crate) fn database() -> PathBuf {
    PathBuf::from(setting("TOOLBRIDGE_E2E_DB"))
}

/// A new API key of the demo tenant with every scope, made in the server's database: what an
/// integrator would hold, to check through the REST API what a page did.
pub(crate) async fn api_key() -> String {
    let store = toolbridge_store::Store::open(&database()).await.unwrap();
    let tenant = store.default_tenant().await.unwrap().unwrap();
    let created = store
        .create_api_key(
            &tenant.id,
            "e2e checks",
            &toolbridge_store::Scope::ALL,
            toolbridge_store::RateLimit {
                requests: 1000,
                window_secs: 60,
            },
        )
        .await
        .unwrap();
    store.close().await;
    created.token
}

/// `GET path` of the REST API with `key`, as JSON.
pub(crate) async fn rest(key: &str, path: &str) -> Value {
    let answer = reqwest::Client::new()
        .get(format!("{}/api/v1{path}", app()))
        .bearer_auth(key)
        .send()
        .await
        .unwrap();
    assert_eq!(answer.status(), 200, "GET /api/v1{path}");
    answer.json().await.unwrap()
}

/// Where screenshots go.
pub(crate) fn screenshots() -> PathBuf {
    PathBuf::from(setting("TOOLBRIDGE_E2E_SCREENSHOTS"))
}

/// A browser session; closed by [`Browser::close`] (a failed test leaves it to chromedriver).
pub(crate) struct Browser {
    pub(crate) client: Client,
}

impl Browser {
    /// A new headless Chromium window, 1280 × 900.
    pub(crate) async fn open() -> Self {
        let capabilities = json!({
            "goog:chromeOptions": {
                "args": [
                    "--headless=new", "--no-sandbox", "--disable-gpu", "--disable-dev-shm-usage",
                    "--disable-quic", "--no-first-run", "--disable-background-networking",
                    "--disable-component-update", "--disable-sync", "--window-size=1280,900"
                ]
            }
        });
        let Value::Object(capabilities) = capabilities else {
            unreachable!("a JSON object literal")
        };
        let client = ClientBuilder::new(hyper_util::client::legacy::connect::HttpConnector::new())
            .capabilities(capabilities)
            .connect(&setting("TOOLBRIDGE_E2E_WEBDRIVER"))
            .await
            .expect("chromedriver answers");
        Self { client }
    }

    /// Goes to `path` on the app.
    pub(crate) async fn go(&self, path: &str) {
        self.client.goto(&format!("{}{path}", app())).await.unwrap();
    }

    /// The element `css`, once it is there.
    pub(crate) async fn find(&self, css: &str) -> Element {
        self.client
            .wait()
            .at_most(PATIENCE)
            .for_element(Locator::Css(css))
            .await
            .unwrap_or_else(|e| panic!("no {css} within {PATIENCE:?}: {e}"))
    }

    /// Clicks the button whose text is `label`, once it is there, brought to the middle of
    /// the window first (the app's header stays on top of whatever scrolls under it).
    pub(crate) async fn press(&self, label: &str) {
        let xpath = format!("//button[normalize-space()={label:?}]");
        let button = self
            .client
            .wait()
            .at_most(PATIENCE)
            .for_element(Locator::XPath(&xpath))
            .await
            .unwrap_or_else(|e| panic!("no button {label:?} within {PATIENCE:?}: {e}"));
        self.click(&button).await;
    }

    /// Clicks `element` after bringing it to the middle of the window, clear of the app's
    /// sticky header.
    pub(crate) async fn click(&self, element: &Element) {
        self.client
            .execute(
                "arguments[0].scrollIntoView({ block: 'center' });",
                vec![serde_json::to_value(element).unwrap()],
            )
            .await
            .unwrap();
        element.click().await.unwrap();
    }

    /// The text of the element `css`.
    pub(crate) async fn text(&self, css: &str) -> String {
        self.find(css).await.text().await.unwrap()
    }

    /// Works inside the frame `css` (a tool's iframe) until [`Browser::leave_frame`].
    pub(crate) async fn enter_frame(&self, css: &str) {
        let frame = self.find(css).await;
        frame.enter_frame().await.unwrap();
    }

    /// Back to the app's page from a frame.
    pub(crate) async fn leave_frame(&self) {
        self.client.enter_frame(None).await.unwrap();
    }

    /// Waits until `script` (a JavaScript expression) is true in the page.
    pub(crate) async fn until(&self, what: &str, script: &str) {
        let deadline = tokio::time::Instant::now() + PATIENCE;
        loop {
            let done = self
                .client
                .execute(&format!("return Boolean({script});"), vec![])
                .await
                .unwrap();
            if done == Value::Bool(true) {
                return;
            }
            assert!(
                tokio::time::Instant::now() < deadline,
                "{what}: `{script}` not true within {PATIENCE:?}"
            );
            tokio::time::sleep(Duration::from_millis(100)).await;
        }
    }

    /// Saves a screenshot of the window as `<name>.png`.
    pub(crate) async fn screenshot(&self, name: &str) {
        let png = self.client.screenshot().await.unwrap();
        let dir = screenshots();
        std::fs::create_dir_all(&dir).unwrap();
        std::fs::write(dir.join(format!("{name}.png")), png).unwrap();
    }

    /// Ends the session.
    pub(crate) async fn close(self) {
        self.client.close().await.unwrap();
    }
}
