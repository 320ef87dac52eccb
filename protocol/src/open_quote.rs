//! The quote open in the editor, held in memory by the host, and the merge of
//! validated `addLines` batches into it.
//!
//! A batch merges whole or not at all: every check of its lines runs before
//! the quote is touched, and the lines the quote's limit refuses are cut off
//! again before anything else changes.

use std::collections::{BTreeMap, HashSet};

use rust_decimal::Decimal;
use serde_json::Value;

use crate::add_lines::{LineByLine, LineType, Unit, ValidBatch, ValidLine, validate_batch};
use crate::catalog::{Catalog, IndexedTaskTemplate, MAX_QTY_PER_UNIT};
use crate::context::Role;
use crate::error::{Error, Violation, Violations};
use crate::input::{index, join};
use crate::limits::{
    MAX_LINE_PRICE, MAX_LINE_QTY, QUOTE_MAX_LINES, SECTION_MAX_CHARS, TEXT_MAX_CHARS,
};
use crate::money::Totals;
use crate::notification::Deprecation;
use crate::quote::{QuoteDto, QuoteHeader, QuoteLine};
use crate::quote_view::BridgeOpenQuoteDto;

/// What a merged batch did.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct MergeReport {
    /// Lines the tool sent.
    pub lines_added: usize,
    /// Task lines injected from products' task sequences.
    pub tasks_injected: usize,
    /// Whether any line used the deprecated `productId`.
    pub used_product_id: bool,
}

impl MergeReport {
    /// The deprecated part of the bridge the batch used, if any.
    pub fn deprecation(&self) -> Option<Deprecation> {
        self.used_product_id.then_some(Deprecation::ProductId)
    }

    /// Every line the quote gained.
    pub fn total_lines(&self) -> usize {
        self.lines_added + self.tasks_injected
    }
}

/// Decimal places an injected line's quantity keeps when its product's
/// quantity changes.
const QTY_DECIMALS: u32 = 4;

/// A change the user makes to one line in the editor; `None` keeps a value.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct LineEdit {
    /// The new quantity.
    pub qty: Option<Decimal>,
    /// The new SELL per unit.
    pub unit_price: Option<Decimal>,
}

/// A quote being edited: header, lines in order, and the group-key map.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct OpenQuote {
    header: QuoteHeader,
    lines: Vec<QuoteLine>,
    group_keys: BTreeMap<String, u32>,
    next_line_no: u32,
}

impl OpenQuote {
    /// An empty quote with this header.
    pub fn new(header: QuoteHeader) -> Self {
        Self {
            header,
            lines: Vec::new(),
            group_keys: BTreeMap::new(),
            next_line_no: 1,
        }
    }

    /// A Draft quote's lines replaced by `lines` (and its group keys by
    /// `group_keys`), as a save makes them: [`Self::checked`], once
    /// [`QuoteHeader::check_editable`] lets the quote change.
    ///
    /// # Errors
    ///
    /// `QUOTE_LOCKED`, or `INVALID_PARAMS` naming each bad line.
    pub fn saved(
        header: QuoteHeader,
        lines: Vec<QuoteLine>,
        group_keys: BTreeMap<String, u32>,
    ) -> Result<QuoteDto, Error> {
        header.check_editable()?;
        Self::checked(header, lines, group_keys).map_err(Error::InvalidParams)
    }

    /// The quote of `header` with `lines` and `group_keys`, every line
    /// checked as [`Self::from_dto`] checks an opened quote (the rules every
    /// saved quote keeps), each priced, and the totals summed.
    ///
    /// # Errors
    ///
    /// Every violation, each naming its line.
    pub fn checked(
        header: QuoteHeader,
        lines: Vec<QuoteLine>,
        group_keys: BTreeMap<String, u32>,
    ) -> Result<QuoteDto, Vec<Violation>> {
        check_lines(&lines, &group_keys)?;
        Ok(QuoteDto::new(header, lines, group_keys))
    }

    /// Opens a quote the backend returned, checking its lines against the
    /// same bounds a merge keeps (positive bounded quantities, bounded
    /// non-negative prices, fractional tax, short sections, unique line
    /// numbers, parents that exist).
    pub fn from_dto(dto: QuoteDto) -> Result<Self, Error> {
        let QuoteDto {
            header,
            lines,
            group_keys,
            ..
        } = dto;
        let lines: Vec<QuoteLine> = lines.into_iter().map(|priced| priced.line).collect();
        check_lines(&lines, &group_keys).map_err(Error::InvalidParams)?;
        let next_line_no = lines
            .iter()
            .map(|line| line.line_no)
            .max()
            .map_or(1, |max| max.saturating_add(1));
        Ok(Self {
            header,
            lines,
            group_keys,
            next_line_no,
        })
    }

