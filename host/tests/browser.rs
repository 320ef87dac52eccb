//! The host module in real browsers (headless Chromium and Firefox).
//!
//! Tool pages on a second origin load the real `bridge.js` from the real
//! `toolbridge` server, which also answers the host's REST calls with the
//! test page's session. Failures that server cannot be made to produce on
//! demand (5xx, dropped connections, rate limits) come from a small test
//! server of faults. `cargo xtask test` starts both and passes their
//! addresses in at build time.

#![cfg(target_arch = "wasm32")]
// Test code: a panic is how a helper reports a failed expectation.
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

mod conflicts;
mod connectivity;
mod context;
mod extensions;
mod fetch;
mod fixture;
mod page_backend;

use fixture::*;
use serde_json::{Value, json};
use wasm_bindgen::JsValue;
use wasm_bindgen_test::{wasm_bindgen_test, wasm_bindgen_test_configure};

wasm_bindgen_test_configure!(run_in_browser);

const EXTENSION: &str = "quoting_extension";
const STANDALONE: &str = "standalone";

/// The host's debug log, as JSON.
fn log_of(host: &toolbridge_host::Host) -> Vec<Value> {
    to_json(&host.debug_log().unwrap())
        .as_array()
        .unwrap()
        .clone()
}

fn dropped_reasons(host: &toolbridge_host::Host) -> Vec<String> {
    log_of(host)
        .into_iter()
        .filter(|entry| entry["kind"] == "dropped")
        .map(|entry| entry["reason"].as_str().unwrap().to_owned())
        .collect()
}

/// The serialized open quote: what "unchanged" is compared on.
fn snapshot(host: &toolbridge_host::Host) -> String {
    js_sys::JSON::stringify(&host.quote().unwrap())
        .unwrap()
        .as_string()
        .unwrap()
}

/// A signed-in office user, a host with quote `id` open, and a mounted tool.
async fn editing(tool_type: &str) -> (toolbridge_host::Host, Tool, String) {
    sign_in(OFFICE).await;
    let id = draft_quote().await;
    let host = host();
    resolved(host.open_quote(id.clone(), &JsValue::UNDEFINED)).await;
    let tool = mount(&host, "estimator", tool_type, &sdk_query(&json!({}))).await;
    (host, tool, id)
}

async fn sleep(ms: i32) {
    let promise = js_sys::Promise::new(&mut |resolve, _| {
        web_sys::window()
            .unwrap()
            .set_timeout_with_callback_and_timeout_and_arguments_0(&resolve, ms)
            .unwrap();
    });
    wasm_bindgen_futures::JsFuture::from(promise).await.unwrap();
}

// --- Handshake and the page API -------------------------------------------

#[wasm_bindgen_test]
async fn a_mounted_tool_connects_with_the_type_the_page_gave() {
    sign_in(OFFICE).await;
    let host = host();
    let tool = mount(&host, "lookup", STANDALONE, &sdk_query(&json!({}))).await;
    let info = tool.command(json!({"command": "ready"})).await;
    assert_eq!(info["ok"], true, "{info}");
    assert_eq!(info["result"]["toolType"], STANDALONE);
    assert_eq!(info["result"]["supportsAddLines"], false);
    assert_eq!(info["result"]["methods"].as_array().unwrap().len(), 8);
    assert!(tool.mounted.as_ref().unwrap().connected());
    let frame = &tool.frame;
    assert_eq!(
        frame.get_attribute("sandbox").as_deref(),
        Some("allow-scripts allow-same-origin allow-forms allow-popups")
    );
    let tools = to_json(&host.tools().unwrap());
    assert_eq!(
        tools,
        json!([{"slug": "lookup", "type": STANDALONE, "origin": tool_origin(), "connected": true,
                "capabilities": ["session.ended", "connectivity"]}])
    );
}

#[wasm_bindgen_test]
async fn unmount_removes_the_frame_and_forgets_the_tool() {
    sign_in(OFFICE).await;
    let host = host();
    let tool = mount(&host, "lookup", STANDALONE, &sdk_query(&json!({}))).await;
    tool.ok("context.get", json!([])).await;
    let mounted = tool.mounted.as_ref().unwrap();
    mounted.unmount();
    assert!(!mounted.connected());
    assert!(
        tool.frame.parent_node().is_none(),
        "the frame is still in the page"
    );
    assert_eq!(to_json(&host.tools().unwrap()), json!([]));
    mounted.unmount(); // twice is harmless
}

#[wasm_bindgen_test]
async fn mount_refuses_bad_options_with_the_option_named() {
    let host = host();
    let cases = [
        (
            json!({"slug": "x", "origin": "http://localhost:1/path", "type": STANDALONE}),
            "origin",
        ),
        (
            json!({"slug": "x", "origin": "ftp://localhost:1", "type": STANDALONE}),
            "origin",
        ),
        (
            json!({"slug": "Bad Slug", "origin": "http://localhost:1", "type": STANDALONE}),
            "slug",
        ),
        (
            json!({"slug": "x", "origin": "http://localhost:1", "type": "widget"}),
            "type",
        ),
        (
            json!({"slug": "x", "origin": "http://localhost:1", "type": STANDALONE, "entry": "http://evil.test/"}),
            "entry",
        ),
        (
            json!({"slug": "x", "origin": "http://localhost:1", "type": STANDALONE, "sandbox": ""}),
            "sandbox",
        ),
    ];
    let container: web_sys::Element = web_sys::window()
        .unwrap()
        .document()
        .unwrap()
        .body()
        .unwrap()
        .into();
    for (options, named) in cases {
        let error = error_json(&host.mount(&container, &js(&options)).err().unwrap());
        assert_eq!(error["name"], "HostError");
        assert_eq!(error["code"], "USAGE", "{error}");
        assert!(
            error["message"].as_str().unwrap().contains(named),
            "{error} should name {named}"
        );
    }
    assert_eq!(to_json(&host.tools().unwrap()), json!([]));
    let bad_base = toolbridge_host::Host::new(&js(&json!({"apiBase": "mailto:x"})))
        .err()
        .unwrap();
    assert_eq!(error_json(&bad_base)["code"], "USAGE");
}

