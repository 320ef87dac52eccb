//! `/api/settings/keys`: the tenant's API keys: list, create (the token is in
//! that answer only), revoke.

use axum::Json;
use axum::extract::State;
use axum::http::{HeaderMap, StatusCode};
use axum::response::{IntoResponse, Response};
use serde::{Deserialize, Serialize};
use toolbridge_protocol::problem::Problem;
use toolbridge_protocol::{Error as RuleError, Violation};
use toolbridge_store::{ApiKey, RateLimit, Scope, new_api_key_problems};

use super::{AdminRefusals, administrator};
use crate::app::AppState;
use crate::error::ApiError;
use crate::extract::PathParam;
use crate::json::{BodyErrors, JsonBody, typed};

/// A key as the settings page shows it (never its secret).
#[derive(Debug, Clone, Serialize, utoipa::ToSchema)]
#[serde(rename_all = "camelCase")]
pub struct KeyListing {
    /// The key's id.
    pub id: String,
    /// What the key is for.
    pub name: String,
    /// The token's public start, to recognise it by.
    pub prefix: String,
    /// What the key may do.
    pub scopes: Vec<String>,
    /// Its rate limit.
    pub rate_limit: RateLimitBody,
    /// When it was made (ISO 8601, UTC).
    pub created_at: String,
    /// When it was revoked, if it was.
    pub revoked_at: Option<String>,
}

/// Requests allowed per window.
#[derive(Debug, Clone, Copy, Serialize, Deserialize, utoipa::ToSchema)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct RateLimitBody {
    /// Requests per window, at least 1.
    #[schema(minimum = 1)]
    pub requests: u32,
    /// The window, in seconds, at least 1.
    #[schema(minimum = 1)]
    pub window_secs: u32,
}

/// `POST /api/settings/keys` body.
#[derive(Debug, Deserialize, utoipa::ToSchema)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct NewKey {
    /// What the key is for: 1 to 100 characters, not blank
    /// (`toolbridge_store::KEY_NAME_MAX_CHARS`).
    #[schema(
        max_length = 100,
        pattern = r"[^\t-\r \u0085\u00a0\u1680\u2000-\u200a\u2028\u2029\u202f\u205f\u3000]"
    )]
    pub name: String,
    /// Its scopes, at least one: `customers:read`, `products:read`,
    /// `quotes:read`, `quotes:write`, `jobs:read`, `catalog:read`,
    /// `webhooks:write`.
    #[schema(min_items = 1)]
    pub scopes: Vec<String>,
    /// Its rate limit.
    pub rate_limit: RateLimitBody,
}

/// A new key and its token, shown this once.
#[derive(Debug, Serialize, utoipa::ToSchema)]
pub struct CreatedKey {
    /// The key.
    pub key: KeyListing,
    /// The whole token for `Authorization: Bearer`; only its hash is kept.
    pub token: String,
}

impl From<ApiKey> for KeyListing {
    fn from(key: ApiKey) -> Self {
        Self {
            id: key.id,
            name: key.name,
            prefix: key.prefix,
            scopes: key
                .scopes
                .iter()
                .map(|scope| scope.as_str().to_owned())
                .collect(),
            rate_limit: RateLimitBody {
                requests: key.rate_limit.requests,
                window_secs: key.rate_limit.window_secs,
            },
            created_at: key.created_at,
            revoked_at: key.revoked_at,
        }
    }
}

/// `GET /api/settings/keys`: the tenant's keys, revoked ones included.
#[utoipa::path(get, path = "/api/settings/keys", tag = "settings", operation_id = "listApiKeys",
    responses((status = 200, body = [KeyListing]), AdminRefusals),
    security(("session" = [])))]
pub async fn list(
    State(state): State<AppState>,
    headers: HeaderMap,
) -> Result<Json<Vec<KeyListing>>, ApiError> {
    let user = administrator(&state, &headers).await?;
    let keys = state.store.list_api_keys(&user.tenant_id).await?;
    Ok(Json(keys.into_iter().map(KeyListing::from).collect()))
}

/// `POST /api/settings/keys`: a new key of the tenant.
#[utoipa::path(post, path = "/api/settings/keys", tag = "settings", operation_id = "createApiKey", request_body = NewKey,
    responses((status = 201, body = CreatedKey), BodyErrors, AdminRefusals, (status = 422, description = "the request breaks a rule; errors[] lists each with its path", body = Problem, content_type = "application/problem+json")),
    security(("session" = [])))]
pub async fn create(
    State(state): State<AppState>,
    headers: HeaderMap,
    body: JsonBody,
) -> Result<Response, ApiError> {
    let user = administrator(&state, &headers).await?;
    let request: NewKey = typed(body.value)?;
    let mut unknown = Vec::new();
    let mut scopes = Vec::new();
    for (index, scope) in request.scopes.iter().enumerate() {
        match Scope::parse(scope.trim()) {
            Some(scope) => scopes.push(scope),
            None => unknown.push(Violation::new(
                format!("scopes[{index}]"),
                format!(
                    "{scope:?} is not a scope; the scopes are {}",
                    Scope::ALL.map(Scope::as_str).join(", ")
                ),
            )),
        }
    }
    let limit = RateLimit {
        requests: request.rate_limit.requests,
        window_secs: request.rate_limit.window_secs,
    };
    if !unknown.is_empty() {
        // Every problem at once: the unknown scopes (which say more than
        // "no scope" would) and whatever else the store would refuse.
        let mut violations = new_api_key_problems(&request.name, &scopes, limit);
        violations.retain(|violation| violation.path != "scopes");
        violations.extend(unknown);
        return Err(ApiError::Rule(RuleError::InvalidParams(violations)));
    }
    let created = state
        .store
        .create_api_key(&user.tenant_id, &request.name, &scopes, limit)
        .await?;
    let answer = CreatedKey {
        key: created.key.into(),
        token: created.token,
    };
    Ok((StatusCode::CREATED, Json(answer)).into_response())
}

/// `DELETE /api/settings/keys/{id}`: revokes the key at once.
#[utoipa::path(delete, path = "/api/settings/keys/{id}", tag = "settings", operation_id = "revokeApiKey",
    params(("id" = String, Path, description = "key id")),
    responses((status = 204), AdminRefusals, (status = 404, description = "no such key in this tenant", body = Problem, content_type = "application/problem+json")),
    security(("session" = [])))]
pub async fn revoke(
    State(state): State<AppState>,
    headers: HeaderMap,
    PathParam(id): PathParam,
) -> Result<StatusCode, ApiError> {
    let user = administrator(&state, &headers).await?;
    if state.store.revoke_api_key(&user.tenant_id, &id).await? {
        Ok(StatusCode::NO_CONTENT)
    } else {
        Err(ApiError::not_found(format!(
            "no API key {id} in this tenant"
        )))
    }
}
