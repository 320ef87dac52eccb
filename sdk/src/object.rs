//! Reading and writing plain JS objects, text, and the one function shape
//! the SDK hands to the browser.

use js_sys::{Array, Function, JsString, Object, Reflect};
use wasm_bindgen::prelude::*;

/// `target[key]`, or `undefined` when `target` is not an object.
pub(crate) fn get(target: &JsValue, key: &str) -> JsValue {
    if target.is_object() {
        Reflect::get(target, &key.into()).unwrap_or(JsValue::UNDEFINED)
    } else {
        JsValue::UNDEFINED
    }
}

/// `target[key]` with a key already in JS form, or `undefined` when `target`
/// is not an object.
pub(crate) fn get_key(target: &JsValue, key: &JsValue) -> JsValue {
    if target.is_object() {
        Reflect::get(target, key).unwrap_or(JsValue::UNDEFINED)
    } else {
        JsValue::UNDEFINED
    }
}

/// `target[key] = value`, ignoring failure (a frozen target).
pub(crate) fn set(target: &JsValue, key: &str, value: &JsValue) {
    let _ = Reflect::set(target, &key.into(), value);
}

/// A new object with these properties.
pub(crate) fn object(entries: &[(&str, &JsValue)]) -> Object {
    let object = Object::new();
    for (key, value) in entries {
        set(&object, key, value);
    }
    object
}

/// Empties `array`, returning what it held.
pub(crate) fn take_all(array: &Array) -> Array {
    array.splice_many(0, array.length(), &[])
}

/// Joins text pieces in JS, without Rust string code.
pub(crate) fn text(parts: &[&JsValue]) -> JsString {
    let mut out = JsString::from("");
    for part in parts {
        out = out.concat(part);
    }
    out
}

/// A duration as people read it: `30 s`, or `250 ms` below a second or when
/// not whole seconds.
pub(crate) fn duration(ms: i32) -> JsString {
    if ms >= 1000 && ms % 1000 == 0 {
        text(&[&(ms / 1000).into(), &" s".into()])
    } else {
        text(&[&ms.into(), &" ms".into()])
    }
}

/// A JS function backed by a Rust closure, kept for the page's lifetime.
/// Every function the SDK gives the browser has this one signature, so the
/// glue holds one call shim instead of one per signature.
pub(crate) fn function(body: impl Fn(JsValue) -> JsValue + 'static) -> Function {
    Closure::<dyn Fn(JsValue) -> JsValue>::new(body)
        .into_js_value()
        .unchecked_into()
}
