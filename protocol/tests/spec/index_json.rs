//! The catalog index's own JSON reader (`catalog::read_index`) accepts exactly what
//! `serde_json` accepts as a `CatalogIndex`, with the same index as the result, and says what is
//! wrong and where when it refuses.

use proptest::prelude::*;
use serde_json::{Value, json};
use toolbridge_protocol::Decimal;
use toolbridge_protocol::catalog::{
    CatalogIndex, IndexedCostItem, IndexedProduct, IndexedTaskTemplate, TaskSequenceStep,
    read_index,
};

use crate::fixtures;

/// The index in `text`, or the message saying why not.
fn read(text: &[u8]) -> Result<CatalogIndex, String> {
    read_index(text, "the index").map_err(|error| error.to_string())
}

/// What `serde_json` makes of `text`: the index, or that it refuses it.
fn by_serde(text: &[u8]) -> Option<CatalogIndex> {
    serde_json::from_slice(text).ok()
}

fn text() -> impl Strategy<Value = String> {
    prop_oneof![
        "[a-zA-Z0-9 _-]{0,16}",
        "\\PC{0,8}",
        Just("caf\u{e9} \"quoted\" back\\slash\n\ttab \u{1f600}".to_owned()),
        Just(String::new()),
    ]
}

fn amount() -> impl Strategy<Value = Decimal> {
    prop_oneof![
        (0_i64..10_000_000, 0_u32..4).prop_map(|(units, scale)| Decimal::new(units, scale)),
        (-1e15_f64..1e15).prop_map(|n| toolbridge_protocol::money::decimal_from_f64(n).unwrap()),
        (1e-12_f64..1.0).prop_map(|n| toolbridge_protocol::money::decimal_from_f64(n).unwrap()),
    ]
}

fn index() -> impl Strategy<Value = CatalogIndex> {
    let step = (text(), amount()).prop_map(|(task_template_id, qty_per_unit)| TaskSequenceStep {
        task_template_id,
        qty_per_unit,
    });
    let product =
        (text(), text(), prop::collection::vec(step, 0..3)).prop_map(|(id, sku, task_sequence)| {
            IndexedProduct {
                id,
                sku,
                task_sequence,
            }
        });
    let template = (text(), text(), text(), amount(), amount()).prop_map(
        |(id, code, name, unit_price, cost_price)| IndexedTaskTemplate {
            id,
            code,
            name,
            unit_price,
            cost_price,
        },
    );
    let cost_item =
        (text(), text(), text(), text()).prop_map(|(id, code, name, item_type)| IndexedCostItem {
            id,
            code,
            name,
            item_type,
        });
    (
        prop::collection::vec(product, 0..4),
        prop::collection::vec(template, 0..3),
        prop::collection::vec(cost_item, 0..3),
    )
        .prop_map(|(products, task_templates, cost_items)| CatalogIndex {
            products,
            task_templates,
            cost_items,
        })
}

/// A JSON value of any kind, to stand as a member the index does not know.
fn any_json() -> impl Strategy<Value = Value> {
    let leaf = prop_oneof![
        Just(Value::Null),
        any::<bool>().prop_map(Value::from),
        any::<i64>().prop_map(Value::from),
        any::<f64>()
            .prop_filter("finite", |n| n.is_finite())
            .prop_map(Value::from),
        text().prop_map(Value::from),
    ];
    leaf.prop_recursive(3, 16, 4, |inner| {
        prop_oneof![
            prop::collection::vec(inner.clone(), 0..4).prop_map(Value::from),
            prop::collection::btree_map(text(), inner, 0..4)
                .prop_map(|members| Value::Object(members.into_iter().collect())),
        ]
    })
}

/// Puts `extra` members into every object of `value`, at its top and in its arrays.
fn with_unknown_members(value: &mut Value, extra: &[(String, Value)]) {
    match value {
        Value::Object(members) => {
            for member in members.values_mut() {
                with_unknown_members(member, extra);
            }
            for (name, member) in extra {
                if !members.contains_key(name) {
                    members.insert(name.clone(), member.clone());
                }
            }
        }
        Value::Array(items) => {
            for item in items {
                with_unknown_members(item, extra);
            }
        }
        _ => {}
    }
}

