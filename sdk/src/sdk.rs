//! The state of the bridge on one page, and the one kind of JS function the
//! SDK hands to the page and the browser.
//!
//! Collections live in JS (`Map`, `Array`) rather than in Rust: they hold JS
//! values anyway, and it keeps Rust's collection code out of the script.
//!
//! Every function the SDK makes (the methods of `window.bridge`, the
//! handlers of the window, the port, timers and observers) is the same Rust
//! closure type carrying an [`Act`] that says what it does, so the script
//! holds one closure shim rather than one per function.

use alloc::rc::Rc;
use core::cell::{Cell, OnceCell};

use js_sys::{Array, Function, Map, Object};
use wasm_bindgen::JsValue;
use wasm_bindgen::prelude::*;

use crate::api::Kind;
use crate::config::Config;
use crate::error::ErrorClass;
use crate::events::EVENTS;
use crate::guard::Watch;
use crate::js::{Port, ResizeObserver, Window};
use crate::object::{get_key, object};
use crate::resize::Resize;

/// What a function made by [`Sdk::function`] does when it is called.
#[derive(Clone, Copy)]
pub(crate) enum Act {
    /// A bridge method: calls the host (the function's value is the wire
    /// name).
    Call(Kind),
    /// `bridge.ready()`.
    Ready,
    /// `bridge.supports(name)`.
    Supports,
    /// `bridge.on(event, listener)`.
    On,
    /// An unsubscribe function (bound to its subscription).
    Off,
    /// `bridge.ui.setAutoResize(enabled)`.
    SetAutoResize,
    /// `bridge.BridgeError(init)`.
    NewError,
    /// A message on the window (the welcome).
    WindowMessage,
    /// The handshake's deadline.
    ConnectDeadline,
    /// The hello's next repeat.
    HelloTick,
    /// A message on the private port: a reply or a notification.
    PortMessage,
    /// The call deadline timer.
    CallDeadline,
    /// Something the guard watches.
    Watch(Watch),
    /// The page's size may have changed: measure it in the next frame.
    Resized,
    /// The animation frame in which the page is measured.
    Frame,
    /// The host answered `auth.getToken`.
    TokenArrived,
    /// `auth.getToken` failed.
    TokenFailed,
    /// `bridge.fetch(url, init)`.
    Fetch,
    /// A `fetch` body's bytes arrived (bound to the request).
    FetchSend,
    /// A `fetch` body could not be read.
    FetchUnread,
    /// The host answered `fetch`.
    FetchAnswer,
}

/// The handlers registered with the browser, made once.
pub(crate) struct Handlers {
    /// `setTimeout` target that fails the calls whose deadline passed.
    pub(crate) call_deadline: Function,
    /// `onmessage` of the port.
    pub(crate) port_message: Function,
    /// `setTimeout` target that repeats the hello.
    pub(crate) hello_tick: Function,
    /// Unsubscribes the subscription it is bound to.
    pub(crate) off: Function,
    /// The `ResizeObserver` callback and the window's `resize` listener.
    pub(crate) resized: Function,
    /// `requestAnimationFrame` target that measures the page.
    pub(crate) frame: Function,
    /// Watches the size of the document element and the body for
    /// auto-resize.
    pub(crate) observer: ResizeObserver,
    /// Keeps the identity token the host answered.
    pub(crate) token_arrived: Function,
    /// Forgets a failed identity token request.
    pub(crate) token_failed: Function,
    /// Sends a `fetch` request once its body's bytes are read (bound to the
    /// request).
    pub(crate) fetch_send: Function,
    /// Fails a `fetch` whose body could not be read.
    pub(crate) fetch_unread: Function,
    /// Makes the host's answer to `fetch` a `Response`.
    pub(crate) fetch_answer: Function,
}

