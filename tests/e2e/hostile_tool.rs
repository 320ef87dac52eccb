//! A hostile tool (`tests/e2e/hostile_tool/`) open in the sidebar while the user works on a quote
//! with the flooring estimator: it tries to read the app's cookies, call the session and REST
//! APIs as the user, navigate the app away, open modal dialogs, and take over the estimator's
//! channel with forged welcomes. Each attempt gets nowhere, the estimator still adds its lines,
//! and every attempt is in the host's debug log.

use std::path::Path;

use serde_json::Value;
use toolbridge_protocol::manifest::ToolManifest;
use toolbridge_store::Store;

use crate::browser::{Browser, Engine, database};
use crate::quote_editor::{estimate, open_first_draft, open_tool};
use crate::signin::sign_in;

/// The hostile tool's slug, so its origin is `http://hostile.tools.localhost:<port>`.
const SLUG: &str = "hostile";

/// The files of the hostile tool, installed straight into the server's database (what an
/// Admin's upload would do).
const FILES: [&str; 3] = ["manifest.json", "index.html", "hostile.js"];

async fn install_hostile_tool() {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("e2e/hostile_tool");
    let files: Vec<(&str, Vec<u8>)> = FILES
        .iter()
        .map(|name| (*name, std::fs::read(dir.join(name)).unwrap()))
        .collect();
    let manifest: ToolManifest = serde_json::from_slice(&files[0].1).unwrap();
    let files: Vec<(&str, &[u8])> = files
        .iter()
        .map(|(name, bytes)| (*name, bytes.as_slice()))
        .collect();
    let store = Store::open(&database()).await.unwrap();
    store.install_tool(SLUG, &manifest, &files).await.unwrap();
    store.close().await;
}

/// The host's debug log, read from the app's own `Host`.
async fn debug_log(browser: &Browser) -> Vec<Value> {
    if Engine::current() == Engine::Firefox {
        return debug_panel(browser).await;
    }
    let log = browser
        .client
        .execute_async(
            "const done = arguments[arguments.length - 1];\
             import('/js/app.js').then((m) => done(m.app.host.debugLog()), (e) => done(String(e)));",
            vec![],
        )
        .await
        .unwrap();
    log.as_array()
        .unwrap_or_else(|| panic!("no debug log: {log}"))
        .clone()
}

/// The host's refused attempts as the app's debug panel lists them (it hears each from the
/// host's `onBlocked`), as debug log entries. For Firefox, which runs `WebDriver` scripts in a
/// sandbox with a module map of its own: `import('/js/app.js')` there makes a second app, whose
/// `host` is null, and the page's Content-Security-Policy refuses any way into the page's own.
async fn debug_panel(browser: &Browser) -> Vec<Value> {
    browser.find("#debug-toggle").await.click().await.unwrap();
    browser.find("#debug-panel:not([hidden])").await;
    let log = browser
        .client
        .execute(
            "return [...document.querySelectorAll('#debug-rows tr')]\
               .map((row) => row.querySelectorAll('td'))\
               .filter((cells) => cells[4].querySelector('.badge').textContent === 'BLOCKED')\
               .map((cells) => ({\
                 kind: 'blocked',\
                 tool: cells[1].textContent,\
                 what: cells[2].textContent.replace(/^refused: /, ''),\
                 detail: cells[4].querySelector('.debug-message')?.textContent.slice(1) ?? '',\
               }));",
            vec![],
        )
        .await
        .unwrap();
    log.as_array()
        .unwrap_or_else(|| panic!("no debug panel: {log}"))
        .clone()
}

/// The log's `blocked` entries for `tool` of kind `what`: their details.
fn blocked(log: &[Value], tool: &str, what: &str) -> Vec<String> {
    log.iter()
        .filter(|e| e["kind"] == "blocked" && e["tool"] == tool && e["what"] == what)
        .map(|e| e["detail"].as_str().unwrap().to_owned())
        .collect()
}

