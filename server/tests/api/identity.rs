//! Identity tokens over HTTP: signed through the session endpoint and verified with the
//! `jsonwebtoken` crate against the key set the server publishes, refused where they must be,
//! and still verifying across a rotation of the signing key.

use std::collections::HashSet;

use jsonwebtoken::jwk::JwkSet;
use jsonwebtoken::{Algorithm, DecodingKey, Validation};
use reqwest::Method;
use serde_json::{Value, json};
use toolbridge_protocol::identity::{IdentityClaims, JWKS_MAX_AGE_SECS, TOKEN_LIFETIME_SECS};
use toolbridge_server::identity::now_unix;
use toolbridge_server::tools::sites;
use toolbridge_store::{RateLimit, Rotation};

use crate::harness::{Server, call, json};
use crate::tool_settings::{install, manifest};

/// Installs a tool `short` (slug `short`) at `version`, asking for the identity token or not.
async fn tool(server: &Server, short: &str, version: &str, identity: bool) -> String {
    install(
        server,
        &manifest(
            short,
            version,
            &json!({"permissions": {"identity": identity}}),
        ),
    )
    .await
}

/// `POST /api/v1/tools/{slug}/token` as the signed-in user of `cookie`, with `body`.
async fn token(server: &Server, cookie: &str, slug: &str, body: Option<&Value>) -> (u16, Value) {
    call(
        server,
        cookie,
        Method::POST,
        &format!("/api/v1/tools/{slug}/token"),
        body,
    )
    .await
}

/// The published key set, and its `Cache-Control`.
async fn jwks(server: &Server) -> (JwkSet, String) {
    let response = server
        .request(Method::GET, "/.well-known/jwks.json")
        .send()
        .await
        .unwrap();
    assert_eq!(response.status(), 200);
    let cache = response.headers()["cache-control"]
        .to_str()
        .unwrap()
        .to_owned();
    (response.json().await.unwrap(), cache)
}

/// The token's `kid` header.
fn kid(token: &str) -> String {
    jsonwebtoken::decode_header(token).unwrap().kid.unwrap()
}

/// Verifies `token` as a tool's server would: against the key set, for `audience` and `issuer`.
fn verify(
    set: &JwkSet,
    token: &str,
    audience: &str,
    issuer: &str,
) -> jsonwebtoken::errors::Result<IdentityClaims> {
    let header = jsonwebtoken::decode_header(token)?;
    assert_eq!(header.alg, Algorithm::ES256);
    assert_eq!(header.typ.as_deref(), Some("JWT"));
    let jwk = set
        .find(header.kid.as_deref().unwrap_or_default())
        .ok_or(jsonwebtoken::errors::ErrorKind::InvalidKeyFormat)?;
    let key = DecodingKey::from_jwk(jwk)?;
    let mut validation = Validation::new(Algorithm::ES256);
    validation.set_audience(&[audience]);
    validation.set_issuer(&[issuer]);
    validation.set_required_spec_claims(&["exp", "iat", "aud", "iss", "sub"]);
    Ok(jsonwebtoken::decode::<IdentityClaims>(token, &key, &validation)?.claims)
}

fn origin(server: &Server, slug: &str) -> String {
    format!("http://{slug}.{}:{}", sites::DEFAULT_DOMAIN, server.port)
}

fn issuer(server: &Server) -> String {
    format!("http://localhost:{}", server.port)
}