// --- Attacks: refused, logged, nothing changed ------------------------------

#[wasm_bindgen_test]
async fn a_hello_from_a_frame_the_host_did_not_mount_is_dropped() {
    sign_in(OFFICE).await;
    let host = host();
    // A mounted tool at the same origin connects; a frame the host did not
    // mount, showing the very same page, does not.
    let mounted = mount(&host, "lookup", STANDALONE, &sdk_query(&json!({}))).await;
    mounted.ok("context.get", json!([])).await;
    let stray = stray(&sdk_query(&json!({"connectTimeoutMs": 1000}))).await;
    let error = stray.fails("context.get", json!([])).await;
    assert_eq!(error["code"], "NOT_CONNECTED");
    assert!(
        dropped_reasons(&host)
            .iter()
            .any(|r| r.contains("not a frame this host mounted")),
        "{:?}",
        dropped_reasons(&host)
    );
    let tools = to_json(&host.tools().unwrap());
    assert_eq!(tools.as_array().unwrap().len(), 1, "{tools}");
    assert_eq!(tools[0]["slug"], "lookup");
}

#[wasm_bindgen_test]
async fn a_hello_from_the_mounted_frame_at_another_origin_is_dropped() {
    let (host, tool, _) = editing(EXTENSION).await;
    let before = snapshot(&host);
    // The mounted frame navigates to the page at another origin: same
    // window, wrong origin.
    let elsewhere = tool_page_at(
        other_tool_origin(),
        &js(&sdk_query(&json!({"connectTimeoutMs": 1500}))),
    );
    tool.command(json!({"command": "navigate", "url": elsewhere}))
        .await;
    sleep(1000).await;
    let reasons = dropped_reasons(&host);
    assert!(
        reasons.iter().any(
            |r| r.contains(&format!("a hello from origin {}", other_tool_origin()))
                && r.contains(&format!("registered at {}", tool_origin()))
        ),
        "{reasons:?}"
    );
    let error = tool
        .fails(
            "quotes.addLines",
            json!([[{"qty": 1, "unitPrice": 1, "taxRate": 0.15}]]),
        )
        .await;
    assert_eq!(error["code"], "NOT_CONNECTED");
    assert_eq!(snapshot(&host), before);
}

#[wasm_bindgen_test]
async fn a_call_on_the_window_instead_of_the_port_is_dropped() {
    let (host, tool, _) = editing(EXTENSION).await;
    tool.ok("context.get", json!([])).await;
    let before = snapshot(&host);
    let forged = json!({"jsonrpc": "2.0", "id": 99, "method": "quotes.addLines",
        "params": [{"description": "smuggled", "qty": 1, "unitPrice": 1, "taxRate": 0.15}]});
    tool.command(json!({"command": "postToParent", "message": forged}))
        .await;
    sleep(200).await;
    assert_eq!(snapshot(&host), before);
    assert!(
        dropped_reasons(&host)
            .iter()
            .any(|r| r.contains("calls go over its private port")),
        "{:?}",
        dropped_reasons(&host)
    );
}

#[wasm_bindgen_test]
async fn a_standalone_tool_may_not_add_lines() {
    let (host, tool, _) = editing(STANDALONE).await;
    let before = snapshot(&host);
    let error = tool
        .fails(
            "quotes.addLines",
            json!([[{"description": "x", "qty": 1, "unitPrice": 1, "taxRate": 0.15}]]),
        )
        .await;
    assert_eq!(error["code"], "NOT_ALLOWED");
    assert!(
        error["message"]
            .as_str()
            .unwrap()
            .contains("quoting_extension"),
        "{error}"
    );
    assert_eq!(snapshot(&host), before);
}

#[wasm_bindgen_test]
async fn a_tool_claiming_another_type_keeps_the_one_it_was_mounted_with() {
    let (host, _, _) = editing(STANDALONE).await;
    let before = snapshot(&host);
    let raw = mount(&host, "raw", STANDALONE, &json!({"sdk": "none"})).await;
    let hello = json!({"toolbridge": "hello", "protocol": 1, "sdkVersion": "2.1.0", "instance": "forger-1",
        "toolType": EXTENSION, "methods": ["quotes.addLines"]});
    let answer = raw
        .command(json!({"command": "hello", "message": hello}))
        .await;
    let welcomes = answer["result"]["welcomes"].as_array().unwrap();
    assert_eq!(welcomes.len(), 1, "{answer}");
    assert_eq!(welcomes[0]["toolType"], STANDALONE);
    assert_eq!(welcomes[0]["ports"], 1);
    assert!(
        !welcomes[0]["methods"]
            .as_array()
            .unwrap()
            .contains(&json!("quotes.addLines"))
    );
    let call = json!({"jsonrpc": "2.0", "id": 1, "method": "quotes.addLines", "toolType": EXTENSION,
        "params": [{"description": "x", "qty": 1, "unitPrice": 1, "taxRate": 0.15}]});
    let reply = raw
        .command(json!({"command": "portCall", "message": call}))
        .await;
    assert_eq!(
        reply["result"]["error"]["data"]["code"], "NOT_ALLOWED",
        "{reply}"
    );
    assert_eq!(snapshot(&host), before);
}

