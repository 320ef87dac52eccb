//! The test's fetch handler, asked in place of the outside server: the [`Outgoing`] request as a
//! standard `Request`, its `Response` read back into an [`Upstream`] answer, within the server's
//! time limit.

use js_sys::{Array, Function, Object, Promise, Reflect, Uint8Array};
use toolbridge_protocol::fetch::TIMEOUT_SECS;
use wasm_bindgen::{JsCast, JsValue};
use wasm_bindgen_futures::JsFuture;
use web_sys::{Headers, RequestInit};

use crate::backend::{Outgoing, Upstream};

/// Asks `handler` for the answer to `outgoing`.
pub(super) async fn ask(handler: &Function, outgoing: &Outgoing) -> Upstream {
    match answer_of(handler, outgoing).await {
        Ok(upstream) => upstream,
        Err(why) => Upstream::Failed(why),
    }
}

async fn answer_of(handler: &Function, outgoing: &Outgoing) -> Result<Upstream, String> {
    let request = request(outgoing)?;
    let info = Object::new();
    Reflect::set(&info, &"tool".into(), &outgoing.tool.as_str().into())
        .map_err(|thrown| format!("its information could not be made ({})", describe(&thrown)))?;
    let returned = handler
        .call2(&JsValue::NULL, &request, &info)
        .map_err(|thrown| format!("the handler threw {}", describe(&thrown)))?;
    let Some(answered) = within_time_limit(Promise::resolve(&returned)).await? else {
        return Ok(Upstream::TimedOut);
    };
    read_response(&answered).await
}

/// The standard `Request` for `outgoing`. The browser leaves out headers it never lets a page
/// set (`Date`, `Origin`, `Referer`, `Sec-…`), which the platform's server would send.
fn request(outgoing: &Outgoing) -> Result<web_sys::Request, String> {
    let headers = Headers::new().map_err(|thrown| format!("no Headers ({})", describe(&thrown)))?;
    for (name, value) in &outgoing.headers {
        headers.append(name, value).map_err(|thrown| {
            format!(
                "the header {name:?} could not be given to the handler ({})",
                describe(&thrown)
            )
        })?;
    }
    let init = RequestInit::new();
    init.set_method(&outgoing.method);
    init.set_headers(&headers);
    if let Some(body) = &outgoing.body {
        init.set_body(&Uint8Array::from(body.as_slice()));
    }
    web_sys::Request::new_with_str_and_init(&outgoing.url, &init).map_err(|thrown| {
        format!(
            "the request could not be made for the handler ({})",
            describe(&thrown)
        )
    })
}

/// What `answer` resolves to, or `None` when it takes longer than the server waits
/// ([`TIMEOUT_SECS`]); `Err` when it rejects.
async fn within_time_limit(answer: Promise) -> Result<Option<JsValue>, String> {
    let Some(window) = web_sys::window() else {
        return JsFuture::from(answer).await.map(Some).map_err(|thrown| {
            format!("the handler's promise rejected with {}", describe(&thrown))
        });
    };
    let expired = Object::new();
    let mut timer = None;
    let deadline = {
        let expired = expired.clone();
        let window = window.clone();
        Promise::new(&mut |resolve, _reject| {
            let milliseconds = i32::try_from(TIMEOUT_SECS * 1000).unwrap_or(i32::MAX);
            timer = window
                .set_timeout_with_callback_and_timeout_and_arguments_1(
                    &resolve,
                    milliseconds,
                    &expired,
                )
                .ok();
        })
    };
    let raced = JsFuture::from(Promise::race(&Array::of2(&answer, &deadline))).await;
    if let Some(timer) = timer {
        window.clear_timeout_with_handle(timer);
    }
    match raced {
        Ok(value) if Object::is(&value, &expired) => Ok(None),
        Ok(value) => Ok(Some(value)),
        Err(thrown) => Err(format!(
            "the handler's promise rejected with {}",
            describe(&thrown)
        )),
    }
}

/// Reads the handler's `Response`: status, headers in order, body bytes.
async fn read_response(value: &JsValue) -> Result<Upstream, String> {
    let is_response = ["status", "headers", "arrayBuffer"]
        .iter()
        .all(|name| Reflect::has(value, &JsValue::from_str(name)).unwrap_or(false));
    if !is_response {
        return Err(format!(
            "the handler must answer a Response, e.g. Response.json({{…}}) or new Response(body, {{status}}); it answered {}",
            describe(value)
        ));
    }
    let response: &web_sys::Response = value.unchecked_ref();
    let mut headers = Vec::new();
    if let Ok(Some(entries)) = js_sys::try_iter(&response.headers()) {
        for entry in entries.flatten() {
            let pair: Array = entry.unchecked_into();
            if let (Some(name), Some(value)) = (pair.get(0).as_string(), pair.get(1).as_string()) {
                headers.push((name, value));
            }
        }
    }
    let buffer = response
        .array_buffer()
        .map_err(|thrown| format!("its Response's body cannot be read ({})", describe(&thrown)))?;
    let bytes = JsFuture::from(buffer)
        .await
        .map_err(|thrown| format!("its Response's body cannot be read ({})", describe(&thrown)))?;
    Ok(Upstream::Answer {
        status: response.status(),
        headers,
        body: Uint8Array::new(&bytes).to_vec(),
    })
}

/// A thrown value in words: an `Error`'s name and message, a string, or its JSON.
fn describe(value: &JsValue) -> String {
    if let Some(error) = value.dyn_ref::<js_sys::Error>() {
        return format!(
            "{}: {}",
            String::from(error.name()),
            String::from(error.message())
        );
    }
    if let Some(text) = value.as_string() {
        return format!("{text:?}");
    }
    if value.is_undefined() {
        return "undefined".to_owned();
    }
    js_sys::JSON::stringify(value)
        .ok()
        .and_then(|text| text.as_string())
        .unwrap_or_else(|| "a value that cannot be shown".to_owned())
}
