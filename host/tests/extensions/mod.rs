//! The extensions beyond bridge 2.1.0, host side: what the welcome offers,
//! `quotes.getOpen`, `quote.changed` and `session.ended`, the `ui.*` hooks
//! and auto-resize.

use serde_json::{Value, json};
use wasm_bindgen::JsValue;
use wasm_bindgen_test::wasm_bindgen_test;

use super::{EXTENSION, STANDALONE, dropped_reasons, editing, sleep};
use crate::fixture::*;

/// A tool's frame height as the host set it, in pixels.
fn frame_height(tool: &Tool) -> Option<u32> {
    let height = tool.frame.style().get_property_value("height").ok()?;
    height.strip_suffix("px")?.parse().ok()
}

/// Waits until the frame's height differs from `before` (the height before the tool's layout
/// changed; for at most 5 s, then fails), then until it has not changed for `quiet_ms`; returns
/// it. Waiting for quiet alone would take a frame that was never sized for one that settled.
async fn changed_height(tool: &Tool, before: Option<u32>, quiet_ms: i32) -> Option<u32> {
    for _ in 0..100 {
        if frame_height(tool) != before {
            return settled_height(tool, quiet_ms).await;
        }
        sleep(50).await;
    }
    panic!("the frame's height stayed {before:?} for 5 s after the tool's page changed its height");
}

/// Waits until the frame's height has not changed for `quiet_ms`; returns it.
async fn settled_height(tool: &Tool, quiet_ms: i32) -> Option<u32> {
    let mut last = frame_height(tool);
    let mut quiet = 0;
    for _ in 0..100 {
        sleep(50).await;
        let now = frame_height(tool);
        if now == last {
            quiet += 50;
            if quiet >= quiet_ms {
                return now;
            }
        } else {
            quiet = 0;
            last = now;
        }
    }
    panic!("the frame's height never settled: last {last:?}");
}

/// The notifications of `event` the tool heard, waiting until there are
/// `count` of them.
async fn heard(tool: &Tool, event: &str, count: usize) -> Vec<Value> {
    for _ in 0..100 {
        let heard = tool
            .command(json!({"command": "heard", "event": event}))
            .await;
        let list = heard["result"].as_array().cloned().unwrap_or_default();
        if list.len() >= count {
            return list;
        }
        sleep(50).await;
    }
    let heard = tool
        .command(json!({"command": "heard", "event": event}))
        .await;
    panic!(
        "{event}: expected {count} notifications, heard {}",
        heard["result"]
    );
}

/// The test tool mounted as a standalone tool that sizes its frame within
/// `min` and `max`, connected.
async fn auto_sized(host: &toolbridge_host::Host, min: u32, max: u32) -> Tool {
    let bounds = json!({"autoResize": {"min": min, "max": max}});
    let tool = mount_with(host, "lookup", STANDALONE, &sdk_query(&json!({})), &bounds).await;
    tool.ok("context.get", json!([])).await;
    tool
}

async fn subscribe(tool: &Tool, event: &str) {
    let answer = tool
        .command(json!({"command": "subscribe", "event": event}))
        .await;
    assert_eq!(answer["ok"], true, "{answer}");
}

// --- What the welcome offers ------------------------------------------------

#[wasm_bindgen_test]
async fn the_welcome_offers_what_the_type_the_mount_and_the_hooks_allow() {
    sign_in(OFFICE).await;
    let host = host();
    let (_, toast_hook) = recorder();
    let _ = host.on_toast(toast_hook);
    let extension = mount_with(
        &host,
        "estimator",
        EXTENSION,
        &sdk_query(&json!({})),
        &json!({"autoResize": {"min": 120, "max": 900}}),
    )
    .await;
    let standalone = mount(&host, "lookup", STANDALONE, &sdk_query(&json!({}))).await;
    let info = extension.command(json!({"command": "ready"})).await;
    assert_eq!(
        info["result"]["capabilities"],
        json!([
            "quotes.getOpen",
            "quote.changed",
            "session.ended",
            "ui.autoResize",
            "ui.toast",
            "connectivity"
        ])
    );
    assert_eq!(info["result"]["methods"].as_array().unwrap().len(), 9);
    let names = json!([
        "quotes.getOpen",
        "quote.changed",
        "ui.toast",
        "ui.confirm",
        "ui.openQuote",
        "session.ended",
        "quotes.list"
    ]);
    let supports = standalone
        .command(json!({"command": "supports", "names": names}))
        .await;
    assert_eq!(
        supports["result"],
        json!({"quotes.getOpen": false, "quote.changed": false, "ui.toast": true,
               "ui.confirm": false, "ui.openQuote": false, "session.ended": true, "quotes.list": true})
    );
    let tools = to_json(&host.tools().unwrap());
    assert_eq!(
        tools[1]["capabilities"],
        json!(["session.ended", "ui.toast", "connectivity"])
    );
}

