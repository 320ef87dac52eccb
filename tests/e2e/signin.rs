//! Signing in and out of the reference app.

use crate::browser::Browser;

/// The demo password every seeded user has.
pub(crate) const PASSWORD: &str = "demo-password";

/// Fills the sign-in form on the app's first page and submits it.
async fn submit_sign_in(browser: &Browser, email: &str, password: &str) {
    browser.go("/").await;
    browser
        .find("#signin-email")
        .await
        .send_keys(email)
        .await
        .unwrap();
    browser
        .find("#signin-password")
        .await
        .send_keys(password)
        .await
        .unwrap();
    browser
        .find("form.signin-form button[type=submit]")
        .await
        .click()
        .await
        .unwrap();
}

/// Signs `email` in from the sign-in page and waits for the app to show them, and then the
/// quotes it opens on: the app renders that route only once it has loaded the tools, and a test
/// that went elsewhere before then would see its page rendered again under it.
pub(crate) async fn sign_in(browser: &Browser, email: &str, name: &str) {
    submit_sign_in(browser, email, PASSWORD).await;
    browser
        .until(
            "the signed-in user's name in the header",
            &format!("document.getElementById('account-name')?.textContent === {name:?}"),
        )
        .await;
    browser
        .until(
            "the quotes page after sign-in",
            "document.querySelector('#main h1')?.textContent === 'Quotes'",
        )
        .await;
}

#[tokio::test]
async fn a_user_signs_in_sees_their_role_and_signs_out() {
    let browser = Browser::open().await;
    browser.go("/").await;
    browser.find("#signin-email").await;
    // The server has demo data: the page offers its sign-ins (a production server has none).
    browser
        .until(
            "the demo sign-ins under the form",
            "!document.getElementById('signin-demo').hidden && \
             [...document.querySelectorAll('#signin-demo li code')].map((code) => code.textContent).join() \
             === 'super@harbour.test,admin@harbour.test,office@harbour.test,field@harbour.test,admin@other.test'",
        )
        .await;
    browser.screenshot("sign-in").await;

    sign_in(&browser, "admin@harbour.test", "Alex Admin").await;
    let role = browser.find("#account-role").await.text().await.unwrap();
    assert_eq!(role, "Admin");
    browser
        .until("the navigation", "!document.getElementById('nav').hidden")
        .await;

    browser.find("#sign-out").await.click().await.unwrap();
    browser.find("#signin-email").await;
    browser
        .until(
            "the header without the user",
            "document.getElementById('account').hidden",
        )
        .await;
    browser.close().await;
}

#[tokio::test]
async fn a_wrong_password_is_explained_next_to_the_form() {
    let browser = Browser::open().await;
    submit_sign_in(&browser, "office@harbour.test", "not-the-password").await;
    browser
        .until(
            "the sign-in error",
            "!document.getElementById('signin-error').hidden",
        )
        .await;
    let said = browser.find("#signin-error").await.text().await.unwrap();
    assert!(said.contains("wrong"), "{said}");
    browser.close().await;
}