#[wasm_bindgen_test]
async fn a_reload_replaces_and_closes_the_old_port() {
    sign_in(OFFICE).await;
    let host = host();
    let raw = mount(&host, "raw", STANDALONE, &json!({"sdk": "none"})).await;
    let hello = |instance: &str| json!({"toolbridge": "hello", "protocol": 1, "sdkVersion": "2.1.0", "instance": instance});
    raw.command(json!({"command": "hello", "message": hello("first")}))
        .await;
    let call = |id: u32| json!({"jsonrpc": "2.0", "id": id, "method": "context.get"});
    let first = raw
        .command(json!({"command": "portCall", "message": call(1), "keepPort": true}))
        .await;
    assert_eq!(first["result"]["result"]["userEmail"], OFFICE, "{first}");
    // A repeat of the same instance changes nothing.
    let repeat = raw
        .command(json!({"command": "hello", "message": hello("first")}))
        .await;
    assert_eq!(repeat["result"]["welcomes"], json!([]));
    // A new instance (the page reloaded) gets a new port; the old one is closed.
    let second = raw
        .command(json!({"command": "hello", "message": hello("second")}))
        .await;
    assert_eq!(second["result"]["welcomes"].as_array().unwrap().len(), 1);
    let old = raw
        .command(json!({"command": "keptPortCall", "message": call(2)}))
        .await;
    assert_eq!(
        old["result"],
        Value::Null,
        "the old port still answers: {old}"
    );
    let new = raw
        .command(json!({"command": "portCall", "message": call(3)}))
        .await;
    assert_eq!(new["result"]["result"]["userEmail"], OFFICE);
}

#[wasm_bindgen_test]
async fn junk_on_the_port_gets_an_error_and_unknown_methods_are_method_not_found() {
    sign_in(OFFICE).await;
    let host = host();
    let raw = mount(&host, "raw", EXTENSION, &json!({"sdk": "none"})).await;
    let hello =
        json!({"toolbridge": "hello", "protocol": 1, "sdkVersion": "2.1.0", "instance": "junk"});
    raw.command(json!({"command": "hello", "message": hello}))
        .await;
    let unknown = raw
        .command(json!({"command": "portCall", "message": {"jsonrpc": "2.0", "id": 5, "method": "quotes.delete", "params": {}}}))
        .await;
    assert_eq!(unknown["result"]["error"]["code"], -32601, "{unknown}");
    assert_eq!(
        unknown["result"]["error"]["data"]["code"],
        "METHOD_NOT_FOUND"
    );
    let junk = raw
        .command(json!({"command": "portCall", "message": "text"}))
        .await;
    assert_eq!(junk["result"]["id"], Value::Null, "{junk}");
    assert_eq!(junk["result"]["error"]["data"]["code"], "INVALID_PARAMS");
    let no_version = raw
        .command(json!({"command": "portCall", "message": {"id": 6, "method": "context.get"}}))
        .await;
    assert_eq!(
        no_version["result"]["error"]["data"]["details"][0]["path"],
        "jsonrpc"
    );
}

#[wasm_bindgen_test]
async fn a_report_of_what_the_frame_refused_is_logged_for_its_tool_and_not_answered() {
    sign_in(OFFICE).await;
    let host = host();
    let (heard, listener) = recorder();
    let _off = host.on_blocked(listener);
    let raw = mount(&host, "raw", STANDALONE, &json!({"sdk": "none"})).await;
    let hello =
        json!({"toolbridge": "hello", "protocol": 1, "sdkVersion": "2.1.0", "instance": "refused"});
    raw.command(json!({"command": "hello", "message": hello}))
        .await;
    let report = |params: Value| json!({"command": "portCall", "message": {"jsonrpc": "2.0", "method": "sdk.blocked", "params": params}});
    // A notification: no reply (the tool page's wait ends empty).
    let logged = raw
        .command(report(json!({"kind": "modal", "detail": "alert(): hi"})))
        .await;
    assert_eq!(logged["result"], Value::Null, "{logged}");
    raw.command(report(
        json!({"kind": "policy", "detail": "script-src-elem inline"}),
    ))
    .await;
    raw.command(report(
        json!({"kind": "policy", "detail": "connect-src https://prices.vendor.example/list?x=1"}),
    ))
    .await;
    let malformed = raw
        .command(report(json!({"kind": "popup", "detail": "window.open"})))
        .await;
    assert_eq!(malformed["result"], Value::Null, "{malformed}");

    let log = to_json(&host.debug_log().unwrap());
    let entries = log.as_array().unwrap();
    let blocked: Vec<&Value> = entries.iter().filter(|e| e["kind"] == "blocked").collect();
    assert_eq!(blocked.len(), 3, "{log}");
    assert_eq!(
        (
            &blocked[0]["tool"],
            &blocked[0]["what"],
            &blocked[0]["detail"]
        ),
        (&json!("raw"), &json!("modal"), &json!("alert(): hi"))
    );
    // Each says what to change, in protocol's words.
    let advice: Vec<&str> = blocked
        .iter()
        .map(|entry| entry["advice"].as_str().unwrap())
        .collect();
    assert!(advice[0].contains("bridge.ui.toast"), "{advice:?}");
    assert!(
        advice[1].starts_with("an inline script was refused: move it into a .js file"),
        "{advice:?}"
    );
    assert!(
        advice[2].contains("https://prices.vendor.example")
            && advice[2].contains("permissions.connect"),
        "{advice:?}"
    );
    let dropped = entries
        .iter()
        .find(|e| e["kind"] == "dropped" && e["reason"].as_str().unwrap().contains("sdk.blocked"))
        .unwrap_or_else(|| panic!("no dropped entry for the malformed report: {log}"));
    assert_eq!(dropped["tool"], "raw", "{dropped}");
    let reason = dropped["reason"].as_str().unwrap();
    assert!(reason.contains("params.kind"), "{reason}");
    let heard = to_json(&heard);
    assert_eq!(heard.as_array().unwrap().len(), 3, "{heard}");
    assert_eq!(
        heard[0],
        json!({"tool": "raw", "what": "modal", "detail": "alert(): hi", "advice": advice[0]})
    );
    // Neither counts as a call.
    assert!(entries.iter().all(|e| e["kind"] != "call"), "{log}");
}

// --- Dispatch against the real server ---------------------------------------

