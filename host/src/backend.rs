//! The REST backend, reached with the signed-in user's session cookie (or
//! through the page's own `backend.fetch`): every request the host makes,
//! and the one mapping from HTTP outcomes to bridge error codes.

use std::rc::Rc;

use js_sys::{Array, Function, JsString, Promise, Reflect, Uint8Array};
use serde::de::DeserializeOwned;
use serde_json::Value;
use toolbridge_protocol::connectivity::{failed_on_the_network, not_sent};
use toolbridge_protocol::fetch::TIMEOUT_SECS;
use toolbridge_protocol::problem::Problem;
use toolbridge_protocol::{Error, ErrorCode};
use wasm_bindgen::{JsCast, JsValue};
use wasm_bindgen_futures::JsFuture;
use web_sys::{
    AbortController, AbortSignal, Request, RequestCredentials, RequestInit, RequestMode, Response,
};

use crate::connectivity::Reachability;
use crate::error::HostError;
use crate::json;

/// How long a backend request may take before the host gives up on it, by
/// default. Below the SDK's 30 s call deadline, so a tool hears
/// `BACKEND_UNAVAILABLE` rather than a bare `TIMEOUT`.
pub(crate) const DEFAULT_TIMEOUT_MS: u32 = 20_000;

/// How long the host waits, at least, for the server's fetch for a tool
/// (`POST /tools/{slug}/fetch`): the server's own deadline for the tool's
/// server ([`TIMEOUT_SECS`]) and 10 s for the bodies to travel, so that the
/// server's `TIMEOUT` arrives before the host gives up. Below bridge.js's
/// 35 s deadline for `fetch`, so a tool hears the host's answer.
pub(crate) const FETCH_TIMEOUT_MS: u32 = {
    // (15 s: the cast cannot truncate.)
    #[allow(clippy::cast_possible_truncation)]
    let server = TIMEOUT_SECS as u32 * 1000;
    server + 10_000
};

/// The REST API under one base URL (`…/api/v1`).
#[derive(Debug, Clone)]
pub(crate) struct Backend {
    base: String,
    timeout_ms: u32,
    /// The page's `backend` object, whose `fetch(request)` answers in place
    /// of the browser's `fetch`.
    custom: Option<Custom>,
    /// Whether the server can be reached: every request's outcome tells it,
    /// and while it says no, nothing is sent.
    reach: Rc<Reachability>,
}

/// A page's own backend: the object and its `fetch` method.
#[derive(Debug, Clone)]
pub(crate) struct Custom {
    object: JsValue,
    fetch: Function,
}

impl Custom {
    /// The `backend` option, when it is an object with a `fetch` method.
    pub(crate) fn read(object: JsValue) -> Result<Self, HostError> {
        let fetch = Reflect::get(&object, &JsValue::from_str("fetch"))
            .ok()
            .filter(|_| object.is_object())
            .and_then(|fetch| fetch.dyn_into::<Function>().ok())
            .ok_or_else(|| {
                HostError::usage(
                    "new Host: backend must be an object with a fetch(request) method answering a Response",
                )
            })?;
        Ok(Self { object, fetch })
    }
}

/// A conditional GET's answer.
#[derive(Debug)]
pub(crate) enum Fetched {
    /// The resource changed (or nothing was cached): its body and `ETag`.
    Fresh {
        /// The body's bytes, for the caller to parse.
        bytes: Vec<u8>,
        /// The `ETag` header, if any.
        etag: Option<String>,
    },
    /// `304 Not Modified`: the cached copy is current.
    NotModified,
}

/// A 2xx answer's JSON body, with its `ETag`.
#[derive(Debug)]
pub(crate) struct Tagged {
    /// The body.
    pub(crate) body: Value,
    /// The `ETag` header, if any.
    pub(crate) etag: Option<String>,
}