/// The property names and values every call uses, made into JS strings once
/// rather than on every call.
pub(crate) struct Keys {
    pub(crate) jsonrpc: JsValue,
    pub(crate) version: JsValue,
    pub(crate) id: JsValue,
    pub(crate) method: JsValue,
    pub(crate) params: JsValue,
    pub(crate) result: JsValue,
    pub(crate) error: JsValue,
    pub(crate) port: JsValue,
    pub(crate) reason: JsValue,
    /// The method of the host's deprecation notice.
    pub(crate) deprecated: JsValue,
    /// The wire name of `bridge.fetch`.
    pub(crate) fetch: JsValue,
}

impl Keys {
    fn new() -> Self {
        Self {
            jsonrpc: "jsonrpc".into(),
            version: "2.0".into(),
            id: "id".into(),
            method: "method".into(),
            params: "params".into(),
            result: "result".into(),
            error: "error".into(),
            port: "port".into(),
            reason: "reason".into(),
            deprecated: "bridge.deprecated".into(),
            fetch: "fetch".into(),
        }
    }
}

/// The bridge of one page.
pub(crate) struct Sdk {
    pub(crate) keys: Keys,
    pub(crate) window: Window,
    pub(crate) config: Config,
    /// `{port, info, origin}` once welcomed (`origin`: the host page's),
    /// `{reason}` once given up on.
    pub(crate) link: Object,
    pub(crate) hello: Object,
    pub(crate) hello_delay_ms: Cell<i32>,
    pub(crate) next_id: Cell<u32>,
    /// Calls waiting for their reply, oldest first: id → `[resolve, reject,
    /// deadline, method]` (`deadline` undefined for a call that waits for
    /// the user).
    pub(crate) pending: Map,
    /// When the next deadline check is scheduled (on `performance.now()`'s
    /// clock; infinite when none is): one timer serves every call.
    pub(crate) next_check: Cell<f64>,
    /// Requests made before the handshake, in call order: `[id, request]`
    /// (`id` undefined for a notification).
    pub(crate) queue: Array,
    /// `ready()` promises waiting for the welcome: `[resolve, reject]`.
    pub(crate) waiters: Array,
    /// Event name → its subscriptions, in subscription order: a `Map` from
    /// each subscription's key to its listener.
    pub(crate) listeners: Map,
    pub(crate) resize: Resize,
    /// Whether the console has shown a deprecation notice of the host.
    pub(crate) warned_deprecation: Cell<bool>,
    pub(crate) errors: ErrorClass,
    pub(crate) handlers: OnceCell<Handlers>,
    /// The identity token kept (module `token`), handed out until
    /// `token_until` (on `performance.now()`'s clock).
    pub(crate) token: Cell<JsValue>,
    pub(crate) token_until: Cell<f64>,
    /// The Promise of the `auth.getToken` request out, if one is.
    pub(crate) token_pending: Cell<JsValue>,
}

impl Sdk {
    /// The bridge for this page, before the handshake starts.
    pub(crate) fn new(window: Window) -> Rc<Self> {
        let config = Config::from_current_script(&window);
        let errors = ErrorClass::new(&window);
        let listeners = Map::new();
        for event in EVENTS {
            listeners.set(&event.into(), &Map::new());
        }
        let sdk = Rc::new(Self {
            keys: Keys::new(),
            window,
            config,
            link: object(&[]),
            hello: crate::channel::hello_message(),
            hello_delay_ms: Cell::new(crate::channel::FIRST_HELLO_DELAY_MS),
            next_id: Cell::new(1),
            pending: Map::new(),
            next_check: Cell::new(f64::INFINITY),
            queue: Array::new(),
            waiters: Array::new(),
            listeners,
            resize: Resize::default(),
            warned_deprecation: Cell::new(false),
            errors,
            handlers: OnceCell::new(),
            token: Cell::new(JsValue::UNDEFINED),
            token_until: Cell::new(f64::NEG_INFINITY),
            token_pending: Cell::new(JsValue::UNDEFINED),
        });
        let handler = |act| sdk.function(act, JsValue::UNDEFINED);
        let resized = handler(Act::Resized);
        let _ = sdk.handlers.set(Handlers {
            observer: ResizeObserver::new(&resized),
            resized,
            call_deadline: handler(Act::CallDeadline),
            port_message: handler(Act::PortMessage),
            hello_tick: handler(Act::HelloTick),
            off: handler(Act::Off),
            frame: handler(Act::Frame),
            token_arrived: handler(Act::TokenArrived),
            token_failed: handler(Act::TokenFailed),
            fetch_send: handler(Act::FetchSend),
            fetch_unread: handler(Act::FetchUnread),
            fetch_answer: handler(Act::FetchAnswer),
        });
        sdk
    }

