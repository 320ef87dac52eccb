//! Quotes: list, read, create (with `Idempotency-Key`), change a Draft's
//! header and save the lines of an open quote (each with `If-Match` and
//! `Idempotency-Key`), send. Every answer with a quote carries its `ETag`,
//! which names its version.

use std::collections::BTreeMap;

use axum::extract::State;
use axum::http::{HeaderMap, HeaderValue, StatusCode, header};
use axum::response::{IntoResponse, Response};
use axum::{Extension, Json};
use serde::Deserialize;
use toolbridge_protocol::create_quote::{
    RestCreateQuoteRequest, validate_bridge_create, validate_rest_create,
};
use toolbridge_protocol::paging::BridgePagedResult;
use toolbridge_protocol::problem::Problem;
use toolbridge_protocol::quote::{BridgeQuoteDto, QuoteDto, QuoteLine};
use toolbridge_protocol::quote_header::{QuoteHeaderChangeRequest, validate_header_change};
use toolbridge_protocol::versions::quote_etag;
use toolbridge_store::{Conditions, Idempotency, Scope, Versioned, Written};
use utoipa::IntoResponses;
use utoipa::openapi::{RefOr, Response as ApiResponse};

use super::{PageParams, PathParam, Query, page};
use crate::app::AppState;
use crate::auth::Principal;
use crate::conditional::expected;
use crate::digest::sha256_hex;
use crate::error::{ApiError, changed_response, problem_response};
use crate::json::{BodyErrors, JsonBody, typed};

/// Longest `Idempotency-Key` accepted.
const IDEMPOTENCY_KEY_MAX: usize = 255;

/// `GET /api/v1/quotes`: the tenant's quotes, newest first.
#[utoipa::path(get, path = "/api/v1/quotes", tag = "quotes", operation_id = "listQuotes",
    params(PageParams),
    responses((status = 200, body = BridgePagedResult<BridgeQuoteDto>, links(
        ("getQuote" = (operation_id = "getQuote", parameters(("id" = "$response.body#/items/0/id")), description = "the first quote listed, in full")),
        ("updateQuoteHeader" = (operation_id = "updateQuoteHeader", parameters(("id" = "$response.body#/items/0/id")), description = "change the first quote listed's header")),
        ("saveQuoteLines" = (operation_id = "saveQuoteLines", parameters(("id" = "$response.body#/items/0/id")), description = "replace the first quote listed's lines")),
        ("sendQuote" = (operation_id = "sendQuote", parameters(("id" = "$response.body#/items/0/id")), description = "send the first quote listed")),
    )), (status = 403, description = "the key lacks the scope", body = Problem, content_type = "application/problem+json"), (status = 422, description = "`page` or `pageSize` is out of range; errors[] names each", body = Problem, content_type = "application/problem+json")),
    security(("api_key" = ["quotes:read"])))]
pub async fn list(
    State(state): State<AppState>,
    Extension(principal): Extension<Principal>,
    query: Query,
) -> Result<Json<BridgePagedResult<BridgeQuoteDto>>, ApiError> {
    principal.require(Scope::QuotesRead)?;
    Ok(Json(
        state
            .store
            .quotes(principal.tenant_id(), page(&query)?)
            .await?,
    ))
}

/// `GET /api/v1/quotes/{id}`: the full quote with its lines and totals, and
/// its `ETag`, which a change sends back as `If-Match`.
#[utoipa::path(get, path = "/api/v1/quotes/{id}", tag = "quotes", operation_id = "getQuote",
    params(("id" = String, Path, description = "quote id")),
    responses((status = 200, body = QuoteDto, headers(("ETag" = String, description = "the quote's version, a strong validator: send it back as If-Match with a change, which is then refused (412) should the quote have changed meanwhile"))), (status = 403, description = "the key lacks the scope", body = Problem, content_type = "application/problem+json"), (status = 404, description = "no such quote for this tenant", body = Problem, content_type = "application/problem+json")),
    security(("api_key" = ["quotes:read"])))]
pub async fn get(
    State(state): State<AppState>,
    Extension(principal): Extension<Principal>,
    PathParam(id): PathParam,
) -> Result<Response, ApiError> {
    principal.require(Scope::QuotesRead)?;
    let current = state.store.quote(principal.tenant_id(), &id).await?;
    Ok(versioned(StatusCode::OK, current, false))
}

/// `status` and `current` as JSON, with its `ETag`, and `Idempotent-Replayed:
/// true` when it answers a repeated `Idempotency-Key`.
fn versioned(status: StatusCode, current: Versioned, replayed: bool) -> Response {
    let etag = quote_etag(&current.quote.header.id, current.version);
    let mut response = (status, Json(current.quote)).into_response();
    if let Ok(value) = HeaderValue::from_str(&etag) {
        response.headers_mut().insert(header::ETAG, value);
    }
    if replayed {
        response
            .headers_mut()
            .insert("idempotent-replayed", HeaderValue::from_static("true"));
    }
    response
}