/// A response with its body read.
struct Answer<B> {
    status: u16,
    etag: Option<String>,
    retry_after: Option<u64>,
    /// The body, as [`Body`] `B` reads it.
    body: B,
}

impl<B: Body> Answer<B> {
    /// The answer when it is a 2xx, else what its failure means to a tool
    /// ([`failure`]); `what` names the request.
    fn successful(self, what: &str) -> Result<Self, Error> {
        if (200..300).contains(&self.status) {
            Ok(self)
        } else {
            Err(failure(&self, what))
        }
    }
}

/// A way of reading a response's body.
trait Body: Sized {
    /// Starts reading `response`'s body.
    fn read(response: &Response) -> Result<Promise, JsValue>;
    /// The body, from what that read resolved to.
    fn from_js(value: JsValue) -> Self;
    /// The body as the browser's string, for the browser to parse. A body
    /// that is no UTF-8 text reads as empty, and then as not the JSON
    /// expected.
    fn js_text(&self) -> JsString;
}

/// The browser's string (`Response.text()`), for answers passed on as they
/// came or parsed by the browser ([`json::parse_value`]).
impl Body for JsString {
    fn read(response: &Response) -> Result<Promise, JsValue> {
        response.text()
    }

    fn from_js(value: JsValue) -> Self {
        JsString::from(value)
    }

    fn js_text(&self) -> JsString {
        self.clone()
    }
}

/// The bytes (`Response.arrayBuffer()`), copied once into module memory:
/// for a large body parsed in Rust, which as a string would be decoded by
/// the browser and encoded again, through a buffer three times its length.
impl Body for Vec<u8> {
    fn read(response: &Response) -> Result<Promise, JsValue> {
        // What only reads like a Response may lack `arrayBuffer`: its text
        // will do.
        if Reflect::get(response, &JsValue::from_str("arrayBuffer")).is_ok_and(|f| f.is_function())
        {
            response.array_buffer()
        } else {
            response.text()
        }
    }

    fn from_js(value: JsValue) -> Self {
        match value.dyn_into::<JsString>() {
            Ok(text) => json::rust_string(&text).unwrap_or_default().into_bytes(),
            Err(buffer) => Uint8Array::new(&buffer).to_vec(),
        }
    }

    fn js_text(&self) -> JsString {
        std::str::from_utf8(self).map_or_else(|_| JsString::from(""), JsString::from)
    }
}

impl Backend {
    /// A backend at `base`: an absolute `http(s)` URL, or a path on the
    /// page's own origin (`/api/v1`).
    pub(crate) fn new(
        base: &str,
        page_url: &str,
        timeout_ms: u32,
        custom: Option<Custom>,
        reach: Rc<Reachability>,
    ) -> Result<Self, HostError> {
        let url = web_sys::Url::new_with_base(base, page_url).map_err(|_| {
            HostError::usage(format!(
                "apiBase {base:?} is not a URL; use e.g. \"/api/v1\" or \"https://app.example/api/v1\""
            ))
        })?;
        let protocol = url.protocol();
        if protocol != "http:" && protocol != "https:" {
            return Err(HostError::usage(format!(
                "apiBase {base:?} must be an http or https URL, not {protocol}"
            )));
        }
        if !url.search().is_empty() || !url.hash().is_empty() {
            return Err(HostError::usage(format!(
                "apiBase {base:?} must not carry a query or a fragment"
            )));
        }
        if timeout_ms == 0 {
            return Err(HostError::usage(
                "requestTimeoutMs must be a positive number of milliseconds",
            ));
        }
        let href = url.href();
        Ok(Self {
            base: href.trim_end_matches('/').to_owned(),
            timeout_ms,
            custom,
            reach,
        })
    }

    /// The base URL, without a trailing slash.
    pub(crate) fn base(&self) -> &str {
        &self.base
    }

    /// `GET path` (relative to the base, starting with `/`).
    pub(crate) async fn get(&self, path: &str) -> Result<Value, Error> {
        Ok(self.get_tagged(path).await?.body)
    }

