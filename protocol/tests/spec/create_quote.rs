//! `quotes.create` and `POST /api/v1/quotes`: SPEC.md Limits and Method rule
//! 3, and the shared rule set and customer resolution of DESIGN.md §4.

use serde_json::{Value, json};
use toolbridge_protocol::ErrorCode;
use toolbridge_protocol::create_quote::{
    CustomerChoice, LineProduct, NewQuote, validate_bridge_create, validate_rest_create,
};

use crate::fixtures::{OAK, d, paths};

fn bridge_line(extra: Value) -> Value {
    merge(
        json!({"description": "Oak", "qty": 2, "unitPrice": 50, "taxRate": 0.15}),
        extra,
    )
}

fn rest_line(extra: Value) -> Value {
    merge(json!({"skuId": OAK, "qty": 2, "unitPrice": 50}), extra)
}

fn merge(mut base: Value, extra: Value) -> Value {
    if let (Value::Object(base), Value::Object(extra)) = (&mut base, extra) {
        base.extend(extra);
    }
    base
}

fn bridge(lines: Vec<Value>) -> Result<NewQuote, toolbridge_protocol::Error> {
    validate_bridge_create(&json!({"customerName": "Harbour Cafe", "lines": lines}))
}

fn bridge_one(extra: Value) -> Result<NewQuote, toolbridge_protocol::Error> {
    bridge(vec![bridge_line(extra)])
}

fn rest_one(extra: Value) -> Result<NewQuote, toolbridge_protocol::Error> {
    validate_rest_create(&json!({"customerId": "c-1", "lines": [rest_line(extra)]}))
}

#[test]
fn create_rejects_empty_lines() {
    let error = bridge(vec![]).unwrap_err();
    assert_eq!(paths(&error), vec!["lines"]);
    assert!(error.to_string().contains("1 to 200"));
}

#[test]
fn create_requires_lines() {
    let error = validate_bridge_create(&json!({"customerName": "A"})).unwrap_err();
    assert_eq!(error.details()[0].path, "lines");
    assert_eq!(error.details()[0].message, "is required");
}

#[test]
fn create_accepts_1_and_200_lines() {
    assert_eq!(bridge(vec![bridge_line(json!({}))]).unwrap().lines.len(), 1);
    assert_eq!(
        bridge(vec![bridge_line(json!({})); 200])
            .unwrap()
            .lines
            .len(),
        200
    );
}

#[test]
fn create_rejects_more_than_200_lines() {
    let error = bridge(vec![bridge_line(json!({})); 201]).unwrap_err();
    assert!(error.to_string().contains("got 201"));
}

#[test]
fn create_accepts_qty_10000() {
    assert_eq!(
        bridge_one(json!({"qty": 10000})).unwrap().lines[0].qty,
        d("10000")
    );
}

#[test]
fn create_rejects_qty_10000_0001() {
    let error = bridge_one(json!({"qty": 10000.0001})).unwrap_err();
    assert_eq!(paths(&error), vec!["lines[0].qty"]);
    assert!(error.to_string().contains("at most 10000"));
}

#[test]
fn create_rejects_qty_of_zero_or_less() {
    for qty in [0.0, -1.0] {
        let error = bridge_one(json!({ "qty": qty })).unwrap_err();
        assert!(error.to_string().contains("greater than 0"), "{error}");
    }
}

#[test]
fn create_accepts_unit_price_0_and_1000000() {
    assert!(bridge_one(json!({"unitPrice": 0})).is_ok());
    assert!(bridge_one(json!({"unitPrice": 1_000_000})).is_ok());
}

#[test]
fn create_rejects_unit_price_over_1000000_or_negative() {
    assert!(bridge_one(json!({"unitPrice": 1_000_000.01})).is_err());
    let error = bridge_one(json!({"unitPrice": -0.01})).unwrap_err();
    assert!(error.to_string().contains("must not be negative"));
}

#[test]
fn create_tax_rate_is_a_decimal_fraction_up_to_1() {
    assert_eq!(
        bridge_one(json!({"taxRate": 1})).unwrap().lines[0].tax_rate,
        Some(d("1"))
    );
    assert_eq!(
        bridge_one(json!({"taxRate": 0.15})).unwrap().lines[0].tax_rate,
        Some(d("0.15"))
    );
}

#[test]
fn create_rejects_tax_rate_15_saying_0_15_means_15_percent() {
    let error = bridge_one(json!({"taxRate": 15})).unwrap_err();
    assert!(error.to_string().contains("0.15 means 15%"), "{error}");
}

#[test]
fn create_rejects_negative_tax_rate() {
    assert!(bridge_one(json!({"taxRate": -0.1})).is_err());
}

#[test]
fn create_bridge_requires_tax_rate() {
    let error = validate_bridge_create(
        &json!({"customerName": "A", "lines": [{"qty": 1, "unitPrice": 1}]}),
    )
    .unwrap_err();
    assert_eq!(paths(&error), vec!["lines[0].taxRate"]);
}

#[test]
fn create_requires_customer_email_when_upsert_by_email_is_true() {
    let error = validate_bridge_create(&json!({
        "upsertByEmail": true, "customerName": "A", "lines": [bridge_line(json!({}))]
    }))
    .unwrap_err();
    assert_eq!(paths(&error), vec!["customerEmail"]);
    assert!(error.to_string().contains("upsertByEmail"));
}

