//! A network that drops: nothing a user adds to a quote is lost. The tests stop a server of their
//! own while a page has unsaved lines (to the browser, a server that refuses connections is a
//! network that went away) and start it again on the same port and database.
//!
//! - A save while the server is gone fails, and the page says it is offline and how many changes
//!   wait. The tab is closed; when the server is back, the quote opened again offers the lines back
//!   as unsaved, the tool reads them as the user left them, and one save lands them once.
//! - While the server is away the tool hears so, its calls that need the server fail at once
//!   with `OFFLINE`, and it still adds lines; the save that waits goes by itself when the server
//!   is back, and the tool hears that too.
//! - A second browser that saved the same quote meanwhile makes the first one's save a conflict:
//!   both versions are shown, nothing is overwritten, and the user chooses. A send from the older
//!   copy is refused the same way: nothing is sent until the user has chosen.
//! - Reloading keeps the changes; signing out clears what the device kept, and another user of
//!   the same browser is never offered them.

use std::path::PathBuf;

use serde_json::Value;
use toolbridge_e2e::server::{ReservedPort, ServerOptions, ToolbridgeServer};
use toolbridge_e2e::webdriver::{self, WebDriver, driver_from_env};

use crate::browser::{Browser, quote_on, setting};
use crate::quote_editor::{estimate, open_first_draft, open_tool};
use crate::signin::sign_in;

/// The estimator's frame inside the editor's tool panel.
const TOOL_FRAME: &str = ".tool-panel iframe";

/// A demo server of the test's own, which it can stop and start again where the pages look for it.
struct OwnServer {
    server: Option<ToolbridgeServer>,
    options: ServerOptions,
    port: u16,
    db: PathBuf,
    starts: u32,
}

impl OwnServer {
    /// A fresh demo server for test `name`.
    fn start(name: &str) -> Self {
        let binary = PathBuf::from(setting("TOOLBRIDGE_E2E_BIN"));
        let dir = std::env::temp_dir().join(format!(
            "offline-{name}-{}",
            setting("TOOLBRIDGE_E2E_BROWSER")
        ));
        let options = ServerOptions::new("offline", dir, 1000);
        let server = ToolbridgeServer::start(&binary, &options).unwrap();
        let port = server.port();
        let db = PathBuf::from(server.db());
        Self {
            server: Some(server),
            options,
            port,
            db,
            starts: 1,
        }
    }

    /// The app's origin.
    fn origin(&self) -> String {
        format!("http://localhost:{}", self.port)
    }

    /// Stops the server: connections to its port are refused until [`OwnServer::resume`].
    fn stop(&mut self) {
        drop(self.server.take());
    }

    /// Starts the server again on the same port and database.
    fn resume(&mut self) {
        self.starts += 1;
        let mut options = self.options.clone();
        options.database = Some(self.db.display().to_string());
        options.log_name = if self.starts == 2 {
            "server-2.log"
        } else {
            "server-3.log"
        };
        let binary = PathBuf::from(setting("TOOLBRIDGE_E2E_BIN"));
        let port = ReservedPort::at(self.port).unwrap();
        self.server = Some(ToolbridgeServer::launch(&binary, &options, port).unwrap());
    }

    /// Has the same user, in a second browser (its own driver: a device of its own), open quote
    /// `id`, add a Landing of vinyl with the estimator and save it; answers the quote as the
    /// server then has it.
    async fn saved_on_another_device(&self, id: &str) -> Value {
        let engine = webdriver::Browser::named(&setting("TOOLBRIDGE_E2E_BROWSER")).unwrap();
        let driver = WebDriver::start(
            engine,
            &driver_from_env(engine).unwrap(),
            &std::env::temp_dir().join(format!("offline-second-driver-{}", engine.name)),
        )
        .unwrap();
        let second = Browser::open_from(driver.url(), self.origin()).await;
        sign_in(&second, "office@harbour.test", "Olivia Office").await;
        second.go(&format!("/#/quotes/{id}")).await;
        second.find(".lines-table, .empty-lines").await;
        open_tool(&second, "Flooring estimator").await;
        estimate(&second, &[("Landing", "5", "1.2", "VINYL-02")]).await;
        second.find(".dirty:not([hidden])").await;
        second.press("Save").await;
        second
            .until(
                "the second browser's save",
                "document.querySelector('.dirty')?.hidden === true",
            )
            .await;
        second.close().await;
        self.quote(id).await
    }

    /// Quote `id` as the server has it, read over REST with a key of its own.
    async fn quote(&self, id: &str) -> Value {
        let server = self.server.as_ref().expect("the server runs");
        quote_on(server, "offline checks", id).await
    }
}

