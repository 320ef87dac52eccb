//! Quotes: their states, the summaries lists return, the full quote with its
//! lines and totals, and the result of `quotes.create`.

use std::collections::BTreeMap;
use std::fmt;

use rust_decimal::Decimal;
use serde::de::{MapAccess, Visitor};
use serde::{Deserialize, Deserializer, Serialize};

use crate::add_lines::{LineType, Unit};
use crate::error::Error;
use crate::flatten::{Member, read_members};
use crate::money::{LineAmounts, Totals, as_number};

/// The states of a quote. New quotes are Draft; Send Quote moves Draft to
/// Sent and locks it.
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
pub enum QuoteStatus {
    /// Editable.
    Draft,
    /// Sent to the customer; locked.
    Sent,
    /// Accepted by the customer.
    Accepted,
    /// Rejected by the customer.
    Rejected,
    /// Past its expiry.
    Expired,
}

impl QuoteStatus {
    /// Every state.
    pub const ALL: [QuoteStatus; 5] = [
        QuoteStatus::Draft,
        QuoteStatus::Sent,
        QuoteStatus::Accepted,
        QuoteStatus::Rejected,
        QuoteStatus::Expired,
    ];

    /// The wire form, e.g. `"Draft"`.
    pub fn as_str(self) -> &'static str {
        match self {
            QuoteStatus::Draft => "Draft",
            QuoteStatus::Sent => "Sent",
            QuoteStatus::Accepted => "Accepted",
            QuoteStatus::Rejected => "Rejected",
            QuoteStatus::Expired => "Expired",
        }
    }

    /// Parses the wire form.
    pub fn from_name(name: &str) -> Option<Self> {
        Self::ALL.into_iter().find(|status| status.as_str() == name)
    }

    /// Only Draft quotes take new or changed lines.
    pub fn is_editable(self) -> bool {
        self == QuoteStatus::Draft
    }

    /// The state Send Quote leaves a quote in: a Draft becomes Sent (and so
    /// locked); `None` for any other state, which cannot be sent.
    pub fn sent(self) -> Option<QuoteStatus> {
        (self == QuoteStatus::Draft).then_some(QuoteStatus::Sent)
    }

    /// Send Quote, as [`QuoteStatus::sent`]; any state but Draft refuses with
    /// [`unsendable_quote`].
    pub fn send(self, reference: &str) -> Result<QuoteStatus, Error> {
        self.sent().ok_or_else(|| unsendable_quote(reference, self))
    }
}

impl fmt::Display for QuoteStatus {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

/// Quote or Estimate; changeable while Draft only.
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Default, Serialize, Deserialize)]
pub enum QuoteType {
    /// A firm price.
    #[default]
    Quote,
    /// An indicative price.
    Estimate,
}

/// A quote in a list (`quotes.list`, `GET /api/v1/quotes`).
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct BridgeQuoteDto {
    /// GUID.
    pub id: String,
    /// Human-readable reference.
    #[serde(rename = "ref")]
    pub reference: String,
    /// Name of the quote's customer.
    pub customer_name: String,
    /// Quote total, tax included.
    pub total: f64,
    /// State.
    pub status: QuoteStatus,
    /// ISO 8601 datetime.
    pub date: String,
}

/// What `quotes.create` resolves with.
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct BridgeCreateQuoteResult {
    /// GUID of the new quote.
    pub id: String,
    /// Its reference.
    #[serde(rename = "ref")]
    pub reference: String,
    /// Its total, tax included.
    pub total: f64,
    /// Relative deep link into the host app, `/quotes/{id}`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub url: Option<String>,
}

impl BridgeCreateQuoteResult {
    /// The deep link of a quote in the host app.
    pub fn deep_link(quote_id: &str) -> String {
        format!("/quotes/{quote_id}")
    }
}

/// The header of a full quote: everything but its lines.
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct QuoteHeader {
    /// GUID.
    pub id: String,
    /// Human-readable reference.
    #[serde(rename = "ref")]
    pub reference: String,
    /// GUID of the customer.
    pub customer_id: String,
    /// Name of the customer.
    pub customer_name: String,
    /// The job the quote belongs to, if any.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub job_id: Option<String>,
    /// Title.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub title: Option<String>,
    /// Quote or Estimate.
    #[serde(default)]
    pub quote_type: QuoteType,
    /// State.
    pub status: QuoteStatus,
    /// ISO 8601 datetime of the quote.
    pub date: String,
    /// Days the quote stays valid after its date.
    pub expiry_days: u32,
}

