//! Whether the server can be reached (the `connectivity` extension): offered to every tool,
//! `connectivity.get` answered by the host, `connectivity.changed` both ways (from the window's
//! `online` and `offline` events, and from a backend that cannot be reached), calls that need
//! the server refused at once with `OFFLINE` while `addLines` keeps working, the page's own
//! operations refused the same way, and the periodic check bringing the host back online.

use serde_json::{Value, json};
use toolbridge_host::Host;
use wasm_bindgen::prelude::*;
use wasm_bindgen_test::wasm_bindgen_test;

use super::{EXTENSION, STANDALONE, sleep};
use crate::fixture::*;

#[wasm_bindgen(module = "/tests/support/backend.js")]
extern "C" {
    #[wasm_bindgen(js_name = switchableBackend)]
    fn switchable_backend(drop_url: &str) -> JsValue;
}

fn field(object: &JsValue, key: &str) -> JsValue {
    js_sys::Reflect::get(object, &JsValue::from_str(key)).unwrap()
}

/// The window's `online` or `offline` event, as the browser fires it when the network goes.
fn window_event(name: &str) {
    let event = web_sys::Event::new(name).unwrap();
    web_sys::window().unwrap().dispatch_event(&event).unwrap();
}

/// The page's clock, in milliseconds.
fn now() -> f64 {
    web_sys::window().unwrap().performance().unwrap().now()
}

/// The `connectivity.changed` notifications the tool heard so far.
async fn heard(tool: &Tool) -> Value {
    tool.command(json!({"command": "heard", "event": "connectivity.changed"}))
        .await["result"]
        .clone()
}

/// Waits (up to 5 s) until the tool has heard `count` `connectivity.changed`; returns them.
async fn heard_at_least(tool: &Tool, count: usize) -> Value {
    let mut seen = Value::Null;
    for _ in 0..100 {
        seen = heard(tool).await;
        if seen.as_array().is_some_and(|list| list.len() >= count) {
            break;
        }
        sleep(50).await;
    }
    seen
}

/// Waits (up to `ms`) until `host.online` is `online`.
async fn until_online_is(host: &Host, online: bool, ms: i32) -> bool {
    let steps = ms / 25;
    for _ in 0..steps {
        if host.online() == online {
            return true;
        }
        sleep(25).await;
    }
    host.online() == online
}

/// A host on the real server that checks every `check_ms` while offline (0: never).
fn checking_host(check_ms: u32) -> Host {
    host_at(&api_base(), &json!({"connectivityCheckMs": check_ms}))
}

#[wasm_bindgen_test]
async fn every_tool_is_offered_connectivity_and_get_answers_the_host_s_state() {
    sign_in(OFFICE).await;
    let host = checking_host(0);
    assert!(host.online(), "the test browser is online");
    let standalone = mount(&host, "lookup", STANDALONE, &sdk_query(&json!({}))).await;
    let extension = mount(&host, "estimator", EXTENSION, &sdk_query(&json!({}))).await;
    for tool in [&standalone, &extension] {
        let supports = tool
            .command(json!({"command": "supports", "names": ["connectivity"]}))
            .await;
        assert_eq!(supports["result"], json!({"connectivity": true}));
        assert_eq!(
            tool.ok("connectivity.get", json!([])).await,
            json!({"online": true})
        );
    }
    let tools = to_json(&host.tools().unwrap());
    for status in tools.as_array().unwrap() {
        assert!(
            status["capabilities"]
                .as_array()
                .unwrap()
                .contains(&json!("connectivity")),
            "{tools}"
        );
    }
    // Answered by the host itself: no request.
    let before = request_count();
    window_event("offline");
    assert_eq!(
        standalone.ok("connectivity.get", json!([])).await,
        json!({"online": false})
    );
    assert_eq!(request_count(), before);
    window_event("online");
    assert_eq!(
        standalone.ok("connectivity.get", json!([])).await,
        json!({"online": true})
    );
}

#[wasm_bindgen_test]
async fn the_window_s_offline_and_online_events_reach_the_tools_and_the_page() {
    sign_in(OFFICE).await;
    let host = checking_host(0);
    let tool = mount(&host, "lookup", STANDALONE, &sdk_query(&json!({}))).await;
    tool.command(json!({"command": "subscribe", "event": "connectivity.changed"}))
        .await;
    let (page_heard, listener) = recorder();
    let stop = host.on_connectivity(listener);
    window_event("offline");
    assert!(!host.online());
    // The same state again is no change.
    window_event("offline");
    assert_eq!(heard_at_least(&tool, 1).await, json!([{"online": false}]));
    window_event("online");
    assert!(host.online());
    assert_eq!(
        heard_at_least(&tool, 2).await,
        json!([{"online": false}, {"online": true}])
    );
    assert_eq!(
        to_json(&page_heard),
        json!([{"online": false}, {"online": true}])
    );
    stop.call0(&JsValue::NULL).unwrap();
    window_event("offline");
    window_event("online");
    assert_eq!(page_heard.length(), 2, "the listener was not removed");
    assert_eq!(
        heard_at_least(&tool, 4).await.as_array().map(Vec::len),
        Some(4)
    );
}