    /// A JS function that does `act`; `value` is what it was made for (a
    /// method's wire name). Kept for the page's lifetime. It takes up to two
    /// arguments, as `bridge.on` does; the others ignore the second.
    pub(crate) fn function(self: &Rc<Self>, act: Act, value: JsValue) -> Function {
        let sdk = Rc::clone(self);
        Closure::<dyn Fn(JsValue, JsValue) -> JsValue>::new(move |first, second| {
            sdk.run(act, &value, first, &second)
        })
        .into_js_value()
        .unchecked_into()
    }

    fn run(
        self: &Rc<Self>,
        act: Act,
        value: &JsValue,
        first: JsValue,
        second: &JsValue,
    ) -> JsValue {
        match act {
            Act::Call(Kind::Token) => return self.token(value).into(),
            Act::Call(kind) => return self.call(kind, value, first).into(),
            Act::TokenArrived => return self.token_arrived(&first),
            Act::TokenFailed => return self.token_failed(&first),
            Act::Fetch => return self.fetch(&first, second).into(),
            Act::FetchSend => return self.fetch_send(&first, second),
            Act::FetchUnread => return self.fetch_unread(&first),
            Act::FetchAnswer => return self.fetch_answer(&first),
            Act::Ready => return self.ready().into(),
            Act::Supports => return self.supports(&first).into(),
            Act::On => return self.on(&first, second),
            Act::Off => crate::events::off(&first),
            Act::SetAutoResize => self.set_auto_resize(&first),
            Act::NewError => return self.errors.construct(&first),
            Act::WindowMessage => self.window_message(&first),
            Act::ConnectDeadline => self.connect_deadline(),
            Act::HelloTick => self.hello_tick(),
            Act::PortMessage => self.port_message(&first),
            Act::CallDeadline => self.deadlines_passed(),
            Act::Watch(watch) => return self.watched(watch, &first),
            Act::Resized => self.schedule_measure(),
            Act::Frame => self.measure(),
        }
        JsValue::UNDEFINED
    }

    /// The registered handlers (always set by [`Sdk::new`]).
    pub(crate) fn handlers(&self) -> Option<&Handlers> {
        self.handlers.get()
    }

    /// The private port, once welcomed.
    pub(crate) fn port(&self) -> Option<Port> {
        let port = get_key(&self.link, &self.keys.port);
        (!port.is_undefined()).then(|| port.unchecked_into())
    }

    /// Why there is no host, once the SDK has given up waiting.
    pub(crate) fn no_host_reason(&self) -> Option<JsValue> {
        let reason = get_key(&self.link, &self.keys.reason);
        (!reason.is_undefined()).then_some(reason)
    }

    /// Sends a JSON-RPC notification (no id, never answered) to the host,
    /// or queues it until the handshake.
    pub(crate) fn notify(&self, method: &str, params: &JsValue) {
        let notification = object(&[
            ("jsonrpc", &self.keys.version),
            ("method", &method.into()),
            ("params", params),
        ]);
        match self.port() {
            Some(port) => {
                let _ = port.post(&notification);
            }
            // No id: the queue sends it without waiting for a reply.
            None => {
                self.queue
                    .push(&Array::of2(&JsValue::UNDEFINED, &notification));
            }
        }
    }
}
