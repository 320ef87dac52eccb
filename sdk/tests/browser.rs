//! `bridge.js` in real browsers (headless Chromium and Firefox, and WebKitGTK's
//! MiniBrowser on a virtual display).
//!
//! A host stand-in (`tests/support/stand_in.js`) mounts a tool page that
//! loads the real built `dist/bridge.js` in a same-origin frame, a
//! cross-origin frame (`localhost` against the test page's `127.0.0.1`), and
//! a `sandbox="allow-scripts"` frame with an opaque origin; the tool page
//! runs a scenario and reports back. Build `dist/bridge.js` first with
//! `cargo xtask build` (`cargo xtask test` does).

#![cfg(target_arch = "wasm32")]
// Test code: a panic is how a helper reports a failed expectation.
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

use serde_json::{Value, json};
use wasm_bindgen::prelude::*;
use wasm_bindgen_futures::JsFuture;
use wasm_bindgen_test::{wasm_bindgen_test, wasm_bindgen_test_configure};

wasm_bindgen_test_configure!(run_in_browser);

#[wasm_bindgen(module = "/tests/support/stand_in.js")]
extern "C" {
    #[wasm_bindgen(js_name = runScenario)]
    fn run_scenario(kind: &str, scenario: &str, options: &JsValue) -> js_sys::Promise;

    #[wasm_bindgen(js_name = runUnframed)]
    fn run_unframed() -> js_sys::Promise;
}

/// The three kinds of frame a tool may be mounted in.
#[derive(Clone, Copy, Debug)]
enum Frame {
    SameOrigin,
    CrossOrigin,
    Sandboxed,
}

impl Frame {
    fn name(self) -> &'static str {
        match self {
            Frame::SameOrigin => "same-origin",
            Frame::CrossOrigin => "cross-origin",
            Frame::Sandboxed => "sandboxed",
        }
    }

    /// Whether the page in this frame is told nothing of the errors its
    /// own scripts throw: WebKit mutes the errors of every script whose
    /// origin is not the page's, and a page of an opaque origin (the
    /// sandbox without `allow-same-origin`) has no script of its own origin,
    /// inline ones included. Its `error` events say "Script error." and carry
    /// no error, so bridge.js cannot tell a thrown `SecurityError` there from
    /// any other error; a rejected promise's reason is not muted. (The host
    /// module's frames keep their own origin.)
    fn hides_its_own_errors(self) -> bool {
        matches!(self, Frame::Sandboxed) && in_webkit()
    }
}

/// Whether the tests run in WebKit (its user agent names `AppleWebKit`, as
/// Chromium's does, but no Chrome).
fn in_webkit() -> bool {
    let navigator = js_sys::Reflect::get(&js_sys::global(), &"navigator".into()).unwrap();
    let agent = js_sys::Reflect::get(&navigator, &"userAgent".into()).unwrap();
    let agent = agent.as_string().unwrap();
    agent.contains("AppleWebKit") && !agent.contains("Chrome")
}

fn to_json(value: &JsValue) -> Value {
    let text = js_sys::JSON::stringify(value).unwrap().as_string().unwrap();
    serde_json::from_str(&text).unwrap()
}

async fn settle(promise: js_sys::Promise) -> Value {
    let report = JsFuture::from(promise)
        .await
        .unwrap_or_else(|error| panic!("the stand-in failed: {error:?}"));
    let report = to_json(&report);
    assert!(
        report.get("crashed").is_none(),
        "the tool page crashed: {}",
        report["crashed"]
    );
    report
}

/// Runs `scenario` in a tool page mounted in a frame of `kind`.
async fn scenario(kind: Frame, scenario_name: &str, options: &Value) -> Value {
    let options = js_sys::JSON::parse(&options.to_string()).unwrap();
    settle(run_scenario(kind.name(), scenario_name, &options)).await
}

async fn call_made_before_the_handshake_resolves(kind: Frame) {
    let report = scenario(kind, "early", &json!({})).await;
    assert_eq!(report["shape"]["version"], "2.1.0");
    assert_eq!(report["shape"]["methods"], json!(vec!["function"; 9]));
    assert_eq!(report["shape"]["returnsPromise"], true);
    assert_eq!(report["shape"]["frozen"], true);
    assert_eq!(report["shape"]["supportsBeforeHandshake"], false);
    assert_eq!(report["userName"], "Test User");
    assert_eq!(report["toolType"], "quoting_extension");
    assert_eq!(report["methods"], 9);
    assert_eq!(report["supportsAfter"], true);
    // The stand-in sent junk on the port and the window first: ignored, nothing thrown.
    assert_eq!(report["uncaught"], 0);
}

async fn a_thousand_concurrent_calls_each_get_their_own_reply(kind: Frame) {
    let report = scenario(kind, "concurrent", &json!({"expect": 1000})).await;
    assert_eq!(report["count"], 1000);
    assert_eq!(report["mismatches"], 0);
}