// --- quotes.getOpen ------------------------------------------------------

#[wasm_bindgen_test]
async fn get_open_answers_the_open_quote_with_unsaved_lines() {
    let (host, tool, id) = editing(EXTENSION).await;
    tool.ok(
        "quotes.addLines",
        json!([[{"description": "Skirting", "qty": 3, "unitPrice": 12.5, "costPrice": 7,
                 "taxRate": 15, "section": "Hall"}]]),
    )
    .await;
    let open = tool.ok("quotes.getOpen", json!([])).await;
    assert_eq!(open["id"], id);
    assert_eq!(open["ref"], quote_of(&host)["ref"]);
    assert_eq!(open["status"], "Draft");
    assert_eq!(open["customerName"], "Host Test Customer");
    assert_eq!(open["dirty"], true);
    let lines = open["lines"].as_array().unwrap();
    assert_eq!(lines.len(), 2, "{open}");
    let added = &lines[1];
    assert_eq!(added["description"], "Skirting");
    assert_eq!(added["section"], "Hall");
    assert_eq!(added["taxRate"], 0.15);
    assert_eq!(added["nett"], 37.5);
    assert_eq!(added["costPrice"], 7.0);
    assert_eq!(open["totals"]["total"], quote_of(&host)["totals"]["total"]);
    assert!(open["totals"]["margin"].is_number());
}

#[wasm_bindgen_test]
async fn get_open_is_refused_to_a_standalone_tool_and_without_a_quote() {
    let (_host, tool, _) = editing(STANDALONE).await;
    let error = tool.fails("quotes.getOpen", json!([])).await;
    assert_eq!(error["code"], "NOT_ALLOWED");
    assert!(
        error["message"]
            .as_str()
            .unwrap()
            .contains("quoting_extension"),
        "{error}"
    );
    let host = host();
    let extension = mount(&host, "estimator", EXTENSION, &sdk_query(&json!({}))).await;
    let error = extension.fails("quotes.getOpen", json!([])).await;
    assert_eq!(error["code"], "NO_OPEN_QUOTE");
}

#[wasm_bindgen_test]
async fn get_open_shows_a_field_user_no_cost() {
    sign_in(OFFICE).await;
    let id = draft_quote().await;
    sign_in(FIELD).await;
    let host = host();
    resolved(host.open_quote(id, &JsValue::UNDEFINED)).await;
    let tool = mount(&host, "estimator", EXTENSION, &sdk_query(&json!({}))).await;
    let open = tool.ok("quotes.getOpen", json!([])).await;
    let text = open.to_string();
    for field in ["costPrice", "\"cost\"", "margin"] {
        assert!(
            !text.contains(field),
            "{field} shown to a Field user: {text}"
        );
    }
    assert_eq!(open["lines"][0]["unitPrice"], 10.0);
}

// --- quote.changed and session.ended --------------------------------------------

