//! Writes the committed seed inputs of the three targets into
//! `seeds/<target>/`, replacing what is there: the requests of the
//! protocol's spec tests (`protocol/tests/spec/`), valid and invalid, plus
//! inputs known to be awkward for JSON readers (lone surrogate escapes,
//! numbers beyond `f64`, `-0`, repeated keys, deep nesting, batches just over
//! a limit).
//!
//! Run from `protocol/fuzz`: `cargo +nightly run --example seeds`.

use std::fs;
use std::path::Path;

use serde_json::{Value, json};
use toolbridge_protocol_fuzz::{DISPOSAL, INSTALL, OAK, RETIRED, TILE, TRAVEL, VINYL};

/// Seeds of one target, by file name.
struct Seeds {
    target: &'static str,
    files: Vec<(String, Vec<u8>)>,
}

impl Seeds {
    fn new(target: &'static str) -> Self {
        Self {
            target,
            files: Vec::new(),
        }
    }

    /// A seed from a value, written as compact JSON.
    fn json(&mut self, name: &str, value: &Value) {
        self.text(name, &value.to_string());
    }

    /// A seed written exactly as given (for text no `Value` can hold).
    fn text(&mut self, name: &str, text: &str) {
        let file = format!("{:02}-{name}.json", self.files.len() + 1);
        assert!(self.files.iter().all(|(other, _)| other != &file));
        self.files.push((file, text.as_bytes().to_vec()));
    }

    fn write(self, dir: &Path) {
        let dir = dir.join(self.target);
        fs::create_dir_all(&dir).expect("create the seed folder");
        for entry in fs::read_dir(&dir).expect("list the seed folder") {
            fs::remove_file(entry.expect("a seed").path()).expect("remove an old seed");
        }
        for (name, bytes) in &self.files {
            fs::write(dir.join(name), bytes).expect("write a seed");
        }
        println!("{}: {} seeds", self.target, self.files.len());
    }
}

/// Text nested `depth` arrays deep around `inner`.
fn nested(depth: usize, inner: &str) -> String {
    format!("{}{inner}{}", "[".repeat(depth), "]".repeat(depth))
}

/// A valid `addLines` line with `extra` fields over it (as the spec tests
/// build theirs).
fn line(extra: Value) -> Value {
    merge(
        json!({"description": "Widget", "qty": 1, "unitPrice": 10, "taxRate": 0.15}),
        extra,
    )
}

fn merge(mut base: Value, extra: Value) -> Value {
    if let (Value::Object(base), Value::Object(extra)) = (&mut base, extra) {
        base.extend(extra);
    }
    base
}