async fn error_replies_reject_with_a_bridge_error(kind: Frame) {
    let report = scenario(kind, "errors", &json!({})).await;
    let invalid = &report["invalid"];
    assert_eq!(invalid["isBridgeError"], true);
    assert_eq!(invalid["isError"], true);
    assert_eq!(invalid["name"], "BridgeError");
    assert_eq!(invalid["code"], "INVALID_PARAMS");
    assert_eq!(
        invalid["message"],
        "lines[0].qty: must be greater than 0 (got 0)"
    );
    assert_eq!(
        invalid["details"],
        json!([{"path": "lines[0].qty", "message": "must be greater than 0 (got 0)"}])
    );
    assert_eq!(invalid["retryAfter"], "undefined");
    assert_eq!(report["limited"]["code"], "RATE_LIMITED");
    assert_eq!(report["limited"]["retryAfter"], 7);
    assert_eq!(report["limited"]["details"], json!([]));
    // Only the JSON-RPC number: the SDK still names the code.
    assert_eq!(report["numberOnly"]["code"], "METHOD_NOT_FOUND");
}

async fn forged_welcomes_from_a_sibling_or_the_page_itself_are_ignored(kind: Frame) {
    let report = scenario(
        kind,
        "forged",
        &json!({"sibling": true, "welcomeDelayMs": 300}),
    )
    .await;
    assert_eq!(report["userName"], "Test User");
    // Each forged welcome is reported to the real host once it is connected:
    // the one the page posted to itself, and the sibling's.
    let forged: Vec<&Value> = report["blocked"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|blocked| blocked["kind"] == "forgedWelcome")
        .collect();
    assert!(forged.len() >= 2, "{}", report["blocked"]);
    assert!(
        forged
            .iter()
            .all(|blocked| blocked["detail"].as_str().unwrap().starts_with("from "))
    );
}

async fn what_the_frame_refuses_is_reported_to_the_host(kind: Frame) {
    let report = scenario(kind, "refused", &json!({})).await;
    // The dialogs answer at once, as the sandbox's own do.
    assert_eq!(
        report["answers"],
        json!({"alert": "undefined", "confirm": false, "prompt": null})
    );
    let blocked = report["blocked"].as_array().unwrap();
    let details = |kind: &str| -> Vec<String> {
        blocked
            .iter()
            .filter(|b| b["kind"] == kind)
            .map(|b| b["detail"].as_str().unwrap().to_owned())
            .collect()
    };
    assert_eq!(
        details("modal"),
        ["alert(): saved", "confirm(): delete?", "prompt(): name?"],
        "{blocked:?}"
    );
    let mut security = details("securityError");
    security.sort();
    if kind.hides_its_own_errors() {
        // What the page itself heard of the error it threw: only that there was one.
        assert_eq!(report["errorEvents"], json!(["Script error."]));
        assert_eq!(
            security,
            ["navigating the app's window was refused"],
            "{blocked:?}"
        );
    } else {
        assert_eq!(report["errorEvents"], json!(["SecurityError"]));
        assert_eq!(
            security,
            [
                "navigating the app's window was refused",
                "reading the app's window was refused"
            ],
            "{blocked:?}"
        );
    }
    let requests = details("appRequest");
    assert_eq!(requests.len(), 1, "{blocked:?}");
    assert!(
        requests[0].starts_with("fetch http") && requests[0].ends_with("/tests/pages/sibling.html"),
        "{requests:?}"
    );
}

#[wasm_bindgen_test]
async fn same_origin_frame_call_made_before_the_handshake_resolves() {
    call_made_before_the_handshake_resolves(Frame::SameOrigin).await;
}

#[wasm_bindgen_test]
async fn cross_origin_frame_call_made_before_the_handshake_resolves() {
    call_made_before_the_handshake_resolves(Frame::CrossOrigin).await;
}

#[wasm_bindgen_test]
async fn sandboxed_opaque_frame_call_made_before_the_handshake_resolves() {
    call_made_before_the_handshake_resolves(Frame::Sandboxed).await;
}

#[wasm_bindgen_test]
async fn same_origin_frame_1000_concurrent_calls_each_get_their_own_reply() {
    a_thousand_concurrent_calls_each_get_their_own_reply(Frame::SameOrigin).await;
}

#[wasm_bindgen_test]
async fn cross_origin_frame_1000_concurrent_calls_each_get_their_own_reply() {
    a_thousand_concurrent_calls_each_get_their_own_reply(Frame::CrossOrigin).await;
}

#[wasm_bindgen_test]
async fn sandboxed_opaque_frame_1000_concurrent_calls_each_get_their_own_reply() {
    a_thousand_concurrent_calls_each_get_their_own_reply(Frame::Sandboxed).await;
}

#[wasm_bindgen_test]
async fn same_origin_frame_error_replies_reject_with_a_bridge_error() {
    error_replies_reject_with_a_bridge_error(Frame::SameOrigin).await;
}

#[wasm_bindgen_test]
async fn cross_origin_frame_error_replies_reject_with_a_bridge_error() {
    error_replies_reject_with_a_bridge_error(Frame::CrossOrigin).await;
}

