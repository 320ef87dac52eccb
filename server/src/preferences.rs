//! `/api/session/preferences`: the signed-in user's own time zone and theme, which win over their
//! organisation's. Any signed-in user reads and changes their own; API keys have none.

use axum::Json;
use axum::extract::State;
use axum::http::HeaderMap;
use toolbridge_protocol::context::{ContextValues, OwnContextDto, Theme};
use toolbridge_protocol::problem::Problem;

use crate::app::AppState;
use crate::auth;
use crate::error::ApiError;
use crate::json::{BodyErrors, JsonBody};

/// `PATCH /api/session/preferences` body: the choices to change; `null` follows the
/// organisation's again, and a field left out stays as it is.
#[derive(Debug, serde::Deserialize, utoipa::ToSchema)]
#[serde(rename_all = "camelCase")]
// The schema of the body, which is read by the protocol's rules; a field is left out, `null`
// (follow the organisation's) or a value: three cases.
#[allow(dead_code, clippy::option_option)]
pub struct OwnChange {
    /// An IANA time zone name, e.g. `Europe/London`; `null` for the organisation's.
    #[schema(pattern = r"^[A-Za-z0-9_+\-]+(/[A-Za-z0-9_+\-]+)*$", max_length = 64)]
    time_zone: Option<Option<String>>,
    /// `light` or `dark`; `null` for the organisation's.
    theme: Option<Option<Theme>>,
}

/// `GET /api/session/preferences`: the signed-in user's own time zone and theme (`null` where
/// they follow their organisation's).
#[utoipa::path(get, path = "/api/session/preferences", tag = "session", operation_id = "getOwnPreferences",
    responses((status = 200, body = OwnContextDto), (status = 401, description = "not signed in", body = Problem, content_type = "application/problem+json"), (status = 403, description = "an API key, which has no user; or a session request from another origin", body = Problem, content_type = "application/problem+json")),
    security(("session" = [])))]
pub async fn get(
    State(state): State<AppState>,
    headers: HeaderMap,
) -> Result<Json<OwnContextDto>, ApiError> {
    let principal = auth::authenticate(&state, &headers).await?;
    let user = principal.user()?;
    Ok(Json(state.store.own_context(user).await?))
}

/// `PATCH /api/session/preferences`: changes the signed-in user's own time zone or theme, and
/// answers both. Only that user's open pages hear of it (a `context` event).
#[utoipa::path(patch, path = "/api/session/preferences", tag = "session", operation_id = "updateOwnPreferences",
    request_body = OwnChange,
    responses((status = 200, body = OwnContextDto), BodyErrors, (status = 401, description = "not signed in", body = Problem, content_type = "application/problem+json"), (status = 403, description = "an API key, which has no user; or a session request from another origin", body = Problem, content_type = "application/problem+json"), (status = 422, description = "a value is not a known time zone or theme, or the body has another field: errors[] names each", body = Problem, content_type = "application/problem+json")),
    security(("session" = [])))]
pub async fn update(
    State(state): State<AppState>,
    headers: HeaderMap,
    body: JsonBody,
) -> Result<Json<OwnContextDto>, ApiError> {
    let principal = auth::authenticate(&state, &headers).await?;
    let user = principal.user()?;
    let (change, cleared) = ContextValues::read(&body.value, &OwnContextDto::FIELDS, true)?;
    Ok(Json(
        state.store.set_own_context(user, &change, &cleared).await?,
    ))
}
