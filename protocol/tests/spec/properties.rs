//! Properties of the merge (10 000 generated cases each) and of number conversion.

use proptest::prelude::*;
use serde_json::{Value, json};
use toolbridge_protocol::Decimal;
use toolbridge_protocol::add_lines::{FieldValue, LINE_FIELDS};
use toolbridge_protocol::money::{decimal_from_f64, fifteen_digits};
use toolbridge_protocol::open_quote::OpenQuote;

use crate::fixtures::{INSTALL, OAK, RETIRED, TRAVEL, VINYL, catalog, draft};

const GROUP_KEYS: [&str; 4] = ["kitchen", "lounge", "hall", "bath"];

/// A valid `addLines` line: quantities and prices in cents, every tax form,
/// sections with and without padding, group keys, and every kind of link.
fn valid_line() -> impl Strategy<Value = Value> {
    let links = prop_oneof![
        Just(json!({})),
        Just(json!({"linkedItemId": OAK})),
        Just(json!({"linkedItemId": VINYL, "lineType": "product"})),
        Just(json!({"linkedItemId": INSTALL, "lineType": "task"})),
        Just(json!({"linkedItemId": TRAVEL, "lineType": "cost"})),
        Just(json!({"lineType": "task"})),
        Just(json!({"productId": OAK})),
        Just(json!({"productId": RETIRED})),
    ];
    (
        1u32..1_000_000,
        0u32..10_000_000,
        proptest::option::of(0u32..10_000_000),
        prop::sample::select(vec![0.0, 0.15, 1.0, 15.0, 12.5, 100.0]),
        proptest::option::of(prop::sample::select(vec![
            "",
            " Kitchen ",
            "Hall",
            "Bathroom",
        ])),
        proptest::option::of(prop::sample::select(GROUP_KEYS.to_vec())),
        links,
    )
        .prop_map(|(qty, price, cost, tax, section, group, link)| {
            let mut line = json!({
                "description": "line",
                "qty": f64::from(qty) / 100.0,
                "unitPrice": f64::from(price) / 100.0,
                "taxRate": tax,
            });
            let fields = line.as_object_mut().unwrap();
            if let Some(cost) = cost {
                fields.insert("costPrice".into(), json!(f64::from(cost) / 100.0));
            }
            if let Some(section) = section {
                fields.insert("section".into(), json!(section));
            }
            if let Some(group) = group {
                fields.insert("groupKey".into(), json!(group));
            }
            fields.extend(link.as_object().unwrap().clone());
            line
        })
}

/// A line that breaks exactly one rule.
fn invalid_line() -> impl Strategy<Value = Value> {
    let corruption = prop_oneof![
        Just(("qty", json!(0))),
        Just(("qty", json!(-3))),
        Just(("qty", Value::Null)),
        Just(("unitPrice", json!(-1))),
        Just(("taxRate", json!(150))),
        Just(("taxRate", json!(-0.1))),
        Just(("lineType", json!("labour"))),
        Just(("unit", json!("m2"))),
        Just(("section", json!("x".repeat(101)))),
        Just(("linkedItemId", json!(RETIRED))),
        Just(("unitprice", json!(3))),
    ];
    (valid_line(), corruption).prop_map(|(mut line, (field, value))| {
        line.as_object_mut().unwrap().insert(field.into(), value);
        line
    })
}

fn batch() -> impl Strategy<Value = Vec<Value>> {
    prop::collection::vec(valid_line(), 0..8)
}

fn invalid_batch() -> impl Strategy<Value = Vec<Value>> {
    (batch(), invalid_line(), any::<prop::sample::Index>()).prop_map(|(mut lines, bad, at)| {
        let at = at.index(lines.len() + 1);
        lines.insert(at, bad);
        lines
    })
}

