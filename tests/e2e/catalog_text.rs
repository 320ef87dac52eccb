//! A catalog product named with markup: the estimator shows it, adds it, and the editor and the
//! customer preview show its name, always as text.

use toolbridge_protocol::add_lines::Unit;
use toolbridge_store::{NewProduct, Store};

use crate::browser::{Browser, database};
use crate::quote_editor::{estimate, open_first_draft, open_tool};
use crate::signin::sign_in;

/// The product's name: markup that would run script if anything parsed it as HTML.
const HOSTILE_NAME: &str = "Board <img src=x onerror=alert(2)>";

#[tokio::test]
async fn a_catalog_name_with_markup_stays_text_in_the_tool_editor_and_preview() {
    // No page adds catalog products; this one goes straight into the server's database.
    let store = Store::open(&database()).await.unwrap();
    let tenant = store.default_tenant().await.unwrap().unwrap();
    store
        .add_product(
            &tenant.id,
            &NewProduct {
                sku: "XSS-01".to_owned(),
                name: HOSTILE_NAME.to_owned(),
                unit: Unit::SquareMetre,
                price: "40".parse().unwrap(),
                cost: "25".parse().unwrap(),
            },
        )
        .await
        .unwrap();
    store.close().await;

    let browser = Browser::open().await;
    sign_in(&browser, "office@harbour.test", "Olivia Office").await;
    open_first_draft(&browser).await;
    open_tool(&browser, "Flooring estimator").await;
    estimate(&browser, &[("Den", "2", "2", "xss-01")]).await;

    browser.enter_frame(".tool-panel iframe").await;
    browser
        .until(
            "no markup in the tool",
            "document.querySelectorAll('img').length === 0",
        )
        .await;
    browser.leave_frame().await;

    browser
        .until(
            "the product's line in the editor",
            &format!(
                "document.querySelector('.lines-table').textContent.includes({HOSTILE_NAME:?})"
            ),
        )
        .await;
    browser
        .until(
            "no markup in the editor",
            "document.querySelectorAll('main img').length === 0",
        )
        .await;
    browser.press("Preview").await;
    let preview = browser.text(".preview").await;
    assert!(preview.contains(HOSTILE_NAME), "{preview}");
    browser
        .until(
            "no markup in the preview",
            "document.querySelectorAll('main img').length === 0",
        )
        .await;
    browser.close().await;
}
