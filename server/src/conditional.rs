//! Conditional GETs: a resource with a version answers `304 Not Modified` to
//! an `If-None-Match` that names it, and always carries its `ETag`.

use axum::http::{HeaderMap, HeaderValue, StatusCode, header};
use axum::response::{IntoResponse, Response};

/// `304` when `If-None-Match` names `version`, else `body()`; either way
/// with `ETag: "<version>"` and `Cache-Control: <cache_control>`.
pub fn respond(
    headers: &HeaderMap,
    version: &str,
    cache_control: &'static str,
    body: impl FnOnce() -> Response,
) -> Response {
    let etag = format!("\"{version}\"");
    let fresh = headers
        .get(header::IF_NONE_MATCH)
        .and_then(|value| value.to_str().ok())
        .is_some_and(|sent| sent.split(',').any(|tag| tag.trim() == etag));
    let mut response = if fresh {
        StatusCode::NOT_MODIFIED.into_response()
    } else {
        body()
    };
    if let Ok(value) = HeaderValue::from_str(&etag) {
        response.headers_mut().insert(header::ETAG, value);
    }
    response.headers_mut().insert(
        header::CACHE_CONTROL,
        HeaderValue::from_static(cache_control),
    );
    response
}