fn quote_after(history: &[Vec<Value>]) -> OpenQuote {
    let catalog = catalog();
    let mut quote = draft();
    for batch in history {
        quote.add_lines(&json!(batch), &catalog).unwrap();
    }
    quote
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(10_000))]

    #[test]
    fn property_an_invalid_batch_never_changes_the_quote(
        history in prop::collection::vec(batch(), 0..4),
        bad in invalid_batch(),
    ) {
        let mut quote = quote_after(&history);
        let before = serde_json::to_string(&quote.to_dto()).unwrap();
        prop_assert!(quote.add_lines(&json!(bad), &catalog()).is_err());
        prop_assert_eq!(serde_json::to_string(&quote.to_dto()).unwrap(), before);
    }

    #[test]
    fn property_quote_totals_equal_the_sum_of_line_totals(
        history in prop::collection::vec(batch(), 1..5),
    ) {
        let quote = quote_after(&history);
        let dto = quote.to_dto();
        let sum = |pick: fn(&toolbridge_protocol::money::LineAmounts) -> Decimal| {
            dto.lines.iter().map(|l| pick(&l.amounts)).sum::<Decimal>()
        };
        prop_assert_eq!(dto.totals.nett, sum(|a| a.nett));
        prop_assert_eq!(dto.totals.tax, sum(|a| a.tax));
        prop_assert_eq!(dto.totals.total, sum(|a| a.total));
        prop_assert_eq!(dto.totals.cost, sum(|a| a.cost));
        prop_assert_eq!(dto.totals.margin, dto.totals.nett - dto.totals.cost);
        for line in &dto.lines {
            prop_assert_eq!(line.amounts.total, line.amounts.nett + line.amounts.tax);
            prop_assert_eq!(line.amounts.nett, line.amounts.nett.round_dp(2));
        }
    }

    #[test]
    fn property_a_group_key_keeps_its_group_id_across_batches(
        history in prop::collection::vec(batch(), 1..6),
    ) {
        let catalog = catalog();
        let mut quote = draft();
        for batch in &history {
            let keys_before = quote.group_keys().clone();
            let old_len = quote.lines().len();
            quote.add_lines(&json!(batch), &catalog).unwrap();
            for (key, id) in &keys_before {
                prop_assert_eq!(quote.group_keys().get(key), Some(id));
            }
            let sent: Vec<_> = quote.lines()[old_len..].iter().filter(|l| !l.injected).collect();
            prop_assert_eq!(sent.len(), batch.len());
            for (line, request) in sent.iter().zip(batch) {
                let expected = request["groupKey"].as_str().map_or(0, |k| quote.group_keys()[k]);
                prop_assert_eq!(line.group_id, expected);
            }
            for line in &quote.lines()[old_len..] {
                if let Some(parent) = line.parent_line_no {
                    let parent = quote.lines().iter().find(|l| l.line_no == parent).unwrap();
                    prop_assert_eq!(line.group_id, parent.group_id);
                }
            }
        }
        let mut ids: Vec<u32> = quote.group_keys().values().copied().collect();
        ids.sort_unstable();
        prop_assert_eq!(ids, (1..=u32::try_from(quote.group_keys().len()).unwrap()).collect::<Vec<_>>());
    }

    #[test]
    fn property_merging_never_loses_or_reorders_existing_lines(
        history in prop::collection::vec(batch(), 0..4),
        next in batch(),
    ) {
        let mut quote = quote_after(&history);
        let before = quote.lines().to_vec();
        quote.add_lines(&json!(next), &catalog()).unwrap();
        prop_assert!(quote.lines().len() >= before.len() + next.len());
        prop_assert_eq!(&quote.lines()[..before.len()], &before[..]);
    }
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(100_000))]

    /// A number typed with up to 6 decimal places (and at most 15 digits)
    /// becomes exactly that decimal, whatever binary float carried it.
    #[test]
    fn property_typed_numbers_convert_to_exactly_the_typed_decimal(
        mantissa in -999_999_999_999_999_i64..=999_999_999_999_999,
        places in 0_u32..=6,
    ) {
        #[allow(clippy::cast_precision_loss)]
        let value = mantissa as f64 / 10_f64.powi(places.cast_signed());
        let typed = Decimal::new(mantissa, places).normalize();
        prop_assert_eq!(decimal_from_f64(value), Some(typed), "{}", value);
    }

    /// Any finite float, sums with binary noise included, converts the same
    /// on the fast path as by rounding to 15 significant digits.
    #[test]
    fn property_any_float_converts_like_fifteen_digit_rounding(
        value in proptest::num::f64::NORMAL | proptest::num::f64::SUBNORMAL | proptest::num::f64::ZERO,
        a in -1.0e9_f64..1.0e9,
        b in -1.0e9_f64..1.0e9,
    ) {
        for value in [value, a + b, (a * 100.0).round() / 100.0 + (b * 10.0).round() / 10.0] {
            prop_assert_eq!(decimal_from_f64(value), fifteen_digits(value), "{}", value);
        }
    }
}

