//! Crossing between JavaScript values and serde: every value goes through
//! JSON text, the one representation both sides read exactly alike.

use serde::Serialize;
use serde::de::DeserializeOwned;
use serde_json::Value;
use toolbridge_protocol::Error;
use wasm_bindgen::JsValue;

/// A JavaScript value as JSON. `undefined` reads as `null`; a value JSON
/// cannot hold (a cycle, a `BigInt`, a function) is `None`.
pub(crate) fn from_js(value: &JsValue) -> Option<Value> {
    serde_json::from_str(&text_of(value)?).ok()
}

/// A JavaScript value as JSON text. `undefined` reads as `null`; a value
/// JSON cannot hold is `None`.
pub(crate) fn text_of(value: &JsValue) -> Option<String> {
    if value.is_undefined() {
        return Some("null".to_owned());
    }
    js_sys::JSON::stringify(value).ok()?.as_string()
}

/// A JavaScript value read as `T`, with a message naming `what` it was.
pub(crate) fn read_js<T: DeserializeOwned>(value: &JsValue, what: &str) -> Result<T, String> {
    let json = from_js(value).ok_or_else(|| format!("{what} must be plain JSON data"))?;
    serde_json::from_value(json).map_err(|error| format!("{what}: {error}"))
}

/// A Rust value as a fresh JavaScript value.
pub(crate) fn to_js<T: Serialize + ?Sized>(value: &T) -> Result<JsValue, Error> {
    let text = serde_json::to_string(value)
        .map_err(|error| Error::Internal(format!("cannot encode a value as JSON: {error}")))?;
    js_sys::JSON::parse(&text)
        .map_err(|_| Error::Internal("the browser could not parse the host's own JSON".to_owned()))
}
