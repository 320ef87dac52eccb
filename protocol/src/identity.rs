//! The identity token: a JWT the platform signs about the signed-in user, for a tool to show its
//! own server who the user and tenant are.
//!
//! A tool whose manifest asks for `permissions.identity` calls `bridge.auth.getToken()`; the host
//! asks the server for a token for that tool, and the server alone chooses every claim
//! ([`IdentityClaims`]): nothing the tool sends becomes one. The token is a compact JWS signed
//! with ES256 ([`ALGORITHM`]) by a key whose public half the server publishes at [`JWKS_PATH`];
//! the vendor's server verifies it there with any JOSE library, checking `aud` (the tool's
//! origin) and `iss` (the app's public URL).
//!
//! A token lives [`TOKEN_LIFETIME_SECS`] at most. A signing key retired by a rotation stays
//! published for as long as a token it signed can live, then goes.

use serde::{Deserialize, Serialize};

use crate::context::Role;

/// The signature algorithm, as the token's header and the published keys name it.
pub const ALGORITHM: &str = "ES256";

/// The token's `typ` header.
pub const TOKEN_TYPE: &str = "JWT";

/// The longest a token lives, in seconds: its `exp` is at most this after its `iat`. Also how
/// long a retired signing key stays published, so that every token it signed still verifies
/// until it expires.
pub const TOKEN_LIFETIME_SECS: u64 = 300;

/// Where the server publishes its public signing keys (a JSON Web Key Set), on the app's
/// public URL.
pub const JWKS_PATH: &str = "/.well-known/jwks.json";

/// How long a client may cache the published keys, in seconds: no longer than a retired key
/// stays published, so a cached set never holds a key longer than the server does by more
/// than this.
pub const JWKS_MAX_AGE_SECS: u64 = TOKEN_LIFETIME_SECS;

/// How long before its expiry bridge.js stops handing out a cached token and asks for a new
/// one, in seconds: so a token a tool sends is good for at least this long.
pub const REFRESH_BEFORE_EXPIRY_SECS: u64 = 30;

// A cached key set never outlives a retired key by more than its own age, and a kept token is
// handed out for some of its life.
const _: () = assert!(JWKS_MAX_AGE_SECS <= TOKEN_LIFETIME_SECS);
const _: () = assert!(REFRESH_BEFORE_EXPIRY_SECS < TOKEN_LIFETIME_SECS);

/// The public half of a signing key as the key set at [`JWKS_PATH`] publishes it: the JSON Web
/// Key `jwk` (`kty`, `crv`, `x`, `y`) with the key's id as `kid`, [`ALGORITHM`] as `alg` and
/// `use` `sig`. A `jwk` that is not an object is given back as it is.
pub fn published_jwk(mut jwk: serde_json::Value, kid: &str) -> serde_json::Value {
    if let serde_json::Value::Object(fields) = &mut jwk {
        fields.insert("kid".to_owned(), kid.into());
        fields.insert("alg".to_owned(), ALGORITHM.into());
        fields.insert("use".to_owned(), "sig".into());
    }
    jwk
}

/// The claims of an identity token, every one chosen by the server.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct IdentityClaims {
    /// The issuer: the app's public URL (`https://app.example.com`), without a trailing `/`.
    pub iss: String,
    /// The audience: the tool's origin (`https://estimator.tools.example.com`).
    pub aud: String,
    /// The subject: the signed-in user's id.
    pub sub: String,
    /// The user's tenant's id.
    pub tid: String,
    /// The user's role (`super_user`, `admin`, `office`, `field`).
    pub role: Role,
    /// The tool's slug.
    pub tool: String,
    /// The tool's installed version (its manifest's `version`).
    pub ver: String,
    /// Issued at, in Unix seconds.
    pub iat: u64,
    /// Expires at, in Unix seconds: at most [`TOKEN_LIFETIME_SECS`] after `iat`.
    pub exp: u64,
    /// The token's own id: a random UUID.
    pub jti: String,
}

impl IdentityClaims {
    /// Whether the token's lifetime keeps to the rule: issued no later than it expires, and
    /// living at most [`TOKEN_LIFETIME_SECS`].
    pub fn lifetime_is_allowed(&self) -> bool {
        self.iat <= self.exp && self.exp - self.iat <= TOKEN_LIFETIME_SECS
    }
}

/// The answer to `auth.getToken` on the wire, and of the server's token endpoint.
/// bridge.js hands a tool only the `token`, and keeps the rest to know when to ask again.
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct IdentityToken {
    /// The compact JWS (`header.payload.signature`).
    pub token: String,
    /// When it expires, in Unix seconds (its `exp` claim).
    pub expires_at: u64,
    /// How many seconds it lives from when it was issued: for a client whose own clock may
    /// differ from the server's.
    pub expires_in: u64,
}

#[cfg(test)]
mod tests {
    use super::*;

    fn claims(iat: u64, exp: u64) -> IdentityClaims {
        IdentityClaims {
            iss: "https://app.example.com".to_owned(),
            aud: "https://estimator.tools.example.com".to_owned(),
            sub: "user-1".to_owned(),
            tid: "tenant-1".to_owned(),
            role: Role::Office,
            tool: "estimator".to_owned(),
            ver: "1.2.0".to_owned(),
            iat,
            exp,
            jti: "0b8f6c1e-5d8a-4e43-9a3c-0f1d7b2a9e11".to_owned(),
        }
    }

    #[test]
    fn a_token_lives_five_minutes_at_most() {
        assert!(claims(1_000, 1_300).lifetime_is_allowed());
        assert!(claims(1_000, 1_000).lifetime_is_allowed());
        assert!(!claims(1_000, 1_301).lifetime_is_allowed());
        assert!(!claims(1_000, 999).lifetime_is_allowed());
    }

    #[test]
    fn claims_and_the_answer_have_their_wire_names() {
        let json = serde_json::to_value(claims(1, 2)).unwrap();
        let mut names: Vec<&str> = json
            .as_object()
            .unwrap()
            .keys()
            .map(String::as_str)
            .collect();
        names.sort_unstable();
        assert_eq!(
            names,
            [
                "aud", "exp", "iat", "iss", "jti", "role", "sub", "tid", "tool", "ver"
            ]
        );
        assert_eq!(json["role"], "office");
        let answer = IdentityToken {
            token: "a.b.c".to_owned(),
            expires_at: 1_300,
            expires_in: 300,
        };
        assert_eq!(
            serde_json::to_value(answer).unwrap(),
            serde_json::json!({"token": "a.b.c", "expiresAt": 1_300, "expiresIn": 300})
        );
    }
}
