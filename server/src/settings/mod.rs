//! Settings for the app's administrators (Admin and Super User), with the
//! session: API tokens (`/api/settings/keys`), installed tools
//! (`/api/settings/tools`) and the organisation's time zone, currency, units
//! and theme (`/api/settings/organisation`). API keys cannot reach these
//! endpoints.

pub mod keys;
pub mod organisation;
pub mod tools;

use std::collections::BTreeMap;

use axum::http::HeaderMap;
use toolbridge_protocol::context::Role;
use toolbridge_store::User;
use utoipa::IntoResponses;
use utoipa::openapi::{RefOr, Response};

use crate::app::AppState;
use crate::auth;
use crate::error::{ApiError, problem_response};

/// OpenAPI: what every settings operation refuses, whatever it is asked:
/// no session (401), and a user who is not an administrator, or an API key
/// (403).
pub struct AdminRefusals;

impl IntoResponses for AdminRefusals {
    fn responses() -> BTreeMap<String, RefOr<Response>> {
        BTreeMap::from([
            ("401".to_owned(), problem_response("not signed in").into()),
            (
                "403".to_owned(),
                problem_response("not an Admin or Super User, or an API key").into(),
            ),
        ])
    }
}

/// The signed-in user, if they may change settings.
async fn administrator(state: &AppState, headers: &HeaderMap) -> Result<User, ApiError> {
    let principal = auth::authenticate(state, headers).await?;
    let user = principal.user()?;
    if matches!(user.role, Role::SuperUser | Role::Admin) {
        Ok(user.clone())
    } else {
        Err(ApiError::not_allowed(format!(
            "settings are for Admin and Super User; {} is {}",
            user.email,
            user.role.label()
        )))
    }
}
