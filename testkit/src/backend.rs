//! The memory backend: the REST endpoints the host module calls, answered
//! from the fixtures' data with the server's rules, statuses and bodies.

use std::collections::{BTreeMap, HashMap};

use serde::Deserialize;
use serde::Serialize;
use serde_json::{Map, Value};
use toolbridge_protocol::catalog::{
    BridgeCostItemDto, BridgeProductDto, BridgeTaskTemplateDto, CatalogIndex, IndexedCostItem,
    IndexedProduct, IndexedTaskTemplate, TaskSequenceStep, id_key,
};
use toolbridge_protocol::context::BridgeContextDto;
use toolbridge_protocol::create_quote::{
    CustomerChoice, LineProduct, LinkedProduct, NewCustomer, NewQuote, email_key,
    generated_reference, sku_key, taken_reference, unknown_customer, unknown_job, unknown_sku_id,
    validate_bridge_create,
};
use toolbridge_protocol::customer::BridgeCustomerDto;
use toolbridge_protocol::job::BridgeJobDto;
use toolbridge_protocol::money::decimal_to_f64;
use toolbridge_protocol::open_quote::OpenQuote;
use toolbridge_protocol::paging::{BridgePagedResult, ListRequest, PageRequest};
use toolbridge_protocol::problem::{PROBLEM_CONTENT_TYPE, Problem};
use toolbridge_protocol::quote::{BridgeQuoteDto, QuoteDto, QuoteLine, quote_not_found};
use toolbridge_protocol::{Error as Rule, ErrorCode};

use crate::error::Error;
use crate::fixtures::{self, Customer, Data};
use crate::ids::{Ids, iso, now_unix};

/// A request to the backend, as the host module sends it.
#[derive(Debug, Clone, Copy)]
pub struct Request<'a> {
    /// `GET`, `POST`, `PUT`…
    pub method: &'a str,
    /// The path below the API base with its query: `/quotes?page=2`.
    pub target: &'a str,
    /// The request's headers, by lower-case name (only `content-type` and
    /// `if-none-match` are read).
    pub headers: &'a [(String, String)],
    /// The body, if any.
    pub body: Option<&'a str>,
}

impl Request<'_> {
    fn header(&self, name: &str) -> Option<&str> {
        self.headers
            .iter()
            .find(|(key, _)| key.eq_ignore_ascii_case(name))
            .map(|(_, value)| value.as_str())
    }
}

/// The backend's answer.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Response {
    /// The HTTP status.
    pub status: u16,
    /// Headers, lower-case names.
    pub headers: Vec<(String, String)>,
    /// The body; `None` for `304`.
    pub body: Option<String>,
}

impl Response {
    /// The value of header `name`.
    pub fn header(&self, name: &str) -> Option<&str> {
        self.headers
            .iter()
            .find(|(key, _)| key.eq_ignore_ascii_case(name))
            .map(|(_, value)| value.as_str())
    }

    fn json<T: Serialize>(status: u16, body: &T) -> Self {
        match serde_json::to_string(body) {
            Ok(text) => Self {
                status,
                headers: vec![("content-type".to_owned(), "application/json".to_owned())],
                body: Some(text),
            },
            Err(error) => Self::problem(&Rule::Internal(format!(
                "the memory backend could not write its answer: {error}"
            ))),
        }
    }

    /// The problem+json answer for an error, as the server writes it.
    fn problem(error: &Rule) -> Self {
        Self::problem_with_status(&Problem::from_error(error))
    }

    fn problem_with_status(problem: &Problem) -> Self {
        let mut headers = vec![("content-type".to_owned(), PROBLEM_CONTENT_TYPE.to_owned())];
        if problem.code == ErrorCode::Unauthenticated {
            headers.push(("www-authenticate".to_owned(), "Bearer".to_owned()));
        }
        Self {
            status: problem.status,
            headers,
            body: serde_json::to_string(problem).ok(),
        }
    }

