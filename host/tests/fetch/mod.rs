//! The server's fetch for a tool, host side: `fetch` is offered only to a tool the page mounted
//! with `fetch`; each request is checked by the protocol's rules before it goes anywhere; a text
//! body reaches the server as `{"text"}` and bytes as `{"base64"}`, and the answer's bytes come
//! back unchanged; the server's refusals reach the tool with their codes. The server is a page
//! backend answering `/tools/{slug}/fetch` as the real one does (`fetchBackend` in
//! `support/backend.js`), but for the last test, which goes to the real server.

use serde_json::{Value, json};
use toolbridge_host::Host;
use wasm_bindgen::prelude::*;
use wasm_bindgen_test::wasm_bindgen_test;

use super::{EXTENSION, STANDALONE};
use crate::fixture::*;

#[wasm_bindgen(module = "/tests/support/backend.js")]
extern "C" {
    #[wasm_bindgen(js_name = fetchBackend)]
    fn fetch_backend(answer: &JsValue) -> JsValue;
}

/// A URL of a tool's own server.
const VENDOR: &str = "https://api.vendor.example/prices";

/// One MiB.
const MIB: usize = 1024 * 1024;

fn field(object: &JsValue, key: &str) -> Value {
    to_json(&js_sys::Reflect::get(object, &JsValue::from_str(key)).unwrap())
}

/// A host whose requests go to `backend`.
fn host_through(backend: &JsValue) -> Host {
    let options = js(&json!({"apiBase": api_base(), "debug": true}));
    let backend = js_sys::Reflect::get(backend, &JsValue::from_str("backend")).unwrap();
    js_sys::Reflect::set(&options, &JsValue::from_str("backend"), &backend).unwrap();
    Host::new(&options).unwrap_or_else(|error| panic!("new Host: {}", to_json(&error)))
}

/// A fetch backend answering `answer` (or echoing, for `null`), a host on it, and the tool
/// `prices` mounted with `fetch`.
async fn fetching(answer: &Value) -> (JsValue, Host, Tool) {
    let script = fetch_backend(&js(answer));
    let host = host_through(&script);
    let tool = mount_with(
        &host,
        "prices",
        STANDALONE,
        &sdk_query(&json!({})),
        &json!({"fetch": true}),
    )
    .await;
    (script, host, tool)
}

/// `bridge.fetch(url, init)` in the tool, with a body of `bytes` bytes (byte i is i % 251)
/// when given: the Response's `{status, headers, length, pattern, text}`, or the error.
async fn fetch(tool: &Tool, url: &str, init: &Value, bytes: Option<usize>) -> Result<Value, Value> {
    let mut command = json!({"command": "fetch", "url": url, "init": init});
    if let Some(bytes) = bytes {
        command["bytes"] = json!(bytes);
    }
    let answer = tool.command(command).await;
    if answer["ok"] == true {
        Ok(answer["result"].clone())
    } else {
        Err(answer["error"].clone())
    }
}

/// A `fetch` that must be refused: the `BridgeError`'s fields.
async fn refused(tool: &Tool, url: &str, init: &Value, bytes: Option<usize>) -> Value {
    match fetch(tool, url, init, bytes).await {
        Ok(answer) => panic!("fetch {url} {init} should have failed, got {answer}"),
        Err(error) => {
            assert_eq!(error["isBridgeError"], true, "not a BridgeError: {error}");
            error
        }
    }
}

/// A problem body as the server writes one.
fn problem(status: u16, code: &str, detail: &str, extra: &Value) -> Value {
    let mut body = json!({"type": format!("/docs/errors#{code}"), "title": "t", "status": status,
        "detail": detail, "code": code});
    if let (Some(body), Some(extra)) = (body.as_object_mut(), extra.as_object()) {
        body.extend(extra.clone());
    }
    body
}