#[wasm_bindgen_test]
async fn while_offline_server_calls_fail_at_once_unsent_and_add_lines_keeps_working() {
    sign_in(OFFICE).await;
    let id = draft_quote().await;
    // Deadlines far beyond what a refusal may take.
    let host = host_at(
        &api_base(),
        &json!({"connectivityCheckMs": 0, "requestTimeoutMs": 15000}),
    );
    resolved(host.open_quote(id.clone(), &JsValue::UNDEFINED)).await;
    // ui.openQuote is offered (it checks the quote on the server first).
    let (_, navigate) = answering(|_| JsValue::TRUE);
    host.on_navigate(navigate);
    let tool = mount(&host, "estimator", EXTENSION, &sdk_query(&json!({}))).await;
    // The user is known from here on.
    tool.ok("context.get", json!([])).await;
    let lines_before = quote_of(&host)["lines"].as_array().unwrap().len();
    window_event("offline");
    let before = request_count();
    for (method, args) in [
        ("products.list", json!([])),
        ("customers.list", json!([{"pageSize": 5}])),
        (
            "quotes.create",
            json!([{"customerName": "Offline", "lines": []}]),
        ),
        ("ui.openQuote", json!([id.clone()])),
    ] {
        let started = now();
        let error = tool.fails(method, args).await;
        let elapsed = now() - started;
        assert_eq!(error["code"], "OFFLINE", "{method}: {error}");
        let message = error["message"].as_str().unwrap();
        assert!(
            message.contains("cannot be reached") && message.contains("was not sent"),
            "{method}: {message}"
        );
        assert!(
            elapsed < 3000.0,
            "{method} took {elapsed} ms to fail; the deadline is 15 s"
        );
    }
    // What needs no server still works: the kept user, the open quote, addLines.
    assert_eq!(tool.ok("context.get", json!([])).await["userEmail"], OFFICE);
    tool.ok(
        "quotes.addLines",
        json!([[{"description": "Offline line", "qty": 2, "unitPrice": 30, "taxRate": 0.15}]]),
    )
    .await;
    let open = tool.ok("quotes.getOpen", json!([])).await;
    assert_eq!(open["dirty"], true);
    assert_eq!(open["lines"].as_array().unwrap().len(), lines_before + 1);
    assert_eq!(
        tool.ok("connectivity.get", json!([])).await,
        json!({"online": false})
    );
    // The page's own operations are refused the same way, and the changes are kept.
    let started = now();
    let saved = rejected(host.save(&JsValue::UNDEFINED)).await;
    assert_eq!(saved["code"], "OFFLINE", "{saved}");
    assert!(
        saved["message"].as_str().unwrap().contains("was not sent"),
        "{saved}"
    );
    let sent = rejected(host.send()).await;
    assert_eq!(sent["code"], "OFFLINE", "{sent}");
    assert!(now() - started < 3000.0);
    let quote = quote_of(&host);
    assert_eq!(quote["dirty"], true);
    assert_eq!(quote["status"], "Draft");
    assert_eq!(quote["lines"].as_array().unwrap().len(), lines_before + 1);
    assert_eq!(request_count(), before, "a request was made while offline");
    let outcomes: Vec<Value> = to_json(&host.debug_log().unwrap())
        .as_array()
        .unwrap()
        .iter()
        .filter(|entry| entry["kind"] == "call" && entry["method"] == "products.list")
        .map(|entry| entry["outcome"].clone())
        .collect();
    assert_eq!(outcomes, [json!("OFFLINE")]);
    // Back online, the same save lands.
    window_event("online");
    let saved = resolved(host.save(&JsValue::UNDEFINED)).await;
    assert_eq!(saved["dirty"], false);
    assert_eq!(saved["lines"].as_array().unwrap().len(), lines_before + 1);
}

