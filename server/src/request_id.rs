//! A request id for every request: in the `X-Request-Id` response header,
//! in the log line, and in the body of every error, so a user can quote it.

use std::sync::{Arc, OnceLock};
use std::time::Instant;

use axum::extract::{MatchedPath, Request};
use axum::http::HeaderValue;
use axum::middleware::Next;
use axum::response::Response;
use utoipa::Modify;
use utoipa::openapi::schema::{ObjectBuilder, Type};
use utoipa::openapi::{HeaderBuilder, OpenApi};

use crate::client::ClientAddr;
use crate::openapi::each_response;
use crate::telemetry;

tokio::task_local! {
    static REQUEST_ID: String;
    static TENANT: Arc<OnceLock<String>>;
}

/// The response header that carries the id.
pub const HEADER: &str = "x-request-id";

/// The id of the request being handled, if any.
pub fn current() -> Option<String> {
    REQUEST_ID.try_with(Clone::clone).ok()
}

/// Notes the tenant of the caller of the request being handled (once it is authenticated), for
/// its log line. The first tenant noted stays; outside a request, nothing happens.
pub fn note_tenant(tenant_id: &str) {
    let _ = TENANT.try_with(|slot| {
        if slot.get().is_none() {
            let _ = slot.set(tenant_id.to_owned());
        }
    });
}

/// What the log and the metrics call a request's route when no route template
/// ([`MatchedPath`]) says: a response extension put by a middleware that answered the request
/// itself, or the kind of path the fallback served. One of a few values, never a raw path.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Route(&'static str);

impl Route {
    /// A tool's origin answered (whatever path it was).
    pub const TOOL_ORIGIN: Route = Route("(tool origin)");
    /// An `/api/` path that no route takes.
    pub const UNKNOWN_API: Route = Route("(unknown api path)");
    /// A file of the host module (`/host/…`).
    pub const HOST_FILE: Route = Route("/host/{file}");
    /// Any other path the fallback serves: the app's pages and files.
    pub const APP_FILE: Route = Route("(app file)");

    /// The route of a request for `path` that no route took.
    pub fn of_fallback(path: &str) -> Route {
        if path == "/api" || path.starts_with("/api/") {
            Route::UNKNOWN_API
        } else if path.starts_with("/host/") {
            Route::HOST_FILE
        } else {
            Route::APP_FILE
        }
    }

    /// The label.
    pub fn as_str(self) -> &'static str {
        self.0
    }
}

/// Middleware: gives the request an id, and once it is answered logs one line about it (never
/// its headers or query string) and counts it in the metrics.
pub async fn middleware(request: Request, next: Next) -> Response {
    let id = format!("req_{}", uuid::Uuid::new_v4().simple());
    let method = request.method().clone();
    let path = request.uri().path().to_owned();
    let matched = request.extensions().get::<MatchedPath>().cloned();
    let client = request.extensions().get::<ClientAddr>().copied();
    let tenant = Arc::new(OnceLock::new());
    let started = Instant::now();
    let mut response = REQUEST_ID
        .scope(
            id.clone(),
            TENANT.scope(Arc::clone(&tenant), next.run(request)),
        )
        .await;
    let elapsed = started.elapsed();
    let route = match (response.extensions().get::<Route>(), &matched) {
        (Some(route), _) => route.as_str(),
        (None, Some(matched)) => matched.as_str(),
        (None, None) => Route::of_fallback(&path).as_str(),
    };
    let status = response.status();
    // Milliseconds to the microsecond.
    #[allow(clippy::cast_precision_loss)]
    let duration_ms = elapsed.as_micros() as f64 / 1000.0;
    tracing::info!(
        request_id = %id,
        %method,
        %route,
        %path,
        status = status.as_u16(),
        duration_ms,
        client = client.map(tracing::field::display),
        tenant = tenant.get().map(tracing::field::display),
        "request"
    );
    telemetry::http_request(route, &method, status, elapsed);
    if let Ok(value) = HeaderValue::from_str(&id) {
        response.headers_mut().insert(HEADER, value);
    }
    response
}

/// OpenAPI: the `X-Request-Id` header on every response of every operation.
pub struct RequestIdHeader;

impl Modify for RequestIdHeader {
    fn modify(&self, openapi: &mut OpenApi) {
        each_response(openapi, |_, _, response| {
            response.headers.insert(
                "X-Request-Id".to_owned(),
                HeaderBuilder::new()
                    .schema(
                        ObjectBuilder::new()
                            .schema_type(Type::String)
                            .pattern(Some("^req_[0-9a-f]{32}$")),
                    )
                    .description(Some(
                        "the request's id, as logged; error bodies carry it as `requestId`",
                    ))
                    .build(),
            );
        });
    }
}
