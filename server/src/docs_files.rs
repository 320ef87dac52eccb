//! The documentation under `/docs/`: the book that `cargo xtask build` makes with mdBook from
//! `docs/` (with the error code page generated from the protocol's codes) and the API reference
//! beside it at `/docs/api/`, all in `docs/book`.
//!
//! The files come from the copy built into the binary, or from a folder given in its place
//! (`--docs-dir`), compressed once per version like the app's. An address without a file type
//! is a page: `/docs/errors` answers `errors.html` (so the `type` of every problem body,
//! `/docs/errors#CODE`, leads to its entry), and `/docs/api` is sent on to `/docs/api/` so that
//! the page's relative links work. An unknown address gets the book's own "not found" page with
//! status 404. Pages may run only the scripts and styles they carry (mdBook's and Redoc's
//! inline ones included) and may fetch only from this server: nothing leaves it.

use std::path::Path;

use axum::http::{HeaderMap, HeaderValue, StatusCode, header};
use axum::response::{IntoResponse, Redirect, Response};
use percent_encoding::percent_decode_str;

use crate::app::AppState;
use crate::app_files::{compressible, is_plain_relative, media_type_in};
use crate::embedded::Missing;
use crate::error::ApiError;

/// Where the documentation is served.
pub(crate) const PREFIX: &str = "/docs";

/// Media types of the book's files, by extension.
const TYPES: [(&str, &str); 13] = [
    ("html", "text/html; charset=utf-8"),
    ("css", "text/css; charset=utf-8"),
    ("js", "text/javascript; charset=utf-8"),
    ("json", "application/json"),
    ("svg", "image/svg+xml"),
    ("png", "image/png"),
    ("ico", "image/x-icon"),
    ("woff2", "font/woff2"),
    ("woff", "font/woff"),
    ("ttf", "font/ttf"),
    ("eot", "application/vnd.ms-fontobject"),
    ("otf", "font/otf"),
    ("txt", "text/plain; charset=utf-8"),
];

/// The policy of every page: its own scripts and styles (mdBook's theme switch and Redoc's
/// styles are inline), Redoc's search worker, fetches to this server only.
const POLICY: &str = "default-src 'self'; script-src 'self' 'unsafe-inline'; \
     style-src 'self' 'unsafe-inline'; img-src 'self' data:; font-src 'self' data:; \
     connect-src 'self'; worker-src 'self' blob:; object-src 'none'; base-uri 'self'; \
     form-action 'self'; frame-ancestors 'none'";

/// The answer to `GET` or `HEAD` of `path`, which starts with [`PREFIX`].
pub(crate) async fn answer(state: &AppState, path: &str, headers: &HeaderMap) -> Response {
    let Some(rest) = path.strip_prefix(PREFIX) else {
        return not_found(state, path, headers).await;
    };
    let Some(rest) = rest.strip_prefix('/') else {
        // `/docs` itself (other paths that merely start with it are no pages of ours).
        return if rest.is_empty() {
            Redirect::permanent("/docs/").into_response()
        } else {
            not_found(state, path, headers).await
        };
    };
    let Some(name) = percent_decode_str(rest)
        .decode_utf8()
        .ok()
        .map(std::borrow::Cow::into_owned)
    else {
        return not_found(state, path, headers).await;
    };
    let name = if name.is_empty() || name.ends_with('/') {
        format!("{name}index.html")
    } else {
        name
    };
    if !is_plain_relative(&name) {
        return not_found(state, path, headers).await;
    }
    if Path::new(&name).extension().is_none() {
        if let Some(page) = file(state, &format!("{name}.html"), headers).await {
            return page;
        }
        if exists(state, &format!("{name}/index.html")).await {
            return Redirect::permanent(&format!("{PREFIX}/{name}/")).into_response();
        }
        return not_found(state, path, headers).await;
    }
    match file(state, &name, headers).await {
        Some(response) => response,
        None => not_found(state, path, headers).await,
    }
}

/// The file `name` of the documentation, if there is one of a type it serves.
async fn file(state: &AppState, name: &str, headers: &HeaderMap) -> Option<Response> {
    let media_type = media_type_in(name, &TYPES)?;
    let compressible = compressible(media_type);
    let asset = state
        .docs_files
        .asset(&state.assets, name, compressible)
        .await
        .ok()?;
    let mut response = asset.response(headers, media_type).await;
    if media_type.starts_with("text/html") {
        response.headers_mut().insert(
            header::CONTENT_SECURITY_POLICY,
            HeaderValue::from_static(POLICY),
        );
    }
    Some(response)
}

async fn exists(state: &AppState, name: &str) -> bool {
    state
        .docs_files
        .asset(&state.assets, name, true)
        .await
        .is_ok()
}

/// The book's "not found" page with status 404, or, when the documentation is not built at all,
/// a problem that says how to build it.
async fn not_found(state: &AppState, path: &str, headers: &HeaderMap) -> Response {
    // Always the whole page: a `304` would say that the client's copy of *this* address holds.
    let mut unconditional = headers.clone();
    unconditional.remove(header::IF_NONE_MATCH);
    unconditional.remove(header::IF_MODIFIED_SINCE);
    if let Some(mut page) = file(state, "404.html", &unconditional).await {
        *page.status_mut() = StatusCode::NOT_FOUND;
        page.headers_mut().remove(header::ETAG);
        return page;
    }
    let message = match state
        .docs_files
        .asset(&state.assets, "index.html", true)
        .await
    {
        Err(Missing::NotOnDisk(dir)) => format!(
            "{path}: the documentation is not built ({} is missing); build it with `cargo xtask build`",
            dir.display()
        ),
        Err(embedded @ Missing::NotEmbedded { .. }) => format!("{path}: {embedded}"),
        Ok(_) => format!("the documentation has no page {path}"),
    };
    ApiError::not_found(message).into_response()
}
