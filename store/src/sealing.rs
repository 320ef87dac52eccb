//! Secrets at rest: the values the server must read back in the clear (tools' secret settings,
//! webhook endpoints' signing secrets, the private halves of the identity-token signing keys)
//! are sealed with AES-256-GCM under a key the operator keeps outside the database
//! (`--secrets-key-file`), so that a copy of the database or of a backup does not give them away.
//!
//! A sealed value is the nonce (12 random bytes) followed by the ciphertext and its tag, and is
//! bound to where it is stored (its table, and the row's identity) by the authenticated data: a
//! value copied into another row does not open there. Each row names the key that sealed it by
//! the key's id (`sealed_with`), a digest of the key that says which key it was and nothing of
//! it; a row with no id holds its value as it was given, from before a key was configured.

use std::collections::BTreeMap;
use std::fmt;
use std::sync::Arc;

use rand::RngCore;
use rand::rngs::OsRng;
use ring::aead::{AES_256_GCM, Aad, LessSafeKey, NONCE_LEN, Nonce, UnboundKey};

use crate::db::{Arg, Tx, sql};
use crate::util::{hex, sha256};
use crate::{Error, Store};

/// Bytes of a secrets key.
pub const SECRETS_KEY_BYTES: usize = 32;

/// The key secrets are sealed with at rest. Its `Debug` shows only its id.
pub struct SecretsKey {
    key: LessSafeKey,
    id: String,
}

impl fmt::Debug for SecretsKey {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("SecretsKey")
            .field("id", &self.id)
            .finish_non_exhaustive()
    }
}

impl SecretsKey {
    /// The key written as [`SECRETS_KEY_BYTES`] bytes of hex (a key file's contents; white space
    /// around it is ignored), or what is wrong with the text. The message never repeats the text.
    pub fn from_hex(text: &str) -> Result<SecretsKey, String> {
        let text = text.trim();
        let digits = text.chars().count();
        if digits != SECRETS_KEY_BYTES * 2 {
            return Err(format!(
                "a secrets key is {} hex digits ({SECRETS_KEY_BYTES} bytes), not {digits} \
                 characters; make one with `toolbridge secrets-key generate`",
                SECRETS_KEY_BYTES * 2
            ));
        }
        let mut bytes = [0_u8; SECRETS_KEY_BYTES];
        for (at, byte) in bytes.iter_mut().enumerate() {
            *byte = text
                .get(at * 2..at * 2 + 2)
                .and_then(|pair| u8::from_str_radix(pair, 16).ok())
                .ok_or_else(|| {
                    format!(
                        "a secrets key is hex digits only (0-9, a-f), and character {} or {} \
                         is not one",
                        at * 2 + 1,
                        at * 2 + 2
                    )
                })?;
        }
        SecretsKey::from_bytes(&bytes)
    }

    /// A new random key, and its text (hex) for a key file.
    #[must_use]
    pub fn generate() -> String {
        let mut bytes = [0_u8; SECRETS_KEY_BYTES];
        OsRng.fill_bytes(&mut bytes);
        hex(bytes)
    }

    fn from_bytes(bytes: &[u8; SECRETS_KEY_BYTES]) -> Result<SecretsKey, String> {
        let key = UnboundKey::new(&AES_256_GCM, bytes)
            .map_err(|_| "the secrets key cannot be used with AES-256-GCM".to_owned())?;
        let mut tagged = b"toolbridge secrets key\0".to_vec();
        tagged.extend_from_slice(bytes);
        let id = hex(&sha256(&tagged)[..8]);
        Ok(SecretsKey {
            key: LessSafeKey::new(key),
            id,
        })
    }

    /// The key's id: 16 hex digits of a digest of it, which rows sealed with it name.
    #[must_use]
    pub fn id(&self) -> &str {
        &self.id
    }

    /// `plain` sealed for the place `bound_to` names (table and row).
    pub(crate) fn seal(&self, bound_to: &Place<'_>, plain: &[u8]) -> Result<Vec<u8>, Error> {
        let mut nonce = [0_u8; NONCE_LEN];
        OsRng.fill_bytes(&mut nonce);
        let mut sealed = Vec::with_capacity(NONCE_LEN + plain.len() + AES_256_GCM.tag_len());
        sealed.extend_from_slice(&nonce);
        let mut body = plain.to_vec();
        self.key
            .seal_in_place_append_tag(
                Nonce::assume_unique_for_key(nonce),
                Aad::from(bound_to.bytes()),
                &mut body,
            )
            .map_err(|_| Error::Sealing(format!("{bound_to} could not be sealed")))?;
        sealed.extend_from_slice(&body);
        Ok(sealed)
    }

