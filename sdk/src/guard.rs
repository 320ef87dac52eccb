//! What a tool's frame refuses, made visible to the host.
//!
//! The sandbox, the tool's own origin and the server refuse a tool page the
//! app's window, cookies and session whatever the page does; this module only
//! tells the host's debug log that the page tried, with an `sdk.blocked`
//! notification on the port (queued until the handshake, like calls):
//! - `alert`, `confirm` and `prompt` warn on the console and answer at once,
//!   as the sandbox's own do, and are reported (`modal`);
//! - an uncaught `SecurityError` (reaching into the app's window, navigating
//!   it) is reported (`securityError`);
//! - whatever the tool origin's Content-Security-Policy refuses (a request
//!   to another origin, the app's included; an inline script) is reported
//!   with the directive and the URL (`policy`);
//! - a `fetch`, `XMLHttpRequest` or beacon to the app's origin that the
//!   policy let through (a server without it) is reported
//!   (`appRequest`) from the page's resource timing, also when the browser
//!   refused it, and also when it was made before the welcome named that
//!   origin;
//! - a welcome from any window but the parent, or a second one, is reported
//!   (`forgedWelcome`) by the channel.
//!
//! A page that catches its own errors, or replaces these functions again,
//! goes unreported; it is refused all the same.

use alloc::rc::Rc;

use js_sys::{Function, JsString};
use wasm_bindgen::prelude::*;

use crate::js::{self, Entries, PerformanceObserver};
use crate::object::{get, object, set, text};
use crate::sdk::{Act, Sdk};

/// The notification's method, as the host reads it.
const BLOCKED_METHOD: &str = "sdk.blocked";

/// The dialog functions a tool frame has no use for.
const DIALOGS: [&str; 3] = ["alert", "confirm", "prompt"];

/// What one of the guard's handlers watches.
#[derive(Clone, Copy)]
pub(crate) enum Watch {
    /// A replaced dialog function, by its place in [`DIALOGS`].
    Modal(usize),
    /// The window's `error` and `unhandledrejection` events.
    Error,
    /// The window's `securitypolicyviolation` events.
    Policy,
    /// The page's resource timing entries.
    Requests,
}

impl Sdk {
    /// Installs the reporting; only inside a frame, where the sandbox
    /// applies. Requests are watched from the welcome on.
    pub(crate) fn guard(self: &Rc<Self>) {
        for (index, name) in DIALOGS.into_iter().enumerate() {
            set(&self.window, name, &self.watcher(Watch::Modal(index)));
        }
        let on_error = self.watcher(Watch::Error);
        self.window.listen("error", &on_error);
        self.window.listen("unhandledrejection", &on_error);
        self.window
            .listen("securitypolicyviolation", &self.watcher(Watch::Policy));
    }

    /// Watches the page's requests for the app's origin, `origin`, including
    /// those made before now (the browser keeps their entries).
    pub(crate) fn watch_requests(self: &Rc<Self>, origin: &JsValue) {
        set(&self.link, "origin", origin);
        let options = object(&[("type", &"resource".into()), ("buffered", &true.into())]);
        PerformanceObserver::new(&self.watcher(Watch::Requests)).observe(&options);
    }

    fn watcher(self: &Rc<Self>, watch: Watch) -> Function {
        self.function(Act::Watch(watch), JsValue::UNDEFINED)
    }

    /// Handles what `watch` saw; the value is what a replaced dialog
    /// function returns.
    pub(crate) fn watched(&self, watch: Watch, argument: &JsValue) -> JsValue {
        match watch {
            Watch::Modal(index) => {
                let name = JsValue::from(DIALOGS.get(index).copied().unwrap_or_default());
                js::warn(
                    &text(&[
                        &"toolbridge: ".into(),
                        &name,
                        &"() does nothing in a tool frame (it has no modal dialogs): show feedback in the page instead".into(),
                    ])
                    .into(),
                );
                self.report("modal", &text(&[&name, &"(): ".into(), argument]));
                // What each answers at once, as the sandbox's own do.
                return match index {
                    1 => JsValue::FALSE,
                    2 => JsValue::NULL,
                    _ => JsValue::UNDEFINED,
                };
            }
            Watch::Error => {
                // `error` events carry the exception as `error`, rejections
                // as `reason`.
                let mut error = get(argument, "error");
                if error.is_undefined() {
                    error = get(argument, "reason");
                }
                if get(&error, "name") == "SecurityError" {
                    self.report("securityError", &get(&error, "message"));
                }
            }
            Watch::Policy => {
                self.report(
                    "policy",
                    &text(&[
                        &get(argument, "effectiveDirective"),
                        &" ".into(),
                        &get(argument, "blockedURI"),
                    ])
                    .into(),
                );
            }
            Watch::Requests => {
                let prefix = text(&[&get(&self.link, "origin"), &"/".into()]);
                for entry in argument.unchecked_ref::<Entries>().all().iter() {
                    let url: JsString = get(&entry, "name").unchecked_into();
                    let made_by = get(&entry, "initiatorType");
                    let request =
                        made_by == "fetch" || made_by == "xmlhttprequest" || made_by == "beacon";
                    if request && url.slice(0, prefix.length()) == prefix {
                        self.report("appRequest", &text(&[&made_by, &" ".into(), &url]));
                    }
                }
            }
        }
        JsValue::UNDEFINED
    }

    /// Tells the host what the frame refused: `kind` as the host knows it,
    /// `detail` a string.
    pub(crate) fn report(&self, kind: &str, detail: &JsValue) {
        let params = object(&[("kind", &kind.into()), ("detail", detail)]);
        self.notify(BLOCKED_METHOD, &params);
    }
}