/// The id of the quote open in the editor.
async fn open_quote_id(browser: &Browser) -> String {
    let url = browser.client.current_url().await.unwrap();
    url.fragment()
        .unwrap()
        .trim_start_matches("/quotes/")
        .to_owned()
}

/// The descriptions of a quote's lines, as the server has them.
fn descriptions(quote: &Value) -> Vec<String> {
    quote["lines"]
        .as_array()
        .unwrap()
        .iter()
        .map(|line| line["description"].as_str().unwrap().to_owned())
        .collect()
}

/// How many of `quote`'s lines are in section `section`.
fn in_section(quote: &Value, section: &str) -> usize {
    quote["lines"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|line| line["section"] == section)
        .count()
}

/// The number of line rows in the editor.
async fn rows(browser: &Browser) -> u64 {
    browser
        .client
        .execute(
            "return document.querySelectorAll('.lines-table tr.line').length;",
            vec![],
        )
        .await
        .unwrap()
        .as_u64()
        .unwrap()
}

/// Waits for the editor to show `count` line rows.
async fn until_rows(browser: &Browser, what: &str, count: u64) {
    browser
        .until(
            what,
            &format!("document.querySelectorAll('.lines-table tr.line').length === {count}"),
        )
        .await;
}

/// Signs in as the office user, opens the first Draft, and has the estimator add a room of
/// `sku` in section `room`; answers the quote's id and how many rows it had before.
async fn lines_from_the_estimator(browser: &Browser, room: &str, sku: &str) -> (String, u64) {
    sign_in(browser, "office@harbour.test", "Olivia Office").await;
    open_first_draft(browser).await;
    let before = rows(browser).await;
    open_tool(browser, "Flooring estimator").await;
    estimate(browser, &[(room, "4", "3.5", sku)]).await;
    browser.find(".dirty:not([hidden])").await;
    (open_quote_id(browser).await, before)
}

/// Records kept in the page's `IndexedDB` for unsaved changes.
async fn kept_records(browser: &Browser) -> u64 {
    browser
        .run(
            "return await new Promise((resolve, reject) => {
               const open = indexedDB.open('toolbridge', 1);
               open.onerror = () => reject(open.error);
               open.onsuccess = () => {
                 const db = open.result;
                 const count = db.transaction('unsaved').objectStore('unsaved').count();
                 count.onsuccess = () => { resolve(count.result); db.close(); };
                 count.onerror = () => reject(count.error);
               };
             });",
        )
        .await
        .as_u64()
        .unwrap_or_else(|| panic!("no count of kept records"))
}

#[tokio::test]
async fn lines_kept_through_an_outage_and_a_closed_tab_come_back_unsaved_and_save_once() {
    let mut server = OwnServer::start("outage");
    let browser = Browser::open_on(server.origin()).await;
    // OAK-01 brings its board and two task lines (installation, underlay).
    let (id, before) = lines_from_the_estimator(&browser, "Kitchen", "OAK-01").await;
    until_rows(&browser, "the estimator's lines", before + 3).await;
    let saved_before = server.quote(&id).await;

    server.stop();
    browser.press("Save").await;
    browser
        .until(
            "the page says it is offline, with the one change waiting",
            "document.querySelector('.offline-note')?.hidden === false \
             && document.querySelector('.offline-note').dataset.pending === '1' \
             && document.getElementById('offline-badge')?.hidden === false",
        )
        .await;
    let note = browser.text(".offline-note").await;
    assert!(
        note.contains("offline") && note.contains("1 change"),
        "{note}"
    );
    browser.screenshot("offline/save-waits").await;
    assert_eq!(
        rows(&browser).await,
        before + 3,
        "the lines stay on the page"
    );

    // The tab is closed while the server is away; it comes back; the quote is opened again.
    browser.client.goto("about:blank").await.unwrap();
    server.resume();
    browser.go(&format!("/#/quotes/{id}")).await;
    browser
        .until(
            "the kept lines offered back as unsaved",
            "document.querySelector('.restored-note')?.hidden === false \
             && document.querySelector('.dirty')?.hidden === false",
        )
        .await;
    until_rows(&browser, "the kept lines", before + 3).await;
    let note = browser.text(".restored-note").await;
    assert!(note.contains("1 change not saved yet"), "{note}");
    browser.screenshot("offline/offered-back").await;
    assert_eq!(
        server.quote(&id).await,
        saved_before,
        "nothing reached the server"
    );

    // The tool reads the quote as the user left it, once its bridge.js has run.
    open_tool(&browser, "Flooring estimator").await;
    browser.enter_frame(TOOL_FRAME).await;
    browser
        .until(
            "the estimator's bridge",
            "typeof window.bridge === 'object'",
        )
        .await;
    let open = browser
        .run("const q = await bridge.quotes.getOpen(); return { dirty: q.dirty, lines: q.lines.length };")
        .await;
    browser.leave_frame().await;
    assert_eq!(
        (open["dirty"].as_bool(), open["lines"].as_u64()),
        (Some(true), Some(before + 3)),
        "{open}"
    );

    browser.press("Save them").await;
    browser
        .until(
            "the saved quote",
            "document.querySelector('.dirty')?.hidden === true \
             && document.querySelector('.restored-note')?.hidden === true",
        )
        .await;
    let saved = server.quote(&id).await;
    assert_eq!(
        u64::try_from(saved["lines"].as_array().unwrap().len()).unwrap(),
        before + 3,
        "one copy of the lines: {saved}"
    );
    assert_eq!(in_section(&saved, "Kitchen"), 3, "{saved}");
    assert_eq!(kept_records(&browser).await, 0, "nothing kept once saved");
    browser.close().await;
}

