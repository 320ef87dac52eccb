//! Quotes: reading one in full with its version, creating one (with
//! idempotency), changing its header and saving its lines (each with a
//! condition on its version and idempotency), sending it.

use std::collections::BTreeMap;

use toolbridge_protocol::Decimal;
use toolbridge_protocol::Violation;
use toolbridge_protocol::add_lines::{LineType, Unit};
use toolbridge_protocol::catalog::id_key;
use toolbridge_protocol::create_quote::{
    CustomerChoice, LineProduct, LinkedProduct, NewCustomer, NewQuote, NewQuoteLine, email_key,
    generated_reference, sku_key, taken_reference, unknown_customer, unknown_sku_id,
};
use toolbridge_protocol::live::{self, Actor, QuoteChange, QuoteEvent};
use toolbridge_protocol::money::Totals;
use toolbridge_protocol::open_quote::OpenQuote;
use toolbridge_protocol::quote::{
    PricedLine, QuoteDto, QuoteHeader, QuoteLine, QuoteStatus, QuoteType,
};
use toolbridge_protocol::quote_header::HeaderChange;

use crate::db::{Tx, insert_rows, sql};
use crate::util::{decimal, iso, new_id, now_iso, to_u32, to_u64};
use crate::webhooks;
use crate::{
    Conditions, Error, Expected, Idempotency, QuoteAction, Record, Store, Unique, Versioned, Write,
    Written,
};

/// Days a new quote stays valid.
pub(crate) const NEW_QUOTE_EXPIRY_DAYS: u32 =
    toolbridge_protocol::create_quote::NEW_QUOTE_EXPIRY_DAYS;
/// Longest `Idempotency-Key`.
const IDEMPOTENCY_KEY_MAX_CHARS: usize = 255;
/// How long an idempotency key is remembered: a repeat within this time answers the first
/// request; after it, the key is forgotten (as Stripe's are, after a day).
pub(crate) const IDEMPOTENCY_KEY_KEPT: time::Duration = time::Duration::hours(24);
/// Lines per multi-row `INSERT` (18 parameters each).
const LINES_PER_INSERT: usize = 200;

pub(crate) fn quote_type_name(quote_type: QuoteType) -> &'static str {
    match quote_type {
        QuoteType::Quote => "Quote",
        QuoteType::Estimate => "Estimate",
    }
}

fn quote_type_from_name(name: &str) -> Result<QuoteType, Error> {
    match name {
        "Quote" => Ok(QuoteType::Quote),
        "Estimate" => Ok(QuoteType::Estimate),
        other => Err(Error::corrupt(format_args!("quote type {other:?}"))),
    }
}

fn status_from_name(name: &str) -> Result<QuoteStatus, Error> {
    QuoteStatus::from_name(name).ok_or_else(|| Error::corrupt(format_args!("status {name:?}")))
}

fn not_found(quote_id: &str) -> Error {
    Error::NotFound {
        what: Record::Quote,
        id: quote_id.to_owned(),
    }
}

/// [`Error::QuoteLocked`] unless the quote is a Draft.
fn check_editable(header: &QuoteHeader, action: QuoteAction) -> Result<(), Error> {
    if header.status.is_editable() {
        Ok(())
    } else {
        Err(Error::QuoteLocked {
            reference: header.reference.clone(),
            status: header.status,
            action,
        })
    }
}

/// A quote of the tenant in full, with its version; `NOT_FOUND` when the
/// tenant has none with this (normalised) id.
pub(crate) async fn load_quote(
    tx: &mut Tx,
    tenant_id: &str,
    quote_id: &str,
) -> Result<Versioned, Error> {
    let row: Option<HeaderRow> = sql(
        "SELECT q.id, q.reference, q.customer_id, c.name, q.job_id, q.title, \
         q.quote_type, q.status, q.date, q.expiry_days, q.version FROM quotes q \
         JOIN customers c ON c.id = q.customer_id \
         WHERE q.tenant_id = $1 AND q.id = $2",
    )
    .bind(tenant_id)
    .bind(quote_id)
    .fetch_optional(&mut *tx)
    .await?;
    let (header, version) = header_from_row(row.ok_or_else(|| not_found(quote_id))?)?;
    let lines = load_lines(tx, &header.id).await?;

    let keys: Vec<(String, i64)> =
        sql("SELECT group_key, group_id FROM quote_group_keys WHERE quote_id = $1")
            .bind(&header.id)
            .fetch_all(&mut *tx)
            .await?;
    let group_keys = keys
        .into_iter()
        .map(|(key, id)| Ok((key, to_u32(id)?)))
        .collect::<Result<BTreeMap<_, _>, Error>>()?;
    let totals = Totals::sum(lines.iter().map(|line| line.amounts));
    Ok(Versioned {
        quote: QuoteDto {
            header,
            lines,
            group_keys,
            totals,
        },
        version,
    })
}

/// A quote's header as [`load_quote`] reads it: id, reference, customer id and name, job id,
/// title, type, status, date, expiry days; and the quote's version.
type HeaderRow = (
    String,
    String,
    String,
    String,
    Option<String>,
    Option<String>,
    String,
    String,
    String,
    i64,
    i64,
);

