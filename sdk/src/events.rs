//! `bridge.on(event, listener)`: the host's notifications, delivered to the
//! tool's listeners.
//!
//! The host sends an event as a JSON-RPC notification (no `id`) on the
//! private port, and only there: nothing posted on the window counts. Each
//! event keeps its subscriptions in a `Map` from a key made for the
//! subscription to its listener, so the same function subscribed twice is
//! two subscriptions, and the unsubscribe function (the one `off` handler
//! bound to the key) removes exactly its own. A dispatch calls a copy of the
//! listeners taken when it starts, in subscription order, so listeners added
//! or removed meanwhile count from the next one; a listener that throws is
//! reported on the console and the others still run.

use js_sys::{Array, Function, Map};
use wasm_bindgen::prelude::*;

use crate::sdk::Sdk;

/// The events a tool may subscribe to.
pub(crate) const EVENTS: [&str; 5] = [
    "quote.changed",
    "session.ended",
    "settings.changed",
    "context.changed",
    "connectivity.changed",
];

impl Sdk {
    /// `bridge.on(event, listener)`: subscribes, returning the function that
    /// unsubscribes. Throws `INVALID_PARAMS` for an unknown event or a
    /// listener that is not a function.
    pub(crate) fn on(&self, event: &JsValue, listener: &JsValue) -> JsValue {
        let subscriptions = self.listeners.get(event);
        if subscriptions.is_undefined() {
            wasm_bindgen::throw_val(self.errors.invalid(
                "event",
                "bridge.on takes \"quote.changed\", \"session.ended\", \"settings.changed\", \"context.changed\" or \"connectivity.changed\"",
            ));
        }
        if !listener.is_function() {
            wasm_bindgen::throw_val(
                self.errors
                    .invalid("listener", "bridge.on takes a function as the listener"),
            );
        }
        // The key remembers its event's subscriptions, for `off`.
        let key = Array::of1(&subscriptions);
        subscriptions.unchecked_ref::<Map>().set(&key, listener);
        self.handlers().map_or(JsValue::UNDEFINED, |handlers| {
            handlers.off.bind1(&JsValue::UNDEFINED, &key).into()
        })
    }

    /// Calls the listeners of `event` with `params`.
    pub(crate) fn dispatch(&self, event: &JsValue, params: &JsValue) {
        let subscriptions = self.listeners.get(event);
        if subscriptions.is_undefined() {
            return;
        }
        let listeners = Array::from(&subscriptions.unchecked_ref::<Map>().values());
        for listener in listeners.iter() {
            if let Err(error) = listener
                .unchecked_ref::<Function>()
                .call1(&JsValue::UNDEFINED, params)
            {
                crate::js::error(&"toolbridge: a bridge.on listener threw:".into(), &error);
            }
        }
    }
}

/// Ends the subscription `key`; again does nothing.
pub(crate) fn off(key: &JsValue) {
    // Only `on` makes keys: an array holding the event's `Map`.
    key.unchecked_ref::<Array>()
        .get(0)
        .unchecked_into::<Map>()
        .delete(key);
}
