//! Merging validated batches into the open quote: DESIGN.md §4 (groups,
//! sections, task injection, BUY/SELL) and the all-or-nothing rule.

use serde_json::json;
use toolbridge_protocol::ErrorCode;
use toolbridge_protocol::add_lines::{LineType, Unit};
use toolbridge_protocol::notification::Deprecation;
use toolbridge_protocol::open_quote::OpenQuote;
use toolbridge_protocol::quote::QuoteStatus;

use crate::fixtures::{
    INSTALL, OAK, RETIRED, TRAVEL, UNDERLAY, VINYL, catalog, d, draft, header, line,
};

#[test]
fn merge_lines_sharing_a_group_key_get_the_same_group_id() {
    let mut quote = draft();
    quote
        .add_lines(
            &json!([
                line(json!({"groupKey": "kitchen"})),
                line(json!({"groupKey": "lounge"})),
                line(json!({"groupKey": "kitchen"})),
            ]),
            &catalog(),
        )
        .unwrap();
    let groups: Vec<u32> = quote.lines().iter().map(|l| l.group_id).collect();
    assert_eq!(groups, vec![1, 2, 1]);
}

#[test]
fn merge_lines_without_group_key_have_group_id_0() {
    let mut quote = draft();
    quote
        .add_lines(&json!([line(json!({}))]), &catalog())
        .unwrap();
    assert_eq!(quote.lines()[0].group_id, 0);
}

#[test]
fn merge_new_group_key_gets_largest_group_id_in_quote_plus_1() {
    let mut quote = draft();
    quote
        .add_lines(
            &json!([
                line(json!({"groupKey": "a"})),
                line(json!({"groupKey": "b"}))
            ]),
            &catalog(),
        )
        .unwrap();
    quote
        .add_lines(&json!([line(json!({"groupKey": "c"}))]), &catalog())
        .unwrap();
    assert_eq!(quote.group_keys().get("c"), Some(&3));
}

#[test]
fn merge_group_key_keeps_its_group_id_across_batches() {
    let mut quote = draft();
    quote
        .add_lines(&json!([line(json!({"groupKey": "kitchen"}))]), &catalog())
        .unwrap();
    quote
        .add_lines(&json!([line(json!({"groupKey": "hall"}))]), &catalog())
        .unwrap();
    quote
        .add_lines(&json!([line(json!({"groupKey": "kitchen"}))]), &catalog())
        .unwrap();
    let ids: Vec<u32> = quote.lines().iter().map(|l| l.group_id).collect();
    assert_eq!(ids, vec![1, 2, 1]);
}

#[test]
fn merge_group_ids_survive_a_round_trip_through_the_backend_form() {
    let mut quote = draft();
    quote
        .add_lines(&json!([line(json!({"groupKey": "kitchen"}))]), &catalog())
        .unwrap();
    let mut reopened = OpenQuote::from_dto(quote.to_dto()).unwrap();
    reopened
        .add_lines(
            &json!([
                line(json!({"groupKey": "kitchen"})),
                line(json!({"groupKey": "new"}))
            ]),
            &catalog(),
        )
        .unwrap();
    let ids: Vec<u32> = reopened.lines().iter().map(|l| l.group_id).collect();
    assert_eq!(ids, vec![1, 1, 2]);
}

#[test]
fn merge_section_is_trimmed_and_empty_renders_ungrouped() {
    let mut quote = draft();
    quote
        .add_lines(
            &json!([
                line(json!({"section": "  Kitchen  "})),
                line(json!({"section": ""}))
            ]),
            &catalog(),
        )
        .unwrap();
    assert_eq!(quote.lines()[0].section.as_deref(), Some("Kitchen"));
    assert_eq!(quote.lines()[1].section, None);
}