#[tokio::test]
async fn a_token_names_the_user_tenant_and_tool_and_verifies_against_the_published_keys() {
    let server = Server::start().await;
    let slug = tool(&server, "prices", "1.4.2", true).await;
    let cookie = server.sign_in("office@harbour.test").await;
    // Nothing in the body becomes a claim.
    let forged =
        json!({"sub": "someone-else", "tid": "other", "tool": "admin", "exp": 9_999_999_999_u64});
    let (status, answer) = token(&server, &cookie, &slug, Some(&forged)).await;
    assert_eq!(status, 200, "{answer}");
    let text = answer["token"].as_str().unwrap();
    let (set, cache) = jwks(&server).await;
    assert_eq!(cache, "public, max-age=300");
    assert_eq!(set.keys.len(), 1);
    let claims = verify(&set, text, &origin(&server, &slug), &issuer(&server)).unwrap();
    let user = server
        .store
        .user_by_email("office@harbour.test")
        .await
        .unwrap()
        .unwrap();
    assert_eq!(claims.sub, user.user.id);
    assert_eq!(claims.tid, server.tenant().await);
    assert_eq!(claims.role.token(), "office");
    assert_eq!(
        (claims.tool.as_str(), claims.ver.as_str()),
        (slug.as_str(), "1.4.2")
    );
    assert!(claims.lifetime_is_allowed());
    assert_eq!(claims.exp - claims.iat, TOKEN_LIFETIME_SECS);
    assert!(claims.iat.abs_diff(now_unix()) <= 5);
    assert_eq!(answer["expiresAt"], claims.exp);
    assert_eq!(answer["expiresIn"], TOKEN_LIFETIME_SECS);
    // Each token has its own id; a token for another tool's origin, or with its payload
    // changed, does not verify.
    let (_, again) = token(&server, &cookie, &slug, None).await;
    let again = again["token"].as_str().unwrap();
    let second = verify(&set, again, &origin(&server, &slug), &issuer(&server)).unwrap();
    assert_ne!(second.jti, claims.jti);
    assert!(verify(&set, text, &origin(&server, "other"), &issuer(&server)).is_err());
    // The first token's header and signature around the second's claims.
    let mut parts: Vec<&str> = text.split('.').collect();
    parts[1] = again.split('.').nth(1).unwrap();
    let spliced = parts.join(".");
    assert!(verify(&set, &spliced, &origin(&server, &slug), &issuer(&server)).is_err());
    // The set publishes only public halves.
    let published = serde_json::to_value(&set).unwrap();
    let key = &published["keys"][0];
    assert_eq!(
        (&key["kty"], &key["crv"], &key["alg"], &key["use"]),
        (
            &json!("EC"),
            &json!("P-256"),
            &json!("ES256"),
            &json!("sig")
        )
    );
    assert!(key.get("d").is_none(), "{key}");
}

#[tokio::test]
async fn a_tool_without_the_permission_gets_not_allowed_and_an_unlisted_one_not_found() {
    let server = Server::start().await;
    let plain = tool(&server, "plain", "1.0.0", false).await;
    let asks = tool(&server, "asks", "1.0.0", true).await;
    let cookie = server.sign_in("office@harbour.test").await;
    let (status, problem) = token(&server, &cookie, &plain, None).await;
    assert_eq!(status, 403, "{problem}");
    assert_eq!(problem["code"], "NOT_ALLOWED");
    assert!(
        problem["detail"]
            .as_str()
            .unwrap()
            .contains("permissions.identity"),
        "{problem}"
    );
    for slug in ["nosuchtool", "Not-A-Slug"] {
        let (status, problem) = token(&server, &cookie, slug, None).await;
        assert_eq!(status, 404, "{slug}: {problem}");
    }
    // A disabled tool is not listed, so it gets no token either.
    server.store.set_tool_enabled(&asks, false).await.unwrap();
    let (status, _) = token(&server, &cookie, &asks, None).await;
    assert_eq!(status, 404);
    server.store.set_tool_enabled(&asks, true).await.unwrap();
    // Another tenant's user gets a token naming their own tenant.
    let other = server.sign_in("admin@other.test").await;
    let (status, answer) = token(&server, &other, &asks, None).await;
    assert_eq!(status, 200, "{answer}");
    let (set, _) = jwks(&server).await;
    let claims = verify(
        &set,
        answer["token"].as_str().unwrap(),
        &origin(&server, &asks),
        &issuer(&server),
    )
    .unwrap();
    assert_ne!(claims.tid, server.tenant().await);
    assert_eq!(claims.role.token(), "admin");
}

