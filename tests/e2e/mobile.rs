//! The reference app on a phone and on a tablet: Chromium's mobile emulation
//! (`goog:chromeOptions.mobileEmulation`: the device's viewport and pixel ratio, a touch screen,
//! and its Safari's user agent) at 390 × 844 (an iPhone) and 820 × 1180 (an iPad). At each size an
//! Admin signs in, starts a quote, mounts the flooring estimator, adds rooms inside its frame,
//! saves, and the lines are read back through the REST API; on the way every screen (the header's
//! account menu, the Tools menu, a confirmation dialog, the preview, the tools with a standalone
//! tool in the sidebar, the debug panel, the four settings pages, the user's preferences) is
//! checked: no page-level sideways scroll, every visible control at least 44 × 44 CSS px (WCAG
//! 2.5.5 Target Size (Enhanced), Apple's guideline), every tool frame inside the viewport, the
//! quote's lines without a sideways scroll of their own, and axe-core finding nothing. Each
//! screen's screenshot goes to `mobile/<width>x<height>/<screen>.png` in the suite's screenshot
//! folder; a failure lists every screen's problems at once, by element and size.
//!
//! Chromium only: geckodriver has no mobile emulation (Firefox's Responsive Design Mode is a
//! devtools panel, with no `WebDriver` capability), nor has WebKitWebDriver (MiniBrowser has no
//! device mode at all), so in Firefox and WebKit these tests return at once.

use std::path::PathBuf;

use fantoccini::Locator;
use fantoccini::actions::{InputSource, MouseActions, PointerAction};
use serde_json::{Value, json};

use toolbridge_e2e::server::{ServerOptions, ToolbridgeServer};

use crate::accessibility::axe_violations;
use crate::browser::{Browser, Engine, quote_on, setting};
use crate::quote_editor::{estimate, open_tool};
use crate::signin::sign_in;

/// A device the app is tried on, as Chromium emulates it.
struct Device {
    /// What the messages call it.
    name: &'static str,
    /// The viewport, in CSS pixels.
    width: u32,
    height: u32,
    /// Device pixels per CSS pixel (and so the screenshots' scale).
    pixel_ratio: u32,
    /// The `User-Agent` its Safari sends.
    user_agent: &'static str,
}

/// An iPhone 15's viewport, with iOS 17's Safari.
const PHONE: Device = Device {
    name: "phone",
    width: 390,
    height: 844,
    pixel_ratio: 3,
    user_agent: "Mozilla/5.0 (iPhone; CPU iPhone OS 17_5 like Mac OS X) AppleWebKit/605.1.15 \
                 (KHTML, like Gecko) Version/17.5 Mobile/15E148 Safari/604.1",
};

/// An iPad Air's viewport (portrait), with iPadOS 17's Safari as it names itself when asked for
/// the mobile site (by default it sends a Mac's; the app reads neither).
const TABLET: Device = Device {
    name: "tablet",
    width: 820,
    height: 1180,
    pixel_ratio: 2,
    user_agent: "Mozilla/5.0 (iPad; CPU OS 17_5 like Mac OS X) AppleWebKit/605.1.15 \
                 (KHTML, like Gecko) Version/17.5 Mobile/15E148 Safari/604.1",
};

/// The smallest a control may be, both ways, in CSS pixels.
const MIN_TARGET: u32 = 44;