#[wasm_bindgen_test]
async fn fetch_is_offered_only_to_a_tool_mounted_with_fetch() {
    let (script, host, with) = fetching(&Value::Null).await;
    let without = mount(&host, "other", EXTENSION, &sdk_query(&json!({}))).await;
    for (tool, offered) in [(&with, true), (&without, false)] {
        let supports = tool
            .command(json!({"command": "supports", "names": ["fetch"]}))
            .await;
        assert_eq!(supports["result"], json!({"fetch": offered}));
    }
    let tools = to_json(&host.tools().unwrap());
    let capabilities = |slug: &str| -> Value {
        tools
            .as_array()
            .unwrap()
            .iter()
            .find(|t| t["slug"] == slug)
            .map(|t| t["capabilities"].clone())
            .unwrap()
    };
    assert_eq!(
        capabilities("prices"),
        json!(["session.ended", "fetch", "connectivity"])
    );
    assert!(
        !capabilities("other")
            .as_array()
            .unwrap()
            .contains(&json!("fetch"))
    );
    let error = refused(&without, VENDOR, &json!({}), None).await;
    assert_eq!(error["code"], "NOT_ALLOWED", "{error}");
    let message = error["message"].as_str().unwrap();
    assert!(
        message.contains("permissions.connect") && message.contains("without fetch"),
        "{error}"
    );
    let answered = fetch(&with, VENDOR, &json!({}), None).await.unwrap();
    assert_eq!(answered["status"], 200, "{answered}");
    // Only the tool mounted with fetch asked the server, and for itself.
    let fetched = field(&script, "fetched");
    assert_eq!(fetched.as_array().unwrap().len(), 1, "{fetched}");
    assert_eq!(fetched[0]["path"], "/api/v1/tools/prices/fetch");
    assert_eq!(field(&script, "others"), json!([]));
}

#[wasm_bindgen_test]
async fn text_and_a_mebibyte_of_bytes_reach_the_server_and_the_answer_s_bytes_come_back_unchanged()
{
    let (script, _host, tool) = fetching(&Value::Null).await;
    let url = format!("{VENDOR}?region={{{{secret.REGION}}}}");
    let init = json!({"method": "post", "headers": {"Authorization": "Bearer {{secret.API_KEY}}",
        "Content-Type": "text/plain"}, "body": "sku=OAK-01 {{token}}"});
    let answered = fetch(&tool, &url, &init, None).await.unwrap();
    assert_eq!(answered["isResponse"], true);
    assert_eq!(answered["status"], 200);
    assert_eq!(answered["text"], "sku=OAK-01 {{token}}");
    assert!(
        answered["headers"]
            .as_array()
            .unwrap()
            .contains(&json!(["x-length", "20"])),
        "{answered}"
    );
    let binary = fetch(&tool, VENDOR, &json!({"method": "PUT"}), Some(MIB))
        .await
        .unwrap();
    assert_eq!(binary["status"], 200);
    assert_eq!(binary["length"], MIB, "{binary}");
    assert_eq!(binary["pattern"], true, "{binary}");
    let fetched = field(&script, "fetched");
    assert_eq!(
        fetched,
        json!([
            {"path": "/api/v1/tools/prices/fetch", "contentType": "application/json",
             "request": {"url": url, "method": "POST",
                "headers": [["authorization", "Bearer {{secret.API_KEY}}"], ["content-type", "text/plain"]],
                "body": {"text": "sku=OAK-01 {{token}}"}}},
            {"path": "/api/v1/tools/prices/fetch", "contentType": "application/json",
             "request": {"url": VENDOR, "method": "PUT", "headers": [],
                "body": {"base64": MIB, "pattern": true}}},
        ])
    );
}

#[wasm_bindgen_test]
async fn a_request_that_breaks_a_rule_is_refused_before_any_round_trip() {
    let (script, host, tool) = fetching(&Value::Null).await;
    let cases = [
        (
            VENDOR,
            json!({"headers": {"Cookie": "session=1"}}),
            None,
            "headers[0][0]",
        ),
        (VENDOR, json!({"method": "POST"}), Some(5 * MIB + 1), "body"),
        ("http://api.vendor.example/prices", json!({}), None, "url"),
        (VENDOR, json!({"body": "on a GET"}), None, "body"),
        (VENDOR, json!({"method": "TRACE"}), None, "method"),
    ];
    for (url, init, bytes, path) in cases {
        let error = refused(&tool, url, &init, bytes).await;
        assert_eq!(error["code"], "INVALID_PARAMS", "{url} {init}: {error}");
        assert_eq!(detail_paths(&error), [path], "{url} {init}: {error}");
    }
    // Each refused at once: the server was never asked.
    assert_eq!(field(&script, "fetched"), json!([]));
    let outcomes: Vec<Value> = to_json(&host.debug_log().unwrap())
        .as_array()
        .unwrap()
        .iter()
        .filter(|entry| entry["method"] == "fetch")
        .map(|entry| entry["outcome"].clone())
        .collect();
    assert_eq!(outcomes, vec![json!("INVALID_PARAMS"); 5]);
}

