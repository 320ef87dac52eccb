//! Calls in flight: ids, the queue before the handshake, deadlines, and the
//! replies that settle them.

use alloc::rc::Rc;
use alloc::string::String;
use alloc::vec::Vec;

use js_sys::{Array, Function, Object, Promise};
use wasm_bindgen::prelude::*;
use web_sys::{MessageEvent, MessagePort};

use crate::error::{INVALID_PARAMS, NOT_CONNECTED, TIMEOUT};
use crate::object::{function, get, object, set};
use crate::sdk::{Link, Pending, Sdk};
use crate::text;

/// The one deadline handler; `setTimeout` passes it the call's id.
pub(crate) fn deadline_handler(sdk: &Rc<Sdk>) -> Function {
    let sdk = Rc::clone(sdk);
    function(move |id| {
        sdk.call_deadline(&id);
        JsValue::UNDEFINED
    })
}

/// The one handler of replies on the port.
pub(crate) fn reply_handler(sdk: &Rc<Sdk>) -> Function {
    let sdk = Rc::clone(sdk);
    function(move |event| {
        sdk.reply(event.unchecked_ref::<MessageEvent>());
        JsValue::UNDEFINED
    })
}

impl Sdk {
    /// Calls `method` on the host with `params`; the Promise settles with the
    /// reply, or rejects with a `BridgeError`.
    pub(crate) fn call(&self, method: &'static str, params: &JsValue) -> Promise {
        Promise::new(&mut |resolve, reject| {
            let port = match &*self.link.borrow() {
                Link::NoHost(message) => {
                    let _ = reject.call1(
                        &JsValue::UNDEFINED,
                        &self.errors.local(NOT_CONNECTED, message),
                    );
                    return;
                }
                Link::Connected { port, .. } => Some(port.clone()),
                Link::Connecting => None,
            };
            if method == "quotes.addLines" {
                self.warn_product_id_once(params);
            }
            let id = self.next_id.get();
            self.next_id.set(id.wrapping_add(1).max(1));
            let request = object(&[
                ("jsonrpc", &"2.0".into()),
                ("id", &id.into()),
                ("method", &method.into()),
            ]);
            if !params.is_undefined() {
                set(&request, "params", params);
            }
            let timer = self.handlers().map_or(0, |handlers| {
                self.window
                    .set_timeout_with_callback_and_timeout_and_arguments_1(
                        &handlers.call_deadline,
                        i32::try_from(self.config.call_timeout_ms).unwrap_or(i32::MAX),
                        &id.into(),
                    )
                    .unwrap_or(0)
            });
            let queued = port.is_none().then(|| request.clone());
            self.pending.borrow_mut().push(Pending {
                id,
                method,
                resolve,
                reject,
                timer,
                queued,
            });
            if let Some(port) = port {
                self.send(&port, id, &request);
            }
        })
    }

    /// The handshake finished: listen for replies and send the queue in
    /// call order.
    pub(crate) fn flush_queue(&self, port: &MessagePort) {
        if let Some(handlers) = self.handlers() {
            port.set_onmessage(Some(&handlers.reply));
        }
        let queued: Vec<(u32, Object)> = self
            .pending
            .borrow_mut()
            .iter_mut()
            .filter_map(|p| p.queued.take().map(|request| (p.id, request)))
            .collect();
        for (id, request) in queued {
            self.send(port, id, &request);
        }
    }

    /// No host answered: every queued call fails with `NOT_CONNECTED`.
    pub(crate) fn fail_queue(&self, message: &str) {
        let (failed, kept): (Vec<Pending>, Vec<Pending>) =
            core::mem::take(&mut *self.pending.borrow_mut())
                .into_iter()
                .partition(|p| p.queued.is_some());
        *self.pending.borrow_mut() = kept;
        for pending in failed {
            self.settle_failed(&pending, &self.errors.local(NOT_CONNECTED, message));
        }
    }

    fn send(&self, port: &MessagePort, id: u32, request: &Object) {
        let Err(problem) = port.post_message(request) else {
            return;
        };
        // Functions, DOM nodes and the like cannot cross to the host.
        if let Some(pending) = self.take(id) {
            let reason = get(&problem, "message").as_string().unwrap_or_default();
            let message = text::join(&[
                "the arguments of ",
                pending.method,
                " cannot be sent to the host (only plain data can): ",
                &reason,
            ]);
            self.settle_failed(&pending, &self.errors.local(INVALID_PARAMS, &message));
        }
    }

    fn reply(&self, event: &MessageEvent) {
        let data = event.data();
        let Some(pending) = get(&data, "id")
            .as_f64()
            .and_then(whole_id)
            .and_then(|id| self.take(id))
        else {
            return;
        };
        let failure = get(&data, "error");
        if failure.is_object() {
            let _ = pending
                .reject
                .call1(&JsValue::UNDEFINED, &self.errors.for_reply(&failure));
        } else {
            let _ = pending
                .resolve
                .call1(&JsValue::UNDEFINED, &get(&data, "result"));
        }
    }

    fn call_deadline(&self, id: &JsValue) {
        let Some(pending) = id.as_f64().and_then(whole_id).and_then(|id| self.take(id)) else {
            return;
        };
        let mut message = text::join(&["no reply to ", pending.method, " within "]);
        text::push_duration(&mut message, self.config.call_timeout_ms);
        message.push_str(": the host did not answer in time");
        self.settle_failed(&pending, &self.errors.local(TIMEOUT, &message));
    }

    /// Removes a pending call and clears its deadline.
    fn take(&self, id: u32) -> Option<Pending> {
        let mut pending = self.pending.borrow_mut();
        let at = pending.iter().position(|p| p.id == id)?;
        let call = pending.remove(at);
        self.window.clear_timeout_with_handle(call.timer);
        Some(call)
    }

    fn settle_failed(&self, pending: &Pending, error: &JsValue) {
        self.window.clear_timeout_with_handle(pending.timer);
        let _ = pending.reject.call1(&JsValue::UNDEFINED, error);
    }

    /// The deprecated `productId` still works, but tools should move on:
    /// say so once per page.
    fn warn_product_id_once(&self, params: &JsValue) {
        let Ok(lines) = params.clone().dyn_into::<Array>() else {
            return;
        };
        let uses_product_id = lines.iter().any(|line| {
            let id = get(&line, "productId");
            !id.is_undefined() && !id.is_null()
        });
        if uses_product_id && !self.warned_product_id.replace(true) {
            web_sys::console::warn_1(&String::from(
                "toolbridge: `productId` on quotes.addLines lines is deprecated; send `linkedItemId` with `lineType: \"product\"` instead. (Shown once.)",
            ).into());
        }
    }
}

/// A reply id: the ids the SDK hands out are whole numbers from 1.
fn whole_id(value: f64) -> Option<u32> {
    if !(1.0..=f64::from(u32::MAX)).contains(&value) {
        return None;
    }
    // In range, so the conversion cannot saturate; a fractional id would
    // truncate and is then rejected by the round trip.
    #[allow(clippy::cast_possible_truncation, clippy::cast_sign_loss)]
    let id = value as u32;
    (f64::from(id).to_bits() == value.to_bits()).then_some(id)
}