/// A number as JSON text may write it: any digits, a fraction, an exponent.
fn number_text() -> impl Strategy<Value = String> {
    (
        any::<bool>(),
        "(0|[1-9][0-9]{0,24})",
        prop::option::of("[0-9]{1,24}"),
        prop::option::of(("[eE]", "[+-]?", "[0-9]{1,3}")),
    )
        .prop_map(|(negative, whole, fraction, exponent)| {
            let mut text = String::new();
            if negative {
                text.push('-');
            }
            text.push_str(&whole);
            if let Some(fraction) = fraction {
                text.push('.');
                text.push_str(&fraction);
            }
            if let Some((e, sign, digits)) = exponent {
                text.push_str(&e);
                text.push_str(&sign);
                text.push_str(&digits);
            }
            text
        })
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(2_000))]

    /// Any index as the server writes it reads as `serde_json` reads it, compact or pretty.
    #[test]
    fn property_an_index_the_server_writes_reads_as_serde_reads_it(index in index()) {
        for text in [
            serde_json::to_vec(&index).unwrap(),
            serde_json::to_vec_pretty(&index).unwrap(),
        ] {
            let read = read(&text).unwrap();
            prop_assert_eq!(Some(read), by_serde(&text));
        }
    }

    /// Members the index does not know, of any shape, are skipped, as serde skips them.
    #[test]
    fn property_unknown_members_are_skipped(
        index in index(),
        extra in prop::collection::vec(("[a-z]{1,6}", any_json()), 1..3),
    ) {
        let mut value = serde_json::to_value(&index).unwrap();
        with_unknown_members(&mut value, &extra);
        let text = serde_json::to_vec(&value).unwrap();
        prop_assert_eq!(read(&text).ok(), by_serde(&text));
    }

    /// Any number text in an amount reads as the same amount, or is refused by both.
    #[test]
    fn property_a_number_reads_as_serde_reads_it(number in number_text()) {
        let text = format!(
            r#"{{"products":[],"costItems":[],"taskTemplates":[{{"id":"t","code":"c","name":"n","unitPrice":{number},"costPrice":0}}]}}"#
        );
        prop_assert_eq!(read(text.as_bytes()).ok(), by_serde(text.as_bytes()));
    }

    /// A text changed at one place (a byte dropped, added or replaced) is accepted or refused as
    /// `serde_json` accepts or refuses it, and reads the same when accepted.
    #[test]
    fn property_a_damaged_text_is_judged_as_serde_judges_it(
        index in index(),
        extra in prop::collection::vec(("[a-z]{1,6}", any_json()), 0..2),
        at in any::<prop::sample::Index>(),
        change in 0_u8..3,
        byte in prop::sample::select(b"{}[],:\"\\ 0123456789-+.eEtrufalsn\n\x01\xc3\xa9\xff".to_vec()),
    ) {
        let mut value = serde_json::to_value(&index).unwrap();
        with_unknown_members(&mut value, &extra);
        let mut text = serde_json::to_vec(&value).unwrap();
        let at = at.index(text.len());
        match change {
            0 => { text.remove(at); }
            1 => text.insert(at, byte),
            _ => text[at] = byte,
        }
        prop_assert_eq!(read(&text).ok(), by_serde(&text));
    }
}

#[test]
fn the_fixture_index_reads_as_serde_reads_it() {
    let text = serde_json::to_vec(&fixtures::index()).unwrap();
    assert_eq!(read(&text).unwrap(), fixtures::index());
}

#[test]
fn escapes_read_as_the_characters_they_stand_for() {
    let text = br#"{"products":[{"id":"a\"b\\c\/d\b\f\n\r\t\u00e9\ud83d\ude00","sku":"s"}],"taskTemplates":[],"costItems":[]}"#;
    let read = read(text).unwrap();
    assert_eq!(
        read.products[0].id,
        "a\"b\\c/d\u{8}\u{c}\n\r\t\u{e9}\u{1f600}"
    );
    assert_eq!(Some(read), by_serde(text));
}

