//! Editing the open quote by hand: a line's quantity and price, and removing
//! a line with the task lines it injected.

use serde_json::json;
use toolbridge_protocol::ErrorCode;
use toolbridge_protocol::open_quote::{LineEdit, OpenQuote};
use toolbridge_protocol::quote::QuoteStatus;

use crate::fixtures::{OAK, catalog, d, draft, header, line, paths};

/// A Draft with an OAK line of 12 m² (injecting INSTALL and UNDERLAY) and a
/// free-form line.
fn quote_with_oak() -> OpenQuote {
    let mut quote = draft();
    quote
        .add_lines(
            &json!([
                line(json!({"linkedItemId": OAK, "qty": 12, "unit": "T_SQUARE_METRE"})),
                line(json!({"description": "Skirting", "qty": 3})),
            ]),
            &catalog(),
        )
        .unwrap();
    quote
}

fn qtys(quote: &OpenQuote) -> Vec<(u32, String)> {
    quote
        .lines()
        .iter()
        .map(|line| (line.line_no, line.qty.normalize().to_string()))
        .collect()
}

#[test]
fn a_product_quantity_change_carries_its_injected_tasks_in_proportion() {
    let mut quote = quote_with_oak();
    let before = qtys(&quote);
    quote
        .edit_line(
            1,
            &LineEdit {
                qty: Some(d("18")),
                unit_price: Some(d("99.5")),
            },
        )
        .unwrap();
    let after = qtys(&quote);
    assert_ne!(before, after);
    assert_eq!(after[0], (1, "18".to_owned()));
    // Each injected line keeps its share: 12 → 18 is × 1.5.
    for ((no, old), (_, new)) in before.iter().zip(&after).skip(1).take(2) {
        assert_eq!(d(new), (d(old) * d("1.5")).round_dp(4), "line {no}");
    }
    assert_eq!(after[3], before[3], "the free-form line is untouched");
    assert_eq!(quote.lines()[0].unit_price, d("99.5"));
}

#[test]
fn an_edit_out_of_bounds_changes_nothing_and_names_the_field() {
    let mut quote = quote_with_oak();
    let before = quote.clone();
    let error = quote
        .edit_line(
            1,
            &LineEdit {
                qty: Some(d("0")),
                unit_price: Some(d("-1")),
            },
        )
        .unwrap_err();
    assert_eq!(error.code(), ErrorCode::InvalidParams);
    assert_eq!(paths(&error), ["qty", "unitPrice"]);
    assert_eq!(quote, before);

    let error = quote.edit_line(99, &LineEdit::default()).unwrap_err();
    assert_eq!(error.code(), ErrorCode::NotFound);
}

#[test]
fn removing_a_product_removes_the_tasks_it_injected() {
    let mut quote = quote_with_oak();
    let removed = quote.remove_line(1).unwrap();
    assert_eq!(removed, [1, 2, 3]);
    let left: Vec<u32> = quote.lines().iter().map(|line| line.line_no).collect();
    assert_eq!(left, [4]);
    assert_eq!(
        quote.remove_line(1).unwrap_err().code(),
        ErrorCode::NotFound
    );
    // Line numbers are never reused.
    quote
        .add_lines(&json!([line(json!({}))]), &catalog())
        .unwrap();
    assert_eq!(quote.lines()[1].line_no, 5);
}

#[test]
fn a_sent_quote_takes_no_edits() {
    let mut quote = OpenQuote::new(header(QuoteStatus::Sent));
    let error = quote.edit_line(1, &LineEdit::default()).unwrap_err();
    assert_eq!(error.code(), ErrorCode::QuoteLocked);
    assert_eq!(
        quote.remove_line(1).unwrap_err().code(),
        ErrorCode::QuoteLocked
    );
}
