//! `bench.json`: bridge.js with its budget, each of its parts, the host module's bytes against
//! their goal, the host figures (opening a quote among them, against its goals), the app's cold
//! load against its goals, then the REST figure, each with its budget and verdict, and last the
//! bytes sent over HTTP (`http_transfer`).

use serde::{Serialize, Serializer};

use crate::cold_load::{ColdLoad, ColdLoadJson};
use crate::error::Error;
use crate::figures::rounded;
use crate::host::{AddLinesPhases, HostFigures, MAX_ADD_LINES_MS, MAX_CONTEXT_GET_RATIO};
use crate::load::{MAX_P99_MS, MIN_POSTGRES_SHARE, MIN_REQUESTS_PER_SEC, RestFigures};
use crate::open_quote::OpenQuoteJson;
use crate::sizes::{
    BRIDGE_JS_GZIP_BUDGET, BridgeSizes, HOST_WASM_BROTLI_GOAL, HostModuleSizes, ServedSize, Size,
};
use crate::transfer::Transfers;

#[derive(Serialize)]
struct Report<'a> {
    bridge_js: BridgeJs,
    bridge_js_parts: Parts<'a>,
    host_module: HostModule,
    host_add_lines_1000: AddLines,
    host_context_get: ContextGet,
    host_open_quote: OpenQuoteJson,
    app_cold_load: ColdLoadJson,
    host_browser: &'a str,
    rest_products_500: Rest,
    rest_products_500_postgres: RestPostgres,
    rest_products_500_postgres_two_instances: RestTwo,
    http_transfer: &'a Transfers,
}

#[derive(Serialize)]
struct BridgeJs {
    raw: u64,
    gzip: u64,
    gzip_budget: u64,
    over: bool,
}

/// The host module as served (`host/dist`): its wasm against the goal for its brotli, and its
/// glue.
#[derive(Serialize)]
struct HostModule {
    wasm: ServedSize,
    glue: ServedSize,
    wasm_brotli_goal: u64,
    within_goal: bool,
}

/// The parts of bridge.js by name, in the order they are measured.
struct Parts<'a>(&'a [(&'static str, Size)]);

impl Serialize for Parts<'_> {
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        serializer.collect_map(self.0.iter().map(|(name, size)| (name, size)))
    }
}

#[derive(Serialize)]
struct AddLines {
    median_ms: f64,
    samples: usize,
    catalog_products: u64,
    max_median_ms: f64,
    within_budget: bool,
    /// Where the time goes, phase by phase (means over the samples).
    phases_mean_ms: AddLinesPhases,
}

#[derive(Serialize)]
struct ContextGet {
    median_ms: f64,
    host_median_ms: f64,
    echo_median_ms: f64,
    ratio: Option<f64>,
    max_ratio: f64,
    samples: usize,
    within_budget: bool,
}

#[derive(Serialize)]
struct Rest {
    requests_per_sec: f64,
    p99_ms: f64,
    min_requests_per_sec: f64,
    max_p99_ms: f64,
    within_budget: bool,
}

/// One instance on `PostgreSQL`, against `SQLite`'s figure.
#[derive(Serialize)]
struct RestPostgres {
    requests_per_sec: f64,
    p99_ms: f64,
    share_of_sqlite: f64,
    min_share_of_sqlite: f64,
    max_p99_ms: f64,
    within_budget: bool,
}

/// Two instances on `PostgreSQL`, loaded at once.
#[derive(Serialize)]
struct RestTwo {
    requests_per_sec: f64,
    highest_p99_ms: f64,
}

/// Everything `bench.json` reports.
pub(crate) struct Measured<'a> {
    pub(crate) sizes: &'a BridgeSizes,
    pub(crate) host_module: &'a HostModuleSizes,
    pub(crate) host: &'a HostFigures,
    pub(crate) cold_load: &'a ColdLoad,
    pub(crate) rest: &'a RestFigures,
    pub(crate) transfers: &'a Transfers,
}

