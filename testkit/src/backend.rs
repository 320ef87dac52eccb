//! The memory backend: the REST endpoints the host module calls, answered
//! from the fixtures' data with the server's rules, statuses and bodies.

mod fetch;

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
use toolbridge_protocol::identity::{IdentityClaims, IdentityToken, TOKEN_LIFETIME_SECS};
use toolbridge_protocol::job::BridgeJobDto;
use toolbridge_protocol::manifest::is_tool_slug;
use toolbridge_protocol::money::decimal_to_f64;
use toolbridge_protocol::open_quote::OpenQuote;
use toolbridge_protocol::paging::{BridgePagedResult, ListRequest, PageRequest};
use toolbridge_protocol::problem::{PROBLEM_CONTENT_TYPE, Problem};
use toolbridge_protocol::quote::{
    BridgeQuoteDto, QuoteDto, QuoteLine, changed_quote, quote_not_found,
};
use toolbridge_protocol::versions::{quote_etag, versions_named};
use toolbridge_protocol::{Error as Rule, ErrorCode};

pub use self::fetch::{Outgoing, PendingFetch, Started, Upstream};
use crate::error::Error;
use crate::fixtures::{self, Customer, Data};
use crate::identity::{TestKey, random_uuid};
use crate::ids::{Ids, iso, now_unix};

/// A request to the backend, as the host module sends it.
#[derive(Debug, Clone, Copy)]
pub struct Request<'a> {
    /// `GET`, `POST`, `PUT`…
    pub method: &'a str,
    /// The path below the API base with its query: `/quotes?page=2`.
    pub target: &'a str,
    /// The request's headers, by lower-case name (only `content-type`,
    /// `if-none-match` and `if-match` are read).
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
    /// The key identity tokens are signed with, made with the backend.
    key: TestKey,
    /// The moment the backend's clock is held at, in Unix seconds; the
    /// system's clock when `None`.
    clock: Option<u64>,
    /// The origin of the page the backend serves (or a stand-in), which
    /// tokens name as `iss` and `aud` unless the fixtures say otherwise.
    page_origin: String,
    /// The version of each quote that changed since it was made or given
    /// (by [`id_key`]); 1 for the others, as the server counts them.
    versions: HashMap<String, u64>,
}

