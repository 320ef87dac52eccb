//! Crossing between JavaScript values and serde. JSON comes into the module
//! one way: the browser parses it and the module reads the value it makes.
//! A JavaScript value (a call's parameters, a handshake, the page's options)
//! goes through `JSON.stringify` and `JSON.parse`, so that it reads exactly
//! as its JSON text does, and [`from_js`] reads the plain value into a
//! `serde_json::Value` member by member; a backend's answer is parsed by
//! `JSON.parse` and read the same way ([`parse_value`]); a list page from
//! the backend has its envelope checked on the parsed value with
//! serde-wasm-bindgen ([`parse_as`]), its text never crossing. The one JSON
//! text read in the module is the catalog index (`crate::host`), by the
//! protocol's reader of its shape from its bytes: about 20 ms for 100 000
//! products in the bench, where `JSON.parse` of its 7.3 MB alone takes about
//! 40. Rust → JS goes through JSON text ([`to_js`]).
//!
//! Measured, when every crossing went through JSON text, against
//! serde-wasm-bindgen (`Serializer::json_compatible()`) and gloo-utils
//! (`JsValueSerdeExt`) in one headless Chromium 156 session, host built with
//! `--profile host-release`: a wasm-bindgen-test timing each way in turns
//! (2000 operations a sample for small values, 40 for the page), median µs
//! of 25 samples, ranges over 3 runs on the 2-core machine under other
//! builds' load. The page is 500 `BridgeProductDto`s as
//! `GET /products?pageSize=500` answers them, 80 KB of JSON.
//!
//! | crossing | JSON text | serde-wasm-bindgen | gloo-utils |
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
//! JS → `Value` no longer goes through JSON text in the module: parsing it
//! there kept `serde_json`'s parser in the module for every type read from
//! text (reading JSON this way took the module from 675 602 to 660 127
//! bytes, 192 778 to 189 147 as brotli). Not timed alone: no call the
//! bench makes reads its parameters this way; a repeat open's quote phase,
//! whose answer the browser now parses, went 2.3 → 2.7, 4.0 → 4.0 and
//! 2.9 → 3.1 ms in three `cargo xtask bench --quick` pairs
//! (`docs/src/inside/host-weight.md`). The table's other findings stand:
//! gloo-utils throws (`unwrap_throw`) on a value JSON cannot hold, where the
//! host must answer "plain JSON data"; serde-wasm-bindgen, reading a tool's
//! value as it is, keeps `undefined` members as `null` (JSON text drops
//! them) and follows a cyclic value, which structured clone lets a tool
//! post, until the browser throws "Maximum call stack size exceeded"
//! (`JSON.stringify` refuses it at once). So [`from_js`] reads only what
//! `JSON.parse` made, with a reader of its own that gives a whole number the
//! integer JSON text gives (serde-wasm-bindgen gives one above 2^53 as a
//! float, which a `u64` then refuses). A tool's `addLines` batch is read
//! from its objects without JSON ([`crate::lines`]), and as a JSON value
//! where that way does not read it.

use std::cell::RefCell;

use js_sys::{Array, JsString, Number, Object};
use serde::Serialize;
use serde::de::DeserializeOwned;
use serde_json::{Map, Value};
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
    /// Module memory a long text is encoded into by [`with_utf8`], kept
    /// for the next one: reading a batch of lines takes no fresh buffer,
    /// zeroed first and given back after (for a 1000-line `addLines` batch,
    /// 700 KB each time).
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
/// cannot hold (a cycle, a `BigInt`, a function, a lone surrogate, nesting
/// deeper than [`MAX_DEPTH`]) is `None`.
pub(crate) fn from_js(value: &JsValue) -> Option<Value> {
    from_js_at(value).ok()
}