    /// What [`SecretsKey::seal`] sealed for `bound_to`. A value sealed for another place, with
    /// another key, or changed since is refused.
    pub(crate) fn open(&self, bound_to: &Place<'_>, sealed: &[u8]) -> Result<Vec<u8>, Error> {
        let refused = || {
            Error::Sealing(format!(
                "{bound_to} does not open with key {}: it was changed, or copied from elsewhere",
                self.id
            ))
        };
        let (nonce, body) = sealed
            .split_first_chunk::<NONCE_LEN>()
            .ok_or_else(refused)?;
        let mut body = body.to_vec();
        let plain = self
            .key
            .open_in_place(
                Nonce::assume_unique_for_key(*nonce),
                Aad::from(bound_to.bytes()),
                &mut body,
            )
            .map_err(|_| refused())?;
        Ok(plain.to_vec())
    }
}

/// Where a sealed value is stored: its table and column, and the values that identify its row.
/// Sealing binds the value to it.
#[derive(Debug, Clone, Copy)]
pub(crate) struct Place<'a> {
    table: &'static str,
    column: &'static str,
    row: &'a [&'a str],
}

impl<'a> Place<'a> {
    /// The secret in `table`'s `column` of the row `row` identifies (in the key's column order).
    pub(crate) fn new(table: &'static str, column: &'static str, row: &'a [&'a str]) -> Self {
        Place { table, column, row }
    }

    fn bytes(&self) -> Vec<u8> {
        let mut bytes = format!("{}.{}", self.table, self.column).into_bytes();
        for part in self.row {
            bytes.push(0);
            bytes.extend_from_slice(part.as_bytes());
        }
        bytes
    }
}

impl fmt::Display for Place<'_> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(
            f,
            "{}.{} of ({})",
            self.table,
            self.column,
            self.row.join(", ")
        )
    }
}

/// How a database keeps its secrets at rest: [`Store::secrets_at_rest`].
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct SecretsAtRest {
    /// How many are kept as they were given (from before a key was configured).
    pub plain: u64,
    /// How many are sealed, by the id of the key that sealed them.
    pub sealed: BTreeMap<String, u64>,
}

impl Store {
    /// How the database's secrets are kept: how many as given, and how many sealed by which key.
    pub async fn secrets_at_rest(&self) -> Result<SecretsAtRest, Error> {
        let counts: Vec<(Option<String>, i64)> = sql("SELECT sealed_with, COUNT(*) FROM (\
               SELECT sealed_with FROM tool_secrets \
               UNION ALL SELECT sealed_with FROM webhook_endpoints \
               UNION ALL SELECT sealed_with FROM signing_keys) s \
             GROUP BY sealed_with")
        .fetch_all(&self.pool)
        .await?;
        let mut at_rest = SecretsAtRest::default();
        for (sealed_with, count) in counts {
            let count = u64::try_from(count).unwrap_or(0);
            match sealed_with {
                None => at_rest.plain += count,
                Some(id) => *at_rest.sealed.entry(id).or_default() += count,
            }
        }
        Ok(at_rest)
    }

    /// The store, keeping its secrets with `key`: every secret it writes from now on is sealed,
    /// and those the database holds as given are sealed now, in one transaction. Refused when the
    /// database holds secrets sealed with another key, or, with no key, sealed at all: a secret
    /// the store could not open would fail later, in the middle of a tool's request.
    pub async fn with_secrets_key(mut self, key: Option<SecretsKey>) -> Result<Store, Error> {
        let at_rest = self.secrets_at_rest().await?;
        at_rest.sealed_only_with(key.as_ref())?;
        if let Some(key) = &key
            && at_rest.plain > 0
        {
            let sealed = reseal_all(&self, None, key).await?;
            tracing::info!(
                sealed,
                key = key.id(),
                "secrets at rest: sealed the secrets kept as given"
            );
        }
        self.secrets_key = key.map(Arc::new);
        Ok(self)
    }

