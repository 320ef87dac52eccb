//! Reading and writing plain JS objects, text, and promises.

use js_sys::{Array, Function, JsString, Object, Promise, Reflect};

use crate::js;
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
    set_key(target, &key.into(), value);
}

/// `target[key] = value` with a key already in JS form, ignoring failure.
/// (Only for the SDK's own objects, functions and window, where setting
/// cannot throw.)
pub(crate) fn set_key(target: &JsValue, key: &JsValue, value: &JsValue) {
    js::reflect_set(target, key, value);
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

/// A new Promise with the functions that settle it.
pub(crate) fn deferred() -> (Promise, Function, Function) {
    let mut settle = (
        Function::from(JsValue::UNDEFINED),
        Function::from(JsValue::UNDEFINED),
    );
    let promise = Promise::new(&mut |resolve, reject| settle = (resolve, reject));
    (promise, settle.0, settle.1)
}
