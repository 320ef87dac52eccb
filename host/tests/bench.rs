//! The host's figures for `cargo xtask bench` (DESIGN.md §8), measured in
//! headless Chromium against the release server with a catalog of about
//! 100 000 products: `addLines` of 1000 lines inside the host (from the
//! handler holding the message's decoded data to the reply, as the host's
//! call records time it, and phase by phase as the host's
//! `add_lines_phases` reports it), and
//! the `context.get()` round trip from a tool page next to a bare
//! `MessageChannel` echo between the same two windows; opening a quote, from
//! `host.openQuote()` to resolved, first in fresh hosts (the catalog index
//! downloaded) and then again in one (the index revalidated, `304`), with
//! the index's bytes as the browser reports them and the host's phases; then
//! toolbridge side by side with Penpal, Comlink and the bare echo
//! (`tests/support/compare.js`).
//! The samples go to the harness; `cargo xtask bench` prints the medians
//! against the budgets and writes the comparison.
//!
//! Not part of `cargo xtask test`: it needs `TOOLBRIDGE_BENCH_SAMPLES`.

#![cfg(target_arch = "wasm32")]
// Test code: a panic is how a helper reports a failed expectation.
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

mod fixture;

use fixture::*;
use serde_json::{Value, json};
use toolbridge_host::{AddLinesPhases, Host, OpenQuotePhases};
use wasm_bindgen::JsCast;
use wasm_bindgen::JsValue;
use wasm_bindgen::closure::Closure;
use wasm_bindgen_test::{wasm_bindgen_test, wasm_bindgen_test_configure};

wasm_bindgen_test_configure!(run_in_browser);

#[wasm_bindgen::prelude::wasm_bindgen(module = "/tests/support/compare.js")]
extern "C" {
    #[wasm_bindgen(js_name = compareContenders)]
    fn compare_contenders(
        host: &JsValue,
        api: &str,
        libs: &JsValue,
        samples: &JsValue,
    ) -> js_sys::Promise;
}

#[wasm_bindgen::prelude::wasm_bindgen(module = "/tests/support/harness.js")]
extern "C" {
    #[wasm_bindgen(js_name = uncachedBackend)]
    fn uncached_backend() -> JsValue;
    #[wasm_bindgen(js_name = lastResource)]
    fn last_resource(url: &str, since: f64) -> JsValue;
    #[wasm_bindgen(js_name = useToolServer)]
    fn use_tool_server(base: &str);
}

/// Lines per `addLines` batch.
const BATCH: u32 = 1000;
/// Batches merged before the samples count.
const WARM_UP_BATCHES: u32 = 10;
/// Round trips averaged into one round-trip sample.
const ROUND_TRIPS_PER_SAMPLE: u32 = 20;
/// Repeat opens before the samples count.
const WARM_UP_OPENS: u32 = 5;

fn samples() -> u32 {
    option_env!("TOOLBRIDGE_BENCH_SAMPLES")
        .and_then(|n| n.parse().ok())
        .unwrap_or_else(|| {
            panic!("TOOLBRIDGE_BENCH_SAMPLES is not set: run the bench with `cargo xtask bench`")
        })
}

/// Warm-up batches (the module's memory grows and the browser compiles the
/// hot code), then one batch per sample, each into the freshly opened
/// (empty) quote; answers where the host spent its time on each sample,
/// phase by phase.
async fn add_batches(host: &Host, tool: &Tool, id: &str, samples: u32) -> Value {
    let mut phases = Vec::new();
    for batch in 0..WARM_UP_BATCHES + samples {
        host.close_quote(&js(&json!({"discard": true}))).unwrap();
        resolved(host.open_quote(id.to_owned(), &JsValue::UNDEFINED)).await;
        let added = tool.command(json!({"command": "addPreparedBatch"})).await;
        assert_eq!(added["ok"], true, "{added}");
        if batch >= WARM_UP_BATCHES {
            phases.push(host.add_lines_phases());
        }
    }
    let phase = |ms: fn(&AddLinesPhases) -> f64| -> Vec<f64> { phases.iter().map(ms).collect() };
    json!({
        "read": phase(|p| p.read_ms),
        "validate": phase(|p| p.validate_ms),
        "merge": phase(|p| p.merge_ms),
        "reply": phase(|p| p.reply_ms),
        "notify": phase(|p| p.notify_ms),
    })
}

