//! The bridge's extensions beyond 2.1.0 through the example tools in the reference app: the
//! flooring estimator reads and follows the open quote (`quotes.getOpen`, `quote.changed`), asks
//! in the app's own dialog before adding a room the quote already has (`ui.confirm`), sizes its
//! frame (`ui.autoResize`) and stops adding once the quote is sent; Quick quote takes the user to
//! the quote it made (`ui.openQuote`).

use std::time::Duration;

use fantoccini::Locator;

use crate::browser::{Browser, PATIENCE};
use crate::quick_quote::create_quote;
use crate::quote_editor::{line_rows, open_first_draft, open_tool, send_quote};
use crate::signin::sign_in;

/// The estimator's frame inside the editor's tool panel.
const TOOL_FRAME: &str = ".tool-panel iframe";

/// The room the estimator adds, twice.
const ROOM: &str = "Lounge";

/// The lines one room of OAK-01 brings: the board, and the installation and underlay tasks the
/// product injects.
const ROOM_LINES: usize = 3;

/// The bounds the editor mounts quoting extensions with (`autoResize: {min, max}`).
const FRAME_MIN: u32 = 240;
const FRAME_MAX: u32 = 4000;

/// Inside the estimator's frame: fills its first room with `ROOM`, 4 m × 5 m of OAK-01.
async fn fill_room(browser: &Browser) {
    let room = browser.find("fieldset.room").await;
    for (field, value) in [
        ("name", ROOM),
        ("length", "4"),
        ("width", "5"),
        ("sku", "OAK-01"),
    ] {
        let input = room
            .find(Locator::Css(&format!("[data-field={field}]")))
            .await
            .unwrap();
        input.clear().await.unwrap();
        browser.type_into(&input, value).await;
    }
}

/// Inside the estimator's frame: presses "Add to quote" (by script: the app's toasts may sit
/// over the frame's corner).
async fn add_to_quote(browser: &Browser) {
    browser
        .until(
            "Add to quote enabled",
            "!document.getElementById('add-to-quote').disabled",
        )
        .await;
    browser
        .client
        .execute("document.getElementById('add-to-quote').click();", vec![])
        .await
        .unwrap();
}

/// Waits for the editor to show `count` line rows.
async fn until_lines(browser: &Browser, what: &str, count: usize) {
    browser
        .until(
            what,
            &format!("document.querySelectorAll('.lines-table tr.line').length === {count}"),
        )
        .await;
}

/// The app's dialog, opened by the estimator's `ui.confirm`: names the tool and the room; the
/// answer is the button whose value is `answer` (`cancel` or `confirm`).
async fn answer_confirm(browser: &Browser, answer: &str, screenshot: Option<&str>) {
    browser.find("#dialog[open]").await;
    let source = browser.text("#dialog-source").await;
    assert!(source.contains("Flooring estimator"), "{source}");
    let title = browser.text("#dialog-title").await;
    assert!(title.contains(ROOM), "{title}");
    if let Some(name) = screenshot {
        browser.screenshot(name).await;
    }
    browser
        .find(&format!(
            "#dialog[open] #dialog-buttons button[value={answer}]"
        ))
        .await
        .click()
        .await
        .unwrap();
    browser
        .until(
            "the dialog closed",
            "!document.getElementById('dialog').open",
        )
        .await;
}

