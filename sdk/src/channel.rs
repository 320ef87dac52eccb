//! The handshake with the host page and the private port it hands over.
//!
//! Until welcomed, the SDK posts a hello to `window.parent` with back-off
//! (50 ms doubling to 1 s). It accepts one welcome, only from
//! `window.parent`, carrying exactly one port; any other welcome is reported
//! to the host as forged, and everything else on the window is ignored (the
//! host's notifications count only on the port). If no welcome arrives
//! within the connect deadline, waiting calls fail with `NOT_CONNECTED`; a
//! host that answers later still connects.
//!
//! The welcome lists the 2.1.0 `methods` granted to the tool and, from a
//! host that has them, the extensions it offers (`capabilities`; none from
//! an older host).

use alloc::rc::Rc;

use js_sys::{Array, Function, Object, Promise};
use wasm_bindgen::prelude::*;

use crate::error::NOT_CONNECTED;
use crate::js::{Message, Port};
use crate::object::{deferred, duration, get, object, set, take_all, text};
use crate::sdk::{Act, Sdk};
use crate::{PROTOCOL_VERSION, SDK_VERSION};

/// First hello repeat, in ms.
pub(crate) const FIRST_HELLO_DELAY_MS: i32 = 50;
const MAX_HELLO_DELAY_MS: i32 = 1000;

const NOT_FRAMED: &str = "this page is not inside a host frame: tools run inside the app (or `toolbridge serve --dev-tool`), where the host answers the bridge";

/// `{toolbridge:"hello", protocol, sdkVersion, instance}` with a random
/// instance token (the digits of a random number), so the host can tell a
/// reload.
pub(crate) fn hello_message() -> Object {
    let instance = text(&[&js_sys::Math::random().into()]);
    object(&[
        ("toolbridge", &"hello".into()),
        ("protocol", &PROTOCOL_VERSION.into()),
        ("sdkVersion", &SDK_VERSION.into()),
        ("instance", &instance),
    ])
}

/// A copy of the list of names `data[key]`; empty when there is none.
fn names(data: &JsValue, key: &str) -> Array {
    let list = get(data, key);
    if Array::is_array(&list) {
        Array::from(&list)
    } else {
        Array::new()
    }
}

impl Sdk {
    /// Starts the handshake, or settles at once on "no host" outside a frame.
    pub(crate) fn connect(self: &Rc<Self>) {
        let parent = self.window.parent();
        if !parent.is_object() || Object::is(&parent, &self.window) {
            set(&self.link, "reason", &NOT_FRAMED.into());
            return;
        }
        self.guard();
        self.window.listen(
            "message",
            &self.function(Act::WindowMessage, JsValue::UNDEFINED),
        );
        self.window.set_timeout(
            &self.function(Act::ConnectDeadline, JsValue::UNDEFINED),
            self.config.connect_timeout_ms,
        );
        self.hello_tick();
    }

    /// `bridge.ready()`: resolves with `{toolType, methods, capabilities,
    /// sdkVersion, protocol}` once connected; rejects with `NOT_CONNECTED`
    /// when no host answers.
    pub(crate) fn ready(&self) -> Promise {
        let (promise, resolve, reject) = deferred();
        let info = get(&self.link, "info");
        if !info.is_undefined() {
            let _ = resolve.call1(&JsValue::UNDEFINED, &info);
        } else if let Some(reason) = self.no_host_reason() {
            let _ = reject.call1(
                &JsValue::UNDEFINED,
                &self.errors.local(NOT_CONNECTED, &reason),
            );
        } else {
            self.waiters.push(&Array::of2(&resolve, &reject));
        }
        promise
    }

    /// `bridge.supports(name)`: whether the host granted this method, or
    /// offers this extension, to this tool; `false` until connected.
    pub(crate) fn supports(&self, name: &JsValue) -> bool {
        let info = get(&self.link, "info");
        !info.is_undefined()
            && ["methods", "capabilities"]
                .into_iter()
                .any(|list| get(&info, list).unchecked_into::<Array>().includes(name, 0))
    }

    /// Posts the hello (until welcomed) and schedules the next one.
    pub(crate) fn hello_tick(&self) {
        if self.port().is_some() {
            return;
        }
        self.window.parent().post(&self.hello, "*");
        let delay = self.hello_delay_ms.get();
        self.hello_delay_ms.set((delay * 2).min(MAX_HELLO_DELAY_MS));
        if let Some(handlers) = self.handlers() {
            self.window.set_timeout(&handlers.hello_tick, delay);
        }
    }

    /// A message on the window: only a welcome from the parent counts.
    pub(crate) fn window_message(self: &Rc<Self>, event: &JsValue) {
        let event = event.unchecked_ref::<Message>();
        let data = event.data();
        if get(&data, "toolbridge") != "welcome" {
            return;
        }
        let from_parent = Object::is(&self.window.parent(), &event.source());
        // The host welcomes a page once: another welcome is some other
        // window trying to take over the tool's channel.
        if !from_parent || self.port().is_some() {
            self.report(
                "forgedWelcome",
                &text(&[&"from ".into(), &event.origin()]).into(),
            );
            return;
        }
        let ports = event.ports();
        if get(&data, "protocol").as_f64() != Some(f64::from(PROTOCOL_VERSION))
            || ports.length() != 1
        {
            return;
        }
        // `MessageEvent.ports` only ever holds ports.
        let port: Port = ports.get(0).unchecked_into();
        // An older host sends no `capabilities`: it offers no extension.
        let capabilities = names(&data, "capabilities");
        let info = object(&[
            ("toolType", &get(&data, "toolType")),
            ("methods", &names(&data, "methods")),
            ("capabilities", &capabilities),
            ("sdkVersion", &SDK_VERSION.into()),
            ("protocol", &PROTOCOL_VERSION.into()),
        ]);
        set(&self.link, "port", &port);
        set(&self.link, "info", &info);
        self.watch_requests(&event.origin());
        set(&self.link, "reason", &JsValue::UNDEFINED);
        crate::theme::apply(&self.window, &get(&data, "theme"));
        self.flush_queue(&port);
        for waiter in take_all(&self.waiters).iter() {
            let _ = Function::from(waiter.unchecked_into::<Array>().get(0))
                .call1(&JsValue::UNDEFINED, &info);
        }
        if capabilities.includes(&"ui.autoResize".into(), 0) {
            self.resize.offered.set(true);
            self.watch_size();
        }
    }

    /// No welcome within the connect deadline: give up waiting.
    pub(crate) fn connect_deadline(&self) {
        if self.port().is_some() || self.no_host_reason().is_some() {
            return;
        }
        let reason: JsValue = text(&[
            &"no host answered within ".into(),
            &duration(self.config.connect_timeout_ms),
            &": this page is not running inside a toolbridge host (open the tool from the app, or run it with `toolbridge serve --dev-tool`)".into(),
        ])
        .into();
        set(&self.link, "reason", &reason);
        self.fail_queue(&reason);
        for waiter in take_all(&self.waiters).iter() {
            let error = self.errors.local(NOT_CONNECTED, &reason);
            let _ = Function::from(waiter.unchecked_into::<Array>().get(1))
                .call1(&JsValue::UNDEFINED, &error);
        }
    }
}