#[test]
fn merge_product_with_task_sequence_injects_task_lines_right_after_it() {
    let mut quote = draft();
    let report = quote
        .add_lines(
            &json!([
                line(
                    json!({"linkedItemId": OAK, "qty": 12, "unit": "T_SQUARE_METRE",
                             "section": "Kitchen", "groupKey": "kitchen", "taxRate": 15})
                ),
                line(json!({"description": "after"})),
            ]),
            &catalog(),
        )
        .unwrap();
    assert_eq!((report.lines_added, report.tasks_injected), (2, 2));
    let lines = quote.lines();
    assert_eq!(lines.len(), 4);
    let product = &lines[0];
    for (task, template, name, qty, sell, buy) in [
        (&lines[1], INSTALL, "Installation", "6", "45", "30"),
        (&lines[2], UNDERLAY, "Underlay", "12", "6.5", "4"),
    ] {
        assert_eq!(task.line_type, LineType::Task);
        assert_eq!(task.linked_item_id.as_deref(), Some(template));
        assert_eq!(task.description, name);
        assert_eq!(task.qty, d(qty), "qty = product qty x quantity per unit");
        assert_eq!((task.unit_price, task.cost_price), (d(sell), d(buy)));
        assert_eq!(task.section.as_deref(), Some("Kitchen"));
        assert_eq!(task.group_id, product.group_id);
        assert_eq!(task.tax_rate, d("0.15"));
        assert_eq!(task.unit, Unit::Item);
        assert!(task.injected);
        assert_eq!(task.parent_line_no, Some(product.line_no));
    }
    assert_eq!(lines[3].description, "after");
}

#[test]
fn merge_deprecated_product_id_injects_tasks_like_linked_item_id() {
    let mut quote = draft();
    let report = quote
        .add_lines(&json!([line(json!({"productId": OAK}))]), &catalog())
        .unwrap();
    assert_eq!(report.tasks_injected, 2);
    assert!(report.used_product_id);
    assert_eq!(report.deprecation(), Some(Deprecation::ProductId));
    let linked = quote
        .add_lines(&json!([line(json!({"linkedItemId": OAK}))]), &catalog())
        .unwrap();
    assert_eq!(linked.deprecation(), None);
}

#[test]
fn merge_free_form_product_lines_inject_nothing() {
    let mut quote = draft();
    let report = quote
        .add_lines(
            &json!([
                line(json!({"productId": RETIRED})),
                line(json!({"productCode": "OAK-01"}))
            ]),
            &catalog(),
        )
        .unwrap();
    assert_eq!(report.tasks_injected, 0);
    assert!(quote.lines().iter().all(|l| l.linked_item_id.is_none()));
}

#[test]
fn merge_task_and_cost_lines_inject_nothing() {
    let mut quote = draft();
    let report = quote
        .add_lines(
            &json!([
                line(json!({"lineType": "task", "linkedItemId": INSTALL})),
                line(json!({"lineType": "cost", "linkedItemId": TRAVEL})),
                line(json!({"linkedItemId": VINYL})),
            ]),
            &catalog(),
        )
        .unwrap();
    assert_eq!(report.tasks_injected, 0);
    assert_eq!(quote.lines().len(), 3);
}

#[test]
fn merge_line_description_falls_back_to_product_code() {
    let mut quote = draft();
    quote
        .add_lines(
            &json!([{"productCode": "OAK-01", "qty": 1, "unitPrice": 1, "taxRate": 0}]),
            &catalog(),
        )
        .unwrap();
    assert_eq!(quote.lines()[0].description, "OAK-01");
}

#[test]
fn merge_line_numbers_are_sequential_and_never_reused() {
    let mut quote = draft();
    quote
        .add_lines(&json!([line(json!({"linkedItemId": OAK}))]), &catalog())
        .unwrap();
    quote
        .add_lines(&json!([line(json!({}))]), &catalog())
        .unwrap();
    let numbers: Vec<u32> = quote.lines().iter().map(|l| l.line_no).collect();
    assert_eq!(numbers, vec![1, 2, 3, 4]);
}