    /// The quote with line amounts and totals, as the editor and the
    /// backend see it.
    pub fn to_dto(&self) -> QuoteDto {
        QuoteDto::new(
            self.header.clone(),
            self.lines.clone(),
            self.group_keys.clone(),
        )
    }

    /// The header.
    pub fn header(&self) -> &QuoteHeader {
        &self.header
    }

    /// The lines in order.
    pub fn lines(&self) -> &[QuoteLine] {
        &self.lines
    }

    /// The group-key map.
    pub fn group_keys(&self) -> &BTreeMap<String, u32> {
        &self.group_keys
    }

    /// The quote as a tool reads it (`quotes.getOpen`, `quote.changed`),
    /// made from the lines held here without a copy of the quote first:
    /// the same as [`BridgeOpenQuoteDto::new`] of [`OpenQuote::to_dto`].
    pub fn for_tools(&self, dirty: bool, role: Role) -> BridgeOpenQuoteDto {
        BridgeOpenQuoteDto::of_lines(&self.header, &self.lines, dirty, role)
    }

    /// Sums of the lines' amounts.
    pub fn totals(&self) -> Totals {
        Totals::sum(self.lines.iter().map(QuoteLine::amounts))
    }

    /// Validates a `quotes.addLines` batch against the catalog and merges it:
    /// all of it, or nothing with every violation listed. Only a Draft quote
    /// takes lines.
    pub fn add_lines(&mut self, params: &Value, catalog: &Catalog) -> Result<MergeReport, Error> {
        self.check_editable()?;
        self.merge(validate_batch(params, catalog)?, catalog)
    }

    /// The first half of [`OpenQuote::add_lines`]: the batch validated
    /// against the catalog, the quote untouched (`QUOTE_LOCKED` first when it
    /// takes no lines). The host's way for a batch it does not give line by
    /// line ([`OpenQuote::lines_by_field`]).
    pub fn validate_lines(&self, params: &Value, catalog: &Catalog) -> Result<ValidBatch, Error> {
        self.check_editable()?;
        validate_batch(params, catalog)
    }

