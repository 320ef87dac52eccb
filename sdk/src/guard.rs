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

use js_sys::{Array, Function, JsString, Reflect};
use wasm_bindgen::prelude::*;

use crate::object::{function, get, object, set, text};
use crate::sdk::Sdk;

/// The notification's method, as the host reads it.
const BLOCKED_METHOD: &str = "sdk.blocked";

/// What one of the guard's handlers watches. (One handler type for all of
/// them keeps one copy of the closure code in the script.)
#[derive(Clone, Copy)]
enum Watch {
    /// A replaced dialog function, by name.
    Modal(&'static str),
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
        for name in ["alert", "confirm", "prompt"] {
            set(&self.window, name, &self.watcher(Watch::Modal(name)));
        }
        let on_error = self.watcher(Watch::Error);
        for kind in ["error", "unhandledrejection"] {
            let _ = self
                .window
                .add_event_listener_with_callback(kind, &on_error);
        }
        let _ = self.window.add_event_listener_with_callback(
            "securitypolicyviolation",
            &self.watcher(Watch::Policy),
        );
    }

    /// Watches the page's requests for the app's origin, `origin`, including
    /// those made before now (the browser keeps their entries).
    pub(crate) fn watch_requests(self: &Rc<Self>, origin: &JsValue) {
        set(&self.link, "origin", origin);
        let observer = get(&self.window, "PerformanceObserver")
            .dyn_into::<Function>()
            .ok()
            .and_then(|class| {
                Reflect::construct(&class, &Array::of1(&self.watcher(Watch::Requests))).ok()
            });
        if let Some(observer) = observer {
            let options = object(&[("type", &"resource".into()), ("buffered", &true.into())]);
            if let Ok(observe) = get(&observer, "observe").dyn_into::<Function>() {
                let _ = observe.call1(&observer, &options);
            }
        }
    }

    fn watcher(self: &Rc<Self>, watch: Watch) -> Function {
        let sdk = Rc::clone(self);
        function(move |argument| sdk.watched(watch, &argument))
    }

    fn watched(&self, watch: Watch, argument: &JsValue) -> JsValue {
        match watch {
            Watch::Modal(name) => {
                web_sys::console::warn_1(
                    &text(&[
                        &"toolbridge: ".into(),
                        &name.into(),
                        &"() does nothing in a tool frame (it has no modal dialogs): show feedback in the page instead".into(),
                    ])
                    .into(),
                );
                self.report("modal", &text(&[&name.into(), &"(): ".into(), argument]));
                match name {
                    "confirm" => JsValue::FALSE,
                    "prompt" => JsValue::NULL,
                    _ => JsValue::UNDEFINED,
                }
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
                JsValue::UNDEFINED
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
                JsValue::UNDEFINED
            }
            Watch::Requests => {
                let prefix = text(&[&get(&self.link, "origin"), &"/".into()]);
                let entries = get(argument, "getEntries")
                    .dyn_into::<Function>()
                    .and_then(|entries| entries.call0(argument));
                let Ok(entries) = entries else {
                    return JsValue::UNDEFINED;
                };
                for entry in entries.unchecked_into::<Array>().iter() {
                    let url: JsString = get(&entry, "name").unchecked_into();
                    let made_by = get(&entry, "initiatorType");
                    let request =
                        made_by == "fetch" || made_by == "xmlhttprequest" || made_by == "beacon";
                    if request && url.slice(0, prefix.length()) == prefix {
                        self.report("appRequest", &text(&[&made_by, &" ".into(), &url]));
                    }
                }
                JsValue::UNDEFINED
            }
        }
    }

    /// Tells the host what the frame refused: `kind` as the host knows it,
    /// `detail` a string.
    pub(crate) fn report(&self, kind: &str, detail: &JsValue) {
        let params = object(&[("kind", &kind.into()), ("detail", detail)]);
        let notification = object(&[
            ("jsonrpc", &self.keys.version),
            ("method", &BLOCKED_METHOD.into()),
            ("params", &params),
        ]);
        match self.port() {
            Some(port) => {
                let _ = port.post_message(&notification);
            }
            // No id: the queue sends it without waiting for a reply.
            None => {
                self.queue
                    .push(&Array::of2(&JsValue::UNDEFINED, &notification));
            }
        }
    }
}