fn wire_message() -> Seeds {
    let mut s = Seeds::new("wire_message");
    let hello =
        json!({"toolbridge": "hello", "protocol": 1, "sdkVersion": "2.1.0", "instance": "k3j2"});
    s.json("hello", &hello);
    s.json(
        "hello-protocol-2",
        &merge(hello.clone(), json!({"protocol": 2})),
    );
    s.json(
        "hello-protocol-string",
        &merge(hello.clone(), json!({"protocol": "1"})),
    );
    s.json(
        "hello-empty-instance",
        &merge(hello.clone(), json!({"instance": ""})),
    );
    s.json(
        "hello-long-instance",
        &merge(hello.clone(), json!({"instance": "x".repeat(129)})),
    );
    s.json(
        "hello-128-chars",
        &merge(hello.clone(), json!({"instance": "é".repeat(128)})),
    );
    s.json("hello-as-array", &json!(["hello", 1, "2.1.0", "k3j2"]));
    s.json(
        "welcome",
        &json!({"toolbridge": "welcome", "protocol": 1, "toolType": "quoting_extension",
                "methods": ["context.get", "quotes.addLines"]}),
    );
    s.json("webpack", &json!({"type": "webpackOk"}));
    s.json("string", &json!("hello"));

    let call = |id: Value, method: &str, params: Option<Value>| {
        let mut call = json!({"jsonrpc": "2.0", "id": id, "method": method});
        if let Some(params) = params {
            call["params"] = params;
        }
        call
    };
    s.json("context-get", &call(json!(1), "context.get", None));
    s.json(
        "products-page-size",
        &call(json!(7), "products.list", Some(json!({"pageSize": 500}))),
    );
    s.json(
        "customers-page-0",
        &call(
            json!(2),
            "customers.list",
            Some(json!({"page": 0, "pageSize": 501})),
        ),
    );
    s.json(
        "jobs-fraction",
        &call(json!(3), "jobs.list", Some(json!({"page": 1.5}))),
    );
    s.json(
        "quotes-list-null",
        &call(json!("q"), "quotes.list", Some(Value::Null)),
    );
    s.json(
        "task-codes",
        &call(
            json!(4),
            "taskTemplates.list",
            Some(json!({"codes": ["INSTALL", " UNDERLAY "], "page": 9})),
        ),
    );
    s.json(
        "cost-codes-bad",
        &call(
            json!(5),
            "costItems.list",
            Some(json!({"codes": ["", 3, null]})),
        ),
    );
    s.json(
        "products-codes",
        &call(
            json!(6),
            "products.list",
            Some(json!({"codes": ["OAK-01"]})),
        ),
    );
    s.json(
        "create",
        &call(
            json!(8),
            "quotes.create",
            Some(json!({"customerName": "Harbour Cafe", "lines": [
                {"description": "Oak", "qty": 2, "unitPrice": 50, "taxRate": 0.15}]})),
        ),
    );
    s.json(
        "add-lines",
        &call(
            json!(9),
            "quotes.addLines",
            Some(json!([line(json!({"linkedItemId": OAK}))])),
        ),
    );
    s.json("unknown-method", &call(json!("a"), "quotes.delete", None));
    s.json(
        "jsonrpc-1",
        &json!({"jsonrpc": "1.0", "id": 1, "method": "context.get"}),
    );
    s.json("no-id", &json!({"jsonrpc": "2.0", "method": "context.get"}));
    s.json("object-id", &call(json!({}), "context.get", None));
    s.json(
        "method-number",
        &json!({"jsonrpc": "2.0", "id": 1, "method": 5}),
    );
    s.json("null", &Value::Null);
    s.json("array", &json!([1]));
    s.text(
        "float-id",
        r#"{"jsonrpc":"2.0","id":1.5,"method":"context.get"}"#,
    );
    s.text(
        "negative-zero-id",
        r#"{"jsonrpc":"2.0","id":-0,"method":"context.get"}"#,
    );
    s.text(
        "u64-id",
        r#"{"jsonrpc":"2.0","id":9223372036854775808,"method":"context.get"}"#,
    );
    s.text(
        "i64-min-id",
        r#"{"jsonrpc":"2.0","id":-9223372036854775808,"method":"context.get"}"#,
    );
    s.text(
        "huge-id",
        r#"{"jsonrpc":"2.0","id":1e400,"method":"context.get"}"#,
    );
    s.text(
        "lone-surrogate-id",
        r#"{"jsonrpc":"2.0","id":"\ud800","method":"context.get"}"#,
    );
    s.text(
        "surrogate-pair-method",
        r#"{"jsonrpc":"2.0","id":"\ud83d\ude00","method":"quotes.\ud83d\ude00"}"#,
    );
    s.text(
        "repeated-keys",
        r#"{"jsonrpc":"2.0","id":1,"method":"quotes.delete","method":"context.get","id":"x"}"#,
    );
    s.text(
        "deep-params",
        &format!(
            r#"{{"jsonrpc":"2.0","id":1,"method":"jobs.list","params":{}}}"#,
            nested(127, "0")
        ),
    );
    s.text("too-deep", &nested(200, ""));
    s.text(
        "truncated",
        r#"{"jsonrpc":"2.0","id":1,"method":"context.g"#,
    );
    s
}