/// A quote's header from its row, and its version.
fn header_from_row(row: HeaderRow) -> Result<(QuoteHeader, u64), Error> {
    let (
        id,
        reference,
        customer_id,
        customer_name,
        job_id,
        title,
        quote_type,
        status,
        date,
        days,
        version,
    ) = row;
    let header = QuoteHeader {
        id,
        reference,
        customer_id,
        customer_name,
        job_id,
        title,
        quote_type: quote_type_from_name(&quote_type)?,
        status: status_from_name(&status)?,
        date,
        expiry_days: to_u32(days)?,
    };
    Ok((header, to_u64(version)?))
}

/// A quote line as [`load_lines`] reads it, in the order of its columns.
type LineRow = (
    i64,
    String,
    Option<String>,
    Option<String>,
    String,
    Option<String>,
    Option<String>,
    String,
    String,
    String,
    String,
    String,
    Option<String>,
    i64,
    i64,
    Option<i64>,
);

/// A quote's lines with their amounts, in order.
async fn load_lines(tx: &mut Tx, quote_id: &str) -> Result<Vec<PricedLine>, Error> {
    let rows: Vec<LineRow> = sql(
        "SELECT line_no, line_type, linked_item_id, product_code, description, specification, \
         location, qty, unit, unit_price, cost_price, tax_rate, section, group_id, injected, \
         parent_line_no FROM quote_lines WHERE quote_id = $1 ORDER BY position",
    )
    .bind(quote_id)
    .fetch_all(&mut *tx)
    .await?;
    let mut lines = Vec::with_capacity(rows.len());
    for row in rows {
        let (
            line_no,
            line_type,
            linked_item_id,
            product_code,
            description,
            specification,
            location,
            qty,
            unit,
            unit_price,
            cost_price,
            tax_rate,
            section,
            group_id,
            injected,
            parent,
        ) = row;
        let line = QuoteLine {
            line_no: to_u32(line_no)?,
            line_type: LineType::from_token(&line_type)
                .ok_or_else(|| Error::corrupt(format_args!("line type {line_type:?}")))?,
            linked_item_id,
            product_code,
            description,
            specification,
            location,
            qty: decimal(&qty)?,
            unit: Unit::from_token(&unit)
                .ok_or_else(|| Error::corrupt(format_args!("unit {unit:?}")))?,
            unit_price: decimal(&unit_price)?,
            cost_price: decimal(&cost_price)?,
            tax_rate: decimal(&tax_rate)?,
            section,
            group_id: to_u32(group_id)?,
            injected: injected != 0,
            parent_line_no: parent.map(to_u32).transpose()?,
        };
        lines.push(PricedLine::new(line));
    }
    Ok(lines)
}

/// Replaces a quote's lines and group keys, and its stored total.
async fn write_lines(tx: &mut Tx, quote: &QuoteDto) -> Result<(), Error> {
    let quote_id = quote.header.id.as_str();
    for table in ["quote_lines", "quote_group_keys"] {
        sql(format!("DELETE FROM {table} WHERE quote_id = $1"))
            .bind(quote_id)
            .execute(&mut *tx)
            .await?;
    }
    insert_lines(tx, quote).await?;
    sql("UPDATE quotes SET total = $1 WHERE id = $2")
        .bind(quote.totals.total.to_string())
        .bind(quote_id)
        .execute(&mut *tx)
        .await?;
    Ok(())
}

/// Adds a quote's lines and group keys.
async fn insert_lines(tx: &mut Tx, quote: &QuoteDto) -> Result<(), Error> {
    let quote_id = quote.header.id.as_str();
    for (chunk_no, chunk) in quote.lines.chunks(LINES_PER_INSERT).enumerate() {
        let mut insert = sql(insert_rows(
            "INSERT INTO quote_lines (quote_id, position, line_no, line_type, linked_item_id, \
             product_code, description, specification, location, qty, unit, unit_price, \
             cost_price, tax_rate, section, group_id, injected, parent_line_no)",
            18,
            chunk.len(),
        ))
        .once();
        for (i, priced) in chunk.iter().enumerate() {
            let line = &priced.line;
            let position = i64::try_from(chunk_no * LINES_PER_INSERT + i).unwrap_or(i64::MAX);
            insert.push_bind(quote_id);
            insert.push_bind(position);
            insert.push_bind(line.line_no);
            insert.push_bind(line.line_type.token());
            insert.push_bind(&line.linked_item_id);
            insert.push_bind(&line.product_code);
            insert.push_bind(&line.description);
            insert.push_bind(&line.specification);
            insert.push_bind(&line.location);
            insert.push_bind(line.qty.to_string());
            insert.push_bind(line.unit.token());
            insert.push_bind(line.unit_price.to_string());
            insert.push_bind(line.cost_price.to_string());
            insert.push_bind(line.tax_rate.to_string());
            insert.push_bind(&line.section);
            insert.push_bind(line.group_id);
            insert.push_bind(line.injected);
            insert.push_bind(line.parent_line_no.map(i64::from));
        }
        insert.execute(&mut *tx).await?;
    }
    for (key, group_id) in &quote.group_keys {
        sql("INSERT INTO quote_group_keys (quote_id, group_key, group_id) VALUES ($1, $2, $3)")
            .bind(quote_id)
            .bind(key)
            .bind(i64::from(*group_id))
            .execute(&mut *tx)
            .await?;
    }
    Ok(())
}

