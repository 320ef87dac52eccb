//! Who is calling: an API key (`Authorization: Bearer …`, with scopes and a
//! rate limit) or the host app's session cookie, which only counts when the
//! request comes from the app's own origin, so a tool page (another origin)
//! cannot use it directly.

use axum::extract::{Request, State};
use axum::http::{HeaderMap, header};
use axum::middleware::Next;
use axum::response::{IntoResponse, Response};
use toolbridge_protocol::context::Role;
use toolbridge_protocol::live::Actor;
use toolbridge_store::{ApiKey, Scope, User};
use utoipa::Modify;
use utoipa::openapi::schema::{ObjectBuilder, Type};
use utoipa::openapi::{HeaderBuilder, OpenApi, RefOr};

use crate::app::AppState;
use crate::error::{ApiError, problem_response};
use crate::openapi::each_operation;
use crate::{rate_limit, request_id, telemetry};

/// The session cookie's name on a plain-HTTP app (local development).
pub const SESSION_COOKIE: &str = "tb_session";

/// The session cookie's name on an https app: with the `__Host-` prefix a browser keeps it only
/// if it is `Secure`, has `Path=/` and no `Domain`, so no other name under the app's domain (a
/// tool's origin among them) can set or shadow it.
pub const SECURE_SESSION_COOKIE: &str = "__Host-tb_session";

/// The session cookie's name for this app: [`SECURE_SESSION_COOKIE`] when it is served over
/// https, else [`SESSION_COOKIE`].
pub fn session_cookie(state: &AppState) -> &'static str {
    if state.public_urls().is_https() {
        SECURE_SESSION_COOKIE
    } else {
        SESSION_COOKIE
    }
}

/// The caller of a request.
#[derive(Debug, Clone)]
pub enum Principal {
    /// An API key.
    Key(ApiKey),
    /// A signed-in user of the host app.
    User(User),
}

impl Principal {
    /// The tenant every read and write is scoped to.
    pub fn tenant_id(&self) -> &str {
        match self {
            Principal::Key(key) => &key.tenant_id,
            Principal::User(user) => &user.tenant_id,
        }
    }

    /// Who makes a change, as the live events name them.
    pub fn actor(&self) -> Actor {
        match self {
            Principal::User(user) => Actor::User {
                name: user.name.clone(),
                email: user.email.clone(),
            },
            Principal::Key(key) => Actor::Key {
                name: key.name.clone(),
            },
        }
    }

    /// An id for idempotency records: the key's, or the user's.
    pub fn id(&self) -> String {
        match self {
            Principal::Key(key) => format!("key:{}", key.id),
            Principal::User(user) => format!("user:{}", user.id),
        }
    }

    /// `NOT_ALLOWED` (403) unless the caller may use `scope`: a key needs it
    /// granted; a user's role decides (Field users do not write quotes, and
    /// webhooks are for Admin and Super User only).
    pub fn require(&self, scope: Scope) -> Result<(), ApiError> {
        match self {
            Principal::Key(key) if key.scopes.contains(&scope) => Ok(()),
            Principal::Key(_) => Err(ApiError::not_allowed(format!(
                "this API key lacks the `{}` scope",
                scope.as_str()
            ))),
            Principal::User(user) if scope == Scope::QuotesWrite => {
                Ok(user.role.check_quote_write()?)
            }
            Principal::User(user)
                if scope == Scope::WebhooksWrite
                    && !matches!(user.role, Role::SuperUser | Role::Admin) =>
            {
                Err(ApiError::not_allowed(format!(
                    "webhooks are for Admin and Super User; {} is {}",
                    user.email,
                    user.role.label()
                )))
            }
            Principal::User(_) => Ok(()),
        }
    }

    /// The signed-in user, for endpoints that describe one.
    pub fn user(&self) -> Result<&User, ApiError> {
        match self {
            Principal::User(user) => Ok(user),
            Principal::Key(_) => Err(ApiError::not_allowed(
                "this endpoint describes a signed-in user of the app; API keys have none",
            )),
        }
    }
}

/// Middleware for `/api/v1`: authenticates, applies the key's rate limit
/// (its `X-RateLimit-*` headers go on every keyed response), and hands the
/// [`Principal`] to the handler.
pub async fn middleware(
    State(state): State<AppState>,
    mut request: Request,
    next: Next,
) -> Response {
    let principal = match authenticate(&state, request.headers()).await {
        Ok(principal) => principal,
        Err(error) => return error.into_response(),
    };
    let quota = match &principal {
        Principal::Key(key) => {
            let bucket = rate_limit::key_bucket(&key.id);
            match state.store.count_request(&bucket, key.rate_limit).await {
                Ok(quota) => Some(quota),
                Err(error) => return ApiError::from(error).into_response(),
            }
        }
        Principal::User(_) => None,
    };
    if let Some(quota) = quota.filter(|quota| !quota.allowed) {
        telemetry::rate_limited(telemetry::Limit::ApiKey);
        let limited = toolbridge_protocol::Error::RateLimited {
            retry_after: quota.retry_after,
        };
        let mut response = ApiError::Rule(limited).into_response();
        rate_limit::write_headers(&quota, response.headers_mut());
        return response;
    }
    request.extensions_mut().insert(principal);
    let mut response = next.run(request).await;
    if let Some(quota) = quota {
        rate_limit::write_headers(&quota, response.headers_mut());
    }
    response
}

/// The paths [`middleware`] guards: all of `/api/v1` but the OpenAPI
/// document (see `api::routes`).
const GUARDED_PREFIX: &str = "/api/v1/";

