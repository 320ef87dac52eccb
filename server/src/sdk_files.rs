//! `GET /sdk/{file}`: the SDK tools load and the page helpers beside it. `bridge.js` and
//! `bridge.d.ts` come from the directory `cargo xtask build` writes (`sdk/dist`), as built into
//! the binary or from a folder given in its place (`crate::embedded`); `ui.js`, `ui.d.ts` and
//! `ui.css`, written by hand in `sdk/ui/`, are built into the server. Any page may load them
//! (`Access-Control-Allow-Origin: *`); browsers revalidate them with their `ETag`, so a rebuilt
//! SDK reaches tools at once. Each is compressed once per version (brotli or gzip, as the client
//! asks), not on every request.

use axum::extract::{Path, State};
use axum::http::{HeaderMap, HeaderValue, header};
use axum::response::Response;

use crate::app::AppState;
use crate::built_files::built_file;
use crate::error::ApiError;

/// The built files served, with their media types.
const FILES: [(&str, &str); 2] = [
    ("bridge.js", "text/javascript; charset=utf-8"),
    ("bridge.d.ts", "text/plain; charset=utf-8"),
];

/// The page helpers: name, media type and contents.
const HELPERS: [(&str, &str, &str); 3] = [
    (
        "ui.js",
        "text/javascript; charset=utf-8",
        include_str!("../../sdk/ui/ui.js"),
    ),
    (
        "ui.d.ts",
        "text/plain; charset=utf-8",
        include_str!("../../sdk/ui/ui.d.ts"),
    ),
    (
        "ui.css",
        "text/css; charset=utf-8",
        include_str!("../../sdk/ui/ui.css"),
    ),
];

/// `GET /sdk/{file}`.
pub async fn file(
    State(state): State<AppState>,
    Path(name): Path<String>,
    headers: HeaderMap,
) -> Result<Response, ApiError> {
    serve(&state, &name, &headers).await
}

/// The SDK file `name` (`bridge.js`, `ui.js`, …), answering `If-None-Match`.
pub async fn serve(
    state: &AppState,
    name: &str,
    headers: &HeaderMap,
) -> Result<Response, ApiError> {
    let mut response = match HELPERS.iter().find(|(file, _, _)| *file == name) {
        Some((file, media_type, text)) => {
            state
                .assets
                .builtin(file, text.as_bytes(), true)
                .response(headers, media_type)
                .await
        }
        None => {
            built_file(
                state,
                &state.sdk_files,
                &FILES,
                name,
                headers,
                &format!(
                    "/sdk/{name} is not an SDK file; tools load /sdk/bridge.js, and may load \
                     /sdk/ui.js and /sdk/ui.css"
                ),
            )
            .await?
        }
    };
    response.headers_mut().insert(
        header::ACCESS_CONTROL_ALLOW_ORIGIN,
        HeaderValue::from_static("*"),
    );
    Ok(response)
}
