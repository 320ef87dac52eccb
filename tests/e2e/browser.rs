//! A `WebDriver` session in headless Chromium or Firefox, or in WebKitGTK's MiniBrowser on an Xvfb
//! display (whichever `cargo xtask test` names), against the app it started, and the waits and
//! screenshots the suites share.

use std::io::{Read, Write};
use std::net::TcpStream;
use std::path::PathBuf;
use std::time::Duration;

use fantoccini::elements::Element;
use fantoccini::error::CmdError;
use fantoccini::{Client, ClientBuilder, Locator};
use serde_json::{Map, Value};
use toolbridge_e2e::webdriver::{CHROMIUM, FIREFOX, WEBKIT};

/// How long the driver may take to open a session (start its browser), each time it is asked.
const SESSION_WAIT: Duration = Duration::from_secs(45);

/// How many times a new session is asked for before the test fails.
const SESSION_ASKS: u32 = 2;

/// How long a wait for the page may take before the test fails.
pub(crate) const PATIENCE: Duration = Duration::from_secs(20);

/// The window every browser opens, width × height in CSS pixels.
const WINDOW: (u32, u32) = (1280, 900);

/// An environment variable `cargo xtask test` sets.
pub(crate) fn setting(name: &str) -> String {
    std::env::var(name).unwrap_or_else(|_| {
        panic!("{name} is not set: run these suites with `cargo xtask test --only \"e2e in\"`")
    })
}

/// The browsers the suites run in.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Engine {
    /// Headless Chromium, through chromedriver.
    Chromium,
    /// Headless Firefox ESR, through geckodriver.
    Firefox,
    /// WebKitGTK's `MiniBrowser`, through `WebKitWebDriver`, in a real window on the Xvfb display
    /// `with-backends` started for it.
    WebKit,
}

impl Engine {
    /// The browser `TOOLBRIDGE_E2E_BROWSER` names (`chromium`, `firefox` or `webkit`).
    pub(crate) fn current() -> Self {
        match setting("TOOLBRIDGE_E2E_BROWSER").as_str() {
            "chromium" => Self::Chromium,
            "firefox" => Self::Firefox,
            "webkit" => Self::WebKit,
            other => {
                panic!("TOOLBRIDGE_E2E_BROWSER is {other:?}, not chromium, firefox or webkit")
            }
        }
    }

    /// What a new session asks the driver for (`toolbridge_e2e::webdriver::Browser::capabilities`).
    fn capabilities(self) -> Map<String, Value> {
        match self {
            Self::Chromium => CHROMIUM.capabilities(),
            Self::Firefox => FIREFOX.capabilities(),
            Self::WebKit => WEBKIT.capabilities(),
        }
    }
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

/// Quote `id` as `server` (a server of the test's own) has it, read over REST with a new
/// read-only key named `key_name`, as an integrator would.
pub(crate) async fn quote_on(
    server: &toolbridge_e2e::server::ToolbridgeServer,
    key_name: &str,
    id: &str,
) -> Value {
    let key = server
        .create_key(key_name, "quotes:read", "100/60s")
        .unwrap();
    let answer = reqwest::Client::new()
        .get(format!("{}/api/v1/quotes/{id}", server.base_url()))
        .bearer_auth(key)
        .send()
        .await
        .unwrap();
    assert_eq!(answer.status(), 200, "GET /api/v1/quotes/{id}");
    answer.json().await.unwrap()
}

/// Where screenshots go.
pub(crate) fn screenshots() -> PathBuf {
    PathBuf::from(setting("TOOLBRIDGE_E2E_SCREENSHOTS"))
}

/// A browser session; closed by [`Browser::close`], or when dropped unclosed (a test that failed)
/// by a plain request to the driver, so that the next test can start its own (geckodriver holds
/// one session at a time).
pub(crate) struct Browser {
    pub(crate) client: Client,
    /// The origin of the app it works on, `http://localhost:<port>`.
    origin: String,
    /// The driver's address, `http://127.0.0.1:PORT`.
    webdriver: String,
    /// The session's id, until [`Browser::close`] ends it.
    session: Option<String>,
    /// The frame [`Browser::enter_frame`] entered (its CSS selector on the app's page), until
    /// [`Browser::leave_frame`]: where to go back to when WebKitWebDriver has lost it.
    frame: std::sync::Mutex<Option<String>>,
}

impl Browser {
    /// A new window of the browser `cargo xtask test` names (headless but in WebKit), 1280 × 900,
    /// on the suite's server.
    pub(crate) async fn open() -> Self {
        Self::open_on(app()).await
    }

