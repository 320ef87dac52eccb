//! Standalone tools in the sidebar and the live quotes list: Quick quote creates a quote for a
//! new customer whose name is an HTML attack; it shows up in the open list at once, as does an
//! integrator's quote made through the REST API; Job lookup, the editor and the preview show the
//! name, always as text.

use serde_json::{Value, json};

use crate::browser::{Browser, api_key, app, rest};
use crate::signin::sign_in;

/// The customer's name: markup that would run script if the app ever parsed it as HTML.
const HOSTILE_NAME: &str = "<img src=x onerror=alert(1)>";

/// Makes a quote in the Quick quote tool whose frame the browser is in: a customer by `email`
/// (named `name`, if given) and one OAK-01 line. Returns the new quote's reference.
pub(crate) async fn create_quote(browser: &Browser, email: &str, name: Option<&str>) -> String {
    browser
        .until(
            "the quick quote's catalog",
            "/products/.test(document.getElementById('catalog-status').textContent)",
        )
        .await;
    browser.click(&browser.find("#mode-email").await).await;
    browser
        .type_into(&browser.find("#customer-email").await, email)
        .await;
    if let Some(name) = name {
        browser
            .type_into(&browser.find("#customer-name").await, name)
            .await;
    }
    let line = browser.find("fieldset.line").await;
    for (field, value) in [("sku", "OAK-01"), ("unitPrice", "89.5")] {
        let input = line
            .find(fantoccini::Locator::Css(&format!("[data-field={field}]")))
            .await
            .unwrap();
        input.clear().await.unwrap();
        browser.type_into(&input, value).await;
    }
    browser.press("Create quote").await;
    browser
        .until(
            "the created quote",
            "!document.getElementById('result').hidden",
        )
        .await;
    browser.text("#result-ref").await
}

/// An integrator's quote, made through the REST API, arrives in the open list too.
async fn an_integrators_quote_arrives_live(browser: &Browser) {
    let key = api_key().await;
    let customers = rest(&key, "/customers?pageSize=1").await;
    let products = rest(&key, "/products?pageSize=1").await;
    let created: Value = reqwest::Client::new()
        .post(format!("{}/api/v1/quotes", app()))
        .bearer_auth(&key)
        .json(&json!({
            "customerId": customers["items"][0]["id"],
            "lines": [{"skuId": products["items"][0]["id"], "qty": 2, "unitPrice": 10}]
        }))
        .send()
        .await
        .unwrap()
        .json()
        .await
        .unwrap();
    let rest_reference = created["ref"].as_str().unwrap().to_owned();
    browser
        .until(
            "the integrator's quote in the open list",
            &format!(
                "[...document.querySelectorAll('.quotes-table tbody tr')].some((row) => row.textContent.includes({rest_reference:?}))"
            ),
        )
        .await;
}

/// Job lookup, another tool, lists the quote `reference` with its customer's name as text.
async fn job_lookup_shows_it_as_text(browser: &Browser, reference: &str) {
    browser.go("/#/tools").await;
    browser.press("Open Job lookup").await;
    browser.enter_frame("#sidebar-frame iframe").await;
    // As a user would, wait for the tool to greet before choosing a tab: a click before its
    // script has run (the tab is in the page's HTML) is lost.
    browser
        .until(
            "Job lookup greets",
            "document.getElementById('greeting').textContent !== ''",
        )
        .await;
    browser.click(&browser.find("#tab-quotes").await).await;
    browser
        .until(
            "the quote in Job lookup",
            &format!("document.getElementById('panel-quotes').textContent.includes({reference:?})"),
        )
        .await;
    let listed = browser.text("#panel-quotes").await;
    assert!(listed.contains(HOSTILE_NAME), "{listed}");
    browser
        .until(
            "no markup in Job lookup",
            "document.querySelectorAll('img').length === 0",
        )
        .await;
    browser.leave_frame().await;
    browser.go("/#/quotes").await;
    browser.find(".quotes-table").await;
}

#[tokio::test]
async fn quick_quote_makes_a_quote_that_appears_in_the_list_with_its_name_as_text() {
    let browser = Browser::open().await;
    sign_in(&browser, "office@harbour.test", "Olivia Office").await;
    // The quotes list stays open in the page while the tool works in the sidebar.
    browser.find(".quotes-table").await;
    browser.go("/#/tools").await;
    browser.press("Open Quick quote").await;
    browser.go("/#/quotes").await;
    browser.find(".quotes-table").await;

    browser.enter_frame("#sidebar-frame iframe").await;
    let reference = create_quote(&browser, "xss-check@example.test", Some(HOSTILE_NAME)).await;
    browser.leave_frame().await;

    // The list hears of the new quote without a reload.
    browser
        .until(
            "the new quote in the open list",
            &format!(
                "[...document.querySelectorAll('.quotes-table tbody tr')].some((row) => row.textContent.includes({reference:?}))"
            ),
        )
        .await;
    let list = browser.text(".quotes-table").await;
    assert!(list.contains(HOSTILE_NAME), "the name as text: {list}");
    browser
        .until(
            "no markup from the name",
            "document.querySelectorAll('main img').length === 0",
        )
        .await;
    browser.screenshot("quotes-list-after-quick-quote").await;

    an_integrators_quote_arrives_live(&browser).await;
    job_lookup_shows_it_as_text(&browser, &reference).await;

    // The editor and the customer preview show it as text too.
    let xpath =
        format!("//table[contains(@class,'quotes-table')]//a[normalize-space()={reference:?}]");
    let quote_link = browser
        .client
        .find(fantoccini::Locator::XPath(&xpath))
        .await
        .unwrap();
    browser.click(&quote_link).await;
    browser.find(".lines-table").await;
    let editor = browser.text("main").await;
    assert!(editor.contains(HOSTILE_NAME), "{editor}");
    browser.press("Preview").await;
    let preview = browser.text(".preview").await;
    assert!(preview.contains(HOSTILE_NAME), "{preview}");
    browser
        .until(
            "no markup from the name",
            "document.querySelectorAll('main img').length === 0",
        )
        .await;
    browser.close().await;
}
