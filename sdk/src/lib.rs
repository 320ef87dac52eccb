//! `bridge.js`: the SDK a tool page loads with one script tag.
//!
//! Built by `cargo xtask build` into a single classic script (wasm-bindgen's
//! `no-modules` glue with this module inlined), it defines `window.bridge`
//! as soon as the tag has run: version 2.1.0, the nine methods of the
//! specification under their namespaces, `ready()`, `supports(method)` and
//! `BridgeError`. Every method returns a Promise; calls made before the host
//! has answered the handshake are queued and sent once it has.
//!
//! The SDK is thin on purpose: arguments pass through to the host, which
//! validates them, so the SDK carries no serialization code. It owns only the
//! transport (handshake, private `MessagePort`, JSON-RPC 2.0), the pre-ready
//! queue, deadlines and error objects, and reports to the host of what the
//! tool's frame refused the page (modal dialogs, the app's window, requests
//! to the app's origin, forged welcomes).

#![cfg_attr(not(feature = "std"), no_std)]
#![deny(missing_docs)]

extern crate alloc;

mod api;
mod calls;
mod channel;
mod config;
mod error;
mod guard;
mod object;
mod runtime;
mod sdk;

use wasm_bindgen::prelude::*;

#[wasm_bindgen]
extern "C" {
    /// The page's `window` (a script tag only ever runs in one). Bound
    /// directly: `web_sys::window()` probes four globals to find it.
    #[wasm_bindgen(thread_local_v2, js_name = window)]
    static WINDOW: web_sys::Window;
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
    let window = WINDOW.with(Clone::clone);
    if !window.is_object() || api::is_installed(&window) {
        return;
    }
    let sdk = sdk::Sdk::new(window);
    api::install(&sdk);
    sdk.connect();
}