#[tokio::test]
async fn a_save_that_waits_for_the_server_goes_by_itself_when_it_is_back() {
    let mut server = OwnServer::start("retry");
    let browser = Browser::open_on(server.origin()).await;
    let (id, before) = lines_from_the_estimator(&browser, "Hall", "VINYL-02").await;
    until_rows(&browser, "the estimator's lines", before + 2).await;
    // The tool listens for the server going and coming back.
    browser.enter_frame(TOOL_FRAME).await;
    let supported = browser
        .run(
            "window.heard = []; \
             bridge.on('connectivity.changed', (event) => window.heard.push(event.online)); \
             return bridge.supports('connectivity');",
        )
        .await;
    assert_eq!(supported, Value::Bool(true));
    browser.leave_frame().await;

    server.stop();
    browser.press("Save").await;
    browser
        .find(".offline-note:not([hidden])[data-pending='1']")
        .await;
    browser.enter_frame(TOOL_FRAME).await;
    browser
        .until(
            "the tool heard that the server is out of reach",
            "JSON.stringify(window.heard) === '[false]'",
        )
        .await;
    // A call that needs the server fails at once, unsent; adding lines works on.
    let listed = browser
        .run("await bridge.products.list(); return 'answered';")
        .await;
    assert_eq!(listed["thrown"]["code"], "OFFLINE", "{listed}");
    browser.leave_frame().await;
    estimate(&browser, &[("Study", "3", "3", "OAK-01")]).await;
    until_rows(&browser, "the lines added offline", before + 5).await;
    browser
        .find(".offline-note:not([hidden])[data-pending='2']")
        .await;

    server.resume();
    // The host looks for the server every 5 s while it cannot reach it.
    browser
        .until(
            "the waiting save landed by itself",
            "document.querySelector('.dirty')?.hidden === true \
             && document.querySelector('.offline-note')?.hidden === true \
             && document.getElementById('offline-badge')?.hidden === true",
        )
        .await;
    let toasts = browser.text(".toasts").await;
    assert!(toasts.contains("the connection is back"), "{toasts}");
    let saved = server.quote(&id).await;
    assert_eq!(
        (in_section(&saved, "Hall"), in_section(&saved, "Study")),
        (2, 3),
        "saved once, with what was added offline: {:?}",
        descriptions(&saved)
    );
    browser.enter_frame(TOOL_FRAME).await;
    browser
        .until(
            "the tool heard that the server is back",
            "JSON.stringify(window.heard) === '[false,true]'",
        )
        .await;
    browser.leave_frame().await;
    browser.close().await;
}

