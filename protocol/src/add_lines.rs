//! `quotes.addLines`: the line DTO, its tokens, and the validation of a
//! whole batch against the catalog index.

use std::fmt;

use rust_decimal::Decimal;
use serde::{Deserialize, Serialize};
use serde_json::Value;

use crate::catalog::Catalog;
use crate::error::{Error, Violations};
use crate::input::{Field, Fields, Floor, MAX_FIELDS, kind};
use crate::limits::{
    ADD_LINES_MAX_BATCH, MAX_LINE_PRICE, MAX_LINE_QTY, SECTION_MAX_CHARS, TEXT_MAX_CHARS,
};
use crate::tax::normalise_add_line_rate;

/// What a line's `linkedItemId` points at.
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Default, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum LineType {
    /// A catalog SKU; may inject its task sequence.
    #[default]
    Product,
    /// A task template.
    Task,
    /// A cost-of-business item (shipping, travel, disposal, site visit).
    Cost,
}

impl LineType {
    /// Every line type.
    pub const ALL: [LineType; 3] = [LineType::Product, LineType::Task, LineType::Cost];

    /// The wire token.
    pub fn token(self) -> &'static str {
        match self {
            LineType::Product => "product",
            LineType::Task => "task",
            LineType::Cost => "cost",
        }
    }

    /// Parses a wire token (exact match).
    pub fn from_token(token: &str) -> Option<Self> {
        Self::ALL.into_iter().find(|t| t.token() == token)
    }

    /// What the linked table holds, for messages: "product".
    pub fn target(self) -> &'static str {
        match self {
            LineType::Product => "product",
            LineType::Task => "task template",
            LineType::Cost => "cost item",
        }
    }
}

impl fmt::Display for LineType {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.token())
    }
}

/// Unit of measure of a line.
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Default, Serialize, Deserialize)]
pub enum Unit {
    /// Each.
    #[default]
    #[serde(rename = "T_ITEM")]
    Item,
    /// Square metres.
    #[serde(rename = "T_SQUARE_METRE")]
    SquareMetre,
    /// Linear metres.
    #[serde(rename = "T_LINEAR_METRE")]
    LinearMetre,
}

impl Unit {
    /// Every unit.
    pub const ALL: [Unit; 3] = [Unit::Item, Unit::SquareMetre, Unit::LinearMetre];

    /// The wire token.
    pub fn token(self) -> &'static str {
        match self {
            Unit::Item => "T_ITEM",
            Unit::SquareMetre => "T_SQUARE_METRE",
            Unit::LinearMetre => "T_LINEAR_METRE",
        }
    }

    /// Parses a wire token (exact match).
    pub fn from_token(token: &str) -> Option<Self> {
        Self::ALL.into_iter().find(|u| u.token() == token)
    }
}

impl fmt::Display for Unit {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.token())
    }
}

/// One line of a `quotes.addLines` call, with SPEC.md's field names.
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
#[derive(Debug, Clone, PartialEq, Default, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct BridgeAddLineDto {
    /// Line name shown in the quote.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub description: Option<String>,
    /// Human-readable SKU or code; the line's work-object code.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub product_code: Option<String>,
    /// Quantity, more than 0.
    pub qty: f64,
    /// SELL per unit, markup already applied.
    pub unit_price: f64,
    /// BUY per unit; SELL when omitted.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub cost_price: Option<f64>,
    /// 15 or 0.15; the host normalises to a fraction.
    pub tax_rate: f64,
    /// Room, area or zone (free-text 2).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub location: Option<String>,
    /// Dimensions, colours, model (free-text 1).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub specification: Option<String>,
    /// Unit of measure; `T_ITEM` when omitted.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub unit: Option<Unit>,
    /// Lines sharing a key share a group id.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub group_key: Option<String>,
    /// What `linkedItemId` points at; `product` when omitted.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub line_type: Option<LineType>,
    /// GUID of a product, task template or cost item.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub linked_item_id: Option<String>,
    /// Section label.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub section: Option<String>,
    /// Deprecated: `linkedItemId` with `lineType` `product`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub product_id: Option<String>,
}

/// The field names of an `addLines` line, in the order [`LineByLine::object`]
/// takes their values.
pub const LINE_FIELDS: [&str; 14] = [
    "description",
    "productCode",
    "qty",
    "unitPrice",
    "costPrice",
    "taxRate",
    "location",
    "specification",
    "unit",
    "groupKey",
    "lineType",
    "linkedItemId",
    "section",
    "productId",
];

