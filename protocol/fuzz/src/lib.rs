//! What the protocol fuzz targets share: a fixed catalog and open quote to
//! merge batches into, and the checks every JSON-RPC error reply must pass.
//!
//! A failed assertion is how a target reports a finding, so the checks here
//! panic rather than return errors.

use std::sync::LazyLock;

use serde_json::{Value, json};
use toolbridge_protocol::catalog::{
    Catalog, CatalogIndex, IndexedCostItem, IndexedProduct, IndexedTaskTemplate, TaskSequenceStep,
};
use toolbridge_protocol::open_quote::OpenQuote;
use toolbridge_protocol::quote::{QuoteHeader, QuoteStatus, QuoteType};
use toolbridge_protocol::rpc::{JSONRPC_VERSION, RpcId, RpcResponse};
use toolbridge_protocol::{Decimal, Error, ErrorCode};

/// Oak flooring: injects installation (0.5 per unit) and underlay (1 per unit).
pub const OAK: &str = "0b5f4c1e-0000-4000-8000-000000000001";
/// Vinyl flooring: no task sequence.
pub const VINYL: &str = "0b5f4c1e-0000-4000-8000-000000000002";
/// Tiles: injects installation at the largest quantity per unit a sequence
/// may hold, and names a template that is not in the index (left out).
pub const TILE: &str = "0b5f4c1e-0000-4000-8000-000000000003";
/// A product that is not in the index (inactive or deleted).
pub const RETIRED: &str = "0b5f4c1e-0000-4000-8000-0000000000ff";
/// Task template INSTALL.
pub const INSTALL: &str = "7a5c0000-0000-4000-8000-000000000001";
/// Task template UNDERLAY.
pub const UNDERLAY: &str = "7a5c0000-0000-4000-8000-000000000002";
/// A task template that is not in the index.
pub const RETIRED_TEMPLATE: &str = "7a5c0000-0000-4000-8000-0000000000ff";
/// Cost item TRAVEL.
pub const TRAVEL: &str = "c0570000-0000-4000-8000-000000000001";
/// A cost item whose id is not a GUID (looked up by its normalised text).
pub const DISPOSAL: &str = "disposal-fee";

/// The catalog and quotes every `add_lines` input is merged into.
pub struct Fixture {
    /// The catalog the batches are validated against.
    pub catalog: Catalog,
    /// A Draft quote that already holds a few lines and two group keys.
    pub draft: OpenQuote,
    /// `draft` as the JSON of its DTO, to compare byte for byte.
    pub draft_json: String,
    /// The same quote once sent: it takes no lines.
    pub sent: OpenQuote,
}

/// The one fixture, built on first use.
pub fn fixture() -> &'static Fixture {
    static FIXTURE: LazyLock<Fixture> = LazyLock::new(build_fixture);
    &FIXTURE
}

fn d(text: &str) -> Decimal {
    text.parse().expect("a decimal literal")
}

fn step(template: &str, qty_per_unit: &str) -> TaskSequenceStep {
    TaskSequenceStep {
        task_template_id: template.to_owned(),
        qty_per_unit: d(qty_per_unit),
    }
}

fn template(id: &str, code: &str, name: &str, sell: &str, buy: &str) -> IndexedTaskTemplate {
    IndexedTaskTemplate {
        id: id.to_owned(),
        code: code.to_owned(),
        name: name.to_owned(),
        unit_price: d(sell),
        cost_price: d(buy),
    }
}

fn cost_item(id: &str, code: &str, name: &str, item_type: &str) -> IndexedCostItem {
    IndexedCostItem {
        id: id.to_owned(),
        code: code.to_owned(),
        name: name.to_owned(),
        item_type: item_type.to_owned(),
    }
}

/// The catalog index of the fixture.
pub fn catalog_index() -> CatalogIndex {
    CatalogIndex {
        products: vec![
            IndexedProduct {
                id: OAK.to_owned(),
                sku: "OAK-01".to_owned(),
                task_sequence: vec![step(INSTALL, "0.5"), step(UNDERLAY, "1")],
            },
            IndexedProduct {
                id: VINYL.to_owned(),
                sku: "VINYL-02".to_owned(),
                task_sequence: vec![],
            },
            IndexedProduct {
                id: TILE.to_owned(),
                sku: "TILE-03".to_owned(),
                task_sequence: vec![step(RETIRED_TEMPLATE, "2"), step(INSTALL, "1000")],
            },
        ],
        task_templates: vec![
            template(INSTALL, "INSTALL", "Installation", "45", "30"),
            template(UNDERLAY, "UNDERLAY", "Underlay", "6.5", "4"),
        ],
        cost_items: vec![
            cost_item(TRAVEL, "TRAVEL", "Travel", "T_TRAVEL"),
            cost_item(DISPOSAL, "DISPOSAL", "Disposal", "T_DISPOSAL"),
        ],
    }
}

