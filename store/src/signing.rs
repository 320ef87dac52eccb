//! The keys identity tokens are signed with (`toolbridge_protocol::identity`).
//!
//! Every instance signs with the same key, which lives in the database: the first instance that
//! needs one makes it ([`Store::signing_key`]; two that make one at once keep one, as the partial
//! unique index on the newest key settles it), and [`Store::rotate_signing_key`] replaces it.
//!
//! A rotation publishes the new key at once but, unless it is [`Rotation::AtOnce`], lets the old
//! one sign for [`JWKS_MAX_AGE_SECS`] more: by the time a token names the new key, every copy of
//! the key set a vendor's server cached before the rotation has expired, so no token ever names
//! a key its verifier has not seen. The old key's `retired_at` is then a moment to come. A retired
//! key stays published ([`Store::published_signing_keys`]) for [`TOKEN_LIFETIME_SECS`] after it
//! stops signing, as long as a token it signed can live, and a later rotation deletes it after
//! that.
//!
//! Times are Unix seconds on the caller's clock (the `now` of each call), the clock the tokens'
//! `iat` and `exp` are read on; a test passes any moment it needs.
//!
//! A private key leaves the store only as a [`PrivateKey`], whose `Debug` shows nothing of it.

use std::fmt;

use p256::SecretKey;
use p256::pkcs8::EncodePrivateKey;
use serde_json::Value;
use toolbridge_protocol::identity::{
    ALGORITHM, JWKS_MAX_AGE_SECS, TOKEN_LIFETIME_SECS, published_jwk,
};

use crate::db::{Turn, sql};
use crate::sealing::{Place, SecretsKey, open_bytes, seal_bytes};
use crate::util::random_hex;
use crate::{Error, Store};

/// Random bytes of a key's id (shown as hex).
const KID_BYTES: usize = 12;

/// The columns of a key, in [`KeyRow`]'s order.
const KEY_COLUMNS: &str =
    "kid, algorithm, private_key, sealed_with, public_jwk, created_at, retired_at";

/// A row of [`KEY_COLUMNS`].
type KeyRow = (
    String,
    String,
    Vec<u8>,
    Option<String>,
    String,
    i64,
    Option<i64>,
);

/// The table and column of a signing key's private half, for sealing.
const PRIVATE_TABLE: &str = "signing_keys";
const PRIVATE_COLUMN: &str = "private_key";

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
    /// When it stops signing, in Unix seconds, set by the rotation that replaces it (a moment
    /// to come while the new key waits to be known); `None` for the newest key.
    pub retired_at: Option<i64>,
}

/// How a rotation replaces the key that signs.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Rotation {
    /// The new key is published at once and signs once [`JWKS_MAX_AGE_SECS`] have passed, so
    /// that every verifier's cached key set has it by then; the old one signs until then.
    Staged,
    /// The new key signs at once: for a key that must not sign another token (one that leaked).
    /// A verifier whose cached key set predates the rotation refuses the new tokens until it
    /// fetches the set again.
    AtOnce,
}

/// What a rotation did: the new key, and when it starts signing.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Rotated {
    /// The new key.
    pub key: SigningKey,
    /// When it starts signing, in Unix seconds: the rotation's own moment when it is
    /// [`Rotation::AtOnce`] or no key signed before it.
    pub signs_from: i64,
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
    /// When it stops signing (or stopped), in Unix seconds; `None` for the newest key.
    pub retired_at: Option<i64>,
    /// Whether it signs the tokens made now.
    pub signs: bool,
    /// Whether the key set publishes it now: it signs or is about to, or it stopped signing at
    /// most [`TOKEN_LIFETIME_SECS`] ago.
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

/// [`JWKS_MAX_AGE_SECS`] as a whole number of the database's kind.
fn max_age() -> i64 {
    i64::try_from(JWKS_MAX_AGE_SECS).unwrap_or(i64::MAX)
}