#[wasm_bindgen_test]
async fn a_call_that_is_not_the_wire_shape_is_refused_naming_each_field() {
    let host = host_through(&fetch_backend(&JsValue::NULL));
    let tool = mount_with(
        &host,
        "raw",
        STANDALONE,
        &json!({"sdk": "none"}),
        &json!({"fetch": true}),
    )
    .await;
    tool.command(
        json!({"command": "hello", "message": {"toolbridge": "hello", "protocol": 1,
        "sdkVersion": "2.1.0", "instance": "raw-fetch"}}),
    )
    .await;
    let call = |params: Value| {
        json!({"command": "portCall", "message": {"jsonrpc": "2.0", "id": 1, "method": "fetch",
            "params": params}})
    };
    let reply = tool
        .command(call(
            json!([{"url": 5, "method": "GET", "headers": [["a", 1], "b"],
            "body": {"json": true}}]),
        ))
        .await;
    let error = &reply["result"]["error"];
    assert_eq!(error["data"]["code"], "INVALID_PARAMS", "{reply}");
    let paths: Vec<&str> = error["data"]["details"]
        .as_array()
        .unwrap()
        .iter()
        .map(|d| d["path"].as_str().unwrap())
        .collect();
    assert_eq!(
        paths,
        ["url", "headers[0]", "headers[1]", "body"],
        "{reply}"
    );
    for params in [json!({"url": VENDOR}), json!([]), json!([VENDOR])] {
        let reply = tool.command(call(params.clone())).await;
        let error = &reply["result"]["error"];
        assert_eq!(error["data"]["code"], "INVALID_PARAMS", "{params}: {reply}");
        assert!(
            error["message"].as_str().unwrap().contains("one request"),
            "{params}: {reply}"
        );
    }
}

#[wasm_bindgen_test]
async fn the_server_s_refusals_reach_the_tool_with_their_codes() {
    let cases = [
        (
            json!({"status": 504, "body": problem(504, "TIMEOUT",
                "https://api.vendor.example did not answer within 15 s", &json!({}))}),
            "TIMEOUT",
        ),
        (
            json!({"status": 403, "body": problem(403, "NOT_ALLOWED",
                "the tool's permissions.connect does not list https://api.vendor.example", &json!({}))}),
            "NOT_ALLOWED",
        ),
        (
            json!({"status": 429, "body": problem(429, "RATE_LIMITED", "too many requests",
                &json!({"retryAfter": 3})), "headers": {"Retry-After": "12"}}),
            "RATE_LIMITED",
        ),
        (
            json!({"status": 502, "body": problem(502, "BACKEND_UNAVAILABLE",
                "https://api.vendor.example could not be reached", &json!({}))}),
            "BACKEND_UNAVAILABLE",
        ),
        (
            json!({"status": 422, "body": problem(422, "INVALID_PARAMS", "x",
                &json!({"errors": [{"path": "headers[0][1]", "message": "names no secret that is set"}]}))}),
            "INVALID_PARAMS",
        ),
        // A 504 of a proxy in front of the server, with no problem of the server's.
        (
            json!({"status": 504, "body": "gateway timeout", "headers": {"content-type": "text/html"}}),
            "BACKEND_UNAVAILABLE",
        ),
    ];
    for (answer, code) in cases {
        let (script, _host, tool) = fetching(&answer).await;
        let error = refused(&tool, VENDOR, &json!({}), None).await;
        assert_eq!(error["code"], code, "{answer}: {error}");
        let detail = answer["body"]["detail"].as_str();
        match code {
            "RATE_LIMITED" => assert_eq!(error["retryAfter"], 12, "{error}"),
            "INVALID_PARAMS" => assert_eq!(
                error["details"],
                json!([{"path": "headers[0][1]", "message": "names no secret that is set"}])
            ),
            "TIMEOUT" | "NOT_ALLOWED" => assert_eq!(error["message"].as_str(), detail),
            _ => {}
        }
        assert_eq!(
            field(&script, "fetched").as_array().unwrap().len(),
            1,
            "{answer}"
        );
    }
}

#[wasm_bindgen_test]
async fn the_real_server_is_asked_for_the_mounted_tool() {
    sign_in(OFFICE).await;
    let host = host();
    let tool = mount_with(
        &host,
        "no-such-tool",
        STANDALONE,
        &sdk_query(&json!({})),
        &json!({"fetch": true}),
    )
    .await;
    // The server lists no such tool: it says so, past the host's own checks.
    let error = refused(&tool, VENDOR, &json!({}), None).await;
    assert_eq!(error["code"], "NOT_FOUND", "{error}");
}
