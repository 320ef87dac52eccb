//! Calls in flight: ids, the queue before the handshake, deadlines (none for
//! the calls that wait for the user, a longer one for `fetch`), and the
//! messages on the port: the replies that settle calls, and the host's
//! notifications.

use js_sys::{Array, Function, Object, Promise};
use wasm_bindgen::prelude::*;

use crate::api::Kind;
use crate::error::{INVALID_PARAMS, NOT_CONNECTED, TIMEOUT};
use crate::js::{self, Message, Port};
use crate::object::{deferred, duration, get, get_key, object, set_key, take_all, text};
use crate::sdk::Sdk;

/// Positions in a pending call's entry.
const RESOLVE: u32 = 0;
const REJECT: u32 = 1;
const DEADLINE: u32 = 2;
const METHOD: u32 = 3;

impl Sdk {
    /// Calls the host's `method` (its wire name) with `params`; the Promise
    /// settles with the reply, or rejects with a `BridgeError`.
    pub(crate) fn call(&self, kind: Kind, method: &JsValue, params: JsValue) -> Promise {
        let (promise, resolve, reject) = deferred();
        if let Some(reason) = self.no_host_reason() {
            let _ = reject.call1(
                &JsValue::UNDEFINED,
                &self.errors.local(NOT_CONNECTED, &reason),
            );
            return promise;
        }
        let params = match kind {
            Kind::OpenQuote => object(&[("id", &params)]).into(),
            _ => params,
        };
        let id = self.next_id.get();
        self.next_id.set(id.wrapping_add(1).max(1));
        let id = JsValue::from(id);
        let keys = &self.keys;
        let request = Object::new();
        set_key(&request, &keys.jsonrpc, &keys.version);
        set_key(&request, &keys.id, &id);
        set_key(&request, &keys.method, method);
        if !params.is_undefined() {
            set_key(&request, &keys.params, &params);
        }
        // One timer serves every call: it is set for the earliest deadline,
        // and each check sets it again for the next. A call that waits for
        // the user has no deadline, and the check passes over it.
        let timeout_ms = match kind {
            Kind::WaitsForUser | Kind::OpenQuote => None,
            Kind::Fetch => Some(self.config.fetch_timeout_ms),
            Kind::Plain | Kind::Token => Some(self.config.call_timeout_ms),
        };
        let deadline = timeout_ms.map_or(JsValue::UNDEFINED, |ms| {
            let now = js::now();
            let deadline = now + f64::from(ms);
            if deadline < self.next_check.get() {
                self.check_deadlines_at(deadline, now);
            }
            deadline.into()
        });
        let entry = Array::of4(&resolve, &reject, &deadline, method);
        self.pending.set(&id, &entry);
        match self.port() {
            Some(port) => self.send(&port, &id, &request),
            None => {
                self.queue.push(&Array::of2(&id, &request));
            }
        }
        promise
    }

    /// The handshake finished: listen for replies and send the queue in
    /// call order.
    pub(crate) fn flush_queue(&self, port: &Port) {
        if let Some(handlers) = self.handlers() {
            port.set_onmessage(&handlers.port_message);
        }
        for queued in take_all(&self.queue).iter() {
            let queued: Array = queued.unchecked_into();
            let id = queued.get(0);
            if id.is_undefined() {
                // A notification: nothing waits for a reply.
                let _ = port.post(&queued.get(1));
            } else if self.pending.has(&id) {
                // (A call whose deadline passed while queued is gone already.)
                self.send(port, &id, &queued.get(1));
            }
        }
    }

    /// No host answered: every queued call fails with `NOT_CONNECTED`.
    pub(crate) fn fail_queue(&self, reason: &JsValue) {
        for queued in take_all(&self.queue).iter() {
            let id = queued.unchecked_into::<Array>().get(0);
            self.fail(&id, &self.errors.local(NOT_CONNECTED, reason));
        }
    }