/// OpenAPI: what [`middleware`] answers before any handler runs, on every
/// operation it guards: 401 (no credentials, an unknown or revoked key, an
/// ended session), 403 (a session request from another origin) and 429 (the
/// key's rate limit is used up), and the `X-RateLimit-*` headers it puts on
/// every response to a key (all but the 401s, which have no key).
pub struct KeyedAnswers;

impl Modify for KeyedAnswers {
    fn modify(&self, openapi: &mut OpenApi) {
        each_operation(openapi, |path, operation| {
            if !path.starts_with(GUARDED_PREFIX) {
                return;
            }
            let responses = &mut operation.responses.responses;
            responses.entry("401".to_owned()).or_insert_with(|| {
                problem_response(
                    "no API key or session, an unknown or revoked key, or an ended session",
                )
                .into()
            });
            responses.entry("403".to_owned()).or_insert_with(|| {
                problem_response("a session request that does not come from the app's origin")
                    .into()
            });
            responses.entry("429".to_owned()).or_insert_with(|| {
                problem_response("the key's rate limit is used up until the window resets").into()
            });
            for (status, response) in responses.iter_mut() {
                let RefOr::T(response) = response else {
                    continue;
                };
                if status == "401" {
                    continue;
                }
                for (name, description) in RATE_LIMIT_HEADERS {
                    response.headers.insert(
                        name.to_owned(),
                        HeaderBuilder::new()
                            .schema(
                                ObjectBuilder::new()
                                    .schema_type(Type::Integer)
                                    .minimum(Some(0)),
                            )
                            .description(Some(description))
                            .build(),
                    );
                }
            }
        });
    }
}

/// The headers of [`crate::rate_limit::write_headers`], with what
/// they mean.
const RATE_LIMIT_HEADERS: [(&str, &str); 3] = [
    (
        "X-RateLimit-Limit",
        "requests the key may make per window (sent to API keys only)",
    ),
    (
        "X-RateLimit-Remaining",
        "requests left in this window (sent to API keys only)",
    ),
    (
        "X-RateLimit-Reset",
        "Unix time, in seconds, when the window resets (sent to API keys only)",
    ),
];

/// The caller of a request with these headers.
pub async fn authenticate(state: &AppState, headers: &HeaderMap) -> Result<Principal, ApiError> {
    if let Some(authorization) = headers.get(header::AUTHORIZATION) {
        let token = authorization
            .to_str()
            .ok()
            .and_then(|value| value.strip_prefix("Bearer "))
            .map(str::trim)
            .filter(|token| !token.is_empty())
            .ok_or_else(|| {
                ApiError::unauthenticated("the Authorization header must be `Bearer <API key>`")
            })?;
        return state
            .store
            .api_key(token)
            .await?
            .map(Principal::Key)
            .inspect(noted)
            .ok_or_else(|| {
                ApiError::unauthenticated("the API key is unknown or has been revoked")
            });
    }
    if let Some(token) = session_token(state, headers) {
        if !trusted_origin(state, headers) {
            return Err(ApiError::not_allowed(
                "session requests must come from the app's own origin; other sites and tool pages use an API key or the bridge",
            ));
        }
        return state
            .store
            .session_user(token)
            .await?
            .map(Principal::User)
            .inspect(noted)
            .ok_or_else(|| ApiError::unauthenticated("the session has ended; sign in again"));
    }
    Err(ApiError::unauthenticated(
        "send an API key as `Authorization: Bearer <key>` (create one with `toolbridge keys create`)",
    ))
}

/// Notes an authenticated caller's tenant for the request's log line.
fn noted(principal: &Principal) {
    request_id::note_tenant(principal.tenant_id());
}

/// The session token from the `Cookie` header, if any.
pub fn session_token<'h>(state: &AppState, headers: &'h HeaderMap) -> Option<&'h str> {
    let cookie = session_cookie(state);
    headers
        .get_all(header::COOKIE)
        .iter()
        .filter_map(|value| value.to_str().ok())
        .flat_map(|value| value.split(';'))
        .find_map(|pair| {
            let (name, value) = pair.trim().split_once('=')?;
            (name == cookie && !value.is_empty()).then_some(value)
        })
}

/// Whether a request may use the session: it comes from the app's own
/// origin (as the browser says, or as its public URL names it), or carries
/// an `Origin` the server was told to allow.
pub fn trusted_origin(state: &AppState, headers: &HeaderMap) -> bool {
    same_origin(headers)
        || headers
            .get(header::ORIGIN)
            .and_then(|origin| origin.to_str().ok())
            .is_some_and(|origin| {
                state.allows_origin(origin)
                    || (!headers.contains_key("sec-fetch-site")
                        && state
                            .public_urls()
                            .app_origins()
                            .iter()
                            .any(|app| app == origin))
            })
}

/// Whether a request comes from the app's own origin: `Sec-Fetch-Site:
/// same-origin` from a browser, or (without that header) an `Origin` that
/// names this host.
pub fn same_origin(headers: &HeaderMap) -> bool {
    if let Some(site) = headers.get("sec-fetch-site") {
        return site.as_bytes() == b"same-origin";
    }
    let host = headers.get(header::HOST).and_then(|h| h.to_str().ok());
    let origin = headers.get(header::ORIGIN).and_then(|o| o.to_str().ok());
    match (origin, host) {
        (Some(origin), Some(host)) => {
            origin
                .strip_prefix("http://")
                .or_else(|| origin.strip_prefix("https://"))
                == Some(host)
        }
        _ => false,
    }
}
