//! Settings → Webhooks against a real receiver on loopback (the e2e server runs with
//! `--allow-private-webhooks`): an Admin adds an endpoint and sees its secret once; a quote saved
//! in the editor reaches the receiver once, signed with that secret and with its event id; the
//! delivery log shows it delivered; after Rotate secret, Redeliver sends the same event again,
//! signed with the new secret. The page shows the API's own refusal under the URL field. A Field
//! user gets no Webhooks, in the page or from the API.

use std::time::Duration;

use fantoccini::Locator;
use serde_json::{Value, json};
use toolbridge_e2e::webhook_receiver::{Received, WebhookReceiver};

use crate::browser::{Browser, PATIENCE, api_key, app};
use crate::quote_editor::{estimate, open_first_draft, open_tool};
use crate::signin::sign_in;

/// How long a delivery may take to reach the receiver: the worker's polling and one attempt.
const DELIVERY: Duration = Duration::from_secs(30);

/// The secret the open secret dialog shows, after checking it says it will not be shown again;
/// the dialog is closed with Done and the secret is then nowhere in the page. The dialog is
/// saved as the screenshot `screenshot`.
async fn read_secret_once(browser: &Browser, screenshot: &str) -> String {
    let dialog = browser.text("dialog.secret-dialog[open]").await;
    assert!(dialog.contains("will not be shown again"), "{dialog}");
    let secret = browser.text("#webhook-secret").await;
    assert!(secret.starts_with("whsec_"), "{secret}");
    browser.screenshot(screenshot).await;
    browser
        .find("dialog.secret-dialog[open] button[value=done]")
        .await
        .click()
        .await
        .unwrap();
    browser
        .until(
            "the secret gone from the page once the dialog is closed",
            &format!(
                "!document.querySelector('dialog.secret-dialog') && !document.body.textContent.includes({secret:?})"
            ),
        )
        .await;
    secret
}

/// Clicks the row action `css` after dismissing the app's toasts with their close buttons: they
/// sit over the bottom right of the window, where the last rows' actions are on a short page.
async fn press_in_row(browser: &Browser, css: &str) {
    browser.dismiss_toasts().await;
    let element = browser.find(css).await;
    browser.click(&element).await;
}

/// Opens the delivery log of the endpoint at `url` on the Webhooks page.
async fn open_log(browser: &Browser, url: &str) {
    press_in_row(
        browser,
        &format!("button[aria-label='Deliveries to {url}']"),
    )
    .await;
    browser.find(".delivery-log-panel").await;
}

/// Presses Refresh in the open delivery log until `script` is true (the worker records the
/// outcome just after the receiver answers).
async fn refresh_until(browser: &Browser, what: &str, script: &str) {
    let deadline = tokio::time::Instant::now() + PATIENCE;
    loop {
        let done = browser
            .client
            .execute(&format!("return Boolean({script});"), vec![])
            .await
            .unwrap();
        if done == Value::Bool(true) {
            return;
        }
        assert!(
            tokio::time::Instant::now() < deadline,
            "{what}: `{script}` not true within {PATIENCE:?}; the log shows: {}",
            browser.text(".delivery-log-panel").await
        );
        browser
            .client
            .execute(
                "document.querySelector('.delivery-log-panel button[aria-label^=Refresh]')?.click();",
                vec![],
            )
            .await
            .unwrap();
        tokio::time::sleep(Duration::from_millis(300)).await;
    }
}

/// Checks one delivery as an integrator's receiver would: a `quote.saved` of `quote_id`, signed
/// with `secret`, its event id header the body's id. Returns the event id.
fn check_delivery(received: &Received, secret: &str, quote_id: &str) -> String {
    assert_eq!(received.method, "POST");
    assert_eq!(received.path, "/hook");
    received
        .verify(secret)
        .unwrap_or_else(|e| panic!("the signature: {e}"));
    let body = received.json().unwrap();
    assert_eq!(body["type"], "quote.saved", "{body}");
    assert_eq!(body["data"]["quote"]["id"], quote_id, "{body}");
    let event_id = received.event_id().expect("a Toolbridge-Event-Id header");
    assert!(event_id.starts_with("evt_"), "{event_id}");
    assert_eq!(body["id"], event_id, "the header names the body's event");
    event_id.to_owned()
}

/// What `POST /api/v1/webhook-endpoints` answers `body` with an API key: the API's own words.
async fn refusal_over_rest(body: &Value) -> Value {
    let answer = reqwest::Client::new()
        .post(format!("{}/api/v1/webhook-endpoints", app()))
        .bearer_auth(api_key().await)
        .json(body)
        .send()
        .await
        .unwrap();
    assert_eq!(answer.status(), 422, "POST {body}");
    answer.json().await.unwrap()
}