fn add_lines() -> Seeds {
    let mut s = Seeds::new("add_lines");
    let one = |s: &mut Seeds, name: &str, extra: Value| s.json(name, &json!([line(extra)]));
    s.json("empty", &json!([]));
    one(&mut s, "plain", json!({}));
    one(
        &mut s,
        "oak-injects",
        json!({"linkedItemId": OAK, "qty": 12, "unit": "T_SQUARE_METRE", "section": "Kitchen",
               "groupKey": "kitchen", "taxRate": 15}),
    );
    s.json(
        "every-link",
        &json!([
            line(json!({"lineType": "task", "linkedItemId": INSTALL, "groupKey": "hall"})),
            line(json!({"lineType": "cost", "linkedItemId": TRAVEL, "groupKey": "new"})),
            line(json!({"linkedItemId": VINYL, "lineType": "product"})),
            line(json!({"lineType": "cost", "linkedItemId": " DISPOSAL-FEE "})),
            line(json!({"lineType": "task"})),
        ]),
    );
    one(
        &mut s,
        "tile-1000-per-unit",
        json!({"linkedItemId": TILE, "qty": 1e9, "unitPrice": 1e9}),
    );
    one(
        &mut s,
        "oak-16-digit-task-qty",
        json!({"linkedItemId": OAK, "qty": 999_999_999.999_999}),
    );
    one(
        &mut s,
        "oak-uppercase-braces",
        json!({"linkedItemId": format!("{{{}}}", OAK.to_uppercase())}),
    );
    one(&mut s, "retired", json!({"linkedItemId": RETIRED}));
    one(
        &mut s,
        "task-with-product-id",
        json!({"lineType": "task", "linkedItemId": OAK}),
    );
    one(
        &mut s,
        "cost-with-task-id",
        json!({"lineType": "cost", "linkedItemId": INSTALL}),
    );
    one(
        &mut s,
        "disposal-as-product",
        json!({"linkedItemId": DISPOSAL}),
    );
    one(&mut s, "product-id", json!({"productId": OAK}));
    one(
        &mut s,
        "product-id-retired",
        json!({"productId": RETIRED, "linkedItemId": OAK}),
    );
    one(
        &mut s,
        "product-id-on-task",
        json!({"lineType": "task", "productId": OAK}),
    );
    one(
        &mut s,
        "line-type-labour",
        json!({"lineType": "labour", "unit": "m2"}),
    );
    s.json(
        "units",
        &json!([
            line(json!({"unit": "T_SQUARE_METRE"})),
            line(json!({"unit": "T_LINEAR_METRE"})),
            line(json!({"unit": "T_ITEM"}))
        ]),
    );
    one(&mut s, "section-100", json!({"section": "s".repeat(100)}));
    one(
        &mut s,
        "section-101-accents",
        json!({"section": "é".repeat(101)}),
    );
    one(
        &mut s,
        "section-padded",
        json!({"section": format!("   {}   ", "s".repeat(100))}),
    );
    s.json(
        "sections-empty",
        &json!([
            line(json!({"section": ""})),
            line(json!({"section": "   "})),
            line(json!({"section": null}))
        ]),
    );
    one(&mut s, "qty-zero", json!({"qty": 0}));
    one(&mut s, "qty-tiny", json!({"qty": 1e-30}));
    one(&mut s, "qty-too-big", json!({"qty": 1e12}));
    one(&mut s, "qty-string", json!({"qty": "3"}));
    s.json("bare", &json!([{"description": "bare"}]));
    one(&mut s, "price-null", json!({"unitPrice": null}));
    one(
        &mut s,
        "negative-cost",
        json!({"unitPrice": -0.01, "costPrice": -5}),
    );
    one(
        &mut s,
        "buy-and-sell",
        json!({"unitPrice": 55, "costPrice": 40}),
    );
    s.json(
        "tax-forms",
        &json!([
            line(json!({"taxRate": 0})),
            line(json!({"taxRate": 1})),
            line(json!({"taxRate": 15})),
            line(json!({"taxRate": 100})),
            line(json!({"taxRate": 12.5}))
        ]),
    );
    one(&mut s, "tax-100-5", json!({"taxRate": 100.5}));
    one(&mut s, "tax-negative", json!({"taxRate": -0.1}));
    one(
        &mut s,
        "free-text",
        json!({"specification": "2.4 m x 3.1 m, natural oil", "location": "Kitchen", "productCode": "OAK-01"}),
    );
    s.json(
        "code-only",
        &json!([{"productCode": "OAK-01", "qty": 1, "unitPrice": 1, "taxRate": 0}]),
    );
    one(
        &mut s,
        "unknown-field",
        json!({"unitprice": 3, "zebra": {}}),
    );
    s.json("not-an-array", &json!({"lines": []}));
    s.json(
        "line-not-object",
        &json!([line(json!({})), 42, "a line", null, [1, 2]]),
    );
    s.json(
        "every-violation",
        &json!([
            line(json!({"qty": 0})),
            line(json!({})),
            line(json!({"lineType": "x", "section": "s".repeat(101), "taxRate": -1}))
        ]),
    );
    s.json(
        "odd-types",
        &json!([{"description": 5, "section": ["x"], "groupKey": {}, "qty": "1", "unitPrice": true, "taxRate": null}]),
    );
    s.text(
        "over-1000-lines",
        &format!("[{}]", vec!["{}"; 1001].join(",")),
    );
    s.text("string-batch", r#""lines""#);
    s.text("truncated", r#"[{"qty": 1"#);
    s.text("bom", "\u{feff}[]");
    s.text(
        "repeated-keys",
        r#"[{"description":"first","description":"last","qty":2,"unitPrice":1,"taxRate":0.15,"zz":1,"zz":2}]"#,
    );
    s.text(
        "lone-surrogate",
        r#"[{"description":"\udc00","qty":1,"unitPrice":1,"taxRate":0}]"#,
    );
    s.text(
        "lone-surrogate-unknown",
        r#"[{"note":"\ud800","qty":1,"unitPrice":1,"taxRate":0}]"#,
    );
    s.text(
        "surrogate-pair",
        r#"[{"groupKey":"\ud83d\ude00","qty":1,"unitPrice":1,"taxRate":0}]"#,
    );
    s.text("qty-1e400", r#"[{"qty":1e400,"unitPrice":1,"taxRate":0}]"#);
    s.text(
        "negative-zeros",
        r#"[{"qty":1,"unitPrice":-0,"costPrice":-0.0,"taxRate":-0}]"#,
    );
    s.text(
        "big-integers",
        r#"[{"qty":18446744073709551616,"unitPrice":9223372036854775808,"taxRate":1.0000000000000002}]"#,
    );
    s.text(
        "deep-field",
        &format!(
            r#"[{{"qty":{},"unitPrice":1,"taxRate":0}}]"#,
            nested(126, "1")
        ),
    );
    s.text("too-deep", &nested(200, ""));
    s
}

fn create_quote() -> Seeds {
    let mut s = Seeds::new("create_quote");
    let bridge_line = |extra: Value| {
        merge(
            json!({"description": "Oak", "qty": 2, "unitPrice": 50, "taxRate": 0.15}),
            extra,
        )
    };
    let rest_line = |extra: Value| merge(json!({"skuId": OAK, "qty": 2, "unitPrice": 50}), extra);
    let bridge = |lines: Vec<Value>| json!({"customerName": "Harbour Cafe", "lines": lines});
    let rest = |lines: Vec<Value>| json!({"customerId": "c-1", "lines": lines});

    s.json("bridge", &bridge(vec![bridge_line(json!({}))]));
    s.json("rest", &rest(vec![rest_line(json!({}))]));
    s.json("no-lines", &bridge(vec![]));
    s.json("lines-missing", &json!({"customerName": "A"}));
    let minimal = json!({"qty": 1, "unitPrice": 0, "taxRate": 0});
    s.json("200-lines", &bridge(vec![minimal.clone(); 200]));
    s.json("201-lines", &bridge(vec![minimal; 201]));
    for (name, extra) in [
        ("qty-10000", json!({"qty": 10000})),
        ("qty-10000-0001", json!({"qty": 10000.0001})),
        ("qty-zero", json!({"qty": 0})),
        ("qty-negative", json!({"qty": -1})),
        ("price-0", json!({"unitPrice": 0})),
        ("price-1000000", json!({"unitPrice": 1_000_000})),
        ("price-over", json!({"unitPrice": 1_000_000.01})),
        ("price-negative", json!({"unitPrice": -0.01})),
        ("tax-1", json!({"taxRate": 1})),
        ("tax-15", json!({"taxRate": 15})),
        ("tax-negative", json!({"taxRate": -0.1})),
        ("product-code", json!({"productCode": " oak-01 "})),
    ] {
        s.json(name, &bridge(vec![bridge_line(extra)]));
    }
    s.json(
        "tax-missing",
        &json!({"customerName": "A", "lines": [{"qty": 1, "unitPrice": 1}]}),
    );
    s.json(
        "upsert-without-email",
        &json!({"upsertByEmail": true, "customerName": "A", "lines": [bridge_line(json!({}))]}),
    );
    s.json(
        "upsert",
        &json!({"upsertByEmail": true, "customerEmail": " Ann@Example.test ", "customerName": "Ann",
                "customerPhone": "555", "title": " Kitchen ", "quoteRef": "R-1",
                "lines": [bridge_line(json!({}))]}),
    );
    s.json(
        "job",
        &json!({"jobId": "j-1", "upsertByEmail": true, "customerEmail": "a@example.test",
                "lines": [bridge_line(json!({}))]}),
    );
    s.json("no-customer", &json!({"lines": [bridge_line(json!({}))]}));
    s.json(
        "bad-email",
        &json!({"upsertByEmail": true, "customerEmail": "not-an-email", "lines": [bridge_line(json!({}))]}),
    );
    s.json(
        "every-violation",
        &json!({"upsertByEmail": true, "lines": [bridge_line(json!({"qty": 0})),
                bridge_line(json!({"unitPrice": -1, "taxRate": 2}))]}),
    );
    s.json(
        "rest-no-ids",
        &json!({"lines": [{"qty": 1, "unitPrice": 1}]}),
    );
    s.json(
        "rest-blank-customer",
        &json!({"customerId": "   ", "lines": [rest_line(json!({"skuId": ""}))]}),
    );
    s.json(
        "rest-tax",
        &rest(vec![rest_line(
            json!({"taxRate": 0.2, "description": "Oak"}),
        )]),
    );
    s.json(
        "rest-bridge-fields",
        &json!({"customerId": "c", "upsertByEmail": true, "lines": [rest_line(json!({}))]}),
    );
    s.json(
        "case-typo",
        &json!({"customername": "A", "Lines": [], "lines": [bridge_line(json!({"QTY": 1}))]}),
    );
    s.json(
        "empty-name-field",
        &json!({"": 1, "customerName": "A", "lines": [bridge_line(json!({"": 2}))]}),
    );
    s.json("array", &json!([1, 2]));
    s.json(
        "lines-not-objects",
        &json!({"customerId": "c", "lines": [null, 1, "x", []]}),
    );
    s.json(
        "lines-object",
        &json!({"customerName": "A", "lines": {"0": {}}}),
    );
    s.json(
        "long-title",
        &json!({"customerName": "A", "title": "t".repeat(1001), "lines": [bridge_line(json!({}))]}),
    );
    s.text("null", "null");
    s.text(
        "qty-1e400",
        r#"{"customerName":"A","lines":[{"qty":1e400,"unitPrice":1,"taxRate":0}]}"#,
    );
    s.text(
        "negative-zeros",
        r#"{"customerName":"A","lines":[{"qty":1,"unitPrice":-0,"taxRate":-0.0}]}"#,
    );
    s.text(
        "lone-surrogate",
        r#"{"customerName":"\ud800","lines":[{"qty":1,"unitPrice":1,"taxRate":0}]}"#,
    );
    s.text(
        "repeated-keys",
        r#"{"customerName":"A","customerName":" ","lines":[],"lines":[{"qty":1,"unitPrice":1,"taxRate":0}]}"#,
    );
    s.text(
        "deep",
        &format!(r#"{{"customerName":"A","lines":{}}}"#, nested(127, "{}")),
    );
    s
}

fn main() {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("seeds");
    for seeds in [wire_message(), add_lines(), create_quote()] {
        seeds.write(&dir);
    }
}
