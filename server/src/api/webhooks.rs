//! Webhook endpoints of the tenant: list, create, read, change, delete, rotate the signing
//! secret, and each endpoint's delivery log with redelivery. Every operation needs the
//! `webhooks:write` scope, reads included (a delivery log shows what the tenant's quotes did), or
//! the app's session of an Admin or Super User.
//!
//! A URL is checked twice before it is kept: its form, by the store's rules, and where it points,
//! by [`destination::resolve`]: its host, resolved, must be a public address unless the server
//! runs with `--allow-private-webhooks`. Both answer at `url` in one 422 with the other problems
//! of the body.

use std::collections::BTreeMap;

use axum::extract::rejection::PathRejection;
use axum::extract::{Path, State};
use axum::http::StatusCode;
use axum::response::{IntoResponse, Response};
use axum::{Extension, Json};
use serde::{Deserialize, Serialize};
use toolbridge_protocol::paging::{BridgePagedResult, PageRequest};
use toolbridge_protocol::problem::Problem;
use toolbridge_protocol::webhooks::{WebhookDeliveryStatus, WebhookEventType, checked_event_types};
use toolbridge_protocol::{Error as RuleError, Violation};
use toolbridge_store::{Scope, WebhookEndpointChange, iso_from_unix};
use utoipa::openapi::{RefOr, Response as ApiResponse};
use utoipa::{IntoResponses, ToSchema};

use super::{PageParams, PathParam, Query, page};
use crate::app::AppState;
use crate::auth::Principal;
use crate::error::{ApiError, problem_response};
use crate::json::{BodyErrors, JsonBody, typed};
use crate::webhooks::destination::{self, Destinations};

/// A webhook endpoint of the tenant, as every answer shows it: never with its secret.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, ToSchema)]
#[serde(rename_all = "camelCase")]
pub struct WebhookEndpoint {
    /// Its id.
    pub id: String,
    /// Where deliveries are `POST`ed: an http or https URL.
    pub url: String,
    /// The events it receives.
    pub event_types: Vec<WebhookEventType>,
    /// Whether events are delivered to it; while it is not, no new deliveries are made for it
    /// and those pending wait.
    pub enabled: bool,
    /// When it was created: RFC 3339, UTC.
    #[schema(format = DateTime)]
    pub created_at: String,
    /// When it last changed (a rotated secret included): RFC 3339, UTC.
    #[schema(format = DateTime)]
    pub updated_at: String,
}

impl From<toolbridge_store::WebhookEndpoint> for WebhookEndpoint {
    fn from(endpoint: toolbridge_store::WebhookEndpoint) -> Self {
        Self {
            id: endpoint.id,
            url: endpoint.url,
            event_types: endpoint.event_types,
            enabled: endpoint.enabled,
            created_at: endpoint.created_at,
            updated_at: endpoint.updated_at,
        }
    }
}

/// An endpoint with its signing secret: the answer to creating it and to rotating its secret,
/// the only two times the secret is shown.
#[derive(Clone, PartialEq, Eq, Serialize, ToSchema)]
#[serde(rename_all = "camelCase")]
pub struct WebhookEndpointWithSecret {
    /// The endpoint.
    pub endpoint: WebhookEndpoint,
    /// `whsec_` and 64 hex digits: the key of each delivery's HMAC-SHA256 signature
    /// (`Toolbridge-Signature`). Keep it now: it is not shown again.
    #[schema(pattern = "^whsec_[0-9a-f]{64}$")]
    pub secret: String,
}

impl std::fmt::Debug for WebhookEndpointWithSecret {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("WebhookEndpointWithSecret")
            .field("endpoint", &self.endpoint)
            .field("secret", &"<redacted>")
            .finish()
    }
}

impl From<toolbridge_store::WebhookEndpointWithSecret> for WebhookEndpointWithSecret {
    fn from(created: toolbridge_store::WebhookEndpointWithSecret) -> Self {
        Self {
            endpoint: created.endpoint.into(),
            secret: created.secret,
        }
    }
}

