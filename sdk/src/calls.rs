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
const DEADLINE: u32 = 2;
const METHOD: u32 = 3;

/// The one deadline handler: fails the calls whose time is up.
pub(crate) fn deadline_handler(sdk: &Rc<Sdk>) -> Function {
    let sdk = Rc::clone(sdk);
    function(move |_| {
        sdk.deadlines_passed();
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
            // Every call waits the same time, so the oldest pending call is
            // always the next to time out: one timer serves them all, and a
            // call costs no timer of its own.
            let deadline = self.now() + f64::from(self.config.call_timeout_ms);
            let entry = Array::of4(&resolve, &reject, &deadline.into(), method);
            self.pending.set(&id, &entry);
            if !self.deadline_timer.get() {
                self.check_deadlines_in(self.config.call_timeout_ms);
            }
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
            if id.is_undefined() {
                // A notification: nothing waits for a reply.
                let _ = port.post_message(&queued.get(1));
            } else if self.pending.has(&id) {
                // (A call whose deadline passed while queued is gone already.)
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

    /// Fails every call whose deadline has passed, oldest first, and sets
    /// the timer for the next one.
    fn deadlines_passed(&self) {
        self.deadline_timer.set(false);
        let now = self.now();
        let expired = Array::new();
        let mut next = None;
        // The map keeps insertion order, and deadlines only grow along it.
        for id in self.pending.keys().into_iter().flatten() {
            let deadline = Array::from(&self.pending.get(&id))
                .get(DEADLINE)
                .as_f64()
                .unwrap_or(now);
            if deadline > now {
                next = Some(deadline - now);
                break;
            }
            expired.push(&id);
        }
        for id in expired.iter() {
            let method = Array::from(&self.pending.get(&id)).get(METHOD);
            let message = text(&[
                &"no reply to ".into(),
                &method,
                &" within ".into(),
                &duration(self.config.call_timeout_ms),
                &": the host did not answer in time".into(),
            ]);
            self.fail(&id, &self.errors.local(TIMEOUT, &message));
        }
        if let Some(wait) = next {
            // Whole milliseconds, one more so that the check never comes early.
            #[allow(clippy::cast_possible_truncation)]
            self.check_deadlines_in((wait as i32).saturating_add(1));
        }
    }

    /// Schedules the deadline check in `wait_ms`.
    fn check_deadlines_in(&self, wait_ms: i32) {
        let Some(handlers) = self.handlers() else {
            return;
        };
        let scheduled = self
            .window
            .set_timeout_with_callback_and_timeout_and_arguments_0(&handlers.call_deadline, wait_ms)
            .is_ok();
        self.deadline_timer.set(scheduled);
    }

    /// Milliseconds on the page's monotonic clock.
    fn now(&self) -> f64 {
        self.window
            .performance()
            .map_or_else(js_sys::Date::now, |clock| clock.now())
    }

    /// Removes a pending call.
    fn take(&self, id: &JsValue) -> Option<Array> {
        let entry = self.pending.get(id).dyn_into::<Array>().ok()?;
        self.pending.delete(id);
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