#[test]
fn merge_invalid_batch_leaves_the_quote_exactly_as_it_was() {
    let mut quote = draft();
    quote
        .add_lines(
            &json!([line(json!({"groupKey": "a", "linkedItemId": OAK}))]),
            &catalog(),
        )
        .unwrap();
    let before = serde_json::to_string(&quote.to_dto()).unwrap();
    let error = quote
        .add_lines(
            &json!([
                line(json!({"groupKey": "b"})),
                line(json!({"groupKey": "c", "qty": -2}))
            ]),
            &catalog(),
        )
        .unwrap_err();
    assert_eq!(error.code(), ErrorCode::InvalidParams);
    assert_eq!(serde_json::to_string(&quote.to_dto()).unwrap(), before);
    // The keys of the refused batch were not taken either.
    quote
        .add_lines(&json!([line(json!({"groupKey": "b"}))]), &catalog())
        .unwrap();
    assert_eq!(quote.group_keys().get("b"), Some(&2));
}

#[test]
fn merge_refuses_lines_when_the_quote_is_not_draft() {
    for status in [
        QuoteStatus::Sent,
        QuoteStatus::Accepted,
        QuoteStatus::Rejected,
        QuoteStatus::Expired,
    ] {
        let mut quote = OpenQuote::new(header(status));
        let error = quote
            .add_lines(&json!([line(json!({}))]), &catalog())
            .unwrap_err();
        assert_eq!(error.code(), ErrorCode::QuoteLocked);
        assert!(error.to_string().contains(status.as_str()));
        assert!(quote.lines().is_empty());
    }
}

#[test]
fn merge_refuses_a_batch_that_would_overfill_the_quote() {
    let mut quote = draft();
    let batch: Vec<_> = (0..1000).map(|_| line(json!({}))).collect();
    for _ in 0..10 {
        quote.add_lines(&json!(batch), &catalog()).unwrap();
    }
    let error = quote
        .add_lines(&json!([line(json!({}))]), &catalog())
        .unwrap_err();
    assert!(error.to_string().contains("at most 10000"));
    assert_eq!(quote.lines().len(), 10_000);
}

#[test]
fn open_quote_from_backend_rejects_lines_that_break_the_bounds() {
    let mut quote = draft();
    quote
        .add_lines(&json!([line(json!({})), line(json!({}))]), &catalog())
        .unwrap();
    let mut dto = quote.to_dto();
    dto.lines[1].line.line_no = dto.lines[0].line.line_no;
    dto.lines[0].line.tax_rate = d("15");
    let error = OpenQuote::from_dto(dto).unwrap_err();
    let paths = crate::fixtures::paths(&error);
    assert_eq!(paths, vec!["lines[0].taxRate", "lines[1].lineNo"]);
}

#[test]
fn send_quote_moves_draft_to_sent_which_locks_it() {
    assert_eq!(QuoteStatus::Draft.send("Q-1"), Ok(QuoteStatus::Sent));
    assert!(!QuoteStatus::Sent.is_editable());
    for status in [
        QuoteStatus::Sent,
        QuoteStatus::Accepted,
        QuoteStatus::Rejected,
        QuoteStatus::Expired,
    ] {
        assert_eq!(
            status.send("Q-1").unwrap_err().code(),
            ErrorCode::QuoteLocked
        );
    }
}

#[test]
fn create_result_url_is_the_relative_deep_link_of_the_quote() {
    use toolbridge_protocol::quote::BridgeCreateQuoteResult;
    assert_eq!(BridgeCreateQuoteResult::deep_link("9d0e"), "/quotes/9d0e");
}

#[test]
fn open_quote_from_backend_bounds_every_text_field() {
    let mut quote = draft();
    quote
        .add_lines(&json!([line(json!({}))]), &catalog())
        .unwrap();
    let mut dto = quote.to_dto();
    dto.lines[0].line.description = "d".repeat(1001);
    dto.lines[0].line.location = Some("l".repeat(1001));
    dto.group_keys.insert("k".repeat(1001), 7);
    let error = OpenQuote::from_dto(dto).unwrap_err();
    assert_eq!(
        crate::fixtures::paths(&error),
        vec!["lines[0].description", "lines[0].location", "groupKeys"]
    );
}
