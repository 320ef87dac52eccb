//! The app's own pages: the reference web app (`www/`) at the root and the
//! host module (`host/dist`, built by `cargo xtask build`) under `/host/`.
//!
//! Both come from the copies built into the binary, or from folders given in
//! their place (`crate::embedded`); files on disk are checked on each request
//! (so an edit shows on reload) and read again when they changed. Each file
//! is compressed once per version and revalidated by its `ETag`. Pages carry
//! a Content-Security-Policy: scripts from the app's origin only (plus
//! `'wasm-unsafe-eval'` for the host module), frames only from the tools'
//! origins, no framing of the app.

use std::path::Path;

use axum::extract::{Request, State};
use axum::http::{HeaderMap, HeaderValue, Method, header};
use axum::response::{IntoResponse, Response};
use percent_encoding::percent_decode_str;

use crate::app::AppState;
use crate::built_files::built_file;
use crate::error::ApiError;

/// The files of the host module, with their media types.
const HOST_FILES: [(&str, &str); 3] = [
    ("toolbridge_host.js", "text/javascript; charset=utf-8"),
    ("toolbridge_host_bg.wasm", "application/wasm"),
    ("toolbridge_host.d.ts", "text/plain; charset=utf-8"),
];

/// Media types of the app's files, by extension.
const APP_TYPES: [(&str, &str); 9] = [
    ("html", "text/html; charset=utf-8"),
    ("css", "text/css; charset=utf-8"),
    ("js", "text/javascript; charset=utf-8"),
    ("json", "application/json"),
    ("svg", "image/svg+xml"),
    ("png", "image/png"),
    ("jpg", "image/jpeg"),
    ("ico", "image/x-icon"),
    ("woff2", "font/woff2"),
];

/// Answers every request no route took: a file of the app for `GET` and
/// `HEAD` outside `/api/`, else `NOT_FOUND`.
pub async fn fallback(State(state): State<AppState>, request: Request) -> Response {
    let path = request.uri().path();
    if path.starts_with("/api/") || path == "/api" {
        return ApiError::not_found(
            "there is no such endpoint; the REST API lives under /api/v1 (see /api/v1/openapi.json)",
        )
        .into_response();
    }
    // The metrics have a listener of their own (`--metrics-bind`); here `/metrics` is no page
    // (without this the app's page would answer it, as it answers any path without a file type).
    if path == crate::telemetry::PATH || path.starts_with("/metrics/") {
        return ApiError::not_found(format!("the app has no page {path}")).into_response();
    }
    if request.method() != Method::GET && request.method() != Method::HEAD {
        return ApiError::not_found(format!("{path} takes no {}", request.method()))
            .into_response();
    }
    if path == crate::docs_files::PREFIX || path.starts_with("/docs/") {
        return crate::docs_files::answer(&state, path, request.headers()).await;
    }
    let answer = match path.strip_prefix("/host/") {
        Some(name) => host_file(&state, name, request.headers()).await,
        None => app_file(&state, path, request.headers()).await,
    };
    answer.unwrap_or_else(IntoResponse::into_response)
}

async fn host_file(
    state: &AppState,
    name: &str,
    headers: &HeaderMap,
) -> Result<Response, ApiError> {
    built_file(
        state,
        &state.host_files,
        &HOST_FILES,
        name,
        headers,
        &format!(
            "/host/{name} is not a file of the host module; pages import /host/toolbridge_host.js"
        ),
    )
    .await
}

async fn app_file(state: &AppState, path: &str, headers: &HeaderMap) -> Result<Response, ApiError> {
    let missing = || ApiError::not_found(format!("the app has no page {path}"));
    let name = path
        .strip_prefix('/')
        .and_then(|raw| percent_decode_str(raw).decode_utf8().ok())
        .map(std::borrow::Cow::into_owned)
        .ok_or_else(missing)?;
    // A path without a file type is one of the app's own addresses (`/`,
    // `/quotes/<id>` as `quotes.create` answers it): the app's page, whose
    // script shows what the address names.
    let name = if Path::new(&name).extension().is_none() {
        "index.html".to_owned()
    } else {
        name
    };
    let media_type = media_type(&name).ok_or_else(missing)?;
    if !is_plain_relative(&name) {
        return Err(missing());
    }
    let asset = state
        .www_files
        .asset(&state.assets, &name, compressible(media_type))
        .await
        .map_err(|_| missing())?;
    let mut response = asset.response(headers, media_type).await;
    if media_type.starts_with("text/html") {
        let policy = format!(
            "default-src 'self'; script-src 'self' 'wasm-unsafe-eval'; style-src 'self'; \
             img-src 'self' data:; frame-src {}; connect-src 'self'; object-src 'none'; \
             base-uri 'none'; form-action 'self'; frame-ancestors 'none'",
            state.tool_sites.frame_source()
        );
        if let Ok(value) = HeaderValue::from_str(&policy) {
            response
                .headers_mut()
                .insert(header::CONTENT_SECURITY_POLICY, value);
        }
    }
    Ok(response)
}

/// Whether files of `media_type` are worth compressing: not images already compressed, nor fonts.
pub(crate) fn compressible(media_type: &str) -> bool {
    !matches!(
        media_type,
        "image/png" | "image/jpeg" | "font/woff2" | "font/woff"
    )
}

fn media_type(name: &str) -> Option<&'static str> {
    media_type_in(name, &APP_TYPES)
}

/// The media type `types` (extension, media type) give the file `name`, by its extension in any
/// letter case.
pub(crate) fn media_type_in(name: &str, types: &[(&str, &'static str)]) -> Option<&'static str> {
    let extension = Path::new(name).extension()?.to_str()?.to_ascii_lowercase();
    types
        .iter()
        .find(|(known, _)| *known == extension)
        .map(|(_, media_type)| *media_type)
}

/// Whether `name` stays inside the folder on every system: relative, no
/// empty, `.` or `..` segments, no backslashes, colons or control characters.
pub(crate) fn is_plain_relative(name: &str) -> bool {
    !name.is_empty()
        && name.split('/').all(|segment| {
            !segment.is_empty()
                && segment != "."
                && segment != ".."
                && !segment.starts_with('.')
                && !segment
                    .chars()
                    .any(|c| c == '\\' || c == ':' || c.is_control())
        })
}