fn now() -> f64 {
    web_sys::window().unwrap().performance().unwrap().now()
}

/// Each phase's samples, by the name the report gives it.
fn open_phases(phases: &[OpenQuotePhases]) -> Value {
    let phase = |ms: fn(&OpenQuotePhases) -> f64| -> Vec<f64> { phases.iter().map(ms).collect() };
    json!({
        "context": phase(|p| p.context_ms),
        "quote": phase(|p| p.quote_ms),
        "indexFetch": phase(|p| p.index_fetch_ms),
        "indexParse": phase(|p| p.index_parse_ms),
        "indexBuild": phase(|p| p.index_build_ms),
        "install": phase(|p| p.install_ms),
    })
}

/// Checks the status the browser reports for a request, when it reports
/// the request and its status.
fn assert_status(resource: &Value, status: u16) {
    let reported = resource["responseStatus"].as_u64().unwrap_or(0);
    assert!(
        reported == 0 || reported == u64::from(status),
        "expected {status}: {resource}"
    );
}

/// Opens quote `id` in `host` and answers how long `openQuote` took to
/// resolve, the host's phases of it, and what the browser reports of the
/// catalog index's request (`null` when it made none it reports).
async fn timed_open(host: &Host, id: &str) -> (f64, OpenQuotePhases, Value) {
    let index = format!("{}/catalog/index", api_base());
    let started = now();
    resolved(host.open_quote(id.to_owned(), &JsValue::UNDEFINED)).await;
    let ms = now() - started;
    (
        ms,
        host.open_quote_phases(),
        to_json(&last_resource(&index, started)),
    )
}

/// Opening quote `id`: first in `fresh` new hosts, each holding no index
/// and fetching past the browser's HTTP cache (which would otherwise answer
/// a fresh host's request with the copy an earlier one stored), so that the
/// index comes over the network each time; then in `host`, which holds the
/// index and its `ETag`, closed and opened again `samples` times after a few
/// unmeasured (the host's `If-None-Match` makes the browser skip its cache:
/// each answer is the server's `304`).
async fn open_quotes(host: &Host, id: &str, fresh: u32, samples: u32) -> Value {
    let mut first = (Vec::new(), Vec::new(), Vec::new());
    for _ in 0..fresh {
        let options = js(&json!({"apiBase": api_base(), "debug": false}));
        js_sys::Reflect::set(&options, &JsValue::from_str("backend"), &uncached_backend()).unwrap();
        let fresh_host = Host::new(&options).unwrap();
        let (ms, phases, index) = timed_open(&fresh_host, id).await;
        assert_status(&index, 200);
        first.0.push(ms);
        first.1.push(phases);
        first.2.push(index);
    }
    let mut repeat = (Vec::new(), Vec::new(), Vec::new());
    for open in 0..WARM_UP_OPENS + samples {
        host.close_quote(&js(&json!({"discard": true}))).unwrap();
        let (ms, phases, index) = timed_open(host, id).await;
        assert_status(&index, 304);
        if open >= WARM_UP_OPENS {
            repeat.0.push(ms);
            repeat.1.push(phases);
            repeat.2.push(index);
        }
    }
    json!({
        "first": {"ms": first.0, "phasesMs": open_phases(&first.1), "index": first.2},
        "repeat": {"ms": repeat.0, "phasesMs": open_phases(&repeat.1), "index": repeat.2},
    })
}