    /// `GET path`, with the answer's `ETag`.
    pub(crate) async fn get_tagged(&self, path: &str) -> Result<Tagged, Error> {
        let answer = self.fetch::<JsString>("GET", path, None, &[], None).await?;
        success(answer, &format!("GET {path}"))
    }

    /// `GET path`, its 2xx body left as the browser's string (for answers
    /// passed on as they came, such as list pages), never copied into Rust.
    pub(crate) async fn get_raw(&self, path: &str) -> Result<JsString, Error> {
        let answer = self.fetch::<JsString>("GET", path, None, &[], None).await?;
        Ok(answer.successful(&format!("GET {path}"))?.body)
    }

    /// `GET path` with `If-None-Match` when an `ETag` is known; a 2xx body
    /// comes as its bytes.
    pub(crate) async fn get_if_changed(
        &self,
        path: &str,
        etag: Option<&str>,
    ) -> Result<Fetched, Error> {
        let condition = etag.map(|etag| ("If-None-Match", etag));
        let answer = self
            .fetch::<Vec<u8>>("GET", path, None, condition.as_slice(), None)
            .await?;
        if answer.status == 304 {
            return Ok(Fetched::NotModified);
        }
        let answer = answer.successful(&format!("GET {path}"))?;
        Ok(Fetched::Fresh {
            bytes: answer.body,
            etag: answer.etag,
        })
    }

    /// `POST` or `PUT` with a JSON body; `None` sends no body.
    pub(crate) async fn send(
        &self,
        method: &str,
        path: &str,
        body: Option<&Value>,
    ) -> Result<Value, Error> {
        Ok(self.send_tagged(method, path, body, &[]).await?.body)
    }

    /// [`Backend::send`] with more request `headers` (such as `If-Match`), answering the
    /// `ETag` too.
    pub(crate) async fn send_tagged(
        &self,
        method: &str,
        path: &str,
        body: Option<&Value>,
        headers: &[(&str, &str)],
    ) -> Result<Tagged, Error> {
        let body = body.map(Value::to_string);
        let answer = self
            .fetch::<JsString>(method, path, body.as_deref(), headers, None)
            .await?;
        success(answer, &format!("{method} {path}"))
    }

    /// `POST path` with `body` (JSON text), waiting at least `min_timeout_ms`
    /// (more when the page's own deadline is longer); the 2xx answer read as
    /// `T`. For the server's fetch, whose deadline is the server's.
    pub(crate) async fn post_for<T: DeserializeOwned>(
        &self,
        path: &str,
        body: &str,
        min_timeout_ms: u32,
    ) -> Result<T, Error> {
        let what = format!("POST {path}");
        let timeout_ms = self.timeout_ms.max(min_timeout_ms);
        let answer = self
            .fetch::<JsString>("POST", path, Some(body), &[], Some(timeout_ms))
            .await?
            .successful(&what)?;
        json::parse_value(&answer.body)
            .and_then(json::value_as)
            .map_err(|why| {
                Error::Internal(format!(
                    "the backend's answer to {what} is not the JSON expected ({why})"
                ))
            })
    }

    /// `GET path` while offline, to learn whether the server can be reached
    /// again: its outcome counts as every request's does, and is otherwise
    /// dropped.
    pub(crate) async fn probe(&self, path: &str) {
        let _ = self.request::<JsString>("GET", path, None, &[], None).await;
    }

    /// The request, unless the server cannot be reached: then `OFFLINE` at
    /// once, and nothing is sent.
    async fn fetch<B: Body>(
        &self,
        method: &str,
        path: &str,
        body: Option<&str>,
        extra: &[(&str, &str)],
        timeout_ms: Option<u32>,
    ) -> Result<Answer<B>, Error> {
        if !self.reach.online() {
            return Err(not_sent(&format!("{method} {path}")));
        }
        self.request(method, path, body, extra, timeout_ms).await
    }

