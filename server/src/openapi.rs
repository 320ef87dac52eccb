//! `GET /api/v1/openapi.json`: the OpenAPI document, generated from the
//! handlers' annotations and the protocol's DTOs (never written by hand).
//!
//! What a layer around the handlers answers is documented by that layer, as a
//! [`Modify`]: the key middleware's 401, 403 and 429 and its `X-RateLimit-*`
//! headers ([`crate::auth::KeyedAnswers`]), the headers of error answers
//! ([`crate::error::ErrorHeaders`]) and the request id on every response
//! ([`crate::request_id::RequestIdHeader`]).

use axum::Json;
use axum::response::{IntoResponse, Response};
use serde_json::{Map, Value, json};
use toolbridge_protocol::Decimal;
use toolbridge_protocol::catalog::MAX_QTY_PER_UNIT;
use toolbridge_protocol::limits::{
    MAX_LINE_QTY, QUOTE_MAX_LINES, SECTION_MAX_CHARS, TEXT_MAX_CHARS,
};
use toolbridge_protocol::money::decimal_to_f64;
use toolbridge_protocol::quote::QuoteLine;
use toolbridge_protocol::quote_header::QuoteHeaderChangeRequest;
use toolbridge_protocol::webhooks::{
    EVENT_ID_HEADER, EVENT_ID_START, MAX_ATTEMPTS, SIGNATURE_HEADER, WebhookEventType,
};
use utoipa::openapi::path::Operation;
use utoipa::openapi::security::{ApiKey, ApiKeyValue, HttpAuthScheme, HttpBuilder, SecurityScheme};
use utoipa::openapi::{RefOr, Response as ResponseDoc};
use utoipa::{Modify, OpenApi, ToSchema};

use crate::api::{catalog, directory, quotes, webhooks};
use crate::auth::{KeyedAnswers, SECURE_SESSION_COOKIE, SESSION_COOKIE};
use crate::error::{ApiError, ErrorHeaders};
use crate::request_id::RequestIdHeader;
use crate::{dev_reports, events, fetch, health, identity, preferences, session, settings, tools};

/// The REST API v1 and the session API.
#[derive(OpenApi)]
#[openapi(
    info(
        title = "toolbridge REST API",
        version = "1",
        description = "Customers, products, jobs and quotes of a field-service tenant. Authenticate with `Authorization: Bearer <API key>`; every keyed response carries X-RateLimit-Limit, X-RateLimit-Remaining and X-RateLimit-Reset (Unix seconds). Errors are application/problem+json with a string `code` and, for 422, `errors[].path`. Lists take `page` (from 1) and `pageSize` (1 to 500, default 50) and answer {items, totalCount, page, pageSize}."
    ),
    paths(
        directory::me, directory::customers, directory::jobs,
        catalog::products, catalog::task_templates, catalog::cost_items, catalog::index,
        quotes::list, quotes::get, quotes::create, quotes::update_header, quotes::save_lines, quotes::send,
        webhooks::list, webhooks::create, webhooks::get, webhooks::update, webhooks::delete,
        webhooks::rotate_secret, webhooks::deliveries, webhooks::redeliver,
        session::sign_in, session::current, session::sign_out, session::help,
        preferences::get, preferences::update,
        tools::listing::list, identity::token, fetch::fetch, events::stream,
        settings::keys::list, settings::keys::create, settings::keys::revoke,
        settings::tools::list, settings::tools::upload, settings::tools::toggle, settings::tools::remove,
        settings::tools::set_settings, settings::organisation::get, settings::organisation::update,
        dev_reports::blocked,
        health::live, health::ready, identity::jwks,
    ),
    components(schemas(
        toolbridge_protocol::problem::Problem,
        toolbridge_protocol::create_quote::BridgeCreateQuoteRequest,
        toolbridge_protocol::create_quote::BridgeQuoteLineRequest,
        toolbridge_protocol::quote::BridgeCreateQuoteResult,
        toolbridge_protocol::add_lines::BridgeAddLineDto,
        toolbridge_protocol::live::QuoteEvent,
        toolbridge_protocol::live::ToolSettingsEvent,
        toolbridge_protocol::live::ContextEvent,
        toolbridge_protocol::webhooks::WebhookPayload,
        toolbridge_protocol::webhooks::WebhookData,
        toolbridge_protocol::webhooks::WebhookEventType,
    )),
    // In this order: the key middleware adds responses the next two decorate.
    modifiers(&SecuritySchemes, &KeyedAnswers, &ErrorHeaders, &RequestIdHeader, &Summaries),
    tags(
        (name = "customers"), (name = "catalog"), (name = "jobs"), (name = "quotes"),
        (name = "webhooks", description = "the tenant's webhook endpoints and their delivery logs; the events themselves are in the document's `webhooks`"),
        (name = "session", description = "for the host app; API keys do not use it"),
        (name = "settings", description = "for the app's Admin and Super User, with the session"),
        (name = "operations", description = "for load balancers and orchestrators: liveness and readiness, without authentication"),
        (name = "identity", description = "the public keys that verify identity tokens, for the servers of tools, without authentication"),
    )
)]
pub struct ApiDoc;

