//! The app's page in a `WebDriver` session, for the suites that open it (`cluster`, `proxied`):
//! waiting until something holds, finding an element, and signing in.

use std::time::{Duration, Instant};

use fantoccini::elements::Element;
use fantoccini::{Client, Locator};
use serde_json::Value;

/// How long a wait for the page may take before the test fails.
pub(crate) const PATIENCE: Duration = Duration::from_secs(20);

/// Waits until `script` (an expression) is true in the page, for up to [`PATIENCE`].
pub(crate) async fn until(client: &Client, what: &str, script: &str) {
    let deadline = Instant::now() + PATIENCE;
    loop {
        let done = client
            .execute(&format!("return Boolean({script});"), vec![])
            .await
            .unwrap_or_else(|e| panic!("{what}: {e}"));
        if done == Value::Bool(true) {
            return;
        }
        assert!(
            Instant::now() < deadline,
            "{what}: `{script}` not true within {PATIENCE:?}"
        );
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
}

/// The element `locator` finds, waiting for it for up to [`PATIENCE`]; `what` names it in the
/// failure.
pub(crate) async fn element(client: &Client, locator: Locator<'_>, what: &str) -> Element {
    client
        .wait()
        .at_most(PATIENCE)
        .for_element(locator)
        .await
        .unwrap_or_else(|e| panic!("{what}: {e}"))
}

/// Opens the app at `app` and signs in as `user` (email, password), up to its quotes page.
pub(crate) async fn sign_in(client: &Client, app: &str, user: (&str, &str)) {
    client
        .goto(app)
        .await
        .unwrap_or_else(|e| panic!("the app does not open at {app}: {e}"));
    for (field, text) in [("#signin-email", user.0), ("#signin-password", user.1)] {
        element(client, Locator::Css(field), field)
            .await
            .send_keys(text)
            .await
            .expect("the field takes the text");
    }
    element(
        client,
        Locator::Css("form.signin-form button[type=submit]"),
        "the sign-in button",
    )
    .await
    .click()
    .await
    .expect("the button can be clicked");
    until(
        client,
        "the quotes page",
        "document.querySelector('#main h1')?.textContent === 'Quotes'",
    )
    .await;
}