#[wasm_bindgen_test]
async fn sandboxed_opaque_frame_error_replies_reject_with_a_bridge_error() {
    error_replies_reject_with_a_bridge_error(Frame::Sandboxed).await;
}

#[wasm_bindgen_test]
async fn same_origin_frame_forged_welcomes_are_ignored() {
    forged_welcomes_from_a_sibling_or_the_page_itself_are_ignored(Frame::SameOrigin).await;
}

#[wasm_bindgen_test]
async fn cross_origin_frame_forged_welcomes_are_ignored() {
    forged_welcomes_from_a_sibling_or_the_page_itself_are_ignored(Frame::CrossOrigin).await;
}

#[wasm_bindgen_test]
async fn sandboxed_opaque_frame_forged_welcomes_are_ignored() {
    forged_welcomes_from_a_sibling_or_the_page_itself_are_ignored(Frame::Sandboxed).await;
}

#[wasm_bindgen_test]
async fn page_whose_host_never_answers_rejects_with_not_connected() {
    let report = scenario(
        Frame::CrossOrigin,
        "nohost",
        &json!({"silent": true, "query": {"connectTimeoutMs": 300}}),
    )
    .await;
    for outcome in ["call", "ready", "later"] {
        assert_eq!(report[outcome]["code"], "NOT_CONNECTED", "{outcome}");
        assert_eq!(report[outcome]["isBridgeError"], true, "{outcome}");
    }
    let message = report["call"]["message"].as_str().unwrap();
    assert!(
        message.contains("no host answered within 300 ms"),
        "{message}"
    );
    assert!(
        message.contains("not running inside a toolbridge host"),
        "{message}"
    );
    assert_eq!(report["supports"], false);
    // The hello was repeated with back-off while waiting.
    assert!(report["hellos"].as_u64().unwrap() >= 3, "{report}");
}

#[wasm_bindgen_test]
async fn call_without_a_reply_rejects_with_timeout_after_the_deadline() {
    let report = scenario(
        Frame::CrossOrigin,
        "timeout",
        &json!({"query": {"callTimeoutMs": 300}}),
    )
    .await;
    assert_eq!(report["code"], "TIMEOUT");
    assert_eq!(
        report["message"],
        "no reply to jobs.list within 300 ms: the host did not answer in time"
    );
    // A later call keeps its own deadline: never failed early, and after the
    // first; a call that is answered meanwhile is not disturbed.
    let second = &report["second"];
    assert_eq!(second["code"], "TIMEOUT", "{report}");
    assert!(report["ms"].as_f64().unwrap() >= 300.0, "{report}");
    assert!(second["ms"].as_f64().unwrap() >= 300.0, "{report}");
    assert!(
        second["at"].as_f64().unwrap() > report["at"].as_f64().unwrap(),
        "{report}"
    );
    assert!(report["answered"].is_string(), "{report}");
}

#[wasm_bindgen_test]
async fn standalone_tool_is_not_granted_add_lines() {
    let report = scenario(
        Frame::CrossOrigin,
        "standalone",
        &json!({"toolType": "standalone"}),
    )
    .await;
    assert_eq!(report["toolType"], "standalone");
    assert_eq!(report["addLines"], false);
    assert_eq!(report["list"], true);
    assert_eq!(report["unknown"], false);
}

#[wasm_bindgen_test]
async fn deprecated_product_id_is_warned_about_once() {
    let report = scenario(Frame::CrossOrigin, "deprecation", &json!({})).await;
    let warnings = report["warnings"].as_array().unwrap();
    assert_eq!(warnings.len(), 1, "{warnings:?}");
    assert!(warnings[0].as_str().unwrap().contains("linkedItemId"));
}

#[wasm_bindgen_test]
async fn arguments_that_cannot_be_cloned_reject_with_invalid_params() {
    let report = scenario(Frame::CrossOrigin, "uncloneable", &json!({})).await;
    assert_eq!(report["code"], "INVALID_PARAMS");
    let message = report["message"].as_str().unwrap();
    assert!(
        message.starts_with("the arguments of context.get cannot be sent to the host"),
        "{message}"
    );
}

#[wasm_bindgen_test]
async fn page_outside_any_frame_rejects_at_once_with_not_connected() {
    let report = settle(run_unframed()).await;
    assert_eq!(report["settled"], "rejected");
    assert_eq!(report["code"], "NOT_CONNECTED");
    assert!(
        report["message"]
            .as_str()
            .unwrap()
            .contains("not inside a host frame")
    );
    assert!(report["ms"].as_f64().unwrap() < 1000.0, "{report}");
}

#[wasm_bindgen_test]
async fn same_origin_frame_what_the_frame_refuses_is_reported() {
    what_the_frame_refuses_is_reported_to_the_host(Frame::SameOrigin).await;
}

#[wasm_bindgen_test]
async fn cross_origin_frame_what_the_frame_refuses_is_reported() {
    what_the_frame_refuses_is_reported_to_the_host(Frame::CrossOrigin).await;
}