    /// A request body that cannot be read: 400, as the server answers it.
    fn unreadable(message: &str) -> Self {
        let mut problem = Problem::from_error(&Rule::invalid("", message));
        "Unreadable request".clone_into(&mut problem.title);
        problem.status = 400;
        problem.errors.clear();
        Self::problem_with_status(&problem)
    }
}

/// Who a new quote is for, once resolved.
enum Whom {
    /// A customer of the tenant, by id.
    Existing(String),
    /// A customer to create.
    Create(NewCustomer),
}

/// A request the backend answered, for a test to read.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct Answered {
    /// `GET`, `POST`…
    pub method: String,
    /// The path below the API base, with its query.
    pub path: String,
    /// The status answered.
    pub status: u16,
}

/// A tenant's data in memory, answering the host module's REST requests.
#[derive(Debug, Clone)]
pub struct MemoryBackend {
    data: Data,
    ids: Ids,
    /// Whether the session has ended: every request answers `401`.
    signed_out: bool,
    log: Vec<Answered>,
}

/// `PUT /quotes/{id}/lines`: what the host saves from the editor (the
/// server's body, read the same way).
#[derive(Debug, Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
struct SaveLines {
    lines: Vec<QuoteLine>,
    #[serde(default)]
    group_keys: BTreeMap<String, u32>,
}

impl MemoryBackend {
    /// A backend holding `fixtures` (see the crate's `fixtures` module for
    /// their shape). `Err` lists every problem with its path.
    pub fn new(fixtures: &Value) -> Result<Self, Error> {
        let mut ids = Ids::default();
        let data = fixtures::read(fixtures, &mut ids, &iso(now_unix()))?;
        Ok(Self {
            data,
            ids,
            signed_out: false,
            log: Vec::new(),
        })
    }

    /// The signed-in user, as `GET /me` answers.
    pub fn user(&self) -> &BridgeContextDto {
        &self.data.user
    }

    /// Every quote, in the order they were made, as `GET /quotes/{id}`
    /// answers each.
    pub fn quotes(&self) -> &[QuoteDto] {
        &self.data.quotes
    }

    /// Every customer, in the order they were made, as the customer list
    /// shows each.
    pub fn customers(&self) -> Vec<BridgeCustomerDto> {
        self.data.customers.iter().map(customer_dto).collect()
    }

    /// The id of the quote the fixtures name to open, if any.
    pub fn open_quote_id(&self) -> Option<&str> {
        self.data.open_quote.as_deref()
    }

    /// The tool's install settings the fixtures give, if any.
    pub fn settings(&self) -> Option<&Map<String, Value>> {
        self.data.settings.as_ref()
    }

    /// The install settings the tool sees for an admin's `values`: checked
    /// against the settings the fixtures' manifest declares (every problem
    /// with its key as the path, as the platform refuses them) and laid over
    /// their defaults; without a manifest, the values as they are.
    pub fn install_settings(&self, values: &Value) -> Result<Map<String, Value>, Rule> {
        fixtures::install_settings(self.data.declarations.as_deref(), values)
    }

    /// Every request answered so far: method, path with query, status.
    pub fn requests(&self) -> &[Answered] {
        &self.log
    }

    /// Ends the session: from now on every request answers `401
    /// UNAUTHENTICATED`, as the server does once a user signs out.
    pub fn sign_out(&mut self) {
        self.signed_out = true;
    }

    /// Answers one request.
    pub fn handle(&mut self, request: &Request<'_>) -> Response {
        let response = self.route(request);
        self.log.push(Answered {
            method: request.method.to_owned(),
            path: request.target.to_owned(),
            status: response.status,
        });
        response
    }