/// Adds a quote of the tenant, its lines and its total; the header's customer (and job) must be
/// the tenant's. [`Error::Taken`] when another quote of the tenant has its reference.
pub(crate) async fn insert_quote(
    tx: &mut Tx,
    tenant_id: &str,
    quote: &QuoteDto,
) -> Result<(), Error> {
    let header = &quote.header;
    sql(
        "INSERT INTO quotes (id, tenant_id, reference, customer_id, job_id, title, \
         quote_type, status, date, expiry_days, total) \
         VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11)",
    )
    .bind(&header.id)
    .bind(tenant_id)
    .bind(&header.reference)
    .bind(&header.customer_id)
    .bind(&header.job_id)
    .bind(&header.title)
    .bind(quote_type_name(header.quote_type))
    .bind(header.status.as_str())
    .bind(&header.date)
    .bind(i64::from(header.expiry_days))
    .bind(quote.totals.total.to_string())
    .execute(&mut *tx)
    .await
    .map_err(|error| Error::on_write(error, Unique::QuoteReference, &header.reference))?;
    insert_lines(tx, quote).await
}

/// Adds a customer to the tenant; its id.
pub(crate) async fn insert_customer(
    tx: &mut Tx,
    tenant_id: &str,
    customer: &NewCustomer,
) -> Result<String, Error> {
    let id = new_id();
    sql(
        "INSERT INTO customers (id, tenant_id, name, email, email_lower, phone) \
         VALUES ($1, $2, $3, $4, $5, $6)",
    )
    .bind(&id)
    .bind(tenant_id)
    .bind(&customer.name)
    .bind(&customer.email)
    .bind(email_key(&customer.email))
    .bind(&customer.phone)
    .execute(&mut *tx)
    .await?;
    Ok(id)
}

/// Who a new quote is for, once resolved.
enum CustomerPlan {
    /// A customer of the tenant: its id and name.
    Existing(String, String),
    /// A customer to create.
    Create(NewCustomer),
}

type ProductRow = (String, String, String, String, String);

fn linked(row: ProductRow) -> Result<LinkedProduct, Error> {
    let (id, sku, name, unit, cost_price) = row;
    Ok(LinkedProduct {
        id,
        sku,
        name,
        unit: Unit::from_token(&unit)
            .ok_or_else(|| Error::corrupt(format_args!("unit {unit:?}")))?,
        cost_price: decimal(&cost_price)?,
    })
}

async fn resolve_customer(
    tx: &mut Tx,
    tenant_id: &str,
    choice: &CustomerChoice,
    violations: &mut Vec<Violation>,
) -> Result<Option<(CustomerPlan, Option<String>)>, Error> {
    match choice {
        CustomerChoice::Existing { customer_id } => {
            let found: Option<(String, String)> =
                sql("SELECT id, name FROM customers WHERE tenant_id = $1 AND id = $2")
                    .bind(tenant_id)
                    .bind(id_key(customer_id))
                    .fetch_optional(&mut *tx)
                    .await?;
            if let Some((id, name)) = found {
                return Ok(Some((CustomerPlan::Existing(id, name), None)));
            }
            violations.push(unknown_customer(customer_id));
            Ok(None)
        }
        CustomerChoice::FromJob { job_id } => {
            let found: Option<(String, String, String)> = sql(
                "SELECT j.id, c.id, c.name FROM jobs j JOIN customers c ON c.id = j.customer_id \
                 WHERE j.tenant_id = $1 AND j.id = $2",
            )
            .bind(tenant_id)
            .bind(id_key(job_id))
            .fetch_optional(&mut *tx)
            .await?;
            match found {
                Some((job, customer, name)) => {
                    Ok(Some((CustomerPlan::Existing(customer, name), Some(job))))
                }
                None => Err(Error::NotFound {
                    what: Record::Job,
                    id: job_id.clone(),
                }),
            }
        }
        CustomerChoice::UpsertByEmail { email, .. } => {
            let found: Option<(String, String)> = sql(
                "SELECT id, name FROM customers WHERE tenant_id = $1 AND email_lower = $2 \
                 ORDER BY name, id LIMIT 1",
            )
            .bind(tenant_id)
            .bind(email_key(email))
            .fetch_optional(&mut *tx)
            .await?;
            Ok(match (found, choice.customer_to_create()) {
                (Some((id, name)), _) => Some((CustomerPlan::Existing(id, name), None)),
                (None, Some(customer)) => Some((CustomerPlan::Create(customer), None)),
                (None, None) => None,
            })
        }
        CustomerChoice::New { .. } => Ok(choice
            .customer_to_create()
            .map(|customer| (CustomerPlan::Create(customer), None))),
    }
}

