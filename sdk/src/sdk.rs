//! The state of the bridge on one page, shared by the closures that make up
//! `window.bridge` and the handlers of the handshake and the port.
//!
//! Collections live in JS (`Map`, `Array`) rather than in Rust: they hold JS
//! values anyway, and it keeps Rust's collection code out of the script.

use alloc::rc::Rc;
use core::cell::{Cell, OnceCell};

use js_sys::{Array, Function, Map, Object};
use wasm_bindgen::JsValue;
use web_sys::{MessagePort, Window};

use crate::config::Config;
use crate::error::ErrorClass;
use crate::object::{get_key, object};

/// The handlers registered with the browser, made once.
pub(crate) struct Handlers {
    /// `setTimeout` target that fails the calls whose deadline passed.
    pub(crate) call_deadline: Function,
    /// `onmessage` of the port.
    pub(crate) reply: Function,
    /// `setTimeout` target that repeats the hello.
    pub(crate) hello_tick: Function,
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
    /// deadline, method]`.
    pub(crate) pending: Map,
    /// Whether a deadline check is scheduled (one timer serves every call).
    pub(crate) deadline_timer: Cell<bool>,
    /// Requests made before the handshake, in call order: `[id, request]`
    /// (`id` undefined for a notification).
    pub(crate) queue: Array,
    /// `ready()` promises waiting for the welcome: `[resolve, reject]`.
    pub(crate) waiters: Array,
    pub(crate) warned_product_id: Cell<bool>,
    pub(crate) errors: ErrorClass,
    pub(crate) handlers: OnceCell<Handlers>,
}

impl Sdk {
    /// The bridge for this page, before the handshake starts.
    pub(crate) fn new(window: Window) -> Rc<Self> {
        let config = Config::from_current_script(&window);
        let sdk = Rc::new(Self {
            keys: Keys::new(),
            window,
            config,
            link: object(&[]),
            hello: crate::channel::hello_message(),
            hello_delay_ms: Cell::new(crate::channel::FIRST_HELLO_DELAY_MS),
            next_id: Cell::new(1),
            pending: Map::new(),
            deadline_timer: Cell::new(false),
            queue: Array::new(),
            waiters: Array::new(),
            warned_product_id: Cell::new(false),
            errors: ErrorClass::new(),
            handlers: OnceCell::new(),
        });
        let _ = sdk.handlers.set(Handlers {
            call_deadline: crate::calls::deadline_handler(&sdk),
            reply: crate::calls::reply_handler(&sdk),
            hello_tick: crate::channel::hello_tick_handler(&sdk),
        });
        sdk
    }

    /// The registered handlers (always set by [`Sdk::new`]).
    pub(crate) fn handlers(&self) -> Option<&Handlers> {
        self.handlers.get()
    }

    /// The private port, once welcomed.
    pub(crate) fn port(&self) -> Option<MessagePort> {
        let port = get_key(&self.link, &self.keys.port);
        (!port.is_undefined()).then(|| wasm_bindgen::JsCast::unchecked_into(port))
    }

    /// Why there is no host, once the SDK has given up waiting.
    pub(crate) fn no_host_reason(&self) -> Option<JsValue> {
        let reason = get_key(&self.link, &self.keys.reason);
        (!reason.is_undefined()).then_some(reason)
    }
}
