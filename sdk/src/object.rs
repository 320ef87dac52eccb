//! Reading and writing plain JS objects.

use js_sys::{Function, Object, Reflect};
use wasm_bindgen::prelude::*;

/// A JS function backed by a Rust closure, kept for the page's lifetime.
/// Every function the SDK gives the browser has this one signature, so the
/// glue holds one call shim instead of one per signature.
pub(crate) fn function(body: impl Fn(JsValue) -> JsValue + 'static) -> Function {
    Closure::<dyn Fn(JsValue) -> JsValue>::new(body)
        .into_js_value()
        .unchecked_into()
}

/// `target[key]`, or `undefined` when `target` is not an object.
pub(crate) fn get(target: &JsValue, key: &str) -> JsValue {
    if target.is_object() {
        Reflect::get(target, &key.into()).unwrap_or(JsValue::UNDEFINED)
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
