//! The quote editor with an extension tool: the flooring estimator's lines arrive at once with
//! their sections, groups and injected task lines; the user edits a quantity and removes a line
//! with its task line; the lines save and come back on reload; a sent quote refuses further
//! lines.

use std::time::Duration;

use fantoccini::Locator;

use serde_json::Value;

use crate::browser::{Browser, api_key, rest};
use crate::signin::sign_in;

/// The estimator's frame inside the editor's tool panel.
const TOOL_FRAME: &str = ".tool-panel iframe";

/// Opens the Tools menu of the editor and picks `name`.
pub(crate) async fn open_tool(browser: &Browser, name: &str) {
    browser
        .find("button[aria-controls^=tools-menu]")
        .await
        .click()
        .await
        .unwrap();
    let xpath = format!(
        "//button[contains(@class,'menu-item')][.//*[contains(@class,'menu-title')][normalize-space()={name:?}]]"
    );
    browser
        .client
        .wait()
        .for_element(Locator::XPath(&xpath))
        .await
        .unwrap()
        .click()
        .await
        .unwrap();
}

/// Fills the estimator's rooms (name, length, width, SKU) and adds them to the quote, inside
/// its frame; back on the app's page afterwards.
pub(crate) async fn estimate(browser: &Browser, rooms: &[(&str, &str, &str, &str)]) {
    browser.enter_frame(TOOL_FRAME).await;
    browser
        .until(
            "the estimator's catalog",
            "document.getElementById('add-to-quote') && !document.getElementById('add-to-quote').disabled \
             && /loaded/.test(document.getElementById('catalog-status').textContent)",
        )
        .await;
    for (index, (name, length, width, sku)) in rooms.iter().enumerate() {
        let rooms = browser
            .client
            .find_all(Locator::Css("fieldset.room"))
            .await
            .unwrap();
        if rooms.len() <= index {
            browser.click(&browser.find("#add-room").await).await;
        }
        let room = browser
            .client
            .find_all(Locator::Css("fieldset.room"))
            .await
            .unwrap()
            .remove(index);
        for (field, value) in [
            ("name", name),
            ("length", length),
            ("width", width),
            ("sku", sku),
        ] {
            let input = room
                .find(Locator::Css(&format!("[data-field={field}]")))
                .await
                .unwrap();
            browser.type_into(&input, value).await;
        }
    }
    // Clicked by script: the app's toasts may sit over the frame's corner.
    browser
        .client
        .execute("document.getElementById('add-to-quote').click();", vec![])
        .await
        .unwrap();
    browser
        .until(
            "the estimator's answer",
            "document.getElementById('status').dataset.kind && document.getElementById('status').dataset.kind !== 'info'",
        )
        .await;
    browser.leave_frame().await;
}

/// Opens the first Draft quote of the list in the editor.
pub(crate) async fn open_first_draft(browser: &Browser) {
    let draft = browser
        .client
        .wait()
        .for_element(Locator::XPath(
            "//table[contains(@class,'quotes-table')]//tr[.//*[contains(@class,'status-draft')]]//a",
        ))
        .await
        .unwrap();
    browser.click(&draft).await;
    browser.find(".lines-table, .empty-lines").await;
}

/// Cents of a JSON amount.
fn cents(amount: &Value) -> i64 {
    format!("{:.2}", amount.as_f64().unwrap())
        .replace('.', "")
        .parse()
        .unwrap()
}

/// What the editor saved, read back through the REST API: the Kitchen's lines share one group
/// with the task lines they injected, line totals add up to the quote's, and the page shows that
/// total.
async fn check_saved(browser: &Browser) {
    let url = browser.client.current_url().await.unwrap();
    let id = url
        .fragment()
        .unwrap()
        .trim_start_matches("/quotes/")
        .to_owned();
    let quote = rest(&api_key().await, &format!("/quotes/{id}")).await;
    let lines = quote["lines"].as_array().unwrap();
    let kitchen: Vec<&Value> = lines.iter().filter(|l| l["section"] == "Kitchen").collect();
    assert_eq!(
        kitchen.len(),
        3,
        "the board and its two task lines: {quote}"
    );
    let group = &kitchen[0]["groupId"];
    assert!(group.as_u64().unwrap() > 0, "{quote}");
    assert!(kitchen.iter().all(|l| &l["groupId"] == group), "{quote}");
    assert!(
        kitchen[1..]
            .iter()
            .all(|l| l["injected"] == true && l["parentLineNo"] == kitchen[0]["lineNo"])
    );
    let summed: i64 = lines.iter().map(|l| cents(&l["total"])).sum();
    let total = cents(&quote["totals"]["total"]);
    assert_eq!(summed, total, "the line totals add up: {quote}");
    let shown: String = browser
        .text(".totals .total-strong dd")
        .await
        .chars()
        .filter(char::is_ascii_digit)
        .collect();
    assert_eq!(
        shown.parse::<i64>().unwrap(),
        total,
        "the page shows the saved total"
    );
}