    fn route(&mut self, request: &Request<'_>) -> Response {
        if self.signed_out {
            return Response::problem(&Rule::Unauthenticated(
                "the session has ended; sign in again".to_owned(),
            ));
        }
        let (path, query) = request
            .target
            .split_once('?')
            .unwrap_or((request.target, ""));
        let query: HashMap<String, String> = form_urlencoded::parse(query.as_bytes())
            .into_owned()
            .collect();
        let segments: Vec<String> = path
            .trim_start_matches('/')
            .split('/')
            .map(|segment| {
                percent_encoding::percent_decode_str(segment)
                    .decode_utf8_lossy()
                    .into_owned()
            })
            .collect();
        let segments: Vec<&str> = segments.iter().map(String::as_str).collect();
        let answer = match (request.method, segments.as_slice()) {
            ("GET", ["me"]) => Ok(Response::json(200, &self.data.user)),
            ("GET", ["customers"]) => self.customers_page(&query),
            ("GET", ["jobs"]) => self.jobs_page(&query),
            ("GET", ["products"]) => self.products_page(&query),
            ("GET", ["task-templates"]) => self.task_templates_page(&query),
            ("GET", ["cost-items"]) => self.cost_items_page(&query),
            ("GET", ["catalog", "index"]) => Ok(self.catalog_index(request)),
            ("GET", ["quotes"]) => self.quotes_page(&query),
            ("POST", ["quotes"]) => self.create_quote(request),
            ("GET", ["quotes", id]) => self
                .find_quote(id)
                .map(|i| Response::json(200, &self.data.quotes[i])),
            ("PUT", ["quotes", id, "lines"]) => self.save_lines(id, request),
            ("POST", ["quotes", id, "send"]) => self.send_quote(id),
            (_, segments) if is_endpoint(segments) => Ok(Response::problem(&Rule::from_parts(
                ErrorCode::NotAllowed,
                format!(
                    "the memory backend does not answer {} {path}: the host module never sends it",
                    request.method
                ),
                Vec::new(),
                None,
            ))
            .with_status(405)),
            _ => Err(Rule::NotFound(format!(
                "there is no endpoint {} {path} (the memory backend answers what the host module calls)",
                request.method
            ))),
        };
        answer.unwrap_or_else(|error| Response::problem(&error))
    }

    fn customers_page(&self, query: &HashMap<String, String>) -> Result<Response, Rule> {
        let page = page(query)?;
        let mut rows: Vec<&Customer> = self.data.customers.iter().collect();
        rows.sort_by(|a, b| (&a.name, &a.id).cmp(&(&b.name, &b.id)));
        Ok(Response::json(
            200,
            &one_page(page, rows.into_iter().map(customer_dto).collect()),
        ))
    }

    fn jobs_page(&self, query: &HashMap<String, String>) -> Result<Response, Rule> {
        let page = page(query)?;
        let mut rows: Vec<BridgeJobDto> = self
            .data
            .jobs
            .iter()
            .filter(|job| !job.closed)
            .filter_map(|job| {
                let customer = self.customer(&job.customer_id)?;
                Some(BridgeJobDto {
                    id: job.id.clone(),
                    reference: job.reference.clone(),
                    customer_name: customer.name.clone(),
                    customer_id_guid: customer.id.clone(),
                    status: job.status.clone(),
                })
            })
            .collect();
        rows.sort_by(|a, b| (&a.reference, &a.id).cmp(&(&b.reference, &b.id)));
        Ok(Response::json(200, &one_page(page, rows)))
    }

    fn products_page(&self, query: &HashMap<String, String>) -> Result<Response, Rule> {
        let page = page(query)?;
        let mut rows: Vec<BridgeProductDto> = self
            .data
            .products
            .iter()
            .filter(|product| product.active)
            .map(|product| BridgeProductDto {
                id: product.id.clone(),
                sku: product.sku.clone(),
                name: product.name.clone(),
                price: decimal_to_f64(product.price),
                unit: product.unit.token().to_owned(),
            })
            .collect();
        rows.sort_by(|a, b| (&a.sku, &a.id).cmp(&(&b.sku, &b.id)));
        Ok(Response::json(200, &one_page(page, rows)))
    }