/// What the page's layout breaks, measured in the page: called with the smallest target and the
/// viewport's width, it answers `{scrollWidth, wide, small, frames, lines}`, each list naming the
/// elements (tag, id or classes, text) with their sizes.
///
/// The controls are links, buttons, inputs, selects, text areas, `summary` and anything else in
/// the tab order, where they show (a box on the page: not `display: none`, not hidden, not placed
/// off the page as the skip link is until it has focus). A checkbox's or radio button's target is
/// the box with its labels, which toggle it too. Links inside running text are exempt, as WCAG
/// 2.5.5 exempts inline targets "in a sentence or block of text": an inline link whose block has
/// other text.
const LAYOUT: &str = r#"
const [min, width] = arguments;
const round = (n) => Math.round(n * 10) / 10;
const describe = (el) => {
  let what = el.tagName.toLowerCase();
  if (el.id) what += `#${el.id}`;
  else if (el.classList.length) what += `.${[...el.classList].join(".")}`;
  const text = (el.getAttribute("aria-label") || el.textContent || el.value || "").trim().replace(/\s+/g, " ").slice(0, 40);
  return text ? `${what} "${text}"` : what;
};
const visible = (el) => {
  if (!el.getClientRects().length || getComputedStyle(el).visibility !== "visible") return false;
  const r = el.getBoundingClientRect();
  return r.right + scrollX > 0 && r.bottom + scrollY > 0;
};
const inRunningText = (el) => {
  if (el.tagName !== "A" || getComputedStyle(el).display !== "inline") return false;
  let block = el.parentElement;
  while (block && getComputedStyle(block).display.startsWith("inline")) block = block.parentElement;
  return Boolean(block) && block.textContent.trim().length > el.textContent.trim().length;
};
const target = (el) => {
  const rects = [el.getBoundingClientRect()];
  if ((el.type === "checkbox" || el.type === "radio") && el.labels) {
    rects.push(...[...el.labels].filter(visible).map((label) => label.getBoundingClientRect()));
  }
  return {
    width: Math.max(...rects.map((r) => r.right)) - Math.min(...rects.map((r) => r.left)),
    height: Math.max(...rects.map((r) => r.bottom)) - Math.min(...rects.map((r) => r.top)),
  };
};
const controls = [...document.querySelectorAll(
  "a[href], button, input:not([type=hidden]), select, textarea, summary, [role=button], [role=link], [tabindex]:not([tabindex='-1'])",
)].filter(visible).filter((el) => !inRunningText(el));
const small = controls.map((el) => [el, target(el)])
  .filter(([, box]) => box.width < min - 0.01 || box.height < min - 0.01)
  .map(([el, box]) => `${describe(el)} ${round(box.width)} × ${round(box.height)}`);
const scroller = (el) => {
  for (let up = el.parentElement; up && up !== document.body; up = up.parentElement) {
    if (getComputedStyle(up).overflowX !== "visible") return up;
  }
  return null;
};
const wide = [...document.body.querySelectorAll("*")].filter(visible)
  .filter((el) => el.getBoundingClientRect().right > width + 0.5)
  .filter((el) => !scroller(el) || ["absolute", "fixed"].includes(getComputedStyle(el).position))
  .slice(0, 5).map((el) => `${describe(el)} reaching ${round(el.getBoundingClientRect().right)} px`);
const frames = [...document.querySelectorAll("iframe")].filter(visible)
  .map((frame) => [frame, frame.getBoundingClientRect()])
  .filter(([, r]) => r.left < -0.5 || r.right > width + 0.5)
  .map(([frame, r]) => `${describe(frame)} from ${round(r.left)} to ${round(r.right)} px`);
const lines = [...document.querySelectorAll(".table-wrap")].filter((wrap) => wrap.querySelector(".lines-table"))
  .filter((wrap) => wrap.scrollWidth > wrap.clientWidth + 1)
  .map((wrap) => `${wrap.scrollWidth} px of lines in ${wrap.clientWidth} px`);
return { scrollWidth: document.documentElement.scrollWidth, wide, small, frames, lines };
"#;

/// One device's walk through the app: its browser, and the problems found so far.
struct Walk {
    browser: Browser,
    device: &'static Device,
    /// `<screen>: <what is wrong>`, one per screen that fails a check.
    problems: Vec<String>,
    /// The screens checked.
    screens: Vec<&'static str>,
}

impl Walk {
    /// What [`LAYOUT`] measures in the page now.
    async fn layout(&self) -> Value {
        self.browser
            .client
            .execute(LAYOUT, vec![json!(MIN_TARGET), json!(self.device.width)])
            .await
            .unwrap()
    }

