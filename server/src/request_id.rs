//! A request id for every request: in the `X-Request-Id` response header,
//! in the log line, and in the body of every error, so a user can quote it.

use axum::extract::Request;
use axum::http::HeaderValue;
use axum::middleware::Next;
use axum::response::Response;
use utoipa::Modify;
use utoipa::openapi::schema::{ObjectBuilder, Type};
use utoipa::openapi::{HeaderBuilder, OpenApi};

use crate::openapi::each_response;

tokio::task_local! {
    static REQUEST_ID: String;
}

/// The response header that carries the id.
pub const HEADER: &str = "x-request-id";

/// The id of the request being handled, if any.
pub fn current() -> Option<String> {
    REQUEST_ID.try_with(Clone::clone).ok()
}

/// Middleware: gives the request an id and logs its outcome.
pub async fn middleware(request: Request, next: Next) -> Response {
    let id = format!("req_{}", uuid::Uuid::new_v4().simple());
    let method = request.method().clone();
    let path = request.uri().path().to_owned();
    let started = std::time::Instant::now();
    let mut response = REQUEST_ID.scope(id.clone(), next.run(request)).await;
    tracing::info!(
        request_id = %id,
        %method,
        path,
        status = response.status().as_u16(),
        ms = started.elapsed().as_millis(),
        "request"
    );
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