/// The quote lines of a request: products linked and checked, defaults
/// applied. A `skuId` that is not an active product of the tenant is a
/// violation at `lines[i].skuId`.
async fn resolve_lines(
    tx: &mut Tx,
    tenant_id: &str,
    lines: &[NewQuoteLine],
    default_tax_rate: Decimal,
    violations: &mut Vec<Violation>,
) -> Result<Vec<QuoteLine>, Error> {
    const BY_ID: &str = "SELECT id, sku, name, unit, cost_price FROM products \
                         WHERE tenant_id = $1 AND active = 1 AND id = $2";
    const BY_SKU: &str = "SELECT id, sku, name, unit, cost_price FROM products \
                          WHERE tenant_id = $1 AND active = 1 AND sku_lower = $2";
    let mut resolved = Vec::with_capacity(lines.len());
    for (i, line) in lines.iter().enumerate() {
        let product = match &line.product {
            LineProduct::SkuId(sku_id) => {
                let row: Option<ProductRow> = sql(BY_ID)
                    .bind(tenant_id)
                    .bind(id_key(sku_id))
                    .fetch_optional(&mut *tx)
                    .await?;
                if row.is_none() {
                    violations.push(unknown_sku_id(i, sku_id));
                }
                row.map(linked).transpose()?
            }
            LineProduct::Code(code) => {
                let row: Option<ProductRow> = sql(BY_SKU)
                    .bind(tenant_id)
                    .bind(sku_key(code))
                    .fetch_optional(&mut *tx)
                    .await?;
                row.map(linked).transpose()?
            }
            LineProduct::None => None,
        };
        let line_no = u32::try_from(i + 1).unwrap_or(u32::MAX);
        resolved.push(line.to_quote_line(line_no, product.as_ref(), default_tax_rate));
    }
    Ok(resolved)
}

/// The next free generated reference of the tenant: `Q-` and its sequence.
async fn next_reference(tx: &mut Tx, tenant_id: &str) -> Result<String, Error> {
    loop {
        let seq: i64 =
            sql("UPDATE tenants SET quote_seq = quote_seq + 1 WHERE id = $1 RETURNING quote_seq")
                .bind(tenant_id)
                .fetch_scalar(&mut *tx)
                .await?;
        let reference = generated_reference(u64::try_from(seq).unwrap_or_default());
        if !reference_taken(tx, tenant_id, &reference).await? {
            return Ok(reference);
        }
    }
}

async fn reference_taken(tx: &mut Tx, tenant_id: &str, reference: &str) -> Result<bool, Error> {
    let taken: bool =
        sql("SELECT EXISTS (SELECT 1 FROM quotes WHERE tenant_id = $1 AND reference = $2)")
            .bind(tenant_id)
            .bind(reference)
            .fetch_scalar(&mut *tx)
            .await?;
    Ok(taken)
}

/// An `Idempotency-Key` header is 1 to 255 characters.
fn check_idempotency_key(key: &str) -> Result<(), Error> {
    let chars = key.chars().count();
    if chars == 0 || chars > IDEMPOTENCY_KEY_MAX_CHARS {
        return Err(Error::Invalid(vec![Violation::new(
            "Idempotency-Key",
            format!("must be 1 to {IDEMPOTENCY_KEY_MAX_CHARS} characters"),
        )]));
    }
    Ok(())
}

/// What an idempotency key was first used for: the `operation` of its row.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Operation {
    /// `POST /quotes`.
    Create,
    /// `PUT /quotes/{id}/lines`.
    Lines,
    /// `PATCH /quotes/{id}`.
    Header,
}

impl Operation {
    /// The name its rows hold.
    fn name(self) -> &'static str {
        match self {
            Operation::Create => "create",
            Operation::Lines => "lines",
            Operation::Header => "header",
        }
    }
}

/// An earlier request with an idempotency key, as its row keeps it.
struct Claim {
    operation: String,
    body_hash: String,
    quote_id: String,
    /// The version a change made (none for a create).
    version: Option<i64>,
}

impl Claim {
    /// Whether it was the request `operation` on `quote_id` (any quote for a create) with the
    /// body of `idempotency`.
    fn is(&self, operation: Operation, quote_id: Option<&str>, idempotency: &Idempotency) -> bool {
        self.operation == operation.name()
            && quote_id.is_none_or(|id| id == self.quote_id)
            && self.body_hash.eq_ignore_ascii_case(&idempotency.body_hash)
    }
}

/// The earlier request with this idempotency key, if there was one.
async fn earlier_claim(
    tx: &mut Tx,
    tenant_id: &str,
    idempotency: &Idempotency,
) -> Result<Option<Claim>, Error> {
    let seen: Option<(String, String, String, Option<i64>)> = sql(
        "SELECT operation, body_hash, quote_id, version FROM idempotency_keys \
         WHERE tenant_id = $1 AND key_id = $2 AND idem_key = $3",
    )
    .bind(tenant_id)
    .bind(&idempotency.key_id)
    .bind(&idempotency.key)
    .fetch_optional(&mut *tx)
    .await?;
    Ok(seen.map(|(operation, body_hash, quote_id, version)| Claim {
        operation,
        body_hash,
        quote_id,
        version,
    }))
}

/// The quote an earlier request with this idempotency key created, when the
/// body was the same; [`Error::IdempotencyKeyReused`] when it was not (or
/// when the key was used for a change to a quote).
async fn earlier_quote(
    tx: &mut Tx,
    tenant_id: &str,
    idempotency: &Idempotency,
) -> Result<Option<String>, Error> {
    match earlier_claim(tx, tenant_id, idempotency).await? {
        None => Ok(None),
        Some(claim) if claim.is(Operation::Create, None, idempotency) => Ok(Some(claim.quote_id)),
        Some(_) => Err(Error::IdempotencyKeyReused),
    }
}

