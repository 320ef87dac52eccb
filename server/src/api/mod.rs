//! The REST API v1 (`/api/v1`): thin handlers over the store.

use std::collections::HashMap;
use std::hash::BuildHasher;

use axum::Router;
use axum::middleware;
use axum::routing::{get, post, put};
use toolbridge_protocol::paging::{ListRequest, PageRequest};

use crate::app::AppState;
use crate::auth;
use crate::error::ApiError;
use crate::openapi;

pub use crate::extract::{PathParam, Query};

pub mod catalog;
pub mod directory;
pub mod quotes;
pub mod webhooks;

/// The `/api/v1` routes. Everything but the OpenAPI document needs a
/// caller: an API key or the app's session.
pub fn routes(state: AppState) -> Router<AppState> {
    Router::new()
        .route("/me", get(directory::me))
        .route("/customers", get(directory::customers))
        .route("/jobs", get(directory::jobs))
        .route("/products", get(catalog::products))
        .route("/task-templates", get(catalog::task_templates))
        .route("/cost-items", get(catalog::cost_items))
        .route("/catalog/index", get(catalog::index))
        .route("/quotes", get(quotes::list).post(quotes::create))
        .route(
            "/quotes/{id}",
            get(quotes::get).patch(quotes::update_header),
        )
        .route("/quotes/{id}/lines", put(quotes::save_lines))
        .route("/quotes/{id}/send", post(quotes::send))
        .route(
            "/webhook-endpoints",
            get(webhooks::list).post(webhooks::create),
        )
        .route(
            "/webhook-endpoints/{id}",
            get(webhooks::get)
                .patch(webhooks::update)
                .delete(webhooks::delete),
        )
        .route(
            "/webhook-endpoints/{id}/rotate-secret",
            post(webhooks::rotate_secret),
        )
        .route(
            "/webhook-endpoints/{id}/deliveries",
            get(webhooks::deliveries),
        )
        .route(
            "/webhook-endpoints/{id}/deliveries/{deliveryId}/redeliver",
            post(webhooks::redeliver),
        )
        .route("/tools/{slug}/token", post(crate::identity::token))
        .route("/tools/{slug}/fetch", post(crate::fetch::fetch))
        .route_layer(middleware::from_fn_with_state(state, auth::middleware))
        .route("/openapi.json", get(openapi::document))
}

/// OpenAPI: the paging parameters every list takes, with the bounds
/// [`PageRequest::from_query`] enforces (`toolbridge_protocol::limits`;
/// a test holds the two together).
#[derive(Debug, utoipa::IntoParams)]
#[into_params(parameter_in = Query, rename_all = "camelCase")]
pub struct PageParams {
    /// The page, from 1; 1 when omitted.
    #[param(value_type = Option<u64>, minimum = 1, maximum = 4_294_967_295_u64)]
    pub page: Option<u32>,
    /// Items per page, 1 to 500; 50 when omitted.
    #[param(minimum = 1, maximum = 500)]
    pub page_size: Option<u32>,
}

/// `page` and `pageSize` from the query (`INVALID_PARAMS` / 422 when out of range).
pub fn page<S: BuildHasher>(query: &HashMap<String, String, S>) -> Result<PageRequest, ApiError> {
    Ok(PageRequest::from_query(
        query.get("page").map(String::as_str),
        query.get("pageSize").map(String::as_str),
    )?)
}

/// `page`, `pageSize` and `codes=A,B` from the query.
pub fn list<S: BuildHasher>(query: &HashMap<String, String, S>) -> Result<ListRequest, ApiError> {
    Ok(ListRequest::from_query(
        query.get("page").map(String::as_str),
        query.get("pageSize").map(String::as_str),
        query.get("codes").map(String::as_str),
    )?)
}