    /// Checks what the page shows now, called `screen`, and saves its screenshot.
    async fn check(&mut self, screen: &'static str) {
        let browser = &self.browser;
        // The pointer stays where the last click left it, and a toast that appears under it
        // waits there until it leaves: it goes to the header's top edge first.
        let pointer = MouseActions::new("mobile-pointer".to_owned()).then(PointerAction::MoveTo {
            duration: None,
            x: 1,
            y: 1,
        });
        browser.client.perform_actions(pointer).await.unwrap();
        browser
            .until(
                "the page's fonts and images",
                "document.fonts.status === 'loaded' && [...document.images].every((image) => image.complete)",
            )
            .await;
        let layout = self.layout().await;
        let violations = axe_violations(browser).await;
        let size = format!("{}x{}", self.device.width, self.device.height);
        browser.screenshot(&format!("mobile/{size}/{screen}")).await;

        let list = |key: &str| -> Vec<String> {
            layout[key]
                .as_array()
                .unwrap_or_else(|| panic!("no {key} in {layout}"))
                .iter()
                .map(|item| item.as_str().unwrap().to_owned())
                .collect()
        };
        let mut found = Vec::new();
        let scroll_width = layout["scrollWidth"].as_f64().unwrap();
        if scroll_width > f64::from(self.device.width) {
            found.push(format!(
                "the page scrolls sideways, {scroll_width} px wide in {} px (sticking out: {})",
                self.device.width,
                list("wide").join(", ")
            ));
        }
        for (key, what) in [
            ("small", "controls under 44 × 44 CSS px"),
            ("frames", "frames outside the viewport"),
            ("lines", "the lines scroll sideways"),
        ] {
            let items = list(key);
            if !items.is_empty() {
                found.push(format!("{what}: {}", items.join(", ")));
            }
        }
        if !violations.is_empty() {
            found.push(format!("axe-core: {}", violations.join("; ")));
        }
        if !found.is_empty() {
            // Printed at once too: a later step that cannot go on (a control out of reach) ends
            // the walk before the summary.
            let problem = format!("{screen}:\n    {}", found.join("\n    "));
            println!("at {size}, {problem}");
            self.problems.push(problem);
        }
        self.screens.push(screen);
    }

    /// Fails with every problem found, if there were any.
    fn finish(self) -> Browser {
        let Self {
            browser,
            device,
            problems,
            screens,
        } = self;
        assert!(
            problems.is_empty(),
            "at {} × {} ({}), {} of the {} screens ({}) fail:\n  {}",
            device.width,
            device.height,
            device.name,
            problems.len(),
            screens.len(),
            screens.join(", "),
            problems.join("\n  ")
        );
        browser
    }
}

/// Scrolls the element `css` to the top of the viewport, under the header where it stays on top
/// (a tablet's), for a screenshot of it.
async fn scroll_to(browser: &Browser, css: &str) {
    browser.find(css).await;
    browser
        .client
        .execute(
            "document.querySelector(arguments[0]).scrollIntoView({ block: 'start' });
             const header = document.querySelector('.app-header');
             if (getComputedStyle(header).position === 'sticky') window.scrollBy(0, -header.offsetHeight);",
            vec![json!(css)],
        )
        .await
        .unwrap();
}

/// Whether the header's account controls are folded behind the Account button (on a phone).
async fn account_folded(browser: &Browser) -> bool {
    browser
        .client
        .execute(
            "const toggle = document.getElementById('account-toggle');
             return toggle !== null && getComputedStyle(toggle).display !== 'none';",
            vec![],
        )
        .await
        .unwrap()
        == Value::Bool(true)
}

/// Clicks the header's account control `css` (the user's name, Debug), opening the Account menu
/// first where it is folded.
async fn account_control(browser: &Browser, css: &str) {
    if account_folded(browser).await
        && browser
            .find("#account-toggle")
            .await
            .attr("aria-expanded")
            .await
            .unwrap()
            .as_deref()
            != Some("true")
    {
        let toggle = browser.find("#account-toggle").await;
        browser.click(&toggle).await;
    }
    let control = browser.find(css).await;
    browser.click(&control).await;
}

