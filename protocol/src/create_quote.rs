//! `quotes.create` (bridge) and `POST /api/v1/quotes` (REST): their request
//! DTOs and the one rule set both are validated by.

use rust_decimal::Decimal;
use serde::{Deserialize, Serialize};
use serde_json::Value;

use crate::add_lines::{LineType, Unit};
use crate::error::{Error, Violation, Violations};
use crate::input::{Fields, Floor};
use crate::limits::{
    CREATE_MAX_LINES, CREATE_MAX_QTY, CREATE_MAX_UNIT_PRICE, CREATE_MIN_LINES, EMAIL_MAX_CHARS,
    TEXT_MAX_CHARS,
};
use crate::quote::{QuoteHeader, QuoteLine, QuoteStatus, QuoteType};
use crate::tax::fraction_rate;

// The schema attributes below state, for the OpenAPI document, the bounds
// that `validate_bridge_create` and `validate_rest_create` enforce (the
// numbers of `crate::limits`, written out because utoipa takes only
// literals; a server test holds the two together).
/// `quotes.create(request)`, with SPEC.md's field names.
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
#[derive(Debug, Clone, PartialEq, Default, Serialize, Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct BridgeCreateQuoteRequest {
    /// Job the quote is for; its customer becomes the quote's customer.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[cfg_attr(feature = "openapi", schema(max_length = 1000))]
    pub job_id: Option<String>,
    /// Name of a new customer (or of the upserted one).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[cfg_attr(feature = "openapi", schema(max_length = 1000))]
    pub customer_name: Option<String>,
    /// Email; required when `upsertByEmail` is true.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[cfg_attr(feature = "openapi", schema(max_length = 254))]
    pub customer_email: Option<String>,
    /// Phone.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[cfg_attr(feature = "openapi", schema(max_length = 1000))]
    pub customer_phone: Option<String>,
    /// Match the customer by email, or create one; false when omitted.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub upsert_by_email: Option<bool>,
    /// Quote title.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[cfg_attr(feature = "openapi", schema(max_length = 1000))]
    pub title: Option<String>,
    /// Custom quote reference.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[cfg_attr(feature = "openapi", schema(max_length = 1000))]
    pub quote_ref: Option<String>,
    /// At least one line, at most 200.
    #[cfg_attr(feature = "openapi", schema(min_items = 1, max_items = 200))]
    pub lines: Vec<BridgeQuoteLineRequest>,
}

/// A line of `quotes.create`.
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
#[derive(Debug, Clone, PartialEq, Default, Serialize, Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct BridgeQuoteLineRequest {
    /// Line name.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[cfg_attr(feature = "openapi", schema(max_length = 1000))]
    pub description: Option<String>,
    /// A product's `sku`; links the line when an active product has it.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[cfg_attr(feature = "openapi", schema(max_length = 1000))]
    pub product_code: Option<String>,
    /// More than 0, at most 10000. Amounts are decimals of at most 28
    /// places, so the smallest quantity is 1e-28 (less reads as 0).
    #[cfg_attr(feature = "openapi", schema(minimum = 1e-28, maximum = 10000))]
    pub qty: f64,
    /// From 0 to 1000000.
    #[cfg_attr(feature = "openapi", schema(minimum = 0, maximum = 1_000_000))]
    pub unit_price: f64,
    /// Decimal fraction from 0 to 1: 0.15 means 15%.
    #[cfg_attr(feature = "openapi", schema(minimum = 0, maximum = 1))]
    pub tax_rate: f64,
}