// In WebKit the thrown SecurityError goes unreported here, as the page is
// told nothing of it (see `Frame::hides_its_own_errors`): the test checks
// that, and that the rejected one is reported.
#[wasm_bindgen_test]
async fn sandboxed_opaque_frame_what_the_frame_refuses_is_reported() {
    what_the_frame_refuses_is_reported_to_the_host(Frame::Sandboxed).await;
}

/// Every extension, as the host lists them in `capabilities`.
const EXTENSIONS: [&str; 11] = [
    "quotes.getOpen",
    "quote.changed",
    "session.ended",
    "settings.get",
    "settings.changed",
    "ui.autoResize",
    "ui.toast",
    "ui.confirm",
    "ui.openQuote",
    "fetch",
    "connectivity",
];

/// A welcome listing these extensions, and auto-resize bounds for the
/// stand-in to apply.
fn offering(capabilities: &[&str]) -> Value {
    json!({"capabilities": capabilities, "autoResize": {"min": 120, "max": 900}})
}

/// Reported heights, each a whole number of pixels.
fn heights(value: &Value) -> Vec<i64> {
    value
        .as_array()
        .unwrap_or_else(|| panic!("not a list of heights: {value}"))
        .iter()
        .map(|height| {
            height
                .as_i64()
                .unwrap_or_else(|| panic!("not a whole number of pixels: {height}"))
        })
        .collect()
}

/// A length measured by the page, rounded up to whole pixels.
#[allow(clippy::cast_possible_truncation)]
fn rounded_up(value: &Value) -> i64 {
    value
        .as_f64()
        .unwrap_or_else(|| panic!("not a length: {value}"))
        .ceil() as i64
}

#[wasm_bindgen_test]
async fn supports_answers_true_for_offered_capabilities_and_false_for_the_rest() {
    let offered = [
        "quotes.getOpen",
        "quote.changed",
        "session.ended",
        "ui.toast",
    ];
    let report = scenario(Frame::CrossOrigin, "extensions", &offering(&offered)).await;
    let shape = &report["shape"];
    assert_eq!(shape["on"], "function");
    assert_eq!(shape["getOpen"], "function");
    assert_eq!(
        shape["ui"],
        json!(["toast", "confirm", "openQuote", "setAutoResize"])
    );
    assert_eq!(shape["uiTypes"], json!(vec!["function"; 4]));
    assert_eq!(shape["uiFrozen"], true);
    assert_eq!(shape["supportsBeforeHandshake"], false);
    assert_eq!(report["capabilities"], json!(offered));
    for name in EXTENSIONS {
        assert_eq!(
            report["supports"][name],
            offered.contains(&name),
            "supports({name}): {report}"
        );
    }
    assert_eq!(report["supports"]["quotes.addLines"], true);
    assert_eq!(report["supports"]["quotes.remove"], false);
    // getOpen takes no argument and sends no params.
    assert_eq!(
        report["requests"],
        json!([{"method": "quotes.getOpen", "hasParams": false}])
    );
    // `ui.autoResize` was not offered: no height was reported.
    assert_eq!(report["resizes"], json!([]), "{report}");
}

#[wasm_bindgen_test]
async fn old_host_without_capabilities_offers_no_extension_and_2_1_0_still_works() {
    let report = scenario(
        Frame::CrossOrigin,
        "oldHost",
        &json!({"autoResize": {"min": 120, "max": 900}}),
    )
    .await;
    assert_eq!(report["capabilities"], json!([]));
    assert_eq!(report["supported"], json!([]));
    assert_eq!(report["methods"], 9);
    assert_eq!(report["userName"], "Test User");
    assert_eq!(report["getOpen"]["code"], "METHOD_NOT_FOUND");
    assert_eq!(report["getOpen"]["isBridgeError"], true);
    assert_eq!(report["settings"]["code"], "METHOD_NOT_FOUND");
    assert_eq!(report["settings"]["isBridgeError"], true);
    assert_eq!(report["connectivity"]["code"], "METHOD_NOT_FOUND");
    assert_eq!(report["connectivity"]["isBridgeError"], true);
    assert_eq!(report["fetch"]["code"], "METHOD_NOT_FOUND");
    // Subscribing works on such a host; the event simply never comes.
    assert_eq!(report["stop"], "function");
    assert_eq!(report["resizes"], json!([]), "{report}");
    assert_eq!(report["uncaught"], 0);
}

#[wasm_bindgen_test]
async fn on_and_set_auto_resize_throw_invalid_params_at_once_for_bad_arguments() {
    let report = scenario(Frame::CrossOrigin, "badArguments", &offering(&EXTENSIONS)).await;
    for (outcome, path) in [
        ("unknownEvent", "event"),
        ("eventNotString", "event"),
        ("listenerNotFunction", "listener"),
        ("enabledNotBoolean", "enabled"),
    ] {
        let error = &report[outcome];
        assert_eq!(error["isBridgeError"], true, "{outcome}: {error}");
        assert_eq!(error["isError"], true, "{outcome}: {error}");
        assert_eq!(error["code"], "INVALID_PARAMS", "{outcome}: {error}");
        let details = error["details"].as_array().unwrap();
        assert_eq!(details.len(), 1, "{outcome}: {error}");
        assert_eq!(details[0]["path"], path, "{outcome}: {error}");
        assert_eq!(
            details[0]["message"], error["message"],
            "{outcome}: {error}"
        );
    }
    let message = report["unknownEvent"]["message"].as_str().unwrap();
    assert!(
        message.contains("quote.changed")
            && message.contains("session.ended")
            && message.contains("settings.changed")
            && message.contains("connectivity.changed"),
        "{message}"
    );
    assert_eq!(report["enabledTrue"]["returned"], "undefined");
    assert_eq!(report["known"]["returned"], "function");
    assert_eq!(report["uncaught"], 0);
}