#[wasm_bindgen_test]
async fn context_get_answers_the_signed_in_user_and_is_kept() {
    sign_in(OFFICE).await;
    let host = host();
    let tool = mount(&host, "lookup", STANDALONE, &sdk_query(&json!({}))).await;
    let before = request_count();
    let context = tool.ok("context.get", json!([])).await;
    assert_eq!(context["userEmail"], OFFICE);
    assert_eq!(context["userRole"], "office");
    assert_eq!(context["tenantName"], "Harbour Flooring Ltd");
    tool.ok("context.get", json!([])).await;
    let urls = to_json(&request_urls(before));
    let me: Vec<&Value> = urls
        .as_array()
        .unwrap()
        .iter()
        .filter(|u| u.as_str().unwrap().ends_with("/me"))
        .collect();
    assert_eq!(me.len(), 1, "GET /me should be made once: {urls}");
}

#[wasm_bindgen_test]
async fn lists_are_forwarded_with_their_paging() {
    sign_in(OFFICE).await;
    let host = host();
    let tool = mount(&host, "lookup", STANDALONE, &sdk_query(&json!({}))).await;
    let first = tool
        .ok("products.list", json!([{"page": 1, "pageSize": 500}]))
        .await;
    assert_eq!(first["items"].as_array().unwrap().len(), 500);
    let total = first["totalCount"].as_u64().unwrap();
    assert!(total > 500, "{total}");
    let page = tool
        .ok("products.list", json!([{"page": 2, "pageSize": 500}]))
        .await;
    assert_eq!(page["page"], 2);
    assert_eq!(page["pageSize"], 500);
    assert_eq!(page["totalCount"], total);
    assert_eq!(page["items"].as_array().unwrap().len() as u64, total - 500);
    assert_ne!(page["items"][0]["id"], first["items"][0]["id"]);
    for method in [
        "customers.list",
        "jobs.list",
        "quotes.list",
        "taskTemplates.list",
        "costItems.list",
    ] {
        let page = tool.ok(method, json!([])).await;
        assert_eq!(page["page"], 1, "{method}");
        assert_eq!(page["pageSize"], 50, "{method}");
        assert!(
            !page["items"].as_array().unwrap().is_empty(),
            "{method}: {page}"
        );
    }
}

#[wasm_bindgen_test]
async fn paging_is_checked_before_any_request_is_made() {
    sign_in(OFFICE).await;
    let host = host();
    let tool = mount(&host, "lookup", STANDALONE, &sdk_query(&json!({}))).await;
    tool.ok("context.get", json!([])).await;
    let before = request_count();
    let error = tool
        .fails("products.list", json!([{"page": 0, "pageSize": 501}]))
        .await;
    assert_eq!(error["code"], "INVALID_PARAMS");
    let paths = detail_paths(&error);
    assert_eq!(paths, ["page", "pageSize"]);
    let error = tool
        .fails("customers.list", json!([{"codes": ["A"]}]))
        .await;
    assert_eq!(error["details"][0]["path"], "codes");
    assert_eq!(
        request_count(),
        before,
        "a refused call reached the backend"
    );
}

#[wasm_bindgen_test]
async fn codes_return_every_active_match_and_ignore_paging() {
    sign_in(OFFICE).await;
    let host = host();
    let tool = mount(&host, "lookup", STANDALONE, &sdk_query(&json!({}))).await;
    let templates = tool
        .ok("taskTemplates.list", json!([{"codes": ["INSTALL", "UNDERLAY", "LEGACY_PREP", "NOPE"], "page": 9, "pageSize": 1}]))
        .await;
    let mut codes: Vec<&str> = templates["items"]
        .as_array()
        .unwrap()
        .iter()
        .map(|t| t["code"].as_str().unwrap())
        .collect();
    codes.sort_unstable();
    assert_eq!(codes, ["INSTALL", "UNDERLAY"], "{templates}");
    let costs = tool
        .ok("costItems.list", json!([{"codes": ["TRAVEL", "OLD_FEE"]}]))
        .await;
    assert_eq!(costs["items"].as_array().unwrap().len(), 1);
    assert_eq!(costs["items"][0]["type"], "T_TRAVEL");
    let paged = tool
        .ok("taskTemplates.list", json!([{"page": 1, "pageSize": 2}]))
        .await;
    assert_eq!(paged["items"].as_array().unwrap().len(), 2);
    assert_eq!(paged["totalCount"], 4);
}

#[wasm_bindgen_test]
async fn quotes_create_creates_a_quote_for_the_session() {
    sign_in(OFFICE).await;
    let host = host();
    let tool = mount(&host, "quick-quote", STANDALONE, &sdk_query(&json!({}))).await;
    let created = tool
        .ok(
            "quotes.create",
            json!([{"customerName": "Bridge Customer", "title": "From a tool",
                "lines": [{"description": "Oak", "productCode": "oak-01", "qty": 3, "unitPrice": 10, "taxRate": 0.15}]}]),
        )
        .await;
    let id = created["id"].as_str().unwrap();
    assert_eq!(created["url"], format!("/quotes/{id}"));
    assert_eq!(created["total"], 34.5);
    let (status, quote) = request("GET", &format!("/api/v1/quotes/{id}"), None).await;
    assert_eq!(status, 200);
    assert_eq!(quote["customerName"], "Bridge Customer");
    assert_eq!(quote["ref"], created["ref"]);
    assert_eq!(quote["status"], "Draft");
    // The code matched an active product's SKU: the line is linked to it.
    assert_eq!(quote["lines"][0]["productCode"], "OAK-01");
    assert!(quote["lines"][0]["linkedItemId"].is_string(), "{quote}");
}