    /// A new window like [`Browser::open`], on the app at `origin` (a server of the
    /// test's own).
    pub(crate) async fn open_on(origin: String) -> Self {
        let browser = Self::connect(origin, Engine::current().capabilities()).await;
        // The outer window: the page gets what each browser's own bars leave of it (757 px high
        // in Chromium, 814 px in Firefox, 862 px in MiniBrowser, whose window on the Xvfb display
        // starts at 1024 × 768 and takes the size asked for like the others').
        let (width, height) = WINDOW;
        browser.client.set_window_size(width, height).await.unwrap();
        browser
    }

    /// A new headless Chromium page on the app at `origin` that looks to the page like a phone's
    /// or a tablet's: `emulation` is chromedriver's `goog:chromeOptions.mobileEmulation`
    /// (`deviceMetrics` with a touch screen, and a `userAgent`), which sets the viewport, so the
    /// window is left as it is. Chromium only: no other driver has it.
    pub(crate) async fn open_mobile(origin: String, emulation: Value) -> Self {
        assert_eq!(
            Engine::current(),
            Engine::Chromium,
            "mobile emulation is Chromium's"
        );
        let mut capabilities = Engine::Chromium.capabilities();
        capabilities["goog:chromeOptions"]
            .as_object_mut()
            .unwrap()
            .insert("mobileEmulation".to_owned(), emulation);
        Self::connect(origin, capabilities).await
    }

    /// A second browser at the same time as the first, for a test that needs two (another device
    /// of the user's): a window like [`Browser::open_on`]'s from the driver at `webdriver`, one the
    /// test started (geckodriver and WebKitWebDriver hold one session at a time).
    pub(crate) async fn open_from(webdriver: String, origin: String) -> Self {
        let browser = Self::connect_to(webdriver, origin, Engine::current().capabilities()).await;
        let (width, height) = WINDOW;
        browser.client.set_window_size(width, height).await.unwrap();
        browser
    }

    /// A new session of the browser `cargo xtask test` names, asking for `capabilities`.
    async fn connect(origin: String, capabilities: Map<String, Value>) -> Self {
        Self::connect_to(setting("TOOLBRIDGE_E2E_WEBDRIVER"), origin, capabilities).await
    }

    /// A new session from the driver at `webdriver`, asking for `capabilities`.
    async fn connect_to(
        webdriver: String,
        origin: String,
        capabilities: Map<String, Value>,
    ) -> Self {
        let engine = Engine::current();
        // A browser that cannot start leaves the driver's answer pending for ever. MiniBrowser
        // now and then fails to open its display ("cannot open display" in the driver's log, in 2
        // of about 10 WebKit runs, the same display serving the tests before and after); the
        // driver then waits for it, and answers the next request once this one is dropped (tried
        // by hand against WebKitWebDriver 2.50.6). So the session is asked for again, once, and a
        // second silence fails the test rather than hanging it.
        let mut asks = 0;
        let client = loop {
            asks += 1;
            let mut builder =
                ClientBuilder::new(hyper_util::client::legacy::connect::HttpConnector::new());
            builder.capabilities(capabilities.clone());
            match tokio::time::timeout(SESSION_WAIT, builder.connect(&webdriver)).await {
                Ok(Ok(client)) => break client,
                Ok(Err(e)) => {
                    panic!("no {engine:?} session from the driver at {webdriver}: {e}")
                }
                Err(_elapsed) if asks < SESSION_ASKS => eprintln!(
                    "no {engine:?} session from the driver at {webdriver} within \
                     {SESSION_WAIT:?}: asking again (see the driver's log)"
                ),
                Err(elapsed) => panic!(
                    "no {engine:?} session from the driver at {webdriver}, asked {asks} times, \
                     {SESSION_WAIT:?} each ({elapsed}): see the driver's log"
                ),
            }
        };
        let session = client.session_id().await.unwrap();
        Self {
            client,
            origin,
            webdriver,
            session,
            frame: std::sync::Mutex::new(None),
        }
    }