    /// [`OpenQuote::validate_lines`] for a batch given line by line
    /// ([`LineByLine`]): `QUOTE_LOCKED` when the quote takes no lines, else
    /// the batch to give the lines to; what its `finish` answers merges with
    /// [`OpenQuote::merge_valid_lines`].
    pub fn lines_by_field<'c>(
        &self,
        catalog: &'c Catalog,
        lines: usize,
    ) -> Result<LineByLine<'c>, Error> {
        self.check_editable()?;
        Ok(LineByLine::new(catalog, lines))
    }

    /// The second half of [`OpenQuote::add_lines`]: merges a batch
    /// [`OpenQuote::validate_lines`] or [`OpenQuote::lines_by_field`]
    /// validated against the same `catalog`, all of it or nothing.
    pub fn merge_valid_lines(
        &mut self,
        batch: ValidBatch,
        catalog: &Catalog,
    ) -> Result<MergeReport, Error> {
        self.check_editable()?;
        self.merge(batch, catalog)
    }

    /// Changes one line's quantity or unit price, as the user does in the
    /// editor. The task lines a product injected follow its quantity in
    /// proportion. `NOT_FOUND` for a line the quote does not have;
    /// `INVALID_PARAMS` naming `qty` or `unitPrice` when out of bounds.
    pub fn edit_line(&mut self, line_no: u32, edit: &LineEdit) -> Result<(), Error> {
        self.check_editable()?;
        let index = self.position_of(line_no)?;
        let mut errors = Violations::default();
        let qty_in_bounds = |qty: Decimal| qty > Decimal::ZERO && qty <= MAX_LINE_QTY;
        if edit.qty.is_some_and(|qty| !qty_in_bounds(qty)) {
            errors.push("qty", format!("must be above 0 and at most {MAX_LINE_QTY}"));
        }
        if let Some(price) = edit.unit_price {
            if price.is_sign_negative() || price > MAX_LINE_PRICE {
                errors.push("unitPrice", format!("must be 0 to {MAX_LINE_PRICE}"));
            }
        }
        let old_qty = self.lines[index].qty;
        // Injected lines keep their share of the product's quantity.
        let scaled: Vec<(usize, Decimal)> = match edit.qty {
            Some(qty) if qty_in_bounds(qty) && qty != old_qty && !old_qty.is_zero() => self
                .lines
                .iter()
                .enumerate()
                .filter(|(_, line)| line.injected && line.parent_line_no == Some(line_no))
                .map(|(at, line)| {
                    let share = (line.qty * qty / old_qty).round_dp(QTY_DECIMALS);
                    (at, share)
                })
                .collect(),
            _ => Vec::new(),
        };
        for &(at, qty) in &scaled {
            if !qty_in_bounds(qty) {
                errors.push(
                    "qty",
                    format!(
                        "would make the injected line {} hold {qty}; a quantity is above 0 and at most {MAX_LINE_QTY}",
                        self.lines[at].line_no
                    ),
                );
            }
        }
        errors.into_result(())?;
        let line = &mut self.lines[index];
        if let Some(qty) = edit.qty {
            line.qty = qty;
        }
        if let Some(price) = edit.unit_price {
            line.unit_price = price;
        }
        for (at, qty) in scaled {
            self.lines[at].qty = qty;
        }
        Ok(())
    }

    /// Removes a line and the task lines it injected; the line numbers
    /// removed, in order. `NOT_FOUND` for a line the quote does not have.
    pub fn remove_line(&mut self, line_no: u32) -> Result<Vec<u32>, Error> {
        self.check_editable()?;
        self.position_of(line_no)?;
        let removed: Vec<u32> = self
            .lines
            .iter()
            .filter(|line| line.line_no == line_no || line.parent_line_no == Some(line_no))
            .map(|line| line.line_no)
            .collect();
        self.lines.retain(|line| !removed.contains(&line.line_no));
        Ok(removed)
    }

    fn position_of(&self, line_no: u32) -> Result<usize, Error> {
        self.lines
            .iter()
            .position(|line| line.line_no == line_no)
            .ok_or_else(|| {
                Error::NotFound(format!(
                    "quote {} has no line {line_no}",
                    self.header.reference
                ))
            })
    }

    fn check_editable(&self) -> Result<(), Error> {
        if self.header.status.is_editable() {
            Ok(())
        } else {
            Err(Error::QuoteLocked(format!(
                "quote {} is {} and can no longer be changed; only Draft quotes take new lines",
                self.header.reference, self.header.status
            )))
        }
    }

    /// Merges a validated batch: all of it, or nothing when the quote would
    /// grow past its line limit. The lines go straight onto the quote's own
    /// list (room for the batch reserved once, no second list copied over),
    /// and are cut off again when the limit refuses them; the group keys and
    /// the next line number change only once the batch is in.
    fn merge(&mut self, batch: ValidBatch, catalog: &Catalog) -> Result<MergeReport, Error> {
        let mut report = MergeReport {
            used_product_id: batch.used_product_id,
            ..MergeReport::default()
        };

        let mut group_keys = self.group_keys.clone();
        let mut next_group = self.largest_group_id(&group_keys).saturating_add(1);
        let mut next_line_no = self.next_line_no;
        let before = self.lines.len();
        self.lines.reserve(batch.lines.len());

        for line in batch.lines {
            let group_id = match &line.group_key {
                None => 0,
                // Looked up before inserting, so a known key is not cloned.
                Some(key) => {
                    if let Some(&id) = group_keys.get(key) {
                        id
                    } else {
                        let id = next_group;
                        next_group = next_group.saturating_add(1);
                        group_keys.insert(key.clone(), id);
                        id
                    }
                }
            };
            let tasks = injected_tasks(&line, catalog);
            let parent = quote_line(line_no_after(&mut next_line_no), group_id, line);
            report.lines_added += 1;
            let parent_at = self.lines.len();
            self.lines.push(parent);
            for (template, qty_per_unit) in tasks {
                let Some(parent) = self.lines.get(parent_at) else {
                    break;
                };
                let child = QuoteLine {
                    line_no: line_no_after(&mut next_line_no),
                    line_type: LineType::Task,
                    linked_item_id: Some(template.id.clone()),
                    product_code: Some(template.code.clone()),
                    description: template.name.clone(),
                    specification: None,
                    location: parent.location.clone(),
                    qty: parent.qty * qty_per_unit,
                    unit: Unit::Item,
                    unit_price: template.unit_price,
                    cost_price: template.cost_price,
                    tax_rate: parent.tax_rate,
                    section: parent.section.clone(),
                    group_id,
                    injected: true,
                    parent_line_no: Some(parent.line_no),
                };
                report.tasks_injected += 1;
                self.lines.push(child);
            }
        }

        let total = self.lines.len();
        if total > QUOTE_MAX_LINES {
            self.lines.truncate(before);
            return Err(Error::invalid(
                "lines",
                format!(
                    "the quote would hold {total} lines; a quote holds at most {QUOTE_MAX_LINES}"
                ),
            ));
        }
        self.group_keys = group_keys;
        self.next_line_no = next_line_no;
        Ok(report)
    }

    fn largest_group_id(&self, group_keys: &BTreeMap<String, u32>) -> u32 {
        let in_map = group_keys.values().copied().max().unwrap_or(0);
        let in_lines = self.lines.iter().map(|l| l.group_id).max().unwrap_or(0);
        in_map.max(in_lines)
    }
}

