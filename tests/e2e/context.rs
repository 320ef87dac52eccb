//! The host's context from Settings to an open tool: an administrator of Other Co changes the
//! organisation's theme and time zone in Settings → Organisation while Job lookup is open in the
//! sidebar; the tool hears `context.changed`, bridge.js sets the dark theme's CSS custom properties
//! on its page, and `context.get()` answers the new time zone. The values are put back at the end
//! (the other tests share the server).

use crate::browser::Browser;
use crate::signin::sign_in;

/// Saves the organisation's theme and time zone in Settings → Organisation.
async fn save_organisation(browser: &Browser, theme: &str, time_zone: &str) {
    browser.go("/#/settings/organisation").await;
    // A toast left from an earlier save would pass the wait below before this save lands.
    browser.dismiss_toasts().await;
    browser
        .find("#org-theme")
        .await
        .select_by_value(theme)
        .await
        .unwrap();
    browser
        .find("#org-time-zone")
        .await
        .select_by_value(time_zone)
        .await
        .unwrap();
    browser.press("Save organisation").await;
    browser
        .until(
            "the saved toast",
            "[...document.querySelectorAll('.toast')].some((t) => t.textContent.includes('organisation\\'s settings are saved'))",
        )
        .await;
}

#[tokio::test]
async fn a_change_in_settings_reaches_the_open_tool_as_context_changed_and_its_theme() {
    let browser = Browser::open().await;
    sign_in(&browser, "admin@other.test", "Oscar Other").await;
    browser.go("/#/tools").await;
    browser.press("Open Job lookup").await;
    browser.enter_frame("#sidebar-frame iframe").await;
    browser
        .until(
            "the organisation's light theme on the tool's page",
            "document.documentElement.dataset.tbTheme === 'light' && bridge.supports('context.changed')",
        )
        .await;
    // Keeps what the tool hears, and its time zone after each change.
    browser
        .client
        .execute(
            "window.heardContext = []; bridge.on('context.changed', async (changed) => { \
             const context = await bridge.context.get(); \
             window.heardContext.push({ changed, timeZone: context.timeZone }); });",
            vec![],
        )
        .await
        .unwrap();
    let light = browser
        .client
        .execute(
            "return document.documentElement.style.getPropertyValue('--tb-bg');",
            vec![],
        )
        .await
        .unwrap();
    browser.leave_frame().await;

    save_organisation(&browser, "dark", "Asia/Tokyo").await;
    // The app follows too.
    browser
        .until(
            "the app's dark theme",
            "document.documentElement.dataset.theme === 'dark'",
        )
        .await;
    browser.enter_frame("#sidebar-frame iframe").await;
    browser
        .until(
            "the dark theme on the tool's page",
            "document.documentElement.dataset.tbTheme === 'dark' \
             && getComputedStyle(document.documentElement).colorScheme === 'dark'",
        )
        .await;
    browser
        .until(
            "context.changed with the new time zone",
            "window.heardContext.some((heard) => heard.changed.theme === 'dark' \
             && heard.changed.timeZone === 'Asia/Tokyo' && heard.timeZone === 'Asia/Tokyo')",
        )
        .await;
    let dark = browser
        .client
        .execute(
            "return document.documentElement.style.getPropertyValue('--tb-bg');",
            vec![],
        )
        .await
        .unwrap();
    assert_ne!(light, dark, "--tb-bg stayed {light}");
    browser.leave_frame().await;
    browser.screenshot("context-dark").await;

    save_organisation(&browser, "light", "Australia/Perth").await;
    browser.enter_frame("#sidebar-frame iframe").await;
    browser
        .until(
            "the light theme again",
            "document.documentElement.dataset.tbTheme === 'light'",
        )
        .await;
    browser.leave_frame().await;
    browser.close().await;
}

/// Your preferences, for any role: a field user, who may not open Settings, follows their name to
/// the page, chooses a time zone of their own, and the app's context (what tools are given) then
/// names it; choosing "The organisation's" again puts the organisation's back.
#[tokio::test]
async fn any_user_chooses_their_own_time_zone_under_their_name() {
    let browser = Browser::open().await;
    sign_in(&browser, "field@harbour.test", "Finn Field").await;
    browser.click(&browser.find("#account-name").await).await;
    browser.find("#own-time-zone").await;
    assert_eq!(browser.text("#main h1").await, "Your preferences");
    let organisation = own_zone(&browser).await;
    for (chosen, expected) in [
        ("Europe/London", "Europe/London"),
        ("", organisation.as_str()),
    ] {
        // The toast of the first save is gone before the second, so the wait below is for
        // the second's.
        browser.dismiss_toasts().await;
        browser
            .find("#own-time-zone")
            .await
            .select_by_value(chosen)
            .await
            .unwrap();
        browser.press("Save my time zone").await;
        browser
            .until(
                "the saved toast",
                "[...document.querySelectorAll('.toast')].some((t) => t.textContent.includes('Your time zone is saved'))",
            )
            .await;
        assert_eq!(
            own_zone(&browser).await,
            expected,
            "after choosing {chosen:?}"
        );
    }
    browser.close().await;
}

/// The time zone the session's context names now.
async fn own_zone(browser: &Browser) -> String {
    let zone = browser
        .run("return (await (await fetch('/api/session')).json()).timeZone;")
        .await;
    zone.as_str()
        .unwrap_or_else(|| panic!("no time zone: {zone}"))
        .to_owned()
}
