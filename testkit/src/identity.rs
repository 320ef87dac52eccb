//! Identity tokens signed by a test key: what the server's `POST /api/v1/tools/{slug}/token`
//! answers (`toolbridge_protocol::identity`), with the same crates the server signs with
//! (`jsonwebtoken` on its `RustCrypto` provider, the key made by `p256`).
//!
//! Each memory backend makes its own P-256 key when it is made: the key exists only in memory,
//! for as long as the backend does, and no server trusts it. Its public half is published in the
//! same JSON Web Key Set shape as the server's `/.well-known/jwks.json` ([`TestKey::jwks`]), so a
//! test verifies a token exactly as a tool's own server does.

use std::fmt;
use std::fmt::Write as _;

use jsonwebtoken::{Algorithm, EncodingKey, Header};
use p256::SecretKey;
use p256::pkcs8::EncodePrivateKey;
use rand::RngCore;
use rand::rngs::OsRng;
use serde_json::{Value, json};
use toolbridge_protocol::identity::{IdentityClaims, TOKEN_TYPE, published_jwk};

/// The `kid` of a test key starts with this, so that a token's header says it is a test token.
const KID_PREFIX: &str = "toolbridge-test-";

/// Random bytes of a key's id after the prefix (shown as hex).
const KID_BYTES: usize = 8;

/// A signing key for tests, made in memory; its `Debug` shows nothing of the private half.
#[derive(Clone)]
pub(crate) struct TestKey {
    kid: String,
    /// The PKCS#8 DER of the private key, as the server's signer takes it.
    pkcs8: Vec<u8>,
    /// The public half as a JSON Web Key, with `kid`, `alg` and `use`, as the server publishes it.
    public_jwk: Value,
}

impl fmt::Debug for TestKey {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("TestKey")
            .field("kid", &self.kid)
            .finish_non_exhaustive()
    }
}

impl TestKey {
    /// A new random key. `Err` says what failed: the system's random numbers (in a browser,
    /// `crypto.getRandomValues`) or the key's encoding.
    pub(crate) fn new() -> Result<Self, String> {
        let secret = random_secret()?;
        let pkcs8 = secret
            .to_pkcs8_der()
            .map_err(|error| format!("the test signing key could not be encoded: {error}"))?
            .as_bytes()
            .to_vec();
        let kid = format!("{KID_PREFIX}{}", random_hex(KID_BYTES)?);
        let public_jwk = published_jwk(
            serde_json::to_value(secret.public_key().to_jwk()).map_err(|error| {
                format!("the test signing key's public half could not be written: {error}")
            })?,
            &kid,
        );
        Ok(Self {
            kid,
            pkcs8,
            public_jwk,
        })
    }

    /// The key's id, in a token's `kid` header.
    #[cfg(test)]
    pub(crate) fn kid(&self) -> &str {
        &self.kid
    }

    /// The key set that verifies this key's tokens, shaped as the server's
    /// `/.well-known/jwks.json`: `{"keys": [{kty, crv, x, y, kid, alg, use}]}`.
    pub(crate) fn jwks(&self) -> Value {
        json!({ "keys": [self.public_jwk] })
    }

    /// The compact JWS of `claims`, with the header the server writes: `alg` ES256, `typ` JWT and
    /// this key's `kid`.
    pub(crate) fn sign(&self, claims: &IdentityClaims) -> Result<String, String> {
        let mut header = Header::new(Algorithm::ES256);
        header.typ = Some(TOKEN_TYPE.to_owned());
        header.kid = Some(self.kid.clone());
        jsonwebtoken::encode(&header, claims, &EncodingKey::from_ec_der(&self.pkcs8))
            .map_err(|error| format!("the identity token could not be signed: {error}"))
    }
}

/// A random P-256 private key, drawn without any call that could panic: 32 random bytes are
/// almost surely a valid scalar (one that is zero or at least the curve's order is as likely as
/// guessing a key), and another 32 are drawn if not.
fn random_secret() -> Result<SecretKey, String> {
    for _ in 0..8 {
        let mut seed = [0_u8; 32];
        OsRng
            .try_fill_bytes(&mut seed)
            .map_err(|error| format!("no random numbers for a test signing key: {error}"))?;
        if let Ok(secret) = SecretKey::from_slice(&seed) {
            return Ok(secret);
        }
    }
    Err("no valid test signing key came from the system's random numbers".to_owned())
}