/// Lines of objects whose fields are anything JSON holds: known names with
/// values of every kind (numbers with long digits and exponents too),
/// unknown names, names that differ from a known one only in case.
fn object_line() -> impl Strategy<Value = Value> {
    let value = prop_oneof![
        Just(Value::Null),
        any::<bool>().prop_map(Value::from),
        any::<f64>()
            .prop_filter("finite", |n| n.is_finite())
            .prop_map(Value::from),
        (-2_000_000_i64..2_000_000).prop_map(Value::from),
        (0_u32..100_000_000, 0_i32..12)
            .prop_map(|(n, places)| Value::from(f64::from(n) / 10_f64.powi(places))),
        prop::sample::select(vec![
            "",
            " Kitchen ",
            "product",
            "task",
            "cost",
            "T_ITEM",
            "T_LINEAR_METRE",
            "caf\u{e9} \"quoted\"\n",
            "0b5f4c1e-0000-4000-8000-000000000001",
            "0B5F4C1E-0000-4000-8000-000000000002",
            "7a5c0000-0000-4000-8000-000000000001",
            "c0570000-0000-4000-8000-000000000001",
        ])
        .prop_map(Value::from),
        "[a-z ]{0,120}".prop_map(Value::from),
        Just(json!([1, "two"])),
        Just(json!({"nested": true})),
    ];
    let name = prop_oneof![
        8 => prop::sample::select(LINE_FIELDS.to_vec()).prop_map(str::to_owned),
        1 => prop::sample::select(vec!["Qty", "unitprice", "zebra", "", "a b"]).prop_map(str::to_owned),
    ];
    prop::collection::btree_map(name, value, 0..12)
        .prop_map(|fields| Value::Object(fields.into_iter().collect()))
}

/// A line as the host gives it field by field: its known fields by their
/// position in [`LINE_FIELDS`], and the names of the others.
fn field_values(
    line: &serde_json::Map<String, Value>,
) -> ([Option<FieldValue<'_>>; 14], Vec<&str>) {
    let mut known = [None; LINE_FIELDS.len()];
    let mut unknown = Vec::new();
    for (name, value) in line {
        let value = match value {
            Value::Null => FieldValue::Null,
            Value::Bool(flag) => FieldValue::Bool(*flag),
            Value::Number(number) => FieldValue::Number(number.as_f64().unwrap()),
            Value::String(text) => FieldValue::Str(text),
            Value::Array(_) => FieldValue::Array,
            Value::Object(_) => FieldValue::Object,
        };
        match LINE_FIELDS.iter().position(|known| known == name) {
            Some(at) => known[at] = Some(value),
            None => unknown.push(name.as_str()),
        }
    }
    (known, unknown)
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(10_000))]

    /// A batch given line by line and field by field (the host's path for
    /// the objects a page sent) answers exactly as the same lines as a JSON
    /// value do (the host's path for any other batch): the same lines merged,
    /// or the same violations in the same order.
    #[test]
    fn property_lines_given_field_by_field_answer_as_their_value(
        lines in prop_oneof![
            batch(),
            invalid_batch(),
            prop::collection::vec(object_line(), 0..6),
        ],
    ) {
        // The numbers as a parser reads them from the lines' JSON text, as
        // the host makes sure of for the numbers it gives.
        let read: Vec<Value> = serde_json::from_str(&json!(lines).to_string()).unwrap();
        let catalog = catalog();
        let (mut from_value, mut by_field) = (draft(), draft());
        let by_value = from_value.add_lines(&json!(read), &catalog);
        let mut given = by_field.lines_by_field(&catalog, read.len()).unwrap();
        for line in &read {
            let (known, unknown) = field_values(line.as_object().unwrap());
            given.object(&known, &unknown);
        }
        let merged = given
            .finish()
            .and_then(|batch| by_field.merge_valid_lines(batch, &catalog));
        prop_assert_eq!(by_value, merged);
        prop_assert_eq!(from_value, by_field);
    }
}