    fn task_templates_page(&self, query: &HashMap<String, String>) -> Result<Response, Rule> {
        let request = list(query)?;
        let mut rows: Vec<BridgeTaskTemplateDto> = self
            .data
            .task_templates
            .iter()
            .filter(|template| template.active)
            .map(|template| BridgeTaskTemplateDto {
                id: template.id.clone(),
                code: template.code.clone(),
                name: template.name.clone(),
            })
            .collect();
        rows.sort_by(|a, b| a.code.cmp(&b.code));
        Ok(Response::json(
            200,
            &by_codes_or_page(&request, rows, |row| &row.code),
        ))
    }

    fn cost_items_page(&self, query: &HashMap<String, String>) -> Result<Response, Rule> {
        let request = list(query)?;
        let mut rows: Vec<BridgeCostItemDto> = self
            .data
            .cost_items
            .iter()
            .filter(|item| item.active)
            .map(|item| BridgeCostItemDto {
                id: item.id.clone(),
                code: item.code.clone(),
                name: item.name.clone(),
                item_type: item.item_type.clone(),
            })
            .collect();
        rows.sort_by(|a, b| a.code.cmp(&b.code));
        Ok(Response::json(
            200,
            &by_codes_or_page(&request, rows, |row| &row.code),
        ))
    }

    fn quotes_page(&self, query: &HashMap<String, String>) -> Result<Response, Rule> {
        let page = page(query)?;
        // Newest first; quotes of the same moment, the one made last first.
        let mut rows: Vec<(usize, &QuoteDto)> = self.data.quotes.iter().enumerate().collect();
        rows.sort_by(|(i, a), (j, b)| b.header.date.cmp(&a.header.date).then(j.cmp(i)));
        let rows: Vec<BridgeQuoteDto> =
            rows.into_iter().map(|(_, quote)| quote.summary()).collect();
        Ok(Response::json(200, &one_page(page, rows)))
    }

    /// The catalog index with its `ETag`; `304` when `If-None-Match` names
    /// it.
    fn catalog_index(&self, request: &Request<'_>) -> Response {
        let index = self.index();
        let body = serde_json::to_string(&index).unwrap_or_default();
        let etag = format!("\"{}\"", fingerprint(body.as_bytes()));
        let fresh = request
            .header("if-none-match")
            .is_some_and(|sent| sent.split(',').any(|tag| tag.trim() == etag));
        let mut response = if fresh {
            Response {
                status: 304,
                headers: Vec::new(),
                body: None,
            }
        } else {
            Response {
                status: 200,
                headers: vec![("content-type".to_owned(), "application/json".to_owned())],
                body: Some(body),
            }
        };
        response.headers.push(("etag".to_owned(), etag));
        response
            .headers
            .push(("cache-control".to_owned(), "private, no-cache".to_owned()));
        response
    }

    /// The active products, task templates and cost items; sequence steps
    /// naming an inactive template are left out.
    fn index(&self) -> CatalogIndex {
        let mut task_templates: Vec<IndexedTaskTemplate> = self
            .data
            .task_templates
            .iter()
            .filter(|template| template.active)
            .map(|template| IndexedTaskTemplate {
                id: template.id.clone(),
                code: template.code.clone(),
                name: template.name.clone(),
                unit_price: template.unit_price,
                cost_price: template.cost_price,
            })
            .collect();
        task_templates.sort_by(|a, b| (&a.code, &a.id).cmp(&(&b.code, &b.id)));
        let mut cost_items: Vec<IndexedCostItem> = self
            .data
            .cost_items
            .iter()
            .filter(|item| item.active)
            .map(|item| IndexedCostItem {
                id: item.id.clone(),
                code: item.code.clone(),
                name: item.name.clone(),
                item_type: item.item_type.clone(),
            })
            .collect();
        cost_items.sort_by(|a, b| (&a.code, &a.id).cmp(&(&b.code, &b.id)));
        let active_template = |id: &str| {
            self.data
                .task_templates
                .iter()
                .any(|template| template.active && template.id == id)
        };
        let mut products: Vec<IndexedProduct> = self
            .data
            .products
            .iter()
            .filter(|product| product.active)
            .map(|product| IndexedProduct {
                id: product.id.clone(),
                sku: product.sku.clone(),
                task_sequence: product
                    .task_sequence
                    .iter()
                    .filter(|(template, _)| active_template(template))
                    .map(|(template, qty)| TaskSequenceStep {
                        task_template_id: template.clone(),
                        qty_per_unit: *qty,
                    })
                    .collect(),
            })
            .collect();
        products.sort_by(|a, b| (&a.sku, &a.id).cmp(&(&b.sku, &b.id)));
        CatalogIndex {
            products,
            task_templates,
            cost_items,
        }
    }