/// Settings → Webhooks, reached as a user would: Settings in the navigation, then its tab.
async fn open_webhooks(browser: &Browser) {
    browser
        .find("[data-nav=settings]")
        .await
        .click()
        .await
        .unwrap();
    browser
        .client
        .wait()
        .at_most(PATIENCE)
        .for_element(Locator::XPath(
            "//nav[@aria-label='Settings']//a[normalize-space()='Webhooks']",
        ))
        .await
        .unwrap()
        .click()
        .await
        .unwrap();
    browser.find("#webhook-url").await;
}

/// Adds an endpoint for `url` receiving `quote.saved`, after a refused URL whose refusal the page
/// shows under the field in the API's own words. Returns the secret the dialog showed once.
async fn add_endpoint(browser: &Browser, url: &str) -> String {
    // A URL the API refuses: its words, under the URL field.
    let bad = "ftp://example.com/hook";
    browser
        .find("#webhook-url")
        .await
        .send_keys(bad)
        .await
        .unwrap();
    browser
        .find("#event-quote-saved")
        .await
        .click()
        .await
        .unwrap();
    browser.press("Add endpoint").await;
    // The field's error element may be there, empty, before the API has answered.
    browser
        .until(
            "the API's refusal under the URL field",
            "(document.getElementById('webhook-url-error')?.textContent ?? '').trim() !== ''",
        )
        .await;
    let shown = browser.text("#webhook-url-error").await;
    let problem = refusal_over_rest(&json!({"url": bad, "eventTypes": ["quote.saved"]})).await;
    let at_url: Vec<&str> = problem["errors"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|e| e["path"] == "url")
        .map(|e| e["message"].as_str().unwrap())
        .collect();
    assert!(!at_url.is_empty(), "the API refuses it at url: {problem}");
    assert_eq!(shown, at_url.join(" "), "the API's words under the field");
    assert_eq!(
        browser
            .find("#webhook-url")
            .await
            .attr("aria-invalid")
            .await
            .unwrap()
            .as_deref(),
        Some("true")
    );

    // The receiver's URL: added, the secret shown once.
    let field = browser.find("#webhook-url").await;
    field.clear().await.unwrap();
    field.send_keys(url).await.unwrap();
    browser.press("Add endpoint").await;
    let secret = read_secret_once(browser, "settings-webhooks-secret").await;
    let row = browser.text("tr.webhook-endpoint").await;
    assert!(row.contains(url) && row.contains("quote.saved"), "{row}");
    assert!(!row.contains("quote.sent"), "only the event chosen: {row}");
    browser.screenshot("settings-webhooks-added").await;

    secret
}

/// Opens the first Draft, adds a line with the flooring estimator and saves; returns the quote's
/// id. Nothing reaches `receiver` before the save.
async fn save_a_line(browser: &Browser, receiver: &WebhookReceiver) -> String {
    browser.go("/#/quotes").await;
    open_first_draft(browser).await;
    let quote_id = browser
        .client
        .current_url()
        .await
        .unwrap()
        .fragment()
        .unwrap()
        .trim_start_matches("/quotes/")
        .to_owned();
    open_tool(browser, "Flooring estimator").await;
    estimate(browser, &[("Study", "3", "2.5", "OAK-01")]).await;
    browser.find(".dirty:not([hidden])").await;
    assert!(
        receiver.requests().is_empty(),
        "nothing is sent before the save: {:?}",
        receiver.requests()
    );
    browser.press("Save").await;
    browser
        .until(
            "the saved quote",
            "document.querySelector('.dirty')?.hidden === true",
        )
        .await;
    quote_id
}

/// The delivery of `event_id` in the log of `url`, delivered at the first attempt with 200.
async fn check_logged(browser: &Browser, url: &str, event_id: &str) {
    browser.go("/#/settings/webhooks").await;
    open_log(browser, url).await;
    let delivered = format!("tr.delivery[data-event-id='{event_id}'][data-status=delivered]");
    refresh_until(
        browser,
        "the delivery logged as delivered",
        &format!("document.querySelector(\"{delivered}\")"),
    )
    .await;
    let logged = browser.text(&delivered).await;
    assert!(
        logged.contains("quote.saved")
            && logged.contains("Delivered")
            && logged.contains("HTTP 200"),
        "{logged}"
    );
    browser
        .client
        .execute(
            "document.querySelector('.delivery-log-panel').scrollIntoView({ block: 'center' });",
            vec![],
        )
        .await
        .unwrap();
    browser.screenshot("settings-webhooks-log").await;
}