/// `POST /api/v1/quotes` body.
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
#[derive(Debug, Clone, PartialEq, Default, Serialize, Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct RestCreateQuoteRequest {
    /// A customer of the key's tenant (not blank).
    // "Not blank" as the rule reads it (`str::trim`): a character outside Unicode's White_Space.
    // Spelled out, since ECMAScript's `\s`, which a schema's `\S` means, leaves out U+0085 and
    // counts U+FEFF. The other not-blank fields of the API carry the same pattern.
    #[cfg_attr(
        feature = "openapi",
        schema(
            max_length = 1000,
            pattern = r"[^\t-\r \u0085\u00a0\u1680\u2000-\u200a\u2028\u2029\u202f\u205f\u3000]"
        )
    )]
    pub customer_id: String,
    /// Quote title.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[cfg_attr(feature = "openapi", schema(max_length = 1000))]
    pub title: Option<String>,
    /// Custom quote reference.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[cfg_attr(feature = "openapi", schema(max_length = 1000))]
    pub quote_ref: Option<String>,
    /// At least one line, at most 200.
    #[cfg_attr(feature = "openapi", schema(min_items = 1, max_items = 200))]
    pub lines: Vec<RestQuoteLineRequest>,
}

/// A line of `POST /api/v1/quotes`.
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
#[derive(Debug, Clone, PartialEq, Default, Serialize, Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct RestQuoteLineRequest {
    /// A product `id` from `GET /api/v1/products` (not blank).
    #[cfg_attr(
        feature = "openapi",
        schema(
            max_length = 1000,
            pattern = r"[^\t-\r \u0085\u00a0\u1680\u2000-\u200a\u2028\u2029\u202f\u205f\u3000]"
        )
    )]
    pub sku_id: String,
    /// More than 0, at most 10000. Amounts are decimals of at most 28
    /// places, so the smallest quantity is 1e-28 (less reads as 0).
    #[cfg_attr(feature = "openapi", schema(minimum = 1e-28, maximum = 10000))]
    pub qty: f64,
    /// From 0 to 1000000.
    #[cfg_attr(feature = "openapi", schema(minimum = 0, maximum = 1_000_000))]
    pub unit_price: f64,
    /// Decimal fraction from 0 to 1; the tenant's default rate when omitted.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[cfg_attr(feature = "openapi", schema(minimum = 0, maximum = 1))]
    pub tax_rate: Option<f64>,
    /// Line name; the product's name when omitted.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[cfg_attr(feature = "openapi", schema(max_length = 1000))]
    pub description: Option<String>,
}

/// Who a new quote is for, in the order of precedence.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum CustomerChoice {
    /// REST: an existing customer of the tenant.
    Existing {
        /// Customer id.
        customer_id: String,
    },
    /// The customer of this job.
    FromJob {
        /// Job id.
        job_id: String,
    },
    /// Match by email (case-insensitive, within the tenant) or create.
    UpsertByEmail {
        /// Email to match.
        email: String,
        /// Name for a created customer.
        name: Option<String>,
        /// Phone for a created customer.
        phone: Option<String>,
    },
    /// A new customer.
    New {
        /// Name.
        name: String,
        /// Email.
        email: Option<String>,
        /// Phone.
        phone: Option<String>,
    },
}

/// What a new quote line links to.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum LineProduct {
    /// REST: a product id that must be an active product.
    SkuId(String),
    /// Bridge: a product code, linked when an active product has that sku.
    Code(String),
    /// A free-form line.
    None,
}

/// A validated line of a new quote.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct NewQuoteLine {
    /// What it links to.
    pub product: LineProduct,
    /// Line name, if given.
    pub description: Option<String>,
    /// More than 0, at most 10000.
    pub qty: Decimal,
    /// From 0 to 1000000.
    pub unit_price: Decimal,
    /// Fraction; `None` means the tenant's default (REST only).
    pub tax_rate: Option<Decimal>,
}

/// A validated request for a new quote, from either surface.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct NewQuote {
    /// Who it is for.
    pub customer: CustomerChoice,
    /// Title.
    pub title: Option<String>,
    /// Custom reference.
    pub quote_ref: Option<String>,
    /// Lines, 1 to 200.
    pub lines: Vec<NewQuoteLine>,
}

