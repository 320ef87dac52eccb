//! The host's half of the handshake (DESIGN.md §3): a hello counts only when
//! it comes from the window of a frame this host mounted *and* from that
//! tool's registered origin. The welcome carries the tool type the page gave
//! to `mount`, the extensions offered to it (from that type, the mount's
//! options — `autoResize`, `settings`, `identity`, `fetch` — and the page's
//! hooks), and transfers a fresh private port.

use std::rc::{Rc, Weak};

use js_sys::{Array, Reflect};
use toolbridge_protocol::capability::Capability;
use toolbridge_protocol::handshake::{HandshakeMessage, Hello, PROTOCOL_VERSION, Welcome};
use wasm_bindgen::JsValue;
use wasm_bindgen::closure::Closure;
use web_sys::{MessageChannel, MessageEvent};

use crate::debug::DroppedRecord;
use crate::dispatch;
use crate::host::Shared;
use crate::json;
use crate::registry::Link;

/// Handles one message posted to the page's window.
pub(crate) fn on_window_message(shared: &Rc<Shared>, event: &MessageEvent) {
    let data = event.data();
    let origin = event.origin();
    // `event.source` is compared by identity only: a cross-origin window is
    // not even an `instanceof Object` here, so no checked cast.
    let key = event
        .source()
        .and_then(|source| shared.tools.borrow().key_of_window(&source));
    let drop = |reason: String, tool: Option<String>| {
        shared.debug.dropped(DroppedRecord {
            reason,
            origin: origin.clone(),
            tool,
        });
    };

    let Some(key) = key else {
        // Other scripts' messages are none of our business; a toolbridge
        // message from a window we did not mount is an attempt worth logging.
        if looks_like_toolbridge(&data) {
            drop(
                "a toolbridge message from a window that is not a frame this host mounted"
                    .to_owned(),
                None,
            );
        }
        return;
    };
    let (slug, registered) = {
        let tools = shared.tools.borrow();
        let Some(mounted) = tools.get(key) else {
            return;
        };
        (mounted.tool.slug.clone(), mounted.tool.origin.clone())
    };
    let tool = Some(slug.clone());
    if !is_hello(&data) {
        drop(
            "not a hello: a tool's window messages are only for the handshake; calls go over its private port".to_owned(),
            tool,
        );
        return;
    }
    if origin != registered {
        drop(
            format!("a hello from origin {origin}, but tool {slug} is registered at {registered}"),
            tool,
        );
        return;
    }
    let Some(hello) = json::from_js(&data).and_then(|value| Hello::from_message(&value)) else {
        drop(
            "a malformed hello (it needs protocol, sdkVersion and a non-empty instance)".to_owned(),
            tool,
        );
        return;
    };
    if !hello.is_supported() {
        drop(
            format!(
                "the tool's SDK speaks protocol {}; this host speaks {PROTOCOL_VERSION}",
                hello.protocol
            ),
            tool,
        );
        return;
    }
    let already = shared
        .tools
        .borrow()
        .get(key)
        .and_then(|m| m.link.as_ref())
        .is_some_and(|link| link.instance == hello.instance);
    if already {
        drop(
            "a repeated hello from a tool that is already connected".to_owned(),
            tool,
        );
        return;
    }
    if let Err(why) = connect(shared, key, hello.instance) {
        drop(format!("the welcome could not be sent: {why}"), tool);
    }
}

/// Opens a private channel to a mounted tool and welcomes it; a previous
/// channel (the page before a reload) is closed.
fn connect(shared: &Rc<Shared>, key: u32, instance: String) -> Result<(), String> {
    let mut tools = shared.tools.borrow_mut();
    let mounted = tools.get_mut(key).ok_or("the tool was unmounted")?;
    let window = mounted
        .frame
        .content_window()
        .ok_or("the tool's frame has no window")?;
    let mut offers = shared.hooks.offers(&mounted.tool);
    if shared.keeps_context() {
        offers.push(Capability::ContextChanged);
    }
    let mut welcome = Welcome::for_tool(mounted.tool.tool_type, &offers);
    welcome.theme = shared.theme();
    let capabilities = welcome.capabilities.clone();
    let welcome =
        json::to_js(&HandshakeMessage::Welcome(welcome)).map_err(|error| error.to_string())?;
    let channel = MessageChannel::new().map_err(|_| "no MessageChannel")?;
    let port = channel.port1();
    let weak: Weak<Shared> = Rc::downgrade(shared);
    let reply_port = port.clone();
    let on_message = Closure::<dyn FnMut(MessageEvent)>::new(move |event: MessageEvent| {
        if let Some(shared) = weak.upgrade() {
            dispatch::on_port_message(&shared, key, &reply_port, &event.data());
        }
    });
    // Replacing the link drops the old one, which closes its port.
    mounted.link = Some(Link::new(instance, port, capabilities, on_message));
    window
        .post_message_with_transfer(
            &welcome,
            &mounted.tool.origin,
            &Array::of1(&channel.port2()),
        )
        .map_err(|_| "postMessage refused the welcome".to_owned())
}

fn field(data: &JsValue, name: &str) -> Option<JsValue> {
    if !data.is_object() {
        return None;
    }
    Reflect::get(data, &JsValue::from_str(name)).ok()
}

fn is_hello(data: &JsValue) -> bool {
    field(data, "toolbridge")
        .and_then(|v| v.as_string())
        .as_deref()
        == Some("hello")
}

/// A handshake message or a JSON-RPC call.
fn looks_like_toolbridge(data: &JsValue) -> bool {
    field(data, "toolbridge").is_some_and(|v| !v.is_undefined())
        || field(data, "jsonrpc").is_some_and(|v| !v.is_undefined())
}
