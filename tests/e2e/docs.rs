//! The documentation the server serves under `/docs/` (built by `cargo xtask build` into
//! `docs/book`): the book opens and its pages link to each other; the API reference renders
//! every operation and webhook of the server's own OpenAPI document, found by its id; the error
//! code page has an entry for every code of the protocol, at the address a real problem's `type`
//! names. No page fetches anything from another origin.

use serde_json::Value;
use toolbridge_protocol::error::ErrorCode;

use crate::browser::{Browser, app};

/// Fails when the page loaded anything (scripts, styles, fonts, images, fetches) from another
/// origin than the app's.
async fn assert_nothing_left_the_server(browser: &Browser, page: &str) {
    let outside = browser
        .client
        .execute(
            "return performance.getEntriesByType('resource').map((entry) => entry.name)\
             .filter((name) => !name.startsWith(location.origin + '/') && !/^(blob|data):/.test(name));",
            vec![],
        )
        .await
        .unwrap();
    assert_eq!(
        outside,
        Value::Array(Vec::new()),
        "{page} loaded from outside the server"
    );
}

#[tokio::test]
async fn the_book_opens_at_docs_and_its_pages_link_to_each_other() {
    let browser = Browser::open().await;
    browser.go("/docs").await;
    browser
        .until(
            "the book's first page with its table of contents",
            "location.pathname === '/docs/' && document.title.includes('toolbridge') \
             && document.querySelector('a[href$=\"tools/first-tool.html\"]')",
        )
        .await;
    let link = browser.find("a[href$=\"tools/first-tool.html\"]").await;
    browser.click(&link).await;
    browser
        .until(
            "the first tool's page, with its manifest example",
            "location.pathname === '/docs/tools/first-tool.html' \
             && [...document.querySelectorAll('code')].some((code) => code.textContent.includes('\"entry\": \"index.html\"'))",
        )
        .await;
    assert_nothing_left_the_server(&browser, "/docs/tools/first-tool.html").await;
    browser.close().await;
}

/// The `operationId` of every operation, and the name of every webhook, in the OpenAPI document.
fn operations(document: &Value) -> (Vec<String>, Vec<String>) {
    let mut ids = Vec::new();
    for item in document["paths"].as_object().unwrap().values() {
        for operation in item.as_object().unwrap().values() {
            if let Some(id) = operation.get("operationId").and_then(Value::as_str) {
                ids.push(id.to_owned());
            }
        }
    }
    let webhooks = document["webhooks"]
        .as_object()
        .map(|webhooks| webhooks.keys().cloned().collect())
        .unwrap_or_default();
    (ids, webhooks)
}

#[tokio::test]
async fn the_api_reference_shows_every_operation_of_the_openapi_document() {
    let document: Value = reqwest::get(format!("{}/api/v1/openapi.json", app()))
        .await
        .unwrap()
        .json()
        .await
        .unwrap();
    let (ids, webhooks) = operations(&document);
    assert!(ids.len() > 20, "{ids:?}");
    assert!(!webhooks.is_empty(), "the document has no webhooks");

    let browser = Browser::open().await;
    browser.go("/docs/api").await;
    browser
        .until(
            "Redoc's rendering of /api/v1/openapi.json",
            "location.pathname === '/docs/api/' && document.body.dataset.rendered === 'true'",
        )
        .await;
    // Redoc gives each operation a section whose id ends in `operation/<operationId>`.
    let missing = browser
        .client
        .execute(
            "return arguments[0].filter((id) => !document.querySelector(`[id$=\"operation/${id}\"]`));",
            vec![Value::from(ids.clone())],
        )
        .await
        .unwrap();
    assert_eq!(
        missing,
        Value::Array(Vec::new()),
        "operations the page does not show"
    );
    let text = browser.text("body").await;
    for webhook in &webhooks {
        assert!(
            text.contains(webhook.as_str()),
            "the page does not show the webhook {webhook}"
        );
    }
    assert_nothing_left_the_server(&browser, "/docs/api/").await;
    browser.close().await;
}

#[tokio::test]
async fn every_error_code_has_an_entry_where_problems_point() {
    // A real problem body: a REST call without a key.
    let problem: Value = reqwest::get(format!("{}/api/v1/products", app()))
        .await
        .unwrap()
        .json()
        .await
        .unwrap();
    let problem_type = problem["type"].as_str().unwrap().to_owned();
    assert_eq!(problem_type, "/docs/errors#UNAUTHENTICATED");

    let browser = Browser::open().await;
    browser.go(&problem_type).await;
    browser
        .until(
            "the entry the problem's type names",
            "location.pathname === '/docs/errors' && location.hash === '#UNAUTHENTICATED' \
             && document.getElementById('UNAUTHENTICATED')",
        )
        .await;
    let codes: Vec<&str> = ErrorCode::ALL.iter().map(|code| code.as_str()).collect();
    let missing = browser
        .client
        .execute(
            "return arguments[0].filter((code) => {\
               const entry = document.getElementById(code);\
               return !entry || !/^H[1-6]$/.test(entry.tagName) || !entry.textContent.includes(code);\
             });",
            vec![Value::from(codes)],
        )
        .await
        .unwrap();
    assert_eq!(
        missing,
        Value::Array(Vec::new()),
        "codes without an entry on /docs/errors"
    );
    assert_nothing_left_the_server(&browser, "/docs/errors").await;
    browser.close().await;
}