/// One delivery of an event to an endpoint, as its log shows it.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, ToSchema)]
#[serde(rename_all = "camelCase")]
pub struct WebhookDelivery {
    /// Its id.
    pub id: String,
    /// The endpoint it goes to.
    pub endpoint_id: String,
    /// The event's id (`evt_…`), the `Toolbridge-Event-Id` header: the same on every attempt and
    /// on a redelivery.
    pub event_id: String,
    /// What happened.
    pub event_type: WebhookEventType,
    /// Where it stands.
    pub status: WebhookDeliveryStatus,
    /// Attempts made so far.
    pub attempts: u32,
    /// The HTTP status the last attempt got, if it got an answer.
    pub last_status: Option<u16>,
    /// Why the last attempt failed, where words say more than a status (a timeout, a refused
    /// connection).
    pub last_error: Option<String>,
    /// When a pending delivery is due next (RFC 3339, UTC); null once it is delivered or failed.
    #[schema(format = DateTime)]
    pub next_attempt_at: Option<String>,
    /// When it was made: RFC 3339, UTC.
    #[schema(format = DateTime)]
    pub created_at: String,
    /// When it was delivered (RFC 3339, UTC); null until then.
    #[schema(format = DateTime)]
    pub delivered_at: Option<String>,
}

impl From<toolbridge_store::WebhookDelivery> for WebhookDelivery {
    fn from(delivery: toolbridge_store::WebhookDelivery) -> Self {
        Self {
            id: delivery.id,
            endpoint_id: delivery.endpoint_id,
            event_id: delivery.event_id,
            event_type: delivery.event_type,
            status: delivery.status,
            attempts: delivery.attempts,
            last_status: delivery.last_status,
            last_error: delivery.last_error,
            next_attempt_at: delivery.next_attempt_at.map(iso_from_unix),
            created_at: iso_from_unix(delivery.created_at),
            delivered_at: delivery.delivered_at.map(iso_from_unix),
        }
    }
}

/// `POST /api/v1/webhook-endpoints`: a new endpoint.
#[derive(Debug, Deserialize, ToSchema)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct NewWebhookEndpoint {
    /// Where deliveries are `POST`ed: `http://` or `https://`, a host and an optional port, at
    /// most 2048 characters, no user name or password. Its host must resolve to public addresses
    /// only (not loopback, private or link-local), unless the server runs with
    /// `--allow-private-webhooks`.
    #[schema(max_length = 2048)]
    pub url: String,
    /// The events it receives: at least one, each once.
    #[schema(value_type = Vec<WebhookEventType>, min_items = 1)]
    pub event_types: Vec<String>,
    /// Whether events are delivered to it from the start; true when omitted.
    #[serde(default = "enabled_by_default")]
    #[schema(default = true)]
    pub enabled: bool,
}

/// A new endpoint is enabled unless it says otherwise.
fn enabled_by_default() -> bool {
    true
}

/// `PATCH /api/v1/webhook-endpoints/{id}`: at least one field; each given replaces the
/// endpoint's, checked as a new endpoint's is; `null` is refused.
#[derive(Debug, Deserialize, ToSchema)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct WebhookEndpointUpdate {
    /// A new URL, checked as a new endpoint's is.
    #[schema(nullable = false, max_length = 2048)]
    pub url: Option<String>,
    /// New event types, which replace the old ones: at least one, each once.
    #[schema(nullable = false, value_type = Option<Vec<WebhookEventType>>, min_items = 1)]
    pub event_types: Option<Vec<String>>,
    /// Enabled, or disabled.
    #[schema(nullable = false)]
    pub enabled: Option<bool>,
}

/// The problems of a URL and of event types, each given: the URL's form and where it points
/// (resolved, as `destinations` allows), then each event type. One violation per problem.
async fn violations(
    url: Option<&str>,
    event_types: Option<&[String]>,
    destinations: Destinations,
) -> Vec<Violation> {
    let mut violations = Vec::new();
    if let Some(url) = url {
        if let Err(refused) = destination::resolve(url, destinations).await {
            violations.push(Violation::new("url", refused.to_string()));
        }
    }
    if let Some(Err(problems)) = event_types.map(checked_event_types) {
        violations.extend(problems);
    }
    violations
}

/// `INVALID_PARAMS` with `violations`, unless there are none.
fn refuse(violations: Vec<Violation>) -> Result<(), ApiError> {
    if violations.is_empty() {
        Ok(())
    } else {
        Err(RuleError::InvalidParams(violations).into())
    }
}

/// OpenAPI: the 403 and 404 of every operation on one endpoint.
struct EndpointRefusals;

impl IntoResponses for EndpointRefusals {
    fn responses() -> BTreeMap<String, RefOr<ApiResponse>> {
        [
            ("403", FORBIDDEN),
            ("404", "no such webhook endpoint for this tenant"),
        ]
        .into_iter()
        .map(|(status, description)| (status.to_owned(), problem_response(description).into()))
        .collect()
    }
}

