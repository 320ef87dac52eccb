//! The session API the host app uses: sign in with email and password (a
//! session cookie, `HttpOnly` and `SameSite=Strict`, and on an https app
//! `Secure` with the `__Host-` prefix), read the signed-in user, sign out.

use axum::Json;
use axum::extract::State;
use axum::http::{HeaderMap, HeaderValue, StatusCode, header};
use axum::response::{IntoResponse, Response};
use serde::{Deserialize, Serialize};
use toolbridge_protocol::context::{BridgeContextDto, Role};
use toolbridge_protocol::problem::Problem;
use toolbridge_store::RateLimit;

use crate::app::AppState;
use crate::auth;
use crate::error::ApiError;
use crate::json::{BodyErrors, JsonBody, typed};
use crate::{rate_limit, request_id, telemetry};

/// How long a session lasts: 12 hours.
pub const SESSION_TTL_SECS: u64 = 12 * 60 * 60;

/// Failed sign-ins allowed per email in a window, against password guessing.
pub const SIGN_IN_FAILURES: RateLimit = RateLimit {
    requests: 5,
    window_secs: 15 * 60,
};

/// `POST /api/session` body.
#[derive(Debug, Deserialize, utoipa::ToSchema)]
#[serde(deny_unknown_fields)]
pub struct SignIn {
    /// The user's email.
    pub email: String,
    /// The user's password.
    pub password: String,
}

/// `POST /api/session`: signs in and sets the session cookie.
#[utoipa::path(post, path = "/api/session", tag = "session", request_body = SignIn,
    responses((status = 200, body = BridgeContextDto, headers(("Set-Cookie" = String, description = "the session cookie: `tb_session`, `HttpOnly; SameSite=Strict`; on an https app `__Host-tb_session`, also `Secure`"))), BodyErrors, (status = 401, description = "wrong email or password", body = Problem, content_type = "application/problem+json"), (status = 403, description = "not from the app's origin", body = Problem, content_type = "application/problem+json"), (status = 422, description = "the body is not `{email, password}` (errors[] says where)", body = Problem, content_type = "application/problem+json"), (status = 429, description = "too many failed sign-ins for this email; see Retry-After", body = Problem, content_type = "application/problem+json")))]
pub async fn sign_in(
    State(state): State<AppState>,
    headers: HeaderMap,
    body: JsonBody,
) -> Result<Response, ApiError> {
    if headers.contains_key("sec-fetch-site") && !auth::trusted_origin(&state, &headers) {
        return Err(ApiError::not_allowed("sign in from the app's own page"));
    }
    let SignIn { email, password } = typed(body.value)?;
    // Each attempt takes one of the window's checks before its password is
    // checked, so that however many arrive at once, on however many
    // instances, no more are checked than the limit; a right password gives
    // its check back, so only failures use them up. Once an email has used
    // them up, no password is checked until the window ends.
    let attempts = rate_limit::sign_in_bucket(&email);
    let quota = state
        .store
        .count_request(&attempts, SIGN_IN_FAILURES)
        .await?;
    if !quota.allowed {
        telemetry::rate_limited(telemetry::Limit::SignIn);
        return Err(ApiError::Rule(toolbridge_protocol::Error::RateLimited {
            retry_after: quota.retry_after,
        }));
    }
    let Some(user) = state.store.verify_password(&email, &password).await? else {
        telemetry::sign_in_failed();
        return Err(ApiError::unauthenticated("the email or password is wrong"));
    };
    state.store.uncount_request(&attempts, quota.reset).await?;
    request_id::note_tenant(&user.tenant_id);
    let token = state
        .store
        .create_session(&user.id, SESSION_TTL_SECS)
        .await?;
    let mut response = Json(user.context()).into_response();
    set_cookie(&state, &mut response, &token, SESSION_TTL_SECS);
    Ok(response)
}

/// `GET /api/sign-in`: what the app's sign-in page offers besides the form.
#[derive(Debug, Serialize, utoipa::ToSchema)]
#[serde(rename_all = "camelCase")]
pub struct SignInHelp {
    /// The demo's sign-ins that still let someone in: empty unless the database holds demo data
    /// (`toolbridge serve --demo` on an empty database), as it does not in production.
    pub demo_sign_ins: Vec<DemoSignInDto>,
}

/// One of the demo's sign-ins.
#[derive(Debug, Serialize, utoipa::ToSchema)]
#[serde(rename_all = "camelCase")]
pub struct DemoSignInDto {
    /// The sign-in email.
    pub email: String,
    /// The demo's password, the same for every demo user.
    pub password: String,
    /// The user's role.
    pub role: Role,
    /// The user's organisation.
    pub tenant_name: String,
}

/// `GET /api/sign-in`: the demo's sign-ins, for the sign-in page to offer; none on a database
/// without demo data. Needs no session.
#[utoipa::path(get, path = "/api/sign-in", tag = "session", operation_id = "signInHelp",
    responses((status = 200, body = SignInHelp, description = "the demo's sign-ins; no authentication")))]
pub async fn help(State(state): State<AppState>) -> Result<Json<SignInHelp>, ApiError> {
    let demo_sign_ins = state
        .store
        .demo_sign_ins()
        .await?
        .into_iter()
        .map(|sign_in| DemoSignInDto {
            email: sign_in.email,
            password: sign_in.password,
            role: sign_in.role,
            tenant_name: sign_in.tenant_name,
        })
        .collect();
    Ok(Json(SignInHelp { demo_sign_ins }))
}

/// `GET /api/session`: the signed-in user.
#[utoipa::path(get, path = "/api/session", tag = "session",
    responses((status = 200, body = BridgeContextDto), (status = 401, description = "not signed in (or an unknown or revoked API key)", body = Problem, content_type = "application/problem+json"), (status = 403, description = "an API key, which has no user; or a session request from another origin", body = Problem, content_type = "application/problem+json")),
    security(("session" = [])))]
pub async fn current(
    State(state): State<AppState>,
    headers: HeaderMap,
) -> Result<Json<BridgeContextDto>, ApiError> {
    let principal = auth::authenticate(&state, &headers).await?;
    Ok(Json(principal.user()?.context()))
}

/// `DELETE /api/session`: signs out.
#[utoipa::path(delete, path = "/api/session", tag = "session",
    responses((status = 204, description = "signed out (also when no one was signed in)", headers(("Set-Cookie" = String, description = "clears the session cookie")))),
    security((), ("session" = [])))]
pub async fn sign_out(
    State(state): State<AppState>,
    headers: HeaderMap,
) -> Result<Response, ApiError> {
    if let Some(token) = auth::session_token(&state, &headers) {
        state.store.delete_session(token).await?;
    }
    let mut response = StatusCode::NO_CONTENT.into_response();
    set_cookie(&state, &mut response, "", 0);
    Ok(response)
}

fn set_cookie(state: &AppState, response: &mut Response, token: &str, max_age: u64) {
    let name = auth::session_cookie(state);
    let secure = if state.public_urls().is_https() {
        "; Secure"
    } else {
        ""
    };
    let cookie =
        format!("{name}={token}; HttpOnly; SameSite=Strict; Path=/; Max-Age={max_age}{secure}");
    if let Ok(value) = HeaderValue::from_str(&cookie) {
        response.headers_mut().insert(header::SET_COOKIE, value);
    }
}
