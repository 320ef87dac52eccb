//! The open quote as a tool reads it (`quotes.getOpen`, `quote.changed`):
//! every line with its amounts, and cost only for roles that see cost.

use serde_json::json;
use toolbridge_protocol::context::Role;
use toolbridge_protocol::quote_view::BridgeOpenQuoteDto;

use crate::fixtures::{OAK, catalog, draft, line};

fn quote_with_oak() -> toolbridge_protocol::quote::QuoteDto {
    let mut quote = draft();
    let batch = json!([line(
        json!({"linkedItemId": OAK, "qty": 2, "unitPrice": 80, "costPrice": 50,
            "section": "Lounge", "groupKey": "lounge"})
    ),]);
    quote.add_lines(&batch, &catalog()).unwrap();
    quote.to_dto()
}

#[test]
fn quote_view_holds_every_line_with_its_amounts_and_the_totals() {
    let view = BridgeOpenQuoteDto::new(&quote_with_oak(), true, Role::Office);
    let value = serde_json::to_value(&view).unwrap();
    assert_eq!(value["ref"], "Q-1001");
    assert_eq!(value["status"], "Draft");
    assert_eq!(value["customerName"], "Harbour Cafe");
    assert_eq!(value["dirty"], true);
    let lines = value["lines"].as_array().unwrap();
    assert_eq!(lines.len(), 3, "the oak line and its two injected tasks");
    assert_eq!(lines[0]["section"], "Lounge");
    assert_eq!(lines[0]["nett"], 160.0);
    assert_eq!(lines[0]["costPrice"], 50.0);
    assert_eq!(lines[0]["cost"], 100.0);
    assert_eq!(lines[1]["injected"], true);
    assert_eq!(lines[1]["parentLineNo"], lines[0]["lineNo"]);
    assert_eq!(lines[1]["groupId"], lines[0]["groupId"]);
    let totals = &value["totals"];
    assert_eq!(totals["nett"], 160.0 + 45.0 + 13.0);
    assert!(totals["cost"].is_number() && totals["margin"].is_number());
    assert!(totals["marginPercent"].is_number());
}

#[test]
fn quote_view_leaves_out_cost_for_a_role_that_does_not_see_it() {
    let view = BridgeOpenQuoteDto::new(&quote_with_oak(), false, Role::Field);
    let text = serde_json::to_string(&view).unwrap();
    for field in ["costPrice", "\"cost\"", "margin", "marginPercent"] {
        assert!(!text.contains(field), "{field} in {text}");
    }
    let value = serde_json::to_value(&view).unwrap();
    assert_eq!(value["totals"]["nett"], 218.0);
    assert_eq!(value["lines"][0]["unitPrice"], 80.0);
    for role in [Role::Office, Role::Admin, Role::SuperUser] {
        let text = serde_json::to_string(&BridgeOpenQuoteDto::new(&quote_with_oak(), false, role))
            .unwrap();
        assert!(
            text.contains("costPrice") && text.contains("margin"),
            "{role:?}"
        );
    }
}
