//! The open quote as a tool reads it: what `quotes.getOpen` answers and
//! `quote.changed` carries.
//!
//! It is the quote as the editor holds it, unsaved lines included, with
//! each line's amounts and the quote's totals. Cost prices, costs and
//! margins are left out (absent, not zero) when the signed-in user's role
//! does not see cost, as the editor hides them from that user too.

use serde::Serialize;

use crate::add_lines::{LineType, Unit};
use crate::context::Role;
use crate::money::{LineAmounts, Totals, decimal_to_f64};
use crate::quote::{QuoteDto, QuoteHeader, QuoteLine, QuoteStatus};

/// `quotes.getOpen()`.
#[derive(Debug, Clone, PartialEq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct BridgeOpenQuoteDto {
    /// GUID.
    pub id: String,
    /// Human-readable reference.
    #[serde(rename = "ref")]
    pub reference: String,
    /// State; only a Draft takes lines.
    pub status: QuoteStatus,
    /// Name of the quote's customer.
    pub customer_name: String,
    /// Whether the editor holds changes not yet saved.
    pub dirty: bool,
    /// The lines in order.
    pub lines: Vec<BridgeOpenQuoteLine>,
    /// Sums of the lines.
    pub totals: BridgeOpenQuoteTotals,
}

/// A line of the open quote.
#[derive(Debug, Clone, PartialEq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct BridgeOpenQuoteLine {
    /// Number of the line within its quote.
    pub line_no: u32,
    /// Product, task or cost line.
    pub line_type: LineType,
    /// The catalog row the line links to.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub linked_item_id: Option<String>,
    /// The line's code (a product's SKU).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub product_code: Option<String>,
    /// Line name.
    pub description: String,
    /// Free-text 1.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub specification: Option<String>,
    /// Free-text 2.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub location: Option<String>,
    /// Quantity.
    pub qty: f64,
    /// Unit of measure.
    pub unit: Unit,
    /// SELL per unit.
    pub unit_price: f64,
    /// BUY per unit, for roles that see cost.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub cost_price: Option<f64>,
    /// Tax as a fraction.
    pub tax_rate: f64,
    /// Section label; absent for "Ungrouped".
    #[serde(skip_serializing_if = "Option::is_none")]
    pub section: Option<String>,
    /// Group id; 0 without a group.
    pub group_id: u32,
    /// Whether the host injected it from a product's task sequence.
    pub injected: bool,
    /// The product line an injected line belongs to.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub parent_line_no: Option<u32>,
    /// qty × SELL.
    pub nett: f64,
    /// Tax on the nett.
    pub tax: f64,
    /// nett + tax.
    pub total: f64,
    /// qty × BUY, for roles that see cost.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub cost: Option<f64>,
}

/// The open quote's totals.
#[derive(Debug, Clone, PartialEq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct BridgeOpenQuoteTotals {
    /// Sum of line netts.
    pub nett: f64,
    /// Sum of line taxes.
    pub tax: f64,
    /// Sum of line totals.
    pub total: f64,
    /// Sum of line costs, for roles that see cost.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub cost: Option<f64>,
    /// nett − cost, for roles that see cost.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub margin: Option<f64>,
    /// margin / nett in percent, for roles that see cost.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub margin_percent: Option<f64>,
}

impl BridgeOpenQuoteDto {
    /// The view of `quote` for a user of `role`; `dirty` when the editor has
    /// changes the backend does not.
    pub fn new(quote: &QuoteDto, dirty: bool, role: Role) -> Self {
        let cost = role.can_see_cost();
        let lines = quote
            .lines
            .iter()
            .map(|priced| BridgeOpenQuoteLine::new(&priced.line, &priced.amounts, cost))
            .collect();
        Self::with_lines(&quote.header, lines, &quote.totals, dirty, role)
    }

    /// The same view made straight from the quote's header and lines, as
    /// [`crate::open_quote::OpenQuote`] holds them: each line priced as it
    /// is read, without a priced copy of the quote first ([`QuoteDto::new`]).
    pub fn of_lines(header: &QuoteHeader, lines: &[QuoteLine], dirty: bool, role: Role) -> Self {
        let cost = role.can_see_cost();
        let mut amounts = Vec::with_capacity(lines.len());
        let lines = lines
            .iter()
            .map(|line| {
                let priced = line.amounts();
                amounts.push(priced);
                BridgeOpenQuoteLine::new(line, &priced, cost)
            })
            .collect();
        let totals = Totals::sum(amounts);
        Self::with_lines(header, lines, &totals, dirty, role)
    }

    fn with_lines(
        header: &QuoteHeader,
        lines: Vec<BridgeOpenQuoteLine>,
        totals: &Totals,
        dirty: bool,
        role: Role,
    ) -> Self {
        let cost = role.can_see_cost();
        let shown = |value| cost.then(|| decimal_to_f64(value));
        Self {
            id: header.id.clone(),
            reference: header.reference.clone(),
            status: header.status,
            customer_name: header.customer_name.clone(),
            dirty,
            lines,
            totals: BridgeOpenQuoteTotals {
                nett: decimal_to_f64(totals.nett),
                tax: decimal_to_f64(totals.tax),
                total: decimal_to_f64(totals.total),
                cost: shown(totals.cost),
                margin: shown(totals.margin),
                margin_percent: shown(totals.margin_percent),
            },
        }
    }
}

impl BridgeOpenQuoteLine {
    fn new(line: &QuoteLine, amounts: &LineAmounts, cost: bool) -> Self {
        let shown = |value| cost.then(|| decimal_to_f64(value));
        Self {
            line_no: line.line_no,
            line_type: line.line_type,
            linked_item_id: line.linked_item_id.clone(),
            product_code: line.product_code.clone(),
            description: line.description.clone(),
            specification: line.specification.clone(),
            location: line.location.clone(),
            qty: decimal_to_f64(line.qty),
            unit: line.unit,
            unit_price: decimal_to_f64(line.unit_price),
            cost_price: shown(line.cost_price),
            tax_rate: decimal_to_f64(line.tax_rate),
            section: line.section.clone(),
            group_id: line.group_id,
            injected: line.injected,
            parent_line_no: line.parent_line_no,
            nett: decimal_to_f64(amounts.nett),
            tax: decimal_to_f64(amounts.tax),
            total: decimal_to_f64(amounts.total),
            cost: shown(amounts.cost),
        }
    }
}