/// [`from_js`], saying why not: [`Unreadable::Value`] for what
/// `JSON.stringify` refuses, else where in the value the string or the
/// nesting that JSON data cannot carry is.
///
/// The value goes through `JSON.stringify` and `JSON.parse` in the browser,
/// so that it reads as its JSON text reads (`toJSON` called, members that are
/// `undefined` or functions left out, `NaN` as `null`), and the plain value
/// they make is read by [`read_parsed`]: no JSON text is parsed in the
/// module.
pub(crate) fn from_js_at(value: &JsValue) -> Result<Value, Unreadable> {
    let text = stringify(value).ok_or(Unreadable::Value)?;
    let parsed = parse_js_string(&text).map_err(|_| Unreadable::Value)?;
    read_parsed(&parsed)
}

/// JSON text held in JavaScript, parsed by the browser and read as a
/// [`Value`]; the error says what was wrong and where (`JSON.parse`'s
/// message, or the place of a string or a nesting a [`Value`] cannot hold).
pub(crate) fn parse_value(text: &JsString) -> Result<Value, String> {
    let parsed = parse_js_string(text).map_err(|thrown| {
        thrown
            .dyn_ref::<js_sys::Error>()
            .map_or_else(|| "not JSON".to_owned(), |error| error.message().into())
    })?;
    read_parsed(&parsed).map_err(|unreadable| unreadable.to_string())
}

/// A [`Value`] read as `T`; the error names the place at fault
/// (`products[3].id: invalid type: …`).
pub(crate) fn value_as<T: DeserializeOwned>(value: Value) -> Result<T, String> {
    serde_path_to_error::deserialize(value).map_err(|error| error.to_string())
}

/// How deep arrays and objects may nest in a value read as a [`Value`]:
/// `serde_json`'s parser allows as many, so JSON text read in the module
/// met the same limit.
const MAX_DEPTH: usize = 127;

/// Why a JavaScript value does not read as a [`Value`].
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum Unreadable {
    /// `JSON.stringify` refuses it (a cycle, a `BigInt`) or makes no text
    /// of it (a function, a symbol).
    Value,
    /// A string holding a lone surrogate (half of a UTF-16 pair), which
    /// UTF-8 cannot, at the path (`[2].description`; empty for the value
    /// itself).
    LoneSurrogate(String),
    /// An object with a member whose name holds a lone surrogate, at the
    /// object's path.
    LoneSurrogateInName(String),
    /// Arrays and objects nested deeper than [`MAX_DEPTH`], at the path.
    TooDeep(String),
}

impl Unreadable {
    /// The same, found in the member or item `step` (`.name`, `[2]`) of a
    /// value.
    fn within(self, step: &str) -> Self {
        match self {
            Unreadable::Value => Unreadable::Value,
            Unreadable::LoneSurrogate(path) => Unreadable::LoneSurrogate(format!("{step}{path}")),
            Unreadable::LoneSurrogateInName(path) => {
                Unreadable::LoneSurrogateInName(format!("{step}{path}"))
            }
            Unreadable::TooDeep(path) => Unreadable::TooDeep(format!("{step}{path}")),
        }
    }

    /// Where in the value the fault is (`[2].description`; empty for the
    /// value itself) and what it is, for a message; `None` for
    /// [`Unreadable::Value`], which has no place.
    pub(crate) fn place(&self) -> Option<(&str, &'static str)> {
        match self {
            Unreadable::Value => None,
            Unreadable::LoneSurrogate(path) => Some((
                path,
                "holds a lone surrogate (half of a UTF-16 pair), which JSON text cannot carry",
            )),
            Unreadable::LoneSurrogateInName(path) => Some((
                path,
                "has a member whose name holds a lone surrogate (half of a UTF-16 pair), which \
                 JSON text cannot carry",
            )),
            Unreadable::TooDeep(path) => Some((path, "nests arrays or objects over 127 deep")),
        }
    }
}

impl std::fmt::Display for Unreadable {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self.place() {
            None => f.write_str("not JSON data"),
            Some(("", why)) => write!(f, "the value {why}"),
            Some((path, why)) => write!(f, "the value at {path} {why}"),
        }
    }
}