/// Each field of [`LINE_FIELDS`] as the line's readers ask for it.
mod line {
    use super::LINE_FIELDS;
    use crate::input::Known;

    pub(super) const DESCRIPTION: Known = Known::named(&LINE_FIELDS, "description");
    pub(super) const PRODUCT_CODE: Known = Known::named(&LINE_FIELDS, "productCode");
    pub(super) const QTY: Known = Known::named(&LINE_FIELDS, "qty");
    pub(super) const UNIT_PRICE: Known = Known::named(&LINE_FIELDS, "unitPrice");
    pub(super) const COST_PRICE: Known = Known::named(&LINE_FIELDS, "costPrice");
    pub(super) const TAX_RATE: Known = Known::named(&LINE_FIELDS, "taxRate");
    pub(super) const LOCATION: Known = Known::named(&LINE_FIELDS, "location");
    pub(super) const SPECIFICATION: Known = Known::named(&LINE_FIELDS, "specification");
    pub(super) const UNIT: Known = Known::named(&LINE_FIELDS, "unit");
    pub(super) const GROUP_KEY: Known = Known::named(&LINE_FIELDS, "groupKey");
    pub(super) const LINE_TYPE: Known = Known::named(&LINE_FIELDS, "lineType");
    pub(super) const LINKED_ITEM_ID: Known = Known::named(&LINE_FIELDS, "linkedItemId");
    pub(super) const SECTION: Known = Known::named(&LINE_FIELDS, "section");
    pub(super) const PRODUCT_ID: Known = Known::named(&LINE_FIELDS, "productId");
}

/// A line that passed validation, with its link resolved.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ValidLine {
    /// Product, task or cost.
    pub line_type: LineType,
    /// The catalog id as the catalog spells it, when the line links to a row.
    pub linked_item_id: Option<String>,
    /// Line name.
    pub description: Option<String>,
    /// Work-object code.
    pub product_code: Option<String>,
    /// Quantity, more than 0.
    pub qty: Decimal,
    /// SELL per unit.
    pub unit_price: Decimal,
    /// BUY per unit.
    pub cost_price: Decimal,
    /// Tax as a fraction.
    pub tax_rate: Decimal,
    /// Free-text 2.
    pub location: Option<String>,
    /// Free-text 1.
    pub specification: Option<String>,
    /// Unit of measure.
    pub unit: Unit,
    /// Group key.
    pub group_key: Option<String>,
    /// Trimmed section label; `None` when empty.
    pub section: Option<String>,
    /// Where the linked product sits in the catalog the line was checked
    /// against, so that the merge finds its task sequence without a second
    /// lookup.
    pub(crate) product_position: Option<usize>,
}

/// A validated batch.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct ValidBatch {
    /// The lines, in the order the tool sent them.
    pub lines: Vec<ValidLine>,
    /// Whether any line used the deprecated `productId`.
    pub used_product_id: bool,
}

/// Validates an `addLines` batch (the method's argument: an array of lines)
/// against the catalog. Either every line is valid, or the error lists every
/// violation with its path (`lines[3].qty`).
pub fn validate_batch(params: &Value, catalog: &Catalog) -> Result<ValidBatch, Error> {
    let Value::Array(items) = params else {
        return Err(not_a_batch(kind(params)));
    };
    check_batch_size(items.len())?;
    let mut errors = Violations::default();
    let mut batch = ValidBatch::default();
    batch.lines.reserve(items.len());
    for (i, item) in items.iter().enumerate() {
        let Some(fields) = Fields::open_item(item, "lines", i, &LINE_FIELDS, &mut errors) else {
            continue;
        };
        if let Some(line) = read_line(fields, catalog, &mut batch.used_product_id) {
            batch.lines.push(line);
        }
    }
    errors.into_result(batch)
}

/// A field's value in a line given field by field ([`LineByLine`]): a JSON
/// value, of which only the kind counts for an array or an object.
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum FieldValue<'a> {
    /// `null`.
    Null,
    /// `true` or `false`.
    Bool(bool),
    /// A number, as the very `f64` a JSON parser reads from its text.
    Number(f64),
    /// A string.
    Str(&'a str),
    /// An array.
    Array,
    /// An object.
    Object,
}