impl NewQuote {
    /// The header of the Draft this request creates: `id` and `reference` as
    /// the backend gives them, its `customer` (id and name) and job as the
    /// backend resolved them, dated `date`; valid for
    /// [`NEW_QUOTE_EXPIRY_DAYS`].
    pub fn draft_header(
        &self,
        id: String,
        reference: String,
        customer: (String, String),
        job_id: Option<String>,
        date: String,
    ) -> QuoteHeader {
        let (customer_id, customer_name) = customer;
        QuoteHeader {
            id,
            reference,
            customer_id,
            customer_name,
            job_id,
            title: self.title.clone(),
            quote_type: QuoteType::Quote,
            status: QuoteStatus::Draft,
            date,
            expiry_days: NEW_QUOTE_EXPIRY_DAYS,
        }
    }
}

const BRIDGE_FIELDS: [&str; 8] = [
    "jobId",
    "customerName",
    "customerEmail",
    "customerPhone",
    "upsertByEmail",
    "title",
    "quoteRef",
    "lines",
];
const BRIDGE_LINE_FIELDS: [&str; 5] = ["description", "productCode", "qty", "unitPrice", "taxRate"];
const REST_FIELDS: [&str; 4] = ["customerId", "title", "quoteRef", "lines"];
const REST_LINE_FIELDS: [&str; 5] = ["skuId", "qty", "unitPrice", "taxRate", "description"];

/// Which surface a request came from: the rules are shared, the field names
/// of lines and of the customer differ.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Surface {
    Bridge,
    Rest,
}

/// Validates a `quotes.create` request (the method's argument).
pub fn validate_bridge_create(params: &Value) -> Result<NewQuote, Error> {
    let mut errors = Violations::default();
    let quote = read_request(params, Surface::Bridge, &mut errors);
    errors.finish(quote)
}

/// Validates a `POST /api/v1/quotes` body.
pub fn validate_rest_create(body: &Value) -> Result<NewQuote, Error> {
    let mut errors = Violations::default();
    let quote = read_request(body, Surface::Rest, &mut errors);
    errors.finish(quote)
}

fn read_request(value: &Value, surface: Surface, errors: &mut Violations) -> Option<NewQuote> {
    let known: &[&str] = match surface {
        Surface::Bridge => &BRIDGE_FIELDS,
        Surface::Rest => &REST_FIELDS,
    };
    let mut fields = Fields::open(value, "", known, errors)?;
    let customer = match surface {
        Surface::Bridge => read_bridge_customer(&mut fields),
        Surface::Rest => fields
            .required_text("customerId", TEXT_MAX_CHARS)
            .map(|id| CustomerChoice::Existing {
                customer_id: id.to_owned(),
            }),
    };
    let title = fields.text("title", TEXT_MAX_CHARS).map(str::to_owned);
    let quote_ref = fields.text("quoteRef", TEXT_MAX_CHARS).map(str::to_owned);
    let lines = read_lines(&mut fields, surface);
    Some(NewQuote {
        customer: customer?,
        title,
        quote_ref,
        lines: lines?,
    })
}

fn read_bridge_customer(fields: &mut Fields<'_, '_>) -> Option<CustomerChoice> {
    let job_id = fields.text("jobId", TEXT_MAX_CHARS);
    let name = fields
        .text("customerName", TEXT_MAX_CHARS)
        .map(str::to_owned);
    let email = fields.text("customerEmail", EMAIL_MAX_CHARS);
    let phone = fields
        .text("customerPhone", TEXT_MAX_CHARS)
        .map(str::to_owned);
    let upsert = fields.boolean("upsertByEmail").unwrap_or(false);

    let email = match email {
        Some(email) if !looks_like_email(email) => {
            fields.violation(
                "customerEmail",
                format!("\"{email}\" is not an email address"),
            );
            return None;
        }
        other => other.map(str::to_owned),
    };
    if let Some(job_id) = job_id {
        return Some(CustomerChoice::FromJob {
            job_id: job_id.to_owned(),
        });
    }
    if upsert {
        let Some(email) = email else {
            fields.violation("customerEmail", "is required when upsertByEmail is true");
            return None;
        };
        return Some(CustomerChoice::UpsertByEmail { email, name, phone });
    }
    let Some(name) = name else {
        fields.violation(
            "customerName",
            "the quote needs a customer: give jobId, or customerEmail with upsertByEmail: true, or customerName",
        );
        return None;
    };
    Some(CustomerChoice::New { name, email, phone })
}