/// The sign-in page, then the quotes list as an Admin, and the header's account controls: behind
/// the Account button on a phone, in the header on a tablet.
async fn sign_in_and_list(walk: &mut Walk) {
    walk.browser.go("/").await;
    walk.browser.find("#signin-email").await;
    walk.browser
        .until(
            "the emulated device",
            &format!(
                "window.innerWidth === {} && window.innerHeight === {} \
                 && navigator.maxTouchPoints > 0 && matchMedia('(pointer: coarse)').matches",
                walk.device.width, walk.device.height
            ),
        )
        .await;
    walk.check("sign-in").await;

    sign_in(&walk.browser, "admin@harbour.test", "Alex Admin").await;
    walk.browser
        .until(
            "the quotes list",
            "document.querySelectorAll('.quotes-table tbody tr').length > 0",
        )
        .await;
    walk.check("quotes").await;

    the_checks_catch_a_broken_rule(walk).await;

    let folded = account_folded(&walk.browser).await;
    if folded != (walk.device.width <= 600) {
        walk.problems.push(format!(
            "header: the account controls fold behind the Account button on a phone, and only \
             there; here they are {}",
            if folded { "folded" } else { "not folded" }
        ));
    }
    if folded {
        let toggle = walk.browser.find("#account-toggle").await;
        walk.browser.click(&toggle).await;
        walk.browser
            .until(
                "the open account menu",
                "document.getElementById('sign-out').getClientRects().length > 0",
            )
            .await;
        walk.check("account-menu").await;
        walk.browser.click(&toggle).await;
        walk.browser
            .until(
                "the account menu closed",
                "document.getElementById('sign-out').getClientRects().length === 0",
            )
            .await;
    }
}

/// The checks can fail: on the quotes page, a rule that shrinks the New quote button to 30 px and
/// one that widens the heading past the viewport are caught, by name and size; then the page is
/// loaded again as it was.
async fn the_checks_catch_a_broken_rule(walk: &Walk) {
    walk.browser
        .client
        .execute(
            "const button = document.querySelector(\"a[href='#/quotes/new']\");
             button.style.minHeight = '0'; button.style.height = '30px';
             document.querySelector('#main h1').style.minWidth = `${arguments[0] + 100}px`;",
            vec![json!(walk.device.width)],
        )
        .await
        .unwrap();
    let layout = walk.layout().await;
    let caught = layout["small"].as_array().unwrap().iter().any(|offender| {
        offender.as_str().is_some_and(|text| {
            text.starts_with("a.button.primary \"New quote\"") && text.ends_with("× 30")
        })
    });
    assert!(caught, "the 30 px button is not caught: {layout}");
    assert!(
        layout["scrollWidth"].as_f64().unwrap() > f64::from(walk.device.width),
        "the wide heading is not caught: {layout}"
    );
    walk.browser.client.refresh().await.unwrap();
    walk.browser
        .until(
            "the quotes list again",
            "document.querySelectorAll('.quotes-table tbody tr').length > 0",
        )
        .await;
}

/// A new Draft from the New quote page, with one line, in the editor; then the Tools menu.
async fn new_quote(walk: &mut Walk) {
    let browser = &walk.browser;
    let new = browser.find("a[href='#/quotes/new']").await;
    browser.click(&new).await;
    browser.find("#nq-customer option:nth-child(2)").await;
    walk.check("new-quote").await;

    let browser = &walk.browser;
    browser
        .find("#nq-customer")
        .await
        .select_by(Locator::XPath(
            ".//option[starts-with(normalize-space(), 'Sophie Walker (')]",
        ))
        .await
        .unwrap();
    browser
        .find("#nq-product")
        .await
        .select_by(Locator::XPath(
            ".//option[starts-with(normalize-space(), 'SKIRT-05 ')]",
        ))
        .await
        .unwrap();
    let quantity = browser.find("#nq-qty").await;
    quantity.clear().await.unwrap();
    quantity.send_keys("18").await.unwrap();
    browser.press("Create quote").await;
    browser
        .until(
            "the new Draft in the editor",
            "location.hash.startsWith('#/quotes/') && location.hash !== '#/quotes/new' \
             && document.querySelectorAll('.lines-table tr.line').length === 1",
        )
        .await;
    walk.check("editor").await;

    let menu = walk.browser.find("button[aria-controls^=tools-menu]").await;
    walk.browser.click(&menu).await;
    walk.browser.find(".menu:not([hidden]) .menu-item").await;
    walk.check("tools-menu").await;
    walk.browser.click(&menu).await;
}