    fn send(&self, port: &Port, id: &JsValue, request: &JsValue) {
        let Err(problem) = port.post(request) else {
            return;
        };
        // Functions, DOM nodes and the like cannot cross to the host.
        let method = self.pending.get(id).unchecked_into::<Array>().get(METHOD);
        let message = text(&[
            &"the arguments of ".into(),
            &method,
            &" cannot be sent to the host (only plain data can): ".into(),
            &get(&problem, "message"),
        ]);
        self.fail(id, &self.errors.local(INVALID_PARAMS, &message));
    }

    /// A message on the port: a reply (it has an `id`) settles its call; a
    /// notification (no `id`, a string `method`) goes to the event's
    /// listeners, or is the host's deprecation notice; anything else is
    /// ignored.
    pub(crate) fn port_message(&self, event: &JsValue) {
        let data = event.unchecked_ref::<Message>().data();
        let id = get_key(&data, &self.keys.id);
        if id.is_undefined() {
            let method = get_key(&data, &self.keys.method);
            let params = get_key(&data, &self.keys.params);
            if method == self.keys.deprecated {
                self.show_deprecation_once(&params);
            } else if method.is_string() {
                let changed: JsValue = "context.changed".into();
                if method == changed {
                    crate::theme::apply(&self.window, &get_key(&params, &"theme".into()));
                } else if method == "session.ended" {
                    self.forget_token();
                }
                self.dispatch(&method, &params);
            }
            return;
        }
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
    /// the timer for the next deadline.
    pub(crate) fn deadlines_passed(&self) {
        self.next_check.set(f64::INFINITY);
        let now = js::now();
        let mut next = f64::INFINITY;
        // Calls without a deadline (waiting for the user) are passed over.
        for id in Array::from(&self.pending.keys()).iter() {
            let entry: Array = self.pending.get(&id).unchecked_into();
            let Some(deadline) = entry.get(DEADLINE).as_f64() else {
                continue;
            };
            if deadline > now {
                next = next.min(deadline);
                continue;
            }
            let method = entry.get(METHOD);
            let waited = if method == self.keys.fetch {
                self.config.fetch_timeout_ms
            } else {
                self.config.call_timeout_ms
            };
            let message = text(&[
                &"no reply to ".into(),
                &method,
                &" within ".into(),
                &duration(waited),
                &": the host did not answer in time".into(),
            ]);
            self.fail(&id, &self.errors.local(TIMEOUT, &message));
        }
        if next < f64::INFINITY {
            self.check_deadlines_at(next, now);
        }
    }

    /// Schedules the deadline check for `deadline` (it is `now`).
    fn check_deadlines_at(&self, deadline: f64, now: f64) {
        let Some(handlers) = self.handlers() else {
            return;
        };
        // Whole milliseconds, one more so that the check never comes early;
        // deadlines are at most `i32::MAX` ms away (`config`).
        #[allow(clippy::cast_possible_truncation)]
        let wait_ms = ((deadline - now) as i32).saturating_add(1);
        self.window.set_timeout(&handlers.call_deadline, wait_ms);
        self.next_check.set(deadline);
    }

    /// Removes a pending call.
    fn take(&self, id: &JsValue) -> Option<Array> {
        let entry = self.pending.get(id);
        self.pending.delete(id).then(|| entry.unchecked_into())
    }

    /// Rejects a pending call with `error`.
    fn fail(&self, id: &JsValue, error: &JsValue) {
        if let Some(entry) = self.take(id) {
            let _ = Function::from(entry.get(REJECT)).call1(&JsValue::UNDEFINED, error);
        }
    }

    /// The host says the tool used a deprecated part of the bridge (which
    /// part is the host's to tell, from the protocol's rules): its message
    /// goes on the console, once per page.
    fn show_deprecation_once(&self, params: &JsValue) {
        if !self.warned_deprecation.replace(true) {
            js::warn(&get(params, "message"));
        }
    }
}
