//! Crossing between JavaScript values and serde. Values go through JSON
//! text, the one representation both sides read exactly alike; a list page
//! from the backend is parsed by the browser and its envelope checked on the
//! parsed value with serde-wasm-bindgen, so that its text never crosses.
//!
//! Measured against serde-wasm-bindgen (`Serializer::json_compatible()`)
//! and gloo-utils (`JsValueSerdeExt`) in one headless Chromium 156 session,
//! host built with `--profile host-release`: a wasm-bindgen-test timing each
//! way in turns (2000 operations a sample for small values, 40 for the page),
//! median µs of 25 samples, ranges over 3 runs on the 2-core machine under
//! other builds' load. The page is 500 `BridgeProductDto`s as
//! `GET /products?pageSize=500` answers them, 80 KB of JSON.
//!
//! | crossing | JSON text (here) | serde-wasm-bindgen | gloo-utils |
//! |---|---|---|---|
//! | `context.get` answer, Rust → JS | 0.85–1.05 | 1.65–3.60 | 0.85–1.35 |
//! | 3-field call params, JS → `Value` | 0.65–0.80 (1.20–1.35 before) | 1.60–2.55 | 0.55–0.65 |
//! | the page, Rust → JS | 145–165 | 660–1055 | 147–163 |
//! | the page, JS → typed Rust | 295–337 | 277–340 | 222–285 |
//!
//! The page as the host passes it on (the backend's text, checked, to a
//! JavaScript value): 100–105 µs now ([`parse_as`]: `JSON.parse` 82–85, the
//! envelope check the rest) against 180–242 before (the text copied into
//! Rust and scanned by `serde_json`, then `JSON.parse`); parsed in Rust, then
//! handed over by serde-wasm-bindgen 1655–2250, by gloo-utils 422–575.
//!
//! So JSON text stays for everything else. gloo-utils runs the same code as
//! [`to_js`] one way; the other way it wins only by its string conversion,
//! which [`utf8_of`] now uses for short texts too, and it throws
//! (`unwrap_throw`) on a value JSON cannot hold, where the host must answer
//! "plain JSON data". serde-wasm-bindgen is slower both ways, refuses a
//! `u64` above 2^53 (JSON text gives the nearest number), keeps `undefined`
//! members as `null` (JSON text drops them), and follows a cyclic value,
//! which structured clone lets a tool post, until the browser throws
//! "Maximum call stack size exceeded" (`JSON.stringify` refuses it at once).
//! The host reads nothing page-sized into a typed value ([`read_js`] reads
//! the page's option objects), where gloo-utils would win by skipping the
//! `Value` in between. A tool's `addLines` batch is read from its objects
//! without JSON text ([`crate::lines`]), and as text where that way does not
//! read it.

use std::cell::RefCell;

use js_sys::JsString;
use serde::Serialize;
use serde::de::DeserializeOwned;
use serde_json::Value;
use toolbridge_protocol::Error;
use wasm_bindgen::prelude::wasm_bindgen;
use wasm_bindgen::{JsCast, JsValue};

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

/// The browser's parse of JSON text held in JavaScript, once it reads as
/// `T` (for a check, `T` may hold [`serde::de::IgnoredAny`] where any value
/// will do): the text never crosses into Rust. The error says why not, and
/// where in the value.
pub(crate) fn parse_as<T: DeserializeOwned>(text: &JsString) -> Result<JsValue, String> {
    let value = parse_js_string(text).map_err(|thrown| {
        let why = thrown
            .dyn_ref::<js_sys::Error>()
            .map_or_else(String::new, |error| format!(" ({})", error.message()));
        format!("not JSON{why}")
    })?;
    serde_path_to_error::deserialize::<_, T>(serde_wasm_bindgen::Deserializer::from(value.clone()))
        .map_err(|error| {
            let path = error.path().to_string();
            let error = error.into_inner();
            // Its own message, without the "Error: " of its `Display`.
            let message = JsValue::from(error)
                .dyn_into::<js_sys::Error>()
                .map_or_else(
                    |_| "not the shape expected".to_owned(),
                    |e| e.message().into(),
                );
            if path == "." {
                message
            } else {
                format!("{path}: {message}")
            }
        })?;
    Ok(value)
}

thread_local! {
    static ENCODER: Encoder = Encoder::new();
    /// Module memory a long text is encoded into by [`with_text_of`], kept
    /// for the next one.
    static BUFFER: RefCell<Vec<u8>> = const { RefCell::new(Vec::new()) };
}

/// The most memory [`BUFFER`] keeps: 3 bytes for each UTF-16 unit of a
/// text of 1 Mi units (a 1000-line batch is about 230 000). A longer text
/// is encoded into memory of its own, given back once read.
const KEEP_AT_MOST: usize = 3 << 20;

/// From this many UTF-16 units on, a string crosses into Rust through the
/// browser's `TextEncoder.encodeInto`; shorter ones through wasm-bindgen.
const ENCODE_INTO_FROM: u32 = 512;

/// A JavaScript value as JSON. `undefined` reads as `null`; a value JSON
/// cannot hold (a cycle, a `BigInt`, a function) is `None`.
pub(crate) fn from_js(value: &JsValue) -> Option<Value> {
    serde_json::from_str(&text_of(value)?).ok()
}