/// The key a row holds, its private half opened with `sealing` if it was sealed.
fn key_from_row(row: KeyRow, sealing: Option<&SecretsKey>) -> Result<SigningKey, Error> {
    let (kid, algorithm, private_key, sealed_with, public_jwk, created_at, retired_at) = row;
    let public_jwk = serde_json::from_str(&public_jwk)
        .map_err(|error| Error::corrupt_because(format!("public key of {kid}"), error))?;
    let private_key = open_bytes(
        sealing,
        &Place::new(PRIVATE_TABLE, PRIVATE_COLUMN, &[&kid]),
        private_key,
        sealed_with.as_deref(),
    )?;
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

/// `INSERT`s `key` as the newest key unless there is one already.
const INSERT_KEY: &str = "INSERT INTO signing_keys \
    (kid, algorithm, private_key, sealed_with, public_jwk, created_at, retired_at) \
    VALUES ($1, $2, $3, $4, $5, $6, NULL) ON CONFLICT DO NOTHING";

impl Store {
    /// The key that signs at `now`, made then if there is none yet. Instances that make the
    /// first key at the same moment all get the one that was stored.
    pub async fn signing_key(&self, now: i64) -> Result<SigningKey, Error> {
        if let Some(key) = self.signer_at(now).await? {
            return Ok(key);
        }
        let key = new_key(now)?;
        let public_jwk = key.public_jwk.to_string();
        let (private_key, sealed_with) = self.sealed_private_key(&key)?;
        {
            let _turn = self.write_turn().await;
            sql(INSERT_KEY)
                .bind(&key.kid)
                .bind(key.algorithm.as_str())
                .bind(private_key.as_slice())
                .bind(sealed_with)
                .bind(public_jwk)
                .bind(now)
                .execute(&self.pool)
                .await?;
        }
        self.signer_at(now)
            .await?
            .ok_or_else(|| Error::corrupt("the signing key vanished as it was made"))
    }

    /// `key`'s private half as the database will hold it, and the id of the key that sealed it.
    fn sealed_private_key(&self, key: &SigningKey) -> Result<(Vec<u8>, Option<String>), Error> {
        seal_bytes(
            self.secrets_key(),
            &Place::new(PRIVATE_TABLE, PRIVATE_COLUMN, &[&key.kid]),
            key.private_key.pkcs8_der(),
        )
    }

    /// The key that signs at `now`, if one has been made: of the keys a rotation is replacing
    /// but whose time has not yet come, the one that stops soonest (the oldest); otherwise the
    /// newest key.
    async fn signer_at(&self, now: i64) -> Result<Option<SigningKey>, Error> {
        let row: Option<KeyRow> = sql(format!(
            "SELECT {KEY_COLUMNS} FROM signing_keys \
             WHERE algorithm = $1 AND (retired_at IS NULL OR retired_at > $2) \
             ORDER BY retired_at IS NULL, retired_at, created_at LIMIT 1"
        ))
        .bind(ALGORITHM)
        .bind(now)
        .fetch_optional(&self.pool)
        .await?;
        row.map(|row| key_from_row(row, self.secrets_key()))
            .transpose()
    }

    /// Makes a new key at `now` and replaces the one that signs with it, as `rotation` says:
    /// staged, the newest key signs on for [`JWKS_MAX_AGE_SECS`] while the new one becomes
    /// known; at once, every key that signs or waits to stops now. A key stays published for
    /// [`TOKEN_LIFETIME_SECS`] after it stops signing, and keys that stopped longer ago than that
    /// are deleted, as no token they signed is valid any more.
    pub async fn rotate_signing_key(&self, now: i64, rotation: Rotation) -> Result<Rotated, Error> {
        let key = new_key(now)?;
        let public_jwk = key.public_jwk.to_string();
        let (private_key, sealed_with) = self.sealed_private_key(&key)?;
        let mut tx = self.begin_write().await?;
        tx.take_turn(Turn::SigningKeys).await?;
        sql("DELETE FROM signing_keys WHERE retired_at IS NOT NULL AND retired_at < $1")
            .bind(now - lifetime())
            .execute(&mut *tx)
            .await?;
        let signs_from = match rotation {
            Rotation::Staged => {
                let handover = now + max_age();
                let replaced =
                    sql("UPDATE signing_keys SET retired_at = $1 WHERE retired_at IS NULL")
                        .bind(handover)
                        .execute(&mut *tx)
                        .await?;
                if replaced == 0 { now } else { handover }
            }
            Rotation::AtOnce => {
                sql("UPDATE signing_keys SET retired_at = $1 \
                     WHERE retired_at IS NULL OR retired_at > $1")
                .bind(now)
                .execute(&mut *tx)
                .await?;
                now
            }
        };
        sql(INSERT_KEY)
            .bind(&key.kid)
            .bind(key.algorithm.as_str())
            .bind(private_key.as_slice())
            .bind(sealed_with)
            .bind(public_jwk)
            .bind(now)
            .execute(&mut *tx)
            .await?;
        tx.commit().await?;
        Ok(Rotated { key, signs_from })
    }

    /// Every stored key, newest first, as an operator sees it at `now`.
    pub async fn signing_keys(&self, now: i64) -> Result<Vec<SigningKeyInfo>, Error> {
        let signer = self.signer_at(now).await?.map(|key| key.kid);
        let rows: Vec<(String, String, i64, Option<i64>)> = sql(
            "SELECT kid, algorithm, created_at, retired_at FROM signing_keys \
             ORDER BY created_at DESC, retired_at IS NULL DESC, kid",
        )
        .fetch_all(&self.pool)
        .await?;
        Ok(rows
            .into_iter()
            .map(|(kid, algorithm, created_at, retired_at)| SigningKeyInfo {
                signs: signer.as_ref() == Some(&kid),
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
        let rows: Vec<(String, String)> = sql("SELECT kid, public_jwk FROM signing_keys \
             WHERE retired_at IS NULL OR retired_at >= $1 \
             ORDER BY created_at DESC, retired_at IS NULL DESC, kid")
        .bind(now - lifetime())
        .fetch_all(&self.pool)
        .await?;
        rows.into_iter()
            .map(|(kid, public_jwk)| {
                serde_json::from_str(&public_jwk)
                    .map_err(|error| Error::corrupt_because(format!("public key of {kid}"), error))
            })
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
