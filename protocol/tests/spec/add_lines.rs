//! `quotes.addLines` validation: SPEC.md Method rule 4, Limits, and the
//! batch rules of DESIGN.md §4.

use serde_json::{Value, json};
use toolbridge_protocol::ErrorCode;
use toolbridge_protocol::add_lines::{LineType, Unit, ValidBatch, validate_batch};

use crate::fixtures::{INSTALL, OAK, RETIRED, TRAVEL, catalog, d, line, paths};

fn validate(lines: Value) -> Result<ValidBatch, toolbridge_protocol::Error> {
    validate_batch(&lines, &catalog())
}

fn one(extra: Value) -> Result<ValidBatch, toolbridge_protocol::Error> {
    validate(json!([line(extra)]))
}

fn message_at(error: &toolbridge_protocol::Error, path: &str) -> String {
    error.details().iter().find(|v| v.path == path).map_or_else(
        || panic!("no violation at {path}: {error:?}"),
        |v| v.message.clone(),
    )
}

#[test]
fn add_lines_rejects_unknown_line_type_naming_the_choices() {
    let error = one(json!({"lineType": "labour"})).unwrap_err();
    assert_eq!(error.code(), ErrorCode::InvalidParams);
    let message = message_at(&error, "lines[0].lineType");
    assert!(message.contains("\"labour\""), "{message}");
    assert!(
        message.contains("\"product\", \"task\", \"cost\""),
        "{message}"
    );
}

#[test]
fn add_lines_line_type_tokens_are_exact() {
    assert!(one(json!({"lineType": "Product"})).is_err());
    for token in ["product", "task", "cost"] {
        let batch = one(json!({"lineType": token})).unwrap();
        assert_eq!(
            batch.lines[0].line_type,
            LineType::from_token(token).unwrap()
        );
    }
}

#[test]
fn add_lines_line_type_defaults_to_product() {
    let batch = one(json!({})).unwrap();
    assert_eq!(batch.lines[0].line_type, LineType::Product);
}

#[test]
fn add_lines_rejects_unknown_unit() {
    let error = one(json!({"unit": "m2"})).unwrap_err();
    let message = message_at(&error, "lines[0].unit");
    assert!(message.contains("T_SQUARE_METRE"), "{message}");
}

#[test]
fn add_lines_unit_defaults_to_item_and_accepts_the_three_tokens() {
    assert_eq!(one(json!({})).unwrap().lines[0].unit, Unit::Item);
    for (token, unit) in [
        ("T_ITEM", Unit::Item),
        ("T_SQUARE_METRE", Unit::SquareMetre),
        ("T_LINEAR_METRE", Unit::LinearMetre),
    ] {
        assert_eq!(one(json!({ "unit": token })).unwrap().lines[0].unit, unit);
    }
}

#[test]
fn add_lines_rejects_section_over_100_chars_after_trim() {
    let error = one(json!({"section": "s".repeat(101)})).unwrap_err();
    assert!(message_at(&error, "lines[0].section").contains("100"));
}

#[test]
fn add_lines_accepts_section_of_exactly_100_chars() {
    let batch = one(json!({"section": "s".repeat(100)})).unwrap();
    assert_eq!(batch.lines[0].section.as_deref().map(str::len), Some(100));
}

#[test]
fn add_lines_section_limit_counts_after_trimming() {
    let padded = format!("   {}   ", "s".repeat(100));
    let batch = one(json!({ "section": padded })).unwrap();
    assert_eq!(batch.lines[0].section, Some("s".repeat(100)));
}

#[test]
fn add_lines_section_limit_counts_characters_not_bytes() {
    // 100 two-byte characters are 200 bytes but 100 characters.
    assert!(one(json!({"section": "é".repeat(100)})).is_ok());
    assert!(one(json!({"section": "é".repeat(101)})).is_err());
}

