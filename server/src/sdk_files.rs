//! `GET /sdk/bridge.js` and `/sdk/bridge.d.ts`: the SDK tools load, from the
//! directory `cargo xtask build` writes (`sdk/dist`). Any page may load it
//! (`Access-Control-Allow-Origin: *`); browsers revalidate it with its `ETag`,
//! so a rebuilt SDK reaches tools at once.

use axum::extract::{Path, State};
use axum::http::{HeaderMap, HeaderValue, header};
use axum::response::Response;

use crate::app::AppState;
use crate::built_files::built_file;
use crate::error::ApiError;

/// The files served, with their media types.
const FILES: [(&str, &str); 2] = [
    ("bridge.js", "text/javascript; charset=utf-8"),
    ("bridge.d.ts", "text/plain; charset=utf-8"),
];

/// `GET /sdk/{file}`.
pub async fn file(
    State(state): State<AppState>,
    Path(name): Path<String>,
    headers: HeaderMap,
) -> Result<Response, ApiError> {
    serve(&state, &name, &headers).await
}

/// The SDK file `name` (`bridge.js`), answering `If-None-Match`.
pub async fn serve(
    state: &AppState,
    name: &str,
    headers: &HeaderMap,
) -> Result<Response, ApiError> {
    let mut response = built_file(
        &state.sdk_dir,
        &FILES,
        name,
        headers,
        &format!("/sdk/{name} is not an SDK file; tools load /sdk/bridge.js"),
    )
    .await?;
    let headers = response.headers_mut();
    headers.insert(
        header::ACCESS_CONTROL_ALLOW_ORIGIN,
        HeaderValue::from_static("*"),
    );
    Ok(response)
}
