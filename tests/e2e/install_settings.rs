//! A tool's install settings and outside origins, from the upload to the open tool: an admin
//! uploads a bundle that declares settings and one origin it talks to, sees both in Settings →
//! Tools, sets the values, and the tool reads them with `bridge.settings.get()`; a later change
//! reaches the open tool as `settings.changed`. The tool's `fetch` to the declared origin passes its
//! origin's policy, and one to any other origin is refused and reported as `policy`.

use std::io::Write;

use fantoccini::Locator;

use crate::browser::Browser;
use crate::signin::sign_in;

const MANIFEST: &str = r#"{
  "name": "Vendor prices",
  "shortName": "Vendor prices",
  "type": "standalone",
  "version": "1.0.0",
  "description": "Reads its settings and asks its vendor for prices.",
  "entry": "index.html",
  "settings": [
    {"key": "markup", "label": "Markup (%)", "type": "number", "default": 10},
    {"key": "region", "label": "Region", "type": "select", "options": ["North", "South"], "default": "North"}
  ],
  "permissions": {"connect": ["https://api.vendor.example"]}
}"#;

const PAGE: &str = r#"<!doctype html>
<meta charset="utf-8">
<script src="/sdk/bridge.js"></script>
<script src="app.js" defer></script>
<p>Supports settings: <span id="supports">?</span></p>
<p>Settings: <span id="settings">loading</span></p>
<p>Changes heard: <span id="changes">0</span></p>
<p>Requests: <span id="requests">not yet</span></p>
"#;

const SCRIPT: &str = r#"const text = (id, value) => { document.getElementById(id).textContent = value; };
const show = (settings) => text("settings", Object.keys(settings).sort().map((key) => `${key}=${settings[key]}`).join(" "));
let changes = 0;
bridge.on("settings.changed", ({ settings }) => { changes += 1; text("changes", String(changes)); show(settings); });
bridge.ready().then(async () => {
  text("supports", String(bridge.supports("settings.get")));
  show(await bridge.settings.get());
  // The declared origin first: the policy lets it through (the machine may have no route to it),
  // so only the second is reported.
  for (const url of ["https://api.vendor.example/prices", "https://elsewhere.example/prices"]) {
    try { await fetch(url); } catch { /* refused or unreachable */ }
  }
  text("requests", "done");
});
"#;

fn bundle(dir: &std::path::Path) -> std::path::PathBuf {
    let path = dir.join("vendor-prices.zip");
    let mut zip = zip::ZipWriter::new(std::fs::File::create(&path).unwrap());
    let options = zip::write::SimpleFileOptions::default();
    for (name, body) in [
        ("manifest.json", MANIFEST),
        ("index.html", PAGE),
        ("app.js", SCRIPT),
    ] {
        zip.start_file(name, options).unwrap();
        zip.write_all(body.as_bytes()).unwrap();
    }
    zip.finish().unwrap();
    path
}

/// Opens the tool's settings form on its row and saves `markup` and `region`.
async fn set_settings(browser: &Browser, markup: &str, region: &str) {
    browser.go("/#/settings/tools").await;
    browser
        .click(
            &browser
                .find("button[aria-controls=settings-vendor-prices]")
                .await,
        )
        .await;
    let input = browser.find("#setting-vendor-prices-markup").await;
    input.clear().await.unwrap();
    input.send_keys(markup).await.unwrap();
    browser
        .find("#setting-vendor-prices-region")
        .await
        .select_by_value(region)
        .await
        .unwrap();
    browser.press("Save settings").await;
    browser
        .until(
            "the saved toast",
            "[...document.querySelectorAll('.toast')].some((t) => t.textContent.includes('Settings of Vendor prices saved'))",
        )
        .await;
}

#[tokio::test]
async fn settings_go_from_upload_to_the_open_tool_and_only_declared_origins_are_reachable() {
    let dir = tempfile::tempdir().unwrap();
    let path = bundle(dir.path());

    let browser = Browser::open().await;
    sign_in(&browser, "admin@harbour.test", "Alex Admin").await;
    browser.go("/#/settings/tools").await;
    browser
        .find("#bundle-file")
        .await
        .send_keys(path.to_str().unwrap())
        .await
        .unwrap();
    browser.press("Upload and install").await;
    browser
        .until(
            "the upload's result",
            "document.querySelector('.upload-result .success-text')",
        )
        .await;
    let result = browser.text(".upload-result").await;
    assert!(
        result.contains("talks to https://api.vendor.example"),
        "{result}"
    );
    assert!(result.contains("2 settings"), "{result}");
    browser
        .until(
            "the tool's row",
            "document.querySelector('button[aria-controls=settings-vendor-prices]')",
        )
        .await;
    let row = browser.text("#main table").await;
    assert!(row.contains("talks to https://api.vendor.example"), "{row}");

    set_settings(&browser, "25", "South").await;
    browser.screenshot("tool-settings").await;

    browser.go("/#/tools").await;
    browser.press("Open Vendor prices").await;
    browser.enter_frame("#sidebar-frame iframe").await;
    browser
        .until(
            "the tool's settings",
            "document.getElementById('settings').textContent === 'markup=25 region=South'",
        )
        .await;
    assert_eq!(browser.text("#supports").await, "true");
    browser
        .until(
            "the tool's requests",
            "document.getElementById('requests').textContent === 'done'",
        )
        .await;
    browser.leave_frame().await;

    // The origin it did not declare is refused by its policy, and the page hears of it; the one it
    // declared is not.
    browser.click(&browser.find("#debug-toggle").await).await;
    browser
        .until(
            "the refused request in the debug panel",
            "document.getElementById('debug-rows').textContent.includes('elsewhere.example')",
        )
        .await;
    let rows = browser
        .client
        .find_all(Locator::Css("#debug-rows tr"))
        .await
        .unwrap();
    let mut refused = Vec::new();
    for row in rows {
        let text = row.text().await.unwrap();
        if text.contains("BLOCKED") {
            refused.push(text);
        }
    }
    assert!(
        refused
            .iter()
            .any(|row| row.contains("refused: policy") && row.contains("https://elsewhere.example")),
        "{refused:?}"
    );
    assert!(
        !refused.iter().any(|row| row.contains("api.vendor.example")),
        "the declared origin was refused: {refused:?}"
    );
    browser.click(&browser.find("#debug-toggle").await).await;

    // A change while the tool is open reaches it as settings.changed (the sidebar stays open
    // across pages).
    set_settings(&browser, "30", "North").await;
    browser.enter_frame("#sidebar-frame iframe").await;
    browser
        .until(
            "the changed settings in the open tool",
            "document.getElementById('settings').textContent === 'markup=30 region=North'",
        )
        .await;
    assert_eq!(browser.text("#changes").await, "1");
    browser.close().await;
}