/// A JavaScript value as JSON text. `undefined` reads as `null`; a value
/// JSON cannot hold is `None`.
pub(crate) fn text_of(value: &JsValue) -> Option<String> {
    utf8_of(&stringify(value)?)
}

/// A JavaScript value's JSON text as the browser's string, well-formed
/// (`JSON.stringify` escapes lone surrogates): `null` for `undefined`,
/// `None` for a value JSON cannot hold.
fn stringify(value: &JsValue) -> Option<JsString> {
    if value.is_undefined() {
        return Some(JsString::from("null"));
    }
    // `JSON.stringify` answers `undefined`, not a string, for a function
    // or a symbol.
    js_sys::JSON::stringify(value)
        .ok()
        .filter(|text| text.is_string())
}

/// [`text_of`] lent to `read` rather than returned: a long text is encoded
/// into memory the module keeps from one call to the next ([`BUFFER`]), so
/// that reading a batch of lines takes no fresh buffer, zeroed first and
/// given back after (for a 1000-line `addLines` batch, 700 KB each time).
/// The bench's read phase of that batch (`JSON.stringify` and this):
/// 0.72–0.81 ms in four runs, against 0.96 ms with a fresh buffer.
pub(crate) fn with_text_of<R>(value: &JsValue, read: impl FnOnce(&str) -> R) -> Option<R> {
    with_utf8(&stringify(value)?, |text, _| read(text))
}

/// `read` of the UTF-8 of a JavaScript string (a lone surrogate becoming
/// U+FFFD), and whether it is ASCII; a long one encoded into the kept
/// [`BUFFER`], as [`with_text_of`] does.
pub(crate) fn with_utf8<R>(text: &JsString, read: impl FnOnce(&str, bool) -> R) -> Option<R> {
    let units = text.length() as usize;
    // A UTF-16 unit never takes more than 3 UTF-8 bytes.
    let needed = units.saturating_mul(3);
    BUFFER.with(|buffer| {
        let kept = buffer
            .try_borrow_mut()
            .ok()
            .filter(|_| text.length() >= ENCODE_INTO_FROM && needed <= KEEP_AT_MOST);
        let Some(mut bytes) = kept else {
            // Short, very long, or read while another is (not done today).
            // As many bytes as units: every unit was one ASCII byte.
            return utf8_of(text).map(|utf8| read(&utf8, utf8.len() == units));
        };
        if bytes.len() < needed {
            bytes.resize(needed, 0);
        }
        let into = bytes.get_mut(..needed)?;
        let written = ENCODER.with(|encoder| encoder.encode_into(text, into).written()) as usize;
        let utf8 = std::str::from_utf8(bytes.get(..written)?).ok()?;
        Some(read(utf8, written == units))
    })
}

/// A JavaScript string as a Rust one; `None` when it holds a lone surrogate
/// (which UTF-8 cannot).
pub(crate) fn rust_string(text: &JsString) -> Option<String> {
    // `encodeInto` writes U+FFFD for a lone surrogate rather than fail; a
    // replaced surrogate is not the text.
    utf8_of(text).filter(|rust| !rust.contains('\u{fffd}') || text.is_valid_utf16())
}

/// The UTF-8 bytes of `text` (a lone surrogate becoming U+FFFD), as a
/// `String`.
fn utf8_of(text: &JsString) -> Option<String> {
    let units = text.length();
    // wasm-bindgen's own conversion copies ASCII one character at a time in
    // JavaScript before it hands the rest to the encoder; the browser's
    // encoder writing straight into module memory costs four calls across
    // the boundary and a zeroed buffer first. Measured as above (µs, ASCII):
    // 62 B 0.15 against 0.45, 256 B 0.40 against 0.50, 512 B about even,
    // 1 KB 1.3 against 0.9, 80 KB 130–200 against 33–43, a 1000-line
    // `addLines` batch 180–375 against 62–123.
    if units < ENCODE_INTO_FROM {
        return text.as_string();
    }
    // A UTF-16 unit never takes more than 3 UTF-8 bytes.
    let mut bytes = vec![0; (units as usize).saturating_mul(3)];
    let written = ENCODER.with(|encoder| encoder.encode_into(text, &mut bytes).written());
    bytes.truncate(written as usize);
    String::from_utf8(bytes).ok()
}

/// A JavaScript value read as `T`, with a message naming `what` it was.
pub(crate) fn read_js<T: DeserializeOwned>(value: &JsValue, what: &str) -> Result<T, String> {
    let json = from_js(value).ok_or_else(|| format!("{what} must be plain JSON data"))?;
    // The path names the option at fault (`connectivityCheckMs: invalid type: …`).
    serde_path_to_error::deserialize(json).map_err(|error| format!("{what}: {error}"))
}

/// A Rust value as a fresh JavaScript value.
pub(crate) fn to_js<T: Serialize + ?Sized>(value: &T) -> Result<JsValue, Error> {
    let text = serde_json::to_string(value)
        .map_err(|error| Error::Internal(format!("cannot encode a value as JSON: {error}")))?;
    js_sys::JSON::parse(&text)
        .map_err(|_| Error::Internal("the browser could not parse the host's own JSON".to_owned()))
}
