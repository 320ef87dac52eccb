//! The book's tour of the app (docs/): its screenshots, taken here from the real app so that they
//! follow it. Each is taken in a 1280 × 800 viewport once what it shows is on the page, and
//! checked to be a PNG of that size in both browsers; `with-backends e2e` names a folder for them
//! (`TOOLBRIDGE_E2E_DOCS_SCREENSHOTS`, `target/docs/screenshots/`) in Chromium only, so that the
//! book's pictures all come from one engine. `docs/src/images/` holds the committed copies the
//! book falls back on: one for each name in [`SHOTS`], and no other `tour-*.png`.

use std::path::{Path, PathBuf};

use fantoccini::Locator;
use fantoccini::actions::{InputSource, MouseActions, PointerAction};

use toolbridge_e2e::server::{ServerOptions, ToolbridgeServer};

use crate::browser::{Browser, setting};
use crate::quote_editor::{estimate, open_tool};
use crate::signin::sign_in;

/// The Quotes list, as the demo office user sees it after signing in.
const QUOTES: &str = "tour-quotes";
/// A Draft quote in the editor, the flooring estimator beside its lines and the lines it added.
const EDITOR: &str = "tour-editor-with-tool";
/// Quick quote, a standalone tool, open in the Tools sidebar.
const SIDEBAR: &str = "tour-tools-sidebar";
/// Settings → Tools as an Admin: the installed tools.
const SETTINGS: &str = "tour-settings";
/// The Debug panel listing the bridge calls of the tools used before.
const DEBUG: &str = "tour-debug";

/// Every screenshot of the tour, named as its file in `docs/src/images/` (without `.png`).
const SHOTS: [&str; 5] = [QUOTES, EDITOR, SIDEBAR, SETTINGS, DEBUG];

/// The viewport, and so the screenshots, width × height in CSS pixels (one device pixel each in
/// both headless browsers).
const VIEWPORT: (u32, u32) = (1280, 800);

/// The eight bytes every PNG starts with.
const PNG_SIGNATURE: [u8; 8] = [0x89, b'P', b'N', b'G', b'\r', b'\n', 0x1a, b'\n'];

/// Where the screenshots go: the folder `with-backends e2e` names in Chromium; `None` in Firefox
/// and WebKit, whose runs check the pages and write nothing.
fn docs_screenshots() -> Option<PathBuf> {
    std::env::var_os("TOOLBRIDGE_E2E_DOCS_SCREENSHOTS")
        .filter(|dir| !dir.is_empty())
        .map(PathBuf::from)
}

/// The committed copies the book falls back on.
fn committed_images() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .parent()
        .unwrap()
        .join("docs/src/images")
}

/// (width, height) of a PNG, from its IHDR chunk, which comes first, right after the signature;
/// `what` names it in the messages of a failed check.
fn png_size(png: &[u8], what: &str) -> (u32, u32) {
    assert!(
        png.starts_with(&PNG_SIGNATURE),
        "{what} is not a PNG: it starts with {:02x?}",
        &png[..png.len().min(8)]
    );
    // The chunk: length (4 bytes, 13 for IHDR), type, then width and height, big-endian.
    let chunk = png
        .get(8..24)
        .unwrap_or_else(|| panic!("{what} ends in its header"));
    assert_eq!(&chunk[4..8], b"IHDR", "{what}: no IHDR chunk first");
    let number = |at: usize| u32::from_be_bytes(chunk[at..at + 4].try_into().unwrap());
    (number(8), number(12))
}

/// Sizes the window to 1280 × 800, then grows it by what the browser's own bars take of it, so
/// that the page (and so a screenshot) is 1280 × 800.
async fn fit_viewport(browser: &Browser) {
    let (width, height) = VIEWPORT;
    browser
        .client
        .set_window_rect(0, 0, width, height)
        .await
        .unwrap();
    let inner = browser
        .client
        .execute("return [window.innerWidth, window.innerHeight];", vec![])
        .await
        .unwrap();
    let [inner_width, inner_height] =
        [0, 1].map(|i| u32::try_from(inner[i].as_u64().unwrap()).unwrap());
    browser
        .client
        .set_window_rect(
            0,
            0,
            2 * width - inner_width.min(width),
            2 * height - inner_height.min(height),
        )
        .await
        .unwrap();
    browser
        .until(
            "a 1280 × 800 viewport",
            &format!("window.innerWidth === {width} && window.innerHeight === {height}"),
        )
        .await;
}

