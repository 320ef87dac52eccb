//! `bridge.fetch(url, init)`: a request the toolbridge server makes for the tool, with the
//! organisation's secret settings in it, answered as a real `Response`.
//!
//! The arguments are read as `fetch`'s are, and a bad one rejects with `INVALID_PARAMS` naming
//! it: `url` a string or a `URL`; `init.method` (default `GET`) upper-cased; `init.headers` a
//! `Headers`, a record or an array of pairs, read by the browser's own `Headers`; `init.body` a
//! string, `URLSearchParams` (sent as its text, with its content type unless one is set), a
//! `Blob`, an `ArrayBuffer` or any view of one (read as bytes by the browser's own `Response`,
//! a `Blob` with its type as the content type unless one is set), or `null`; not a stream.
//!
//! On the port the call is `fetch` with params `[{url, method, headers: [[name, value], …],
//! body}]`, `body` `null`, a string or a `Uint8Array` (the port clones it, no JSON), and the host
//! answers `{status, headers, body: Uint8Array}`, which becomes `new Response(body, {status,
//! headers})` (no body for 204, 205 and 304). The call waits longer than others (module
//! `config`): the server gives the tool's server 15 s, and the host waits for the server.

use js_sys::{Array, JsString, Map, Promise, Uint8Array};
use wasm_bindgen::prelude::*;

use crate::api::Kind;
use crate::error::INTERNAL;
use crate::object::{get, object, set, text};
use crate::sdk::Sdk;
use crate::token::Thenable;

#[wasm_bindgen]
extern "C" {
    /// A `Response`.
    pub(crate) type Response;

    /// `new Response(body, init)`; throws for a body or a status it refuses.
    #[wasm_bindgen(catch, constructor)]
    fn new(body: &JsValue, init: &JsValue) -> Result<Response, JsValue>;

    /// `response.arrayBuffer()`.
    #[wasm_bindgen(method, js_name = arrayBuffer)]
    fn array_buffer(this: &Response) -> Promise;

    /// A `Headers`, used through `Map`'s `has`, `get` and `set`, which it
    /// has too.
    type Headers;

    /// `new Headers(init)`; throws for what is not headers.
    #[wasm_bindgen(catch, constructor)]
    fn new(init: &JsValue) -> Result<Headers, JsValue>;
}

/// The header a body's own type goes in.
const CONTENT_TYPE: &str = "content-type";

/// The type a `Response` gives a body it takes as text.
const TEXT: &str = "text/plain;charset=UTF-8";

/// The type a `Response` gives `URLSearchParams`.
const FORM: &str = "application/x-www-form-urlencoded;charset=UTF-8";

impl Sdk {
    /// `bridge.fetch(url, init)`: the Promise of the tool's `Response`.
    pub(crate) fn fetch(&self, url: &JsValue, init: &JsValue) -> Promise {
        let (request, bytes) = match self.fetch_request(url, init) {
            Ok(read) => read,
            Err(error) => return Promise::reject(&error),
        };
        let Some(handlers) = self.handlers() else {
            return Promise::reject(&JsValue::UNDEFINED);
        };
        let sent = match bytes {
            None => self.call(Kind::Fetch, &self.keys.fetch, Array::of1(&request).into()),
            Some(bytes) => bytes.array_buffer().unchecked_ref::<Thenable>().then_both(
                &handlers.fetch_send.bind1(&JsValue::UNDEFINED, &request),
                &handlers.fetch_unread,
            ),
        };
        sent.unchecked_ref::<Thenable>()
            .then_both(&handlers.fetch_answer, &JsValue::UNDEFINED)
    }