#[wasm_bindgen_test]
async fn quotes_create_is_validated_before_the_backend_sees_it() {
    sign_in(OFFICE).await;
    let host = host();
    let tool = mount(&host, "quick-quote", STANDALONE, &sdk_query(&json!({}))).await;
    tool.ok("context.get", json!([])).await;
    let before = request_count();
    let line = |qty: f64, price: f64, tax: f64| json!({"description": "x", "qty": qty, "unitPrice": price, "taxRate": tax});
    let empty = tool
        .fails("quotes.create", json!([{"customerName": "C", "lines": []}]))
        .await;
    assert_eq!(empty["code"], "INVALID_PARAMS");
    assert_eq!(empty["details"][0]["path"], "lines");
    let many: Vec<Value> = (0..201).map(|_| line(1.0, 1.0, 0.15)).collect();
    let too_many = tool
        .fails(
            "quotes.create",
            json!([{"customerName": "C", "lines": many}]),
        )
        .await;
    assert_eq!(too_many["details"][0]["path"], "lines");
    let bad = tool
        .fails(
            "quotes.create",
            json!([{"customerName": "C", "lines": [line(0.0, 1.0, 0.15), line(10000.0001, 1.0, 0.15),
                line(1.0, -1.0, 0.15), line(1.0, 1_000_000.01, 0.15), line(1.0, 1.0, 15.0)]}]),
        )
        .await;
    let paths = detail_paths(&bad);
    assert_eq!(
        paths,
        [
            "lines[0].qty",
            "lines[1].qty",
            "lines[2].unitPrice",
            "lines[3].unitPrice",
            "lines[4].taxRate"
        ]
    );
    assert!(
        bad["details"][4]["message"]
            .as_str()
            .unwrap()
            .contains("0.15 means 15%"),
        "{bad}"
    );
    let upsert = tool
        .fails(
            "quotes.create",
            json!([{"upsertByEmail": true, "lines": [line(1.0, 1.0, 0.15)]}]),
        )
        .await;
    assert_eq!(upsert["details"][0]["path"], "customerEmail");
    assert_eq!(
        request_count(),
        before,
        "a refused create reached the backend"
    );
}

#[wasm_bindgen_test]
async fn quotes_create_for_an_unknown_job_is_not_found() {
    sign_in(OFFICE).await;
    let host = host();
    let tool = mount(&host, "quick-quote", STANDALONE, &sdk_query(&json!({}))).await;
    let error = tool
        .fails(
            "quotes.create",
            json!([{"jobId": "00000000-0000-4000-8000-000000000000",
                "lines": [{"description": "x", "qty": 1, "unitPrice": 1, "taxRate": 0.15}]}]),
        )
        .await;
    assert_eq!(error["code"], "NOT_FOUND", "{error}");
}

#[wasm_bindgen_test]
async fn a_field_user_may_read_but_not_create_or_add_lines() {
    sign_in(OFFICE).await;
    let id = draft_quote().await;
    sign_in(FIELD).await;
    let host = host();
    resolved(host.open_quote(id, &JsValue::UNDEFINED)).await;
    let before = snapshot(&host);
    let tool = mount(&host, "estimator", EXTENSION, &sdk_query(&json!({}))).await;
    tool.ok("quotes.list", json!([])).await;
    let line = json!({"description": "x", "qty": 1, "unitPrice": 1, "taxRate": 0.15});
    let create = tool
        .fails(
            "quotes.create",
            json!([{"customerName": "C", "lines": [line]}]),
        )
        .await;
    assert_eq!(create["code"], "NOT_ALLOWED");
    assert!(
        create["message"].as_str().unwrap().contains("Field"),
        "{create}"
    );
    let add = tool.fails("quotes.addLines", json!([[line]])).await;
    assert_eq!(add["code"], "NOT_ALLOWED");
    assert_eq!(snapshot(&host), before);
}

#[wasm_bindgen_test]
async fn an_ended_session_is_unauthenticated() {
    sign_in(OFFICE).await;
    let host = host();
    let tool = mount(&host, "lookup", STANDALONE, &sdk_query(&json!({}))).await;
    tool.ok("context.get", json!([])).await;
    sign_out().await;
    let error = tool.fails("products.list", json!([])).await;
    assert_eq!(error["code"], "UNAUTHENTICATED");
    // The kept user went with the session.
    let error = tool.fails("context.get", json!([])).await;
    assert_eq!(error["code"], "UNAUTHENTICATED");
    let open = rejected(host.open_quote("anything".to_owned(), &JsValue::UNDEFINED)).await;
    assert_eq!(open["name"], "HostError");
    assert_eq!(open["code"], "UNAUTHENTICATED");
}

// --- addLines and the open quote ---------------------------------------------

#[wasm_bindgen_test]
async fn add_lines_without_an_open_quote_is_no_open_quote() {
    sign_in(OFFICE).await;
    let host = host();
    let tool = mount(&host, "estimator", EXTENSION, &sdk_query(&json!({}))).await;
    let error = tool
        .fails(
            "quotes.addLines",
            json!([[{"qty": 1, "unitPrice": 1, "taxRate": 0.15}]]),
        )
        .await;
    assert_eq!(error["code"], "NO_OPEN_QUOTE");
}

#[wasm_bindgen_test]
async fn a_tool_that_sends_the_deprecated_product_id_is_told_once_on_its_console() {
    let (host, tool, _id) = editing(EXTENSION).await;
    let products = tool
        .ok("products.list", json!([{"page": 1, "pageSize": 50}]))
        .await;
    let product = products["items"][0]["id"].clone();
    let line = |link: Value| {
        let mut line = json!({"qty": 1, "unitPrice": 10, "taxRate": 0.15});
        line.as_object_mut()
            .unwrap()
            .extend(link.as_object().unwrap().clone());
        line
    };
    tool.ok(
        "quotes.addLines",
        json!([[line(json!({"linkedItemId": product}))]]),
    )
    .await;
    let warnings = tool.command(json!({"command": "warnings"})).await;
    assert_eq!(
        warnings["result"],
        json!([]),
        "linkedItemId is not deprecated"
    );
    for _ in 0..2 {
        tool.ok(
            "quotes.addLines",
            json!([[line(json!({"productId": product}))]]),
        )
        .await;
    }
    let warnings = tool.command(json!({"command": "warnings"})).await;
    let warnings = warnings["result"].as_array().unwrap();
    assert_eq!(warnings.len(), 1, "{warnings:?}");
    let warning = warnings[0].as_str().unwrap();
    assert!(warning.contains("`productId`"), "{warning}");
    assert!(warning.contains("`linkedItemId`"), "{warning}");
    // productId still links the line to its product, as linkedItemId does.
    let quote = quote_of(&host);
    let lines = quote["lines"].as_array().unwrap();
    let linked: Vec<&Value> = lines
        .iter()
        .filter(|l| l["linkedItemId"] == product && l["injected"] != true)
        .collect();
    assert_eq!(linked.len(), 3, "{quote}");
}

