//! The handshake with the host page and the private port it hands over.
//!
//! Until welcomed, the SDK posts a hello to `window.parent` with back-off
//! (50 ms doubling to 1 s). It accepts one welcome, only from
//! `window.parent`, carrying exactly one port; everything else on the window
//! is ignored. If no welcome arrives within the connect deadline, waiting
//! calls fail with `NOT_CONNECTED`; a host that answers later still connects.

use alloc::rc::Rc;
use alloc::string::String;

use js_sys::{Array, Function, Object, Promise};
use wasm_bindgen::prelude::*;
use web_sys::{MessageEvent, MessagePort};

use crate::error::NOT_CONNECTED;
use crate::object::{function, get, object};
use crate::sdk::{Link, Sdk};
use crate::text;
use crate::{PROTOCOL_VERSION, SDK_VERSION};

/// First hello repeat, in ms.
pub(crate) const FIRST_HELLO_DELAY_MS: i32 = 50;
const MAX_HELLO_DELAY_MS: i32 = 1000;

const NOT_FRAMED: &str = "this page is not inside a host frame: tools run inside the app (or `toolbridge serve --dev-tool`), where the host answers the bridge";

/// `{toolbridge:"hello", protocol, sdkVersion, instance}` with a random
/// instance token, so the host can tell a reload.
pub(crate) fn hello_message() -> Object {
    let mut instance = String::new();
    for _ in 0..2 {
        let part: String = js_sys::Number::from(js_sys::Math::random())
            .to_string_with_radix(36)
            .map(String::from)
            .unwrap_or_default();
        instance.push_str(part.get(2..).unwrap_or_default());
    }
    object(&[
        ("toolbridge", &"hello".into()),
        ("protocol", &PROTOCOL_VERSION.into()),
        ("sdkVersion", &SDK_VERSION.into()),
        ("instance", &instance.into()),
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
            *self.link.borrow_mut() = Link::NoHost(String::from(NOT_FRAMED));
            return;
        }
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
                i32::try_from(self.config.connect_timeout_ms).unwrap_or(i32::MAX),
            );
        self.hello_tick();
    }

    /// `bridge.ready()`: resolves with `{toolType, methods, sdkVersion,
    /// protocol}` once connected; rejects with `NOT_CONNECTED` when no host
    /// answers.
    pub(crate) fn ready(&self) -> Promise {
        Promise::new(&mut |resolve, reject| {
            let settled = match &*self.link.borrow() {
                Link::Connected { info, .. } => Some((resolve, info.clone().into())),
                Link::NoHost(message) => Some((reject, self.errors.local(NOT_CONNECTED, message))),
                Link::Connecting => {
                    self.waiters.borrow_mut().push((resolve, reject));
                    None
                }
            };
            if let Some((settle, value)) = settled {
                let _ = settle.call1(&JsValue::UNDEFINED, &value);
            }
        })
    }

    /// `bridge.supports(method)`: whether the host granted the method to
    /// this tool; `false` until connected.
    pub(crate) fn supports(&self, method: &JsValue) -> bool {
        match &*self.link.borrow() {
            Link::Connected { info, .. } => get(info, "methods")
                .dyn_into::<Array>()
                .is_ok_and(|methods| methods.includes(method, 0)),
            _ => false,
        }
    }

    fn hello_tick(&self) {
        if matches!(*self.link.borrow(), Link::Connected { .. }) {
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

    fn window_message(&self, event: &MessageEvent) {
        let data = event.data();
        if get(&data, "toolbridge").as_string().as_deref() != Some("welcome")
            || get(&data, "protocol").as_f64() != Some(f64::from(PROTOCOL_VERSION))
            || matches!(*self.link.borrow(), Link::Connected { .. })
        {
            return;
        }
        let from_parent = self
            .window
            .parent()
            .ok()
            .flatten()
            .zip(event.source())
            .is_some_and(|(parent, source)| Object::is(&parent, &source));
        let ports = event.ports();
        let port = ports.get(0).dyn_into::<MessagePort>();
        let (true, 1, Ok(port)) = (from_parent, ports.length(), port) else {
            return;
        };
        let info = object(&[
            ("toolType", &get(&data, "toolType")),
            ("methods", &Array::from(&get(&data, "methods"))),
            ("sdkVersion", &SDK_VERSION.into()),
            ("protocol", &PROTOCOL_VERSION.into()),
        ]);
        *self.link.borrow_mut() = Link::Connected {
            port: port.clone(),
            info: info.clone(),
        };
        self.flush_queue(&port);
        let waiters = core::mem::take(&mut *self.waiters.borrow_mut());
        for (resolve, _) in waiters {
            let _ = resolve.call1(&JsValue::UNDEFINED, &info);
        }
    }

    fn connect_deadline(&self) {
        if !matches!(*self.link.borrow(), Link::Connecting) {
            return;
        }
        let mut message = String::from("no host answered within ");
        text::push_duration(&mut message, self.config.connect_timeout_ms);
        message.push_str(
            ": this page is not running inside a toolbridge host (open the tool from the app, or run it with `toolbridge serve --dev-tool`)",
        );
        *self.link.borrow_mut() = Link::NoHost(message.clone());
        self.fail_queue(&message);
        let waiters = core::mem::take(&mut *self.waiters.borrow_mut());
        for (_, reject) in waiters {
            let _ = reject.call1(
                &JsValue::UNDEFINED,
                &self.errors.local(NOT_CONNECTED, &message),
            );
        }
    }
}