/// The header of the fixture's quote.
pub fn header(status: QuoteStatus) -> QuoteHeader {
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

/// The lines the fixture's quote starts with: an oak floor (which injects
/// two task lines) in group `kitchen`, and travel in group `hall`.
pub fn existing_lines() -> Value {
    json!([
        {"description": "Oak floor", "linkedItemId": OAK, "qty": 12, "unit": "T_SQUARE_METRE",
         "unitPrice": 89.5, "costPrice": 60, "taxRate": 15, "section": " Kitchen ",
         "groupKey": "kitchen"},
        {"description": "Travel", "lineType": "cost", "linkedItemId": TRAVEL, "qty": 1,
         "unitPrice": 40, "taxRate": 0.15, "groupKey": "hall"}
    ])
}

fn build_fixture() -> Fixture {
    let catalog = Catalog::from_index(catalog_index()).expect("the fixture's catalog is valid");
    let mut draft = OpenQuote::new(header(QuoteStatus::Draft));
    draft
        .add_lines(&existing_lines(), &catalog)
        .expect("the fixture's lines are valid");
    let mut dto = draft.to_dto();
    let draft_json = serde_json::to_string(&dto).expect("a quote serialises");
    dto.header.status = QuoteStatus::Sent;
    let sent = OpenQuote::from_dto(dto).expect("the fixture's quote reopens");
    Fixture {
        catalog,
        draft,
        draft_json,
        sent,
    }
}

/// Checks a failed reply as a tool receives it: its JSON is a JSON-RPC 2.0
/// error response (`jsonrpc: "2.0"`, the request's id or `null`, no
/// `result`, `error.code` the number of `error.data.code`, a message, and
/// for `INVALID_PARAMS` every violation with a message), and it reads back
/// as the same response.
///
/// # Panics
///
/// When the reply breaks any of that: the finding.
pub fn check_error_reply(reply: &RpcResponse, error: &Error, id: Option<&RpcId>) {
    let text = serde_json::to_string(reply).expect("a reply serialises");
    let value: Value = serde_json::from_str(&text).expect("a reply is JSON");
    let object = value.as_object().expect("a reply is an object");
    assert_eq!(
        object.get("jsonrpc"),
        Some(&json!(JSONRPC_VERSION)),
        "{text}"
    );
    let expected_id = id.map_or(Value::Null, |id| serde_json::to_value(id).expect("an id"));
    assert_eq!(object.get("id"), Some(&expected_id), "{text}");
    assert!(
        !object.contains_key("result"),
        "an error reply has no result: {text}"
    );

    let rpc_error = object["error"].as_object().expect("`error` is an object");
    let code = error.code();
    assert_eq!(
        rpc_error["code"].as_i64(),
        Some(i64::from(code.rpc_code())),
        "{text}"
    );
    assert!((-32768..=-32000).contains(&code.rpc_code()));
    let message = rpc_error["message"]
        .as_str()
        .expect("`error.message` is a string");
    assert!(!message.is_empty(), "{text}");
    let data = rpc_error["data"]
        .as_object()
        .expect("`error.data` is an object");
    let data_code = data["code"]
        .as_str()
        .expect("`error.data.code` is a string");
    assert_eq!(ErrorCode::from_name(data_code), Some(code), "{text}");
    if code == ErrorCode::InvalidParams {
        let details = data["details"]
            .as_array()
            .expect("INVALID_PARAMS has details");
        assert!(!details.is_empty(), "{text}");
        for detail in details {
            assert!(detail["path"].is_string(), "{text}");
            let message = detail["message"].as_str().expect("a detail's message");
            assert!(!message.is_empty(), "{text}");
        }
    }

    let back: RpcResponse = serde_json::from_str(&text).expect("a reply reads back");
    assert_eq!(&back, reply);
}
