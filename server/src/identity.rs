//! Identity tokens (`toolbridge_protocol::identity`): `POST /api/v1/tools/{slug}/token`, which
//! the host module calls with the page's session when a tool asks `bridge.auth.getToken()`, and
//! `GET /.well-known/jwks.json`, the public keys a tool's own server verifies them with.
//!
//! Every claim comes from the session and the installed tool; the request's body is not read.
//! The tokens are ES256 JWTs, signed by `jsonwebtoken` with the store's active key
//! ([`toolbridge_store::Store::signing_key`]).

use std::time::{SystemTime, UNIX_EPOCH};

use axum::extract::State;
use axum::http::{HeaderValue, header};
use axum::response::{IntoResponse, Response};
use axum::{Extension, Json};
use jsonwebtoken::{Algorithm, EncodingKey, Header};
use serde::Serialize;
use serde_json::Value;
use toolbridge_protocol::identity::{
    IdentityClaims, IdentityToken, JWKS_MAX_AGE_SECS, TOKEN_LIFETIME_SECS, TOKEN_TYPE,
};
use toolbridge_protocol::manifest::ToolManifest;
use toolbridge_protocol::problem::Problem;
use toolbridge_store::{SigningKey, User};

use crate::app::AppState;
use crate::auth::Principal;
use crate::error::ApiError;
use crate::extract::PathParam;
use crate::tools::sites::read_folder;

/// Now, in Unix seconds (the clock a token's `iat` and `exp` are read on).
pub fn now_unix() -> u64 {
    SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .map_or(0, |since| since.as_secs())
}

/// [`now_unix`] as the store counts it.
fn store_now(now: u64) -> i64 {
    i64::try_from(now).unwrap_or(i64::MAX)
}

/// `POST /api/v1/tools/{slug}/token`: an identity token for the signed-in user, for the tool.
///
/// For the host module, with the page's session: an API key has no user and gets 403. The tool
/// must be one the app lists (installed and enabled, or served live with `--dev-tool`) and its
/// manifest must ask for `permissions.identity`. The server chooses every claim: the app's public
/// URL as `iss`, the tool's origin as `aud`, the user, tenant and role, the tool's slug and
/// version; the token lives 300 seconds. A request body, if any, is not read.
#[utoipa::path(post, path = "/api/v1/tools/{slug}/token", tag = "session", operation_id = "issueToolToken",
    params(("slug" = String, Path, description = "the tool's slug")),
    responses(
        (status = 200, body = IdentityToken, description = "a signed token, its expiry in Unix seconds and its lifetime in seconds"),
        (status = 403, description = "an API key, which has no user; a session request from another origin; or a tool whose manifest does not ask for `permissions.identity` (`NOT_ALLOWED`)", body = Problem, content_type = "application/problem+json"),
        (status = 404, description = "no tool the app lists has this slug", body = Problem, content_type = "application/problem+json")),
    security(("session" = [])))]
pub async fn token(
    State(state): State<AppState>,
    Extension(principal): Extension<Principal>,
    PathParam(slug): PathParam,
) -> Result<Json<IdentityToken>, ApiError> {
    let user = principal.user()?;
    let manifest = listed_manifest(&state, &slug).await?;
    if !manifest.permissions.identity {
        return Err(ApiError::not_allowed(format!(
            "the tool {slug} does not ask for permissions.identity in its manifest, so it gets no identity token"
        )));
    }
    mint(&state, user, &slug, &manifest).await.map(Json)
}