/// `bytes` random bytes as lower-case hex.
fn random_hex(bytes: usize) -> Result<String, String> {
    let mut buffer = vec![0_u8; bytes];
    OsRng
        .try_fill_bytes(&mut buffer)
        .map_err(|error| format!("no random numbers: {error}"))?;
    Ok(buffer.iter().fold(String::new(), |mut hex, byte| {
        let _ = write!(hex, "{byte:02x}");
        hex
    }))
}

/// A random UUID (version 4), as the server's `jti`.
pub(crate) fn random_uuid() -> Result<String, String> {
    let mut bytes = [0_u8; 16];
    OsRng
        .try_fill_bytes(&mut bytes)
        .map_err(|error| format!("no random numbers for a token id: {error}"))?;
    Ok(uuid::Builder::from_random_bytes(bytes)
        .into_uuid()
        .to_string())
}

#[cfg(test)]
mod tests {
    use jsonwebtoken::{DecodingKey, Validation, decode, decode_header, jwk::JwkSet};
    use toolbridge_protocol::context::Role;

    use super::*;

    fn claims(now: u64) -> IdentityClaims {
        IdentityClaims {
            iss: "https://app.example.test".to_owned(),
            aud: "https://prices.tools.example.test".to_owned(),
            sub: "user-1".to_owned(),
            tid: "tenant-1".to_owned(),
            role: Role::Office,
            tool: "prices".to_owned(),
            ver: "1.2.0".to_owned(),
            iat: now,
            exp: now + 300,
            jti: random_uuid().unwrap(),
        }
    }

    #[test]
    fn a_token_verifies_with_the_published_key_set_and_no_other() {
        let key = TestKey::new().unwrap();
        let now = jsonwebtoken::get_current_timestamp();
        let token = key.sign(&claims(now)).unwrap();
        let header = decode_header(&token).unwrap();
        assert_eq!(header.alg, Algorithm::ES256);
        assert_eq!(header.typ.as_deref(), Some("JWT"));
        assert_eq!(header.kid.as_deref(), Some(key.kid()));
        assert!(key.kid().starts_with(KID_PREFIX));

        let set: JwkSet = serde_json::from_value(key.jwks()).unwrap();
        let jwk = set.find(key.kid()).unwrap();
        let mut validation = Validation::new(Algorithm::ES256);
        validation.set_audience(&["https://prices.tools.example.test"]);
        validation.set_issuer(&["https://app.example.test"]);
        let verified =
            decode::<IdentityClaims>(&token, &DecodingKey::from_jwk(jwk).unwrap(), &validation)
                .unwrap();
        assert_eq!(verified.claims, claims_with_jti(now, &verified.claims.jti));

        let other: JwkSet = serde_json::from_value(TestKey::new().unwrap().jwks()).unwrap();
        let stranger = DecodingKey::from_jwk(&other.keys[0]).unwrap();
        assert!(decode::<IdentityClaims>(&token, &stranger, &validation).is_err());
    }

    fn claims_with_jti(now: u64, jti: &str) -> IdentityClaims {
        IdentityClaims {
            jti: jti.to_owned(),
            ..claims(now)
        }
    }

    #[test]
    fn the_key_set_has_the_servers_fields_and_no_private_part() {
        let key = TestKey::new().unwrap();
        let jwks = key.jwks();
        let jwk = jwks["keys"][0].as_object().unwrap();
        let mut names: Vec<&str> = jwk.keys().map(String::as_str).collect();
        names.sort_unstable();
        assert_eq!(names, ["alg", "crv", "kid", "kty", "use", "x", "y"]);
        assert_eq!(jwk["alg"], "ES256");
        assert_eq!(jwk["crv"], "P-256");
        assert!(!format!("{key:?}").contains(&format!("{:?}", key.pkcs8)));
    }

    #[test]
    fn token_ids_are_random_version_4_uuids() {
        let (a, b) = (random_uuid().unwrap(), random_uuid().unwrap());
        assert_ne!(a, b);
        assert_eq!(a.len(), 36);
        assert_eq!(&a[14..15], "4");
    }
}
