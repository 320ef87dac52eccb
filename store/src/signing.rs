//! The keys identity tokens are signed with (`toolbridge_protocol::identity`).
//!
//! Every instance signs with the one active key, which lives in the database: the first instance
//! that needs one makes it ([`Store::signing_key`]; two that make one at once keep one, as the
//! partial unique index on the active key settles it), and [`Store::rotate_signing_key`] retires
//! it for a new one. A retired key stays published ([`Store::published_signing_keys`]) for
//! [`TOKEN_LIFETIME_SECS`], as long as a token it signed can live, and a later rotation deletes
//! it after that.
//!
//! Times are Unix seconds on the caller's clock (the `now` of each call), the clock the tokens'
//! `iat` and `exp` are read on; a test passes any moment it needs.
//!
//! A private key leaves the store only as a [`PrivateKey`], whose `Debug` shows nothing of it.

use std::fmt;

use p256::SecretKey;
use p256::pkcs8::EncodePrivateKey;
use serde_json::Value;
use toolbridge_protocol::identity::{ALGORITHM, TOKEN_LIFETIME_SECS, published_jwk};

use crate::db::{Turn, sql};
use crate::util::random_hex;
use crate::{Error, Store};

/// Random bytes of a key's id (shown as hex).
const KID_BYTES: usize = 12;

/// The columns of a key, in [`KeyRow`]'s order.
const KEY_COLUMNS: &str = "kid, algorithm, private_key, public_jwk, created_at, retired_at";

/// A row of [`KEY_COLUMNS`].
type KeyRow = (String, String, Vec<u8>, String, i64, Option<i64>);

/// A private signing key: the PKCS#8 DER of a P-256 key. Its `Debug` is redacted, so a key in a
/// logged value shows nothing of itself.
#[derive(Clone, PartialEq, Eq)]
pub struct PrivateKey(Vec<u8>);

impl PrivateKey {
    /// The PKCS#8 DER bytes, for the signer.
    pub fn pkcs8_der(&self) -> &[u8] {
        &self.0
    }
}

impl fmt::Debug for PrivateKey {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("PrivateKey(<redacted>)")
    }
}

/// A signing key, with its private half: what the server signs with.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SigningKey {
    /// The key's id, in a token's `kid` header and in the published key set.
    pub kid: String,
    /// The JOSE algorithm (`ES256`).
    pub algorithm: String,
    /// The private half.
    pub private_key: PrivateKey,
    /// The public half as a JSON Web Key (`kty`, `crv`, `x`, `y`, `kid`, `alg`, `use`).
    pub public_jwk: Value,
    /// When it was made, in Unix seconds.
    pub created_at: i64,
    /// When a rotation retired it, in Unix seconds; `None` while it signs.
    pub retired_at: Option<i64>,
}

/// A signing key as an operator sees it (`toolbridge signing-keys list`): never its private half.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SigningKeyInfo {
    /// The key's id.
    pub kid: String,
    /// The JOSE algorithm (`ES256`).
    pub algorithm: String,
    /// When it was made, in Unix seconds.
    pub created_at: i64,
    /// When a rotation retired it, in Unix seconds; `None` while it signs.
    pub retired_at: Option<i64>,
    /// Whether the key set publishes it now: it signs, or it was retired at most
    /// [`TOKEN_LIFETIME_SECS`] ago.
    pub published: bool,
}

/// Whether a key retired at `retired_at` is still published at `now`: a token it signed before
/// its retirement may still be valid.
fn is_published(retired_at: Option<i64>, now: i64) -> bool {
    retired_at.is_none_or(|retired| retired >= now - lifetime())
}

/// [`TOKEN_LIFETIME_SECS`] as a whole number of the database's kind.
fn lifetime() -> i64 {
    i64::try_from(TOKEN_LIFETIME_SECS).unwrap_or(i64::MAX)
}

fn key_from_row(row: KeyRow) -> Result<SigningKey, Error> {
    let (kid, algorithm, private_key, public_jwk, created_at, retired_at) = row;
    let public_jwk = serde_json::from_str(&public_jwk)
        .map_err(|error| Error::corrupt_because(format!("public key of {kid}"), error))?;
    Ok(SigningKey {
        kid,
        algorithm,
        private_key: PrivateKey(private_key),
        public_jwk,
        created_at,
        retired_at,
    })
}

/// A new P-256 key, made at `now`, with a random id.
fn new_key(now: i64) -> Result<SigningKey, Error> {
    let secret = SecretKey::random(&mut rand::rngs::OsRng);
    let der = secret
        .to_pkcs8_der()
        .map_err(|error| Error::KeyGeneration(error.to_string().into()))?;
    let kid = random_hex(KID_BYTES);
    let public_jwk = published_jwk(
        serde_json::to_value(secret.public_key().to_jwk())
            .map_err(Error::encoding("a public key"))?,
        &kid,
    );
    Ok(SigningKey {
        kid,
        algorithm: ALGORITHM.to_owned(),
        private_key: PrivateKey(der.as_bytes().to_vec()),
        public_jwk,
        created_at: now,
        retired_at: None,
    })
}

/// `INSERT`s `key` as the active key unless another one is active already.
const INSERT_KEY: &str = "INSERT INTO signing_keys \
    (kid, algorithm, private_key, public_jwk, created_at, retired_at) \
    VALUES ($1, $2, $3, $4, $5, NULL) ON CONFLICT DO NOTHING";