/// Declares the two schemes the operations refer to: `api_key`, the bearer API key of the REST
/// API, and `session`, the app's session cookie, which the session API's operations (and the
/// REST API, from the app's own pages) take.
struct SecuritySchemes;

impl Modify for SecuritySchemes {
    fn modify(&self, openapi: &mut utoipa::openapi::OpenApi) {
        let components = openapi.components.get_or_insert_with(Default::default);
        components.add_security_scheme(
            "api_key",
            SecurityScheme::Http(
                HttpBuilder::new()
                    .scheme(HttpAuthScheme::Bearer)
                    .description(Some(
                        "an API key from `toolbridge keys create` or Settings → API tokens",
                    ))
                    .build(),
            ),
        );
        components.add_security_scheme(
            "session",
            SecurityScheme::ApiKey(ApiKey::Cookie(ApiKeyValue::with_description(
                SESSION_COOKIE,
                &format!(
                    "the app's session, set by `POST /api/session` (named `{SECURE_SESSION_COOKIE}` \
                     when the app is served over https); it counts only on requests from the \
                     app's own pages"
                ),
            ))),
        );
    }
}

/// Makes each operation's summary a short line for a reader of the reference: the handlers'
/// doc comments open with `` `GET /api/v1/customers`: the tenant's customers, paged. ``, whose
/// first paragraph utoipa takes as the summary, line breaks and all. The summary becomes the
/// first sentence (or clause) after the method and path, capitalised and as plain text ("The tenant's
/// customers, paged"); the whole paragraph goes first in the description.
struct Summaries;

impl Modify for Summaries {
    fn modify(&self, openapi: &mut utoipa::openapi::OpenApi) {
        each_operation(openapi, |_, operation| {
            let Some((summary, paragraph)) = operation.summary.as_deref().and_then(split_summary)
            else {
                return;
            };
            operation.description = Some(match operation.description.take() {
                Some(rest) if !rest.trim().is_empty() => format!("{paragraph}\n\n{rest}"),
                _ => paragraph,
            });
            operation.summary = Some(summary);
        });
    }
}

/// The summary line and the whole paragraph, one line, of a doc comment's first paragraph that
/// opens with its method and path in backticks; `None` for any other.
fn split_summary(text: &str) -> Option<(String, String)> {
    let rest = text.strip_prefix('`')?;
    let (_, after) = rest.split_once("`:")?;
    let paragraph = after.split_whitespace().collect::<Vec<_>>().join(" ");
    // Its first sentence, or the first clause of a long one.
    let first = paragraph
        .split_once(". ")
        .map_or(paragraph.as_str(), |(first, _)| first);
    let first = first.split_once("; ").map_or(first, |(clause, _)| clause);
    let first = first.trim_end_matches('.');
    // A summary is shown as plain text: no code spans.
    let first = first.replace('`', "");
    let mut letters = first.chars();
    let summary = letters.next()?.to_uppercase().chain(letters).collect();
    let mut paragraph_letters = paragraph.chars();
    let paragraph = paragraph_letters
        .next()?
        .to_uppercase()
        .chain(paragraph_letters)
        .collect();
    Some((summary, paragraph))
}