    /// The store sealing its secrets with `new` in place of the key it has (or of none): every
    /// secret the database holds is opened and sealed again with `new`, in one transaction, and
    /// the answer says how many. Refused, with nothing changed, when the database holds secrets
    /// sealed with a key the store does not have, or when `new` is that key. A server still
    /// running with the old key cannot open the secrets afterwards.
    pub async fn rotate_secrets_key(mut self, new: SecretsKey) -> Result<(Store, u64), Error> {
        if self.secrets_key().is_some_and(|old| old.id() == new.id()) {
            return Err(Error::Sealing(format!(
                "key {} is the key the secrets are sealed with already",
                new.id()
            )));
        }
        self.secrets_at_rest()
            .await?
            .sealed_only_with(self.secrets_key())?;
        let sealed = reseal_all(&self, self.secrets_key(), &new).await?;
        self.secrets_key = Some(Arc::new(new));
        Ok((self, sealed))
    }

    /// The key secrets are sealed with, if the store was given one.
    pub(crate) fn secrets_key(&self) -> Option<&SecretsKey> {
        self.secrets_key.as_deref()
    }
}

impl SecretsAtRest {
    /// Refuses secrets sealed with any key but `key` (with none, any sealed secret), saying how
    /// many are sealed with which.
    fn sealed_only_with(&self, key: Option<&SecretsKey>) -> Result<(), Error> {
        let others: Vec<String> = self
            .sealed
            .iter()
            .filter(|(id, _)| key.is_none_or(|key| key.id() != id.as_str()))
            .map(|(id, count)| {
                let secrets = if *count == 1 { "secret" } else { "secrets" };
                format!("{count} {secrets} sealed with key {id}")
            })
            .collect();
        if others.is_empty() {
            return Ok(());
        }
        let given = match key {
            Some(key) => format!("the key given is {}", key.id()),
            None => "no secrets key was given".to_owned(),
        };
        Err(Error::Sealing(format!(
            "the database holds {}, and {given}",
            others.join(" and ")
        )))
    }
}

/// A table that holds secrets.
#[derive(Debug, Clone, Copy)]
enum SecretTable {
    /// Tools' secret settings: text, by tenant, tool and setting.
    ToolSettings,
    /// Webhook endpoints' signing secrets: text, by endpoint.
    WebhookEndpoints,
    /// Signing keys' private halves: bytes, by key id.
    SigningKeys,
}

impl SecretTable {
    const ALL: [SecretTable; 3] = [
        SecretTable::ToolSettings,
        SecretTable::WebhookEndpoints,
        SecretTable::SigningKeys,
    ];

    /// The table, its secret's column, and the columns that identify a row (in [`Place`]'s order).
    fn columns(self) -> (&'static str, &'static str, &'static [&'static str]) {
        match self {
            SecretTable::ToolSettings => (
                "tool_secrets",
                "value",
                &["tenant_id", "slug", "setting_key"],
            ),
            SecretTable::WebhookEndpoints => ("webhook_endpoints", "secret", &["id"]),
            SecretTable::SigningKeys => ("signing_keys", "private_key", &["kid"]),
        }
    }

    /// Seals with `to` each of the table's secrets that is kept as given or sealed with `from`,
    /// in `tx`; how many it sealed.
    async fn reseal(
        self,
        tx: &mut Tx,
        from: Option<&SecretsKey>,
        to: &SecretsKey,
    ) -> Result<u64, Error> {
        let (table, column, ids) = self.columns();
        // Without `from`, `$1` is an id no key has: only the rows kept as given are picked.
        let from_id = from.map_or("", SecretsKey::id);
        let select = sql(format!(
            "SELECT {}, {column}, sealed_with FROM {table} \
             WHERE sealed_with IS NULL OR sealed_with = $1",
            ids.join(", ")
        ))
        .bind(from_id);
        let rows: Vec<(Vec<String>, Stored, Option<String>)> = match self {
            SecretTable::ToolSettings => {
                let rows: Vec<(String, String, String, String, Option<String>)> =
                    select.fetch_all(&mut *tx).await?;
                rows.into_iter()
                    .map(|(tenant, slug, setting, text, sealed_with)| {
                        (vec![tenant, slug, setting], Stored::Text(text), sealed_with)
                    })
                    .collect()
            }
            SecretTable::WebhookEndpoints => {
                let rows: Vec<(String, String, Option<String>)> =
                    select.fetch_all(&mut *tx).await?;
                rows.into_iter()
                    .map(|(id, text, sealed_with)| (vec![id], Stored::Text(text), sealed_with))
                    .collect()
            }
            SecretTable::SigningKeys => {
                let rows: Vec<(String, Vec<u8>, Option<String>)> =
                    select.fetch_all(&mut *tx).await?;
                rows.into_iter()
                    .map(|(kid, bytes, sealed_with)| (vec![kid], Stored::Bytes(bytes), sealed_with))
                    .collect()
            }
        };
        let matches: Vec<String> = ids
            .iter()
            .enumerate()
            .map(|(at, id)| format!("{id} = ${}", at + 3))
            .collect();
        // Only if no one else has sealed it since (another instance starting at the same time).
        let update = format!(
            "UPDATE {table} SET {column} = $1, sealed_with = $2 \
             WHERE {} AND (sealed_with IS NULL OR sealed_with = ${})",
            matches.join(" AND "),
            ids.len() + 3
        );
        let mut sealed = 0;
        for (row, stored, sealed_with) in rows {
            let row: Vec<&str> = row.iter().map(String::as_str).collect();
            let place = Place::new(table, column, &row);
            let resealed = stored.resealed(&place, from, sealed_with.as_deref(), to)?;
            let mut statement = sql(update.as_str()).bind(resealed.arg()).bind(to.id());
            for id in &row {
                statement = statement.bind(*id);
            }
            sealed += statement.bind(from_id).execute(&mut *tx).await?;
        }
        Ok(sealed)
    }
}