#[test]
fn text_that_is_not_json_is_refused_with_its_line_and_column() {
    let text = b"{\"products\": [],\n \"taskTemplates\": [] \"costItems\": []}";
    assert_eq!(
        read(text).unwrap_err(),
        "the index is not JSON (expected `,` or `}` at line 2 column 22)"
    );
    assert!(by_serde(text).is_none());

    for (text, message) in [
        (&b""[..], "EOF while parsing a value at line 1 column 1"),
        (
            b"{\"products\":[],\"taskTemplates\":[],\"costItems\":[]} x",
            "trailing characters",
        ),
        (b"{\"x\":01}", "invalid number"),
        (b"{\"\\ud800\":1}", "lone leading surrogate in hex escape"),
        (
            b"{\"\x01\":1}",
            "control character (\\u0000-\\u001F) found while parsing a string",
        ),
    ] {
        let error = read(text).unwrap_err();
        assert!(
            error.starts_with(&format!("the index is not JSON ({message}")),
            "{error} for {text:?}"
        );
    }
}

#[test]
fn json_that_is_not_an_index_is_refused_at_the_field_at_fault() {
    let cases = [
        (json!([]), "must be an object, not an array"),
        (
            json!({"products": [], "taskTemplates": []}),
            "missing field `costItems`",
        ),
        (
            json!({"products": [{"id": "p", "sku": 7}], "taskTemplates": [], "costItems": []}),
            "products[0].sku: must be a string, not a number",
        ),
        (
            json!({"products": [{"id": "p", "sku": "s", "taskSequence": [{"taskTemplateId": "t"}]}], "taskTemplates": [], "costItems": []}),
            "products[0].taskSequence[0]: missing field `qtyPerUnit`",
        ),
        (
            json!({"products": [], "taskTemplates": [{"id": "t", "code": "c", "name": "n", "unitPrice": "1", "costPrice": 0}], "costItems": []}),
            "taskTemplates[0].unitPrice: must be a number, not a string",
        ),
        (
            json!({"products": null, "taskTemplates": [], "costItems": []}),
            "products: must be an array, not null",
        ),
    ];
    for (value, message) in cases {
        let text = serde_json::to_vec(&value).unwrap();
        assert_eq!(
            read(&text).unwrap_err(),
            format!("the index has an unexpected shape ({message})")
        );
        assert!(by_serde(&text).is_none());
    }

    let twice = br#"{"products": [], "products": [], "taskTemplates": [], "costItems": []}"#;
    assert_eq!(
        read(twice).unwrap_err(),
        "the index has an unexpected shape (duplicate field `products`)"
    );
    assert!(by_serde(twice).is_none());
}

#[test]
fn a_member_the_index_does_not_know_is_skipped_as_serde_skips_it() {
    // Nested deeper than serde_json reads a value (it skips without a limit), numbers beyond
    // `f64`, escapes that stand for no character and bytes that are not UTF-8: only the grammar
    // of a skipped value counts.
    let deep = format!("{}{}", "[".repeat(1000), "]".repeat(1000));
    for skipped in [
        deep.as_bytes(),
        b"1e999",
        b"\"\\ud800 \xff\"",
        b"{\"a\": [1, {\"b\": null}], \"\": -0.0e-0}",
    ] {
        let mut text = b"{\"x\": ".to_vec();
        text.extend_from_slice(skipped);
        text.extend_from_slice(br#", "products": [], "taskTemplates": [], "costItems": []}"#);
        assert_eq!(read(&text).unwrap(), CatalogIndex::default(), "{skipped:?}");
        assert!(by_serde(&text).is_some());
    }
    for (skipped, message) in [
        (&b"[1,]"[..], "expected value"),
        (b"{\"a\" 1}", "expected `:`"),
        (b"{\"a\": 1,}", "key must be a string"),
        (b"[1 2]", "expected `,` or `]`"),
        (b"01", "invalid number"),
        (b"\"\\x\"", "invalid escape"),
        (b"nul", "expected ident"),
    ] {
        let mut text = b"{\"x\": ".to_vec();
        text.extend_from_slice(skipped);
        text.extend_from_slice(br#", "products": [], "taskTemplates": [], "costItems": []}"#);
        let error = read(&text).unwrap_err();
        assert!(
            error.starts_with(&format!("the index is not JSON ({message}")),
            "{error} for {skipped:?}"
        );
        assert!(by_serde(&text).is_none());
    }
}