#[wasm_bindgen_test]
async fn quote_changed_follows_every_change_in_order_whoever_made_it() {
    let (host, tool, _) = editing(EXTENSION).await;
    let other = mount(&host, "other", EXTENSION, &sdk_query(&json!({}))).await;
    subscribe(&tool, "quote.changed").await;
    let done = other
        .command(json!({"command": "rapidAddLines", "count": 100}))
        .await;
    assert_eq!(done["result"], 100, "{done}");
    let events = heard(&tool, "quote.changed", 100).await;
    let counts: Vec<usize> = events
        .iter()
        .map(|event| {
            assert_eq!(event["kind"], "linesAdded", "{event}");
            event["quote"]["lines"].as_array().unwrap().len()
        })
        .collect();
    assert_eq!(
        counts,
        (2..=101).collect::<Vec<_>>(),
        "one line more each time"
    );

    // The user's own edits, a save, a send and a close, in that order.
    let line_no =
        u32::try_from(events[99]["quote"]["lines"][1]["lineNo"].as_u64().unwrap()).unwrap();
    host.update_line(line_no, &js(&json!({"qty": 4}))).unwrap();
    host.remove_line(line_no).unwrap();
    resolved(host.save(&JsValue::UNDEFINED)).await;
    resolved(host.send()).await;
    host.close_quote(&JsValue::UNDEFINED).unwrap();
    let events = heard(&tool, "quote.changed", 105).await;
    let kinds: Vec<&str> = events[100..]
        .iter()
        .map(|e| e["kind"].as_str().unwrap())
        .collect();
    assert_eq!(kinds, ["edited", "removed", "saved", "sent", "closed"]);
    assert_eq!(events[100]["quote"]["dirty"], true);
    assert_eq!(events[103]["quote"]["status"], "Sent");
    assert_eq!(events[104]["quote"], Value::Null);

    // Unsubscribed, it hears nothing more.
    tool.command(json!({"command": "unsubscribe", "event": "quote.changed"}))
        .await;
    resolved(host.open_quote(draft_quote().await, &JsValue::UNDEFINED)).await;
    sleep(200).await;
    let after = tool
        .command(json!({"command": "heard", "event": "quote.changed"}))
        .await;
    assert_eq!(after["result"].as_array().unwrap().len(), 105);
}

#[wasm_bindgen_test]
async fn session_ended_reaches_every_tool_once() {
    sign_in(OFFICE).await;
    let host = host();
    let first = mount(&host, "lookup", STANDALONE, &sdk_query(&json!({}))).await;
    let second = mount(&host, "estimator", EXTENSION, &sdk_query(&json!({}))).await;
    for tool in [&first, &second] {
        subscribe(tool, "session.ended").await;
        tool.ok("context.get", json!([])).await;
    }
    host.end_session(None).unwrap();
    host.end_session(Some("expired".to_owned())).unwrap(); // told once
    let error = error_json(&host.end_session(Some("bored".to_owned())).unwrap_err());
    assert_eq!(error["code"], "USAGE");
    for tool in [&first, &second] {
        let events = heard(tool, "session.ended", 1).await;
        assert_eq!(events, [json!({"reason": "signedOut"})]);
    }

    // The next user's session expires on the server: tools hear `expired`.
    sign_in(OFFICE).await;
    host.forget_session();
    first.ok("context.get", json!([])).await;
    subscribe(&first, "session.ended").await;
    sign_out().await;
    let error = first.fails("products.list", json!([])).await;
    assert_eq!(error["code"], "UNAUTHENTICATED");
    let _ = first.fails("customers.list", json!([])).await;
    sleep(100).await;
    let events = heard(&first, "session.ended", 1).await;
    assert_eq!(events, [json!({"reason": "expired"})]);
}

// --- ui.toast --------------------------------------------------------------

#[wasm_bindgen_test]
async fn a_toast_reaches_the_page_hook_with_the_tool_name_within_the_limit() {
    sign_in(OFFICE).await;
    let host = host();
    let (toasts, hook) = recorder();
    let _ = host.on_toast(hook);
    let tool = mount_with(
        &host,
        "lookup",
        STANDALONE,
        &sdk_query(&json!({})),
        &json!({"title": "Job lookup"}),
    )
    .await;
    for i in 0..5 {
        let answer = tool
            .ok(
                "ui.toast",
                json!([{"kind": "error", "message": format!("<b>Search {i} failed</b>")}]),
            )
            .await;
        assert_eq!(answer, Value::Null);
    }
    assert_eq!(
        to_json(&toasts.get(0)),
        json!({"tool": "lookup", "toolName": "Job lookup", "kind": "error", "message": "<b>Search 0 failed</b>"})
    );
    let error = tool
        .fails("ui.toast", json!([{"kind": "success", "message": "sixth"}]))
        .await;
    assert_eq!(error["code"], "RATE_LIMITED");
    let wait = error["retryAfter"].as_f64().unwrap();
    assert!((1.0..=10.0).contains(&wait), "{error}");
    assert_eq!(toasts.length(), 5, "the refused toast was not shown");

    let error = tool
        .fails(
            "ui.toast",
            json!([{"kind": "info", "message": "x".repeat(301)}]),
        )
        .await;
    assert_eq!(error["code"], "INVALID_PARAMS");
    let paths = detail_paths(&error);
    assert_eq!(paths, ["kind", "message"]);
}