#[wasm_bindgen_test]
async fn notifications_reach_listeners_in_order_and_unsubscribing_stops_them() {
    let report = scenario(Frame::CrossOrigin, "events", &offering(&EXTENSIONS)).await;
    let expected: Vec<String> = (1..=100).map(|seq| format!("linesAdded {seq}")).collect();
    assert_eq!(report["ordered"], json!(expected));
    // `b` was subscribed twice: two subscriptions.
    assert_eq!(report["before"], json!({"a": 1, "b": 2}));
    // `a` stopped (twice, harmlessly) and one of `b`'s two.
    assert_eq!(report["after"], json!({"a": 1, "b": 3}));
    assert_eq!(report["stopped"], json!(vec!["undefined"; 3]));
    assert_eq!(report["stopType"], "function");
}

#[wasm_bindgen_test]
async fn a_throwing_listener_is_reported_and_the_others_still_run() {
    let report = scenario(Frame::CrossOrigin, "listeners", &offering(&EXTENSIONS)).await;
    // The third, removed during the first dispatch, still ran in it; the
    // late one, added then, ran only in the next. Messages with an id, an
    // unknown event or no string method reached no listener.
    assert_eq!(
        report["calls"],
        json!([
            "first signedOut",
            "second signedOut 1",
            "third signedOut",
            "first expired",
            "second expired 1",
            "late expired"
        ])
    );
    let errors = report["errors"].as_array().unwrap();
    assert_eq!(errors.len(), 2, "{errors:?}");
    assert!(
        errors
            .iter()
            .all(|error| error.as_str().unwrap().contains("Error: listener broke")),
        "{errors:?}"
    );
    assert_eq!(report["uncaught"], 0);
}

async fn forged_notifications_never_reach_listeners(kind: Frame) {
    let mut options = offering(&EXTENSIONS);
    options["sibling"] = json!(true);
    let report = scenario(kind, "forgedEvents", &options).await;
    assert_eq!(report["seen"], json!(["linesAdded"]), "{report}");
}

#[wasm_bindgen_test]
async fn same_origin_frame_forged_notifications_never_reach_listeners() {
    forged_notifications_never_reach_listeners(Frame::SameOrigin).await;
}

#[wasm_bindgen_test]
async fn cross_origin_frame_forged_notifications_never_reach_listeners() {
    forged_notifications_never_reach_listeners(Frame::CrossOrigin).await;
}

#[wasm_bindgen_test]
async fn sandboxed_opaque_frame_forged_notifications_never_reach_listeners() {
    forged_notifications_never_reach_listeners(Frame::Sandboxed).await;
}

#[wasm_bindgen_test]
async fn settings_get_answers_the_host_s_values_and_settings_changed_brings_each_change() {
    let report = scenario(
        Frame::CrossOrigin,
        "settings",
        &offering(&["settings.get", "settings.changed"]),
    )
    .await;
    assert_eq!(report["shape"], json!({"get": "function", "frozen": true}));
    assert_eq!(
        report["first"],
        json!({"wastePercent": 12, "region": "North", "showCost": false})
    );
    assert_eq!(report["supports"], json!({"get": true, "changed": true}));
    assert_eq!(
        report["requests"],
        json!([{"method": "settings.get", "hasParams": false}])
    );
    assert_eq!(
        report["heard"],
        json!([{"wastePercent": 1}, {"wastePercent": 2}, {"wastePercent": 3}])
    );
    assert_eq!(report["uncaught"], 0);
}

#[wasm_bindgen_test]
async fn connectivity_get_answers_the_host_s_state_and_connectivity_changed_brings_each_change() {
    let mut options = offering(&["session.ended", "connectivity"]);
    options["online"] = json!(false);
    let report = scenario(Frame::CrossOrigin, "connectivity", &options).await;
    assert_eq!(report["shape"], json!({"get": "function", "frozen": true}));
    assert_eq!(report["first"], json!({"online": false}));
    assert_eq!(report["supports"], true);
    // Two asks, neither with params.
    assert_eq!(
        report["requests"],
        json!([
            {"method": "connectivity.get", "hasParams": false},
            {"method": "connectivity.get", "hasParams": false}
        ])
    );
    // In order, and nothing after unsubscribing.
    assert_eq!(report["heard"], json!([false, true, false]));
    for outcome in ["offline", "numberOnly"] {
        let error = &report[outcome];
        assert_eq!(error["isBridgeError"], true, "{outcome}: {error}");
        assert_eq!(error["code"], "OFFLINE", "{outcome}: {error}");
        assert!(
            error["message"].as_str().unwrap().contains("was not sent"),
            "{outcome}: {error}"
        );
    }
    assert_eq!(report["uncaught"], 0);
}