    fn customer(&self, id: &str) -> Option<&Customer> {
        self.data
            .customers
            .iter()
            .find(|customer| id_key(&customer.id) == id_key(id))
    }

    /// The position of quote `id`, or `NOT_FOUND` naming it as looked up.
    fn find_quote(&self, id: &str) -> Result<usize, Rule> {
        let key = id_key(id);
        self.data
            .quotes
            .iter()
            .position(|quote| id_key(&quote.header.id) == key)
            .ok_or_else(|| quote_not_found(&key))
    }

    /// `POST /quotes` as the app's session sends it: the bridge form of
    /// `quotes.create`, checked and resolved as the store does.
    fn create_quote(&mut self, request: &Request<'_>) -> Result<Response, Rule> {
        let body = match json_body(request) {
            Ok(body) => body,
            Err(unreadable) => return Ok(unreadable),
        };
        self.data.user.user_role.check_quote_write()?;
        let request = validate_bridge_create(&body)?;
        let quote = self.insert_quote(&request)?;
        let mut response = Response::json(201, &quote);
        response.headers.push((
            "location".to_owned(),
            format!("/api/v1/quotes/{}", quote.header.id),
        ));
        Ok(response)
    }

    /// Who a new quote is for: an existing customer's id, or the customer to
    /// create; and the job's id. `None` (with a violation) when the REST
    /// customer is unknown; `NOT_FOUND` for an unknown job.
    fn resolve_customer(
        &self,
        request: &NewQuote,
        violations: &mut Vec<toolbridge_protocol::Violation>,
    ) -> Result<Option<(Whom, Option<String>)>, Rule> {
        Ok(match &request.customer {
            CustomerChoice::Existing { customer_id } => {
                let found = self.customer(customer_id).map(|c| c.id.clone());
                if found.is_none() {
                    violations.push(unknown_customer(customer_id));
                }
                found.map(|id| (Whom::Existing(id), None))
            }
            CustomerChoice::FromJob { job_id } => {
                let job = self
                    .data
                    .jobs
                    .iter()
                    .find(|job| id_key(&job.id) == id_key(job_id))
                    .ok_or_else(|| unknown_job(job_id))?;
                Some((
                    Whom::Existing(job.customer_id.clone()),
                    Some(job.id.clone()),
                ))
            }
            CustomerChoice::UpsertByEmail { email, .. } => {
                let key = email_key(email);
                let found = self
                    .data
                    .customers
                    .iter()
                    .filter(|customer| email_key(&customer.email) == key)
                    .min_by(|a, b| (&a.name, &a.id).cmp(&(&b.name, &b.id)))
                    .map(|customer| customer.id.clone());
                match (found, request.customer.customer_to_create()) {
                    (Some(id), _) => Some((Whom::Existing(id), None)),
                    (None, Some(create)) => Some((Whom::Create(create), None)),
                    (None, None) => None,
                }
            }
            CustomerChoice::New { .. } => request
                .customer
                .customer_to_create()
                .map(|create| (Whom::Create(create), None)),
        })
    }

