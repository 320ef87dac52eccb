//! `BridgeError`: what every failed call rejects with, and what `bridge.on`
//! and `bridge.ui.setAutoResize` throw at once for a bad argument. A real
//! `Error` (so it has a stack and prints well) whose prototype is
//! `BridgeError.prototype`, carrying `code`, `message`, `details` and
//! `retryAfter`.

use js_sys::{Array, Function, Object, Reflect};
use wasm_bindgen::prelude::*;

use crate::js::Window;
use crate::object::{get, object, set};

/// No host answered the handshake.
pub(crate) const NOT_CONNECTED: &str = "NOT_CONNECTED";
/// No reply within the call deadline.
pub(crate) const TIMEOUT: &str = "TIMEOUT";
/// The arguments could not be sent.
pub(crate) const INVALID_PARAMS: &str = "INVALID_PARAMS";
/// Anything else.
pub(crate) const INTERNAL: &str = "INTERNAL";

/// JSON-RPC error numbers, for replies whose `data.code` is missing.
const RPC_CODES: [(i32, &str); 13] = [
    (-32602, INVALID_PARAMS),
    (-32601, "METHOD_NOT_FOUND"),
    (-32603, INTERNAL),
    (-32001, "NOT_ALLOWED"),
    (-32002, "NO_OPEN_QUOTE"),
    (-32003, "QUOTE_LOCKED"),
    (-32004, "NOT_FOUND"),
    (-32005, "RATE_LIMITED"),
    (-32006, "UNAUTHENTICATED"),
    (-32007, "BACKEND_UNAVAILABLE"),
    (-32008, TIMEOUT),
    (-32009, NOT_CONNECTED),
    (-32010, "OFFLINE"),
];

/// `BridgeError.prototype`; `bridge.BridgeError` is a function of the SDK
/// whose `prototype` it is (see [`ErrorClass::adopt`]).
pub(crate) struct ErrorClass {
    prototype: Object,
}

impl ErrorClass {
    /// Makes the prototype, inheriting from the window's `Error.prototype`.
    ///
    /// Read as a property rather than from a new `Error`: the first error a
    /// fresh frame makes captures its stack through the module's frames,
    /// which cost about 1.5 ms of the SDK's start in Chromium.
    pub(crate) fn new(window: &Window) -> Self {
        // (`get` reads objects only, and `Error` is a function, from which
        // `Reflect.get` cannot fail.)
        let error = get(window, "Error");
        let error_prototype = Reflect::get(&error, &"prototype".into()).unwrap_or(error);
        let prototype = Object::create(error_prototype.unchecked_ref());
        set(&prototype, "name", &"BridgeError".into());
        Self { prototype }
    }

    /// Makes `constructor` the class's function, so that `instanceof` works.
    pub(crate) fn adopt(&self, constructor: &Function) {
        set(constructor, "prototype", &self.prototype);
        set(&self.prototype, "constructor", constructor);
    }

    /// What `bridge.BridgeError({code, message, details?, retryAfter?})`
    /// returns: an error shaped like the host's (handy in a tool's own
    /// tests).
    pub(crate) fn construct(&self, init: &JsValue) -> JsValue {
        make(
            &self.prototype,
            &string_or(get(init, "code"), INTERNAL),
            &string_or(get(init, "message"), ""),
            &get(init, "details"),
            &get(init, "retryAfter"),
        )
    }

    /// An `INVALID_PARAMS` error for a bad argument of a member of the bridge
    /// itself (`bridge.on`, `bridge.ui.setAutoResize`, `bridge.fetch`), with
    /// `path` in its details.
    pub(crate) fn invalid(&self, path: &str, message: &str) -> JsValue {
        self.invalid_because(path, &message.into())
    }

    /// [`ErrorClass::invalid`] with a message made in JS.
    pub(crate) fn invalid_because(&self, path: &str, message: &JsValue) -> JsValue {
        let detail = object(&[("path", &path.into()), ("message", message)]);
        make(
            &self.prototype,
            &INVALID_PARAMS.into(),
            message,
            &Array::of1(&detail),
            &JsValue::UNDEFINED,
        )
    }

    /// A `BridgeError` raised by the SDK itself.
    pub(crate) fn local(&self, code: &str, message: &JsValue) -> JsValue {
        make(
            &self.prototype,
            &code.into(),
            message,
            &JsValue::UNDEFINED,
            &JsValue::UNDEFINED,
        )
    }

    /// The `BridgeError` for a JSON-RPC `error` object from the host.
    pub(crate) fn for_reply(&self, error: &JsValue) -> JsValue {
        let data = get(error, "data");
        let mut code = get(&data, "code");
        if !code.is_string() {
            let number = get(error, "code").as_f64();
            let name = RPC_CODES
                .iter()
                .find(|(n, _)| Some(f64::from(*n)) == number)
                .map_or(INTERNAL, |(_, name)| name);
            code = name.into();
        }
        let message = string_or(
            get(error, "message"),
            "the host reported an error without a message",
        );
        make(
            &self.prototype,
            &code,
            &message,
            &get(&data, "details"),
            &get(&data, "retryAfter"),
        )
    }
}

fn string_or(value: JsValue, fallback: &str) -> JsValue {
    if value.is_string() {
        value
    } else {
        fallback.into()
    }
}

/// An `Error` with `BridgeError.prototype`; `details` is always an array and
/// `retryAfter` a number or `undefined`.
fn make(
    prototype: &Object,
    code: &JsValue,
    message: &JsValue,
    details: &JsValue,
    retry_after: &JsValue,
) -> JsValue {
    let error: JsValue = js_sys::Error::new("").into();
    Object::set_prototype_of(error.unchecked_ref::<Object>(), prototype);
    set(&error, "message", message);
    set(&error, "code", code);
    let details = if Array::is_array(details) {
        details.clone()
    } else {
        Array::new().into()
    };
    set(&error, "details", &details);
    let retry_after = if retry_after.as_f64().is_some() {
        retry_after.clone()
    } else {
        JsValue::UNDEFINED
    };
    set(&error, "retryAfter", &retry_after);
    error
}
