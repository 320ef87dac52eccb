//! The `window.bridge` object.

use alloc::rc::Rc;

use js_sys::{Function, Object};
use wasm_bindgen::prelude::*;
use web_sys::Window;

use crate::SDK_VERSION;
use crate::object::{function, get, object, set};
use crate::sdk::Sdk;

/// The nine methods: namespace, name, and wire name.
const METHODS: [(&str, &str, &str); 9] = [
    ("context", "get", "context.get"),
    ("customers", "list", "customers.list"),
    ("products", "list", "products.list"),
    ("taskTemplates", "list", "taskTemplates.list"),
    ("costItems", "list", "costItems.list"),
    ("jobs", "list", "jobs.list"),
    ("quotes", "list", "quotes.list"),
    ("quotes", "create", "quotes.create"),
    ("quotes", "addLines", "quotes.addLines"),
];

/// Whether a bridge is already on this page (the script was included twice).
pub(crate) fn is_installed(window: &Window) -> bool {
    get(window, "bridge").is_object()
}

/// Defines `window.bridge`, frozen.
pub(crate) fn install(sdk: &Rc<Sdk>) {
    let bridge = object(&[("version", &SDK_VERSION.into())]);
    for (namespace, name, wire) in METHODS {
        let mut space = get(&bridge, namespace);
        if !space.is_object() {
            space = Object::new().into();
            set(&bridge, namespace, &space);
        }
        set(&space, name, &method(sdk, wire));
    }
    for (namespace, _, _) in METHODS {
        Object::freeze(get(&bridge, namespace).unchecked_ref::<Object>());
    }
    let ready_sdk = Rc::clone(sdk);
    let ready = function(move |_| ready_sdk.ready().into());
    let supports_sdk = Rc::clone(sdk);
    let supports = function(move |method| JsValue::from_bool(supports_sdk.supports(&method)));
    set(&bridge, "ready", &ready);
    set(&bridge, "supports", &supports);
    set(&bridge, "BridgeError", sdk.errors.constructor());
    Object::freeze(&bridge);
    set(&sdk.window, "bridge", &bridge);
}

/// One bridge method: passes its argument through to the host.
fn method(sdk: &Rc<Sdk>, wire: &'static str) -> Function {
    let sdk = Rc::clone(sdk);
    let name = MethodName {
        wire: wire.into(),
        adds_lines: wire == "quotes.addLines",
    };
    function(move |params| sdk.call(&name, &params).into())
}

/// A method's wire name, in JS form once.
pub(crate) struct MethodName {
    pub(crate) wire: JsValue,
    pub(crate) adds_lines: bool,
}