/// A secret as a table stores it: text (sealed, as hex) or bytes.
enum Stored {
    Text(String),
    Bytes(Vec<u8>),
}

impl Stored {
    /// The secret opened for `place` (with `from`, if it names the key `sealed_with`) and sealed
    /// with `to`, stored as it was.
    fn resealed(
        self,
        place: &Place<'_>,
        from: Option<&SecretsKey>,
        sealed_with: Option<&str>,
        to: &SecretsKey,
    ) -> Result<Stored, Error> {
        Ok(match self {
            Stored::Text(text) => {
                let plain = open_text(from, place, text, sealed_with)?;
                Stored::Text(seal_text(Some(to), place, &plain)?.0)
            }
            Stored::Bytes(bytes) => {
                let plain = open_bytes(from, place, bytes, sealed_with)?;
                Stored::Bytes(seal_bytes(Some(to), place, &plain)?.0)
            }
        })
    }

    fn arg(&self) -> Arg<'_> {
        match self {
            Stored::Text(text) => Arg::from(text),
            Stored::Bytes(bytes) => Arg::from(bytes.as_slice()),
        }
    }
}

/// Seals with `to`, in one write transaction, every secret kept as given or sealed with `from`;
/// how many.
async fn reseal_all(
    store: &Store,
    from: Option<&SecretsKey>,
    to: &SecretsKey,
) -> Result<u64, Error> {
    let mut tx = store.pool.begin_write().await?;
    let mut sealed = 0;
    for table in SecretTable::ALL {
        sealed += table.reseal(&mut tx, from, to).await?;
    }
    tx.commit().await?;
    Ok(sealed)
}

/// A secret as the database will hold it: sealed with `key` for `place` (as hex), with the key's
/// id; or as given, with none, when there is no key.
pub(crate) fn seal_text(
    key: Option<&SecretsKey>,
    place: &Place<'_>,
    plain: &str,
) -> Result<(String, Option<String>), Error> {
    match key {
        Some(key) => Ok((
            hex(&key.seal(place, plain.as_bytes())?),
            Some(key.id().to_owned()),
        )),
        None => Ok((plain.to_owned(), None)),
    }
}

/// A secret of bytes as the database will hold it: [`seal_text`] without the hex.
pub(crate) fn seal_bytes(
    key: Option<&SecretsKey>,
    place: &Place<'_>,
    plain: &[u8],
) -> Result<(Vec<u8>, Option<String>), Error> {
    match key {
        Some(key) => Ok((key.seal(place, plain)?, Some(key.id().to_owned()))),
        None => Ok((plain.to_vec(), None)),
    }
}

