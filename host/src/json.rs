//! Crossing between JavaScript values and serde: every value goes through
//! JSON text, the one representation both sides read exactly alike.

use js_sys::JsString;
use serde::Serialize;
use serde::de::DeserializeOwned;
use serde_json::Value;
use toolbridge_protocol::Error;
use wasm_bindgen::JsValue;
use wasm_bindgen::prelude::wasm_bindgen;

#[wasm_bindgen]
extern "C" {
    /// The browser's `TextEncoder`.
    type Encoder;

    #[wasm_bindgen(constructor, js_class = "TextEncoder")]
    fn new() -> Encoder;

    /// Writes the UTF-8 bytes of a JavaScript string straight into `into`
    /// (module memory), without first copying it into Rust as a `&str`.
    #[wasm_bindgen(method, js_name = encodeInto)]
    fn encode_into(this: &Encoder, text: &JsString, into: &mut [u8]) -> EncodeIntoResult;

    /// What `encodeInto` did.
    type EncodeIntoResult;

    /// Bytes written.
    #[wasm_bindgen(method, getter)]
    fn written(this: &EncodeIntoResult) -> u32;

    /// `JSON.parse` of a string that stays in JavaScript (js-sys's takes a
    /// `&str`, which would copy it through Rust).
    #[wasm_bindgen(js_namespace = JSON, js_name = parse, catch)]
    fn parse_js_string(text: &JsString) -> Result<JsValue, JsValue>;
}

/// The browser's parse of JSON text held in JavaScript; `None` when it is
/// not JSON.
pub(crate) fn parse(text: &JsString) -> Option<JsValue> {
    parse_js_string(text).ok()
}

thread_local! {
    static ENCODER: Encoder = Encoder::new();
}

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
    // `JSON.stringify` answers `undefined`, not a string, for a function
    // or a symbol.
    let text = js_sys::JSON::stringify(value)
        .ok()
        .filter(|text| text.is_string())?;
    // Well-formed: `JSON.stringify` escapes lone surrogates.
    utf8_of(&text)
}

/// A JavaScript string as a Rust one; `None` when it holds a lone surrogate
/// (which UTF-8 cannot).
pub(crate) fn rust_string(text: &JsString) -> Option<String> {
    // `encodeInto` writes U+FFFD for a lone surrogate rather than fail; a
    // replaced surrogate is not the text.
    utf8_of(text).filter(|rust| !rust.contains('\u{fffd}') || text.is_valid_utf16())
}

/// The UTF-8 bytes `encodeInto` writes for `text` (a lone surrogate
/// becoming U+FFFD), as a `String`.
fn utf8_of(text: &JsString) -> Option<String> {
    // wasm-bindgen's own string conversion walks the text one character at
    // a time in JavaScript before it hands the rest to the encoder; for the
    // texts the host reads (an `addLines` batch, a page from the backend:
    // hundreds of KB) the browser's encoder, writing straight into module
    // memory, is several times faster.
    // A UTF-16 unit never takes more than 3 UTF-8 bytes.
    let mut bytes = vec![0; (text.length() as usize).saturating_mul(3)];
    let written = ENCODER.with(|encoder| encoder.encode_into(text, &mut bytes).written());
    bytes.truncate(written as usize);
    String::from_utf8(bytes).ok()
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