fn read_lines(fields: &mut Fields<'_, '_>, surface: Surface) -> Option<Vec<NewQuoteLine>> {
    let items = fields.required_array("lines")?;
    if items.len() < CREATE_MIN_LINES || items.len() > CREATE_MAX_LINES {
        fields.violation(
            "lines",
            format!(
                "must hold {CREATE_MIN_LINES} to {CREATE_MAX_LINES} lines (got {})",
                items.len()
            ),
        );
        return None;
    }
    let known: &[&str] = match surface {
        Surface::Bridge => &BRIDGE_LINE_FIELDS,
        Surface::Rest => &REST_LINE_FIELDS,
    };
    let mut lines = Vec::with_capacity(items.len());
    let mut all_valid = true;
    for (i, item) in items.iter().enumerate() {
        let line = Fields::open_item(item, "lines", i, known, fields.errors())
            .and_then(|mut line| read_line(&mut line, surface));
        match line {
            Some(line) => lines.push(line),
            None => all_valid = false,
        }
    }
    all_valid.then_some(lines)
}

fn read_line(fields: &mut Fields<'_, '_>, surface: Surface) -> Option<NewQuoteLine> {
    let product = match surface {
        Surface::Bridge => Some(
            fields
                .text("productCode", TEXT_MAX_CHARS)
                .map_or(LineProduct::None, |code| LineProduct::Code(code.to_owned())),
        ),
        Surface::Rest => fields
            .required_text("skuId", TEXT_MAX_CHARS)
            .map(|id| LineProduct::SkuId(id.to_owned())),
    };
    let description = fields
        .text("description", TEXT_MAX_CHARS)
        .map(str::to_owned);
    let qty = fields.decimal("qty", Floor::AboveZero, CREATE_MAX_QTY);
    let unit_price = fields.decimal("unitPrice", Floor::Zero, CREATE_MAX_UNIT_PRICE);
    let tax_rate = match surface {
        Surface::Bridge => fields.required_number("taxRate").map(Some),
        Surface::Rest => Some(fields.number("taxRate")),
    };
    let tax_rate = match tax_rate? {
        None => None,
        Some(rate) => match fraction_rate(rate) {
            Ok(rate) => Some(rate),
            Err(message) => {
                fields.violation("taxRate", message);
                return None;
            }
        },
    };
    Some(NewQuoteLine {
        product: product?,
        description,
        qty: qty?,
        unit_price: unit_price?,
        tax_rate,
    })
}

/// One `@` with something on both sides, a dot in the domain, no spaces.
fn looks_like_email(text: &str) -> bool {
    let Some((local, domain)) = text.split_once('@') else {
        return false;
    };
    !local.is_empty()
        && !domain.is_empty()
        && !domain.contains('@')
        && domain.contains('.')
        && !domain.starts_with('.')
        && !domain.ends_with('.')
        && !text.chars().any(char::is_whitespace)
}

/// Days a new quote stays valid.
pub const NEW_QUOTE_EXPIRY_DAYS: u32 = 30;

/// The reference a new quote without a `quoteRef` gets: `Q-` and the next
/// number of the tenant's sequence (a backend skips numbers whose reference
/// a quote already has).
pub fn generated_reference(sequence: u64) -> String {
    format!("Q-{sequence}")
}

/// The key a customer's email is matched by within a tenant (`upsertByEmail`
/// matches without regard to case).
pub fn email_key(email: &str) -> String {
    email.to_lowercase()
}

/// The key a product's sku is matched by within a tenant (a line's
/// `productCode` links without regard to case).
pub fn sku_key(sku: &str) -> String {
    sku.to_lowercase()
}