/// Claims an idempotency key for `operation` on `quote_id`, which made `version` of it (none
/// for a create). `false` when another transaction claimed the key first (it waited for that
/// one to commit).
async fn claim_key(
    tx: &mut Tx,
    tenant_id: &str,
    idempotency: &Idempotency,
    operation: Operation,
    quote_id: &str,
    version: Option<u64>,
) -> Result<bool, Error> {
    let version = version.map(version_arg).transpose()?;
    let claimed = sql("INSERT INTO idempotency_keys \
         (tenant_id, key_id, idem_key, body_hash, quote_id, created_at, operation, version) \
         VALUES ($1, $2, $3, $4, $5, $6, $7, $8) \
         ON CONFLICT (tenant_id, key_id, idem_key) DO NOTHING")
    .bind(tenant_id)
    .bind(&idempotency.key_id)
    .bind(&idempotency.key)
    .bind(idempotency.body_hash.to_ascii_lowercase())
    .bind(quote_id)
    .bind(now_iso())
    .bind(operation.name())
    .bind(version)
    .execute(&mut *tx)
    .await?;
    // The same client's keys past their time go as it claims a new one: a walk along the
    // primary key's prefix, and the table holds about a day of each client's changes.
    let forgotten_before = iso(time::OffsetDateTime::now_utc() - IDEMPOTENCY_KEY_KEPT);
    sql("DELETE FROM idempotency_keys \
         WHERE tenant_id = $1 AND key_id = $2 AND created_at < $3")
    .bind(tenant_id)
    .bind(&idempotency.key_id)
    .bind(forgotten_before)
    .execute(&mut *tx)
    .await?;
    Ok(claimed > 0)
}

/// A version as the database holds it.
fn version_arg(version: u64) -> Result<i64, Error> {
    i64::try_from(version).map_err(|_| Error::corrupt(format_args!("quote version {version}")))
}

/// [`Error::Changed`] for `current`, which is not at a version the change was made against.
fn changed(current: &Versioned) -> Error {
    Error::Changed {
        quote_id: current.quote.header.id.clone(),
        reference: current.quote.header.reference.clone(),
        version: current.version,
    }
}

/// A change to `current` that has to be made, or the answer to a repeat of one already made:
/// the start of every change to a quote, once it is locked and read.
///
/// With an idempotency key already used for this very change (the same operation on the same
/// quote with the same body), the change is not made again: the answer is the quote as that
/// change left it when the quote is still at the version it made (the first answer), or as it
/// is now when the request's condition still holds; otherwise [`Error::Changed`], as the quote
/// changed again since. A key used for anything else is [`Error::IdempotencyKeyReused`].
async fn replay(
    tx: &mut Tx,
    tenant_id: &str,
    current: Versioned,
    operation: Operation,
    conditions: &Conditions,
) -> Result<Result<Written, Versioned>, Error> {
    let Some(idempotency) = &conditions.idempotency else {
        return Ok(Err(current));
    };
    let Some(claim) = earlier_claim(tx, tenant_id, idempotency).await? else {
        return Ok(Err(current));
    };
    if !claim.is(operation, Some(&current.quote.header.id), idempotency) {
        return Err(Error::IdempotencyKeyReused);
    }
    let made = claim.version.map(to_u64).transpose()?;
    if made != Some(current.version) && !conditions.expected.matches(current.version) {
        return Err(changed(&current));
    }
    Ok(Ok(Written {
        quote: current.quote,
        version: current.version,
        replayed: true,
    }))
}

/// [`Error::Changed`] unless `current` is at a version `expected` names.
fn check_expected(current: &Versioned, expected: &Expected) -> Result<(), Error> {
    if expected.matches(current.version) {
        Ok(())
    } else {
        Err(changed(current))
    }
}

/// Bumps the quote's version, for a change to it; the new version.
async fn bump_version(tx: &mut Tx, tenant_id: &str, quote_id: &str) -> Result<u64, Error> {
    let version: i64 = sql(
        "UPDATE quotes SET version = version + 1 WHERE tenant_id = $1 AND id = $2 \
         RETURNING version",
    )
    .bind(tenant_id)
    .bind(quote_id)
    .fetch_scalar(&mut *tx)
    .await?;
    to_u64(version)
}

/// Claims the key of `conditions`, if it has one, for the change `operation` to `quote_id`
/// that made `version`. Another transaction cannot have claimed it for this same change (changes
/// to one quote take turns, and each looks for its key first): one that claimed it meanwhile
/// did so for another request, and the key is [`Error::IdempotencyKeyReused`].
async fn claim_change(
    tx: &mut Tx,
    tenant_id: &str,
    conditions: &Conditions,
    operation: Operation,
    quote_id: &str,
    version: u64,
) -> Result<(), Error> {
    if let Some(idempotency) = &conditions.idempotency {
        if !claim_key(
            tx,
            tenant_id,
            idempotency,
            operation,
            quote_id,
            Some(version),
        )
        .await?
        {
            return Err(Error::IdempotencyKeyReused);
        }
    }
    Ok(())
}

/// The tenant's default tax rate; [`Error::NotFound`] for an unknown tenant.
async fn tenant_tax_rate(tx: &mut Tx, tenant_id: &str) -> Result<Decimal, Error> {
    let rate: Option<String> = sql("SELECT default_tax_rate FROM tenants WHERE id = $1")
        .bind(tenant_id)
        .fetch_optional_scalar(&mut *tx)
        .await?;
    match rate {
        Some(rate) => decimal(&rate),
        None => Err(Error::NotFound {
            what: Record::Tenant,
            id: tenant_id.to_owned(),
        }),
    }
}