#[tokio::test]
async fn a_quote_saved_in_a_second_browser_meanwhile_is_a_conflict_the_user_settles() {
    let server = OwnServer::start("conflict");

    let first = Browser::open_on(server.origin()).await;
    let (id, _) = lines_from_the_estimator(&first, "Kitchen", "OAK-01").await;

    // The same user on another device saves the quote with other lines.
    let theirs = server.saved_on_another_device(&id).await;
    assert_eq!(in_section(&theirs, "Landing"), 2, "{theirs}");

    first.press("Save").await;
    first
        .until(
            "both versions shown",
            "document.querySelector('.conflict')?.hidden === false",
        )
        .await;
    let panel = first.text(".conflict").await;
    assert!(
        panel.contains("Yours, not saved") && panel.contains("Saved on the server"),
        "{panel}"
    );
    assert!(
        panel.contains("Oak") && panel.contains("Vinyl"),
        "each version's lines: {panel}"
    );
    first.screenshot("offline/conflict").await;
    assert_eq!(
        server.quote(&id).await,
        theirs,
        "nothing overwritten unasked"
    );
    first.find(".dirty:not([hidden])").await;

    first.press("Keep mine").await;
    first
        .until(
            "the user's version saved",
            "document.querySelector('.dirty')?.hidden === true \
             && document.querySelector('.conflict')?.hidden === true",
        )
        .await;
    let mine = server.quote(&id).await;
    assert_eq!(
        (in_section(&mine, "Kitchen"), in_section(&mine, "Landing")),
        (3, 0),
        "saved over theirs, as the user chose: {:?}",
        descriptions(&mine)
    );
    first.close().await;
}

#[tokio::test]
async fn a_send_over_a_version_saved_elsewhere_sends_nothing_and_shows_both() {
    let server = OwnServer::start("send-conflict");

    // The first browser saves its lines: nothing is unsaved there.
    let first = Browser::open_on(server.origin()).await;
    let (id, _) = lines_from_the_estimator(&first, "Kitchen", "OAK-01").await;
    first.press("Save").await;
    first
        .until(
            "the first browser's save",
            "document.querySelector('.dirty')?.hidden === true",
        )
        .await;

    // The same user on another device then saves other lines.
    let theirs = server.saved_on_another_device(&id).await;

    // Sending from the first browser, whose copy is older, sends nothing and shows both.
    first.press("Send Quote").await;
    first
        .find("#dialog[open] #dialog-buttons button[value=send]")
        .await
        .click()
        .await
        .unwrap();
    first
        .until(
            "both versions shown",
            "document.querySelector('.conflict')?.hidden === false",
        )
        .await;
    let panel = first.text(".conflict").await;
    assert!(
        panel.contains("it was not sent")
            && panel.contains("Yours, as you opened it")
            && panel.contains("Saved on the server"),
        "{panel}"
    );
    assert_eq!(
        server.quote(&id).await,
        theirs,
        "nothing sent or overwritten unasked"
    );

    // The user takes the saved version, and sends that.
    first.press("Use the saved version").await;
    first
        .until(
            "the saved version open",
            "document.querySelector('.conflict')?.hidden === true \
             && [...document.querySelectorAll('.lines-table tr.line')] \
                  .some((row) => row.textContent.includes('Vinyl'))",
        )
        .await;
    crate::quote_editor::send_quote(&first).await;
    let sent = server.quote(&id).await;
    assert_eq!(sent["status"], "Sent", "{sent}");
    assert_eq!(
        (in_section(&sent, "Kitchen"), in_section(&sent, "Landing")),
        (3, 2),
        "the version sent is the one the user chose (theirs, with the Landing): {:?}",
        descriptions(&sent)
    );
    first.close().await;
}

#[tokio::test]
async fn a_reload_keeps_the_changes_and_signing_out_clears_them_for_the_next_user() {
    let server = OwnServer::start("reload");
    let browser = Browser::open_on(server.origin()).await;
    let (id, before) = lines_from_the_estimator(&browser, "Study", "OAK-01").await;
    until_rows(&browser, "the estimator's lines", before + 3).await;

    browser.client.refresh().await.unwrap();
    browser.find(".restored-note:not([hidden])").await;
    until_rows(&browser, "the kept lines after a reload", before + 3).await;
    assert_eq!(kept_records(&browser).await, 1);

    // Signing out drops them (after the app asks, as they are unsaved).
    let account = browser.find("#account-toggle").await;
    if account.is_displayed().await.unwrap() {
        browser.click(&account).await;
    }
    browser.press("Sign out").await;
    browser
        .find("#dialog[open] #dialog-buttons button[value=discard]")
        .await
        .click()
        .await
        .unwrap();
    browser.find("#signin-email").await;
    assert_eq!(kept_records(&browser).await, 0, "signing out clears them");

    // Another user of the same browser opens the quote: nothing of the first user's is offered.
    sign_in(&browser, "admin@harbour.test", "Alex Admin").await;
    browser.go(&format!("/#/quotes/{id}")).await;
    browser.find(".lines-table, .empty-lines").await;
    until_rows(&browser, "the quote as saved", before).await;
    assert_eq!(
        browser
            .client
            .execute(
                "return document.querySelector('.restored-note')?.hidden;",
                vec![]
            )
            .await
            .unwrap(),
        Value::Bool(true)
    );
    browser.close().await;
}