#[test]
fn add_lines_empty_or_null_section_means_ungrouped() {
    for section in [json!(""), json!("   "), Value::Null] {
        let batch = one(json!({ "section": section })).unwrap();
        assert_eq!(batch.lines[0].section, None);
    }
}

#[test]
fn add_lines_rejects_linked_item_id_that_is_not_an_active_product() {
    let error = one(json!({"linkedItemId": RETIRED})).unwrap_err();
    let message = message_at(&error, "lines[0].linkedItemId");
    assert!(
        message.contains(RETIRED) && message.contains("product"),
        "{message}"
    );
}

#[test]
fn add_lines_line_type_selects_the_table_linked_item_id_resolves_in() {
    // A product id is not a task template, and a task template is not a cost item.
    assert!(one(json!({"lineType": "task", "linkedItemId": OAK})).is_err());
    assert!(one(json!({"lineType": "cost", "linkedItemId": INSTALL})).is_err());
    assert!(one(json!({"lineType": "product", "linkedItemId": TRAVEL})).is_err());
    assert!(one(json!({"lineType": "task", "linkedItemId": INSTALL})).is_ok());
    assert!(one(json!({"lineType": "cost", "linkedItemId": TRAVEL})).is_ok());
    assert!(one(json!({"lineType": "product", "linkedItemId": OAK})).is_ok());
}

#[test]
fn add_lines_linked_item_ids_match_case_insensitively() {
    let batch = one(json!({"linkedItemId": OAK.to_uppercase()})).unwrap();
    assert_eq!(batch.lines[0].linked_item_id.as_deref(), Some(OAK));
}

#[test]
fn add_lines_linked_item_ids_may_come_in_braces_or_with_spaces() {
    for spelled in [format!("{{{OAK}}}"), format!("  {}  ", OAK.to_uppercase())] {
        let batch = one(json!({"linkedItemId": spelled})).unwrap();
        assert_eq!(
            batch.lines[0].linked_item_id.as_deref(),
            Some(OAK),
            "{spelled}"
        );
    }
    // One hex digit short, or a stray character: not the product.
    for wrong in [&OAK[..35], &format!("{}x", &OAK[..35])] {
        let error = one(json!({"linkedItemId": wrong})).unwrap_err();
        assert!(
            message_at(&error, "lines[0].linkedItemId").contains("not an active"),
            "{wrong}"
        );
    }
}

#[test]
fn add_lines_rejects_qty_of_zero_or_less() {
    for qty in [json!(0), json!(-1), json!(-0.0001)] {
        let error = one(json!({ "qty": qty })).unwrap_err();
        assert!(message_at(&error, "lines[0].qty").contains("greater than 0"));
    }
}

#[test]
fn add_lines_rejects_qty_that_rounds_to_zero_as_a_decimal() {
    assert!(one(json!({"qty": 1e-30})).is_err());
}

#[test]
fn add_lines_qty_has_no_10000_limit_unlike_quotes_create() {
    assert!(one(json!({"qty": 10000})).is_ok());
    assert!(one(json!({"qty": 10000.0001})).is_ok());
    assert!(one(json!({"qty": 250_000})).is_ok());
}

#[test]
fn add_lines_rejects_qty_too_large_to_price_exactly() {
    let error = one(json!({"qty": 1e12})).unwrap_err();
    assert!(message_at(&error, "lines[0].qty").contains("at most"));
}

#[test]
fn add_lines_requires_qty_unit_price_and_tax_rate() {
    let error = validate(json!([{"description": "bare"}])).unwrap_err();
    assert_eq!(
        paths(&error),
        vec!["lines[0].qty", "lines[0].unitPrice", "lines[0].taxRate"]
    );
    assert!(error.details().iter().all(|v| v.message == "is required"));
}

#[test]
fn add_lines_explains_null_numbers_as_nan_or_infinity() {
    let error = one(json!({"unitPrice": null})).unwrap_err();
    assert!(message_at(&error, "lines[0].unitPrice").contains("NaN"));
}