impl QuoteHeader {
    /// `QUOTE_LOCKED` unless the quote is a Draft, the only state whose
    /// lines and header can change.
    pub fn check_editable(&self) -> Result<(), Error> {
        if self.status.is_editable() {
            Ok(())
        } else {
            Err(locked_quote(&self.reference, self.status))
        }
    }
}

/// `QUOTE_LOCKED` for a change to the quote `reference`, whose state
/// `status` is not Draft.
pub fn locked_quote(reference: &str, status: QuoteStatus) -> Error {
    Error::QuoteLocked(format!(
        "quote {reference} is {status} and can no longer be changed; only Draft quotes can be edited"
    ))
}

/// `QUOTE_LOCKED` for sending the quote `reference`, whose state `status` is
/// not Draft.
pub fn unsendable_quote(reference: &str, status: QuoteStatus) -> Error {
    Error::QuoteLocked(format!(
        "quote {reference} is {status}; only a Draft quote can be sent"
    ))
}

/// `CONFLICT` for a change to the quote `reference` made against a version
/// (`If-Match`) that is no longer its current one.
pub fn changed_quote(reference: &str) -> Error {
    Error::Conflict(format!(
        "quote {reference} changed since the version you have (your If-Match does not name its \
         current ETag): someone saved or sent it meanwhile, and nothing was changed; read it \
         again (this answer's ETag header names its current version) and compare"
    ))
}

/// `NOT_FOUND` for a quote id the tenant has no quote with (`quote_id` as
/// looked up: its [`crate::catalog::id_key`]).
pub fn quote_not_found(quote_id: &str) -> Error {
    Error::NotFound(format!("quote {quote_id} not found"))
}

// The schema attributes state, for the OpenAPI document, the bounds that
// `open_quote::check_lines` holds every saved line to (the numbers of
// `crate::limits`, written out because utoipa takes only literals; a server
// test holds the two together). An injected line's quantity may exceed the
// per-line bound, so `qty` has no maximum here; a section counts its
// characters after trimming, which a length bound cannot say.
/// One line of a quote, as stored and as edited.
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
#[derive(Debug, Clone, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct QuoteLine {
    /// Number of the line within its quote; never reused.
    pub line_no: u32,
    /// Product, task or cost line.
    pub line_type: LineType,
    /// The catalog row the line links to; `None` for a free-form line.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[cfg_attr(feature = "openapi", schema(max_length = 1000))]
    pub linked_item_id: Option<String>,
    /// The line's work-object code (a product's SKU, a template's code).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[cfg_attr(feature = "openapi", schema(max_length = 1000))]
    pub product_code: Option<String>,
    /// Line name shown in the quote.
    #[cfg_attr(feature = "openapi", schema(max_length = 1000))]
    pub description: String,
    /// Free-text 1: dimensions, colours, model.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[cfg_attr(feature = "openapi", schema(max_length = 1000))]
    pub specification: Option<String>,
    /// Free-text 2: room, area or zone.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[cfg_attr(feature = "openapi", schema(max_length = 1000))]
    pub location: Option<String>,
    /// Quantity, more than 0: at least 1e-28, the smallest decimal amount.
    #[serde(with = "as_number")]
    #[cfg_attr(feature = "openapi", schema(value_type = f64, minimum = 1e-28))]
    pub qty: Decimal,
    /// Unit of measure.
    pub unit: Unit,
    /// SELL per unit.
    #[serde(with = "as_number")]
    #[cfg_attr(
        feature = "openapi",
        schema(value_type = f64, minimum = 0, maximum = 1_000_000_000)
    )]
    pub unit_price: Decimal,
    /// BUY per unit.
    #[serde(with = "as_number")]
    #[cfg_attr(
        feature = "openapi",
        schema(value_type = f64, minimum = 0, maximum = 1_000_000_000)
    )]
    pub cost_price: Decimal,
    /// Tax as a fraction (0.15 is 15%).
    #[serde(with = "as_number")]
    #[cfg_attr(
        feature = "openapi",
        schema(value_type = f64, minimum = 0, maximum = 1)
    )]
    pub tax_rate: Decimal,
    /// Section label; `None` renders under "Ungrouped".
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub section: Option<String>,
    /// Group id; 0 for lines without a group key.
    pub group_id: u32,
    /// Whether the host injected this line from a product's task sequence.
    #[serde(default)]
    pub injected: bool,
    /// The product line an injected line belongs to.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub parent_line_no: Option<u32>,
}

