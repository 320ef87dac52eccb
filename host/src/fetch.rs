//! `fetch`: the request a tool asks the toolbridge server to make for it, read from the port
//! and checked by the protocol's rules before any round trip, and the server's answer handed
//! back with its body as bytes.
//!
//! On the port (a `MessagePort`, so bytes travel by structured clone, not as JSON) the params
//! are `[request]` with `request` = `{url, method, headers: [[name, value], …], body}`, `body`
//! `null`, a string or a `Uint8Array`; the result is `{status, headers: [[name, value], …],
//! body: Uint8Array}`. To the server (`POST /tools/{slug}/fetch`) the request goes as a
//! [`FetchRequest`], a text body as `{"text": …}` and bytes as `{"base64": …}`, and the
//! answer comes back as a [`FetchResponse`] whose body is base64.

use js_sys::{Array, JsString, Object, Reflect, Uint8Array};
use toolbridge_protocol::Error;
use toolbridge_protocol::error::Violation;
use toolbridge_protocol::fetch::{
    BODY_MAX_BYTES, FetchBody, FetchRequest, FetchResponse, check_body_len, check_request,
    decode_bytes, encode_bytes,
};
use wasm_bindgen::{JsCast, JsValue};

use crate::json;

/// The request in a `fetch` call's params, checked by [`check_request`]: `INVALID_PARAMS`
/// listing every problem at its path in the request (`url`, `method`, `headers[2][0]`,
/// `body`), before anything is sent.
pub(crate) fn read_request(params: &JsValue) -> Result<FetchRequest, Error> {
    let request = Array::is_array(params)
        .then(|| params.unchecked_ref::<Array>())
        .filter(|params| params.length() == 1)
        .map(|params| params.get(0))
        .filter(JsValue::is_object)
        .ok_or_else(|| {
            Error::invalid(
                "",
                "fetch takes one request: {url, method, headers: [[name, value], …], body}",
            )
        })?;
    let mut problems = Vec::new();
    let mut text = |key: &str| -> String {
        let value = get(&request, key);
        value.as_string().unwrap_or_else(|| {
            problems.push(Violation::new(key, "must be a string"));
            String::new()
        })
    };
    let url = text("url");
    let method = text("method");
    let headers = read_headers(&get(&request, "headers"), &mut problems);
    let body = read_body(&get(&request, "body"), &mut problems);
    let request = FetchRequest {
        url,
        method,
        headers,
        body,
    };
    if let Err(Error::InvalidParams(found)) = check_request(&request) {
        // A path already refused as the wrong kind of value is not refused again.
        let more: Vec<Violation> = found
            .into_iter()
            .filter(|problem| !problems.iter().any(|p| p.path == problem.path))
            .collect();
        problems.extend(more);
    }
    if problems.is_empty() {
        Ok(request)
    } else {
        Err(Error::InvalidParams(problems))
    }
}

/// `headers`: an array of `[name, value]` pairs of strings.
fn read_headers(value: &JsValue, problems: &mut Vec<Violation>) -> Vec<(String, String)> {
    if !Array::is_array(value) {
        problems.push(Violation::new(
            "headers",
            "must be an array of [name, value] pairs of strings",
        ));
        return Vec::new();
    }
    let mut headers = Vec::new();
    for (i, pair) in value.unchecked_ref::<Array>().iter().enumerate() {
        let strings = Array::is_array(&pair)
            .then(|| pair.unchecked_ref::<Array>())
            .filter(|pair| pair.length() == 2)
            .and_then(|pair| Some((pair.get(0).as_string()?, pair.get(1).as_string()?)));
        match strings {
            Some(pair) => headers.push(pair),
            None => problems.push(Violation::new(
                format!("headers[{i}]"),
                "must be a [name, value] pair of strings",
            )),
        }
    }
    headers
}

/// `body`: `null` (or absent), a string, or a `Uint8Array` (sent as base64). Bytes over the
/// limit are refused without being copied.
fn read_body(value: &JsValue, problems: &mut Vec<Violation>) -> Option<FetchBody> {
    if value.is_null() || value.is_undefined() {
        return None;
    }
    if let Some(text) = value.as_string() {
        return Some(FetchBody::Text(text));
    }
    let Some(bytes) = value.dyn_ref::<Uint8Array>() else {
        problems.push(Violation::new(
            "body",
            "must be null, a string or a Uint8Array",
        ));
        return None;
    };
    let length = usize::try_from(bytes.length()).unwrap_or(usize::MAX);
    if length > BODY_MAX_BYTES {
        if let Err(problem) = check_body_len(length) {
            problems.push(Violation::new("body", problem));
        }
        return None;
    }
    Some(FetchBody::Base64(encode_bytes(&bytes.to_vec())))
}

/// The server's answer as the tool gets it: `{status, headers, body}` with the body as a
/// `Uint8Array`.
pub(crate) fn answer(response: &FetchResponse) -> Result<JsValue, Error> {
    let bytes = decode_bytes(&response.body)
        .map_err(|why| Error::Internal(format!("the body of the server's fetch answer {why}")))?;
    let answer = Object::new();
    let set = |key: &str, value: &JsValue| {
        let _ = Reflect::set(&answer, &JsString::from(key), value);
    };
    set("status", &JsValue::from(response.status));
    set("headers", &json::to_js(&response.headers)?);
    set("body", &Uint8Array::from(bytes.as_slice()));
    Ok(answer.into())
}

fn get(object: &JsValue, key: &str) -> JsValue {
    Reflect::get(object, &JsString::from(key)).unwrap_or(JsValue::UNDEFINED)
}