/// [`versioned`] for what a write answers.
fn written(status: StatusCode, written: Written) -> Response {
    let Written {
        quote,
        version,
        replayed,
    } = written;
    versioned(status, Versioned { quote, version }, replayed)
}

/// `POST /api/v1/quotes`: a new Draft quote. API keys send the REST form
/// (`customerId`, lines with `skuId`); the app's session sends the bridge
/// form of `quotes.create`. Both pass the same validation. An
/// `Idempotency-Key` makes a retry return the first answer instead of a
/// second quote.
#[utoipa::path(post, path = "/api/v1/quotes", tag = "quotes", operation_id = "createQuote",
    request_body(content = RestCreateQuoteRequest, description = "REST form (API keys); the app's session sends BridgeCreateQuoteRequest"),
    params(("Idempotency-Key" = Option<String>, Header, nullable = false, max_length = 255, pattern = r"^[\x21-\x7E]([\x20-\x7E]*[\x21-\x7E])?$", description = "repeat a request safely: the same key and body return the first quote (1 to 255 visible ASCII characters)")),
    responses((status = 201, body = QuoteDto, headers(("Location" = String, description = "the new quote's URL, `/api/v1/quotes/{id}`"), ("ETag" = String, description = "the quote's version, a strong validator: send it back as If-Match with a change, which is then refused (412) should the quote have changed meanwhile"), ("Idempotent-Replayed" = String, description = "`true` when this is the first answer again, for a repeated Idempotency-Key")), links(
        ("getQuote" = (operation_id = "getQuote", parameters(("id" = "$response.body#/id")), description = "the new quote, in full")),
        ("updateQuoteHeader" = (operation_id = "updateQuoteHeader", parameters(("id" = "$response.body#/id")), description = "change the new quote's header")),
        ("saveQuoteLines" = (operation_id = "saveQuoteLines", parameters(("id" = "$response.body#/id")), description = "replace the new quote's lines")),
        ("sendQuote" = (operation_id = "sendQuote", parameters(("id" = "$response.body#/id")), description = "send the new quote")),
    )), BodyErrors, (status = 403, description = "the key lacks the scope, or the user's role may not create quotes", body = Problem, content_type = "application/problem+json"), (status = 404, description = "the job named by jobId (session form) does not exist", body = Problem, content_type = "application/problem+json"), (status = 422, description = "the request breaks a rule, which includes a customerId or skuId that names no customer or active product of the tenant (errors[] lists each with its path), or the Idempotency-Key was used with another body", body = Problem, content_type = "application/problem+json")),
    security(("api_key" = ["quotes:write"])))]
pub async fn create(
    State(state): State<AppState>,
    Extension(principal): Extension<Principal>,
    headers: HeaderMap,
    body: JsonBody,
) -> Result<Response, ApiError> {
    principal.require(Scope::QuotesWrite)?;
    let request = match principal {
        Principal::Key(_) => validate_rest_create(&body.value)?,
        Principal::User(_) => validate_bridge_create(&body.value)?,
    };
    let idempotency = idempotency(&headers, &principal, &body.bytes)?;
    let created = state
        .store
        .create_quote(
            principal.tenant_id(),
            &request,
            idempotency.as_ref(),
            &principal.actor(),
        )
        .await?;
    let location = format!("/api/v1/quotes/{}", created.quote.header.id);
    let mut response = written(StatusCode::CREATED, created);
    if let Ok(value) = HeaderValue::from_str(&location) {
        response.headers_mut().insert(header::LOCATION, value);
    }
    Ok(response)
}

/// What a change to quote `quote_id` asks beyond itself: the versions of its
/// `If-Match`, and its `Idempotency-Key` with the hash of its body.
fn conditions(
    headers: &HeaderMap,
    principal: &Principal,
    quote_id: &str,
    body: &[u8],
) -> Result<Conditions, ApiError> {
    Ok(Conditions {
        expected: expected(headers, quote_id)?,
        idempotency: idempotency(headers, principal, body)?,
    })
}

/// The `Idempotency-Key` of a request, with the hash of its body.
fn idempotency(
    headers: &HeaderMap,
    principal: &Principal,
    body: &[u8],
) -> Result<Option<Idempotency>, ApiError> {
    let Some(value) = headers.get("idempotency-key") else {
        return Ok(None);
    };
    let key = value
        .to_str()
        .ok()
        .map(str::trim)
        .filter(|key| !key.is_empty() && key.len() <= IDEMPOTENCY_KEY_MAX)
        .ok_or_else(|| {
            toolbridge_protocol::Error::invalid(
                "Idempotency-Key",
                format!("must be 1 to {IDEMPOTENCY_KEY_MAX} visible ASCII characters"),
            )
        })?;
    let body_hash = sha256_hex(body);
    Ok(Some(Idempotency {
        key_id: principal.id(),
        key: key.to_owned(),
        body_hash,
    }))
}