#[wasm_bindgen_test]
async fn a_backend_that_cannot_be_reached_puts_the_host_offline_until_the_check_gets_an_answer() {
    sign_in(OFFICE).await;
    let switch = switchable_backend(&format!("{}/drop", faults()));
    let mut options = json!({"apiBase": api_base(), "connectivityCheckMs": 300});
    options["debug"] = json!(true);
    let options = js(&options);
    js_sys::Reflect::set(
        &options,
        &JsValue::from_str("backend"),
        &field(&switch, "backend"),
    )
    .unwrap();
    let host = Host::new(&options).unwrap();
    let tool = mount(&host, "lookup", STANDALONE, &sdk_query(&json!({}))).await;
    tool.command(json!({"command": "subscribe", "event": "connectivity.changed"}))
        .await;
    let (page_heard, listener) = recorder();
    let _stop = host.on_connectivity(listener);
    tool.ok("customers.list", json!([])).await;
    assert!(host.online());

    let set_down = js_sys::Function::from(field(&switch, "setDown"));
    set_down.call1(&JsValue::NULL, &JsValue::TRUE).unwrap();
    // Sent, and failed on the network: OFFLINE, and the host is offline.
    let error = tool.fails("customers.list", json!([])).await;
    assert_eq!(error["code"], "OFFLINE", "{error}");
    assert!(
        error["message"].as_str().unwrap().contains("network error"),
        "{error}"
    );
    assert!(!host.online());
    assert_eq!(heard_at_least(&tool, 1).await, json!([{"online": false}]));
    assert_eq!(to_json(&page_heard), json!([{"online": false}]));
    // The next call is not even sent.
    let seen = || to_json(&field(&switch, "seen"));
    let lists = |seen: &Value| {
        seen.as_array()
            .unwrap()
            .iter()
            .filter(|request| request["path"].as_str().unwrap().ends_with("/customers"))
            .count()
    };
    let listed = lists(&seen());
    let error = tool.fails("customers.list", json!([])).await;
    assert!(
        error["message"].as_str().unwrap().contains("was not sent"),
        "{error}"
    );
    assert_eq!(lists(&seen()), listed);
    // Meanwhile the host checks, every 300 ms, with GET /me, and gets no answer.
    sleep(1000).await;
    let checks: Vec<Value> = seen()
        .as_array()
        .unwrap()
        .iter()
        .filter(|request| request["path"].as_str().unwrap().ends_with("/me"))
        .cloned()
        .collect();
    assert!(checks.len() >= 2, "{checks:?}");
    assert!(
        checks
            .iter()
            .all(|check| check["method"] == "GET" && check["down"] == true)
    );
    assert!(!host.online());

    // The server is back: the next check finds it.
    set_down.call1(&JsValue::NULL, &JsValue::FALSE).unwrap();
    assert!(until_online_is(&host, true, 3000).await, "still offline");
    assert_eq!(
        heard_at_least(&tool, 2).await,
        json!([{"online": false}, {"online": true}])
    );
    assert_eq!(
        to_json(&page_heard),
        json!([{"online": false}, {"online": true}])
    );
    tool.ok("customers.list", json!([])).await;
    // Online, no more checks.
    let checked = seen()
        .as_array()
        .unwrap()
        .iter()
        .filter(|request| request["path"].as_str().unwrap().ends_with("/me"))
        .count();
    sleep(700).await;
    let later = seen()
        .as_array()
        .unwrap()
        .iter()
        .filter(|request| request["path"].as_str().unwrap().ends_with("/me"))
        .count();
    assert_eq!(later, checked, "the host kept checking while online");
}

#[wasm_bindgen_test]
async fn dropped_connections_and_refused_ones_are_offline_but_the_deadline_is_not() {
    for base in [
        format!("{}/drop/api/v1", faults()),
        "http://127.0.0.1:9/api/v1".to_owned(),
    ] {
        let host = host_at(&base, &json!({"connectivityCheckMs": 0}));
        let tool = mount(&host, "lookup", STANDALONE, &sdk_query(&json!({}))).await;
        let error = tool.fails("context.get", json!([])).await;
        assert_eq!(error["code"], "OFFLINE", "{base}: {error}");
        assert!(!host.online(), "{base}");
    }
    let host = host_at(
        &format!("{}/hang/api/v1", faults()),
        &json!({"requestTimeoutMs": 300}),
    );
    let tool = mount(&host, "lookup", STANDALONE, &sdk_query(&json!({}))).await;
    let error = tool.fails("jobs.list", json!([])).await;
    assert_eq!(error["code"], "BACKEND_UNAVAILABLE", "{error}");
    assert!(host.online(), "a slow server is still reachable");
    // An HTTP answer, however bad, is an answer.
    let host = host_at(&format!("{}/status/503/api/v1", faults()), &json!({}));
    let tool = mount(&host, "lookup", STANDALONE, &sdk_query(&json!({}))).await;
    let error = tool.fails("jobs.list", json!([])).await;
    assert_eq!(error["code"], "BACKEND_UNAVAILABLE", "{error}");
    assert!(host.online());
}

#[wasm_bindgen_test]
async fn the_check_s_interval_must_be_a_number_of_milliseconds() {
    let error = error_json(
        &Host::new(&js(
            &json!({"apiBase": "/api/v1", "connectivityCheckMs": "10s"}),
        ))
        .err()
        .unwrap(),
    );
    assert_eq!(error["code"], "USAGE", "{error}");
    assert!(
        error["message"]
            .as_str()
            .unwrap()
            .contains("connectivityCheckMs"),
        "{error}"
    );
}