#[test]
fn add_lines_rejects_numbers_sent_as_strings() {
    let error = one(json!({"qty": "3"})).unwrap_err();
    assert_eq!(
        message_at(&error, "lines[0].qty"),
        "must be a number, not a string"
    );
}

#[test]
fn add_lines_rejects_negative_unit_or_cost_price() {
    assert!(one(json!({"unitPrice": -0.01})).is_err());
    assert!(one(json!({"costPrice": -5})).is_err());
    assert!(one(json!({"unitPrice": 0, "costPrice": 0})).is_ok());
}

#[test]
fn add_lines_cost_price_given_sets_buy_and_unit_price_sets_sell() {
    let batch = one(json!({"unitPrice": 55, "costPrice": 40})).unwrap();
    assert_eq!(batch.lines[0].unit_price, d("55"));
    assert_eq!(batch.lines[0].cost_price, d("40"));
}

#[test]
fn add_lines_cost_price_omitted_makes_buy_equal_sell() {
    let batch = one(json!({"unitPrice": 55})).unwrap();
    assert_eq!(batch.lines[0].cost_price, d("55"));
}

#[test]
fn add_lines_tax_rate_fraction_is_kept() {
    assert_eq!(
        one(json!({"taxRate": 0.15})).unwrap().lines[0].tax_rate,
        d("0.15")
    );
    assert_eq!(
        one(json!({"taxRate": 0})).unwrap().lines[0].tax_rate,
        d("0")
    );
}

#[test]
fn add_lines_tax_rate_1_is_a_fraction_meaning_100_percent() {
    assert_eq!(
        one(json!({"taxRate": 1})).unwrap().lines[0].tax_rate,
        d("1")
    );
}

#[test]
fn add_lines_tax_rate_15_is_a_percentage_normalised_to_0_15() {
    assert_eq!(
        one(json!({"taxRate": 15})).unwrap().lines[0].tax_rate,
        d("0.15")
    );
}

#[test]
fn add_lines_tax_rate_100_is_a_percentage_normalised_to_1() {
    assert_eq!(
        one(json!({"taxRate": 100})).unwrap().lines[0].tax_rate,
        d("1")
    );
}

#[test]
fn add_lines_rejects_tax_rate_100_5() {
    let error = one(json!({"taxRate": 100.5})).unwrap_err();
    assert!(message_at(&error, "lines[0].taxRate").contains("15 and 0.15 both mean 15%"));
}

#[test]
fn add_lines_rejects_negative_tax_rate() {
    let error = one(json!({"taxRate": -0.1})).unwrap_err();
    assert!(message_at(&error, "lines[0].taxRate").contains("negative"));
}

#[test]
fn add_lines_maps_specification_location_and_product_code() {
    let batch = one(json!({
        "specification": "2.4 m x 3.1 m, natural oil",
        "location": "Kitchen",
        "productCode": "OAK-01"
    }))
    .unwrap();
    let line = &batch.lines[0];
    assert_eq!(
        line.specification.as_deref(),
        Some("2.4 m x 3.1 m, natural oil")
    );
    assert_eq!(line.location.as_deref(), Some("Kitchen"));
    assert_eq!(line.product_code.as_deref(), Some("OAK-01"));
}

#[test]
fn add_lines_deprecated_product_id_acts_as_linked_item_id_on_product_lines() {
    let batch = one(json!({ "productId": OAK })).unwrap();
    assert_eq!(batch.lines[0].linked_item_id.as_deref(), Some(OAK));
    assert!(batch.used_product_id);
}

#[test]
fn add_lines_deprecated_product_id_that_does_not_resolve_leaves_a_free_form_line() {
    let batch = one(json!({ "productId": RETIRED })).unwrap();
    assert_eq!(batch.lines[0].linked_item_id, None);
    assert!(batch.used_product_id);
}

