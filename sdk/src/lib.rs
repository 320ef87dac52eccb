//! `bridge.js`: the SDK a tool page loads with one script tag.
//!
//! Built by `cargo xtask build` into a single classic script (wasm-bindgen's
//! `no-modules` glue with this module inlined), it defines `window.bridge`
//! as soon as the tag has run: version 2.1.0, the nine methods of the
//! specification under their namespaces, `ready()`, `supports(name)` and
//! `BridgeError`. Every method returns a Promise; calls made before the host
//! has answered the handshake are queued and sent once it has.
//!
//! Beyond 2.1.0 the bridge has extensions, which a tool uses only where the
//! host lists them in the welcome's `capabilities` (an older host lists
//! none, and `supports` then answers `false` for them):
//! - `quotes.getOpen()`, `settings.get()`, `connectivity.get()`, and
//!   `ui.toast`, `ui.confirm` and `ui.openQuote` under the frozen
//!   `bridge.ui`: methods like the others,
//!   except that `ui.openQuote(id)` sends `{id}`, and that `ui.confirm` and
//!   `ui.openQuote` have no call deadline, since they wait for the user
//!   (module `calls`);
//! - `bridge.on(event, listener)` for the host's `quote.changed`,
//!   `session.ended`, `settings.changed`, `context.changed` and
//!   `connectivity.changed` notifications, which count only on the private
//!   port (module `events`);
//! - the page's theme, which the host names in the welcome and in
//!   `context.changed`, set on the tool's document as CSS custom properties
//!   (module `theme`);
//! - `auth.getToken()`, whose token bridge.js keeps until shortly before it
//!   expires, so calling it often costs no round trip (module `token`);
//! - `bridge.fetch(url, init)`, a request the toolbridge server makes for
//!   the tool, whose arguments bridge.js reads as `fetch` does and whose
//!   answer it makes a `Response` (module `fetch`);
//! - auto-resize: the page's height, reported to the host as `ui.resize`
//!   notifications at most once per animation frame, which
//!   `bridge.ui.setAutoResize(false)` turns off (module `resize`).
//!
//! The SDK is thin on purpose: arguments pass through to the host, which
//! validates them, so the SDK carries no serialization code. It owns only the
//! transport (handshake, private `MessagePort`, JSON-RPC 2.0), the pre-ready
//! queue, deadlines and error objects, the event listeners, the page's
//! height, and reports to the host of what the tool's frame refused the page
//! (modal dialogs, the app's window, requests to the app's origin, forged
//! welcomes).
//!
//! Its size is budgeted (16 KB after gzip -9), which shapes the code: every
//! function it hands to the browser is one closure type (`sdk::Act`),
//! browser APIs are declared with plain signatures rather than `web-sys`'s
//! defensive ones (module `js`), and state lives in JS collections.

#![cfg_attr(not(feature = "std"), no_std)]
#![deny(missing_docs)]

extern crate alloc;

mod api;
mod calls;
mod channel;
mod config;
mod error;
mod events;
mod fetch;
mod guard;
mod js;
mod object;
mod resize;
mod runtime;
mod sdk;
mod theme;
mod token;

use wasm_bindgen::prelude::*;

#[wasm_bindgen]
extern "C" {
    /// The page's global object, read for its `window`.
    #[wasm_bindgen(js_name = globalThis)]
    type Global;

    /// The page's `window` (a script tag only ever runs in one).
    #[wasm_bindgen(static_method_of = Global, js_class = globalThis, getter, js_name = window)]
    fn window() -> js::Window;
}

/// The SDK version reported as `window.bridge.version`.
pub const SDK_VERSION: &str = "2.1.0";

/// The wire protocol version of the handshake.
pub const PROTOCOL_VERSION: u32 = 1;

/// Runs when the script tag has loaded the module: installs `window.bridge`
/// and starts the handshake. A second copy of the script on the same page
/// leaves the first one in place.
#[wasm_bindgen(start)]
pub fn start() {
    let window = Global::window();
    if !window.is_object() || api::is_installed(&window) {
        return;
    }
    let sdk = sdk::Sdk::new(window);
    api::install(&sdk);
    sdk.connect();
}