#[wasm_bindgen_test]
async fn host_figures() {
    let samples = samples();
    sign_in(OFFICE).await;
    let id = draft_quote().await;
    let host = host();
    host.set_debug(false);
    // The page's first open: the module's code runs for the first time, and the server answers
    // the index for the first time since it started.
    let (cold_ms, cold_phases, cold_index) = timed_open(&host, &id).await;
    let mut open_quote = open_quotes(&host, &id, (samples / 5).max(5), samples).await;
    open_quote["cold"] =
        json!({"ms": [cold_ms], "phasesMs": open_phases(&[cold_phases]), "index": [cold_index]});

    let durations = js_sys::Array::new();
    let record = durations.clone();
    let listener = Closure::<dyn FnMut(JsValue)>::new(move |entry: JsValue| {
        let entry = to_json(&entry);
        if entry["method"] == "quotes.addLines" {
            assert_eq!(entry["outcome"], "ok", "{entry}");
            record.push(&JsValue::from_f64(entry["durationMs"].as_f64().unwrap()));
        }
    });
    let off = host.on_call(
        listener
            .as_ref()
            .unchecked_ref::<js_sys::Function>()
            .clone(),
    );

    let tool = mount(&host, "bench", "quoting_extension", &sdk_query(&json!({}))).await;
    let catalog = tool.ok("products.list", json!([{"pageSize": 1}])).await["totalCount"].clone();
    let prepared = tool
        .command(json!({"command": "prepareBatch", "count": BATCH}))
        .await;
    assert_eq!(prepared["result"], BATCH, "{prepared}");

    let add_lines_phases_ms = add_batches(&host, &tool, &id, samples).await;
    let mut add_lines_ms: Vec<Value> = to_json(&durations).as_array().unwrap().clone();
    add_lines_ms.drain(..WARM_UP_BATCHES as usize);
    assert_eq!(add_lines_ms.len(), samples as usize);

    // The round trips run as a page without a debug panel runs them.
    off.call0(&JsValue::NULL).unwrap();
    serve_echo(&tool.frame);
    let trips = tool
        .command_within(
            json!({"command": "roundTrips", "samples": samples, "warmUp": 50, "batch": ROUND_TRIPS_PER_SAMPLE}),
            120_000,
        )
        .await;
    assert_eq!(trips["ok"], true, "{trips}");
    // The host's own share of each context.get, from its call records.
    let log = to_json(&host.debug_log().unwrap());
    let context_host_ms: Vec<Value> = log
        .as_array()
        .unwrap()
        .iter()
        .filter(|entry| entry["method"] == "context.get")
        .map(|entry| entry["durationMs"].clone())
        .collect();

    // Last, as it hands the host over to the page's script: toolbridge next to Penpal, Comlink
    // and the bare echo.
    let libs = json!({
        "toolbridge": format!("{}/sdk/bridge.js", server()),
        "penpal": format!("{}/files/penpal.min.js", faults()),
        "comlink": format!("{}/files/comlink.min.js", faults()),
        "penpalParent": format!("{}/files/penpal.min.js", faults()),
        "comlinkParent": format!("{}/files/comlink.min.js", faults()),
    });
    let compare_samples = json!({
        "calls": samples,
        "inFlight": (samples / 5).max(5),
        "page": (samples / 2).max(10),
        "cold": (samples / 5).max(5),
    });
    drop(tool);
    use_tool_server(faults());
    let comparison = resolved(compare_contenders(
        &JsValue::from(host),
        &api_base(),
        &js(&libs),
        &js(&compare_samples),
    ))
    .await;

    let report = json!({
        "compare": comparison,
        "addLinesMs": add_lines_ms,
        "addLinesPhasesMs": add_lines_phases_ms,
        "openQuote": open_quote,
        "contextGetMs": trips["result"]["contextGetMs"],
        "contextGetHostMs": context_host_ms,
        "echoMs": trips["result"]["echoMs"],
        "catalogProducts": catalog,
        "browser": web_sys::window().unwrap().navigator().user_agent().unwrap(),
    });
    let posted = resolved(api(
        &format!("{}/report/host-bench", faults()),
        "POST",
        &js(&report),
    ))
    .await;
    assert_eq!(posted["status"], 204, "{posted}");
}
