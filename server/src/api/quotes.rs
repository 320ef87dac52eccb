//! Quotes: list, read, create (with `Idempotency-Key`), change a Draft's
//! header, save the lines of an open quote, send.

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
use toolbridge_store::{Idempotency, Scope};
use utoipa::IntoResponses;
use utoipa::openapi::{RefOr, Response as ApiResponse};

use super::{PageParams, PathParam, Query, page};
use crate::app::AppState;
use crate::auth::Principal;
use crate::digest::sha256_hex;
use crate::error::{ApiError, problem_response};
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

/// `GET /api/v1/quotes/{id}`: the full quote with its lines and totals.
#[utoipa::path(get, path = "/api/v1/quotes/{id}", tag = "quotes", operation_id = "getQuote",
    params(("id" = String, Path, description = "quote id")),
    responses((status = 200, body = QuoteDto), (status = 403, description = "the key lacks the scope", body = Problem, content_type = "application/problem+json"), (status = 404, description = "no such quote for this tenant", body = Problem, content_type = "application/problem+json")),
    security(("api_key" = ["quotes:read"])))]
pub async fn get(
    State(state): State<AppState>,
    Extension(principal): Extension<Principal>,
    PathParam(id): PathParam,
) -> Result<Json<QuoteDto>, ApiError> {
    principal.require(Scope::QuotesRead)?;
    Ok(Json(state.store.quote(principal.tenant_id(), &id).await?))
}

/// `POST /api/v1/quotes`: a new Draft quote. API keys send the REST form
/// (`customerId`, lines with `skuId`); the app's session sends the bridge
/// form of `quotes.create`. Both pass the same validation. An
/// `Idempotency-Key` makes a retry return the first answer instead of a
/// second quote.
#[utoipa::path(post, path = "/api/v1/quotes", tag = "quotes", operation_id = "createQuote",
    request_body(content = RestCreateQuoteRequest, description = "REST form (API keys); the app's session sends BridgeCreateQuoteRequest"),
    params(("Idempotency-Key" = Option<String>, Header, nullable = false, max_length = 255, pattern = r"^[\x21-\x7E]([\x20-\x7E]*[\x21-\x7E])?$", description = "repeat a request safely: the same key and body return the first quote (1 to 255 visible ASCII characters)")),
    responses((status = 201, body = QuoteDto, headers(("Location" = String, description = "the new quote's URL, `/api/v1/quotes/{id}`"), ("Idempotent-Replayed" = String, description = "`true` when this is the first answer again, for a repeated Idempotency-Key")), links(
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
    let mut response = (StatusCode::CREATED, Json(created.quote)).into_response();
    if let Ok(value) = HeaderValue::from_str(&location) {
        response.headers_mut().insert(header::LOCATION, value);
    }
    if created.replayed {
        response
            .headers_mut()
            .insert("idempotent-replayed", HeaderValue::from_static("true"));
    }
    Ok(response)
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
/// (`QUOTE_LOCKED` / 409 once sent).
#[utoipa::path(put, path = "/api/v1/quotes/{id}/lines", tag = "quotes", operation_id = "saveQuoteLines",
    params(("id" = String, Path, description = "quote id")),
    request_body = SaveLines,
    responses((status = 200, body = QuoteDto), DraftChangeRefusals),
    security(("api_key" = ["quotes:write"])))]
pub async fn save_lines(
    State(state): State<AppState>,
    Extension(principal): Extension<Principal>,
    PathParam(id): PathParam,
    body: JsonBody,
) -> Result<Json<QuoteDto>, ApiError> {
    principal.require(Scope::QuotesWrite)?;
    let SaveLines { lines, group_keys } = typed(body.value)?;
    let saved = state
        .store
        .save_lines(
            principal.tenant_id(),
            &id,
            lines,
            group_keys,
            &principal.actor(),
        )
        .await?;
    Ok(Json(saved))
}

/// `PATCH /api/v1/quotes/{id}`: changes a Draft quote's customer, type,
/// date or expiry (`QUOTE_LOCKED` / 409 once sent).
#[utoipa::path(patch, path = "/api/v1/quotes/{id}", tag = "quotes", operation_id = "updateQuoteHeader",
    params(("id" = String, Path, description = "quote id")),
    request_body = QuoteHeaderChangeRequest,
    responses((status = 200, body = QuoteDto), DraftChangeRefusals),
    security(("api_key" = ["quotes:write"])))]
pub async fn update_header(
    State(state): State<AppState>,
    Extension(principal): Extension<Principal>,
    PathParam(id): PathParam,
    body: JsonBody,
) -> Result<Json<QuoteDto>, ApiError> {
    principal.require(Scope::QuotesWrite)?;
    let change = validate_header_change(&body.value)?;
    let updated = state
        .store
        .update_quote_header(principal.tenant_id(), &id, &change, &principal.actor())
        .await?;
    Ok(Json(updated))
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
/// that cannot be read ([`BodyErrors`]), [`DraftRefusals`], and a 422.
pub struct DraftChangeRefusals;

impl IntoResponses for DraftChangeRefusals {
    fn responses() -> BTreeMap<String, RefOr<ApiResponse>> {
        let mut responses = BodyErrors::responses();
        responses.extend(DraftRefusals::responses());
        responses.insert(
            "422".to_owned(),
            problem_response(
                "the request breaks a rule, which includes a customerId that names no customer \
                 of the tenant; errors[] lists each with its path",
            )
            .into(),
        );
        responses
    }
}

/// `POST /api/v1/quotes/{id}/send`: Send Quote; a Draft becomes Sent and
/// locked (`QUOTE_LOCKED` / 409 for any other state).
#[utoipa::path(post, path = "/api/v1/quotes/{id}/send", tag = "quotes", operation_id = "sendQuote",
    params(("id" = String, Path, description = "quote id")),
    responses((status = 200, body = QuoteDto), DraftRefusals),
    security(("api_key" = ["quotes:write"])))]
pub async fn send(
    State(state): State<AppState>,
    Extension(principal): Extension<Principal>,
    PathParam(id): PathParam,
) -> Result<Json<QuoteDto>, ApiError> {
    principal.require(Scope::QuotesWrite)?;
    let sent = state
        .store
        .send_quote(principal.tenant_id(), &id, &principal.actor())
        .await?;
    Ok(Json(sent))
}
