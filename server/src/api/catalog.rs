//! The catalog: products, task templates, cost items, and the index the
//! host validates `quotes.addLines` against.

use axum::extract::State;
use axum::http::HeaderMap;
use axum::response::Response;
use axum::{Extension, Json};
use toolbridge_protocol::catalog::{
    BridgeCostItemDto, BridgeProductDto, BridgeTaskTemplateDto, CatalogIndex,
};
use toolbridge_protocol::paging::BridgePagedResult;
use toolbridge_protocol::problem::Problem;
use toolbridge_store::Scope;

use super::{PageParams, Query, list, page};
use crate::app::AppState;
use crate::auth::Principal;
use crate::error::ApiError;

/// `GET /api/v1/products`: the active catalog SKUs, paged.
#[utoipa::path(get, path = "/api/v1/products", tag = "catalog",
    params(PageParams),
    responses((status = 200, body = BridgePagedResult<BridgeProductDto>), (status = 403, description = "the key lacks the scope", body = Problem, content_type = "application/problem+json"), (status = 422, description = "`page` or `pageSize` is out of range; errors[] names each", body = Problem, content_type = "application/problem+json")),
    security(("api_key" = ["products:read"])))]
pub async fn products(
    State(state): State<AppState>,
    Extension(principal): Extension<Principal>,
    query: Query,
) -> Result<Json<BridgePagedResult<BridgeProductDto>>, ApiError> {
    principal.require(Scope::ProductsRead)?;
    Ok(Json(
        state
            .store
            .products(principal.tenant_id(), page(&query)?)
            .await?,
    ))
}

/// `GET /api/v1/task-templates`: active task templates, paged, or all those
/// whose code is in `codes=A,B` (paging ignored).
#[utoipa::path(get, path = "/api/v1/task-templates", tag = "catalog",
    params(("codes" = Option<String>, Query, description = "comma-separated stable codes; when given, every active row with one of them, on one page: `page` and `pageSize` are then ignored, though still refused when out of range"), PageParams),
    responses((status = 200, body = BridgePagedResult<BridgeTaskTemplateDto>), (status = 403, description = "the key lacks the scope", body = Problem, content_type = "application/problem+json"), (status = 422, description = "`page` or `pageSize` is out of range; errors[] names each", body = Problem, content_type = "application/problem+json")),
    security(("api_key" = ["catalog:read"])))]
pub async fn task_templates(
    State(state): State<AppState>,
    Extension(principal): Extension<Principal>,
    query: Query,
) -> Result<Json<BridgePagedResult<BridgeTaskTemplateDto>>, ApiError> {
    principal.require(Scope::CatalogRead)?;
    Ok(Json(
        state
            .store
            .task_templates(principal.tenant_id(), &list(&query)?)
            .await?,
    ))
}

/// `GET /api/v1/cost-items`: active cost-of-business items, like task templates.
#[utoipa::path(get, path = "/api/v1/cost-items", tag = "catalog",
    params(("codes" = Option<String>, Query, description = "comma-separated stable codes; when given, every active row with one of them, on one page: `page` and `pageSize` are then ignored, though still refused when out of range"), PageParams),
    responses((status = 200, body = BridgePagedResult<BridgeCostItemDto>), (status = 403, description = "the key lacks the scope", body = Problem, content_type = "application/problem+json"), (status = 422, description = "`page` or `pageSize` is out of range; errors[] names each", body = Problem, content_type = "application/problem+json")),
    security(("api_key" = ["catalog:read"])))]
pub async fn cost_items(
    State(state): State<AppState>,
    Extension(principal): Extension<Principal>,
    query: Query,
) -> Result<Json<BridgePagedResult<BridgeCostItemDto>>, ApiError> {
    principal.require(Scope::CatalogRead)?;
    Ok(Json(
        state
            .store
            .cost_items(principal.tenant_id(), &list(&query)?)
            .await?,
    ))
}

/// `GET /api/v1/catalog/index`: the active ids a quote's lines may link to,
/// with each product's task sequence. Answers `304` to a matching
/// `If-None-Match`.
#[utoipa::path(get, path = "/api/v1/catalog/index", tag = "catalog",
    params(("If-None-Match" = Option<String>, Header, nullable = false, description = "the ETag of a copy you hold: 304 while it is current")),
    responses((status = 200, body = CatalogIndex, headers(("ETag" = String, description = "the index's version, with `-br` or `-gz` after it when the answer is compressed (each coding is its own representation)"), ("Cache-Control" = String, description = "`private, no-cache`: keep a copy, but ask with If-None-Match before using it"), ("Vary" = String, description = "`accept-encoding`"))), (status = 304, description = "unchanged since the ETag sent", headers(("ETag" = String, description = "the index's version, with the coding's suffix"), ("Cache-Control" = String))), (status = 403, description = "the key lacks the scope", body = Problem, content_type = "application/problem+json")),
    security(("api_key" = ["catalog:read"])))]
pub async fn index(
    State(state): State<AppState>,
    Extension(principal): Extension<Principal>,
    headers: HeaderMap,
) -> Result<Response, ApiError> {
    principal.require(Scope::CatalogRead)?;
    let tenant = principal.tenant_id();
    let kept = state.store.catalog_index(tenant).await?;
    let (index, version) = &*kept;
    // Written and compressed once per version of the tenant's index (7.4 MB of JSON for 100 000
    // products), not on each request; each coding with its own `ETag`.
    let document = state
        .assets
        .document(
            &format!("catalog-index/{tenant}"),
            version,
            "private, no-cache",
            || serde_json::to_vec(index),
        )
        .map_err(|error| ApiError::internal("writing the catalog index", error))?;
    Ok(document.response(&headers, "application/json").await)
}