#[wasm_bindgen_test]
async fn the_reference_pattern_merges_in_memory_with_injected_tasks() {
    let (host, tool, id) = editing(EXTENSION).await;
    let changes = js_sys::Array::new();
    let record = changes.clone();
    let listener = wasm_bindgen::closure::Closure::<dyn FnMut(JsValue, JsValue)>::new(
        move |_quote: JsValue, change: JsValue| {
            record.push(&change);
        },
    );
    let _off = host.on_change(
        wasm_bindgen::JsCast::unchecked_ref::<js_sys::Function>(listener.as_ref()).clone(),
    );

    // Method rule 2: a large page, SKUs looked up case-insensitively.
    let products = tool
        .ok("products.list", json!([{"page": 1, "pageSize": 500}]))
        .await;
    let oak = products["items"]
        .as_array()
        .unwrap()
        .iter()
        .find(|p| p["sku"].as_str().unwrap().eq_ignore_ascii_case("oak-01"))
        .unwrap()
        .clone();
    let install = tool
        .ok("taskTemplates.list", json!([{"codes": ["SEAL"]}]))
        .await;
    let travel = tool
        .ok("costItems.list", json!([{"codes": ["TRAVEL"]}]))
        .await;
    let before = request_count();
    let batch = json!([
        {"productCode": "oak-01", "linkedItemId": oak["id"], "description": "Oak floor", "qty": 10, "unitPrice": 89.5,
         "costPrice": 61, "taxRate": 15, "unit": "T_SQUARE_METRE", "section": "  Lounge  ", "groupKey": "lounge",
         "specification": "5 x 2 m", "location": "Lounge"},
        {"productCode": "NOT-IN-CATALOG", "description": "Free-form", "qty": 1, "unitPrice": 5, "taxRate": 0.15, "groupKey": "lounge"},
        {"lineType": "task", "linkedItemId": install["items"][0]["id"], "description": "Seal", "qty": 2, "unitPrice": 9, "taxRate": 0.15, "section": "Hall", "groupKey": "hall"},
        {"lineType": "cost", "linkedItemId": travel["items"][0]["id"], "description": "Travel", "qty": 1, "unitPrice": 40, "taxRate": 0.15}
    ]);
    let result = tool.ok("quotes.addLines", json!([batch])).await;
    assert_eq!(result, Value::Null);
    assert_eq!(request_count(), before, "addLines made a network request");

    let quote = quote_of(&host);
    assert_eq!(quote["dirty"], true);
    let lines = quote["lines"].as_array().unwrap();
    // The existing line, then: oak + its two injected tasks, free-form, task, cost.
    assert_eq!(lines.len(), 7, "{quote}");
    let oak_line = &lines[1];
    assert_eq!(oak_line["section"], "Lounge");
    assert_eq!(oak_line["taxRate"], 0.15);
    assert_eq!(oak_line["costPrice"], 61.0);
    assert_eq!(oak_line["specification"], "5 x 2 m");
    let lounge = oak_line["groupId"].as_u64().unwrap();
    assert!(lounge > 0);
    for injected in &lines[2..4] {
        assert_eq!(injected["injected"], true);
        assert_eq!(injected["parentLineNo"], oak_line["lineNo"]);
        assert_eq!(injected["groupId"], lounge);
        assert_eq!(injected["section"], "Lounge");
    }
    assert_eq!(lines[2]["description"], "Installation");
    assert_eq!(lines[2]["qty"], 2.5);
    assert_eq!(lines[3]["description"], "Underlay");
    assert_eq!(lines[3]["qty"], 10.0);
    assert_eq!(lines[4]["lineType"], "product");
    assert!(lines[4].get("linkedItemId").is_none());
    assert_eq!(lines[4]["groupId"], lounge);
    assert_eq!(lines[5]["groupId"], lounge + 1);
    assert_eq!(lines[6]["groupId"], 0);
    let nett: f64 = lines.iter().map(|l| l["nett"].as_f64().unwrap()).sum();
    assert!((quote["totals"]["nett"].as_f64().unwrap() - nett).abs() < 1e-9);
    assert!(
        quote["totals"]["cost"].as_f64().unwrap() < nett,
        "BUY and SELL should differ"
    );

    let heard = to_json(&changes);
    assert_eq!(
        heard[0],
        json!({"kind": "linesAdded", "tool": "estimator", "linesAdded": 4, "tasksInjected": 2})
    );

    // Saved, the backend has the same lines.
    let saved = resolved(host.save(&JsValue::UNDEFINED)).await;
    assert_eq!(saved["dirty"], false);
    let (_, stored) = request("GET", &format!("/api/v1/quotes/{id}"), None).await;
    assert_eq!(stored["lines"], saved["lines"]);
    assert_eq!(stored["totals"], quote["totals"]);
    assert_eq!(to_json(&changes)[1]["kind"], "saved");
}

#[wasm_bindgen_test]
async fn an_invalid_batch_leaves_the_open_quote_exactly_as_it_was() {
    let (host, tool, _) = editing(EXTENSION).await;
    tool.ok("quotes.addLines", json!([[{"description": "first", "qty": 1, "unitPrice": 1, "taxRate": 0.15, "groupKey": "a"}]]))
        .await;
    let before = snapshot(&host);
    let batch = json!([
        {"description": "fine", "qty": 1, "unitPrice": 1, "taxRate": 0.15, "groupKey": "b"},
        {"description": "bad type", "lineType": "service", "qty": 1, "unitPrice": 1, "taxRate": 0.15},
        {"description": "long section", "section": "x".repeat(101), "qty": 1, "unitPrice": 1, "taxRate": 0.15},
        {"description": "dangling", "lineType": "cost", "linkedItemId": "00000000-0000-4000-8000-000000000000", "qty": 1, "unitPrice": 1, "taxRate": 0.15},
        {"description": "no qty", "unitPrice": 1, "taxRate": 0.15}
    ]);
    let error = tool.fails("quotes.addLines", json!([batch])).await;
    assert_eq!(error["code"], "INVALID_PARAMS");
    let paths = detail_paths(&error);
    assert_eq!(
        paths,
        [
            "lines[1].lineType",
            "lines[2].section",
            "lines[3].linkedItemId",
            "lines[4].qty"
        ],
        "{error}"
    );
    assert_eq!(snapshot(&host), before);
    // A section of exactly 100 characters after trimming is fine.
    tool.ok("quotes.addLines", json!([[{"description": "edge", "section": format!("  {}  ", "y".repeat(100)), "qty": 1, "unitPrice": 1, "taxRate": 0.15}]]))
        .await;
    assert_ne!(snapshot(&host), before);
}