impl<'a> FieldValue<'a> {
    fn view(self) -> Field<'a> {
        match self {
            FieldValue::Null => Field::Null,
            FieldValue::Bool(flag) => Field::Bool(flag),
            FieldValue::Number(value) => Field::Number(value),
            FieldValue::Str(text) => Field::Str(text),
            FieldValue::Array => Field::Array(&[]),
            FieldValue::Object => Field::Object,
        }
    }
}

/// An `addLines` batch given line by line and field by field, by a reader
/// that holds its lines in another form than JSON text (the host: the
/// objects a tool's page sent). Each line is checked as it comes, and
/// [`LineByLine::finish`] gives what [`validate_batch`] gives for those
/// lines as a JSON value.
#[derive(Debug)]
pub struct LineByLine<'c> {
    reading: Reading<'c>,
    count: usize,
}

impl<'c> LineByLine<'c> {
    /// A batch of about `lines` lines (room is made for that many, at most
    /// [`ADD_LINES_MAX_BATCH`]), checked against `catalog`.
    pub fn new(catalog: &'c Catalog, lines: usize) -> Self {
        Self {
            reading: Reading::new(catalog, lines),
            count: 0,
        }
    }

    /// The next line, an object: its fields of [`LINE_FIELDS`] by their
    /// position there (`None` where the object has no such field), and the
    /// names of its other fields, each once.
    pub fn object(
        &mut self,
        known: &[Option<FieldValue<'_>>; LINE_FIELDS.len()],
        unknown: &[&str],
    ) {
        let mut slots = [None; MAX_FIELDS];
        for (slot, value) in slots.iter_mut().zip(known) {
            *slot = value.map(FieldValue::view);
        }
        let mut names = unknown.to_vec();
        names.sort_unstable();
        names.dedup();
        self.reading.line(self.count, &slots, &names);
        self.count += 1;
    }

    /// The batch: its lines if every one is valid, else every violation.
    pub fn finish(self) -> Result<ValidBatch, Error> {
        self.reading.finish(self.count)
    }
}

/// A batch as its lines are read: the valid ones so far, and every
/// violation.
#[derive(Debug)]
struct Reading<'c> {
    catalog: &'c Catalog,
    errors: Violations,
    batch: ValidBatch,
}

impl<'c> Reading<'c> {
    fn new(catalog: &'c Catalog, lines: usize) -> Self {
        let mut batch = ValidBatch::default();
        batch.lines.reserve(lines.min(ADD_LINES_MAX_BATCH));
        Self {
            catalog,
            errors: Violations::default(),
            batch,
        }
    }