/// Takes the next line number.
fn line_no_after(next: &mut u32) -> u32 {
    let taken = *next;
    *next = next.saturating_add(1);
    taken
}

/// The task templates a product line injects, with their quantity per unit
/// (nothing allocated: most lines inject none).
fn injected_tasks<'c>(
    line: &ValidLine,
    catalog: &'c Catalog,
) -> impl Iterator<Item = (&'c IndexedTaskTemplate, Decimal)> + use<'c> {
    let sequence: &'c [(usize, Decimal)] = if line.line_type == LineType::Product {
        line.product_position
            .and_then(|position| catalog.product_at(position))
            .map_or(&[], |product| product.task_sequence.as_slice())
    } else {
        &[]
    };
    sequence.iter().filter_map(move |&(position, per_unit)| {
        catalog
            .task_template_at(position)
            .map(|template| (template, per_unit))
    })
}

fn quote_line(line_no: u32, group_id: u32, line: ValidLine) -> QuoteLine {
    let description = line
        .description
        .or_else(|| line.product_code.clone())
        .unwrap_or_default();
    QuoteLine {
        line_no,
        line_type: line.line_type,
        linked_item_id: line.linked_item_id,
        product_code: line.product_code,
        description,
        specification: line.specification,
        location: line.location,
        qty: line.qty,
        unit: line.unit,
        unit_price: line.unit_price,
        cost_price: line.cost_price,
        tax_rate: line.tax_rate,
        section: line.section,
        group_id,
        injected: false,
        parent_line_no: None,
    }
}

/// Checks stored lines against the bounds a merge keeps.
fn check_lines(
    lines: &[QuoteLine],
    group_keys: &BTreeMap<String, u32>,
) -> Result<(), Vec<Violation>> {
    let mut errors = Violations::default();
    if lines.len() > QUOTE_MAX_LINES {
        errors.push(
            "lines",
            format!(
                "a quote holds at most {QUOTE_MAX_LINES} lines (got {})",
                lines.len()
            ),
        );
    }
    let mut seen = HashSet::with_capacity(lines.len());
    for (i, line) in lines.iter().enumerate() {
        let path = index("lines", i);
        if !seen.insert(line.line_no) {
            errors.push(
                join(&path, "lineNo"),
                format!("{} is used twice", line.line_no),
            );
        }
        // Injected lines may exceed the per-line quantity bound by the
        // template's quantity per unit.
        let qty_max = if line.injected {
            MAX_LINE_QTY * MAX_QTY_PER_UNIT
        } else {
            MAX_LINE_QTY
        };
        if line.qty <= Decimal::ZERO || line.qty > qty_max {
            errors.push(
                join(&path, "qty"),
                format!("must be greater than 0 and at most {qty_max}"),
            );
        }
        for (name, price) in [
            ("unitPrice", line.unit_price),
            ("costPrice", line.cost_price),
        ] {
            if price.is_sign_negative() && !price.is_zero() || price > MAX_LINE_PRICE {
                errors.push(
                    join(&path, name),
                    format!("must be from 0 to {MAX_LINE_PRICE}"),
                );
            }
        }
        if line.tax_rate.is_sign_negative() && !line.tax_rate.is_zero()
            || line.tax_rate > Decimal::ONE
        {
            errors.push(join(&path, "taxRate"), "must be a fraction from 0 to 1");
        }
        let texts = [
            ("description", Some(&line.description)),
            ("specification", line.specification.as_ref()),
            ("location", line.location.as_ref()),
            ("productCode", line.product_code.as_ref()),
            ("linkedItemId", line.linked_item_id.as_ref()),
        ];
        for (name, text) in texts {
            if text.is_some_and(|text| text.chars().count() > TEXT_MAX_CHARS) {
                errors.push(
                    join(&path, name),
                    format!("must be at most {TEXT_MAX_CHARS} characters"),
                );
            }
        }
        if let Some(section) = &line.section {
            if section.trim().chars().count() > SECTION_MAX_CHARS {
                errors.push(
                    join(&path, "section"),
                    format!("must be at most {SECTION_MAX_CHARS} characters"),
                );
            }
        }
    }
    if let Some(key) = group_keys
        .keys()
        .find(|key| key.chars().count() > TEXT_MAX_CHARS)
    {
        errors.push(
            "groupKeys",
            format!(
                "a group key is longer than {TEXT_MAX_CHARS} characters ({} characters)",
                key.chars().count()
            ),
        );
    }
    for (i, line) in lines.iter().enumerate() {
        if let Some(parent) = line.parent_line_no {
            if !seen.contains(&parent) {
                errors.push(
                    join(&index("lines", i), "parentLineNo"),
                    format!("{parent} is not a line of this quote"),
                );
            }
        }
    }
    errors.into_violations()
}
