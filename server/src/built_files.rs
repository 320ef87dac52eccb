//! Serving one of the files `cargo xtask build` writes (the SDK, the host module) with its type
//! and an `ETag` (so that a rebuild reaches the browser on its next request): from the copy
//! built into the binary, or from a folder on disk given in its place (see
//! [`Source`](crate::embedded::Source)). The bytes, their hash and their compressed variants come
//! from the [`AssetCache`](crate::asset_cache::AssetCache).

use axum::http::HeaderMap;
use axum::response::Response;

use crate::app::AppState;
use crate::embedded::{Missing, Source};
use crate::error::ApiError;

/// `name` from `source` when it is one of `files` (name, media type); `NOT_FOUND` saying
/// `unknown` for any other name, or that the file is not built (into this server, or in the
/// folder given).
pub(crate) async fn built_file(
    state: &AppState,
    source: &Source,
    files: &[(&str, &'static str)],
    name: &str,
    headers: &HeaderMap,
    unknown: &str,
) -> Result<Response, ApiError> {
    let Some((name, media_type)) = files.iter().find(|(file, _)| *file == name) else {
        return Err(ApiError::not_found(unknown));
    };
    let asset = source
        .asset(&state.assets, name, true)
        .await
        .map_err(|missing| {
            ApiError::not_found(match missing {
                Missing::NotOnDisk(path) => format!(
                    "{} is not built; build it with `cargo xtask build`",
                    path.display()
                ),
                embedded @ Missing::NotEmbedded { .. } => embedded.to_string(),
            })
        })?;
    Ok(asset.response(headers, media_type).await)
}