/// `PUT /api/v1/quotes/{id}/lines`: what the host saves from the editor.
#[derive(Debug, Deserialize, utoipa::ToSchema)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct SaveLines {
    /// The quote's lines, in order.
    pub lines: Vec<QuoteLine>,
    /// The group-key map.
    #[serde(default)]
    pub group_keys: BTreeMap<String, u32>,
}

/// `PUT /api/v1/quotes/{id}/lines`: replaces a Draft quote's lines
/// (`QUOTE_LOCKED` / 409 once sent); with `If-Match`, only while the quote
/// is at a version it names (`CONFLICT` / 412 otherwise); with an
/// `Idempotency-Key`, a repeat answers the first save.
#[utoipa::path(put, path = "/api/v1/quotes/{id}/lines", tag = "quotes", operation_id = "saveQuoteLines",
    params(("id" = String, Path, description = "quote id"), ChangeHeaders),
    request_body = SaveLines,
    responses((status = 200, body = QuoteDto, headers(("ETag" = String, description = "the quote's version, a strong validator: send it back as If-Match with a change, which is then refused (412) should the quote have changed meanwhile"), ("Idempotent-Replayed" = String, description = "`true` when this answers a repeat of an earlier change with the same Idempotency-Key and body: nothing was changed again"))), DraftChangeRefusals),
    security(("api_key" = ["quotes:write"])))]
pub async fn save_lines(
    State(state): State<AppState>,
    Extension(principal): Extension<Principal>,
    PathParam(id): PathParam,
    headers: HeaderMap,
    body: JsonBody,
) -> Result<Response, ApiError> {
    principal.require(Scope::QuotesWrite)?;
    let SaveLines { lines, group_keys } = typed(body.value)?;
    let conditions = conditions(&headers, &principal, &id, &body.bytes)?;
    let saved = state
        .store
        .save_lines(
            principal.tenant_id(),
            &id,
            lines,
            group_keys,
            &conditions,
            &principal.actor(),
        )
        .await?;
    Ok(written(StatusCode::OK, saved))
}

/// `PATCH /api/v1/quotes/{id}`: changes a Draft quote's customer, type,
/// date or expiry (`QUOTE_LOCKED` / 409 once sent); `If-Match` and
/// `Idempotency-Key` as for its lines.
#[utoipa::path(patch, path = "/api/v1/quotes/{id}", tag = "quotes", operation_id = "updateQuoteHeader",
    params(("id" = String, Path, description = "quote id"), ChangeHeaders),
    request_body = QuoteHeaderChangeRequest,
    responses((status = 200, body = QuoteDto, headers(("ETag" = String, description = "the quote's version, a strong validator: send it back as If-Match with a change, which is then refused (412) should the quote have changed meanwhile"), ("Idempotent-Replayed" = String, description = "`true` when this answers a repeat of an earlier change with the same Idempotency-Key and body: nothing was changed again"))), DraftChangeRefusals),
    security(("api_key" = ["quotes:write"])))]
pub async fn update_header(
    State(state): State<AppState>,
    Extension(principal): Extension<Principal>,
    PathParam(id): PathParam,
    headers: HeaderMap,
    body: JsonBody,
) -> Result<Response, ApiError> {
    principal.require(Scope::QuotesWrite)?;
    let change = validate_header_change(&body.value)?;
    let conditions = conditions(&headers, &principal, &id, &body.bytes)?;
    let updated = state
        .store
        .update_quote_header(
            principal.tenant_id(),
            &id,
            &change,
            &conditions,
            &principal.actor(),
        )
        .await?;
    Ok(written(StatusCode::OK, updated))
}

/// OpenAPI: the headers a change to a quote takes, `If-Match` and
/// `Idempotency-Key`.
#[derive(utoipa::IntoParams)]
#[into_params(parameter_in = Header)]
pub struct ChangeHeaders {
    /// Make the change only if the quote is still at a version named here:
    /// the `ETag` of the answer that gave the client its copy (a `GET`, or
    /// the last change), or several, or `*` for any. Otherwise (an empty list
    /// included) nothing is changed and the answer is 412 with the current
    /// `ETag`. Without it the change is made whatever the version.
    #[param(
        rename = "If-Match",
        nullable = false,
        pattern = r#"^(\*|((W/)?"[\x21\x23-\x7E]*"([ \t]*,[ \t]*(W/)?"[\x21\x23-\x7E]*")*)?)$"#
    )]
    pub if_match: Option<String>,
    /// Repeat the change safely: the same key and body answer the first
    /// change (1 to 255 visible ASCII characters), even when its `If-Match`
    /// no longer matches because that change was made.
    #[param(
        rename = "Idempotency-Key",
        nullable = false,
        max_length = 255,
        pattern = r"^[\x21-\x7E]([\x20-\x7E]*[\x21-\x7E])?$"
    )]
    pub idempotency_key: Option<String>,
}