/// The report as JSON text.
pub(crate) fn json(measured: &Measured) -> Result<String, Error> {
    let Measured {
        sizes,
        host_module,
        host,
        cold_load,
        rest: figures,
        transfers,
    } = *measured;
    let rest = figures.sqlite;
    let report = Report {
        bridge_js: BridgeJs {
            raw: sizes.bridge.raw,
            gzip: sizes.bridge.gzip,
            gzip_budget: BRIDGE_JS_GZIP_BUDGET,
            over: sizes.over(),
        },
        bridge_js_parts: Parts(&sizes.parts),
        host_module: HostModule {
            wasm: host_module.wasm,
            glue: host_module.glue,
            wasm_brotli_goal: HOST_WASM_BROTLI_GOAL,
            within_goal: host_module.wasm_within_goal(),
        },
        host_add_lines_1000: AddLines {
            median_ms: rounded(host.add_lines_ms, 3),
            samples: host.samples,
            catalog_products: host.catalog_products,
            max_median_ms: MAX_ADD_LINES_MS,
            within_budget: host.add_lines_within_budget(),
            phases_mean_ms: AddLinesPhases {
                read: rounded(host.add_lines_phases.read, 3),
                validate: rounded(host.add_lines_phases.validate, 3),
                merge: rounded(host.add_lines_phases.merge, 3),
                reply: rounded(host.add_lines_phases.reply, 3),
                notify: rounded(host.add_lines_phases.notify, 3),
            },
        },
        host_context_get: ContextGet {
            median_ms: rounded(host.context_get_ms, 3),
            host_median_ms: rounded(host.context_get_host_ms, 3),
            echo_median_ms: rounded(host.echo_ms, 3),
            ratio: host.ratio().map(|ratio| rounded(ratio, 3)),
            max_ratio: MAX_CONTEXT_GET_RATIO,
            samples: host.samples,
            within_budget: host.context_get_within_budget(),
        },
        host_open_quote: host.open_quote.json(host.catalog_products),
        app_cold_load: cold_load.json(),
        host_browser: &host.browser,
        rest_products_500: Rest {
            requests_per_sec: rounded(rest.requests_per_sec, 1),
            p99_ms: rounded(rest.p99_ms, 2),
            min_requests_per_sec: MIN_REQUESTS_PER_SEC,
            max_p99_ms: MAX_P99_MS,
            within_budget: rest.within_budget(),
        },
        rest_products_500_postgres: RestPostgres {
            requests_per_sec: rounded(figures.postgres.requests_per_sec, 1),
            p99_ms: rounded(figures.postgres.p99_ms, 2),
            share_of_sqlite: rounded(
                figures.postgres.requests_per_sec / rest.requests_per_sec.max(1.0),
                3,
            ),
            min_share_of_sqlite: MIN_POSTGRES_SHARE,
            max_p99_ms: MAX_P99_MS,
            within_budget: figures.postgres_within_budget(),
        },
        rest_products_500_postgres_two_instances: RestTwo {
            requests_per_sec: rounded(figures.postgres_two.requests_per_sec, 1),
            highest_p99_ms: rounded(figures.postgres_two.p99_ms, 2),
        },
        http_transfer: transfers,
    };
    let mut text = serde_json::to_string_pretty(&report)
        .map_err(|e| Error::failed(format!("cannot write bench.json: {e}")))?;
    text.push('\n');
    Ok(text)
}

#[cfg(test)]
mod tests {
    use serde_json::{Value, json};

    use super::*;
    use crate::compare::CompareReport;
    use crate::load::Load;
    use crate::transfer::Transfer;

    const PHASES: AddLinesPhases = AddLinesPhases {
        read: 0.5,
        validate: 1.0,
        merge: 0.4,
        reply: 0.1234,
        notify: 0.05,
    };