/// The secret the database holds for `place` as `stored`, sealed with the key `sealed_with`
/// names (as hex) or, with none, as given.
pub(crate) fn open_text(
    key: Option<&SecretsKey>,
    place: &Place<'_>,
    stored: String,
    sealed_with: Option<&str>,
) -> Result<String, Error> {
    let Some(sealed_with) = sealed_with else {
        return Ok(stored);
    };
    let sealed = hex::decode(&stored)
        .map_err(|_| Error::Sealing(format!("{place} is not a sealed value")))?;
    let plain = opening_key(key, place, sealed_with)?.open(place, &sealed)?;
    String::from_utf8(plain).map_err(|_| Error::Sealing(format!("{place} is not text once opened")))
}

/// [`open_text`] for a secret of bytes.
pub(crate) fn open_bytes(
    key: Option<&SecretsKey>,
    place: &Place<'_>,
    stored: Vec<u8>,
    sealed_with: Option<&str>,
) -> Result<Vec<u8>, Error> {
    match sealed_with {
        None => Ok(stored),
        Some(sealed_with) => opening_key(key, place, sealed_with)?.open(place, &stored),
    }
}

/// `key`, if it is the one `sealed_with` names.
fn opening_key<'k>(
    key: Option<&'k SecretsKey>,
    place: &Place<'_>,
    sealed_with: &str,
) -> Result<&'k SecretsKey, Error> {
    match key {
        Some(key) if key.id() == sealed_with => Ok(key),
        Some(key) => Err(Error::Sealing(format!(
            "{place} is sealed with key {sealed_with}, and the store has key {}",
            key.id()
        ))),
        None => Err(Error::Sealing(format!(
            "{place} is sealed with key {sealed_with}, and the store was given no secrets key"
        ))),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const KEY: &str = "000102030405060708090a0b0c0d0e0f101112131415161718191a1b1c1d1e1f";

    fn place<'a>(row: &'a [&'a str]) -> Place<'a> {
        Place::new("tool_secrets", "value", row)
    }

    #[test]
    fn a_sealed_value_opens_only_with_its_key_and_in_its_place() {
        let key = SecretsKey::from_hex(KEY).unwrap();
        let here = place(&["t1", "tool", "apiKey"]);
        let sealed = key.seal(&here, b"sk_live_123").unwrap();
        assert_eq!(sealed.len(), NONCE_LEN + 11 + 16);
        assert!(!sealed.windows(11).any(|window| window == b"sk_live_123"));
        assert_eq!(key.open(&here, &sealed).unwrap(), b"sk_live_123");
        // A fresh nonce each time.
        assert_ne!(key.seal(&here, b"sk_live_123").unwrap(), sealed);

        let elsewhere = place(&["t2", "tool", "apiKey"]);
        let refused = key.open(&elsewhere, &sealed).unwrap_err().to_string();
        assert!(refused.contains("(t2, tool, apiKey)"), "{refused}");
        assert!(refused.contains(key.id()), "{refused}");
        let other = SecretsKey::from_hex(&SecretsKey::generate()).unwrap();
        assert_ne!(other.id(), key.id());
        assert!(other.open(&here, &sealed).is_err());
        let mut changed = sealed.clone();
        changed[NONCE_LEN] ^= 1;
        assert!(key.open(&here, &changed).is_err());
        assert!(key.open(&here, &sealed[..5]).is_err());
    }

    #[test]
    fn a_key_is_64_hex_digits_and_a_wrong_one_is_refused_without_repeating_it() {
        let key = SecretsKey::from_hex(&format!("  {KEY}\n")).unwrap();
        assert_eq!(key.id().len(), 16);
        assert_eq!(
            SecretsKey::from_hex(&KEY.to_uppercase()).unwrap().id(),
            key.id()
        );
        assert!(!format!("{key:?}").contains("0001020304"));

        let short = SecretsKey::from_hex("abc123").unwrap_err();
        assert!(
            short.contains("64 hex digits") && short.contains("not 6"),
            "{short}"
        );
        let mut wrong = KEY.to_owned();
        wrong.replace_range(10..11, "g");
        let wrong = SecretsKey::from_hex(&wrong).unwrap_err();
        assert!(wrong.contains("character 11 or 12"), "{wrong}");
        assert!(!wrong.contains("0a0b"), "{wrong}");
        let multibyte = SecretsKey::from_hex(&format!("é{}", &KEY[1..])).unwrap_err();
        assert!(multibyte.contains("character 1 or 2"), "{multibyte}");
        assert_eq!(SecretsKey::generate().len(), 64);
    }
}