/// The page origin of a backend made with [`MemoryBackend::new`], outside
/// a browser.
pub const DEFAULT_PAGE_ORIGIN: &str = "http://localhost";

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
        Self::on_page(fixtures, DEFAULT_PAGE_ORIGIN)
    }

    /// A backend holding `fixtures` for a page on `page_origin`
    /// (`http://localhost:8000`): the tools a test host mounts run there, so
    /// identity tokens name it as their `aud` (the tool's origin) and `iss`
    /// (the app's URL) unless the fixtures' `token` names others.
    pub fn on_page(fixtures: &Value, page_origin: &str) -> Result<Self, Error> {
        let mut ids = Ids::default();
        let data = fixtures::read(fixtures, &mut ids, &iso(now_unix()))?;
        Ok(Self {
            data,
            ids,
            signed_out: false,
            log: Vec::new(),
            key: TestKey::new().map_err(Error::Setup)?,
            clock: None,
            page_origin: page_origin.trim_end_matches('/').to_owned(),
            versions: HashMap::new(),
        })
    }

    /// Now on the backend's clock, in Unix seconds: the system's, or the
    /// moment [`MemoryBackend::set_now`] holds it at.
    pub fn now(&self) -> u64 {
        self.clock
            .unwrap_or_else(|| u64::try_from(now_unix()).unwrap_or(0))
    }

    /// Holds the backend's clock at `unix_seconds` (`None`: the system's
    /// clock again). Identity tokens are issued at it, so a token issued
    /// more than 300 seconds in the past has already expired; new quotes are
    /// dated by it.
    pub fn set_now(&mut self, unix_seconds: Option<u64>) {
        self.clock = unix_seconds;
    }

    /// The public keys that verify the backend's identity tokens, as the
    /// server's `/.well-known/jwks.json` answers: `{"keys": [{kty, crv, x, y,
    /// kid, alg, use}]}`. The key is the backend's own, made with it; no
    /// server trusts it.
    pub fn jwks(&self) -> Value {
        self.key.jwks()
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

    /// An admin saves `values` as the tool's install settings: checked
    /// against the settings the fixtures' manifest declares (every problem
    /// with its key as the path, as the platform refuses them) and laid over
    /// their defaults; without a manifest, the values as they are. The
    /// values of secret settings are kept apart for the fetch stand-in (one
    /// left out keeps its value, `null` or `""` clears it) and are not in
    /// the answer: it is what the tool now sees. Nothing changes when the
    /// values are refused.
    pub fn install_settings(&mut self, values: &Value) -> Result<Map<String, Value>, Rule> {
        let mut secrets = self.data.secrets.clone();
        let settings =
            fixtures::install_settings(self.data.declarations.as_deref(), values, &mut secrets)?;
        self.data.secrets = secrets;
        self.data.settings = Some(settings.clone());
        Ok(settings)
    }

    /// The keys of the secret settings that have a value (never the values:
    /// only the fetch stand-in reads them).
    pub fn secret_keys(&self) -> Vec<&str> {
        self.data.secrets.keys().map(String::as_str).collect()
    }

    /// What the fixtures' manifest asks for (`permissions.connect`,
    /// `permissions.identity`); `None` when the fixtures give no manifest.
    pub fn permissions(&self) -> Option<&toolbridge_protocol::manifest::Permissions> {
        self.data.permissions.as_ref()
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
    ///
    /// `POST /tools/{slug}/fetch` is answered as when no fetch handler is
    /// registered: to hand its request to a handler, use
    /// [`MemoryBackend::start`] and [`MemoryBackend::finish`].
    pub fn handle(&mut self, request: &Request<'_>) -> Response {
        match self.start(request) {
            Started::Answered(response) => response,
            Started::Fetch(pending) => self.finish(pending, Upstream::NoHandler),
        }
    }

    /// Starts answering one request: answers it at once, or, for a request
    /// the fetch stand-in accepted (`POST /tools/{slug}/fetch`, checked and
    /// its placeholders replaced), hands back what to ask the test's handler;
    /// [`MemoryBackend::finish`] then answers it with what the handler said.
    pub fn start(&mut self, request: &Request<'_>) -> Started {
        let (path, _) = request
            .target
            .split_once('?')
            .unwrap_or((request.target, ""));
        let segments = segments(path);
        let response = match (request.method, segments.as_slice()) {
            ("POST", [tools, slug, fetch])
                if tools == "tools" && fetch == "fetch" && !self.signed_out =>
            {
                match self.outgoing(slug, request) {
                    Ok(outgoing) => {
                        return Started::Fetch(PendingFetch {
                            method: request.method.to_owned(),
                            path: request.target.to_owned(),
                            outgoing,
                        });
                    }
                    Err(refused) => refused,
                }
            }
            _ => self.route(request),
        };
        self.record(request.method, request.target, response.status);
        Started::Answered(response)
    }

    /// Answers a request [`MemoryBackend::start`] handed on, with what the
    /// test's handler made of it.
    pub fn finish(&mut self, pending: PendingFetch, upstream: Upstream) -> Response {
        let PendingFetch {
            method,
            path,
            outgoing,
        } = pending;
        let response = fetch::answer(&outgoing, upstream);
        self.record(&method, &path, response.status);
        response
    }

    fn record(&mut self, method: &str, path: &str, status: u16) {
        self.log.push(Answered {
            method: method.to_owned(),
            path: path.to_owned(),
            status,
        });
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
        let segments = segments(path);
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
            ("GET", ["quotes", id]) => self.find_quote(id).map(|i| self.quote_answer(200, i)),
            ("PUT", ["quotes", id, "lines"]) => self.save_lines(id, request),
            ("POST", ["quotes", id, "send"]) => self.send_quote(id, request),
            ("POST", ["tools", slug, "token"]) => self
                .identity_token(slug)
                .map(|token| Response::json(200, &token)),
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
        response
            .headers
            .push(("etag".to_owned(), quote_etag(&quote.header.id, 1)));
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
            iso(i64::try_from(self.now()).unwrap_or(i64::MAX)),
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
        // As the server: the quote's state and the lines first, then the version it was
        // made against (`If-Match`).
        if let Some(refused) = self.refused_version(position, id, request)? {
            return Ok(refused);
        }
        self.data.quotes[position] = saved;
        self.bump(position);
        Ok(self.quote_answer(200, position))
    }

    /// `POST /quotes/{id}/send`: a Draft becomes Sent, only at a version its
    /// `If-Match` names when it has one.
    fn send_quote(&mut self, id: &str, request: &Request<'_>) -> Result<Response, Rule> {
        self.data.user.user_role.check_quote_write()?;
        let position = self.find_quote(id)?;
        let quote = &self.data.quotes[position];
        let sent = quote.header.status.send(&quote.header.reference)?;
        if let Some(refused) = self.refused_version(position, id, request)? {
            return Ok(refused);
        }
        self.data.quotes[position].header.status = sent;
        self.bump(position);
        Ok(self.quote_answer(200, position))
    }

    /// The 412 `CONFLICT` (with the current `ETag`) for a change to the quote
    /// at `position` whose `If-Match` names none of its versions; `None` when
    /// it names the current one, or there is none.
    fn refused_version(
        &self,
        position: usize,
        id: &str,
        request: &Request<'_>,
    ) -> Result<Option<Response>, Rule> {
        let if_match: Vec<&str> = request
            .headers
            .iter()
            .filter(|(name, _)| name.eq_ignore_ascii_case("if-match"))
            .map(|(_, value)| value.as_str())
            .collect();
        let expected = versions_named(&if_match, id)?;
        let version = self.version(position);
        if expected.is_none_or(|versions| versions.contains(&version)) {
            return Ok(None);
        }
        let header = &self.data.quotes[position].header;
        let mut refused = Response::problem(&changed_quote(&header.reference));
        refused
            .headers
            .push(("etag".to_owned(), quote_etag(&header.id, version)));
        Ok(Some(refused))
    }

    /// The version of the quote at `position`.
    fn version(&self, position: usize) -> u64 {
        self.data.quotes.get(position).map_or(1, |quote| {
            self.versions
                .get(&id_key(&quote.header.id))
                .copied()
                .unwrap_or(1)
        })
    }

    /// Moves the quote at `position` to its next version, after a change.
    fn bump(&mut self, position: usize) {
        let next = self.version(position) + 1;
        if let Some(quote) = self.data.quotes.get(position) {
            self.versions.insert(id_key(&quote.header.id), next);
        }
    }

    /// The quote at `position` as JSON with `status`, and its `ETag`.
    fn quote_answer(&self, status: u16, position: usize) -> Response {
        let quote = &self.data.quotes[position];
        let mut response = Response::json(status, quote);
        response.headers.push((
            "etag".to_owned(),
            quote_etag(&quote.header.id, self.version(position)),
        ));
        response
    }
}

/// Identity tokens.
impl MemoryBackend {
    /// `POST /tools/{slug}/token`: a token for the signed-in user and tool
    /// `slug`, with the claims the server chooses: `iss` the app's URL and
    /// `aud` the tool's origin (the page's origin, or the fixtures' `token`),
    /// `sub`, `tid` and `role` of the fixtures' user, `tool` the slug, `ver`
    /// the manifest's version, `iat` now on the backend's clock, `exp` 300
    /// seconds later, and a random `jti`. Refused, as the server refuses it,
    /// for a tool whose manifest does not ask for `permissions.identity`
    /// (and, as the fixtures give no manifest then, for every tool).
    pub fn identity_token(&self, slug: &str) -> Result<IdentityToken, Rule> {
        if !is_tool_slug(slug) {
            return Err(Rule::NotFound(format!(
                "no tool the app lists has the slug {slug:?}"
            )));
        }
        match &self.data.permissions {
            Some(permissions) if permissions.identity => {}
            Some(_) => {
                return Err(Rule::NotAllowed(format!(
                    "the tool {slug} does not ask for permissions.identity in its manifest, so it gets no identity token"
                )));
            }
            None => {
                return Err(Rule::NotAllowed(format!(
                    "the tool {slug} gets no identity token: the fixtures give no manifest, so it asks for no permissions.identity (give the tool's manifest.json as the fixtures' `manifest`, with \"permissions\": {{\"identity\": true}})"
                )));
            }
        }
        let now = self.now();
        let claims = IdentityClaims {
            iss: self
                .data
                .token
                .issuer
                .clone()
                .unwrap_or_else(|| self.page_origin.clone()),
            aud: self
                .data
                .token
                .audience
                .clone()
                .unwrap_or_else(|| self.page_origin.clone()),
            sub: self.data.user_id.clone(),
            tid: self.data.tenant.id.clone(),
            role: self.data.user.user_role,
            tool: slug.to_owned(),
            ver: self.data.version.clone(),
            iat: now,
            exp: now.saturating_add(TOKEN_LIFETIME_SECS),
            jti: random_uuid().map_err(Rule::Internal)?,
        };
        Ok(IdentityToken {
            token: self.key.sign(&claims).map_err(Rule::Internal)?,
            expires_at: claims.exp,
            expires_in: TOKEN_LIFETIME_SECS,
        })
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

/// A path's segments, percent-decoded.
fn segments(path: &str) -> Vec<String> {
    path.trim_start_matches('/')
        .split('/')
        .map(|segment| {
            percent_encoding::percent_decode_str(segment)
                .decode_utf8_lossy()
                .into_owned()
        })
        .collect()
}

/// Whether a path is one of the endpoints answered (with some method).
fn is_endpoint(segments: &[&str]) -> bool {
    matches!(
        segments,
        ["me" | "customers" | "jobs" | "products" | "task-templates" | "cost-items" | "quotes"]
            | ["catalog", "index"]
            | ["quotes", _]
            | ["quotes", _, "lines" | "send"]
            | ["tools", _, "token" | "fetch"]
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

#[cfg(test)]
mod tests {
    use jsonwebtoken::jwk::JwkSet;
    use jsonwebtoken::{Algorithm, DecodingKey, Validation, decode, decode_header};
    use serde_json::json;

    use super::*;

    fn post(target: &str) -> Response {
        backend(&json!({})).handle(&Request {
            method: "POST",
            target,
            headers: &[],
            body: None,
        })
    }

    fn backend(fixtures: &Value) -> MemoryBackend {
        MemoryBackend::on_page(fixtures, "http://localhost:8000").unwrap()
    }

    fn identity_fixtures() -> Value {
        json!({
            "user": {"id": "u-7", "role": "admin"},
            "tenant": {"id": "t-3"},
            "manifest": {"name": "Prices", "version": "1.4.2",
                         "permissions": {"identity": true, "connect": ["https://api.vendor.test"]}},
        })
    }

    fn token_of(memory: &mut MemoryBackend, slug: &str) -> (Response, Option<IdentityToken>) {
        let response = memory.handle(&Request {
            method: "POST",
            target: &format!("/tools/{slug}/token"),
            headers: &[],
            body: Some("{\"sub\": \"forged\"}"),
        });
        let token = response
            .body
            .as_deref()
            .and_then(|body| serde_json::from_str(body).ok());
        (response, token)
    }

    /// Verifies `token` as a tool's server does, against the backend's key set.
    fn verify(
        memory: &MemoryBackend,
        token: &str,
        audience: &str,
        issuer: &str,
    ) -> jsonwebtoken::errors::Result<IdentityClaims> {
        let set: JwkSet = serde_json::from_value(memory.jwks()).unwrap();
        let header = decode_header(token)?;
        let jwk = set
            .find(header.kid.as_deref().unwrap_or_default())
            .ok_or(jsonwebtoken::errors::ErrorKind::InvalidKeyFormat)?;
        let mut validation = Validation::new(Algorithm::ES256);
        validation.set_audience(&[audience]);
        validation.set_issuer(&[issuer]);
        validation.set_required_spec_claims(&["exp", "iat", "aud", "iss", "sub"]);
        Ok(decode::<IdentityClaims>(token, &DecodingKey::from_jwk(jwk)?, &validation)?.claims)
    }

    #[test]
    fn a_token_carries_the_claims_the_server_chooses_and_verifies_with_the_key_set() {
        let mut memory = backend(&identity_fixtures());
        let (response, token) = token_of(&mut memory, "prices");
        assert_eq!(response.status, 200, "{:?}", response.body);
        let token = token.unwrap();
        assert_eq!(token.expires_in, 300);
        let claims = verify(
            &memory,
            &token.token,
            "http://localhost:8000",
            "http://localhost:8000",
        )
        .unwrap();
        assert_eq!(
            (
                claims.sub.as_str(),
                claims.tid.as_str(),
                claims.role,
                claims.tool.as_str(),
                claims.ver.as_str()
            ),
            (
                "u-7",
                "t-3",
                toolbridge_protocol::context::Role::Admin,
                "prices",
                "1.4.2"
            )
        );
        assert_eq!(claims.exp, token.expires_at);
        assert_eq!(claims.exp - claims.iat, 300);
        let (_, again) = token_of(&mut memory, "prices");
        let again = verify(
            &memory,
            &again.unwrap().token,
            "http://localhost:8000",
            "http://localhost:8000",
        )
        .unwrap();
        assert_ne!(again.jti, claims.jti);
        // Another backend's key does not verify it.
        let other = backend(&identity_fixtures());
        assert!(
            verify(
                &other,
                &token.token,
                "http://localhost:8000",
                "http://localhost:8000"
            )
            .is_err()
        );
    }

    #[test]
    fn the_fixtures_name_the_issuer_and_audience() {
        let mut fixtures = identity_fixtures();
        fixtures["token"] = json!({"issuer": "https://app.example.com",
                                   "audience": "https://prices.tools.example.com"});
        let mut memory = backend(&fixtures);
        let (_, token) = token_of(&mut memory, "prices");
        let token = token.unwrap().token;
        assert!(
            verify(
                &memory,
                &token,
                "https://prices.tools.example.com",
                "https://app.example.com"
            )
            .is_ok()
        );
        assert!(
            verify(
                &memory,
                &token,
                "http://localhost:8000",
                "https://app.example.com"
            )
            .is_err()
        );
        let refused = MemoryBackend::new(&json!({"token": {
            "issuer": "https://app.example.com/", "audience": "https://prices.tools.example.com/x",
            "colour": 1}}))
        .unwrap_err();
        let paths: Vec<&str> = refused
            .violations()
            .iter()
            .map(|v| v.path.as_str())
            .collect();
        assert_eq!(paths, ["token.colour", "token.issuer", "token.audience"]);
    }

    #[test]
    fn a_clock_in_the_past_gives_a_token_that_has_expired() {
        let mut memory = backend(&identity_fixtures());
        let past = memory.now() - 600;
        memory.set_now(Some(past));
        let (_, token) = token_of(&mut memory, "prices");
        let token = token.unwrap();
        assert_eq!(token.expires_at, past + 300);
        let expired = verify(
            &memory,
            &token.token,
            "http://localhost:8000",
            "http://localhost:8000",
        )
        .unwrap_err();
        assert_eq!(
            *expired.kind(),
            jsonwebtoken::errors::ErrorKind::ExpiredSignature
        );
        memory.set_now(None);
        let (_, fresh) = token_of(&mut memory, "prices");
        assert!(fresh.unwrap().expires_at > past + 300);
    }

    #[test]
    fn a_tool_without_the_identity_permission_is_refused_as_the_server_refuses_it() {
        let mut fixtures = identity_fixtures();
        fixtures["manifest"]["permissions"] = json!({"connect": []});
        let (refused, _) = token_of(&mut backend(&fixtures), "prices");
        assert_eq!(refused.status, 403);
        let body: Value = serde_json::from_str(refused.body.as_deref().unwrap()).unwrap();
        assert_eq!(body["code"], "NOT_ALLOWED");
        assert!(
            body["detail"]
                .as_str()
                .unwrap()
                .contains("does not ask for permissions.identity")
        );
        let (no_manifest, _) = token_of(&mut backend(&json!({})), "prices");
        assert_eq!(no_manifest.status, 403);
        assert!(
            no_manifest
                .body
                .unwrap()
                .contains("give the tool's manifest.json")
        );
        assert_eq!(post("/tools/Not_A_Slug/token").status, 404);
        let mut signed_out = backend(&identity_fixtures());
        signed_out.sign_out();
        assert_eq!(token_of(&mut signed_out, "prices").0.status, 401);
        let wrong_method = backend(&identity_fixtures()).handle(&Request {
            method: "GET",
            target: "/tools/prices/token",
            headers: &[],
            body: None,
        });
        assert_eq!(wrong_method.status, 405);
    }

    #[test]
    fn a_manifest_with_broken_permissions_is_named_by_its_path() {
        let refused = MemoryBackend::new(&json!({"manifest": {
            "permissions": {"identity": "yes", "connect": ["http://api.vendor.test"]}}}))
        .unwrap_err();
        let paths: Vec<&str> = refused
            .violations()
            .iter()
            .map(|v| v.path.as_str())
            .collect();
        assert_eq!(
            paths,
            [
                "manifest.permissions.connect[0]",
                "manifest.permissions.identity"
            ]
        );
    }

    #[test]
    fn the_users_own_time_zone_and_theme_win_over_the_tenants() {
        let memory = backend(&json!({
            "tenant": {"cultureCode": "en-GB", "timeZone": "Europe/London", "currency": "GBP",
                       "units": "imperial", "theme": "light"},
            "user": {"timeZone": "Pacific/Auckland", "theme": "dark"},
        }));
        assert_eq!(
            serde_json::to_value(memory.user()).unwrap(),
            json!({"userName": "Test User", "userEmail": "test.user@example.test",
                   "userRole": "office", "tenantName": "Test Tenant", "tenantId": "test-tenant",
                   "cultureCode": "en-GB", "timeZone": "Pacific/Auckland", "currency": "GBP",
                   "locale": "en-GB", "units": "imperial", "theme": "dark"})
        );
        let refused = MemoryBackend::new(&json!({"user": {"theme": "purple", "currency": "EUR"}}))
            .unwrap_err();
        let paths: Vec<&str> = refused
            .violations()
            .iter()
            .map(|v| v.path.as_str())
            .collect();
        assert_eq!(paths, ["user.currency", "user.theme"]);
    }
}
