//! Serving a file from disk with its type and an `ETag` (so a rebuild or an edit reaches the
//! browser on its next request): the files `cargo xtask build` writes (the SDK, the host
//! module) and the app's pages.

use std::path::Path;

use axum::body::Body;
use axum::http::{HeaderMap, HeaderValue, header};
use axum::response::Response;

use crate::conditional::respond;
use crate::digest::sha256_hex;
use crate::error::ApiError;

/// `name` from `dir` when it is one of `files` (name, media type); `NOT_FOUND` saying `unknown`
/// for any other name, or that the file is not built yet.
pub(crate) async fn built_file(
    dir: &Path,
    files: &[(&str, &'static str)],
    name: &str,
    headers: &HeaderMap,
    unknown: &str,
) -> Result<Response, ApiError> {
    let Some((name, media_type)) = files.iter().find(|(file, _)| *file == name) else {
        return Err(ApiError::not_found(unknown));
    };
    let path = dir.join(name);
    let body = tokio::fs::read(&path).await.map_err(|_| {
        ApiError::not_found(format!(
            "{} is not built; build it with `cargo xtask build`",
            path.display()
        ))
    })?;
    Ok(file_response(headers, body, media_type))
}

/// A file's bytes with its type, `ETag` (`304` to a matching `If-None-Match`), `no-cache` and
/// `nosniff`.
pub(crate) fn file_response(
    headers: &HeaderMap,
    body: Vec<u8>,
    media_type: &'static str,
) -> Response {
    let version = sha256_hex(&body);
    let mut response = respond(headers, &version, "no-cache", || {
        Response::new(Body::from(body))
    });
    let out = response.headers_mut();
    out.insert(header::CONTENT_TYPE, HeaderValue::from_static(media_type));
    out.insert(
        header::X_CONTENT_TYPE_OPTIONS,
        HeaderValue::from_static("nosniff"),
    );
    response
}