/// The flooring estimator mounted beside (under) the lines; two rooms added inside its frame,
/// which bring 2 lines and their 3 task lines; a Remove that asks first, and is cancelled.
async fn estimator(walk: &mut Walk) {
    open_tool(&walk.browser, "Flooring estimator").await;
    // Under the lines and the totals, the app brings the panel into sight, its head at least
    // (and a frame out of sight may not lay out its page).
    walk.browser
        .until(
            "the estimator's panel in sight",
            "(() => { const top = document.querySelector('.tool-panel').getBoundingClientRect().top; \
              return top >= 0 && top + 100 <= window.innerHeight; })()",
        )
        .await;
    walk.browser.enter_frame(".tool-panel iframe").await;
    walk.browser
        .until(
            "the estimator's catalog",
            "/loaded/.test(document.getElementById('catalog-status').textContent)",
        )
        .await;
    walk.browser
        .until(
            "the estimator's frame sized to its page",
            "document.documentElement.scrollHeight <= window.innerHeight + 1",
        )
        .await;
    walk.browser.leave_frame().await;
    scroll_to(&walk.browser, ".tool-panel").await;
    walk.check("tool").await;

    estimate(
        &walk.browser,
        &[
            ("Lounge", "4", "3.5", "OAK-01"),
            ("Landing", "5", "1.2", "VINYL-02"),
        ],
    )
    .await;
    walk.browser
        .until(
            "the estimator's lines in the editor",
            "document.querySelectorAll('.lines-table tr.line').length === 6",
        )
        .await;
    scroll_to(&walk.browser, ".lines-table tbody:nth-of-type(2)").await;
    walk.check("lines").await;

    let remove = walk
        .browser
        .find("button[aria-label='Remove Oak engineered board 14mm']")
        .await;
    walk.browser.click(&remove).await;
    walk.browser
        .find("#dialog[open] #dialog-buttons button[value=remove]")
        .await;
    walk.check("dialog").await;
    walk.browser
        .find("#dialog[open] #dialog-buttons button[value=cancel]")
        .await
        .click()
        .await
        .unwrap();
    walk.browser
        .until(
            "the dialog closed, the lines kept",
            "!document.getElementById('dialog').open \
             && document.querySelectorAll('.lines-table tr.line').length === 6",
        )
        .await;
}

/// Saves, checks through the REST API that the quote holds the six lines, and shows the preview.
async fn save(walk: &mut Walk, server: &ToolbridgeServer) {
    walk.browser.press("Save").await;
    walk.browser
        .until(
            "the saved quote",
            "document.querySelector('.dirty')?.hidden === true",
        )
        .await;
    walk.check("saved").await;

    let url = walk.browser.client.current_url().await.unwrap();
    let id = url.fragment().unwrap().trim_start_matches("/quotes/");
    let quote = quote_on(server, "mobile checks", id).await;
    let lines = quote["lines"].as_array().unwrap();
    let in_section = |name: &str| lines.iter().filter(|l| l["section"] == name).count();
    assert_eq!(
        lines.len(),
        6,
        "the first line and the estimator's 5: {quote}"
    );
    assert_eq!(
        (in_section("Lounge"), in_section("Landing")),
        (3, 2),
        "the board with its 2 task lines, the vinyl with its 1: {quote}"
    );

    walk.browser.press("Preview").await;
    walk.browser.find(".preview").await;
    walk.check("preview").await;
    walk.browser.press("Back to editor").await;
    walk.browser.find(".lines-table").await;
}