/// Calls `f` with the path and each operation of the document.
pub fn each_operation(
    openapi: &mut utoipa::openapi::OpenApi,
    mut f: impl FnMut(&str, &mut Operation),
) {
    for (path, item) in &mut openapi.paths.paths {
        let operations = [
            &mut item.get,
            &mut item.put,
            &mut item.post,
            &mut item.delete,
            &mut item.options,
            &mut item.head,
            &mut item.patch,
            &mut item.trace,
        ];
        for operation in operations.into_iter().flatten() {
            f(path, operation);
        }
    }
}

/// Calls `f` with the path, the status and each response (written out, not
/// a reference) of every operation.
pub fn each_response(
    openapi: &mut utoipa::openapi::OpenApi,
    mut f: impl FnMut(&str, &str, &mut ResponseDoc),
) {
    each_operation(openapi, |path, operation| {
        for (status, response) in &mut operation.responses.responses {
            if let RefOr::T(response) = response {
                f(path, status, response);
            }
        }
    });
}

/// Response headers that a documented response does not always carry: the
/// rate-limit headers come only with an API key, not with the app's session,
/// and `Idempotent-Replayed` only with a repeated `Idempotency-Key`. Every
/// other documented response header is always sent, and the document says
/// so (`required: true`), so a client may rely on it and a conformance test
/// can hold the server to it.
const SOMETIMES_SENT: [&str; 4] = [
    "x-ratelimit-limit",
    "x-ratelimit-remaining",
    "x-ratelimit-reset",
    "idempotent-replayed",
];

/// The document as JSON, with what utoipa 5.5 cannot write itself: every
/// response header marked required (its header type has no such field)
/// except the rate-limit headers and `Idempotent-Replayed`, which are not
/// always sent, the fields of response links in camelCase (`operationId`; it
/// writes `operation_id`, which no client reads), and the rules on requests
/// that its attributes cannot state.
pub fn document_json() -> Result<Value, serde_json::Error> {
    let mut document = serde_json::to_value(ApiDoc::openapi())?;
    if let Some(schemas) = document
        .pointer_mut("/components/schemas")
        .and_then(Value::as_object_mut)
    {
        request_rules(schemas);
        webhook_endpoint_rules(schemas);
    }
    if let Some(document) = document.as_object_mut() {
        document.insert("webhooks".to_owned(), webhooks());
    }
    let operations = document
        .get_mut("paths")
        .and_then(Value::as_object_mut)
        .into_iter()
        .flat_map(|paths| paths.values_mut())
        .filter_map(Value::as_object_mut)
        .flat_map(|item| item.values_mut());
    for operation in operations {
        let responses = operation
            .get_mut("responses")
            .and_then(Value::as_object_mut)
            .into_iter()
            .flat_map(|responses| responses.values_mut())
            .filter_map(Value::as_object_mut);
        for response in responses {
            if let Some(headers) = response.get_mut("headers").and_then(Value::as_object_mut) {
                for (name, header) in headers.iter_mut() {
                    if let Some(header) = header.as_object_mut() {
                        let always = !SOMETIMES_SENT.contains(&name.to_ascii_lowercase().as_str());
                        header.insert("required".to_owned(), Value::Bool(always));
                    }
                }
            }
            if let Some(links) = response.get_mut("links").and_then(Value::as_object_mut) {
                for link in links.values_mut().filter_map(Value::as_object_mut) {
                    for (snake, camel) in LINK_FIELDS {
                        if let Some(value) = link.remove(snake) {
                            link.insert(camel.to_owned(), value);
                        }
                    }
                }
            }
        }
    }
    Ok(document)
}