#[test]
fn add_lines_linked_item_id_wins_over_product_id() {
    let batch = one(json!({ "productId": RETIRED, "linkedItemId": OAK })).unwrap();
    assert_eq!(batch.lines[0].linked_item_id.as_deref(), Some(OAK));
}

#[test]
fn add_lines_rejects_product_id_on_task_or_cost_lines() {
    let error = one(json!({ "lineType": "task", "productId": OAK })).unwrap_err();
    assert!(message_at(&error, "lines[0].productId").contains("linkedItemId"));
}

#[test]
fn add_lines_product_line_without_any_id_is_free_form_without_error() {
    let batch = one(json!({"productCode": "NOT-IN-CATALOG"})).unwrap();
    assert_eq!(batch.lines[0].linked_item_id, None);
    assert!(!batch.used_product_id);
}

#[test]
fn add_lines_task_or_cost_line_without_linked_item_id_is_free_form_of_that_type() {
    let batch = validate(json!([
        line(json!({"lineType": "task"})),
        line(json!({"lineType": "cost"}))
    ]))
    .unwrap();
    assert_eq!(batch.lines[0].line_type, LineType::Task);
    assert_eq!(batch.lines[1].line_type, LineType::Cost);
    assert!(batch.lines.iter().all(|l| l.linked_item_id.is_none()));
}

#[test]
fn add_lines_accepts_a_batch_of_exactly_1000_lines() {
    let lines: Vec<Value> = (0..1000).map(|_| line(json!({}))).collect();
    assert_eq!(validate(Value::Array(lines)).unwrap().lines.len(), 1000);
}

#[test]
fn add_lines_rejects_a_batch_over_1000_lines() {
    let lines: Vec<Value> = (0..1001).map(|_| line(json!({}))).collect();
    let error = validate(Value::Array(lines)).unwrap_err();
    assert_eq!(paths(&error), vec!["lines"]);
    assert!(error.to_string().contains("1001"));
}

#[test]
fn add_lines_lists_every_violation_of_every_line() {
    let error = validate(json!([
        line(json!({"qty": 0})),
        line(json!({})),
        line(json!({"lineType": "x", "section": "s".repeat(101), "taxRate": -1})),
    ]))
    .unwrap_err();
    assert_eq!(
        paths(&error),
        vec![
            "lines[0].qty",
            "lines[2].taxRate",
            "lines[2].lineType",
            "lines[2].section"
        ]
    );
    assert!(
        error
            .to_string()
            .starts_with("lines[0].qty: must be greater than 0")
    );
    assert!(error.to_string().ends_with("(and 3 more problems)"));
}

#[test]
fn add_lines_rejects_unknown_fields_suggesting_the_right_name() {
    let error = one(json!({"unitprice": 3})).unwrap_err();
    assert_eq!(
        message_at(&error, "lines[0].unitprice"),
        "unknown field; did you mean `unitPrice`?"
    );
}

#[test]
fn add_lines_rejects_a_non_array_argument() {
    let error = validate(json!({"lines": []})).unwrap_err();
    assert_eq!(
        error.to_string(),
        "lines: quotes.addLines takes an array of lines, not an object"
    );
}

#[test]
fn add_lines_rejects_a_line_that_is_not_an_object() {
    let error = validate(json!([line(json!({})), 42])).unwrap_err();
    assert_eq!(
        message_at(&error, "lines[1]"),
        "must be an object, not a number"
    );
}

#[test]
fn add_lines_accepts_an_empty_batch_as_nothing_to_do() {
    assert!(validate(json!([])).unwrap().lines.is_empty());
}

/// Found by the `create_quote` fuzz target; batch lines share the path rule.
#[test]
fn add_lines_names_a_field_called_empty_string_by_a_path_of_its_own() {
    let error = one(json!({"": 1})).unwrap_err();
    assert_eq!(paths(&error), vec![r#"lines[0][""]"#]);
}