#[wasm_bindgen_test]
async fn ui_calls_without_the_page_hook_are_not_allowed_and_say_which_hook() {
    let (_host, tool, id) = editing(STANDALONE).await;
    for (method, args, hook) in [
        (
            "ui.toast",
            json!([{"kind": "success", "message": "hi"}]),
            "host.onToast",
        ),
        (
            "ui.confirm",
            json!([{"title": "t", "message": "m"}]),
            "host.onConfirm",
        ),
        ("ui.openQuote", json!([id]), "host.onNavigate"),
    ] {
        let error = tool.fails(method, args).await;
        assert_eq!(error["code"], "NOT_ALLOWED", "{method}");
        assert!(error["message"].as_str().unwrap().contains(hook), "{error}");
    }
}

// --- ui.confirm ------------------------------------------------------------

#[wasm_bindgen_test]
async fn confirm_answers_what_the_page_answers_one_dialog_at_a_time() {
    sign_in(OFFICE).await;
    let host = host();
    let (asked, hook) = answering(|request| {
        let title = js_sys::Reflect::get(request, &"title".into()).unwrap();
        JsValue::from_bool(title.as_string().as_deref() == Some("Yes please"))
    });
    let _ = host.on_confirm(hook);
    let tool = mount(&host, "lookup", STANDALONE, &sdk_query(&json!({}))).await;
    let yes = tool
        .ok(
            "ui.confirm",
            json!([{"title": "Yes please", "message": "Go?"}]),
        )
        .await;
    assert_eq!(yes, true);
    let no = tool
        .ok("ui.confirm", json!([{"title": "No thanks", "message": "Go?", "confirmLabel": "Go", "cancelLabel": "Stay"}]))
        .await;
    assert_eq!(no, false);
    let request = to_json(&asked.get(1));
    assert_eq!(request["toolName"], "lookup");
    assert_eq!(request["confirmLabel"], "Go");
    assert_eq!(request["cancelLabel"], "Stay");
    let error = tool
        .fails("ui.confirm", json!([{"title": "", "message": 3}]))
        .await;
    assert_eq!(error["code"], "INVALID_PARAMS");

    // A second question while the first is open is refused.
    let _ = host.on_confirm(answering(|_| never()).1);
    tool.command(json!({"command": "startConfirm", "request": {"title": "First", "message": "?"}}))
        .await;
    sleep(100).await;
    let error = tool
        .fails("ui.confirm", json!([{"title": "Second", "message": "?"}]))
        .await;
    assert_eq!(error["code"], "NOT_ALLOWED");
    assert!(
        error["message"]
            .as_str()
            .unwrap()
            .contains("already has a dialog open"),
        "{error}"
    );
}

#[wasm_bindgen_test]
async fn confirm_is_given_up_with_false_when_its_quote_closes_or_its_tool_goes() {
    let (host, tool, _) = editing(EXTENSION).await;
    let (asked, hook) = answering(|_| never());
    let _ = host.on_confirm(hook);
    tool.command(json!({"command": "startConfirm", "request": {"title": "Add the room again?", "message": "Lounge is on the quote."}}))
        .await;
    sleep(200).await;
    let signal = |i: u32| js_sys::Reflect::get(&asked.get(i), &"signal".into()).unwrap();
    let aborted = |i: u32| js_sys::Reflect::get(&signal(i), &"aborted".into()).unwrap();
    assert_eq!(aborted(0), JsValue::FALSE);
    // The user leaves the quote: the question is moot, the tool hears false.
    host.close_quote(&js(&json!({"discard": true}))).unwrap();
    assert_eq!(aborted(0), JsValue::TRUE);
    sleep(200).await;
    let result = tool.command(json!({"command": "confirmResult"})).await;
    assert_eq!(result["result"], json!({"ok": true, "result": false}));

    // Unmounted while asking: the page is told to close its dialog.
    tool.command(
        json!({"command": "startConfirm", "request": {"title": "Again?", "message": "?"}}),
    )
    .await;
    sleep(200).await;
    assert_eq!(asked.length(), 2);
    assert_eq!(aborted(1), JsValue::FALSE);
    tool.remove();
    assert_eq!(aborted(1), JsValue::TRUE);
}