#[wasm_bindgen_test]
async fn a_token_is_kept_while_it_lives_shared_while_asked_for_and_dropped_when_the_session_ends() {
    let report = scenario(
        Frame::CrossOrigin,
        "tokens",
        &offering(&["auth.getToken", "session.ended"]),
    )
    .await;
    assert_eq!(report["first"], "token-1", "{report}");
    assert_eq!(report["kept"], "token-1", "{report}");
    assert_eq!(report["shared"], json!(["token-1", "token-1"]), "{report}");
    // The next user's session must not get the last one's token.
    assert_eq!(report["afterEnd"], "token-2", "{report}");
    assert_eq!(report["keptAgain"], "token-2", "{report}");
    let asked = report["requests"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|request| request["method"] == "auth.getToken")
        .count();
    assert_eq!(asked, 2, "{report}");
}

#[wasm_bindgen_test]
async fn a_token_with_less_than_30_s_to_live_is_asked_for_again_and_calls_meanwhile_share_it() {
    let mut options = offering(&["auth.getToken"]);
    options["tokenLifetime"] = json!(20);
    let report = scenario(Frame::SameOrigin, "shortTokens", &options).await;
    assert_eq!(report["one"], "token-1", "{report}");
    assert_eq!(report["two"], "token-2", "{report}");
    assert_eq!(
        report["together"],
        json!(["token-3", "token-3"]),
        "{report}"
    );
}

#[wasm_bindgen_test]
async fn ui_methods_send_their_argument_and_open_quote_wraps_its_id() {
    let report = scenario(Frame::CrossOrigin, "userCalls", &offering(&EXTENSIONS)).await;
    assert_eq!(
        report["requests"],
        json!([
            {"method": "ui.toast", "params": {"kind": "success", "message": "Saved"}, "hasParams": true},
            {"method": "quotes.getOpen", "hasParams": false},
            {"method": "ui.openQuote", "params": {"id": "q-42"}, "hasParams": true},
            {"method": "ui.confirm", "params": {"title": "Add again?", "message": "Lounge is on the quote."}, "hasParams": true},
        ])
    );
    assert_eq!(report["opened"], false);
    assert_eq!(report["confirmed"], true);
}

#[wasm_bindgen_test]
async fn confirm_and_open_quote_wait_past_the_call_deadline_that_times_out_other_calls() {
    let mut options = offering(&EXTENSIONS);
    options["query"] = json!({"callTimeoutMs": 300});
    // Well past the deadline.
    options["answerAfterMs"] = json!(2000);
    let report = scenario(Frame::CrossOrigin, "noDeadline", &options).await;
    for call in ["before", "after"] {
        assert_eq!(report[call]["code"], "TIMEOUT", "{call}: {report}");
    }
    assert_eq!(report["confirm"]["value"], true, "{report}");
    assert_eq!(report["openQuote"]["value"], false, "{report}");
    // The call made after the waiting ones timed out before they settled.
    let order: Vec<&str> = report["order"]
        .as_array()
        .unwrap()
        .iter()
        .map(|name| name.as_str().unwrap())
        .collect();
    let at = |name: &str| order.iter().position(|n| *n == name).unwrap();
    assert!(at("jobs.list after") < at("ui.confirm"), "{order:?}");
    assert!(at("jobs.list after") < at("ui.openQuote"), "{order:?}");
}

#[wasm_bindgen_test]
async fn auto_resize_reports_the_height_rounded_up_once_per_frame_until_turned_off() {
    let report = scenario(Frame::CrossOrigin, "resize", &offering(&EXTENSIONS)).await;
    let rounded = |key: &str| rounded_up(&report[key]);
    let first = heights(&report["first"]);
    let first_height = report["firstHeight"].as_f64().unwrap();
    // 250.4 px of content: a fraction, rounded up.
    assert!(first_height.fract() > 0.0, "{report}");
    assert_eq!(
        first.last().copied(),
        Some(rounded("firstHeight")),
        "{report}"
    );
    assert_eq!(rounded("firstHeight"), 251, "{report}");
    // Five changes and five resize events in one task: one report.
    let mut expected = first.clone();
    expected.push(rounded("burstHeight"));
    assert_eq!(heights(&report["burst"]), expected, "{report}");
    // Turned off: the change that followed went unreported.
    assert_eq!(report["offReturned"], "undefined");
    assert_eq!(heights(&report["off"]), expected, "{report}");
    // Back on: the current height, once.
    assert_eq!(report["onReturned"], "undefined");
    expected.push(rounded("offHeight"));
    assert_eq!(heights(&report["on"]), expected, "{report}");
}