    fn insert_quote(&mut self, request: &NewQuote) -> Result<QuoteDto, Rule> {
        let mut violations = Vec::new();
        let customer = self.resolve_customer(request, &mut violations)?;
        if let Some(reference) = &request.quote_ref {
            if self.reference_taken(reference) {
                violations.push(taken_reference(reference));
            }
        }
        let mut lines = Vec::with_capacity(request.lines.len());
        for (i, line) in request.lines.iter().enumerate() {
            let product = match &line.product {
                LineProduct::SkuId(sku_id) => {
                    let found = self.linked_product(|p| id_key(&p.id) == id_key(sku_id));
                    if found.is_none() {
                        violations.push(unknown_sku_id(i, sku_id));
                    }
                    found
                }
                LineProduct::Code(code) => {
                    let key = sku_key(code);
                    self.linked_product(|p| sku_key(&p.sku) == key)
                }
                LineProduct::None => None,
            };
            let line_no = u32::try_from(i + 1).unwrap_or(u32::MAX);
            lines.push(line.to_quote_line(line_no, product.as_ref(), self.data.tenant.tax_rate));
        }
        let Some((customer, job_id)) = customer.filter(|_| violations.is_empty()) else {
            return Err(Rule::InvalidParams(violations));
        };
        let customer_id = match customer {
            Whom::Existing(id) => id,
            Whom::Create(create) => {
                let id = self.ids.next();
                self.data.customers.push(Customer {
                    id: id.clone(),
                    name: create.name,
                    email: create.email,
                    phone: create.phone,
                });
                id
            }
        };
        let customer_name = self
            .customer(&customer_id)
            .map(|customer| customer.name.clone())
            .unwrap_or_default();
        let reference = match &request.quote_ref {
            Some(reference) => reference.clone(),
            None => self.next_reference(),
        };
        let header = request.draft_header(
            self.ids.next(),
            reference,
            (customer_id, customer_name),
            job_id,
            iso(now_unix()),
        );
        let quote = QuoteDto::new(header, lines, BTreeMap::new());
        self.data.quotes.push(quote.clone());
        Ok(quote)
    }

    fn linked_product(
        &self,
        matches: impl Fn(&fixtures::Product) -> bool,
    ) -> Option<LinkedProduct> {
        self.data
            .products
            .iter()
            .find(|product| product.active && matches(product))
            .map(|product| LinkedProduct {
                id: product.id.clone(),
                sku: product.sku.clone(),
                name: product.name.clone(),
                unit: product.unit,
                cost_price: product.cost,
            })
    }

    fn reference_taken(&self, reference: &str) -> bool {
        self.data
            .quotes
            .iter()
            .any(|quote| quote.header.reference == reference)
    }

    /// The next `Q-<n>` of the tenant's sequence no quote has yet.
    fn next_reference(&mut self) -> String {
        loop {
            self.data.tenant.quote_sequence += 1;
            let reference = generated_reference(self.data.tenant.quote_sequence);
            if !self.reference_taken(&reference) {
                return reference;
            }
        }
    }

    /// `PUT /quotes/{id}/lines`: replaces a Draft quote's lines, checked as
    /// the editor checks an opened quote.
    fn save_lines(&mut self, id: &str, request: &Request<'_>) -> Result<Response, Rule> {
        let body = match json_body(request) {
            Ok(body) => body,
            Err(unreadable) => return Ok(unreadable),
        };
        self.data.user.user_role.check_quote_write()?;
        let SaveLines { lines, group_keys } =
            serde_path_to_error::deserialize(body).map_err(|error| {
                let path = error.path().to_string();
                let path = if path == "." { String::new() } else { path };
                Rule::invalid(path, error.into_inner().to_string())
            })?;
        let position = self.find_quote(id)?;
        let header = self.data.quotes[position].header.clone();
        let saved = OpenQuote::saved(header, lines, group_keys)?;
        self.data.quotes[position] = saved.clone();
        Ok(Response::json(200, &saved))
    }

    /// `POST /quotes/{id}/send`: a Draft becomes Sent.
    fn send_quote(&mut self, id: &str) -> Result<Response, Rule> {
        self.data.user.user_role.check_quote_write()?;
        let position = self.find_quote(id)?;
        let quote = &mut self.data.quotes[position];
        quote.header.status = quote.header.status.send(&quote.header.reference)?;
        Ok(Response::json(200, &*quote))
    }
}