// --- ui.openQuote ----------------------------------------------------------

#[wasm_bindgen_test]
async fn open_quote_goes_through_the_page_hook_for_the_users_own_quotes_only() {
    sign_in(OTHER_TENANT).await;
    let foreign = draft_quote().await;
    let (host, tool, id) = editing(STANDALONE).await;
    let (asked, hook) = answering(|_| js_sys::Promise::resolve(&JsValue::TRUE).into());
    let _ = host.on_navigate(hook);
    let went = tool.ok("ui.openQuote", json!([id])).await;
    assert_eq!(went, true);
    assert_eq!(
        to_json(&asked.get(0)),
        json!({"tool": "estimator", "toolName": "estimator", "quoteId": id, "url": format!("/quotes/{id}"), "unsaved": false})
    );
    for unknown in [foreign.as_str(), "no-such-quote"] {
        let error = tool.fails("ui.openQuote", json!([unknown])).await;
        assert_eq!(error["code"], "NOT_FOUND", "{unknown}: {error}");
        assert!(
            !error["message"].as_str().unwrap().contains("Other"),
            "{error}"
        );
    }
    assert_eq!(asked.length(), 1, "the page was never asked for those");
    let error = tool.fails("ui.openQuote", json!([""])).await;
    assert_eq!(error["code"], "INVALID_PARAMS");
}

// --- Auto-resize -------------------------------------------------------------

#[wasm_bindgen_test]
async fn auto_resize_sizes_the_frame_within_the_bounds() {
    sign_in(OFFICE).await;
    let host = host();
    let tool = auto_sized(&host, 120, 400).await;
    for (content, expected) in [(300, 316), (1000, 400), (10, 120), (250, 266)] {
        let before = frame_height(&tool);
        tool.command(json!({"command": "layout", "height": content}))
            .await;
        let height = changed_height(&tool, before, 300).await;
        // The block plus the body's default margins of 8 px.
        assert_eq!(height, Some(expected), "content {content} px");
    }
    tool.command(json!({"command": "setAutoResize", "enabled": false}))
        .await;
    tool.command(json!({"command": "layout", "height": 350}))
        .await;
    assert_eq!(settled_height(&tool, 300).await, Some(266), "turned off");
}

#[wasm_bindgen_test]
async fn a_full_viewport_page_settles_to_one_height() {
    sign_in(OFFICE).await;
    let host = host();
    let tool = auto_sized(&host, 120, 900).await;
    let before = frame_height(&tool);
    tool.command(json!({"command": "layout", "fullViewport": true}))
        .await;
    let height = changed_height(&tool, before, 600).await.unwrap();
    // It grew past `min` (the page is its viewport plus the body's margins)...
    assert!(height > 120, "the frame was never sized: {height}");
    // ...and stopped there instead of chasing its own height to `max`.
    assert!(height < 900, "the frame grew to its maximum: {height}");
    sleep(500).await;
    assert_eq!(frame_height(&tool), Some(height), "still growing");
}

#[wasm_bindgen_test]
async fn a_resize_report_without_auto_resize_or_malformed_is_dropped() {
    sign_in(OFFICE).await;
    let host = host();
    let tool = mount(&host, "raw", STANDALONE, &json!({"sdk": "none"})).await;
    tool.command(json!({"command": "hello", "message": {"toolbridge": "hello", "protocol": 1, "sdkVersion": "2.1.0", "instance": "raw-1"}}))
        .await;
    for params in [json!({"height": 500}), json!({"height": "tall"})] {
        let reply = tool
            .command(json!({"command": "portCall", "message": {"jsonrpc": "2.0", "method": "ui.resize", "params": params}, "waitMs": 200}))
            .await;
        assert_eq!(
            reply["result"],
            Value::Null,
            "a notification is never answered"
        );
    }
    let reasons = dropped_reasons(&host);
    assert!(
        reasons.iter().any(|r| r.contains("without autoResize")),
        "{reasons:?}"
    );
    assert!(
        reasons
            .iter()
            .any(|r| r.contains("malformed ui.resize") && r.contains("params.height")),
        "{reasons:?}"
    );
    assert_eq!(frame_height(&tool), None);
}