/// Rules of request bodies that the schemas' attributes cannot state, so
/// that the document refuses what the server refuses:
/// - a header change names at least one field (`validate_header_change`);
///   utoipa 5.5 writes `min_properties` as `maxProperties`;
/// - a saved line's `qty` is at most [`MAX_LINE_QTY`], or that many times
///   [`MAX_QTY_PER_UNIT`] on a line injected from a task sequence
///   (`open_quote::check_lines`): a bound that depends on another field;
/// - its `section` has at most [`SECTION_MAX_CHARS`] characters once
///   trimmed (of what Rust's `str::trim` takes for white space), a saved
///   quote at most [`QUOTE_MAX_LINES`] lines, and a group key at most
///   [`TEXT_MAX_CHARS`] characters.
fn request_rules(schemas: &mut Map<String, Value>) {
    if let Some(change) = schemas
        .get_mut(QuoteHeaderChangeRequest::name().as_ref())
        .and_then(Value::as_object_mut)
    {
        change.insert("minProperties".to_owned(), json!(1));
    }
    if let Some(line) = schemas
        .get_mut(QuoteLine::name().as_ref())
        .and_then(Value::as_object_mut)
    {
        let most = |qty: Decimal| json!(decimal_to_f64(qty));
        if let Some(qty) = line
            .get_mut("properties")
            .and_then(|properties| properties.get_mut("qty"))
            .and_then(Value::as_object_mut)
        {
            qty.insert("maximum".to_owned(), most(MAX_LINE_QTY * MAX_QTY_PER_UNIT));
        }
        line.insert(
            "if".to_owned(),
            json!({"properties": {"injected": {"const": true}}, "required": ["injected"]}),
        );
        line.insert(
            "else".to_owned(),
            json!({"properties": {"qty": {"maximum": most(MAX_LINE_QTY)}}}),
        );
        if let Some(section) = line
            .get_mut("properties")
            .and_then(|properties| properties.get_mut("section"))
            .and_then(Value::as_object_mut)
        {
            section.insert(
                "pattern".to_owned(),
                json!(trimmed_at_most(SECTION_MAX_CHARS)),
            );
        }
    }
    if let Some(properties) = schemas
        .get_mut("SaveLines")
        .and_then(|save| save.get_mut("properties"))
    {
        if let Some(lines) = properties.get_mut("lines").and_then(Value::as_object_mut) {
            lines.insert("maxItems".to_owned(), json!(QUOTE_MAX_LINES));
        }
        if let Some(names) = properties
            .get_mut("groupKeys")
            .and_then(|keys| keys.get_mut("propertyNames"))
            .and_then(Value::as_object_mut)
        {
            names.insert("maxLength".to_owned(), json!(TEXT_MAX_CHARS));
        }
    }
}

/// The rules of a webhook endpoint's URL and event types
/// (`toolbridge_protocol::webhooks::parse_url`, `checked_event_types`) that the
/// schemas' attributes cannot state: the URL's form as a pattern (http or
/// https in either case, a host name or a bracketed IPv6 address, a port from
/// 1 to 65535 with any leading zeros, then no white space or control
/// characters), and event types listed once each. Whether the host resolves,
/// and to public addresses only, no schema can say: the 422 says it.
fn webhook_endpoint_rules(schemas: &mut Map<String, Value>) {
    for (schema, at_least_one_field) in [
        (webhooks::NewWebhookEndpoint::name(), false),
        (webhooks::WebhookEndpointUpdate::name(), true),
    ] {
        let Some(schema) = schemas
            .get_mut(schema.as_ref())
            .and_then(Value::as_object_mut)
        else {
            continue;
        };
        if at_least_one_field {
            schema.insert("minProperties".to_owned(), json!(1));
        }
        let Some(properties) = schema.get_mut("properties") else {
            continue;
        };
        if let Some(url) = properties.get_mut("url").and_then(Value::as_object_mut) {
            url.insert("pattern".to_owned(), json!(webhook_url_pattern()));
        }
        if let Some(types) = properties
            .get_mut("eventTypes")
            .and_then(Value::as_object_mut)
        {
            types.insert("uniqueItems".to_owned(), json!(true));
        }
    }
}

/// The pattern of the URLs `toolbridge_protocol::webhooks::parse_url` takes.
fn webhook_url_pattern() -> String {
    let port =
        "0*(6553[0-5]|655[0-2][0-9]|65[0-4][0-9]{2}|6[0-4][0-9]{3}|[1-5][0-9]{4}|[1-9][0-9]{0,3})";
    format!(
        r"^[Hh][Tt][Tt][Pp][Ss]?://([A-Za-z0-9._-]+|\[[0-9A-Fa-f:]+\])(:{port})?([/?#][^\x00-\x1F\x7F-\x9F{WHITE_SPACE}]*)?$"
    )
}