/// OpenAPI: the header Send Quote takes, `If-Match` (as [`ChangeHeaders`]'s).
#[derive(utoipa::IntoParams)]
#[into_params(parameter_in = Header)]
pub struct SendHeaders {
    /// Send only if the quote is still at a version named here (the `ETag`
    /// of the answer that gave the client its copy, several, or `*`);
    /// otherwise nothing is sent and the answer is 412 with the current
    /// `ETag`. Without it the quote is sent whatever its version.
    #[param(
        rename = "If-Match",
        nullable = false,
        pattern = r#"^(\*|((W/)?"[\x21\x23-\x7E]*"([ \t]*,[ \t]*(W/)?"[\x21\x23-\x7E]*")*)?)$"#
    )]
    pub if_match: Option<String>,
}

/// OpenAPI: why Send Quote is refused: [`DraftRefusals`], a 422 for an
/// `If-Match` that is not one, and a 412 for one the quote no longer meets.
pub struct SendRefusals;

impl IntoResponses for SendRefusals {
    fn responses() -> BTreeMap<String, RefOr<ApiResponse>> {
        let mut responses = DraftRefusals::responses();
        responses.insert(
            "422".to_owned(),
            problem_response("an If-Match that is not * nor a list of entity tags").into(),
        );
        responses.insert(
            "412".to_owned(),
            changed_response(
                "CONFLICT: the quote is no longer at a version If-Match names (someone changed \
                 it meanwhile); nothing was sent",
            )
            .into(),
        );
        responses
    }
}

/// OpenAPI: why a change to a quote (sending it, and [`DraftChangeRefusals`])
/// is refused: 403, 404 and 409.
pub struct DraftRefusals;

impl IntoResponses for DraftRefusals {
    fn responses() -> BTreeMap<String, RefOr<ApiResponse>> {
        [
            (
                "403",
                "the key lacks the scope, or the user's role may not change quotes",
            ),
            ("404", "no such quote for this tenant"),
            ("409", "the quote is no longer a Draft"),
        ]
        .into_iter()
        .map(|(status, description)| (status.to_owned(), problem_response(description).into()))
        .collect()
    }
}

/// OpenAPI: why a change to a Draft's header or lines is refused: a body
/// that cannot be read ([`BodyErrors`]), [`DraftRefusals`], a 422, and a
/// 412 for an `If-Match` the quote no longer meets.
pub struct DraftChangeRefusals;

impl IntoResponses for DraftChangeRefusals {
    fn responses() -> BTreeMap<String, RefOr<ApiResponse>> {
        let mut responses = BodyErrors::responses();
        responses.extend(DraftRefusals::responses());
        responses.insert(
            "422".to_owned(),
            problem_response(
                "the request breaks a rule, which includes a customerId that names no customer \
                 of the tenant, and an If-Match that is not * nor a list of entity tags; \
                 errors[] lists each with its path; or the Idempotency-Key was used with \
                 another body or for another request",
            )
            .into(),
        );
        responses.insert(
            "412".to_owned(),
            changed_response(
                "CONFLICT: the quote is no longer at a version If-Match names (someone changed \
                 it meanwhile); nothing was changed",
            )
            .into(),
        );
        responses
    }
}

/// `POST /api/v1/quotes/{id}/send`: Send Quote; a Draft becomes Sent and
/// locked (`QUOTE_LOCKED` / 409 for any other state); with `If-Match`, only
/// while the quote is at a version it names (`CONFLICT` / 412 otherwise), so
/// that what is sent is what the sender saw.
#[utoipa::path(post, path = "/api/v1/quotes/{id}/send", tag = "quotes", operation_id = "sendQuote",
    params(("id" = String, Path, description = "quote id"), SendHeaders),
    responses((status = 200, body = QuoteDto, headers(("ETag" = String, description = "the quote's version, a strong validator: send it back as If-Match with a change, which is then refused (412) should the quote have changed meanwhile"))), SendRefusals),
    security(("api_key" = ["quotes:write"])))]
pub async fn send(
    State(state): State<AppState>,
    Extension(principal): Extension<Principal>,
    PathParam(id): PathParam,
    headers: HeaderMap,
) -> Result<Response, ApiError> {
    principal.require(Scope::QuotesWrite)?;
    let expected = expected(&headers, &id)?;
    let sent = state
        .store
        .send_quote_at(principal.tenant_id(), &id, &expected, &principal.actor())
        .await?;
    Ok(versioned(StatusCode::OK, sent, false))
}