#[wasm_bindgen_test]
async fn mount_refuses_bad_auto_resize_bounds() {
    let host = host();
    let container = web_sys::window()
        .unwrap()
        .document()
        .unwrap()
        .body()
        .unwrap();
    for bounds in [
        json!({"min": 500, "max": 100}),
        json!({"min": -1, "max": 10}),
        json!({"min": 0}),
        json!({"min": 0, "max": 10, "step": 1}),
        json!(true),
    ] {
        let options = json!({"slug": "x", "origin": "http://localhost:1", "type": STANDALONE, "autoResize": bounds});
        let error = error_json(&host.mount(&container, &js(&options)).err().unwrap());
        assert_eq!(error["code"], "USAGE", "{bounds}");
        let message = error["message"].as_str().unwrap();
        assert!(message.starts_with("mount: autoResize"), "{error}");
    }
}

// --- Install settings: settings.get and settings.changed -------------------------

/// The settings the tests mount tools with.
fn install_settings() -> Value {
    json!({"wastePercent": 12, "region": "North", "showCost": false})
}

#[wasm_bindgen_test]
async fn settings_get_answers_the_mount_s_settings_and_is_offered_only_with_them() {
    sign_in(OFFICE).await;
    let host = host();
    let with = mount_with(
        &host,
        "estimator",
        STANDALONE,
        &sdk_query(&json!({})),
        &json!({"settings": install_settings()}),
    )
    .await;
    let extension = mount_with(
        &host,
        "other",
        EXTENSION,
        &sdk_query(&json!({})),
        &json!({"settings": {}}),
    )
    .await;
    let without = mount(&host, "lookup", STANDALONE, &sdk_query(&json!({}))).await;

    assert_eq!(with.ok("settings.get", json!([])).await, install_settings());
    // Empty settings are settings: the tool is offered them, and reads `{}`.
    assert_eq!(extension.ok("settings.get", json!([])).await, json!({}));
    let names = json!(["settings.get", "settings.changed"]);
    for (tool, offered) in [(&with, true), (&extension, true), (&without, false)] {
        let supports = tool
            .command(json!({"command": "supports", "names": names}))
            .await;
        assert_eq!(
            supports["result"],
            json!({"settings.get": offered, "settings.changed": offered})
        );
    }
    let info = with.command(json!({"command": "ready"})).await;
    assert_eq!(
        info["result"]["capabilities"],
        json!([
            "session.ended",
            "settings.get",
            "settings.changed",
            "connectivity"
        ])
    );
    // Never among the 2.1.0 methods.
    assert_eq!(info["result"]["methods"].as_array().unwrap().len(), 8);

    let error = without.fails("settings.get", json!([])).await;
    assert_eq!(error["code"], "NOT_ALLOWED");
    assert!(
        error["message"]
            .as_str()
            .unwrap()
            .contains("mounted lookup without settings"),
        "{error}"
    );
    let tools = to_json(&host.tools().unwrap());
    assert_eq!(
        tools[2]["capabilities"],
        json!(["session.ended", "connectivity"]),
        "{tools}"
    );
}

#[wasm_bindgen_test]
async fn set_tool_settings_reaches_every_connected_mount_of_the_tool_in_order() {
    sign_in(OFFICE).await;
    let host = host();
    let settings = json!({"settings": install_settings()});
    let query = sdk_query(&json!({}));
    let first = mount_with(&host, "estimator", STANDALONE, &query, &settings).await;
    let second = mount_with(&host, "estimator", EXTENSION, &query, &settings).await;
    let other_tool = mount_with(&host, "lookup", STANDALONE, &query, &settings).await;
    let no_settings = mount(&host, "estimator", STANDALONE, &query).await;
    for tool in [&first, &second, &other_tool, &no_settings] {
        subscribe(tool, "settings.changed").await;
    }
    for waste in 1..=3 {
        host.set_tool_settings(
            "estimator",
            &js(&json!({"wastePercent": waste, "region": "South"})),
        )
        .unwrap();
    }
    let expected: Vec<Value> = (1..=3)
        .map(|waste| json!({"settings": {"wastePercent": waste, "region": "South"}}))
        .collect();
    for tool in [&first, &second] {
        assert_eq!(heard(tool, "settings.changed", 3).await, expected);
        // A key left out is gone: the settings are replaced whole.
        assert_eq!(
            tool.ok("settings.get", json!([])).await,
            json!({"wastePercent": 3, "region": "South"})
        );
    }
    // A reply travels behind any notification posted before it, so after a
    // call the others would have heard one if it had been sent.
    assert_eq!(
        other_tool.ok("settings.get", json!([])).await,
        install_settings()
    );
    assert_eq!(
        no_settings.fails("settings.get", json!([])).await["code"],
        "NOT_ALLOWED"
    );
    for tool in [&other_tool, &no_settings] {
        let heard = tool
            .command(json!({"command": "heard", "event": "settings.changed"}))
            .await;
        assert_eq!(heard["result"], json!([]));
    }
    // A tool with no frame mounted is no mistake.
    host.set_tool_settings("not-mounted", &js(&json!({})))
        .unwrap();
}