/// A customer a new quote creates.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct NewCustomer {
    /// Name.
    pub name: String,
    /// Email; empty when none was given.
    pub email: String,
    /// Phone; empty when none was given.
    pub phone: String,
}

impl CustomerChoice {
    /// The customer to create when the backend finds none to use: for
    /// `UpsertByEmail` one named after the email unless a name was given, for
    /// `New` the one described. `None` for the choices that never create one.
    pub fn customer_to_create(&self) -> Option<NewCustomer> {
        match self {
            CustomerChoice::UpsertByEmail { email, name, phone } => Some(NewCustomer {
                name: name.clone().unwrap_or_else(|| email.clone()),
                email: email.clone(),
                phone: phone.clone().unwrap_or_default(),
            }),
            CustomerChoice::New { name, email, phone } => Some(NewCustomer {
                name: name.clone(),
                email: email.clone().unwrap_or_default(),
                phone: phone.clone().unwrap_or_default(),
            }),
            CustomerChoice::Existing { .. } | CustomerChoice::FromJob { .. } => None,
        }
    }
}

/// The violation for a REST `customerId` the tenant has no customer with.
pub fn unknown_customer(customer_id: &str) -> Violation {
    Violation::new(
        "customerId",
        format!("no customer has the id \"{customer_id}\""),
    )
}

/// The violation for line `line`'s REST `skuId` that is no active product.
pub fn unknown_sku_id(line: usize, sku_id: &str) -> Violation {
    Violation::new(
        format!("lines[{line}].skuId"),
        format!("no active product has the id \"{sku_id}\""),
    )
}

/// The violation for a `quoteRef` another quote of the tenant already has.
pub fn taken_reference(reference: &str) -> Violation {
    Violation::new(
        "quoteRef",
        format!("another quote already has the reference \"{reference}\""),
    )
}

/// The error for a `jobId` the tenant has no job with.
pub fn unknown_job(job_id: &str) -> Error {
    Error::NotFound(format!("job {job_id} not found"))
}

/// A catalog product a new quote's line links to, as the backend found it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct LinkedProduct {
    /// Its id.
    pub id: String,
    /// Its sku.
    pub sku: String,
    /// Its name.
    pub name: String,
    /// Its unit of measure.
    pub unit: Unit,
    /// BUY per unit.
    pub cost_price: Decimal,
}

impl NewQuoteLine {
    /// The product code a backend looks an active product up by (with
    /// [`sku_key`]), for a bridge line that gives one.
    pub fn product_code(&self) -> Option<&str> {
        match &self.product {
            LineProduct::Code(code) => Some(code),
            LineProduct::SkuId(_) | LineProduct::None => None,
        }
    }

    /// The line this request line becomes as line `line_no` of a new quote.
    /// Linked to `product` when the backend found one: its name (unless the
    /// line has a description), sku, unit and cost price. Otherwise
    /// free-form: its product code as the description when it has none, a
    /// unit of items, costing its unit price. No tax rate means
    /// `default_tax_rate`, the tenant's.
    pub fn to_quote_line(
        &self,
        line_no: u32,
        product: Option<&LinkedProduct>,
        default_tax_rate: Decimal,
    ) -> QuoteLine {
        let code = self.product_code().map(str::to_owned);
        let description = self
            .description
            .clone()
            .or_else(|| product.map(|p| p.name.clone()))
            .or_else(|| code.clone())
            .unwrap_or_default();
        QuoteLine {
            line_no,
            line_type: LineType::Product,
            linked_item_id: product.map(|p| p.id.clone()),
            product_code: product.map(|p| p.sku.clone()).or(code),
            description,
            specification: None,
            location: None,
            qty: self.qty,
            unit: product.map_or(Unit::Item, |p| p.unit),
            unit_price: self.unit_price,
            cost_price: product.map_or(self.unit_price, |p| p.cost_price),
            tax_rate: self.tax_rate.unwrap_or(default_tax_rate),
            section: None,
            group_id: 0,
            injected: false,
            parent_line_no: None,
        }
    }
}