    /// The request itself; `body` is JSON text, `extra` more headers
    /// (`If-None-Match`, `If-Match`, `Idempotency-Key`), `timeout_ms` replaces
    /// the host's deadline. Any answer puts the host online; a failure on the
    /// network (not the deadline) puts it offline and is `OFFLINE`.
    async fn request<B: Body>(
        &self,
        method: &str,
        path: &str,
        body: Option<&str>,
        extra: &[(&str, &str)],
        timeout_ms: Option<u32>,
    ) -> Result<Answer<B>, Error> {
        let timeout_ms = timeout_ms.unwrap_or(self.timeout_ms);
        let what = format!("{method} {path}");
        let unreachable = |why: &str| {
            Error::BackendUnavailable(format!(
                "the backend at {} could not be reached for {what} ({why})",
                self.base
            ))
        };
        let window = web_sys::window().ok_or_else(|| Error::Internal("no window".to_owned()))?;
        let init = RequestInit::new();
        init.set_method(method);
        init.set_mode(RequestMode::Cors);
        init.set_credentials(RequestCredentials::Include);
        let headers = js_sys::Object::new();
        set_header(&headers, "Accept", "application/json");
        for (name, value) in extra {
            set_header(&headers, name, value);
        }
        if let Some(body) = body {
            set_header(&headers, "Content-Type", "application/json");
            init.set_body(&JsValue::from_str(body));
        }
        init.set_headers(&headers);

        // The deadline aborts the fetch and the read of its body alike.
        let controller = AbortController::new().map_err(|_| unreachable("no AbortController"))?;
        init.set_signal(Some(&controller.signal()));
        let abort = Reflect::get(&controller, &JsValue::from_str("abort"))
            .ok()
            .and_then(|abort| abort.dyn_into::<Function>().ok())
            .map(|abort| abort.bind0(&controller));
        let timer = abort.and_then(|abort| {
            window
                .set_timeout_with_callback_and_timeout_and_arguments_0(
                    &abort,
                    i32::try_from(timeout_ms).unwrap_or(i32::MAX),
                )
                .ok()
        });
        let url = format!("{}{path}", self.base);
        let signal = controller.signal();
        let outcome = async {
            let answer = match &self.custom {
                None => window.fetch_with_str_and_init(&url, &init),
                Some(custom) => {
                    let request =
                        Request::new_with_str_and_init(&url, &init).map_err(|_| Failed::Network)?;
                    let answer = custom
                        .fetch
                        .call1(&custom.object, &request)
                        .map_err(|_| Failed::Network)?;
                    Promise::resolve(&answer)
                }
            };
            let response = JsFuture::from(until_aborted(&answer, &signal))
                .await
                .map_err(|_| Failed::Network)?;
            let response = as_response(response)?;
            let read = B::read(&response).map_err(|_| Failed::Network)?;
            let read = JsFuture::from(until_aborted(&read, &signal))
                .await
                .map_err(|_| Failed::Network)?;
            Ok::<_, Failed>((response, B::from_js(read)))
        }
        .await;
        if let Some(timer) = timer {
            window.clear_timeout_with_handle(timer);
        }
        let (response, body) = outcome.map_err(|failed| {
            if signal.aborted() {
                unreachable(&format!("no answer within {timeout_ms} ms"))
            } else if failed == Failed::NotResponse {
                Error::Internal(format!(
                    "the page's backend.fetch answered {what} with something other than a Response"
                ))
            } else {
                self.reach.observe(false);
                failed_on_the_network(&what, &self.base)
            }
        })?;
        self.reach.observe(true);
        let headers = response.headers();
        let header = |name: &str| headers.get(name).ok().flatten();
        Ok(Answer {
            status: response.status(),
            etag: header("etag"),
            retry_after: header("retry-after").and_then(|value| value.trim().parse().ok()),
            body,
        })
    }
}

