//! Calls in flight: ids, the queue before the handshake, deadlines, and the
//! replies that settle them.

use alloc::rc::Rc;

use js_sys::{Array, Function, Object, Promise, Reflect};
use wasm_bindgen::prelude::*;
use web_sys::{MessageEvent, MessagePort};

use crate::api::MethodName;
use crate::error::{INVALID_PARAMS, NOT_CONNECTED, TIMEOUT};
use crate::object::{duration, function, get, get_key, take_all, text};
use crate::sdk::Sdk;

/// Positions in a pending call's entry.
const RESOLVE: u32 = 0;
const REJECT: u32 = 1;
const TIMER: u32 = 2;
const METHOD: u32 = 3;

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
    pub(crate) fn call(&self, method: &MethodName, params: &JsValue) -> Promise {
        Promise::new(&mut |resolve, reject| {
            if let Some(reason) = self.no_host_reason() {
                let _ = reject.call1(
                    &JsValue::UNDEFINED,
                    &self.errors.local(NOT_CONNECTED, &reason),
                );
                return;
            }
            if method.adds_lines {
                self.warn_product_id_once(params);
            }
            let id = self.next_id.get();
            self.next_id.set(id.wrapping_add(1).max(1));
            let id = JsValue::from(id);
            let keys = &self.keys;
            let request = Object::new();
            let _ = Reflect::set(&request, &keys.jsonrpc, &keys.version);
            let _ = Reflect::set(&request, &keys.id, &id);
            let _ = Reflect::set(&request, &keys.method, &method.wire);
            if !params.is_undefined() {
                let _ = Reflect::set(&request, &keys.params, params);
            }
            let method = &method.wire;
            let timer = self.handlers().map_or(0, |handlers| {
                self.window
                    .set_timeout_with_callback_and_timeout_and_arguments_1(
                        &handlers.call_deadline,
                        self.config.call_timeout_ms,
                        &id,
                    )
                    .unwrap_or(0)
            });
            let entry = Array::of4(&resolve, &reject, &timer.into(), method);
            self.pending.set(&id, &entry);
            match self.port() {
                Some(port) => self.send(&port, &id, &request),
                None => {
                    self.queue.push(&Array::of2(&id, &request));
                }
            }
        })
    }

    /// The handshake finished: listen for replies and send the queue in
    /// call order.
    pub(crate) fn flush_queue(&self, port: &MessagePort) {
        if let Some(handlers) = self.handlers() {
            port.set_onmessage(Some(&handlers.reply));
        }
        for queued in take_all(&self.queue).iter() {
            let queued = Array::from(&queued);
            let id = queued.get(0);
            // A call whose deadline passed while queued is gone already.
            if self.pending.has(&id) {
                self.send(port, &id, &queued.get(1));
            }
        }
    }

    /// No host answered: every queued call fails with `NOT_CONNECTED`.
    pub(crate) fn fail_queue(&self, reason: &JsValue) {
        for queued in take_all(&self.queue).iter() {
            let id = Array::from(&queued).get(0);
            self.fail(&id, &self.errors.local(NOT_CONNECTED, reason));
        }
    }

    fn send(&self, port: &MessagePort, id: &JsValue, request: &JsValue) {
        let Err(problem) = port.post_message(request) else {
            return;
        };
        // Functions, DOM nodes and the like cannot cross to the host.
        let method = Array::from(&self.pending.get(id)).get(METHOD);
        let message = text(&[
            &"the arguments of ".into(),
            &method,
            &" cannot be sent to the host (only plain data can): ".into(),
            &get(&problem, "message"),
        ]);
        self.fail(id, &self.errors.local(INVALID_PARAMS, &message));
    }

    fn reply(&self, event: &MessageEvent) {
        let data = event.data();
        let id = get_key(&data, &self.keys.id);
        let Some(entry) = self.take(&id) else {
            return;
        };
        let failure = get_key(&data, &self.keys.error);
        let (settle, value) = if failure.is_object() {
            (REJECT, self.errors.for_reply(&failure))
        } else {
            (RESOLVE, get_key(&data, &self.keys.result))
        };
        let _ = Function::from(entry.get(settle)).call1(&JsValue::UNDEFINED, &value);
    }

    fn call_deadline(&self, id: &JsValue) {
        let Some(entry) = self.pending.get(id).dyn_into::<Array>().ok() else {
            return;
        };
        let message = text(&[
            &"no reply to ".into(),
            &entry.get(METHOD),
            &" within ".into(),
            &duration(self.config.call_timeout_ms),
            &": the host did not answer in time".into(),
        ]);
        self.fail(id, &self.errors.local(TIMEOUT, &message));
    }

    /// Removes a pending call and clears its deadline.
    fn take(&self, id: &JsValue) -> Option<Array> {
        let entry = self.pending.get(id).dyn_into::<Array>().ok()?;
        self.pending.delete(id);
        if let Some(timer) = entry.get(TIMER).as_f64() {
            // Timer handles are small whole numbers.
            #[allow(clippy::cast_possible_truncation)]
            self.window.clear_timeout_with_handle(timer as i32);
        }
        Some(entry)
    }

    /// Rejects a pending call with `error`.
    fn fail(&self, id: &JsValue, error: &JsValue) {
        if let Some(entry) = self.take(id) {
            let _ = Function::from(entry.get(REJECT)).call1(&JsValue::UNDEFINED, error);
        }
    }

    /// The deprecated `productId` still works, but tools should move on:
    /// say so once per page.
    fn warn_product_id_once(&self, params: &JsValue) {
        if self.warned_product_id.get() || !Array::is_array(params) {
            return;
        }
        let uses_product_id = Array::from(params).iter().any(|line| {
            let id = get(&line, "productId");
            !id.is_undefined() && !id.is_null()
        });
        if uses_product_id {
            self.warned_product_id.set(true);
            web_sys::console::warn_1(&"toolbridge: `productId` on quotes.addLines lines is deprecated; send `linkedItemId` with `lineType: \"product\"` instead. (Shown once.)".into());
        }
    }
}