#[wasm_bindgen_test]
async fn settings_that_are_not_strings_numbers_or_booleans_throw_usage_naming_the_key() {
    sign_in(OFFICE).await;
    let host = host();
    let container: web_sys::Element = web_sys::window()
        .unwrap()
        .document()
        .unwrap()
        .body()
        .unwrap()
        .into();
    let with_value = |key: &str, value: &JsValue| {
        let settings = js(&json!({"region": "North"}));
        js_sys::Reflect::set(&settings, &JsValue::from_str(key), value).unwrap();
        settings
    };
    let (_, function) = recorder();
    let cases = [
        (
            with_value("wastePercent", &js(&json!([12]))),
            "settings.wastePercent",
            "an array",
        ),
        (
            with_value("supplier", &js(&json!({"name": "A"}))),
            "settings.supplier",
            "an object",
        ),
        (
            with_value("showCost", &JsValue::NULL),
            "settings.showCost",
            "null",
        ),
        (
            with_value("markup", &JsValue::from_f64(f64::NAN)),
            "settings.markup",
            "not finite",
        ),
        (with_value("hook", &function), "settings.hook", "a function"),
        (
            js(&json!("wastePercent=12")),
            "settings must be an object",
            "a string",
        ),
        (js(&json!([1])), "settings must be an object", "an array"),
    ];
    for (settings, named, got) in &cases {
        let options =
            js(&json!({"slug": "estimator", "origin": tool_origin(), "type": STANDALONE}));
        js_sys::Reflect::set(&options, &JsValue::from_str("settings"), settings).unwrap();
        let error = error_json(&host.mount(&container, &options).err().unwrap());
        assert_eq!(error["code"], "USAGE", "{error}");
        let message = error["message"].as_str().unwrap();
        assert!(message.starts_with("mount: "), "{message}");
        assert!(
            message.contains(named) && message.contains(got),
            "{message}"
        );
        let error = error_json(&host.set_tool_settings("estimator", settings).unwrap_err());
        assert_eq!(error["code"], "USAGE", "{error}");
        let message = error["message"].as_str().unwrap();
        assert!(message.starts_with("setToolSettings: "), "{message}");
        assert!(
            message.contains(named) && message.contains(got),
            "{message}"
        );
    }
    assert_eq!(to_json(&host.tools().unwrap()), json!([]));

    // Every problem at once; and a refused change changes nothing.
    let tool = mount_with(
        &host,
        "estimator",
        STANDALONE,
        &sdk_query(&json!({})),
        &json!({"settings": install_settings()}),
    )
    .await;
    let error = error_json(
        &host
            .set_tool_settings("estimator", &js(&json!({"a": [1], "b": 2, "c": {}})))
            .unwrap_err(),
    );
    let message = error["message"].as_str().unwrap();
    assert!(
        message.contains("settings.a ")
            && message.contains("settings.c ")
            && !message.contains("settings.b "),
        "{message}"
    );
    assert_eq!(tool.ok("settings.get", json!([])).await, install_settings());
    let error = error_json(
        &host
            .set_tool_settings("Estimator Tool", &js(&json!({})))
            .unwrap_err(),
    );
    assert_eq!(error["code"], "USAGE");
    assert!(
        error["message"].as_str().unwrap().contains("slug"),
        "{error}"
    );
}
