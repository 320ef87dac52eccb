//! A small catalog and quotes to test against.

use serde_json::{Value, json};
use toolbridge_protocol::Decimal;
use toolbridge_protocol::catalog::{
    Catalog, CatalogIndex, IndexedCostItem, IndexedProduct, IndexedTaskTemplate, TaskSequenceStep,
};
use toolbridge_protocol::open_quote::OpenQuote;
use toolbridge_protocol::quote::{QuoteHeader, QuoteStatus, QuoteType};

/// Oak flooring: injects installation (0.5 per m²) and underlay (1 per m²).
pub(crate) const OAK: &str = "0b5f4c1e-0000-4000-8000-000000000001";
/// Vinyl flooring: no task sequence.
pub(crate) const VINYL: &str = "0b5f4c1e-0000-4000-8000-000000000002";
/// A product that is not in the index (inactive or deleted).
pub(crate) const RETIRED: &str = "0b5f4c1e-0000-4000-8000-0000000000ff";
/// Task template INSTALL.
pub(crate) const INSTALL: &str = "7a5c0000-0000-4000-8000-000000000001";
/// Task template UNDERLAY.
pub(crate) const UNDERLAY: &str = "7a5c0000-0000-4000-8000-000000000002";
/// Cost item TRAVEL.
pub(crate) const TRAVEL: &str = "c0570000-0000-4000-8000-000000000001";

pub(crate) fn d(text: &str) -> Decimal {
    text.parse().unwrap()
}

pub(crate) fn index() -> CatalogIndex {
    CatalogIndex {
        products: vec![
            IndexedProduct {
                id: OAK.to_owned(),
                sku: "OAK-01".to_owned(),
                task_sequence: vec![
                    TaskSequenceStep {
                        task_template_id: INSTALL.to_owned(),
                        qty_per_unit: d("0.5"),
                    },
                    TaskSequenceStep {
                        task_template_id: UNDERLAY.to_owned(),
                        qty_per_unit: d("1"),
                    },
                ],
            },
            IndexedProduct {
                id: VINYL.to_owned(),
                sku: "VINYL-02".to_owned(),
                task_sequence: vec![],
            },
        ],
        task_templates: vec![
            IndexedTaskTemplate {
                id: INSTALL.to_owned(),
                code: "INSTALL".to_owned(),
                name: "Installation".to_owned(),
                unit_price: d("45"),
                cost_price: d("30"),
            },
            IndexedTaskTemplate {
                id: UNDERLAY.to_owned(),
                code: "UNDERLAY".to_owned(),
                name: "Underlay".to_owned(),
                unit_price: d("6.5"),
                cost_price: d("4"),
            },
        ],
        cost_items: vec![IndexedCostItem {
            id: TRAVEL.to_owned(),
            code: "TRAVEL".to_owned(),
            name: "Travel".to_owned(),
            item_type: "T_TRAVEL".to_owned(),
        }],
    }
}

pub(crate) fn catalog() -> Catalog {
    Catalog::from_index(index()).unwrap()
}

pub(crate) fn header(status: QuoteStatus) -> QuoteHeader {
    QuoteHeader {
        id: "9d0e0000-0000-4000-8000-000000000001".to_owned(),
        reference: "Q-1001".to_owned(),
        customer_id: "5c000000-0000-4000-8000-000000000001".to_owned(),
        customer_name: "Harbour Cafe".to_owned(),
        job_id: None,
        title: None,
        quote_type: QuoteType::Quote,
        status,
        date: "2026-11-21T09:00:00Z".to_owned(),
        expiry_days: 30,
    }
}

pub(crate) fn draft() -> OpenQuote {
    OpenQuote::new(header(QuoteStatus::Draft))
}

/// A minimal valid line, with `extra` fields merged over it.
pub(crate) fn line(extra: Value) -> Value {
    let mut base = json!({"description": "Widget", "qty": 1, "unitPrice": 10, "taxRate": 0.15});
    if let (Value::Object(base), Value::Object(extra)) = (&mut base, extra) {
        for (key, value) in extra {
            base.insert(key, value);
        }
    }
    base
}

/// The paths of an `INVALID_PARAMS` error.
pub(crate) fn paths(error: &toolbridge_protocol::Error) -> Vec<String> {
    error.details().iter().map(|v| v.path.clone()).collect()
}