/// OpenAPI: why a body that names an endpoint's URL or event types is refused: it cannot be read
/// ([`BodyErrors`]), or it breaks a rule (422).
struct EndpointBodyRefusals;

impl IntoResponses for EndpointBodyRefusals {
    fn responses() -> BTreeMap<String, RefOr<ApiResponse>> {
        let mut responses = BodyErrors::responses();
        responses.insert(
            "422".to_owned(),
            problem_response(
                "the body breaks a rule: errors[] names each problem with its path. A URL that is \
                 not http(s), whose host does not resolve, or that resolves to a loopback, private \
                 or link-local address (unless the server allows those) is refused at `url`; an \
                 unknown or repeated event type at `eventTypes[i]`",
            )
            .into(),
        );
        responses
    }
}

/// Why a caller may not manage webhooks.
const FORBIDDEN: &str =
    "the key lacks the `webhooks:write` scope, or the user is not an Admin or Super User";

/// `GET /api/v1/webhook-endpoints`: the tenant's endpoints, oldest first.
#[utoipa::path(get, path = "/api/v1/webhook-endpoints", tag = "webhooks", operation_id = "listWebhookEndpoints",
    params(PageParams),
    responses((status = 200, body = BridgePagedResult<WebhookEndpoint>, links(
        ("getWebhookEndpoint" = (operation_id = "getWebhookEndpoint", parameters(("id" = "$response.body#/items/0/id")), description = "the first endpoint listed")),
        ("listWebhookDeliveries" = (operation_id = "listWebhookDeliveries", parameters(("id" = "$response.body#/items/0/id")), description = "the first endpoint's delivery log")),
    )), (status = 403, description = FORBIDDEN, body = Problem, content_type = "application/problem+json"), (status = 422, description = "`page` or `pageSize` is out of range; errors[] names each", body = Problem, content_type = "application/problem+json")),
    security(("api_key" = ["webhooks:write"])))]
pub async fn list(
    State(state): State<AppState>,
    Extension(principal): Extension<Principal>,
    query: Query,
) -> Result<Json<BridgePagedResult<WebhookEndpoint>>, ApiError> {
    principal.require(Scope::WebhooksWrite)?;
    let paging: PageRequest = page(&query)?;
    let endpoints = state.store.webhook_endpoints(principal.tenant_id()).await?;
    let total = u64::try_from(endpoints.len()).unwrap_or(u64::MAX);
    let items = endpoints
        .into_iter()
        .skip(usize::try_from(paging.offset()).unwrap_or(usize::MAX))
        .take(usize::try_from(paging.page_size()).unwrap_or(usize::MAX))
        .map(WebhookEndpoint::from)
        .collect();
    Ok(Json(paging.envelope(items, total)))
}

/// `POST /api/v1/webhook-endpoints`: a new endpoint, with its signing secret (shown this once).
#[utoipa::path(post, path = "/api/v1/webhook-endpoints", tag = "webhooks", operation_id = "createWebhookEndpoint",
    request_body = NewWebhookEndpoint,
    responses((status = 201, body = WebhookEndpointWithSecret, links(
        ("getWebhookEndpoint" = (operation_id = "getWebhookEndpoint", parameters(("id" = "$response.body#/endpoint/id")), description = "the new endpoint")),
        ("updateWebhookEndpoint" = (operation_id = "updateWebhookEndpoint", parameters(("id" = "$response.body#/endpoint/id")), description = "change the new endpoint")),
        ("rotateWebhookSecret" = (operation_id = "rotateWebhookSecret", parameters(("id" = "$response.body#/endpoint/id")), description = "give the new endpoint another secret")),
        ("listWebhookDeliveries" = (operation_id = "listWebhookDeliveries", parameters(("id" = "$response.body#/endpoint/id")), description = "the new endpoint's delivery log")),
        ("deleteWebhookEndpoint" = (operation_id = "deleteWebhookEndpoint", parameters(("id" = "$response.body#/endpoint/id")), description = "delete the new endpoint")),
    )), EndpointBodyRefusals, (status = 403, description = FORBIDDEN, body = Problem, content_type = "application/problem+json")),
    security(("api_key" = ["webhooks:write"])))]