/// The Tools page, Quick quote open in the sidebar, and the debug panel with their calls.
async fn tools(walk: &mut Walk) {
    let nav = walk.browser.find("[data-nav=tools]").await;
    walk.browser.click(&nav).await;
    walk.browser
        .until(
            "the Tools page",
            "document.querySelector('#main h1')?.textContent === 'Tools' \
             && document.querySelector('.cards') !== null",
        )
        .await;
    walk.check("tools").await;

    walk.browser.press("Open Quick quote").await;
    walk.browser.enter_frame("#sidebar-frame iframe").await;
    walk.browser
        .until(
            "the quick quote's catalog",
            "/products/.test(document.getElementById('catalog-status').textContent)",
        )
        .await;
    walk.browser.leave_frame().await;
    scroll_to(&walk.browser, "#sidebar").await;
    walk.check("tools-sidebar").await;
    let close = walk.browser.find("#sidebar-close").await;
    walk.browser.click(&close).await;

    account_control(&walk.browser, "#debug-toggle").await;
    walk.browser
        .until(
            "the debug panel's calls",
            "document.querySelectorAll('#debug-rows tr').length > 0",
        )
        .await;
    scroll_to(&walk.browser, "#debug-panel").await;
    walk.check("debug").await;
    account_control(&walk.browser, "#debug-toggle").await;
    walk.browser
        .until(
            "the debug panel closed",
            "document.getElementById('debug-panel').hidden",
        )
        .await;
}

/// Settings' four tabs, then the user's own preferences under their name.
async fn settings(walk: &mut Walk) {
    let nav = walk.browser.find("[data-nav=settings]").await;
    walk.browser.click(&nav).await;
    walk.browser.find("#key-name").await;
    walk.check("settings-tokens").await;
    for (tab, ready, screen) in [
        (
            "tools",
            "document.querySelector('.view table.data')?.textContent.includes('Flooring estimator')",
            "settings-tools",
        ),
        (
            "webhooks",
            "document.getElementById('webhook-url') !== null",
            "settings-webhooks",
        ),
        (
            "organisation",
            "document.getElementById('org-currency') !== null",
            "settings-organisation",
        ),
    ] {
        let link = walk
            .browser
            .find(&format!(".subnav a[href='#/settings/{tab}']"))
            .await;
        walk.browser.click(&link).await;
        walk.browser.until(screen, ready).await;
        walk.check(screen).await;
    }

    account_control(&walk.browser, "#account-name").await;
    walk.browser.find("#own-time-zone").await;
    walk.check("preferences").await;
}

/// A fresh demo server for `device`'s walk: the suite's server holds what the other tests left,
/// and they must not meet this walk's quote either.
fn fresh_server(device: &Device) -> ToolbridgeServer {
    let binary = PathBuf::from(setting("TOOLBRIDGE_E2E_BIN"));
    let dir = std::env::temp_dir().join(format!("mobile-{}", device.name));
    ToolbridgeServer::start(&binary, &ServerOptions::new("mobile", dir, 1000)).unwrap()
}

/// The whole walk at `device`'s size.
async fn walk(device: &'static Device) {
    let server = fresh_server(device);
    let emulation = json!({
        "deviceMetrics": {
            "width": device.width,
            "height": device.height,
            "pixelRatio": device.pixel_ratio,
            "touch": true
        },
        "userAgent": device.user_agent
    });
    let browser =
        Browser::open_mobile(format!("http://localhost:{}", server.port()), emulation).await;
    let mut walk = Walk {
        browser,
        device,
        problems: Vec::new(),
        screens: Vec::new(),
    };
    sign_in_and_list(&mut walk).await;
    new_quote(&mut walk).await;
    estimator(&mut walk).await;
    save(&mut walk, &server).await;
    tools(&mut walk).await;
    settings(&mut walk).await;
    walk.finish().close().await;
}

#[tokio::test]
async fn on_a_phone_in_chromium_a_tool_fills_a_quote_and_every_screen_fits() {
    // Firefox and WebKit have no mobile emulation over WebDriver (see the module's comment).
    if Engine::current() != Engine::Chromium {
        return;
    }
    walk(&PHONE).await;
}

#[tokio::test]
async fn on_a_tablet_in_chromium_a_tool_fills_a_quote_and_every_screen_fits() {
    // Firefox and WebKit have no mobile emulation over WebDriver (see the module's comment).
    if Engine::current() != Engine::Chromium {
        return;
    }
    walk(&TABLET).await;
}
