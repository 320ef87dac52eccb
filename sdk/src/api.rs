//! The `window.bridge` object: the methods of 2.1.0 and of the extensions
//! under their namespaces, `ready`, `supports`, `on`, `fetch`,
//! `BridgeError`, and `ui.setAutoResize`. Every object is frozen.

use alloc::rc::Rc;

use js_sys::{JsString, Object};
use wasm_bindgen::prelude::*;

use crate::SDK_VERSION;
use crate::js::Window;
use crate::object::{get, object, set, set_key};
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
    /// `auth.getToken()`: answered from the kept token while it is fresh
    /// (module `token`).
    Token,
    /// `fetch`: its own, longer deadline (module `fetch`).
    Fetch,
}

/// The functions of each namespace (its object under `window.bridge`): the
/// methods, whose wire name is `namespace.name`, with how each is called,
/// and `ui.setAutoResize`. The first nine methods are 2.1.0's; the rest are
/// extensions, which the host lists in the welcome's `capabilities` when it
/// offers them.
const NAMESPACES: [(&str, &[(&str, Act)]); 11] = [
    ("context", &[("get", PLAIN)]),
    ("customers", &[("list", PLAIN)]),
    ("products", &[("list", PLAIN)]),
    ("taskTemplates", &[("list", PLAIN)]),
    ("costItems", &[("list", PLAIN)]),
    ("jobs", &[("list", PLAIN)]),
    (
        "quotes",
        &[
            ("list", PLAIN),
            ("create", PLAIN),
            ("addLines", PLAIN),
            ("getOpen", PLAIN),
        ],
    ),
    ("settings", &[("get", PLAIN)]),
    ("connectivity", &[("get", PLAIN)]),
    ("auth", &[("getToken", Act::Call(Kind::Token))]),
    (
        "ui",
        &[
            ("toast", PLAIN),
            ("confirm", Act::Call(Kind::WaitsForUser)),
            ("openQuote", Act::Call(Kind::OpenQuote)),
            ("setAutoResize", Act::SetAutoResize),
        ],
    ),
];

const PLAIN: Act = Act::Call(Kind::Plain);

/// Whether a bridge is already on this page (the script was included twice).
pub(crate) fn is_installed(window: &Window) -> bool {
    get(window, "bridge").is_object()
}

/// Defines `window.bridge`, frozen.
pub(crate) fn install(sdk: &Rc<Sdk>) {
    let bridge = object(&[("version", &SDK_VERSION.into())]);
    // Each string crosses from the module once: starting the bridge is on
    // the critical path of every tool's first call.
    let dot = JsValue::from(".");
    for (namespace, functions) in NAMESPACES {
        let space = Object::new();
        let namespace = JsString::from(namespace);
        let prefix = namespace.concat(&dot);
        for &(name, act) in functions {
            let name = JsValue::from(name);
            let wire = prefix.concat(&name);
            set_key(&space, &name, &sdk.function(act, wire.into()));
        }
        set_key(&bridge, &namespace, &Object::freeze(&space));
    }
    for (name, act) in [
        ("ready", Act::Ready),
        ("supports", Act::Supports),
        ("on", Act::On),
        ("fetch", Act::Fetch),
    ] {
        set(&bridge, name, &sdk.function(act, JsValue::UNDEFINED));
    }
    let constructor = sdk.function(Act::NewError, JsValue::UNDEFINED);
    sdk.errors.adopt(&constructor);
    set(&bridge, "BridgeError", &constructor);
    Object::freeze(&bridge);
    set(&sdk.window, "bridge", &bridge);
}