impl Store {
    /// The key that signs now: the active one, made at `now` if there is none yet. Instances
    /// that make the first key at the same moment all get the one that was stored.
    pub async fn signing_key(&self, now: i64) -> Result<SigningKey, Error> {
        if let Some(key) = self.active_signing_key().await? {
            return Ok(key);
        }
        let key = new_key(now)?;
        let public_jwk = key.public_jwk.to_string();
        {
            let _turn = self.write_turn().await;
            sql(INSERT_KEY)
                .bind(&key.kid)
                .bind(key.algorithm.as_str())
                .bind(key.private_key.pkcs8_der())
                .bind(public_jwk)
                .bind(now)
                .execute(&self.pool)
                .await?;
        }
        self.active_signing_key()
            .await?
            .ok_or_else(|| Error::corrupt("the active signing key vanished as it was made"))
    }

    /// The active key, if one has been made.
    async fn active_signing_key(&self) -> Result<Option<SigningKey>, Error> {
        let row: Option<KeyRow> = sql(format!(
            "SELECT {KEY_COLUMNS} FROM signing_keys WHERE retired_at IS NULL AND algorithm = $1"
        ))
        .bind(ALGORITHM)
        .fetch_optional(&self.pool)
        .await?;
        row.map(key_from_row).transpose()
    }

    /// Retires the active key at `now` (it stays published for [`TOKEN_LIFETIME_SECS`]) and
    /// makes a new one that signs from then on; keys retired longer ago than that are deleted,
    /// as no token they signed is valid any more. Returns the new key.
    pub async fn rotate_signing_key(&self, now: i64) -> Result<SigningKey, Error> {
        let key = new_key(now)?;
        let public_jwk = key.public_jwk.to_string();
        let mut tx = self.begin_write().await?;
        tx.take_turn(Turn::SigningKeys).await?;
        sql("DELETE FROM signing_keys WHERE retired_at IS NOT NULL AND retired_at < $1")
            .bind(now - lifetime())
            .execute(&mut *tx)
            .await?;
        sql("UPDATE signing_keys SET retired_at = $1 WHERE retired_at IS NULL")
            .bind(now)
            .execute(&mut *tx)
            .await?;
        sql(INSERT_KEY)
            .bind(&key.kid)
            .bind(key.algorithm.as_str())
            .bind(key.private_key.pkcs8_der())
            .bind(public_jwk)
            .bind(now)
            .execute(&mut *tx)
            .await?;
        tx.commit().await?;
        Ok(key)
    }

    /// Every stored key, newest first, as an operator sees it at `now`.
    pub async fn signing_keys(&self, now: i64) -> Result<Vec<SigningKeyInfo>, Error> {
        let rows: Vec<(String, String, i64, Option<i64>)> = sql(
            "SELECT kid, algorithm, created_at, retired_at FROM signing_keys \
             ORDER BY created_at DESC, retired_at IS NULL DESC, kid",
        )
        .fetch_all(&self.pool)
        .await?;
        Ok(rows
            .into_iter()
            .map(|(kid, algorithm, created_at, retired_at)| SigningKeyInfo {
                kid,
                algorithm,
                created_at,
                retired_at,
                published: is_published(retired_at, now),
            })
            .collect())
    }

    /// The public keys published at `now`, as JSON Web Keys, newest first: the active key and
    /// those retired at most [`TOKEN_LIFETIME_SECS`] before `now`. Makes no key: before the
    /// first token there is nothing to publish.
    pub async fn published_signing_keys(&self, now: i64) -> Result<Vec<Value>, Error> {
        let rows: Vec<KeyRow> = sql(format!(
            "SELECT {KEY_COLUMNS} FROM signing_keys \
             WHERE retired_at IS NULL OR retired_at >= $1 \
             ORDER BY created_at DESC, retired_at IS NULL DESC, kid"
        ))
        .bind(now - lifetime())
        .fetch_all(&self.pool)
        .await?;
        rows.into_iter()
            .map(|row| key_from_row(row).map(|key| key.public_jwk))
            .collect()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_private_key_never_shows_in_debug_output() {
        let key = new_key(1_000).unwrap();
        let shown = format!("{key:?}");
        assert!(shown.contains("PrivateKey(<redacted>)"), "{shown}");
        let der = key.private_key.pkcs8_der();
        assert!(der.len() > 32);
        // Neither the bytes nor any run of them as numbers appear.
        let bytes = format!("{:?}", &der[..8]);
        assert!(!shown.contains(&bytes[1..bytes.len() - 1]), "{shown}");
    }

    #[test]
    fn a_new_key_is_a_p256_jwk_with_its_id() {
        let key = new_key(1_000).unwrap();
        let jwk = &key.public_jwk;
        assert_eq!(jwk["kty"], "EC");
        assert_eq!(jwk["crv"], "P-256");
        assert_eq!(jwk["alg"], "ES256");
        assert_eq!(jwk["use"], "sig");
        assert_eq!(jwk["kid"], key.kid.as_str());
        assert_eq!(jwk["x"].as_str().map(str::len), Some(43));
        assert_eq!(jwk["y"].as_str().map(str::len), Some(43));
        assert!(jwk.get("d").is_none(), "no private part: {jwk}");
        assert_ne!(new_key(1_000).unwrap().kid, key.kid);
    }

    #[test]
    fn a_retired_key_is_published_for_a_tokens_lifetime() {
        assert!(is_published(None, 10_000));
        assert!(is_published(Some(10_000), 10_000 + lifetime()));
        assert!(!is_published(Some(10_000), 10_001 + lifetime()));
    }
}
