//! `bridge.auth.getToken()`: the identity token, kept until shortly before
//! it expires so that a tool may ask before every request to its server.
//!
//! The host answers `auth.getToken` with `{token, expiresAt, expiresIn}`;
//! the tool gets the `token` string. It is handed out again until
//! [`REFRESH_BEFORE_MS`] before the end of its lifetime (`expiresIn`, read
//! on the page's monotonic clock from when the answer came, so a wrong
//! system clock does not matter); after that the next call asks the host
//! again. Calls made while a request is out share it. A refusal or a
//! timeout keeps nothing: the next call asks again, and neither does the end
//! of the user's session (`session.ended`).

use core::cell::Cell;

use js_sys::Promise;
use wasm_bindgen::prelude::*;

use crate::api::Kind;
use crate::js;
use crate::object::get;
use crate::sdk::Sdk;

/// How long before its expiry a kept token is no longer handed out, in ms
/// (`toolbridge_protocol::identity::REFRESH_BEFORE_EXPIRY_SECS`).
const REFRESH_BEFORE_MS: f64 = 30_000.0;

#[wasm_bindgen]
extern "C" {
    /// A Promise, seen for its `then`.
    pub(crate) type Thenable;

    /// `promise.then(fulfilled, rejected)`.
    #[wasm_bindgen(method, js_name = then)]
    pub(crate) fn then_both(this: &Thenable, fulfilled: &JsValue, rejected: &JsValue) -> Promise;
}

impl Sdk {
    /// `bridge.auth.getToken()` (`method` is its wire name).
    pub(crate) fn token(&self, method: &JsValue) -> Promise {
        if js::now() < self.token_until.get() {
            return Promise::resolve(&peek(&self.token));
        }
        let pending = peek(&self.token_pending);
        if !pending.is_undefined() {
            return pending.unchecked_into();
        }
        let call = self.call(Kind::Plain, method, JsValue::UNDEFINED);
        let Some(handlers) = self.handlers() else {
            return call;
        };
        let promise = call
            .unchecked_ref::<Thenable>()
            .then_both(&handlers.token_arrived, &handlers.token_failed);
        self.token_pending.set(promise.clone().into());
        promise
    }

    /// The host's answer: keep the token, and give it to every caller.
    pub(crate) fn token_arrived(&self, answer: &JsValue) -> JsValue {
        let token = get(answer, "token");
        let lifetime_ms = get(answer, "expiresIn").as_f64().unwrap_or(0.0) * 1000.0;
        self.token_until
            .set(js::now() + lifetime_ms - REFRESH_BEFORE_MS);
        self.token.set(token.clone());
        self.token_pending.take();
        token
    }

    /// The user's session ended (`session.ended`): the kept token is theirs, so it is handed
    /// out no more; the next call asks the host, which answers for whoever is signed in then.
    pub(crate) fn forget_token(&self) {
        self.token_until.set(0.0);
        self.token.take();
    }

    /// A refusal or a timeout: nothing kept, every caller rejected with it.
    pub(crate) fn token_failed(&self, error: &JsValue) -> JsValue {
        self.token_pending.take();
        Promise::reject(error).into()
    }
}

/// A copy of the value in `cell`, which keeps it.
fn peek(cell: &Cell<JsValue>) -> JsValue {
    let value = cell.take();
    cell.set(value.clone());
    value
}