/// Sends the open quote from the editor (Send Quote, confirmed), and waits for its notice.
pub(crate) async fn send_quote(browser: &Browser) {
    browser.press("Send Quote").await;
    browser
        .find("#dialog[open] #dialog-buttons button[value=send]")
        .await
        .click()
        .await
        .unwrap();
    browser.find(".editor .notice:not([hidden])").await;
}

/// The number of line rows the editor shows.
pub(crate) async fn line_rows(browser: &Browser) -> usize {
    browser
        .client
        .find_all(Locator::Css(".lines-table tr.line"))
        .await
        .unwrap()
        .len()
}

/// The user's own edits, which go through the host too: the Kitchen board's quantity, then
/// the Hall's vinyl with the installation task it brought. Returns the lines left.
async fn edit_by_hand(browser: &Browser, lines: usize) -> usize {
    let totals = browser.text(".totals").await;
    // Set as a user's typing ends: the value, then `change` (the table redraws at once, so a
    // WebDriver element would go stale between keystrokes).
    browser
        .client
        .execute(
            "const input = document.querySelector(\"input[aria-label='Quantity of Oak engineered board 14mm']\");\
             input.value = '30'; input.dispatchEvent(new Event('change', { bubbles: true }));",
            vec![],
        )
        .await
        .unwrap();
    browser
        .until(
            "new totals after the quantity change",
            &format!("document.querySelector('.totals').innerText !== {totals:?}"),
        )
        .await;
    // Brought to the middle first: at the bottom of the window the app's toasts may cover it.
    let remove = browser
        .find("button[aria-label='Remove Vinyl plank']")
        .await;
    browser.click(&remove).await;
    browser
        .find("#dialog[open] #dialog-buttons button[value=remove]")
        .await
        .click()
        .await
        .unwrap();
    let kept = lines - 2;
    browser
        .until(
            "the vinyl and its task line gone",
            &format!("document.querySelectorAll('.lines-table tr.line').length === {kept}"),
        )
        .await;
    kept
}

#[tokio::test]
async fn the_estimator_fills_the_open_quote_which_saves_reloads_and_locks() {
    let browser = Browser::open().await;
    sign_in(&browser, "office@harbour.test", "Olivia Office").await;

    open_first_draft(&browser).await;
    let before = line_rows(&browser).await;

    open_tool(&browser, "Flooring estimator").await;
    estimate(
        &browser,
        &[
            ("Kitchen", "4", "3.5", "OAK-01"),
            ("Hall", "5", "1.2", "VINYL-02"),
        ],
    )
    .await;
    browser.find(".dirty:not([hidden])").await;
    // OAK-01 injects installation and underlay, VINYL-02 installation: 2 + 3 task lines.
    browser
        .until(
            "the new lines in the editor",
            &format!(
                "document.querySelectorAll('.lines-table tr.line').length === {}",
                before + 5
            ),
        )
        .await;
    let sections = browser.text(".lines-table").await;
    assert!(
        sections.contains("Kitchen") && sections.contains("Hall"),
        "{sections}"
    );
    let groups = browser.text(".lines-table .group-row").await;
    assert!(groups.starts_with("Group "), "{groups}");
    let toast = browser.text(".toast").await;
    assert!(toast.contains("Flooring estimator added"), "{toast}");
    browser.screenshot("quote-editor-with-estimator").await;

    let kept = edit_by_hand(&browser, before + 5).await;

    let totals = browser.text(".totals").await;
    browser.press("Save").await;
    browser
        .until(
            "the saved quote",
            "document.querySelector('.dirty')?.hidden === true",
        )
        .await;
    browser.client.refresh().await.unwrap();
    browser.find(".lines-table").await;
    assert_eq!(
        line_rows(&browser).await,
        kept,
        "the saved lines after a reload"
    );
    assert_eq!(
        browser.text(".totals").await,
        totals,
        "the same totals after a reload"
    );
    check_saved(&browser).await;

    send_quote(&browser).await;
    // The estimator reads the open quote: on a Sent one it offers no adding, and says why. (The
    // host's own QUOTE_LOCKED refusal, for a tool that does not look, is in the host's tests.)
    open_tool(&browser, "Flooring estimator").await;
    browser.enter_frame(TOOL_FRAME).await;
    browser
        .until(
            "the estimator locked on a sent quote",
            "document.getElementById('add-to-quote')?.disabled === true \
             && /is Sent/.test(document.getElementById('quote-lock')?.textContent ?? '')",
        )
        .await;
    browser.leave_frame().await;
    tokio::time::sleep(Duration::from_millis(200)).await;
    assert_eq!(
        line_rows(&browser).await,
        kept,
        "a sent quote took no lines"
    );
    browser.close().await;
}