/// The id and name of the quote's customer, creating the customer when planned.
async fn customer_for_quote(
    tx: &mut Tx,
    tenant_id: &str,
    plan: CustomerPlan,
) -> Result<(String, String), Error> {
    match plan {
        CustomerPlan::Existing(id, name) => Ok((id, name)),
        CustomerPlan::Create(customer) => {
            let id = insert_customer(tx, tenant_id, &customer).await?;
            Ok((id, customer.name))
        }
    }
}

/// Attempts at creating a quote when other transactions get in the way (several processes on
/// one `PostgreSQL`): a generated reference or the idempotency key taken meanwhile.
const CREATE_ATTEMPTS: usize = 3;

/// Locks the tenant's quote until the write ends, so that writes to one quote take turns and
/// each sees what the one before it left (its state, its lines).
async fn lock_quote(tx: &mut Tx, tenant_id: &str, quote_id: &str) -> Result<(), Error> {
    tx.lock_rows(
        sql("SELECT id FROM quotes WHERE tenant_id = $1 AND id = $2")
            .bind(tenant_id)
            .bind(quote_id),
    )
    .await?;
    Ok(())
}

impl Store {
    /// Creates a Draft quote (DESIGN.md §4), all in one transaction.
    ///
    /// Customer: `Existing` must be a customer of the tenant (else a
    /// violation at `customerId`); `FromJob` takes the job's customer
    /// ([`Error::NotFound`] for an unknown job); `UpsertByEmail` matches the
    /// email case-insensitively or creates a customer (named after the email
    /// when no name is given); `New` creates one. Lines: a `skuId` must be an
    /// active product (else a violation at `lines[i].skuId`, every bad line
    /// listed); a product code links to the active product with that sku
    /// (case-insensitive) or stays free-form with its code. Linked lines take
    /// the product's name (when no description is given), unit and cost
    /// price; free-form lines cost their unit price. No tax rate means the
    /// tenant's default. A `quoteRef` must be new to the tenant (else a
    /// violation at `quoteRef`, or [`Error::Taken`] should another quote
    /// take it meanwhile); without one the next `Q-<n>` is used. Violations
    /// come together in one [`Error::Invalid`].
    ///
    /// With an idempotency key, claimed in the same transaction: a key seen
    /// before with the same body answers the first quote (`replayed`,
    /// nothing created); with another body it is
    /// [`Error::IdempotencyKeyReused`]. Requests with the same key at once,
    /// from any number of processes, make one quote: the others wait for it
    /// and answer it. A key used for a change to a quote is
    /// [`Error::IdempotencyKeyReused`] too. A new quote is at version 1.
    pub async fn create_quote(
        &self,
        tenant_id: &str,
        request: &NewQuote,
        idempotency: Option<&Idempotency>,
        by: &Actor,
    ) -> Result<Written, Error> {
        if let Some(idempotency) = idempotency {
            check_idempotency_key(&idempotency.key)?;
        }
        let mut attempts = 0;
        loop {
            attempts += 1;
            let taken = match self
                .try_create_quote(tenant_id, request, idempotency, by)
                .await
            {
                Ok(Some(created)) => return Ok(created),
                Ok(None) => None,
                Err(error @ Error::Taken { .. }) => Some(error),
                Err(error) => return Err(error),
            };
            // Another transaction committed first. With the same idempotency key, its
            // quote is the answer (the reference it took may be this request's own).
            if let Some(idempotency) = idempotency {
                let mut tx = self.pool.begin_read().await?;
                if let Some(quote_id) = earlier_quote(&mut tx, tenant_id, idempotency).await? {
                    let current = load_quote(&mut tx, tenant_id, &quote_id).await?;
                    tx.commit().await?;
                    return Ok(Written {
                        quote: current.quote,
                        version: current.version,
                        replayed: true,
                    });
                }
            }
            // A reference the request named is taken: that is the answer. A generated one
            // taken meanwhile is not the request's fault: the next one is free.
            if attempts >= CREATE_ATTEMPTS || request.quote_ref.is_some() {
                return Err(taken.unwrap_or_else(|| {
                    Error::corrupt(
                        "an idempotency key another transaction claimed, which is not there",
                    )
                }));
            }
        }
    }