#[wasm_bindgen_test]
async fn auto_resize_turned_off_before_the_handshake_stays_off_until_turned_on() {
    let report = scenario(Frame::CrossOrigin, "resizeOffFirst", &offering(&EXTENSIONS)).await;
    assert_eq!(report["whileOff"], json!([]), "{report}");
    assert_eq!(
        heights(&report["on"]),
        [rounded_up(&report["height"])],
        "{report}"
    );
}

#[wasm_bindgen_test]
async fn full_height_page_settles_at_one_height_below_the_maximum() {
    let mut options = offering(&EXTENSIONS);
    options["page"] = json!("/tests/pages/full-height.html");
    let report = scenario(Frame::CrossOrigin, "fullHeight", &options).await;
    let settled = heights(&report["settled"]);
    let last = *settled
        .last()
        .unwrap_or_else(|| panic!("no height reported: {report}"));
    // After settling, a resize event and a DOM change brought no report.
    assert_eq!(heights(&report["later"]), settled, "{report}");
    // The frame is at the last height reported, well below the maximum.
    let frame = rounded_up(&report["frameHeight"]);
    assert_eq!(frame, last.clamp(120, 900), "{report}");
    assert!(frame < 900, "the frame grew to the maximum: {report}");
    assert_eq!(rounded_up(&report["viewport"]), frame, "{report}");
    // The page is still higher than its frame (its body's margins): it
    // would have grown the frame again without the rule.
    assert!(rounded_up(&report["pageHeight"]) > frame, "{report}");
}

#[wasm_bindgen_test]
async fn the_theme_is_set_on_the_document_at_connect_and_on_each_change() {
    let mut options = offering(&["context.changed"]);
    options["theme"] = json!("dark");
    let report = scenario(Frame::CrossOrigin, "theme", &options).await;
    assert_eq!(report["supports"], true, "{report}");
    let dark = &report["atConnect"];
    assert_eq!(dark["attribute"], "dark", "{report}");
    assert_eq!(dark["color-scheme"], "dark");
    for name in [
        "--tb-bg",
        "--tb-surface",
        "--tb-fg",
        "--tb-muted",
        "--tb-accent",
        "--tb-border",
        "--tb-danger",
    ] {
        assert!(
            dark[name]
                .as_str()
                .is_some_and(|value| value.starts_with('#')),
            "{name}: {report}"
        );
    }
    let light = &report["afterLight"];
    assert_eq!(light["attribute"], "light", "{report}");
    assert_eq!(light["color-scheme"], "light");
    assert_ne!(light["--tb-bg"], dark["--tb-bg"]);
    assert_ne!(light["--tb-fg"], dark["--tb-fg"]);
    // A change without a theme, or with one bridge.js does not know, leaves it.
    assert_eq!(report["afterCurrency"], *light);
    assert_eq!(report["afterUnknown"], *light);
    // Listeners hear exactly what changed, with the theme already set.
    assert_eq!(
        report["seen"],
        json!([
            {"changed": {"theme": "light"}, "during": "light"},
            {"changed": {"currency": "AUD"}, "during": "light"},
            {"changed": {"theme": "purple"}, "during": "light"},
        ])
    );
}

#[wasm_bindgen_test]
async fn an_older_host_names_no_theme_and_the_document_is_left_alone() {
    let report = scenario(Frame::CrossOrigin, "theme", &json!({})).await;
    assert_eq!(report["supports"], false, "{report}");
    assert_eq!(report["atConnect"]["attribute"], Value::Null, "{report}");
    assert_eq!(report["atConnect"]["--tb-bg"], "");
}

/// What the stand-in received for one `bridge.fetch`, as its echo answers it.
fn sent(url: &str, method: &str, headers: &Value, body: &Value) -> Value {
    json!({"url": url, "method": method, "headers": headers, "body": body})
}

#[wasm_bindgen_test]
async fn fetch_reads_its_arguments_as_fetch_does_and_answers_a_response() {
    let report = scenario(Frame::CrossOrigin, "fetch", &offering(&["fetch"])).await;
    assert_eq!(
        report["shape"],
        json!({"fetch": "function", "frozen": true})
    );
    fetch_sent_what_fetch_would(&report);
    fetch_refused_bad_arguments(&report);
    fetch_answered_responses(&report);
    assert_eq!(report["uncaught"], 0);
}