    /// Checks line `i`, an object, and keeps it when valid. Past the limit
    /// lines are only counted: the size answers alone.
    fn line(&mut self, i: usize, slots: &[Option<Field<'_>>; MAX_FIELDS], unknown: &[&str]) {
        if i >= ADD_LINES_MAX_BATCH {
            return;
        }
        let fields = Fields::from_slots(slots, unknown, "lines", i, &LINE_FIELDS, &mut self.errors);
        if let Some(line) = read_line(fields, self.catalog, &mut self.batch.used_product_id) {
            self.batch.lines.push(line);
        }
    }

    /// The batch of `count` lines.
    fn finish(self, count: usize) -> Result<ValidBatch, Error> {
        check_batch_size(count)?;
        self.errors.into_result(self.batch)
    }
}

fn not_a_batch(kind: &str) -> Error {
    Error::invalid(
        "lines",
        format!("quotes.addLines takes an array of lines, not {kind}"),
    )
}

fn check_batch_size(count: usize) -> Result<(), Error> {
    if count > ADD_LINES_MAX_BATCH {
        return Err(Error::invalid(
            "lines",
            format!(
                "a batch holds at most {ADD_LINES_MAX_BATCH} lines (got {count}); send them in several calls"
            ),
        ));
    }
    Ok(())
}

/// Reads and checks one line; records violations and returns `None` when
/// it has any.
fn read_line(
    mut fields: Fields<'_, '_>,
    catalog: &Catalog,
    used_product_id: &mut bool,
) -> Option<ValidLine> {
    let qty = fields.decimal(line::QTY, Floor::AboveZero, MAX_LINE_QTY);
    let unit_price = fields.decimal(line::UNIT_PRICE, Floor::Zero, MAX_LINE_PRICE);
    let cost_price = if fields.has(line::COST_PRICE) {
        fields
            .decimal(line::COST_PRICE, Floor::Zero, MAX_LINE_PRICE)
            .map(Some)
    } else {
        Some(None)
    };
    let tax_rate = fields.required_number(line::TAX_RATE).and_then(|rate| {
        normalise_add_line_rate(rate)
            .map_err(|message| fields.violation(line::TAX_RATE, message))
            .ok()
    });
    let unit = fields
        .token(line::UNIT, &Unit::ALL, Unit::token)
        .map(Option::unwrap_or_default)
        .ok();
    let line_type = fields
        .token(line::LINE_TYPE, &LineType::ALL, LineType::token)
        .map(Option::unwrap_or_default)
        .ok();
    let section = fields.string(line::SECTION).and_then(|raw| {
        let trimmed = raw.trim();
        let count = trimmed.chars().count();
        if count > SECTION_MAX_CHARS {
            fields.violation(
                line::SECTION,
                format!(
                    "must be at most {SECTION_MAX_CHARS} characters after trimming (got {count})"
                ),
            );
            None
        } else {
            Some(trimmed)
        }
    });
    let description = fields.string_max(line::DESCRIPTION, TEXT_MAX_CHARS);
    let product_code = fields.string_max(line::PRODUCT_CODE, TEXT_MAX_CHARS);
    let location = fields.string_max(line::LOCATION, TEXT_MAX_CHARS);
    let specification = fields.string_max(line::SPECIFICATION, TEXT_MAX_CHARS);
    let group_key = fields.string_max(line::GROUP_KEY, TEXT_MAX_CHARS);
    let linked_item_id = fields.string_max(line::LINKED_ITEM_ID, TEXT_MAX_CHARS);
    let product_id = fields.string_max(line::PRODUCT_ID, TEXT_MAX_CHARS);
    if product_id.is_some() {
        *used_product_id = true;
    }

    let line_type = line_type?;
    let link = resolve_link(&mut fields, catalog, line_type, linked_item_id, product_id)?;

    let (qty, unit_price, cost_price, tax_rate, unit) =
        (qty?, unit_price?, cost_price?, tax_rate?, unit?);
    let section = section.filter(|s| !s.is_empty()).map(str::to_owned);
    Some(ValidLine {
        line_type,
        linked_item_id: link.id.map(str::to_owned),
        description: description.map(str::to_owned),
        product_code: product_code.map(str::to_owned),
        qty,
        unit_price,
        cost_price: cost_price.unwrap_or(unit_price),
        tax_rate,
        location: location.map(str::to_owned),
        specification: specification.map(str::to_owned),
        unit,
        group_key: group_key.map(str::to_owned),
        section,
        product_position: link.product_position,
    })
}

/// What a line links to: the id as the catalog spells it, and where a
/// linked product sits in the catalog.
#[derive(Default)]
struct Link<'c> {
    id: Option<&'c str>,
    product_position: Option<usize>,
}

/// Resolves a line's `linkedItemId`, or its deprecated `productId`, against
/// the catalog; `None` with the violation recorded when it must resolve and
/// does not.
fn resolve_link<'c>(
    fields: &mut Fields<'_, '_>,
    catalog: &'c Catalog,
    line_type: LineType,
    linked_item_id: Option<&str>,
    product_id: Option<&str>,
) -> Option<Link<'c>> {
    let resolve = |line_type: LineType, id: &str| {
        if line_type == LineType::Product {
            let position = catalog.product_position(id)?;
            let product = catalog.product_at(position)?;
            Some(Link {
                id: Some(product.id.as_str()),
                product_position: Some(position),
            })
        } else {
            catalog.resolve(line_type, id).map(|id| Link {
                id: Some(id),
                product_position: None,
            })
        }
    };
    match (linked_item_id, product_id) {
        (Some(id), _) => {
            let link = resolve(line_type, id);
            if link.is_none() {
                fields.violation(
                    line::LINKED_ITEM_ID,
                    format!(
                        "\"{id}\" is not an active {} of this tenant (lineType \"{line_type}\")",
                        line_type.target()
                    ),
                );
            }
            link
        }
        // The deprecated id acts for a product line only, and an id that does
        // not resolve leaves a free-form line: older tools relied on that.
        (None, Some(id)) if line_type == LineType::Product => {
            Some(resolve(LineType::Product, id).unwrap_or_default())
        }
        (None, Some(_)) => {
            fields.violation(
                line::PRODUCT_ID,
                format!(
                    "is deprecated and only links product lines; give a {line_type} line its linkedItemId"
                ),
            );
            None
        }
        (None, None) => Some(Link::default()),
    }
}