/// The document's `webhooks` (OpenAPI 3.1), which utoipa 5.5 has no field
/// for: what toolbridge `POST`s to an endpoint for each event type, so that
/// integrators can generate a receiver. Each is a [`WebhookPayload`] with the
/// event id and signature headers.
///
/// [`WebhookPayload`]: toolbridge_protocol::webhooks::WebhookPayload
fn webhooks() -> Value {
    let headers = json!([
        {
            "name": EVENT_ID_HEADER,
            "in": "header",
            "required": true,
            "description": "the event's id, as the payload's `id`: the same on every attempt and on a redelivery, so drop an id you have already handled (delivery is at least once)",
            "schema": {"type": "string", "pattern": format!("^{EVENT_ID_START}[0-9a-f]+$")}
        },
        {
            "name": SIGNATURE_HEADER,
            "in": "header",
            "required": true,
            "description": "`t=<unix seconds>,v1=<hex HMAC-SHA256 of \"<t>.<body>\" keyed with the endpoint's secret>`: compute the HMAC over the raw body as received, compare it in constant time, and refuse a `t` more than 5 minutes old",
            "schema": {"type": "string", "pattern": "^t=[0-9]+,v1=[0-9a-f]{64}$"}
        }
    ]);
    let payload = format!(
        "#/components/schemas/{}",
        toolbridge_protocol::webhooks::WebhookPayload::name()
    );
    WebhookEventType::ALL
        .into_iter()
        .map(|event| {
            let (summary, what) = match event {
                WebhookEventType::QuoteCreated => ("A quote was created", "a new quote"),
                WebhookEventType::QuoteSaved => (
                    "A Draft quote was saved",
                    "a Draft quote after its lines or header were saved",
                ),
                WebhookEventType::QuoteSent => (
                    "A quote was sent",
                    "a quote after it was sent (it is now locked)",
                ),
            };
            let operation = json!({
                "post": {
                    "operationId": format!("{}Webhook", event.as_str().replace('.', "_")),
                    "tags": ["webhooks"],
                    "summary": summary,
                    "description": format!(
                        "`{}`: toolbridge POSTs this to every enabled endpoint of the tenant that receives `{}`, with {what} in `data.quote`. A 2xx answer within 10 s counts as delivered; anything else is tried again with exponential back-off, {MAX_ATTEMPTS} attempts in all, then the delivery is marked failed (its log is at GET /api/v1/webhook-endpoints/{{id}}/deliveries).",
                        event.as_str(),
                        event.as_str()
                    ),
                    "parameters": headers,
                    "requestBody": {
                        "required": true,
                        "content": {"application/json": {"schema": {"$ref": payload}}}
                    },
                    "responses": {
                        "2XX": {"description": "delivered; anything else is retried"}
                    }
                }
            });
            (event.as_str().to_owned(), operation)
        })
        .collect::<Map<String, Value>>()
        .into()
}

/// The characters Rust's `str::trim` takes away: Unicode's `White_Space`.
const WHITE_SPACE: &str = r"\t-\r \u0085\u00A0\u1680\u2000-\u200A\u2028\u2029\u202F\u205F\u3000";

/// A pattern for text of at most `most` (2 or more) characters once trimmed:
/// white space, then a first and a last character that are not white space
/// with at most `most - 2` of anything between them, then white space.
fn trimmed_at_most(most: usize) -> String {
    let between = most.saturating_sub(2);
    format!(
        "^[{WHITE_SPACE}]*([^{WHITE_SPACE}]([\\s\\S]{{0,{between}}}[^{WHITE_SPACE}])?)?[{WHITE_SPACE}]*$"
    )
}

/// The fields of a link object that utoipa 5.5 writes in snake case, with
/// their names in the OpenAPI specification.
const LINK_FIELDS: [(&str, &str); 3] = [
    ("operation_id", "operationId"),
    ("operation_ref", "operationRef"),
    ("request_body", "requestBody"),
];

/// The document as JSON.
pub async fn document() -> Response {
    match document_json() {
        Ok(document) => Json(document).into_response(),
        Err(error) => ApiError::internal("writing the OpenAPI document", error).into_response(),
    }
}