pub async fn create(
    State(state): State<AppState>,
    Extension(principal): Extension<Principal>,
    body: JsonBody,
) -> Result<Response, ApiError> {
    principal.require(Scope::WebhooksWrite)?;
    let NewWebhookEndpoint {
        url,
        event_types,
        enabled,
    } = typed(body.value)?;
    refuse(violations(Some(&url), Some(&event_types), state.webhook_destinations).await)?;
    let created = state
        .store
        .create_webhook_endpoint(
            principal.tenant_id(),
            &toolbridge_store::NewWebhookEndpoint {
                url,
                event_types,
                enabled,
            },
        )
        .await?;
    Ok((
        StatusCode::CREATED,
        Json(WebhookEndpointWithSecret::from(created)),
    )
        .into_response())
}

/// `GET /api/v1/webhook-endpoints/{id}`: one endpoint.
#[utoipa::path(get, path = "/api/v1/webhook-endpoints/{id}", tag = "webhooks", operation_id = "getWebhookEndpoint",
    params(("id" = String, Path, description = "webhook endpoint id")),
    responses((status = 200, body = WebhookEndpoint), EndpointRefusals),
    security(("api_key" = ["webhooks:write"])))]
pub async fn get(
    State(state): State<AppState>,
    Extension(principal): Extension<Principal>,
    PathParam(id): PathParam,
) -> Result<Json<WebhookEndpoint>, ApiError> {
    principal.require(Scope::WebhooksWrite)?;
    let endpoint = state
        .store
        .webhook_endpoint(principal.tenant_id(), &id)
        .await?;
    Ok(Json(endpoint.into()))
}

/// `PATCH /api/v1/webhook-endpoints/{id}`: changes an endpoint's URL, event types or enabled
/// flag; the answer is the endpoint as changed. A new URL is checked as a new endpoint's is. Deliveries already made keep their payload; a
/// new URL applies to their next attempts.
#[utoipa::path(patch, path = "/api/v1/webhook-endpoints/{id}", tag = "webhooks", operation_id = "updateWebhookEndpoint",
    params(("id" = String, Path, description = "webhook endpoint id")),
    request_body = WebhookEndpointUpdate,
    responses((status = 200, body = WebhookEndpoint), EndpointBodyRefusals, EndpointRefusals),
    security(("api_key" = ["webhooks:write"])))]
pub async fn update(
    State(state): State<AppState>,
    Extension(principal): Extension<Principal>,
    PathParam(id): PathParam,
    body: JsonBody,
) -> Result<Json<WebhookEndpoint>, ApiError> {
    principal.require(Scope::WebhooksWrite)?;
    // `null` is no value: leave a field out to keep it.
    let nulls: Vec<Violation> = body
        .value
        .as_object()
        .into_iter()
        .flatten()
        .filter(|(_, value)| value.is_null())
        .map(|(name, _)| Violation::new(name, "must not be null; leave it out to keep it"))
        .collect();
    refuse(nulls)?;
    let WebhookEndpointUpdate {
        url,
        event_types,
        enabled,
    } = typed(body.value)?;
    if url.is_none() && event_types.is_none() && enabled.is_none() {
        return Err(RuleError::invalid(
            "",
            "names no field to change; give any of url, eventTypes, enabled",
        )
        .into());
    }
    // Where a URL points is checked when it changes (so an unknown endpoint is a 404 first).
    let new_url = match url.as_deref() {
        Some(url) => {
            let endpoint = state
                .store
                .webhook_endpoint(principal.tenant_id(), &id)
                .await?;
            (endpoint.url != url).then_some(url)
        }
        None => None,
    };
    refuse(violations(new_url, event_types.as_deref(), state.webhook_destinations).await)?;
    let change = WebhookEndpointChange {
        url,
        event_types,
        enabled,
    };
    let endpoint = state
        .store
        .update_webhook_endpoint(principal.tenant_id(), &id, &change)
        .await?;
    Ok(Json(endpoint.into()))
}

/// `DELETE /api/v1/webhook-endpoints/{id}`: removes an endpoint with its delivery log; what it
/// had pending is not sent.
#[utoipa::path(delete, path = "/api/v1/webhook-endpoints/{id}", tag = "webhooks", operation_id = "deleteWebhookEndpoint",
    params(("id" = String, Path, description = "webhook endpoint id")),
    responses((status = 204, description = "deleted"), EndpointRefusals),
    security(("api_key" = ["webhooks:write"])))]