    /// `host_open_quote` for the figures of `open_quote::tests::figures(true)`.
    fn open_quote() -> Value {
        json!({"catalog_products": 100_000,
            "first": {"median_ms": 200.0, "samples": 3, "goal_below_ms": 300.0,
                "within_goal": true, "status": 200,
                "index": {"body_bytes": 2_400_001, "from": "browser"},
                "index_decoded_bytes": 7_200_003,
                "phases_mean_ms": {"context": 2.0, "quote": 2.0, "index_fetch": 50.0,
                    "index_parse": 110.0, "index_build": 20.0, "install": 0.5}},
            "repeat": {"median_ms": 10.5, "samples": 2, "goal_below_ms": 50.0,
                "within_goal": true, "status": 304, "index": null,
                "index_decoded_bytes": null,
                "phases_mean_ms": {"context": 2.0, "quote": 2.0, "index_fetch": 50.0,
                    "index_parse": 110.0, "index_build": 20.0, "install": 0.5}},
            "page_first_open": {"ms": 450.0, "phases_ms": {"context": 5.0, "quote": 5.0,
                "index_fetch": 300.0, "index_parse": 100.0, "index_build": 39.0,
                "install": 1.0}}})
    }

    /// `app_cold_load` for the figures of `cold_load::tests::cold_load()`.
    fn cold_load() -> Value {
        let phases = json!({"document": 12.0, "scripts": 388.0, "host_init": 60.0,
            "host_fetch": 35.0, "host_compile_instantiate": 20.0, "app": 190.0,
            "quote_fetch": 3.5, "dom_content_loaded": 398.0});
        let repeat_phases = json!({"document": 12.0, "scripts": 28.0, "host_init": 60.0,
            "host_fetch": 35.0, "host_compile_instantiate": 20.0, "app": 40.0,
            "quote_fetch": 3.5, "dom_content_loaded": 38.0});
        json!({"demo_products": 1000, "quote": "Q-1001", "lines": 2,
            "first_visit": {"median_ms": 650.0, "samples": 3, "goal_below_ms": 500.0,
                "within_goal": false, "host_wasm_transfer_bytes": 260_205,
                "host_wasm_body_bytes": 259_905, "phases_median_ms": phases},
            "repeat": {"median_ms": 140.0, "samples": 3, "goal_below_ms": 150.0,
                "within_goal": true, "host_wasm_transfer_bytes": 300,
                "host_wasm_body_bytes": 259_905, "phases_median_ms": repeat_phases},
            "second_visit_ms": 190.0, "host_wasm_content_type": "application/wasm",
            "host_wasm_initiator": "fetch", "streaming_compile": true,
            "wasm_code_cache_bytes": 135_000})
    }

    /// The host figures the report is made from.
    fn host_figures(compare: CompareReport) -> HostFigures {
        HostFigures {
            add_lines_ms: 2.1,
            add_lines_phases: PHASES,
            context_get_ms: 0.21,
            context_get_host_ms: 0.02,
            echo_ms: 0.15,
            open_quote: crate::open_quote::tests::figures(true),
            samples: 100,
            catalog_products: 100_000,
            browser: "HeadlessChrome \"1\"".to_owned(),
            compare,
        }
    }

    /// The REST figures the report is made from.
    fn rest_figures() -> RestFigures {
        RestFigures {
            sqlite: Load {
                requests_per_sec: 1500.25,
                p99_ms: 12.5,
            },
            postgres: Load {
                requests_per_sec: 700.0,
                p99_ms: 20.0,
            },
            postgres_two: Load {
                requests_per_sec: 1200.0,
                p99_ms: 30.5,
            },
        }
    }

    /// The bytes over HTTP the report is made from.
    fn transfers() -> Transfers {
        Transfers {
            catalog_products: 105_300,
            items: vec![Transfer {
                name: "host_wasm",
                path: "/host/toolbridge_host_bg.wasm",
                identity_bytes: 787_381,
                browser_bytes: 225_839,
                browser_encoding: "br".to_owned(),
                gzip_bytes: 283_330,
                first_browser_ms: 650.5,
                repeat_browser_ms: 1.5,
            }],
        }
    }