/// A new identity token for `user`, for the tool `slug` whose manifest is `manifest` (the caller
/// has checked that it asks for `permissions.identity`): the one way the server makes one, for
/// the token endpoint and for `{{token}}` in the server's fetch.
pub async fn mint(
    state: &AppState,
    user: &User,
    slug: &str,
    manifest: &ToolManifest,
) -> Result<IdentityToken, ApiError> {
    let now = now_unix();
    let key = state.store.signing_key(store_now(now)).await?;
    let claims = IdentityClaims {
        iss: state.public_urls().app_origin(),
        aud: state.tool_sites.origin(slug),
        sub: user.id.clone(),
        tid: user.tenant_id.clone(),
        role: user.role,
        tool: slug.to_owned(),
        ver: manifest.version.clone(),
        iat: now,
        exp: now + TOKEN_LIFETIME_SECS,
        jti: uuid::Uuid::new_v4().to_string(),
    };
    Ok(IdentityToken {
        token: sign(&key, &claims)?,
        expires_at: claims.exp,
        expires_in: TOKEN_LIFETIME_SECS,
    })
}

/// The manifest of the tool `slug` as the app lists it (`GET /api/tools`): a folder served live
/// first, then an installed tool that is enabled; `NOT_FOUND` otherwise.
pub async fn listed_manifest(state: &AppState, slug: &str) -> Result<ToolManifest, ApiError> {
    let not_found = || ApiError::not_found(format!("no tool the app lists has the slug {slug:?}"));
    if let Some(dev) = state.tool_sites.dev_tool(slug) {
        let folder = read_folder(dev.dir.clone())
            .await
            .map_err(|_| not_found())?;
        return Ok(folder.manifest().clone());
    }
    match state.store.tool(slug).await? {
        Some(tool) if tool.enabled => Ok(tool.manifest),
        _ => Err(not_found()),
    }
}

/// The compact JWS of `claims`, signed with `key`: header `alg` ES256, `typ` JWT and the key's
/// `kid`.
pub fn sign(key: &SigningKey, claims: &IdentityClaims) -> Result<String, ApiError> {
    let mut header = Header::new(Algorithm::ES256);
    header.typ = Some(TOKEN_TYPE.to_owned());
    header.kid = Some(key.kid.clone());
    let encoding = EncodingKey::from_ec_der(key.private_key.pkcs8_der());
    jsonwebtoken::encode(&header, claims, &encoding)
        .map_err(|error| ApiError::internal("signing an identity token", error))
}

/// The published public keys: a JSON Web Key Set.
#[derive(Debug, Clone, Serialize, utoipa::ToSchema)]
pub struct KeySet {
    /// The keys that verify tokens now, newest first: the one that signs, and those retired
    /// less than a token's lifetime ago. Empty until the first token is signed.
    #[schema(value_type = Vec<PublishedKey>)]
    pub keys: Vec<Value>,
}

/// One published key, a P-256 public key as a JSON Web Key (RFC 7517).
#[derive(Debug, Clone, Serialize, utoipa::ToSchema)]
pub struct PublishedKey {
    /// `EC`.
    pub kty: String,
    /// `P-256`.
    pub crv: String,
    /// The point's x coordinate, base64url.
    pub x: String,
    /// The point's y coordinate, base64url.
    pub y: String,
    /// The key's id, as a token's `kid` header names it.
    pub kid: String,
    /// `ES256`.
    pub alg: String,
    /// `sig`.
    #[serde(rename = "use")]
    pub key_use: String,
}

/// `GET /.well-known/jwks.json`: the public keys that verify identity tokens.
///
/// No authentication: a tool's own server fetches it to verify the tokens its tool sends. It may
/// cache the set for 300 seconds, and should fetch it again when a token names a `kid` it lacks.
#[utoipa::path(get, path = "/.well-known/jwks.json", tag = "identity", operation_id = "jwks",
    responses((status = 200, body = KeySet, description = "the published keys",
        headers(("Cache-Control" = String, description = "`public, max-age=300`")))))]
pub async fn jwks(State(state): State<AppState>) -> Result<Response, ApiError> {
    let keys = state
        .store
        .published_signing_keys(store_now(now_unix()))
        .await?;
    let mut response = Json(KeySet { keys }).into_response();
    if let Ok(value) = HeaderValue::from_str(&format!("public, max-age={JWKS_MAX_AGE_SECS}")) {
        response.headers_mut().insert(header::CACHE_CONTROL, value);
    }
    Ok(response)
}