impl Response {
    /// The same answer with another status (and the problem body's status
    /// to match).
    fn with_status(mut self, status: u16) -> Self {
        self.status = status;
        if let Some(body) = &self.body {
            if let Ok(mut problem) = serde_json::from_str::<Problem>(body) {
                problem.status = status;
                self.body = serde_json::to_string(&problem).ok();
            }
        }
        self
    }
}

/// Whether a path is one of the endpoints answered (with some method).
fn is_endpoint(segments: &[&str]) -> bool {
    matches!(
        segments,
        ["me" | "customers" | "jobs" | "products" | "task-templates" | "cost-items" | "quotes"]
            | ["catalog", "index"]
            | ["quotes", _]
            | ["quotes", _, "lines" | "send"]
    )
}

fn customer_dto(customer: &Customer) -> BridgeCustomerDto {
    BridgeCustomerDto {
        id: customer.id.clone(),
        name: customer.name.clone(),
        email: customer.email.clone(),
        phone: customer.phone.clone(),
    }
}

/// A JSON body sent as `application/json`, or the server's 400 answer.
fn json_body(request: &Request<'_>) -> Result<Value, Response> {
    let json = request.header("content-type").is_some_and(|value| {
        value
            .split(';')
            .next()
            .is_some_and(|mime| mime.trim().eq_ignore_ascii_case("application/json"))
    });
    if !json {
        return Err(Response::unreadable(
            "the body must be JSON sent with `Content-Type: application/json`",
        ));
    }
    serde_json::from_str(request.body.unwrap_or_default())
        .map_err(|error| Response::unreadable(&format!("the body is not valid JSON: {error}")))
}

fn page(query: &HashMap<String, String>) -> Result<PageRequest, Rule> {
    PageRequest::from_query(
        query.get("page").map(String::as_str),
        query.get("pageSize").map(String::as_str),
    )
}

fn list(query: &HashMap<String, String>) -> Result<ListRequest, Rule> {
    ListRequest::from_query(
        query.get("page").map(String::as_str),
        query.get("pageSize").map(String::as_str),
        query.get("codes").map(String::as_str),
    )
}

/// One page of `rows` (already in order); a page past the end is empty with
/// the right total.
fn one_page<T>(page: PageRequest, rows: Vec<T>) -> BridgePagedResult<T> {
    let total = u64::try_from(rows.len()).unwrap_or(u64::MAX);
    let start = usize::try_from(page.offset()).unwrap_or(usize::MAX);
    let size = usize::try_from(page.page_size()).unwrap_or(usize::MAX);
    let items = rows.into_iter().skip(start).take(size).collect::<Vec<_>>();
    page.envelope(items, total)
}

/// With `codes`, every row whose code is listed, on one page; otherwise the
/// page asked for.
fn by_codes_or_page<T>(
    request: &ListRequest,
    rows: Vec<T>,
    code: impl Fn(&T) -> &String,
) -> BridgePagedResult<T> {
    match &request.codes {
        Some(codes) => {
            let items: Vec<T> = rows
                .into_iter()
                .filter(|row| codes.contains(code(row)))
                .collect();
            let count = items.len();
            BridgePagedResult {
                total_count: u64::try_from(count).unwrap_or(u64::MAX),
                page: 1,
                page_size: u32::try_from(count).unwrap_or(u32::MAX),
                items,
            }
        }
        None => one_page(request.paging, rows),
    }
}

/// 32 hex digits that change whenever `bytes` do (two FNV-1a hashes): the
/// opaque part of the catalog index's `ETag`.
fn fingerprint(bytes: &[u8]) -> String {
    let hash = |seed: u64| {
        bytes.iter().fold(seed, |hash, byte| {
            (hash ^ u64::from(*byte)).wrapping_mul(0x0000_0100_0000_01b3)
        })
    };
    format!(
        "{:016x}{:016x}",
        hash(0xcbf2_9ce4_8422_2325),
        hash(0x6c62_272e_07bb_0142)
    )
}