    /// One attempt of [`Store::create_quote`], in one transaction. `None`
    /// when another transaction committed the same idempotency key while
    /// this one ran (several processes on one `PostgreSQL`): this one rolled
    /// back, and the other's quote is the answer.
    async fn try_create_quote(
        &self,
        tenant_id: &str,
        request: &NewQuote,
        idempotency: Option<&Idempotency>,
        by: &Actor,
    ) -> Result<Option<Written>, Error> {
        let mut tx = self.begin_write().await?;

        if let Some(idempotency) = idempotency {
            if let Some(quote_id) = earlier_quote(&mut tx, tenant_id, idempotency).await? {
                let current = committed_quote(tx, tenant_id, &quote_id, None).await?;
                return Ok(Some(Written {
                    quote: current.quote,
                    version: current.version,
                    replayed: true,
                }));
            }
        }
        let default_tax_rate = tenant_tax_rate(&mut tx, tenant_id).await?;

        let mut violations = Vec::new();
        let customer =
            resolve_customer(&mut tx, tenant_id, &request.customer, &mut violations).await?;
        if let Some(reference) = &request.quote_ref {
            if reference_taken(&mut tx, tenant_id, reference).await? {
                violations.push(taken_reference(reference));
            }
        }
        let lines = resolve_lines(
            &mut tx,
            tenant_id,
            &request.lines,
            default_tax_rate,
            &mut violations,
        )
        .await?;
        let Some((customer, job_id)) = customer.filter(|_| violations.is_empty()) else {
            return Err(Error::Invalid(violations));
        };

        let customer = customer_for_quote(&mut tx, tenant_id, customer).await?;
        let reference = match &request.quote_ref {
            Some(reference) => reference.clone(),
            None => next_reference(&mut tx, tenant_id).await?,
        };
        let header = request.draft_header(new_id(), reference, customer, job_id, now_iso());
        let quote = QuoteDto::new(header, lines, BTreeMap::new());
        insert_quote(&mut tx, tenant_id, &quote).await?;

        if let Some(idempotency) = idempotency {
            // The claim: of two transactions with the same key, the second waits here for the
            // first, and inserts nothing if it commits.
            let claimed = claim_key(
                &mut tx,
                tenant_id,
                idempotency,
                Operation::Create,
                &quote.header.id,
                None,
            )
            .await?;
            if !claimed {
                return Ok(None);
            }
        }
        record_quote_event(&mut tx, tenant_id, QuoteChange::Created, &quote, by).await?;
        tx.commit().await?;
        Ok(Some(Written {
            quote,
            version: 1,
            replayed: false,
        }))
    }

    /// Replaces every line of a Draft quote (and its group keys) in one
    /// transaction. The lines are checked as the editor checks an opened
    /// quote ([`OpenQuote::checked`]: bounds, unique line numbers, parents
    /// that exist; every violation in one [`Error::Invalid`]);
    /// [`Error::QuoteLocked`] unless the quote is a Draft; [`Error::NotFound`]
    /// unless the tenant has it; then [`Error::Changed`] unless it is at a
    /// version `conditions` expects. Answers the saved quote with its totals
    /// and its new version. Saves (and sends) of one quote take turns.
    ///
    /// With an idempotency key already used for this same save (the same
    /// quote and lines), nothing is saved again: the answer is the quote as
    /// that save left it while the quote is still at the version it made
    /// (`replayed`), or as it is now when the quote changed since and is at a
    /// version `conditions` expects, else [`Error::Changed`]. A key used for
    /// anything else is [`Error::IdempotencyKeyReused`].
    pub async fn save_lines(
        &self,
        tenant_id: &str,
        quote_id: &str,
        lines: Vec<QuoteLine>,
        group_keys: BTreeMap<String, u32>,
        conditions: &Conditions,
        by: &Actor,
    ) -> Result<Written, Error> {
        if let Some(idempotency) = &conditions.idempotency {
            check_idempotency_key(&idempotency.key)?;
        }
        let quote_id = id_key(quote_id);
        let mut tx = self.begin_write().await?;
        lock_quote(&mut tx, tenant_id, &quote_id).await?;
        let current = load_quote(&mut tx, tenant_id, &quote_id).await?;
        let current =
            match replay(&mut tx, tenant_id, current, Operation::Lines, conditions).await? {
                Ok(replayed) => return Ok(replayed),
                Err(current) => current,
            };
        check_editable(&current.quote.header, QuoteAction::Change)?;
        let checked = OpenQuote::checked(current.quote.header.clone(), lines, group_keys)
            .map_err(Error::Invalid)?;
        check_expected(&current, &conditions.expected)?;
        write_lines(&mut tx, &checked).await?;
        let version = bump_version(&mut tx, tenant_id, &quote_id).await?;
        claim_change(
            &mut tx,
            tenant_id,
            conditions,
            Operation::Lines,
            &quote_id,
            version,
        )
        .await?;
        record_quote_event(&mut tx, tenant_id, QuoteChange::Saved, &checked, by).await?;
        tx.commit().await?;
        Ok(Written {
            quote: checked,
            version,
            replayed: false,
        })
    }