/// Batches the host reads from the tool's objects answer exactly as their
/// JSON values do: the same answer to each, the same quote after them all.
#[wasm_bindgen_test]
async fn a_batch_read_from_its_objects_answers_as_its_json_value() {
    const BATCHES: usize = 300;
    let (host, tool, id) = editing(EXTENSION).await;
    let mut runs = Vec::new();
    for as_values in [true, false] {
        toolbridge_host::read_lines_as_values(as_values);
        host.close_quote(&js(&json!({"discard": true}))).unwrap();
        resolved(host.open_quote(id.clone(), &JsValue::UNDEFINED)).await;
        let answers = tool
            .command_within(
                json!({"command": "oddBatches", "seed": 23, "count": BATCHES}),
                120_000,
            )
            .await;
        assert_eq!(answers["ok"], true, "{answers}");
        runs.push((answers["result"].clone(), quote_of(&host)));
    }
    let read_as_values = toolbridge_host::read_lines_as_values(false) as usize;
    assert!(
        read_as_values < BATCHES / 2,
        "{read_as_values} of {BATCHES} batches went as JSON values"
    );
    let (by_value, by_objects) = (&runs[0], &runs[1]);
    for (i, (value, objects)) in by_value
        .0
        .as_array()
        .unwrap()
        .iter()
        .zip(by_objects.0.as_array().unwrap())
        .enumerate()
    {
        assert_eq!(value, objects, "batch {i}");
    }
    assert_eq!(by_value.1, by_objects.1);
    let lines = by_value.1["lines"].as_array().unwrap().len();
    assert!(lines > 150, "only {lines} lines were merged");
}

#[wasm_bindgen_test]
async fn a_sent_quote_is_locked() {
    let (host, tool, _) = editing(EXTENSION).await;
    tool.ok(
        "quotes.addLines",
        json!([[{"description": "before sending", "qty": 1, "unitPrice": 1, "taxRate": 0.15}]]),
    )
    .await;
    let sent = resolved(host.send()).await;
    assert_eq!(sent["status"], "Sent");
    assert_eq!(sent["dirty"], false);
    assert_eq!(
        sent["lines"].as_array().unwrap().len(),
        2,
        "send saved the unsaved line first"
    );
    let before = snapshot(&host);
    let error = tool
        .fails(
            "quotes.addLines",
            json!([[{"description": "late", "qty": 1, "unitPrice": 1, "taxRate": 0.15}]]),
        )
        .await;
    assert_eq!(error["code"], "QUOTE_LOCKED");
    assert_eq!(snapshot(&host), before);
    let save = rejected(host.save(&JsValue::UNDEFINED)).await;
    assert_eq!(save["code"], "QUOTE_LOCKED");
}

#[wasm_bindgen_test]
async fn the_page_edits_and_removes_lines_and_saves_them() {
    let (host, tool, id) = editing(EXTENSION).await;
    let products = tool.ok("products.list", json!([{"pageSize": 500}])).await;
    let oak = products["items"]
        .as_array()
        .unwrap()
        .iter()
        .find(|p| p["sku"] == "OAK-01")
        .unwrap()
        .clone();
    tool.ok(
        "quotes.addLines",
        json!([[{"linkedItemId": oak["id"], "qty": 10, "unitPrice": 89.5, "taxRate": 0.15, "unit": "T_SQUARE_METRE"}]]),
    )
    .await;
    let added = quote_of(&host);
    let lines = added["lines"].as_array().unwrap();
    let oak_no = lines[1]["lineNo"].as_u64().unwrap();
    let task_qty = lines[2]["qty"].as_f64().unwrap();

    let edited = host
        .update_line(
            u32::try_from(oak_no).unwrap(),
            &js(&json!({"qty": 20, "unitPrice": 80})),
        )
        .unwrap();
    let edited = to_json(&edited);
    assert_eq!(edited["lines"][1]["qty"], 20.0);
    assert_eq!(edited["lines"][1]["unitPrice"], 80.0);
    assert!(
        (edited["lines"][2]["qty"].as_f64().unwrap() - task_qty * 2.0).abs() < 1e-9,
        "{edited}"
    );
    assert_eq!(edited["dirty"], true);

    let refused = error_json(
        &host
            .update_line(u32::try_from(oak_no).unwrap(), &js(&json!({"qty": 0})))
            .unwrap_err(),
    );
    assert_eq!(refused["code"], "INVALID_PARAMS");
    assert_eq!(refused["details"][0]["path"], "qty", "{refused}");
    let unknown = error_json(
        &host
            .update_line(999, &js(&json!({"bogus": 1})))
            .unwrap_err(),
    );
    assert_eq!(unknown["code"], "USAGE", "{unknown}");
    assert_eq!(
        to_json(&host.quote().unwrap()),
        edited,
        "a refused edit changes nothing"
    );

    let removed = to_json(&host.remove_line(u32::try_from(oak_no).unwrap()).unwrap());
    assert_eq!(
        removed["lines"].as_array().unwrap().len(),
        1,
        "the product and its tasks went: {removed}"
    );
    let missing = error_json(
        &host
            .remove_line(u32::try_from(oak_no).unwrap())
            .unwrap_err(),
    );
    assert_eq!(missing["code"], "NOT_FOUND");

    let saved = resolved(host.save(&JsValue::UNDEFINED)).await;
    assert_eq!(saved["dirty"], false);
    let (status, stored) = request("GET", &format!("/api/v1/quotes/{id}"), None).await;
    assert_eq!(status, 200);
    assert_eq!(stored["lines"].as_array().unwrap().len(), 1, "{stored}");
}