#[test]
fn create_upsert_by_email_is_optional_and_defaults_to_false() {
    let quote = validate_bridge_create(&json!({
        "customerName": "A", "customerEmail": "a@example.test", "lines": [bridge_line(json!({}))]
    }))
    .unwrap();
    assert!(matches!(quote.customer, CustomerChoice::New { .. }));
}

#[test]
fn create_upsert_by_email_matches_or_creates_by_email() {
    let quote = validate_bridge_create(&json!({
        "upsertByEmail": true, "customerEmail": " Ann@Example.test ", "customerName": "Ann",
        "lines": [bridge_line(json!({}))]
    }))
    .unwrap();
    assert_eq!(
        quote.customer,
        CustomerChoice::UpsertByEmail {
            email: "Ann@Example.test".into(),
            name: Some("Ann".into()),
            phone: None
        }
    );
}

#[test]
fn create_job_id_takes_precedence_for_the_customer() {
    let quote = validate_bridge_create(&json!({
        "jobId": "j-1", "upsertByEmail": true, "customerEmail": "a@example.test",
        "lines": [bridge_line(json!({}))]
    }))
    .unwrap();
    assert_eq!(
        quote.customer,
        CustomerChoice::FromJob {
            job_id: "j-1".into()
        }
    );
}

#[test]
fn create_without_any_customer_is_invalid_and_says_what_to_give() {
    let error = validate_bridge_create(&json!({"lines": [bridge_line(json!({}))]})).unwrap_err();
    assert!(error.to_string().contains("jobId"), "{error}");
}

#[test]
fn create_rejects_a_malformed_email() {
    let error = validate_bridge_create(&json!({
        "upsertByEmail": true, "customerEmail": "not-an-email", "lines": [bridge_line(json!({}))]
    }))
    .unwrap_err();
    assert_eq!(paths(&error), vec!["customerEmail"]);
}

#[test]
fn create_bridge_product_code_is_kept_for_sku_matching() {
    let quote = bridge_one(json!({"productCode": "oak-01"})).unwrap();
    assert_eq!(quote.lines[0].product, LineProduct::Code("oak-01".into()));
    assert_eq!(
        bridge_one(json!({})).unwrap().lines[0].product,
        LineProduct::None
    );
}

#[test]
fn create_lists_every_violation_at_once() {
    let error = validate_bridge_create(&json!({
        "upsertByEmail": true,
        "lines": [bridge_line(json!({"qty": 0})), bridge_line(json!({"unitPrice": -1, "taxRate": 2}))]
    }))
    .unwrap_err();
    assert_eq!(
        paths(&error),
        vec![
            "customerEmail",
            "lines[0].qty",
            "lines[1].unitPrice",
            "lines[1].taxRate"
        ]
    );
}

#[test]
fn create_rest_requires_customer_id_and_sku_id() {
    let error = validate_rest_create(&json!({"lines": [{"qty": 1, "unitPrice": 1}]})).unwrap_err();
    assert_eq!(paths(&error), vec!["customerId", "lines[0].skuId"]);
}

#[test]
fn create_rest_tax_rate_may_be_omitted_for_the_tenant_default() {
    let quote = rest_one(json!({})).unwrap();
    assert_eq!(quote.lines[0].tax_rate, None);
    assert_eq!(quote.lines[0].product, LineProduct::SkuId(OAK.into()));
    assert_eq!(
        quote.customer,
        CustomerChoice::Existing {
            customer_id: "c-1".into()
        }
    );
}

#[test]
fn create_rest_and_bridge_share_one_rule_set() {
    for (field, value) in [
        ("qty", json!(10000.0001)),
        ("qty", json!(0)),
        ("unitPrice", json!(-1)),
        ("taxRate", json!(15)),
    ] {
        let from_bridge = bridge_one(json!({ field: value.clone() })).unwrap_err();
        let from_rest = rest_one(json!({ field: value })).unwrap_err();
        assert_eq!(from_bridge.details(), from_rest.details(), "{field}");
    }
}

#[test]
fn create_rest_rejects_bridge_only_fields() {
    let error = validate_rest_create(
        &json!({"customerId": "c", "upsertByEmail": true, "lines": [rest_line(json!({}))]}),
    )
    .unwrap_err();
    assert_eq!(paths(&error), vec!["upsertByEmail"]);
    assert_eq!(error.code(), ErrorCode::InvalidParams);
}

#[test]
fn create_rejects_a_body_that_is_not_an_object() {
    let error = validate_rest_create(&json!([1, 2])).unwrap_err();
    assert_eq!(
        error.to_string(),
        "the request must be an object, not an array"
    );
}

/// Found by the `create_quote` fuzz target: a field named `""` was reported at
/// the empty path, which means the whole request.
#[test]
fn create_names_a_field_called_empty_string_by_a_path_of_its_own() {
    let error = validate_bridge_create(
        &json!({"": 1, "customerName": "A", "lines": [bridge_line(json!({"": 2}))]}),
    )
    .unwrap_err();
    assert_eq!(paths(&error), vec![r#"[""]"#, r#"lines[0][""]"#]);
    assert!(
        error.to_string().starts_with(r#"[""]: unknown field"#),
        "{error}"
    );
}
