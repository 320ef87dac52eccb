//! The application state and the router.

use std::sync::Arc;

use axum::Router;
use axum::middleware;
use axum::routing::get;
use toolbridge_store::Store;

use crate::error::ApiError;
use crate::rate_limit::RateLimiter;
use crate::{api, request_id, session};

/// What every handler may use.
#[derive(Clone)]
pub struct AppState {
    /// The database.
    pub store: Store,
    /// Per-key request counts.
    pub rate_limiter: Arc<RateLimiter>,
}

impl AppState {
    /// State over an opened store.
    pub fn new(store: Store) -> Self {
        Self {
            store,
            rate_limiter: Arc::new(RateLimiter::default()),
        }
    }
}

/// Every route: the REST API under `/api/v1`, the session API under
/// `/api/session`, each request with an id.
pub fn router(state: AppState) -> Router {
    Router::new()
        .nest("/api/v1", api::routes(state.clone()))
        .route(
            "/api/session",
            get(session::current)
                .post(session::sign_in)
                .delete(session::sign_out),
        )
        .fallback(|| async {
            ApiError::Rule(toolbridge_protocol::Error::NotFound(
                "there is no such endpoint; the REST API lives under /api/v1 (see /api/v1/openapi.json)"
                    .to_owned(),
            ))
        })
        .layer(middleware::from_fn(request_id::middleware))
        .with_state(state)
}