/// Moves the pointer off the page's content, then waits until the page has settled: `ready` (a
/// JavaScript expression, what the screenshot is of) is true, the page's fonts and images have
/// loaded, no animation runs (the quotes list's highlight of a changed row), and, unless `toasts`
/// says they belong in the picture, no toast is left (each goes after about 5 seconds).
async fn settle(browser: &Browser, what: &str, ready: &str, toasts: bool) {
    // The pointer stays where the last click left it, and what it is over shows as hovered (a
    // table row, the pressed Debug button): it goes to an empty spot of the header first.
    let pointer = MouseActions::new("tour-pointer".to_owned()).then(PointerAction::MoveTo {
        duration: None,
        x: 600,
        y: 8,
    });
    browser.client.perform_actions(pointer).await.unwrap();
    let no_toasts = if toasts {
        "true"
    } else {
        "document.querySelectorAll('.toast').length === 0"
    };
    browser
        .until(
            what,
            &format!(
                "({ready}) && document.fonts.status === 'loaded' \
                 && [...document.images].every((image) => image.complete) \
                 && document.getAnimations().length === 0 && {no_toasts}"
            ),
        )
        .await;
}

/// Takes the screenshot `name` (one of [`SHOTS`]) and checks it is a 1280 × 800 PNG; in
/// Chromium, writes it as `<name>.png` to the folder `with-backends` names and checks the file.
async fn shoot(browser: &Browser, name: &str) {
    assert!(SHOTS.contains(&name), "{name} is not in SHOTS");
    let png = browser.client.screenshot().await.unwrap();
    assert_eq!(png_size(&png, name), VIEWPORT, "{name}: its size");
    let Some(dir) = docs_screenshots() else {
        return;
    };
    let path = dir.join(format!("{name}.png"));
    std::fs::create_dir_all(&dir).unwrap();
    std::fs::write(&path, &png).unwrap();
    let written = std::fs::read(&path).unwrap();
    assert_eq!(
        png_size(&written, &path.display().to_string()),
        VIEWPORT,
        "{}: its size",
        path.display()
    );
}

/// The Quotes list after the demo office user signs in.
async fn quotes(browser: &Browser) {
    sign_in(browser, "office@harbour.test", "Olivia Office").await;
    settle(
        browser,
        "the quotes list",
        "document.querySelectorAll('.quotes-table tbody tr').length > 0 \
         && /Page 1 of/.test(document.querySelector('.pager').textContent)",
        false,
    )
    .await;
    shoot(browser, QUOTES).await;
}

/// A new Draft, started from the New quote page with one line as the page suggests, in the
/// editor with the flooring estimator open beside its lines and the rooms it added (2 + 3 lines
/// with the task lines they inject); saved afterwards. A quote of its own, not the list's first
/// Draft: the suites before this one change and send those.
async fn editor_with_tool(browser: &Browser) {
    browser
        .find("a[href='#/quotes/new']")
        .await
        .click()
        .await
        .unwrap();
    browser
        .find("#nq-customer")
        .await
        .select_by(Locator::XPath(
            ".//option[starts-with(normalize-space(), 'Sophie Walker (')]",
        ))
        .await
        .unwrap();
    browser
        .find("#nq-product")
        .await
        .select_by(Locator::XPath(
            ".//option[starts-with(normalize-space(), 'SKIRT-05 ')]",
        ))
        .await
        .unwrap();
    let quantity = browser.find("#nq-qty").await;
    quantity.clear().await.unwrap();
    quantity.send_keys("18").await.unwrap();
    browser.press("Create quote").await;
    browser
        .until(
            "the new Draft in the editor",
            "location.hash.startsWith('#/quotes/') && location.hash !== '#/quotes/new' \
             && document.querySelectorAll('.lines-table tr.line').length === 1",
        )
        .await;

    open_tool(browser, "Flooring estimator").await;
    estimate(
        browser,
        &[
            ("Kitchen", "4", "3.5", "OAK-01"),
            ("Hall", "5", "1.2", "VINYL-02"),
        ],
    )
    .await;
    // The estimator's own page from its top, where it says what it added.
    browser
        .client
        .execute(
            "document.querySelector('.tool-panel .tool-frame').scrollTop = 0; window.scrollTo(0, 0);",
            vec![],
        )
        .await
        .unwrap();
    settle(
        browser,
        "the estimator's lines beside it",
        "document.querySelectorAll('.lines-table tr.line').length === 6 \
         && /Kitchen/.test(document.querySelector('.lines-table').textContent) \
         && /Hall/.test(document.querySelector('.lines-table').textContent) \
         && !document.querySelector('.tool-panel').hidden \
         && /px$/.test(document.querySelector('.tool-panel iframe').style.height) \
         && [...document.querySelectorAll('.toast')].some((toast) => \
            /Flooring estimator added/.test(toast.textContent))",
        true,
    )
    .await;
    // The estimator's page is loaded and has answered (`estimate` waited for that inside it).
    shoot(browser, EDITOR).await;

    browser.press("Save").await;
    browser
        .until(
            "the saved quote",
            "document.querySelector('.dirty')?.hidden === true",
        )
        .await;
}