pub async fn delete(
    State(state): State<AppState>,
    Extension(principal): Extension<Principal>,
    PathParam(id): PathParam,
) -> Result<StatusCode, ApiError> {
    principal.require(Scope::WebhooksWrite)?;
    state
        .store
        .delete_webhook_endpoint(principal.tenant_id(), &id)
        .await?;
    Ok(StatusCode::NO_CONTENT)
}

/// `POST /api/v1/webhook-endpoints/{id}/rotate-secret`: a new signing secret, shown this once;
/// the old one signs nothing from now on.
#[utoipa::path(post, path = "/api/v1/webhook-endpoints/{id}/rotate-secret", tag = "webhooks", operation_id = "rotateWebhookSecret",
    params(("id" = String, Path, description = "webhook endpoint id")),
    responses((status = 200, body = WebhookEndpointWithSecret), EndpointRefusals),
    security(("api_key" = ["webhooks:write"])))]
pub async fn rotate_secret(
    State(state): State<AppState>,
    Extension(principal): Extension<Principal>,
    PathParam(id): PathParam,
) -> Result<Json<WebhookEndpointWithSecret>, ApiError> {
    principal.require(Scope::WebhooksWrite)?;
    let rotated = state
        .store
        .rotate_webhook_secret(principal.tenant_id(), &id)
        .await?;
    Ok(Json(rotated.into()))
}

/// `GET /api/v1/webhook-endpoints/{id}/deliveries`: the endpoint's delivery log, newest first.
#[utoipa::path(get, path = "/api/v1/webhook-endpoints/{id}/deliveries", tag = "webhooks", operation_id = "listWebhookDeliveries",
    params(("id" = String, Path, description = "webhook endpoint id"), PageParams),
    responses((status = 200, body = BridgePagedResult<WebhookDelivery>, links(
        ("redeliverWebhook" = (operation_id = "redeliverWebhook", parameters(("id" = "$response.body#/items/0/endpointId"), ("deliveryId" = "$response.body#/items/0/id")), description = "send the newest delivery again")),
    )), EndpointRefusals, (status = 422, description = "`page` or `pageSize` is out of range; errors[] names each", body = Problem, content_type = "application/problem+json")),
    security(("api_key" = ["webhooks:write"])))]
pub async fn deliveries(
    State(state): State<AppState>,
    Extension(principal): Extension<Principal>,
    PathParam(id): PathParam,
    query: Query,
) -> Result<Json<BridgePagedResult<WebhookDelivery>>, ApiError> {
    principal.require(Scope::WebhooksWrite)?;
    let log = state
        .store
        .deliveries(principal.tenant_id(), &id, page(&query)?)
        .await?;
    Ok(Json(BridgePagedResult {
        items: log.items.into_iter().map(WebhookDelivery::from).collect(),
        total_count: log.total_count,
        page: log.page,
        page_size: log.page_size,
    }))
}

/// `POST /api/v1/webhook-endpoints/{id}/deliveries/{deliveryId}/redeliver`: sends a delivery
/// again as a new one, pending and due now, with the same event id and payload; the old one
/// stays in the log as it is.
#[utoipa::path(post, path = "/api/v1/webhook-endpoints/{id}/deliveries/{deliveryId}/redeliver", tag = "webhooks", operation_id = "redeliverWebhook",
    params(("id" = String, Path, description = "webhook endpoint id"), ("deliveryId" = String, Path, description = "id of a delivery in the endpoint's log")),
    responses((status = 201, body = WebhookDelivery), (status = 403, description = FORBIDDEN, body = Problem, content_type = "application/problem+json"), (status = 404, description = "no such webhook endpoint for this tenant, or no such delivery in its log", body = Problem, content_type = "application/problem+json")),
    security(("api_key" = ["webhooks:write"])))]
pub async fn redeliver(
    State(state): State<AppState>,
    Extension(principal): Extension<Principal>,
    path: Result<Path<(String, String)>, PathRejection>,
) -> Result<Response, ApiError> {
    principal.require(Scope::WebhooksWrite)?;
    let Path((id, delivery_id)) = path.map_err(|rejection| {
        ApiError::not_found(format!(
            "nothing has the ids in this URL ({})",
            rejection.body_text()
        ))
    })?;
    let delivery = state
        .store
        .redeliver(principal.tenant_id(), &id, &delivery_id)
        .await?;
    Ok((StatusCode::CREATED, Json(WebhookDelivery::from(delivery))).into_response())
}