/// A value as `JSON.parse` makes it (plain objects and arrays, strings,
/// finite numbers, booleans and `null`) as a [`Value`], equal to what
/// `serde_json` reads from the value's JSON text: a whole number as an
/// integer (beyond 2^53, the integer of the digits JSON text writes for
/// it, where a `u64` or an `i64` holds it), any other number as its very
/// `f64` (`serde_json`'s parser, not correctly rounded, could miss a number
/// of more than 15 digits by one unit in the last place).
fn read_parsed(parsed: &JsValue) -> Result<Value, Unreadable> {
    read_at(parsed, 0)
}

/// [`read_parsed`] of a value inside `depth` arrays or objects.
fn read_at(value: &JsValue, depth: usize) -> Result<Value, Unreadable> {
    if let Some(text) = value.dyn_ref::<JsString>() {
        return rust_string(text)
            .map(Value::String)
            .ok_or_else(|| Unreadable::LoneSurrogate(String::new()));
    }
    if let Some(number) = value.as_f64() {
        return Ok(number_value(number));
    }
    if let Some(flag) = value.as_bool() {
        return Ok(Value::Bool(flag));
    }
    if !value.is_object() {
        // `null`: `JSON.parse` makes nothing else.
        return Ok(Value::Null);
    }
    if depth == MAX_DEPTH {
        return Err(Unreadable::TooDeep(String::new()));
    }
    if let Some(array) = value.dyn_ref::<Array>() {
        let mut items = Vec::with_capacity(array.length() as usize);
        for (i, item) in array.iter().enumerate() {
            items.push(read_at(&item, depth + 1).map_err(|e| e.within(&format!("[{i}]")))?);
        }
        return Ok(Value::Array(items));
    }
    let object = value.unchecked_ref::<Object>();
    let mut members = Map::new();
    for (name, member) in Object::keys(object)
        .iter()
        .zip(Object::values(object).iter())
    {
        let name = name
            .dyn_ref::<JsString>()
            .and_then(rust_string)
            .ok_or_else(|| Unreadable::LoneSurrogateInName(String::new()))?;
        let member = read_at(&member, depth + 1).map_err(|e| e.within(&format!(".{name}")))?;
        members.insert(name, member);
    }
    Ok(Value::Object(members))
}

/// A finite number as `serde_json` reads the JSON text `JSON.stringify`
/// writes for it.
fn number_value(number: f64) -> Value {
    /// 2^53: below it, every whole number is an `f64`, and its text is its
    /// digits.
    const EXACT: f64 = 9_007_199_254_740_992.0;
    if number.fract() == 0.0 {
        if number.abs() < EXACT {
            // Whole and below 2^53, so the casts are exact (`-0` reads as 0,
            // as its text does).
            #[allow(clippy::cast_possible_truncation, clippy::cast_sign_loss)]
            return if number >= 0.0 {
                Value::from(number as u64)
            } else {
                Value::from(number as i64)
            };
        }
        // Beyond 2^53 the text has the fewest digits that read back as the
        // number, which serde_json reads as that integer where one fits.
        let digits = Number::from(number)
            .to_string_with_radix(10)
            .ok()
            .and_then(|digits| digits.as_string());
        if let Some(digits) = digits {
            if let Ok(whole) = digits.parse::<u64>() {
                return Value::from(whole);
            }
            if let Ok(whole) = digits.parse::<i64>() {
                return Value::from(whole);
            }
        }
    }
    serde_json::Number::from_f64(number).map_or(Value::Null, Value::Number)
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

/// `read` of the UTF-8 of a JavaScript string (a lone surrogate becoming
/// U+FFFD), and whether it is ASCII; a long one encoded into the kept
/// [`BUFFER`].
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
    parse_own(serde_json::to_string(value))
}

/// The rest of [`to_js`], apart so that the module holds it once rather than once for each of
/// the twenty-odd types it writes.
fn parse_own(text: Result<String, serde_json::Error>) -> Result<JsValue, Error> {
    let text =
        text.map_err(|error| Error::Internal(format!("cannot encode a value as JSON: {error}")))?;
    js_sys::JSON::parse(&text)
        .map_err(|_| Error::Internal("the browser could not parse the host's own JSON".to_owned()))
}
