//! Serving a file from disk with its type and an `ETag` (so a rebuild or an edit reaches the
//! browser on its next request): the files `cargo xtask build` writes (the SDK, the host
//! module) and the app's pages. The bytes, their hash and their compressed variants come from
//! the [`AssetCache`](crate::asset_cache::AssetCache), which reads a file again only when it
//! has changed.

use std::path::Path;

use axum::http::HeaderMap;
use axum::response::Response;

use crate::app::AppState;
use crate::error::ApiError;

/// `name` from `dir` when it is one of `files` (name, media type); `NOT_FOUND` saying `unknown`
/// for any other name, or that the file is not built yet.
pub(crate) async fn built_file(
    state: &AppState,
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
    let asset = state.assets.file(&path, true).await.map_err(|_| {
        ApiError::not_found(format!(
            "{} is not built; build it with `cargo xtask build`",
            path.display()
        ))
    })?;
    Ok(asset.response(headers, media_type).await)
}