/// The frame's height as the host set it, inline in px, once it fits the tool's document
/// (measured inside the frame as bridge.js measures it) within the editor's bounds; the page
/// inside has nothing to scroll.
async fn fitted_frame_height(browser: &Browser) -> u32 {
    let deadline = tokio::time::Instant::now() + PATIENCE;
    loop {
        let inline = browser
            .client
            .execute(
                &format!("return document.querySelector({TOOL_FRAME:?}).style.height;"),
                vec![],
            )
            .await
            .unwrap();
        let inline = inline.as_str().unwrap_or_default().to_owned();
        browser.enter_frame(TOOL_FRAME).await;
        let inside = browser
            .client
            .execute(
                "return [Math.ceil(document.documentElement.getBoundingClientRect().height), \
                 document.scrollingElement.scrollHeight, window.innerHeight];",
                vec![],
            )
            .await
            .unwrap();
        browser.leave_frame().await;
        let [document, scroll, viewport] = [0, 1, 2].map(|i| inside[i].as_u64().unwrap());
        let height = inline
            .strip_suffix("px")
            .and_then(|px| px.parse::<u32>().ok());
        if let Some(height) = height {
            if (FRAME_MIN..=FRAME_MAX).contains(&height)
                && u64::from(height) >= document
                && scroll <= viewport
            {
                return height;
            }
        }
        assert!(
            tokio::time::Instant::now() < deadline,
            "the frame's inline height {inline:?} does not fit the tool's document \
             ({document} px high, {scroll} px to scroll in a {viewport} px viewport) within \
             {FRAME_MIN}..={FRAME_MAX} px"
        );
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
}

/// The estimator reads the open quote (the room is not on it yet), adds the room, and lists it
/// as on the quote once the `quote.changed` event brings the new lines.
async fn add_the_room(browser: &Browser, before: usize) {
    browser.enter_frame(TOOL_FRAME).await;
    browser
        .until(
            "the estimator's catalog and the open quote",
            "/loaded/.test(document.getElementById('catalog-status').textContent) \
             && !document.getElementById('open-quote').hidden",
        )
        .await;
    let rooms = browser.text("#open-quote").await;
    assert!(!rooms.contains(ROOM), "{rooms}");
    fill_room(browser).await;
    add_to_quote(browser).await;
    browser
        .until(
            "the estimator's success",
            "document.getElementById('status').dataset.kind === 'success'",
        )
        .await;
    browser
        .until(
            "the room listed as on the quote",
            &format!(
                "[...document.querySelectorAll('#quote-rooms li')].some((li) => li.textContent === {ROOM:?})"
            ),
        )
        .await;
    browser.leave_frame().await;
    until_lines(
        browser,
        "the room's lines in the editor",
        before + ROOM_LINES,
    )
    .await;
    browser.screenshot("estimator-room-on-the-quote").await;
}

/// The same room again: the app asks, naming the tool; Cancel adds nothing. Asked again and
/// confirmed, a second set of lines comes.
async fn add_the_room_again(browser: &Browser, before: usize) {
    browser.enter_frame(TOOL_FRAME).await;
    fill_room(browser).await;
    browser
        .until(
            "the room marked as already on the quote",
            "!document.querySelector('fieldset.room [data-role=repeat]').hidden",
        )
        .await;
    add_to_quote(browser).await;
    browser.leave_frame().await;
    answer_confirm(browser, "cancel", Some("estimator-asks-before-a-repeat")).await;
    browser.enter_frame(TOOL_FRAME).await;
    browser
        .until(
            "the estimator saying nothing was added",
            "/Nothing was added/.test(document.getElementById('status').textContent)",
        )
        .await;
    browser.leave_frame().await;
    assert_eq!(
        line_rows(browser).await,
        before + ROOM_LINES,
        "Cancel added nothing"
    );

    browser.enter_frame(TOOL_FRAME).await;
    add_to_quote(browser).await;
    browser.leave_frame().await;
    answer_confirm(browser, "confirm", None).await;
    until_lines(
        browser,
        "the room's second set of lines",
        before + 2 * ROOM_LINES,
    )
    .await;
}

/// The quote is sent from the editor while the estimator is open: it stops adding and says why.
async fn send_while_open(browser: &Browser) {
    send_quote(browser).await;
    browser.enter_frame(TOOL_FRAME).await;
    browser
        .until(
            "the estimator locked",
            "document.getElementById('add-to-quote').disabled \
             && /Sent/.test(document.getElementById('quote-lock').textContent)",
        )
        .await;
    let lock = browser.text("#quote-lock").await;
    assert!(lock.contains("locked"), "{lock}");
    browser.leave_frame().await;
    // The note heads the estimator, at the top of the tool panel.
    browser
        .client
        .execute(
            "document.querySelector('.tool-panel .tool-frame').scrollTop = 0;",
            vec![],
        )
        .await
        .unwrap();
    browser.screenshot("estimator-locked-after-send").await;
}

#[tokio::test]
async fn the_estimator_follows_the_open_quote_asks_before_a_repeat_fits_its_frame_and_locks() {
    let browser = Browser::open().await;
    sign_in(&browser, "office@harbour.test", "Olivia Office").await;
    open_first_draft(&browser).await;
    let before = line_rows(&browser).await;
    open_tool(&browser, "Flooring estimator").await;

    add_the_room(&browser, before).await;
    add_the_room_again(&browser, before).await;

    // The host sized the frame to the estimator's page: all of it shows.
    let height = fitted_frame_height(&browser).await;
    assert!(
        height > FRAME_MIN,
        "the estimator is taller than the least height: {height}"
    );
    browser.screenshot("estimator-frame-fitted").await;

    send_while_open(&browser).await;
    browser.close().await;
}

#[tokio::test]
async fn quick_quote_takes_the_user_to_the_quote_it_made() {
    let browser = Browser::open().await;
    sign_in(&browser, "office@harbour.test", "Olivia Office").await;
    browser.go("/#/tools").await;
    browser.press("Open Quick quote").await;

    browser.enter_frame("#sidebar-frame iframe").await;
    let reference = create_quote(&browser, "open-quote@example.test", None).await;
    // The app offers ui.openQuote: a button, in place of the link.
    browser
        .until(
            "the Open the quote button instead of the link",
            "!document.getElementById('result-open').hidden \
             && document.getElementById('result-link').hidden",
        )
        .await;
    browser.press("Open the quote").await;
    browser
        .until(
            "the tool hearing the quote was opened",
            "/is open in the app/.test(document.getElementById('status').textContent)",
        )
        .await;
    browser.leave_frame().await;

    browser
        .until(
            "the quote's editor",
            &format!(
                "location.hash.startsWith('#/quotes/') \
                 && document.getElementById('editor-title')?.textContent.includes({reference:?}) \
                 && document.querySelector('.lines-table') !== null"
            ),
        )
        .await;
    browser.screenshot("quick-quote-opened-its-quote").await;
    browser.close().await;
}