    /// Goes to `path` on the app. A `path` with a fragment (`/#/settings/organisation`) that the
    /// page is at already changes nothing, as the HTML standard has it (a navigation to the
    /// current URL's own fragment only scrolls to it), and as Chromium and Firefox do; WebKit
    /// instead loads such a URL again, as a reload, and with the page would go what it holds (an
    /// open sidebar tool). A link to the page's own URL is followed there as elsewhere.
    pub(crate) async fn go(&self, path: &str) {
        let url = format!("{}{path}", self.origin);
        if url.contains('#') && self.client.current_url().await.unwrap().as_str() == url {
            return;
        }
        self.client.goto(&url).await.unwrap();
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
    /// sticky header. If something covers it there (a toast), waits for that to go, as a user would.
    pub(crate) async fn click(&self, element: &Element) {
        let arguments = vec![serde_json::to_value(element).unwrap()];
        self.client
            .execute(
                "arguments[0].scrollIntoView({ block: 'center' });",
                arguments.clone(),
            )
            .await
            .unwrap();
        if Engine::current() == Engine::WebKit {
            self.scroll_frame_to(element).await;
        }
        let uncovered = "const r = arguments[0].getBoundingClientRect();
             const top = document.elementFromPoint(r.left + r.width / 2, r.top + r.height / 2);
             return top === null || arguments[0].contains(top);";
        let deadline = tokio::time::Instant::now() + PATIENCE;
        while self
            .client
            .execute(uncovered, arguments.clone())
            .await
            .unwrap()
            != Value::Bool(true)
        {
            assert!(
                tokio::time::Instant::now() < deadline,
                "the element to click is still covered after {PATIENCE:?}"
            );
            tokio::time::sleep(Duration::from_millis(100)).await;
        }
        element.click().await.unwrap();
    }

    /// In a tool's frame, scrolls the app's page (the box the frame scrolls in, the page itself)
    /// until `element` is in the middle of the window, as a user scrolls the panel to what they
    /// are about to click. WebKit's `scrollIntoView` in a cross-origin frame scrolls that frame's
    /// own document only, never the boxes of the page around it, which Chromium and Firefox
    /// scroll too; and WebKitWebDriver then clicks where the element would be, outside the
    /// window, and answers that it clicked: the frame hears nothing. Nothing to do on the app's
    /// page.
    async fn scroll_frame_to(&self, element: &Element) {
        let Some(css) = self.frame.lock().unwrap().clone() else {
            return;
        };
        let middle = self
            .client
            .execute(
                "const r = arguments[0].getBoundingClientRect(); return r.top + r.height / 2;",
                vec![serde_json::to_value(element).unwrap()],
            )
            .await
            .unwrap();
        self.client.enter_frame(None).await.unwrap();
        // From the frame up, each box that scrolls brings the point to its own middle; the
        // window last.
        self.client
            .execute(
                "const frame = document.querySelector(arguments[0]);
                 let y = frame.getBoundingClientRect().top + frame.clientTop + arguments[1];
                 for (let box = frame.parentElement; box; box = box.parentElement) {
                   if (!/auto|scroll/.test(getComputedStyle(box).overflowY)
                       || box.scrollHeight <= box.clientHeight) continue;
                   const before = box.scrollTop;
                   box.scrollTop += y - (box.getBoundingClientRect().top + box.clientTop
                     + box.clientHeight / 2);
                   y -= box.scrollTop - before;
                 }
                 window.scrollBy(0, y - window.innerHeight / 2);",
                vec![Value::String(css.clone()), middle],
            )
            .await
            .unwrap();
        self.find(&css).await.enter_frame().await.unwrap();
    }

    /// Types `text` into `field`, an input in a tool's frame, as a user would: in WebKit, after a
    /// click on it. WebKit refuses a script's `focus()` in a cross-origin frame the user has not
    /// touched yet (<https://bugs.webkit.org/show_bug.cgi?id=294296>), and WebKitWebDriver focuses
    /// the field by script before it types, so a tool's field it is sent keys first answers
    /// "Element is not focusable"; the click is the user's touch, and the frame's fields then take
    /// focus. (Chromium and Firefox focus the field for `WebDriver` whatever the frame's origin.)
    pub(crate) async fn type_into(&self, field: &Element, text: &str) {
        if Engine::current() == Engine::WebKit {
            // A tap that lands while the frame is still settling (its panel scrolled a moment
            // ago) may not focus the field; a user taps again until the caret is there.
            let deadline = tokio::time::Instant::now() + PATIENCE;
            loop {
                self.click(field).await;
                let focused = self
                    .client
                    .execute(
                        "return document.activeElement === arguments[0];",
                        vec![serde_json::to_value(field).unwrap()],
                    )
                    .await
                    .unwrap();
                if focused == Value::Bool(true) {
                    break;
                }
                assert!(
                    tokio::time::Instant::now() < deadline,
                    "the field did not take focus from a click within {PATIENCE:?}"
                );
                tokio::time::sleep(Duration::from_millis(200)).await;
            }
        }
        field.send_keys(text).await.unwrap();
    }

    /// The text of the element `css`.
    pub(crate) async fn text(&self, css: &str) -> String {
        self.find(css).await.text().await.unwrap()
    }

    /// Works inside the frame `css` (a tool's iframe on the app's page) until
    /// [`Browser::leave_frame`].
    pub(crate) async fn enter_frame(&self, css: &str) {
        let frame = self.find(css).await;
        frame.enter_frame().await.unwrap();
        *self.frame.lock().unwrap() = Some(css.to_owned());
    }

    /// Back to the app's page from a frame.
    pub(crate) async fn leave_frame(&self) {
        *self.frame.lock().unwrap() = None;
        self.client.enter_frame(None).await.unwrap();
    }

    /// When `error` says that the driver no longer knows the frame the test works in, enters it
    /// again and says so. WebKitWebDriver forgets it whenever the app's page changes its URL, a
    /// change within the page included (`history.pushState`, a new `#/` route, as when a tool
    /// asks the app to open a quote): the frame and its document stay as they were, but the
    /// session's next command answers "no such window". Chromium and Firefox keep working in the
    /// frame, as `WebDriver` has it, and never answer that inside one.
    async fn frame_lost(&self, error: &CmdError) -> bool {
        if !error.is_no_such_window() {
            return false;
        }
        let Some(css) = self.frame.lock().unwrap().clone() else {
            return false;
        };
        self.client.enter_frame(None).await.unwrap();
        self.find(&css).await.enter_frame().await.unwrap();
        true
    }

    /// Dismisses the app's toasts with their close buttons, as a user would, and waits until
    /// they are gone: a toast a test waits for afterwards is then a new one, not one left from
    /// an earlier step.
    pub(crate) async fn dismiss_toasts(&self) {
        self.client
            .execute(
                "document.querySelectorAll('.toast .toast-close').forEach((button) => button.click());",
                vec![],
            )
            .await
            .unwrap();
        self.until(
            "the toasts dismissed",
            "document.querySelector('.toast') === null",
        )
        .await;
    }

    /// Waits until `script` (a JavaScript expression) is true in the page. A script that throws
    /// (an element the page has not made yet) counts as not true yet; the last error is in the
    /// message when the time is up.
    pub(crate) async fn until(&self, what: &str, script: &str) {
        let deadline = tokio::time::Instant::now() + PATIENCE;
        loop {
            let last_error = match self
                .client
                .execute(&format!("return Boolean({script});"), vec![])
                .await
            {
                Ok(Value::Bool(true)) => return,
                Ok(_) => None,
                // Entered again if the driver lost the frame; tried again after the pause.
                Err(error) => {
                    self.frame_lost(&error).await;
                    Some(error.to_string())
                }
            };
            assert!(
                tokio::time::Instant::now() < deadline,
                "{what}: `{script}` not true within {PATIENCE:?}{}",
                last_error.map_or_else(String::new, |error| format!(" (it threw: {error})"))
            );
            tokio::time::sleep(Duration::from_millis(100)).await;
        }
    }

    /// Runs `body` (the statements of an async function) in the current page or frame; what it
    /// returns, or `{thrown: {code, message}}` when it throws.
    pub(crate) async fn run(&self, body: &str) -> Value {
        let script = format!(
            "const done = arguments[arguments.length - 1];
             (async () => {{ {body} }})().then(done, (e) => done({{ thrown: {{ code: e && e.code, message: String(e && e.message) }} }}));"
        );
        match self.client.execute_async(&script, vec![]).await {
            Err(error) if self.frame_lost(&error).await => {
                self.client.execute_async(&script, vec![]).await.unwrap()
            }
            answer => answer.unwrap(),
        }
    }

    /// Saves a screenshot of the window as `<name>.png` (`name` may name folders too:
    /// `mobile/390x844/quotes`).
    pub(crate) async fn screenshot(&self, name: &str) {
        let png = self.client.screenshot().await.unwrap();
        let path = screenshots().join(format!("{name}.png"));
        std::fs::create_dir_all(path.parent().unwrap()).unwrap();
        std::fs::write(path, png).unwrap();
    }

    /// Ends the session.
    pub(crate) async fn close(mut self) {
        self.session = None;
        self.client.clone().close().await.unwrap();
    }
}

impl Drop for Browser {
    /// Ends a session that a failed test left open. The test's runtime is going away with the
    /// panic, so this is a blocking `DELETE /session/{id}`, and it waits for the answer, which
    /// comes once the browser has quit.
    fn drop(&mut self) {
        let Some(session) = self.session.take() else {
            return;
        };
        let Some(address) = self.webdriver.strip_prefix("http://") else {
            return;
        };
        let Ok(mut stream) = TcpStream::connect(address) else {
            return;
        };
        let _ = stream.set_read_timeout(Some(Duration::from_secs(60)));
        let request = format!(
            "DELETE /session/{session} HTTP/1.1\r\nHost: {address}\r\nConnection: close\r\n\r\n"
        );
        // The driver answers once the session is gone; the first bytes of the answer will do
        // (chromedriver keeps the connection open after it, whatever the request asked).
        if stream.write_all(request.as_bytes()).is_ok() {
            let _ = stream.read(&mut [0; 1024]);
        }
    }
}