    #[test]
    fn the_json_report_lists_the_budget_and_every_part() {
        let compare: CompareReport =
            serde_json::from_str(r#"{"batch": 20, "inFlight": 100, "contenders": {}}"#).unwrap();
        let sizes = BridgeSizes {
            bridge: Size {
                raw: 60_000,
                gzip: 17_000,
            },
            parts: vec![
                ("wasm", Size { raw: 40, gzip: 30 }),
                ("glue", Size { raw: 20, gzip: 10 }),
            ],
        };
        let host_module = HostModuleSizes {
            wasm: ServedSize {
                raw: 923_518,
                gzip: 300_000,
                brotli: 236_212,
            },
            glue: ServedSize {
                raw: 59_665,
                gzip: 12_000,
                brotli: 10_500,
            },
        };
        let text = json(&Measured {
            sizes: &sizes,
            host_module: &host_module,
            host: &host_figures(compare),
            cold_load: &crate::cold_load::tests::cold_load(),
            rest: &rest_figures(),
            transfers: &transfers(),
        })
        .unwrap();
        let parsed: Value = serde_json::from_str(&text).unwrap();
        assert_eq!(
            parsed,
            json!({
                "bridge_js": {"raw": 60000, "gzip": 17000, "gzip_budget": 16384, "over": true},
                "bridge_js_parts": {
                    "wasm": {"raw": 40, "gzip": 30},
                    "glue": {"raw": 20, "gzip": 10}
                },
                "host_module": {
                    "wasm": {"raw": 923_518, "gzip": 300_000, "brotli": 236_212},
                    "glue": {"raw": 59_665, "gzip": 12_000, "brotli": 10_500},
                    "wasm_brotli_goal": 102_400, "within_goal": false
                },
                "host_add_lines_1000": {"median_ms": 2.1, "samples": 100,
                    "catalog_products": 100_000, "max_median_ms": 5.0, "within_budget": true,
                    "phases_mean_ms": {"read": 0.5, "validate": 1.0, "merge": 0.4,
                        "reply": 0.123, "notify": 0.05}},
                "host_context_get": {"median_ms": 0.21, "host_median_ms": 0.02,
                    "echo_median_ms": 0.15, "ratio": 1.4, "max_ratio": 1.5, "samples": 100,
                    "within_budget": true},
                "host_open_quote": open_quote(),
                "app_cold_load": cold_load(),
                "host_browser": "HeadlessChrome \"1\"",
                "rest_products_500": {"requests_per_sec": 1500.3, "p99_ms": 12.5,
                    "min_requests_per_sec": 1000.0, "max_p99_ms": 25.0, "within_budget": true},
                "rest_products_500_postgres": {"requests_per_sec": 700.0, "p99_ms": 20.0,
                    "share_of_sqlite": 0.467, "min_share_of_sqlite": 0.5, "max_p99_ms": 25.0,
                    "within_budget": false},
                "rest_products_500_postgres_two_instances": {"requests_per_sec": 1200.0,
                    "highest_p99_ms": 30.5},
                "http_transfer": {"catalog_products": 105_300,
                    "host_wasm": {"path": "/host/toolbridge_host_bg.wasm",
                        "identity_bytes": 787_381, "browser_bytes": 225_839,
                        "browser_encoding": "br", "gzip_bytes": 283_330,
                        "first_browser_ms": 650.5, "repeat_browser_ms": 1.5}}
            })
        );
        // The keys and the parts in the order they always had.
        let order = [
            "\"bridge_js\"",
            "\"bridge_js_parts\"",
            "\"wasm\"",
            "\"glue\"",
            "\"host_module\"",
            "\"host_add_lines_1000\"",
            "\"host_context_get\"",
            "\"host_open_quote\"",
            "\"app_cold_load\"",
            "\"host_browser\"",
            "\"rest_products_500\"",
            "\"rest_products_500_postgres\"",
            "\"rest_products_500_postgres_two_instances\"",
            "\"http_transfer\"",
        ]
        .map(|key| text.find(key).unwrap());
        assert!(order.is_sorted(), "{text}");
    }
}
