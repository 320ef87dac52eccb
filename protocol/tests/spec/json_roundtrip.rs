//! JSON written from SPEC.md's field tables parses into the DTOs and
//! serializes back with the same field names.

use serde::Serialize;
use serde::de::DeserializeOwned;
use serde_json::{Value, json};
use toolbridge_protocol::add_lines::{BridgeAddLineDto, LineType, Unit};
use toolbridge_protocol::catalog::{
    BridgeCostItemDto, BridgeProductDto, BridgeTaskTemplateDto, CatalogIndex,
};
use toolbridge_protocol::context::{BridgeContextDto, Role};
use toolbridge_protocol::create_quote::{BridgeCreateQuoteRequest, RestCreateQuoteRequest};
use toolbridge_protocol::customer::BridgeCustomerDto;
use toolbridge_protocol::job::BridgeJobDto;
use toolbridge_protocol::manifest::{ToolManifest, ToolType};
use toolbridge_protocol::paging::BridgePagedResult;
use toolbridge_protocol::quote::{BridgeCreateQuoteResult, BridgeQuoteDto, QuoteDto, QuoteStatus};

use crate::fixtures::{OAK, catalog, draft, index, line};

/// Parses `literal` as `T` and checks it serializes back to the same JSON.
fn round_trip<T: Serialize + DeserializeOwned>(literal: Value) -> T {
    let parsed: T = serde_json::from_value(literal.clone()).unwrap();
    assert_eq!(serde_json::to_value(&parsed).unwrap(), literal);
    parsed
}

#[test]
fn json_context_dto_round_trips() {
    let dto: BridgeContextDto = round_trip(json!({
        "userName": "Mia Office", "userEmail": "mia@example.test", "userRole": "office",
        "tenantName": "Harbour Flooring", "tenantId": "t-1", "cultureCode": "en-NZ"
    }));
    assert_eq!(dto.user_role, Role::Office);
}

#[test]
fn json_role_tokens_are_snake_case() {
    let tokens: Vec<Value> = Role::ALL
        .iter()
        .map(|r| serde_json::to_value(r).unwrap())
        .collect();
    assert_eq!(
        tokens,
        vec![
            json!("super_user"),
            json!("admin"),
            json!("office"),
            json!("field")
        ]
    );
}

#[test]
fn json_customer_dto_round_trips() {
    round_trip::<BridgeCustomerDto>(
        json!({"id": "c-1", "name": "Ann", "email": "ann@example.test", "phone": "021 555"}),
    );
}

#[test]
fn json_product_dto_round_trips() {
    round_trip::<BridgeProductDto>(
        json!({"id": OAK, "sku": "OAK-01", "name": "Oak board", "price": 89.5, "unit": "T_SQUARE_METRE"}),
    );
}

#[test]
fn json_task_template_dto_round_trips() {
    round_trip::<BridgeTaskTemplateDto>(
        json!({"id": "t-1", "code": "INSTALL", "name": "Installation"}),
    );
}

#[test]
fn json_cost_item_dto_round_trips_with_its_type_field() {
    let dto: BridgeCostItemDto =
        round_trip(json!({"id": "c-1", "code": "TRAVEL", "name": "Travel", "type": "T_TRAVEL"}));
    assert_eq!(dto.item_type, "T_TRAVEL");
}

#[test]
fn json_quote_dto_round_trips_with_its_ref_field() {
    let dto: BridgeQuoteDto = round_trip(json!({
        "id": "q-1", "ref": "Q-1001", "customerName": "Ann", "total": 115.0, "status": "Draft",
        "date": "2026-11-21T09:00:00Z"
    }));
    assert_eq!(dto.status, QuoteStatus::Draft);
}

#[test]
fn json_job_dto_round_trips() {
    round_trip::<BridgeJobDto>(json!({
        "id": "j-1", "ref": "J-0042", "customerName": "Ann", "customerIdGuid": "c-1", "status": "Scheduling"
    }));
}

#[test]
fn json_paged_result_round_trips() {
    let page: BridgePagedResult<BridgeTaskTemplateDto> = round_trip(json!({
        "items": [{"id": "t-1", "code": "INSTALL", "name": "Installation"}],
        "totalCount": 7, "page": 1, "pageSize": 1
    }));
    assert_eq!(page.items.len(), 1);
}

