//! A tool author's first minutes: the book's first tool, written by `cargo xtask test` from the
//! blocks of `docs/src/tools/first-tool.md` into a folder that the server serves with `--dev-tool`, shows its
//! products in the app; the same page with its script inline is refused by the tool origin's
//! policy, and the app and the server's output both tell the author what to change.

use std::time::Duration;

use crate::browser::{Browser, PATIENCE};
use crate::signin::sign_in;

/// The sentence the author must see for an inline script.
const INLINE_ADVICE: &str = "an inline script was refused: move it into a .js file";

/// `TOOLBRIDGE_E2E_SERVER_LOG`'s file, once it holds a line with `needle`; the line.
async fn server_printed(needle: &str) -> String {
    let log = std::env::var("TOOLBRIDGE_E2E_SERVER_LOG").expect(
        "TOOLBRIDGE_E2E_SERVER_LOG is not set: run with `cargo xtask test --only \"e2e in\"`",
    );
    let deadline = tokio::time::Instant::now() + PATIENCE;
    loop {
        let text = std::fs::read_to_string(&log).unwrap_or_default();
        if let Some(line) = text.lines().find(|line| line.contains(needle)) {
            return line.to_owned();
        }
        assert!(
            tokio::time::Instant::now() < deadline,
            "the server did not print a line with {needle:?} within {PATIENCE:?}; its log ({log}) ends:\n{}",
            text.lines().rev().take(20).collect::<Vec<_>>().join("\n")
        );
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
}

#[tokio::test]
async fn the_books_first_tool_lists_products_as_written() {
    let browser = Browser::open().await;
    sign_in(&browser, "office@harbour.test", "Olivia Office").await;
    browser.go("/#/tools").await;
    browser.press("Open My tool").await;
    browser.enter_frame("#sidebar-frame iframe").await;
    browser
        .until(
            "the first tool's products",
            "document.getElementById('out').textContent.split(', ').length === 5",
        )
        .await;
    let shown = browser.text("#out").await;
    assert!(!shown.contains("Loading"), "{shown}");
    assert!(!shown.contains("NOT_CONNECTED"), "{shown}");
    browser.leave_frame().await;
    // A tool that works has nothing to be told.
    assert!(
        browser
            .client
            .execute(
                "return document.getElementById('dev-reports').hidden;",
                vec![]
            )
            .await
            .unwrap()
            .as_bool()
            .unwrap(),
        "the dev report panel is shown for a tool that was refused nothing"
    );
    browser.screenshot("first-tool").await;
    browser.close().await;
}

#[tokio::test]
async fn an_inline_script_in_a_dev_tool_is_explained_in_the_app_and_the_terminal() {
    let browser = Browser::open().await;
    sign_in(&browser, "office@harbour.test", "Olivia Office").await;
    browser.go("/#/tools").await;
    browser.press("Open Inline script").await;
    browser
        .until(
            "the dev report panel",
            "!document.getElementById('dev-reports').hidden",
        )
        .await;
    let report = browser.text("#dev-report-list").await;
    assert!(report.contains("Inline script"), "{report}");
    assert!(report.contains(INLINE_ADVICE), "{report}");
    browser.screenshot("inline-script-refused").await;

    let line = server_printed(INLINE_ADVICE).await;
    assert!(line.contains("inline-script"), "{line}");

    // The page itself never ran: it still says what it said before its script.
    browser.enter_frame("#sidebar-frame iframe").await;
    assert_eq!(browser.text("#out").await, "Loading products…");
    browser.close().await;
}
