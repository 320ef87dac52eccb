//! The handshake with the host page and the private port it hands over.
//!
//! Until welcomed, the SDK posts a hello to `window.parent` with back-off
//! (50 ms doubling to 1 s). It accepts one welcome, only from
//! `window.parent`, carrying exactly one port; any other welcome is reported
//! to the host as forged, and everything else on the window is ignored. If no welcome arrives within the connect deadline, waiting
//! calls fail with `NOT_CONNECTED`; a host that answers later still connects.

use alloc::rc::Rc;

use js_sys::{Array, Function, Object, Promise};
use wasm_bindgen::prelude::*;
use web_sys::{MessageEvent, MessagePort};

use crate::error::NOT_CONNECTED;
use crate::object::{duration, function, get, object, set, take_all, text};
use crate::sdk::Sdk;
use crate::{PROTOCOL_VERSION, SDK_VERSION};

/// First hello repeat, in ms.
pub(crate) const FIRST_HELLO_DELAY_MS: i32 = 50;
const MAX_HELLO_DELAY_MS: i32 = 1000;

const NOT_FRAMED: &str = "this page is not inside a host frame: tools run inside the app (or `toolbridge serve --dev-tool`), where the host answers the bridge";

/// `{toolbridge:"hello", protocol, sdkVersion, instance}` with a random
/// instance token, so the host can tell a reload.
pub(crate) fn hello_message() -> Object {
    let random = || {
        js_sys::Number::from(js_sys::Math::random())
            .to_string_with_radix(36)
            .map_or_else(|_| "0".into(), |digits| digits.slice(2, 12))
    };
    let instance = text(&[&random(), &random()]);
    object(&[
        ("toolbridge", &"hello".into()),
        ("protocol", &PROTOCOL_VERSION.into()),
        ("sdkVersion", &SDK_VERSION.into()),
        ("instance", &instance),
    ])
}

/// The handler that repeats the hello.
pub(crate) fn hello_tick_handler(sdk: &Rc<Sdk>) -> Function {
    let sdk = Rc::clone(sdk);
    function(move |_| {
        sdk.hello_tick();
        JsValue::UNDEFINED
    })
}

impl Sdk {
    /// Starts the handshake, or settles at once on "no host" outside a frame.
    pub(crate) fn connect(self: &Rc<Self>) {
        let framed = self
            .window
            .parent()
            .ok()
            .flatten()
            .is_some_and(|parent| !Object::is(&parent, &self.window));
        if !framed {
            set(&self.link, "reason", &NOT_FRAMED.into());
            return;
        }
        self.guard();
        let sdk = Rc::clone(self);
        let on_message = function(move |event| {
            sdk.window_message(event.unchecked_ref::<MessageEvent>());
            JsValue::UNDEFINED
        });
        let _ = self
            .window
            .add_event_listener_with_callback("message", &on_message);
        let sdk = Rc::clone(self);
        let on_deadline = function(move |_| {
            sdk.connect_deadline();
            JsValue::UNDEFINED
        });
        let _ = self
            .window
            .set_timeout_with_callback_and_timeout_and_arguments_0(
                &on_deadline,
                self.config.connect_timeout_ms,
            );
        self.hello_tick();
    }

    /// `bridge.ready()`: resolves with `{toolType, methods, sdkVersion,
    /// protocol}` once connected; rejects with `NOT_CONNECTED` when no host
    /// answers.
    pub(crate) fn ready(&self) -> Promise {
        Promise::new(&mut |resolve, reject| {
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
        })
    }

    /// `bridge.supports(method)`: whether the host granted the method to
    /// this tool; `false` until connected.
    pub(crate) fn supports(&self, method: &JsValue) -> bool {
        get(&get(&self.link, "info"), "methods")
            .dyn_into::<Array>()
            .is_ok_and(|methods| methods.includes(method, 0))
    }

    fn hello_tick(&self) {
        if self.port().is_some() {
            return;
        }
        if let Ok(Some(parent)) = self.window.parent() {
            let _ = parent.post_message(&self.hello, "*");
        }
        let delay = self.hello_delay_ms.get();
        self.hello_delay_ms.set((delay * 2).min(MAX_HELLO_DELAY_MS));
        if let Some(handlers) = self.handlers() {
            let _ = self
                .window
                .set_timeout_with_callback_and_timeout_and_arguments_0(&handlers.hello_tick, delay);
        }
    }

    fn window_message(self: &Rc<Self>, event: &MessageEvent) {
        let data = event.data();
        if get(&data, "toolbridge") != "welcome" {
            return;
        }
        let from_parent = self
            .window
            .parent()
            .ok()
            .flatten()
            .zip(event.source())
            .is_some_and(|(parent, source)| Object::is(&parent, &source));
        // The host welcomes a page once: another welcome is some other
        // window trying to take over the tool's channel.
        if !from_parent || self.port().is_some() {
            self.report(
                "forgedWelcome",
                &text(&[&"from ".into(), &get(event, "origin")]).into(),
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
        let port: MessagePort = ports.get(0).unchecked_into();
        let info = object(&[
            ("toolType", &get(&data, "toolType")),
            ("methods", &Array::from(&get(&data, "methods"))),
            ("sdkVersion", &SDK_VERSION.into()),
            ("protocol", &PROTOCOL_VERSION.into()),
        ]);
        set(&self.link, "port", &port);
        set(&self.link, "info", &info);
        self.watch_requests(&get(event, "origin"));
        set(&self.link, "reason", &JsValue::UNDEFINED);
        self.flush_queue(&port);
        for waiter in take_all(&self.waiters).iter() {
            let _ = Function::from(Array::from(&waiter).get(0)).call1(&JsValue::UNDEFINED, &info);
        }
    }

    fn connect_deadline(&self) {
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
            let _ = Function::from(Array::from(&waiter).get(1)).call1(&JsValue::UNDEFINED, &error);
        }
    }
}