impl QuoteLine {
    /// The line's nett, tax, total and cost.
    pub fn amounts(&self) -> LineAmounts {
        LineAmounts::compute(self.qty, self.unit_price, self.cost_price, self.tax_rate)
    }
}

/// A line with its amounts, as a full quote shows it.
///
/// Read back, the amounts are computed again from the line rather than read:
/// they are a function of it ([`LineAmounts::compute`], which the server
/// used to write them), and reading the line alone spares the host module
/// serde's buffering of every field for the two flattened halves (the
/// module's largest deserializer, and the slower read of a long quote).
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(from = "QuoteLine")]
pub struct PricedLine {
    /// The line.
    #[serde(flatten)]
    pub line: QuoteLine,
    /// Its amounts.
    #[serde(flatten)]
    pub amounts: LineAmounts,
}

impl From<QuoteLine> for PricedLine {
    fn from(line: QuoteLine) -> Self {
        Self::new(line)
    }
}

impl PricedLine {
    /// `line` with its amounts.
    pub fn new(line: QuoteLine) -> Self {
        Self {
            amounts: line.amounts(),
            line,
        }
    }
}

/// A full quote: header, lines with amounts, group keys and totals
/// (`GET /api/v1/quotes/{id}`, and the host's open quote).
///
/// Read by a reader of its own (in `flatten.rs`), which does not buffer
/// the whole quote for the flattened header as serde's derived one would.
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct QuoteDto {
    /// Everything but the lines.
    #[serde(flatten)]
    pub header: QuoteHeader,
    /// The lines in order.
    pub lines: Vec<PricedLine>,
    /// Each `groupKey` a tool has used, with its group id.
    #[serde(default)]
    pub group_keys: BTreeMap<String, u32>,
    /// Sums of the lines.
    pub totals: Totals,
}

impl<'de> Deserialize<'de> for QuoteDto {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        struct QuoteVisitor;

        impl<'de> Visitor<'de> for QuoteVisitor {
            type Value = QuoteDto;

            fn expecting(&self, formatter: &mut fmt::Formatter<'_>) -> fmt::Result {
                formatter.write_str("struct QuoteDto")
            }

            fn visit_map<A: MapAccess<'de>>(self, map: A) -> Result<QuoteDto, A::Error> {
                let mut lines = Member::new("lines");
                let mut group_keys = Member::new("groupKeys");
                let mut totals = Member::new("totals");
                let rest = read_members(map, |name, map| {
                    match name {
                        "lines" => lines.read(map)?,
                        "groupKeys" => group_keys.read(map)?,
                        "totals" => totals.read(map)?,
                        _ => return Ok(false),
                    }
                    Ok(true)
                })?;
                let lines = lines.required()?;
                let totals = totals.required()?;
                Ok(QuoteDto {
                    header: rest.read()?,
                    lines,
                    group_keys: group_keys.or_default(),
                    totals,
                })
            }
        }

        deserializer.deserialize_map(QuoteVisitor)
    }
}

impl QuoteDto {
    /// The quote with these lines, each priced, and their totals; the lines
    /// are not checked ([`crate::open_quote::OpenQuote::checked`] checks them).
    pub fn new(
        header: QuoteHeader,
        lines: Vec<QuoteLine>,
        group_keys: BTreeMap<String, u32>,
    ) -> Self {
        let lines: Vec<PricedLine> = lines.into_iter().map(PricedLine::new).collect();
        let totals = Totals::sum(lines.iter().map(|line| line.amounts));
        Self {
            header,
            lines,
            group_keys,
            totals,
        }
    }

    /// The list summary of this quote.
    pub fn summary(&self) -> BridgeQuoteDto {
        BridgeQuoteDto {
            id: self.header.id.clone(),
            reference: self.header.reference.clone(),
            customer_name: self.header.customer_name.clone(),
            total: crate::money::decimal_to_f64(self.totals.total),
            status: self.header.status,
            date: self.header.date.clone(),
        }
    }
}
