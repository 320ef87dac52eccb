//! The host's context beyond 2.1.0: what `context.get` answers (the backend's time zone,
//! currency, locale, units and theme, with the page's `setContext` over them), `context.changed`
//! reaching only the tools that were offered it with only what changed, and the theme bridge.js
//! sets on a tool's document from the welcome and from each change.

use serde_json::{Value, json};
use wasm_bindgen_test::wasm_bindgen_test;

use super::{STANDALONE, sleep};
use crate::fixture::*;

/// The notifications of `event` the tool heard so far.
async fn heard_now(tool: &Tool, event: &str) -> Value {
    tool.command(json!({"command": "heard", "event": event}))
        .await["result"]
        .clone()
}

/// The theme on the tool's document.
async fn theme_of(tool: &Tool) -> Value {
    tool.command(json!({"command": "theme"})).await["result"].clone()
}

#[wasm_bindgen_test]
async fn context_get_answers_the_backends_context_with_the_pages_values_over_it() {
    sign_in(OFFICE).await;
    let host = host();
    let tool = mount(&host, "lookup", STANDALONE, &sdk_query(&json!({}))).await;
    let context = tool.ok("context.get", json!([])).await;
    assert_eq!(context["cultureCode"], "en-NZ", "{context}");
    assert_eq!(context["userEmail"], OFFICE);
    assert_eq!(context["timeZone"], "Pacific/Auckland", "{context}");
    assert_eq!(context["currency"], "NZD");
    assert_eq!(context["locale"], "en-NZ");
    assert_eq!(context["units"], "metric");
    assert_eq!(context["theme"], "light");
    host.set_context(&js(&json!({"theme": "dark", "timeZone": "Europe/London"})))
        .unwrap();
    let context = tool.ok("context.get", json!([])).await;
    assert_eq!(context["theme"], "dark");
    assert_eq!(context["timeZone"], "Europe/London");
    assert_eq!(context["currency"], "NZD");
    // The fields of 2.1.0 come from the backend only.
    assert_eq!(context["userRole"], "office");
    assert_eq!(context["cultureCode"], "en-NZ");
}

#[wasm_bindgen_test]
async fn context_changed_reaches_only_the_tools_offered_it_with_only_what_changed() {
    sign_in(OFFICE).await;
    let host = host();
    let query = sdk_query(&json!({}));
    let before = mount(&host, "lookup", STANDALONE, &query).await;
    host.set_context(&js(&json!({"theme": "light", "currency": "NZD"})))
        .unwrap();
    let after = mount(&host, "estimator", STANDALONE, &query).await;
    let names = json!(["context.changed"]);
    for (tool, offered) in [(&before, false), (&after, true)] {
        let supports = tool
            .command(json!({"command": "supports", "names": names}))
            .await;
        assert_eq!(supports["result"], json!({"context.changed": offered}));
        tool.command(json!({"command": "subscribe", "event": "context.changed"}))
            .await;
    }
    host.set_context(&js(&json!({"theme": "dark", "currency": "NZD"})))
        .unwrap();
    host.set_context(&js(&json!({"timeZone": "Pacific/Chatham"})))
        .unwrap();
    // The same values again: nothing to tell.
    host.set_context(&js(
        &json!({"timeZone": "Pacific/Chatham", "theme": "dark"}),
    ))
    .unwrap();
    let mut heard = Value::Null;
    for _ in 0..100 {
        heard = heard_now(&after, "context.changed").await;
        if heard.as_array().is_some_and(|list| list.len() >= 2) {
            break;
        }
        sleep(50).await;
    }
    assert_eq!(
        heard,
        json!([{"theme": "dark"}, {"timeZone": "Pacific/Chatham"}])
    );
    // A reply travels behind any notification posted before it.
    after.ok("context.get", json!([])).await;
    assert_eq!(
        heard_now(&after, "context.changed")
            .await
            .as_array()
            .map(Vec::len),
        Some(2)
    );
    before.ok("context.get", json!([])).await;
    assert_eq!(heard_now(&before, "context.changed").await, json!([]));
    let tools = to_json(&host.tools().unwrap());
    assert!(
        tools[1]["capabilities"]
            .as_array()
            .unwrap()
            .contains(&json!("context.changed")),
        "{tools}"
    );
}

#[wasm_bindgen_test]
async fn bridge_js_sets_the_theme_on_the_tools_document_at_connect_and_on_each_change() {
    sign_in(OFFICE).await;
    let host = host();
    host.set_context(&js(&json!({"theme": "dark"}))).unwrap();
    let tool = mount(&host, "lookup", STANDALONE, &sdk_query(&json!({}))).await;
    tool.ok("context.get", json!([])).await;
    let dark = theme_of(&tool).await;
    assert_eq!(dark["attribute"], "dark", "{dark}");
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
            "{name}: {dark}"
        );
    }
    host.set_context(&js(&json!({"theme": "light"}))).unwrap();
    tool.ok("context.get", json!([])).await;
    let light = theme_of(&tool).await;
    assert_eq!(light["attribute"], "light", "{light}");
    assert_eq!(light["color-scheme"], "light");
    assert_ne!(light["--tb-bg"], dark["--tb-bg"]);
    assert_ne!(light["--tb-fg"], dark["--tb-fg"]);
    // A page that names no theme leaves the tool's document alone.
    let plain_host = crate::fixture::host();
    let plain = mount(&plain_host, "lookup", STANDALONE, &sdk_query(&json!({}))).await;
    plain.ok("context.get", json!([])).await;
    assert_eq!(theme_of(&plain).await["attribute"], Value::Null);
}

#[wasm_bindgen_test]
async fn set_context_refuses_values_that_break_their_rules_naming_each() {
    sign_in(OFFICE).await;
    let host = host();
    let error = error_json(
        &host
            .set_context(&js(&json!({"theme": "blue", "currency": "nzd", "colour": "red", "timeZone": "Pacific/Auckland"})))
            .unwrap_err(),
    );
    assert_eq!(error["code"], "USAGE", "{error}");
    let message = error["message"].as_str().unwrap();
    assert!(message.starts_with("setContext: "), "{message}");
    for named in ["theme", "currency", "colour"] {
        assert!(message.contains(named), "{named}: {message}");
    }
    // Nothing was taken, not even the good value.
    let tool = mount(&host, "lookup", STANDALONE, &sdk_query(&json!({}))).await;
    assert_eq!(tool.ok("context.get", json!([])).await["theme"], "light");
    let supports = tool
        .command(json!({"command": "supports", "names": ["context.changed"]}))
        .await;
    assert_eq!(supports["result"], json!({"context.changed": false}));
}