    /// Changes a Draft quote's header (customer, type, date, expiry) in one
    /// transaction. [`Error::QuoteLocked`] unless the quote is a Draft;
    /// [`Error::NotFound`] unless the tenant has it; [`Error::Invalid`] at
    /// `customerId` for a customer the tenant does not have; then
    /// [`Error::Changed`] unless it is at a version `conditions` expects.
    /// Answers the changed quote with its new version; an idempotency key
    /// works as [`Store::save_lines`]' does.
    pub async fn update_quote_header(
        &self,
        tenant_id: &str,
        quote_id: &str,
        change: &HeaderChange,
        conditions: &Conditions,
        by: &Actor,
    ) -> Result<Written, Error> {
        if let Some(idempotency) = &conditions.idempotency {
            check_idempotency_key(&idempotency.key)?;
        }
        let quote_id = id_key(quote_id);
        let mut tx = self.begin_write().await?;
        lock_quote(&mut tx, tenant_id, &quote_id).await?;
        let current = load_quote(&mut tx, tenant_id, &quote_id).await?;
        let current =
            match replay(&mut tx, tenant_id, current, Operation::Header, conditions).await? {
                Ok(replayed) => return Ok(replayed),
                Err(current) => current,
            };
        let header = &current.quote.header;
        check_editable(header, QuoteAction::Change)?;
        let customer_id = match &change.customer_id {
            Some(given) => {
                let id = id_key(given);
                let known: bool =
                    sql("SELECT EXISTS (SELECT 1 FROM customers WHERE tenant_id = $1 AND id = $2)")
                        .bind(tenant_id)
                        .bind(&id)
                        .fetch_scalar(&mut *tx)
                        .await?;
                if !known {
                    // The same words as a new quote's unknown customer: one rule, one answer.
                    return Err(Error::Invalid(vec![unknown_customer(given)]));
                }
                id
            }
            None => header.customer_id.clone(),
        };
        check_expected(&current, &conditions.expected)?;
        sql(
            "UPDATE quotes SET customer_id = $1, quote_type = $2, date = $3, expiry_days = $4 \
             WHERE tenant_id = $5 AND id = $6",
        )
        .bind(&customer_id)
        .bind(quote_type_name(
            change.quote_type.unwrap_or(header.quote_type),
        ))
        .bind(change.date.as_deref().unwrap_or(&header.date))
        .bind(change.expiry_days.unwrap_or(header.expiry_days))
        .bind(tenant_id)
        .bind(&quote_id)
        .execute(&mut *tx)
        .await?;
        let version = bump_version(&mut tx, tenant_id, &quote_id).await?;
        claim_change(
            &mut tx,
            tenant_id,
            conditions,
            Operation::Header,
            &quote_id,
            version,
        )
        .await?;
        let changed =
            committed_quote(tx, tenant_id, &quote_id, Some((QuoteChange::Saved, by))).await?;
        Ok(Written {
            quote: changed.quote,
            version: changed.version,
            replayed: false,
        })
    }

    /// Send Quote: a Draft becomes Sent (and locked), at its next version.
    /// [`Error::QuoteLocked`] for any other state; [`Error::NotFound`] unless
    /// the tenant has the quote.
    pub async fn send_quote(
        &self,
        tenant_id: &str,
        quote_id: &str,
        by: &Actor,
    ) -> Result<Versioned, Error> {
        self.send_quote_at(tenant_id, quote_id, &Expected::Any, by)
            .await
    }

    /// [`Store::send_quote`], only while the quote is at a version `expected`
    /// names: what is sent is what the sender last saw. [`Error::Changed`],
    /// nothing sent, once it changed since.
    pub async fn send_quote_at(
        &self,
        tenant_id: &str,
        quote_id: &str,
        expected: &Expected,
        by: &Actor,
    ) -> Result<Versioned, Error> {
        let quote_id = id_key(quote_id);
        let mut tx = self.begin_write().await?;
        lock_quote(&mut tx, tenant_id, &quote_id).await?;
        let row: Option<(String, String, i64)> =
            sql("SELECT status, reference, version FROM quotes WHERE tenant_id = $1 AND id = $2")
                .bind(tenant_id)
                .bind(&quote_id)
                .fetch_optional(&mut *tx)
                .await?;
        let Some((status, reference, version)) = row else {
            return Err(not_found(&quote_id));
        };
        let status = status_from_name(&status)?;
        let Some(sent) = status.sent() else {
            return Err(Error::QuoteLocked {
                reference,
                status,
                action: QuoteAction::Send,
            });
        };
        let version = to_u64(version)?;
        if !expected.matches(version) {
            return Err(Error::Changed {
                quote_id,
                reference,
                version,
            });
        }
        sql(
            "UPDATE quotes SET status = $1, version = version + 1 WHERE tenant_id = $2 AND id = $3",
        )
        .bind(sent.as_str())
        .bind(tenant_id)
        .bind(&quote_id)
        .execute(&mut *tx)
        .await?;
        committed_quote(tx, tenant_id, &quote_id, Some((QuoteChange::Sent, by))).await
    }
}

/// The tenant's quote as a write leaves it, with its version, once the write commits, with the
/// live event of the change (what it was, and who made it) when there is one.
async fn committed_quote(
    mut tx: Write<'_>,
    tenant_id: &str,
    quote_id: &str,
    change: Option<(QuoteChange, &Actor)>,
) -> Result<Versioned, Error> {
    let current = load_quote(&mut tx, tenant_id, quote_id).await?;
    if let Some((kind, by)) = change {
        record_quote_event(&mut tx, tenant_id, kind, &current.quote, by).await?;
    }
    tx.commit().await?;
    Ok(current)
}

/// Records, in `tx`, that `by` made the change `kind` to `quote`: the tenant's open pages hear
/// it once `tx` commits, and its webhook endpoints that receive the event get a delivery (the
/// outbox, written in the same transaction).
async fn record_quote_event(
    tx: &mut Write<'_>,
    tenant_id: &str,
    kind: QuoteChange,
    quote: &QuoteDto,
    by: &Actor,
) -> Result<(), Error> {
    let event = QuoteEvent {
        kind,
        quote: quote.summary(),
        by: by.clone(),
    };
    let data = serde_json::to_string(&event)
        .map_err(|e| Error::corrupt_because("a quote event that does not serialize", e))?;
    tx.record_live(tenant_id, live::QUOTE, data).await?;
    webhooks::enqueue(tx, tenant_id, webhooks::event_type(kind), quote).await
}