#[wasm_bindgen_test]
async fn unsaved_changes_are_not_dropped_silently() {
    let (host, tool, _) = editing(EXTENSION).await;
    tool.ok(
        "quotes.addLines",
        json!([[{"description": "unsaved", "qty": 1, "unitPrice": 1, "taxRate": 0.15}]]),
    )
    .await;
    let error = error_json(&host.close_quote(&JsValue::UNDEFINED).err().unwrap());
    assert_eq!(error["code"], "UNSAVED_CHANGES");
    let other = rejected(host.open_quote("another".to_owned(), &JsValue::UNDEFINED)).await;
    assert_eq!(other["code"], "UNSAVED_CHANGES");
    assert_eq!(quote_of(&host)["dirty"], true);
    host.close_quote(&js(&json!({"discard": true}))).unwrap();
    assert_eq!(quote_of(&host), Value::Null);
}

#[wasm_bindgen_test]
async fn every_call_is_recorded_with_tool_method_duration_and_outcome() {
    sign_in(OFFICE).await;
    let host = host();
    let (calls, listener) = recorder();
    let off = host.on_call(listener);
    let tool = mount(&host, "estimator", EXTENSION, &sdk_query(&json!({}))).await;
    tool.ok("context.get", json!([])).await;
    tool.fails(
        "quotes.addLines",
        json!([[{"qty": 1, "unitPrice": 1, "taxRate": 0.15}]]),
    )
    .await;
    let calls_json = to_json(&calls);
    let calls_list = calls_json.as_array().unwrap();
    assert_eq!(calls_list.len(), 2, "{calls_json}");
    assert_eq!(calls_list[0]["tool"], "estimator");
    assert_eq!(calls_list[0]["method"], "context.get");
    assert_eq!(calls_list[0]["outcome"], "ok");
    assert!(calls_list[0]["durationMs"].as_f64().unwrap() >= 0.0);
    assert_eq!(calls_list[1]["method"], "quotes.addLines");
    assert_eq!(calls_list[1]["outcome"], "NO_OPEN_QUOTE");
    off.call0(&JsValue::NULL).unwrap();
    tool.ok("context.get", json!([])).await;
    assert_eq!(calls.length(), 2, "the listener was not removed");
    let log = log_of(&host);
    assert_eq!(log.iter().filter(|e| e["kind"] == "call").count(), 3);
    assert!(host.debug());
    host.set_debug(false);
    assert!(!host.debug());
}

// --- Backend failures (the test server of faults) ----------------------------

async fn failing_tool(path: &str, extra: &Value, query: &Value) -> (toolbridge_host::Host, Tool) {
    let host = host_at(&format!("{}{path}", faults()), extra);
    let tool = mount(&host, "lookup", STANDALONE, &sdk_query(query)).await;
    (host, tool)
}

#[wasm_bindgen_test]
async fn a_rate_limited_backend_is_rate_limited_with_retry_after() {
    let (_host, tool) = failing_tool("/status/429/api/v1", &json!({}), &json!({})).await;
    let error = tool.fails("products.list", json!([])).await;
    assert_eq!(error["code"], "RATE_LIMITED");
    assert_eq!(error["retryAfter"], 7);
}

#[wasm_bindgen_test]
async fn server_errors_and_a_backend_past_its_deadline_are_backend_unavailable() {
    for path in ["/status/500/api/v1", "/status/503/api/v1"] {
        let (_host, tool) = failing_tool(path, &json!({}), &json!({})).await;
        let error = tool.fails("customers.list", json!([])).await;
        assert_eq!(error["code"], "BACKEND_UNAVAILABLE", "{path}: {error}");
    }
    // A dropped or refused connection is OFFLINE instead (tests/connectivity).
    let (_host, tool) = failing_tool(
        "/hang/api/v1",
        &json!({"requestTimeoutMs": 300}),
        &json!({}),
    )
    .await;
    let error = tool.fails("jobs.list", json!([])).await;
    assert_eq!(error["code"], "BACKEND_UNAVAILABLE");
    assert!(
        error["message"]
            .as_str()
            .unwrap()
            .contains("no answer within 300 ms"),
        "{error}"
    );
}

#[wasm_bindgen_test]
async fn an_unauthenticated_backend_is_unauthenticated() {
    let (_host, tool) = failing_tool("/status/401/api/v1", &json!({}), &json!({})).await;
    let error = tool.fails("quotes.list", json!([])).await;
    assert_eq!(error["code"], "UNAUTHENTICATED");
}

#[wasm_bindgen_test]
async fn a_422_from_the_backend_keeps_its_paths() {
    let (_host, tool) = failing_tool("/status/422/api/v1", &json!({}), &json!({})).await;
    let error = tool.fails("quotes.list", json!([])).await;
    assert_eq!(error["code"], "INVALID_PARAMS");
    assert_eq!(
        error["details"],
        json!([{"path": "lines[0].qty", "message": "from the test server"}])
    );
}

#[wasm_bindgen_test]
async fn an_unreadable_answer_is_internal() {
    for path in ["/garbage/api/v1", "/status/418/api/v1"] {
        let (_host, tool) = failing_tool(path, &json!({}), &json!({})).await;
        let error = tool.fails("products.list", json!([])).await;
        assert_eq!(error["code"], "INTERNAL", "{path}: {error}");
    }
}

#[wasm_bindgen_test]
async fn a_backend_that_never_answers_times_out_in_the_sdk() {
    let (_host, tool) =
        failing_tool("/hang/api/v1", &json!({}), &json!({"callTimeoutMs": 500})).await;
    let error = tool.fails("customers.list", json!([])).await;
    assert_eq!(error["code"], "TIMEOUT");
}