#[test]
fn json_create_quote_request_round_trips() {
    round_trip::<BridgeCreateQuoteRequest>(json!({
        "jobId": "j-1", "customerName": "Ann", "customerEmail": "ann@example.test", "customerPhone": "021",
        "upsertByEmail": true, "title": "Deck", "quoteRef": "DECK-1",
        "lines": [{"description": "Oak", "productCode": "OAK-01", "qty": 2.0, "unitPrice": 50.0, "taxRate": 0.15}]
    }));
}

#[test]
fn json_create_quote_result_round_trips_with_and_without_url() {
    round_trip::<BridgeCreateQuoteResult>(
        json!({"id": "q-1", "ref": "Q-1", "total": 1.5, "url": "/quotes/q-1"}),
    );
    round_trip::<BridgeCreateQuoteResult>(json!({"id": "q-1", "ref": "Q-1", "total": 1.5}));
}

#[test]
fn json_add_line_dto_round_trips_with_all_fourteen_fields() {
    let dto: BridgeAddLineDto = round_trip(json!({
        "description": "Oak", "productCode": "OAK-01", "qty": 12.5, "unitPrice": 89.5, "costPrice": 61.0,
        "taxRate": 15.0, "location": "Kitchen", "specification": "3.1 x 4 m", "unit": "T_SQUARE_METRE",
        "groupKey": "kitchen", "lineType": "product", "linkedItemId": OAK, "section": "Kitchen",
        "productId": OAK
    }));
    assert_eq!(
        (dto.unit, dto.line_type),
        (Some(Unit::SquareMetre), Some(LineType::Product))
    );
}

#[test]
fn json_add_line_dto_rejects_unknown_line_type_and_unit_tokens() {
    let bad_type = serde_json::from_value::<BridgeAddLineDto>(
        json!({"qty": 1.0, "unitPrice": 1.0, "taxRate": 0.0, "lineType": "labour"}),
    );
    let message = bad_type.unwrap_err().to_string();
    assert!(
        message.contains("unknown variant `labour`") && message.contains("`task`"),
        "{message}"
    );
    let bad_unit = serde_json::from_value::<BridgeAddLineDto>(
        json!({"qty": 1.0, "unitPrice": 1.0, "taxRate": 0.0, "unit": "m2"}),
    );
    let message = bad_unit.unwrap_err().to_string();
    assert!(
        message.contains("unknown variant `m2`") && message.contains("T_LINEAR_METRE"),
        "{message}"
    );
}

#[test]
fn json_typed_add_line_dto_validates_like_raw_json() {
    let typed = BridgeAddLineDto {
        qty: 2.0,
        unit_price: 10.0,
        tax_rate: 15.0,
        linked_item_id: Some(OAK.into()),
        ..BridgeAddLineDto::default()
    };
    let mut quote = draft();
    quote
        .add_lines(&serde_json::to_value(vec![typed]).unwrap(), &catalog())
        .unwrap();
    assert_eq!(quote.lines().len(), 3);
}

#[test]
fn json_manifest_round_trips_with_its_type_field() {
    let manifest: ToolManifest = round_trip(json!({
        "name": "Flooring estimator", "shortName": "Flooring", "type": "quoting_extension",
        "version": "1.2.0", "description": "Estimates flooring by room.", "entry": "index.html"
    }));
    assert_eq!(manifest.tool_type, ToolType::QuotingExtension);
}

#[test]
fn json_rest_create_request_round_trips() {
    round_trip::<RestCreateQuoteRequest>(json!({
        "customerId": "c-1", "lines": [{"skuId": OAK, "qty": 1.0, "unitPrice": 9.5}]
    }));
}

#[test]
fn json_full_quote_round_trips_with_lines_amounts_and_totals() {
    let mut quote = draft();
    quote
        .add_lines(
            &json!([line(
                json!({"linkedItemId": OAK, "groupKey": "g", "section": "Hall"})
            )]),
            &catalog(),
        )
        .unwrap();
    let literal = serde_json::to_value(quote.to_dto()).unwrap();
    assert_eq!(literal["lines"][0]["lineType"], "product");
    assert_eq!(literal["lines"][1]["injected"], true);
    assert_eq!(literal["lines"][1]["parentLineNo"], 1);
    assert_eq!(literal["lines"][0]["nett"], 10.0);
    assert_eq!(literal["groupKeys"], json!({"g": 1}));
    assert_eq!(literal["ref"], "Q-1001");
    let dto: QuoteDto = round_trip(literal);
    assert_eq!(dto.lines.len(), 3);
}