#[tokio::test]
async fn a_hostile_tool_gets_nowhere_and_every_attempt_is_in_the_host_debug_log() {
    install_hostile_tool().await;
    let browser = Browser::open().await;
    sign_in(&browser, "office@harbour.test", "Olivia Office").await;

    // The hostile tool opens in the sidebar and stays open beside the quote editor.
    browser.go(&format!("/#/tools/{SLUG}")).await;
    browser.find("#sidebar-frame iframe").await;
    browser
        .client
        .execute("location.hash = '#/quotes';", vec![])
        .await
        .unwrap();
    open_first_draft(&browser).await;
    let quote_url = browser.client.current_url().await.unwrap();
    open_tool(&browser, "Flooring estimator").await;
    // The estimator still adds its lines through its own channel.
    estimate(&browser, &[("Hall", "2", "2", "OAK-01")]).await;
    browser
        .until(
            "the estimator's line in the editor",
            "document.querySelector('.lines-table')?.textContent.includes('Hall')",
        )
        .await;

    browser.enter_frame("#sidebar-frame iframe").await;
    browser
        .until(
            "the hostile tool's requests settled",
            "(r => r.session && r.me && r.forgedWelcomes > 0)(JSON.parse(document.getElementById('results').textContent))",
        )
        .await;
    let results: Value = serde_json::from_str(&browser.text("#results").await).unwrap();
    browser.leave_frame().await;
    browser.screenshot("hostile-tool").await;

    // Cookies: the frame's own jar has no session, and the app's document is out of reach.
    let cookie = results["cookie"].as_str().unwrap();
    assert!(!cookie.contains("tb_session"), "{results}");
    assert!(results.get("parentCookie").is_none(), "{results}");
    // The session and REST APIs as the user: refused before an answer is readable.
    assert_eq!(results["session"]["error"], "TypeError", "{results}");
    assert_eq!(results["me"]["error"], "TypeError", "{results}");
    // The app's window stays where it was.
    assert!(results.get("navigated").is_none(), "{results}");
    assert_eq!(browser.client.current_url().await.unwrap(), quote_url);
    // Dialogs answer at once and show nothing.
    assert_eq!(results["alert"], "undefined", "{results}");
    assert_eq!(results["confirm"], false, "{results}");
    // Forged welcomes went out, and no call of the estimator ever reached the forger.
    assert!(results["forgedWelcomes"].as_u64().unwrap() > 0, "{results}");
    assert!(results.get("callsCaptured").is_none(), "{results}");

    let log = debug_log(&browser).await;
    let modal = blocked(&log, SLUG, "modal");
    assert!(
        modal
            .iter()
            .any(|d| d.starts_with("alert(): Your session expired"))
            && modal
                .iter()
                .any(|d| d.starts_with("confirm(): Delete every quote?")),
        "{modal:?}"
    );
    let refused = blocked(&log, SLUG, "securityError");
    assert!(
        refused.iter().any(|d| d.contains("cross-origin")),
        "reading the app's document: {refused:?}"
    );
    // Chromium's message names the navigation; Firefox and WebKit give their generic one for a
    // sandboxed frame's navigation of the app's window.
    let navigation = match Engine::current() {
        Engine::Chromium => "navigate",
        Engine::Firefox | Engine::WebKit => "The operation is insecure",
    };
    assert!(
        refused.iter().any(|d| d.contains(navigation)),
        "navigating the app's window: {refused:?}"
    );
    let policy = blocked(&log, SLUG, "policy");
    for path in ["/api/session", "/api/v1/me"] {
        assert!(
            policy
                .iter()
                .any(|d| d.starts_with("connect-src") && d.contains(path)),
            "{path}: {policy:?}"
        );
    }
    let forged = blocked(&log, "flooring", "forgedWelcome");
    assert!(
        forged
            .iter()
            .any(|d| d.starts_with("from http://hostile.tools.localhost:")),
        "{forged:?}"
    );
    browser.close().await;
}
