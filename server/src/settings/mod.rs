//! Settings for the app's administrators (Admin and Super User), with the
//! session: API tokens (`/api/settings/keys`) and installed tools
//! (`/api/settings/tools`). API keys cannot reach these endpoints.

pub mod keys;
pub mod tools;

use axum::http::HeaderMap;
use toolbridge_protocol::context::Role;
use toolbridge_store::User;

use crate::app::AppState;
use crate::auth;
use crate::error::ApiError;

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