/// Each argument form reached the host as the request `fetch` would make: a URL by its text,
/// the method in capitals, headers as the browser's `Headers` reads them (lower case, sorted, a
/// repeated name's values joined), a Blob's bytes with its type (which a Blob writes in lower
/// case) unless one is set, a view's own bytes only, a form as its text with its type.
fn fetch_sent_what_fetch_would(report: &Value) {
    let none: [u8; 0] = [];
    let bytes = |list: &[u8]| json!({"bytes": list});
    let all = bytes(&[0, 1, 2, 3, 4, 5, 6, 7]);
    let form = "application/x-www-form-urlencoded;charset=UTF-8";
    let expected = json!({
        "plain": sent("https://api.test/plain", "GET", &json!(none), &Value::Null),
        "url": sent("https://api.test/url?q=1", "POST", &json!([["x-a", "1"]]), &json!("key={{secret.KEY}}")),
        "record": sent("https://api.test/record", "GET", &json!([["accept", "text/csv"], ["x-b", "2"]]), &Value::Null),
        "pairs": sent("https://api.test/pairs", "PATCH", &json!([["x-c", "3, 4"]]), &Value::Null),
        "blob": sent("https://api.test/blob", "PUT", &json!([["content-type", "image/png"]]), &bytes(&[1, 2, 3])),
        "blobTyped": sent("https://api.test/blob", "PUT", &json!([["content-type", "application/octet-stream"]]), &all),
        "arrayBuffer": sent("https://api.test/buffer", "POST", &json!(none), &all),
        "view": sent("https://api.test/view", "POST", &json!(none), &bytes(&[2, 3, 4])),
        "wide": sent("https://api.test/wide", "POST", &json!(none), &bytes(&[1, 2, 3, 4])),
        "dataView": sent("https://api.test/data", "POST", &json!(none), &bytes(&[5, 6, 7])),
        "form": sent("https://api.test/form", "POST", &json!([["content-type", form]]), &json!("user=%7B%7Bsecret.USER%7D%7D&q=a+b")),
        "formTyped": sent("https://api.test/form", "POST", &json!([["content-type", "text/plain"]]), &json!("a=1")),
        "nullBody": sent("https://api.test/null", "GET", &json!(none), &Value::Null),
    });
    for (case, expected) in expected.as_object().unwrap() {
        assert_eq!(&report["sent"][case], expected, "{case}: {report}");
    }
}

/// Bad arguments rejected with `INVALID_PARAMS` naming the argument, without a request.
fn fetch_refused_bad_arguments(report: &Value) {
    for (case, path) in [
        ("url", "url"),
        ("noUrl", "url"),
        ("init", "init"),
        ("method", "init.method"),
        ("headers", "init.headers"),
        ("headersNull", "init.headers"),
        ("body", "init.body"),
        ("bodyNumber", "init.body"),
        ("bodyStream", "init.body"),
    ] {
        let error = &report["refused"][case];
        assert_eq!(error["isBridgeError"], true, "{case}: {error}");
        assert_eq!(error["code"], "INVALID_PARAMS", "{case}: {error}");
        assert_eq!(error["details"][0]["path"], path, "{case}: {error}");
        assert!(
            error["message"].as_str().is_some_and(|m| !m.is_empty()),
            "{case}: {error}"
        );
    }
    // None of those reached the host.
    let requested: Vec<&str> = report["requests"]
        .as_array()
        .unwrap()
        .iter()
        .map(|r| r["params"][0]["url"].as_str().unwrap())
        .collect();
    assert!(!requested.contains(&"https://api.test/x"), "{requested:?}");
}

/// The host's answers became `Response`s, with no body where the status has none.
fn fetch_answered_responses(report: &Value) {
    assert_eq!(
        report["answered"],
        json!({"isResponse": true, "status": 200, "ok": true, "type": "application/json", "echo": "yes"})
    );
    assert_eq!(
        report["binary"],
        json!({"status": 200, "length": 300, "same": true})
    );
    assert_eq!(report["text"], "grüße");
    assert_eq!(
        report["blob"],
        json!({"size": 300, "type": "application/octet-stream"})
    );
    assert_eq!(
        report["noContent"],
        json!({"status": 204, "body": null, "text": "", "ok": true})
    );
    assert_eq!(
        report["notFound"],
        json!({"status": 404, "ok": false, "text": "no such price"})
    );
    let informational = &report["informational"];
    assert_eq!(informational["code"], "INTERNAL", "{informational}");
    assert!(
        informational["message"]
            .as_str()
            .unwrap()
            .starts_with("the answer cannot be made a Response: "),
        "{informational}"
    );
    assert_eq!(report["failed"]["code"], "TIMEOUT");
    assert_eq!(
        report["failed"]["message"],
        "https://api.test did not answer within 15 s"
    );
}

#[wasm_bindgen_test]
async fn fetch_waits_past_the_call_deadline_and_calls_after_it_keep_their_own() {
    let mut options = offering(&["fetch"]);
    options["query"] = json!({"callTimeoutMs": 300, "fetchTimeoutMs": 1500});
    let report = scenario(Frame::CrossOrigin, "fetchDeadline", &options).await;
    // Answered after 600 ms: past the 300 ms of other calls.
    assert_eq!(report["late"]["resolved"], true, "{report}");
    // The call made after two fetches failed on its own deadline, not theirs.
    let plain = &report["plain"];
    assert_eq!(plain["code"], "TIMEOUT", "{report}");
    let plain_ms = plain["ms"].as_f64().unwrap();
    assert!((300.0..1000.0).contains(&plain_ms), "{report}");
    let never = &report["never"];
    assert_eq!(never["code"], "TIMEOUT", "{report}");
    assert_eq!(
        never["message"],
        "no reply to fetch within 1500 ms: the host did not answer in time"
    );
    assert!(never["ms"].as_f64().unwrap() >= 1500.0, "{report}");
}
