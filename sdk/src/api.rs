//! The `window.bridge` object: the methods of 2.1.0 and of the extensions
//! under their namespaces, `ready`, `supports`, `on`, `BridgeError`, and
//! `ui.setAutoResize`. Every object is frozen.

use alloc::rc::Rc;

use js_sys::Object;
use wasm_bindgen::prelude::*;

use crate::SDK_VERSION;
use crate::js::Window;
use crate::object::{get, object, set, text};
use crate::sdk::{Act, Sdk};

/// How a method's call is made.
#[derive(Clone, Copy, PartialEq, Eq)]
pub(crate) enum Kind {
    /// Arguments as given, the normal deadline.
    Plain,
    /// `ui.confirm`: waits for the user, so no deadline.
    WaitsForUser,
    /// `ui.openQuote(id)`: sends `{id}`, and waits for the user too.
    OpenQuote,
}

/// Every method: namespace, name (the wire name is `namespace.name`), and
/// how it is called. The first nine are 2.1.0's; the rest are extensions,
/// which the host lists in the welcome's `capabilities` when it offers them.
const METHODS: [(&str, &str, Kind); 14] = [
    ("context", "get", Kind::Plain),
    ("customers", "list", Kind::Plain),
    ("products", "list", Kind::Plain),
    ("taskTemplates", "list", Kind::Plain),
    ("costItems", "list", Kind::Plain),
    ("jobs", "list", Kind::Plain),
    ("quotes", "list", Kind::Plain),
    ("quotes", "create", Kind::Plain),
    ("quotes", "addLines", Kind::Plain),
    ("quotes", "getOpen", Kind::Plain),
    ("settings", "get", Kind::Plain),
    ("ui", "toast", Kind::Plain),
    ("ui", "confirm", Kind::WaitsForUser),
    ("ui", "openQuote", Kind::OpenQuote),
];

/// Whether a bridge is already on this page (the script was included twice).
pub(crate) fn is_installed(window: &Window) -> bool {
    get(window, "bridge").is_object()
}

/// Defines `window.bridge`, frozen.
pub(crate) fn install(sdk: &Rc<Sdk>) {
    let bridge = object(&[("version", &SDK_VERSION.into())]);
    let mut space = JsValue::UNDEFINED;
    for (namespace, name, kind) in METHODS {
        space = get(&bridge, namespace);
        if !space.is_object() {
            space = Object::new().into();
            set(&bridge, namespace, &space);
        }
        let wire = text(&[&namespace.into(), &".".into(), &name.into()]);
        set(&space, name, &sdk.function(Act::Call(kind), wire.into()));
    }
    // The last namespace is `ui`.
    set(
        &space,
        "setAutoResize",
        &sdk.function(Act::SetAutoResize, JsValue::UNDEFINED),
    );
    for (namespace, _, _) in METHODS {
        Object::freeze(get(&bridge, namespace).unchecked_ref::<Object>());
    }
    for (name, act) in [
        ("ready", Act::Ready),
        ("supports", Act::Supports),
        ("on", Act::On),
    ] {
        set(&bridge, name, &sdk.function(act, JsValue::UNDEFINED));
    }
    let constructor = sdk.function(Act::NewError, JsValue::UNDEFINED);
    sdk.errors.adopt(&constructor);
    set(&bridge, "BridgeError", &constructor);
    Object::freeze(&bridge);
    set(&sdk.window, "bridge", &bridge);
}
