//! Who and what the tenant works with: the signed-in user, customers, jobs.

use axum::extract::State;
use axum::{Extension, Json};
use toolbridge_protocol::context::BridgeContextDto;
use toolbridge_protocol::customer::BridgeCustomerDto;
use toolbridge_protocol::job::BridgeJobDto;
use toolbridge_protocol::paging::BridgePagedResult;
use toolbridge_protocol::problem::Problem;
use toolbridge_store::Scope;

use super::{PageParams, Query, page};
use crate::app::AppState;
use crate::auth::Principal;
use crate::error::ApiError;

/// `GET /api/v1/me`: the signed-in user (session only).
#[utoipa::path(get, path = "/api/v1/me", tag = "session",
    responses((status = 200, body = BridgeContextDto), (status = 403, description = "an API key, which has no user; or a session request from another origin", body = Problem, content_type = "application/problem+json")),
    security(("session" = [])))]
pub async fn me(
    Extension(principal): Extension<Principal>,
) -> Result<Json<BridgeContextDto>, ApiError> {
    Ok(Json(principal.user()?.context()))
}

/// `GET /api/v1/customers`: the tenant's customers, paged.
#[utoipa::path(get, path = "/api/v1/customers", tag = "customers",
    params(PageParams),
    responses((status = 200, body = BridgePagedResult<BridgeCustomerDto>), (status = 403, description = "the key lacks the scope", body = Problem, content_type = "application/problem+json"), (status = 422, description = "`page` or `pageSize` is out of range; errors[] names each", body = Problem, content_type = "application/problem+json")),
    security(("api_key" = ["customers:read"])))]
pub async fn customers(
    State(state): State<AppState>,
    Extension(principal): Extension<Principal>,
    query: Query,
) -> Result<Json<BridgePagedResult<BridgeCustomerDto>>, ApiError> {
    principal.require(Scope::CustomersRead)?;
    Ok(Json(
        state
            .store
            .customers(principal.tenant_id(), page(&query)?)
            .await?,
    ))
}

/// `GET /api/v1/jobs`: the tenant's active jobs, paged.
#[utoipa::path(get, path = "/api/v1/jobs", tag = "jobs",
    params(PageParams),
    responses((status = 200, body = BridgePagedResult<BridgeJobDto>), (status = 403, description = "the key lacks the scope", body = Problem, content_type = "application/problem+json"), (status = 422, description = "`page` or `pageSize` is out of range; errors[] names each", body = Problem, content_type = "application/problem+json")),
    security(("api_key" = ["jobs:read"])))]
pub async fn jobs(
    State(state): State<AppState>,
    Extension(principal): Extension<Principal>,
    query: Query,
) -> Result<Json<BridgePagedResult<BridgeJobDto>>, ApiError> {
    principal.require(Scope::JobsRead)?;
    Ok(Json(
        state
            .store
            .jobs(principal.tenant_id(), page(&query)?)
            .await?,
    ))
}