/// A full quote and the context have readers of their own (no buffering for
/// their flattened part): text and a parsed value read alike, members they do
/// not know are passed over, and the context's values beyond 2.1.0 come back.
#[test]
fn json_quote_and_context_read_alike_from_text_and_value_and_pass_over_unknown_members() {
    let mut quote = serde_json::to_value(draft().to_dto()).unwrap();
    quote["addedLater"] = json!({"nested": [1, 2]});
    let from_value: QuoteDto = serde_json::from_value(quote.clone()).unwrap();
    let from_text: QuoteDto = serde_json::from_str(&quote.to_string()).unwrap();
    assert_eq!(from_value, from_text);
    assert_eq!(from_value.header.reference, "Q-1001");
    assert!(from_value.group_keys.is_empty());

    let mut no_group_keys = quote.clone();
    no_group_keys.as_object_mut().unwrap().remove("groupKeys");
    let read: QuoteDto = serde_json::from_value(no_group_keys).unwrap();
    assert_eq!(read, from_value);

    let context = json!({
        "userName": "Mia Office", "userEmail": "mia@example.test", "userRole": "office",
        "tenantName": "Harbour Flooring", "tenantId": "t-1", "cultureCode": "en-NZ",
        "timeZone": "Pacific/Auckland", "currency": "NZD", "theme": "dark", "unknown": 1
    });
    let from_value: BridgeContextDto = serde_json::from_value(context.clone()).unwrap();
    let from_text: BridgeContextDto = serde_json::from_str(&context.to_string()).unwrap();
    assert_eq!(from_value, from_text);
    assert_eq!(
        from_value.values.time_zone.as_deref(),
        Some("Pacific/Auckland")
    );
    assert_eq!(from_value.values.currency.as_deref(), Some("NZD"));
    assert_eq!(from_value.values.locale, None);
}

/// What those readers refuse, and that their errors name the member.
#[test]
fn json_quote_and_context_readers_name_a_missing_repeated_or_wrong_member() {
    let quote = serde_json::to_value(draft().to_dto()).unwrap();
    let text = quote.to_string();
    let refusal = |text: &str| {
        serde_json::from_str::<QuoteDto>(text)
            .unwrap_err()
            .to_string()
    };

    let mut without = quote.clone();
    without.as_object_mut().unwrap().remove("totals");
    assert!(refusal(&without.to_string()).starts_with("missing field `totals`"));
    let mut without = quote.clone();
    without.as_object_mut().unwrap().remove("ref");
    assert!(refusal(&without.to_string()).starts_with("missing field `ref`"));

    // The same member twice, whether the quote's own or the header's.
    let twice = text.replacen('{', r#"{"lines":[],"#, 1);
    assert!(
        refusal(&twice).starts_with("duplicate field `lines`"),
        "{}",
        refusal(&twice)
    );
    let twice = text.replacen('{', r#"{"ref":"Q-9","#, 1);
    assert!(
        refusal(&twice).starts_with("duplicate field `ref`"),
        "{}",
        refusal(&twice)
    );

    let mut wrong = quote.clone();
    wrong["expiryDays"] = json!("thirty");
    assert!(refusal(&wrong.to_string()).contains("expected u32"));
    assert!(refusal("[]").starts_with("invalid type: sequence, expected struct QuoteDto"));

    let context = json!({
        "userName": "Mia Office", "userEmail": "mia@example.test", "userRole": "owner",
        "tenantName": "Harbour Flooring", "tenantId": "t-1"
    });
    let error = serde_json::from_value::<BridgeContextDto>(context)
        .unwrap_err()
        .to_string();
    assert!(error.starts_with("unknown variant `owner`"), "{error}");
    let context = json!({
        "userName": "Mia Office", "userEmail": "mia@example.test", "userRole": "office",
        "tenantName": "Harbour Flooring", "tenantId": "t-1", "units": "cubits"
    });
    let error = serde_json::from_value::<BridgeContextDto>(context)
        .unwrap_err()
        .to_string();
    assert_eq!(error, "missing field `cultureCode`");
}

#[test]
fn json_catalog_index_round_trips() {
    let literal = serde_json::to_value(index()).unwrap();
    assert_eq!(literal["products"][0]["taskSequence"][0]["qtyPerUnit"], 0.5);
    assert_eq!(literal["costItems"][0]["type"], "T_TRAVEL");
    round_trip::<CatalogIndex>(literal);
}