#[tokio::test]
async fn an_api_key_or_no_session_gets_no_token() {
    let server = Server::start().await;
    let slug = tool(&server, "prices", "1.0.0", true).await;
    let key = server
        .key(
            &toolbridge_store::Scope::ALL,
            RateLimit {
                requests: 100,
                window_secs: 60,
            },
        )
        .await;
    let path = format!("/api/v1/tools/{slug}/token");
    let (status, problem) = json(server.post(&key, &path, &json!({})).await).await;
    assert_eq!(status, 403, "{problem}");
    assert_eq!(problem["code"], "NOT_ALLOWED");
    let anonymous = server
        .request(Method::POST, &path)
        .header("sec-fetch-site", "same-origin")
        .send()
        .await
        .unwrap();
    assert_eq!(anonymous.status(), 401);
    // A session cookie sent from another site (a tool's page) does not count.
    let cookie = server.sign_in("office@harbour.test").await;
    let cross = server
        .request(Method::POST, &path)
        .header("cookie", &cookie)
        .header("sec-fetch-site", "cross-site")
        .send()
        .await
        .unwrap();
    assert_eq!(cross.status(), 403);
}

#[tokio::test]
async fn a_rotation_publishes_the_new_key_before_it_signs_and_old_tokens_verify_until_they_expire()
{
    let server = Server::start().await;
    let slug = tool(&server, "prices", "1.0.0", true).await;
    let cookie = server.sign_in("office@harbour.test").await;
    let fresh_token = || async {
        let (_, answer) = token(&server, &cookie, &slug, None).await;
        answer["token"].as_str().unwrap().to_owned()
    };
    let published = || async {
        let (set, _) = jwks(&server).await;
        let kids: HashSet<String> = set
            .keys
            .iter()
            .filter_map(|key| key.common.key_id.clone())
            .collect();
        (set, kids)
    };
    let before = fresh_token().await;
    let old_kid = kid(&before);
    let now = i64::try_from(now_unix()).unwrap();

    // Staged (what `toolbridge signing-keys rotate` does): the new key is in the key set at once,
    // and tokens go on naming the old one until every key set cached before has expired.
    let staged = server
        .store
        .rotate_signing_key(now, Rotation::Staged)
        .await
        .unwrap();
    assert_eq!(
        staged.signs_from,
        now + i64::try_from(JWKS_MAX_AGE_SECS).unwrap()
    );
    let (_, kids) = published().await;
    assert_eq!(
        kids,
        HashSet::from([old_kid.clone(), staged.key.kid.clone()])
    );
    let during = fresh_token().await;
    assert_eq!(kid(&during), old_kid);

    // At once (`--at-once`, for a key that leaked): the newest key signs now.
    let at_once = server
        .store
        .rotate_signing_key(now, Rotation::AtOnce)
        .await
        .unwrap();
    assert_eq!(at_once.signs_from, now);
    let after = fresh_token().await;
    assert_eq!(kid(&after), at_once.key.kid);
    let (set_now, kids) = published().await;
    assert_eq!(
        kids,
        HashSet::from([old_kid, staged.key.kid.clone(), at_once.key.kid.clone()])
    );
    for token in [&before, &during, &after] {
        verify(&set_now, token, &origin(&server, &slug), &issuer(&server)).unwrap();
    }

    // Keys that stopped signing longer ago than a token lives are deleted by the next rotation
    // (dated that much later here), and what they signed no longer verifies.
    let lifetime = i64::try_from(TOKEN_LIFETIME_SECS).unwrap();
    let later = server
        .store
        .rotate_signing_key(now + lifetime + 1, Rotation::Staged)
        .await
        .unwrap();
    let (set, kids) = published().await;
    assert_eq!(
        kids,
        HashSet::from([at_once.key.kid.clone(), later.key.kid.clone()])
    );
    for token in [&before, &during] {
        assert!(verify(&set, token, &origin(&server, &slug), &issuer(&server)).is_err());
    }
    verify(&set, &after, &origin(&server, &slug), &issuer(&server)).unwrap();
}

#[tokio::test]
async fn the_key_set_is_empty_before_the_first_token_and_open_to_anyone() {
    let server = Server::start().await;
    let (set, cache) = jwks(&server).await;
    assert!(set.keys.is_empty());
    assert_eq!(cache, "public, max-age=300");
}
