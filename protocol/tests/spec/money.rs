//! Money (DESIGN.md §4): decimal arithmetic, half-away-from-zero rounding to
//! 2 places, line amounts and quote totals.

use serde_json::json;
use toolbridge_protocol::money::{LineAmounts, Totals};

use crate::fixtures::{catalog, d, draft, line};

#[test]
fn money_line_nett_is_qty_times_sell_and_cost_is_qty_times_buy() {
    let amounts = LineAmounts::compute(d("3"), d("19.99"), d("12.5"), d("0.15"));
    assert_eq!(amounts.nett, d("59.97"));
    assert_eq!(amounts.cost, d("37.50"));
}

#[test]
fn money_line_tax_is_nett_times_rate_rounded_and_total_is_nett_plus_tax() {
    let amounts = LineAmounts::compute(d("3"), d("19.99"), d("12.5"), d("0.15"));
    assert_eq!(amounts.tax, d("9.00")); // 8.9955 rounds half away from zero
    assert_eq!(amounts.total, d("68.97"));
}

#[test]
fn money_rounds_half_away_from_zero() {
    // 0.5 x 0.01 = 0.005 -> 0.01
    assert_eq!(
        LineAmounts::compute(d("0.5"), d("0.01"), d("0"), d("0")).nett,
        d("0.01")
    );
    // 1.005 is exact in decimal (it is not in binary floating point).
    assert_eq!(
        LineAmounts::compute(d("1"), d("1.005"), d("0"), d("0")).nett,
        d("1.01")
    );
}

#[test]
fn money_has_no_binary_float_drift() {
    // 0.1 + 0.2 typed as floats still sums to exactly 0.30.
    let mut quote = draft();
    quote
        .add_lines(
            &json!([
                line(json!({"unitPrice": 0.1, "taxRate": 0})),
                line(json!({"unitPrice": 0.2, "taxRate": 0}))
            ]),
            &catalog(),
        )
        .unwrap();
    assert_eq!(quote.totals().total, d("0.3"));
}

#[test]
fn money_quote_margin_is_nett_minus_cost_and_margin_percent_is_margin_over_nett() {
    let totals = Totals::sum([
        LineAmounts::compute(d("10"), d("55"), d("40"), d("0.15")),
        LineAmounts::compute(d("1"), d("100"), d("100"), d("0")),
    ]);
    assert_eq!(totals.nett, d("650"));
    assert_eq!(totals.cost, d("500"));
    assert_eq!(totals.margin, d("150"));
    assert_eq!(totals.margin_percent, d("23.08"));
    assert_eq!(totals.tax, d("82.50"));
    assert_eq!(totals.total, d("732.50"));
}

#[test]
fn money_margin_percent_is_0_when_nett_is_0() {
    let totals = Totals::sum([LineAmounts::compute(d("1"), d("0"), d("5"), d("0.15"))]);
    assert_eq!(totals.margin_percent, d("0"));
    assert_eq!(totals.margin, d("-5"));
}

#[test]
fn money_amounts_serialize_as_json_numbers() {
    let totals = Totals::sum([LineAmounts::compute(d("2"), d("9.995"), d("5"), d("0.15"))]);
    assert_eq!(
        serde_json::to_value(totals).unwrap(),
        json!({"cost": 10.0, "margin": 9.99, "marginPercent": 49.97, "nett": 19.99, "tax": 3.0, "total": 22.99})
    );
}