/// Quick quote, a standalone tool, opened from the Tools page into the sidebar, its catalog
/// loaded.
async fn tools_sidebar(browser: &Browser) {
    browser.go("/#/tools").await;
    browser.press("Open Quick quote").await;
    browser.enter_frame("#sidebar-frame iframe").await;
    browser
        .until(
            "the quick quote's catalog",
            "/products/.test(document.getElementById('catalog-status').textContent) \
             && document.fonts.status === 'loaded'",
        )
        .await;
    browser.leave_frame().await;
    settle(
        browser,
        "Quick quote in the sidebar",
        "!document.getElementById('sidebar').hidden \
         && document.getElementById('sidebar-title').textContent.includes('Quick quote') \
         && document.querySelector('#main h1')?.textContent === 'Tools'",
        false,
    )
    .await;
    shoot(browser, SIDEBAR).await;
}

/// The Debug panel, opened after the tools above have made their calls: it lists them.
async fn debug_panel(browser: &Browser) {
    browser.find("#debug-toggle").await.click().await.unwrap();
    settle(
        browser,
        "the debug panel's bridge calls",
        "!document.getElementById('debug-panel').hidden \
         && document.querySelectorAll('#debug-rows tr').length > 0 \
         && document.getElementById('debug-empty').hidden",
        false,
    )
    .await;
    let calls = browser.text("#debug-rows").await;
    assert!(
        calls.contains("flooring") && calls.contains("quick-quote"),
        "{calls}"
    );
    shoot(browser, DEBUG).await;
}

/// Settings as an Admin: its first tab, API tokens (the keys), loads; the picture is of its
/// Tools tab, the upload form and the installed tools, with the other tabs beside it.
async fn settings(browser: &Browser) {
    sign_in(browser, "admin@harbour.test", "Alex Admin").await;
    browser
        .find("[data-nav=settings]")
        .await
        .click()
        .await
        .unwrap();
    browser.find("#key-name").await;
    browser
        .find(".subnav a[href='#/settings/tools']")
        .await
        .click()
        .await
        .unwrap();
    settle(
        browser,
        "Settings → Tools",
        "document.querySelector('.subnav a[aria-current=page]')?.textContent === 'Tools' \
         && /Quick quote/.test(document.querySelector('.view table.data').textContent) \
         && /Flooring estimator/.test(document.querySelector('.view table.data').textContent)",
        false,
    )
    .await;
    shoot(browser, SETTINGS).await;
}

/// A fresh demo server of the tour's own: the suite's server shows what the other tests left
/// (hostile tools, odd customers, the dev folders), which the book must not.
fn fresh_server() -> ToolbridgeServer {
    let binary = PathBuf::from(setting("TOOLBRIDGE_E2E_BIN"));
    let dir = std::env::temp_dir().join(format!("tour-{}", setting("TOOLBRIDGE_E2E_BROWSER")));
    ToolbridgeServer::start(&binary, &ServerOptions::new("tour", dir, 1000)).unwrap()
}

#[tokio::test]
async fn the_books_tour_of_the_app_in_screenshots() {
    let server = fresh_server();
    let origin = format!("http://localhost:{}", server.port());
    let browser = Browser::open_on(origin.clone()).await;
    fit_viewport(&browser).await;
    quotes(&browser).await;
    editor_with_tool(&browser).await;
    tools_sidebar(&browser).await;
    debug_panel(&browser).await;
    browser.close().await;

    let browser = Browser::open_on(origin).await;
    fit_viewport(&browser).await;
    settings(&browser).await;
    browser.close().await;
}

/// `docs/src/images/` holds a committed copy of each screenshot of the tour and no other
/// `tour-*.png`: a new screenshot cannot be left out, nor a dropped one left behind.
#[test]
fn each_tour_screenshot_has_its_committed_copy_and_no_other() {
    let dir = committed_images();
    let mut committed: Vec<String> = std::fs::read_dir(&dir)
        .unwrap_or_else(|e| panic!("cannot read {}: {e}", dir.display()))
        .map(|entry| entry.unwrap().file_name().to_string_lossy().into_owned())
        .filter(|name| {
            name.starts_with("tour-")
                && Path::new(name)
                    .extension()
                    .is_some_and(|extension| extension.eq_ignore_ascii_case("png"))
        })
        .collect();
    committed.sort();
    let mut expected: Vec<String> = SHOTS.iter().map(|name| format!("{name}.png")).collect();
    expected.sort();
    assert_eq!(
        committed, expected,
        "docs/src/images/tour-*.png against tests/e2e/tour.rs's SHOTS"
    );
    for name in &committed {
        let path = dir.join(name);
        let png = std::fs::read(&path).unwrap();
        assert_eq!(png_size(&png, name), VIEWPORT, "{}", path.display());
    }
}