/// Why a request got no answer to read.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Failed {
    /// No connection, a refused or dropped request (then `OFFLINE`), or the
    /// deadline (then `BACKEND_UNAVAILABLE`).
    Network,
    /// The page's `backend.fetch` answered something that is not a
    /// `Response`.
    NotResponse,
}

/// `promise`, or a rejection once `signal` aborts: the deadline holds even
/// for a page's backend that ignores the request's signal.
fn until_aborted(promise: &Promise, signal: &AbortSignal) -> Promise {
    let aborted = Promise::new(&mut |_, reject| {
        let _ = signal.add_event_listener_with_callback("abort", &reject);
    });
    Promise::race(&Array::of2(promise, &aborted))
}

/// A `Response`, or what reads like one (a page's backend may build it in
/// another frame). `Response.error()` reads as no connection, as the
/// browser's `fetch` rejects it.
fn as_response(value: JsValue) -> Result<Response, Failed> {
    let get = |target: &JsValue, key: &str| {
        Reflect::get(target, &JsValue::from_str(key)).unwrap_or(JsValue::UNDEFINED)
    };
    let status = get(&value, "status").as_f64().ok_or(Failed::NotResponse)?;
    let headers = get(&value, "headers");
    if !get(&value, "text").is_function() || !get(&headers, "get").is_function() {
        return Err(Failed::NotResponse);
    }
    if status < 1.0 {
        return Err(Failed::Network);
    }
    Ok(value.unchecked_into())
}

fn set_header(headers: &js_sys::Object, name: &str, value: &str) {
    let _ = Reflect::set(headers, &JsValue::from_str(name), &JsValue::from_str(value));
}

/// The body of a 2xx answer with its `ETag`, or the error its status means.
fn success(answer: Answer<JsString>, what: &str) -> Result<Tagged, Error> {
    let answer = answer.successful(what)?;
    let body = json::parse_value(&answer.body).map_err(|why| {
        Error::Internal(format!(
            "the backend's answer to {what} is not the JSON expected ({why})"
        ))
    })?;
    Ok(Tagged {
        body,
        etag: answer.etag,
    })
}

/// What a non-2xx answer means to a tool. Rate limits, ended sessions and
/// server failures map by status whatever the body says, except a 504 whose
/// problem body says `TIMEOUT` (the server's fetch for a tool, whose server
/// did not answer in time); otherwise the server's problem body names the
/// code (and for 422 the paths).
fn failure<B: Body>(answer: &Answer<B>, what: &str) -> Error {
    let status = answer.status;
    let problem = json::parse_value(&answer.body.js_text())
        .ok()
        .and_then(|body| serde_json::from_value::<Problem>(body).ok());
    match status {
        504 if problem
            .as_ref()
            .is_some_and(|problem| problem.code == ErrorCode::Timeout) =>
        {
            Error::Timeout(problem.map_or_else(String::new, |problem| problem.detail))
        }
        429 => Error::RateLimited {
            retry_after: answer
                .retry_after
                .or_else(|| problem.as_ref().and_then(|p| p.retry_after))
                .unwrap_or(1)
                .max(1),
        },
        401 => Error::Unauthenticated(problem.map_or_else(
            || "the session has ended; sign in again".to_owned(),
            |problem| problem.detail,
        )),
        500..=599 => Error::BackendUnavailable(format!(
            "the backend failed on {what} (HTTP {status}); try again shortly"
        )),
        422 => match problem {
            Some(problem) => Error::from_parts(
                ErrorCode::InvalidParams,
                problem.detail,
                problem.errors,
                None,
            ),
            None => Error::invalid("", format!("the backend refused {what} (HTTP 422)")),
        },
        _ => match problem {
            Some(problem) => problem.into_error(),
            None => Error::from_parts(
                ErrorCode::from_http_status(status),
                format!("the backend answered HTTP {status} to {what}"),
                Vec::new(),
                None,
            ),
        },
    }
}