    /// The request on the wire, and the body's bytes to read first (a `Response` made of the
    /// tool's body), or the `INVALID_PARAMS` error for a bad argument.
    fn fetch_request(
        &self,
        url: &JsValue,
        init: &JsValue,
    ) -> Result<(JsValue, Option<Response>), JsValue> {
        // A `URL` (or anything with an `href`, as `location`) by its text.
        let url = if url.is_string() {
            url.clone()
        } else {
            get(url, "href")
        };
        if !url.is_string() {
            return Err(self.errors.invalid("url", "must be a string or a URL"));
        }
        if !(init.is_undefined() || init.is_null() || init.is_object()) {
            return Err(self.errors.invalid("init", "must be an object"));
        }
        let mut method = get(init, "method");
        if method.is_undefined() {
            method = "GET".into();
        } else if method.is_string() {
            method = method.unchecked_into::<JsString>().to_upper_case().into();
        } else {
            return Err(self.errors.invalid("init.method", "must be a string"));
        }
        let headers: Map = Headers::new(&get(init, "headers"))
            .map_err(|thrown| self.invalid_because("init.headers", &thrown))?
            .unchecked_into();
        let mut body = get(init, "body");
        let mut bytes = None;
        if body.is_undefined() {
            body = JsValue::NULL;
        } else if !body.is_null() && !body.is_string() {
            // The browser reads the body as `fetch` would: its bytes, and its type.
            let read = Response::new(&body, &JsValue::UNDEFINED)
                .map_err(|thrown| self.invalid_because("init.body", &thrown))?;
            let key = JsValue::from(CONTENT_TYPE);
            let own_type = get(&read, "headers").unchecked_into::<Map>().get(&key);
            // What is no body at all (a plain object, a number) it takes as text; a
            // `Blob`'s own type is never this, as a `Blob` writes its type in lower case. A
            // stream is refused too: one that never ends would hold the call before it starts.
            if own_type == TEXT || get(&body, "getReader").is_function() {
                return Err(self.errors.invalid(
                    "init.body",
                    "must be a string, an ArrayBuffer or a view of one, a Blob, URLSearchParams or null",
                ));
            }
            if own_type.is_string() && !headers.has(&key) {
                headers.set(&key, &own_type);
            }
            if own_type == FORM {
                // A form's text, where the server replaces placeholders.
                body = text(&[&body]).into();
            } else {
                body = JsValue::NULL;
                bytes = Some(read);
            }
        }
        let request = object(&[
            ("url", &url),
            ("method", &method),
            ("headers", &Array::from(&headers)),
            ("body", &body),
        ]);
        Ok((request.into(), bytes))
    }

    /// The body's bytes arrived (`buffer`): the request goes to the host.
    pub(crate) fn fetch_send(&self, request: &JsValue, buffer: &JsValue) -> JsValue {
        set(request, "body", &Uint8Array::new(buffer));
        self.call(Kind::Fetch, &self.keys.fetch, Array::of1(request).into())
            .into()
    }

    /// The body could not be read (a `Blob` whose file went away).
    pub(crate) fn fetch_unread(&self, thrown: &JsValue) -> JsValue {
        Promise::reject(&self.invalid_because("init.body", thrown)).into()
    }

    /// The host's answer, `{status, headers, body}`, as a `Response`.
    pub(crate) fn fetch_answer(&self, answer: &JsValue) -> JsValue {
        let status = get(answer, "status");
        // The statuses whose Response has no body (whole numbers, compared exactly).
        #[allow(clippy::float_cmp)]
        let no_body = matches!(status.as_f64(), Some(s) if s == 204.0 || s == 205.0 || s == 304.0);
        let body = if no_body {
            JsValue::NULL
        } else {
            get(answer, "body")
        };
        let init = object(&[("status", &status), ("headers", &get(answer, "headers"))]);
        match Response::new(&body, &init) {
            Ok(response) => response.into(),
            Err(thrown) => {
                let message = text(&[
                    &"the answer cannot be made a Response: ".into(),
                    &get(&thrown, "message"),
                ]);
                Promise::reject(&self.errors.local(INTERNAL, &message)).into()
            }
        }
    }

    /// `INVALID_PARAMS` at `path`, with the message of what the browser threw.
    fn invalid_because(&self, path: &str, thrown: &JsValue) -> JsValue {
        let message = text(&[&get(thrown, "message")]);
        self.errors.invalid_because(path, &message.into())
    }
}