/// Switches the endpoint at `url` off and deletes it from the page; the API then finds it
/// disabled, and then gone.
async fn disable_and_delete(browser: &Browser, url: &str) {
    let id = browser
        .find("tr.webhook-endpoint")
        .await
        .attr("data-id")
        .await
        .unwrap()
        .unwrap();
    press_in_row(browser, &format!("#webhook-enabled-{id}")).await;
    let key = api_key().await;
    let client = reqwest::Client::new();
    let endpoint_url = format!("{}/api/v1/webhook-endpoints/{id}", app());
    let deadline = tokio::time::Instant::now() + PATIENCE;
    loop {
        let endpoint: Value = client
            .get(&endpoint_url)
            .bearer_auth(&key)
            .send()
            .await
            .unwrap()
            .json()
            .await
            .unwrap();
        if endpoint["enabled"] == false {
            break;
        }
        assert!(
            tokio::time::Instant::now() < deadline,
            "the switch did not disable the endpoint: {endpoint}"
        );
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
    press_in_row(browser, &format!("button[aria-label='Delete {url}']")).await;
    browser
        .find("#dialog[open] #dialog-buttons button[value=delete]")
        .await
        .click()
        .await
        .unwrap();
    browser
        .until(
            "the endpoint gone from the list",
            &format!("!document.querySelector(\"tr.webhook-endpoint[data-id='{id}']\")"),
        )
        .await;
    let gone = client
        .get(&endpoint_url)
        .bearer_auth(&key)
        .send()
        .await
        .unwrap();
    assert_eq!(gone.status(), 404, "deleted");
}

#[tokio::test]
async fn an_admin_adds_an_endpoint_and_a_saved_quote_reaches_it_signed_and_again_on_redeliver() {
    let receiver = WebhookReceiver::start().unwrap();
    let url = receiver.url();
    let browser = Browser::open().await;
    sign_in(&browser, "admin@harbour.test", "Alex Admin").await;
    open_webhooks(&browser).await;
    let secret = add_endpoint(&browser, &url).await;

    // A line added in the editor and saved: one quote.saved, signed, with its event id.
    let quote_id = save_a_line(&browser, &receiver).await;
    let got = receiver.wait_for_async(1, DELIVERY).await.unwrap();
    let event_id = check_delivery(&got[0], &secret, &quote_id);

    check_logged(&browser, &url, &event_id).await;
    assert_eq!(
        receiver.requests().len(),
        1,
        "exactly one delivery for one save: {:?}",
        receiver.requests()
    );

    // Rotate secret: a new one, shown once; Redeliver then sends the same event, signed with it.
    press_in_row(
        &browser,
        &format!("button[aria-label='Rotate the secret of {url}']"),
    )
    .await;
    browser
        .find("#dialog[open] #dialog-buttons button[value=rotate]")
        .await
        .click()
        .await
        .unwrap();
    let rotated = read_secret_once(&browser, "settings-webhooks-rotated").await;
    assert_ne!(rotated, secret, "a new secret");
    press_in_row(
        &browser,
        &format!("button[aria-label='Redeliver {event_id}']"),
    )
    .await;
    let got = receiver.wait_for_async(2, DELIVERY).await.unwrap();
    assert_eq!(
        check_delivery(&got[1], &rotated, &quote_id),
        event_id,
        "the same event id again"
    );
    assert!(
        got[1].verify(&secret).is_err(),
        "no longer signed with the old secret"
    );
    assert_eq!(got[0].body, got[1].body, "the same event");
    refresh_until(
        &browser,
        "both deliveries of the event logged as delivered",
        &format!(
            "document.querySelectorAll(\"tr.delivery[data-event-id='{event_id}'][data-status=delivered]\").length === 2"
        ),
    )
    .await;

    disable_and_delete(&browser, &url).await;
    assert_eq!(receiver.requests().len(), 2, "{:?}", receiver.requests());
    browser.close().await;
}

#[tokio::test]
async fn a_field_user_gets_no_webhooks() {
    let browser = Browser::open().await;
    sign_in(&browser, "field@harbour.test", "Finn Field").await;
    browser
        .until(
            "no Settings in the navigation",
            "document.querySelector('[data-requires=settings]')?.hidden === true",
        )
        .await;
    browser.go("/#/settings/webhooks").await;
    browser
        .until(
            "the Settings refusal",
            "document.getElementById('main').textContent.includes('Only Admin and Super User may change settings.')",
        )
        .await;
    let page = browser.text("#main").await;
    assert!(
        browser
            .client
            .find_all(Locator::Css("#webhook-url, .webhook-endpoints"))
            .await
            .unwrap()
            .is_empty(),
        "no webhook form or list: {page}"
    );

    // The API refuses the same session too.
    let cookie = browser.client.get_named_cookie("tb_session").await.unwrap();
    let answer = reqwest::Client::new()
        .get(format!("{}/api/v1/webhook-endpoints", app()))
        .header("Cookie", format!("tb_session={}", cookie.value()))
        .send()
        .await
        .unwrap();
    assert_eq!(answer.status(), 403, "a Field user's session");
    let problem: Value = answer.json().await.unwrap();
    assert_eq!(problem["code"], "NOT_ALLOWED", "{problem}");
    browser.close().await;
}
