//! Users, passwords (argon2id), sessions and API keys.
//!
//! Secrets are never stored: sessions keep the SHA-256 of their token, API
//! keys the SHA-256 of their secret, users an argon2id hash.

use std::sync::OnceLock;

use argon2::Argon2;
use argon2::password_hash::{PasswordHash, PasswordHasher, PasswordVerifier, SaltString};
use rand::RngCore;
use rand::rngs::OsRng;
use subtle::ConstantTimeEq;
use toolbridge_protocol::catalog::id_key;
use toolbridge_protocol::context::{BridgeContextDto, Role};

use crate::db::sql;
use crate::util::{hex, is_hex, new_id, now_iso, now_unix, random_hex, sha256};
use crate::{ApiKey, Error, NewApiKey, RateLimit, Record, Scope, Store, User};

/// Random bytes of a session token (shown as hex).
const SESSION_TOKEN_BYTES: usize = 32;
/// Random bytes of an API key's public prefix.
const KEY_PREFIX_BYTES: usize = 6;
/// Random bytes of an API key's secret.
const KEY_SECRET_BYTES: usize = 32;
/// Every API key token starts with this.
const KEY_TOKEN_START: &str = "tbk_";
/// Longest API key name.
pub const KEY_NAME_MAX_CHARS: usize = 100;

/// Hashes a password with argon2id and a fresh salt (PHC string).
fn hash_password_now(password: &str) -> Result<String, Error> {
    let mut salt = [0_u8; 16];
    OsRng.fill_bytes(&mut salt);
    let salt = SaltString::encode_b64(&salt).map_err(hashing)?;
    Argon2::default()
        .hash_password(password.as_bytes(), &salt)
        .map(|hash| hash.to_string())
        .map_err(hashing)
}

/// [`Error::Hashing`], from argon2's error (which is not a
/// `std::error::Error` without argon2's `std` feature).
fn hashing(error: argon2::password_hash::Error) -> Error {
    Error::Hashing(error.to_string().into())
}

/// Whether `password` matches the PHC string `hash`.
pub(crate) fn password_matches(password: &str, hash: &str) -> bool {
    PasswordHash::new(hash).is_ok_and(|parsed| {
        Argon2::default()
            .verify_password(password.as_bytes(), &parsed)
            .is_ok()
    })
}

/// A hash to verify against when the email is unknown, so that an unknown
/// email costs as much time as a wrong password.
fn dummy_hash() -> &'static str {
    static DUMMY: OnceLock<String> = OnceLock::new();
    DUMMY.get_or_init(|| hash_password_now(&random_hex(16)).unwrap_or_default())
}

/// Runs CPU-heavy hashing off the async threads.
pub(crate) async fn blocking<T: Send + 'static>(
    work: impl FnOnce() -> T + Send + 'static,
) -> Result<T, Error> {
    tokio::task::spawn_blocking(work)
        .await
        .map_err(|error| Error::Hashing(Box::new(error)))
}

/// Hashes a password off the async threads.
pub(crate) async fn hash_password(password: &str) -> Result<String, Error> {
    let password = password.to_owned();
    blocking(move || hash_password_now(&password)).await?
}

/// The columns [`user_from_row`] reads, joined with the tenant: the user, the tenant's name and
/// culture, the tenant's time zone, currency, units and theme, and the user's own time zone and
/// theme.
pub(crate) const USER_COLUMNS: &str = "u.id, u.name, u.email, u.role, u.tenant_id, \
    t.name AS tenant_name, t.culture_code, \
    t.time_zone, t.currency, t.units, t.theme, u.time_zone AS own_time_zone, u.theme AS own_theme";

/// A row of [`USER_COLUMNS`].
pub(crate) type UserRow = (
    String,
    String,
    String,
    String,
    String,
    String,
    String,
    String,
    String,
    String,
    String,
    Option<String>,
    Option<String>,
);

/// A row of [`USER_COLUMNS`] followed by one more column, of type `T`.
pub(crate) type UserRowAnd<T> = (
    String,
    String,
    String,
    String,
    String,
    String,
    String,
    String,
    String,
    String,
    String,
    Option<String>,
    Option<String>,
    T,
);

/// The [`UserRow`] and the column after it, of a row of [`UserRowAnd`].
pub(crate) fn split_user_row<T>(row: UserRowAnd<T>) -> (UserRow, T) {
    (
        (
            row.0, row.1, row.2, row.3, row.4, row.5, row.6, row.7, row.8, row.9, row.10, row.11,
            row.12,
        ),
        row.13,
    )
}

/// A user from a row of [`USER_COLUMNS`].
pub(crate) fn user_from_row(row: UserRow) -> Result<User, Error> {
    let (
        id,
        name,
        email,
        role,
        tenant_id,
        tenant_name,
        culture_code,
        time_zone,
        currency,
        units,
        theme,
        own_time_zone,
        own_theme,
    ) = row;
    let (organisation, own) = crate::preferences::from_columns(
        time_zone,
        currency,
        &units,
        &theme,
        own_time_zone,
        own_theme.as_deref(),
    )?;
    Ok(User {
        id,
        name,
        email,
        role: Role::from_token(&role)
            .ok_or_else(|| Error::corrupt(format_args!("role {role:?}")))?,
        tenant_id,
        tenant_name,
        culture_code,
        organisation,
        own,
    })
}

/// An API key's token split into its prefix and secret, if well-formed.
fn split_token(token: &str) -> Option<(&str, &str)> {
    let (prefix, secret) = token
        .trim()
        .strip_prefix(KEY_TOKEN_START)?
        .split_once('_')?;
    let well_formed = prefix.len() == KEY_PREFIX_BYTES * 2
        && secret.len() == KEY_SECRET_BYTES * 2
        && is_hex(prefix)
        && is_hex(secret);
    well_formed.then_some((prefix, secret))
}

fn scopes_to_text(scopes: &[Scope]) -> String {
    scopes
        .iter()
        .map(|scope| scope.as_str())
        .collect::<Vec<_>>()
        .join(" ")
}

fn scopes_from_text(text: &str) -> Result<Vec<Scope>, Error> {
    text.split_whitespace()
        .map(|token| {
            Scope::parse(token).ok_or_else(|| Error::corrupt(format_args!("scope {token:?}")))
        })
        .collect()
}

const KEY_COLUMNS: &str =
    "id, tenant_id, name, prefix, scopes, rate_requests, rate_window_secs, created_at, revoked_at";

/// A row of [`KEY_COLUMNS`].
type KeyRow = (
    String,
    String,
    String,
    String,
    String,
    i64,
    i64,
    String,
    Option<String>,
);

/// The secret's hash, and a row of [`KEY_COLUMNS`].
type SecretAndKeyRow = (
    String,
    String,
    String,
    String,
    String,
    String,
    i64,
    i64,
    String,
    Option<String>,
);

/// A key from a row of [`KEY_COLUMNS`].
fn key_from_row(row: KeyRow) -> Result<ApiKey, Error> {
    let (id, tenant_id, name, prefix, scopes, requests, window_secs, created_at, revoked_at) = row;
    let rate = |value: i64| {
        u32::try_from(value)
            .map_err(|error| Error::corrupt_because(format_args!("rate limit {value}"), error))
    };
    Ok(ApiKey {
        id,
        tenant_id,
        name,
        prefix,
        scopes: scopes_from_text(&scopes)?,
        rate_limit: RateLimit {
            requests: rate(requests)?,
            window_secs: rate(window_secs)?,
        },
        created_at,
        revoked_at,
    })
}

/// What is wrong with a key [`Store::create_api_key`] is asked for, each
/// problem with its path (`name`, `scopes`, `rateLimit`); empty when nothing is.
pub fn new_api_key_problems(
    name: &str,
    scopes: &[Scope],
    rate_limit: RateLimit,
) -> Vec<toolbridge_protocol::Violation> {
    let mut violations = Vec::new();
    let name = name.trim();
    if name.is_empty() || name.chars().count() > KEY_NAME_MAX_CHARS {
        violations.push(toolbridge_protocol::Violation::new(
            "name",
            format!("must be 1 to {KEY_NAME_MAX_CHARS} characters"),
        ));
    }
    if scopes.is_empty() {
        violations.push(toolbridge_protocol::Violation::new(
            "scopes",
            "a key needs at least one scope",
        ));
    }
    if rate_limit.requests == 0 || rate_limit.window_secs == 0 {
        violations.push(toolbridge_protocol::Violation::new(
            "rateLimit",
            "must allow at least 1 request per window of at least 1 second",
        ));
    }
    violations
}

impl Store {
    /// The user with this email (case-insensitive) and password (argon2id);
    /// `None` for an unknown email, an inactive user or a wrong password.
    /// An unknown email costs one hash too, so timing does not tell which.
    pub async fn verify_password(
        &self,
        email: &str,
        password: &str,
    ) -> Result<Option<User>, Error> {
        let row: Option<UserRowAnd<String>> = sql(format!(
            "SELECT {USER_COLUMNS}, u.password_hash FROM users u \
             JOIN tenants t ON t.id = u.tenant_id \
             WHERE u.email_lower = $1 AND u.active = 1"
        ))
        .bind(email.trim().to_lowercase())
        .fetch_optional(&self.pool)
        .await?;
        let (user, hash) = row.map(split_user_row).unzip();
        let password = password.to_owned();
        let matches = blocking(move || {
            let hash = hash.as_deref().unwrap_or_else(|| dummy_hash());
            password_matches(&password, hash)
        })
        .await?;
        match user {
            Some(user) if matches => Ok(Some(user_from_row(user)?)),
            _ => Ok(None),
        }
    }

    /// Starts a session for a user: a random token (64 hex characters) of
    /// which only the SHA-256 is stored. Expired sessions are swept here.
    pub async fn create_session(&self, user_id: &str, ttl_secs: u64) -> Result<String, Error> {
        let token = random_hex(SESSION_TOKEN_BYTES);
        let now = now_unix();
        let expires = now.saturating_add(i64::try_from(ttl_secs).unwrap_or(i64::MAX));
        let mut tx = self.begin_write().await?;
        sql("DELETE FROM sessions WHERE expires_at <= $1")
            .bind(now)
            .execute(&mut *tx)
            .await?;
        let user_exists: bool =
            sql("SELECT EXISTS (SELECT 1 FROM users WHERE id = $1 AND active = 1)")
                .bind(user_id)
                .fetch_scalar(&mut *tx)
                .await?;
        if !user_exists {
            return Err(Error::NotFound {
                what: Record::User,
                id: user_id.to_owned(),
            });
        }
        sql(
            "INSERT INTO sessions (token_hash, user_id, created_at, expires_at) VALUES ($1, $2, $3, $4)",
        )
        .bind(hex(sha256(token.as_bytes())))
        .bind(user_id)
        .bind(now_iso())
        .bind(expires)
        .execute(&mut *tx)
        .await?;
        tx.commit().await?;
        Ok(token)
    }

    /// The user of an unexpired session; `None` for an unknown, expired or
    /// ended session (or a user made inactive since).
    pub async fn session_user(&self, token: &str) -> Result<Option<User>, Error> {
        let row = sql(format!(
            "SELECT {USER_COLUMNS} FROM sessions s \
             JOIN users u ON u.id = s.user_id \
             JOIN tenants t ON t.id = u.tenant_id \
             WHERE s.token_hash = $1 AND s.expires_at > $2 AND u.active = 1"
        ))
        .bind(hex(sha256(token.as_bytes())))
        .bind(now_unix())
        .fetch_optional(&self.pool)
        .await?;
        row.map(user_from_row).transpose()
    }

    /// Ends a session (nothing happens for an unknown token).
    pub async fn delete_session(&self, token: &str) -> Result<(), Error> {
        sql("DELETE FROM sessions WHERE token_hash = $1")
            .bind(hex(sha256(token.as_bytes())))
            .execute(&self.pool)
            .await?;
        Ok(())
    }

    /// `context.get()` for a user: the same as [`User::context`].
    #[allow(clippy::unused_async)]
    pub async fn context(&self, user: &User) -> BridgeContextDto {
        user.context()
    }

    /// Makes an API key for a tenant. `name`: 1 to 100 characters after
    /// trimming; at least one scope (duplicates are dropped); the rate limit
    /// at least 1 request per at least 1 second. The token is in the answer
    /// only: the store keeps a SHA-256 of its secret.
    pub async fn create_api_key(
        &self,
        tenant_id: &str,
        name: &str,
        scopes: &[Scope],
        rate_limit: RateLimit,
    ) -> Result<NewApiKey, Error> {
        let violations = new_api_key_problems(name, scopes, rate_limit);
        if !violations.is_empty() {
            return Err(Error::Invalid(violations));
        }
        let name = name.trim();
        let scopes: Vec<Scope> = Scope::ALL
            .into_iter()
            .filter(|scope| scopes.contains(scope))
            .collect();

        let tenant_exists: bool = sql("SELECT EXISTS (SELECT 1 FROM tenants WHERE id = $1)")
            .bind(tenant_id)
            .fetch_scalar(&self.pool)
            .await?;
        if !tenant_exists {
            return Err(Error::NotFound {
                what: Record::Tenant,
                id: tenant_id.to_owned(),
            });
        }

        let secret = random_hex(KEY_SECRET_BYTES);
        let key = ApiKey {
            id: new_id(),
            tenant_id: tenant_id.to_owned(),
            name: name.to_owned(),
            prefix: random_hex(KEY_PREFIX_BYTES),
            scopes,
            rate_limit,
            created_at: now_iso(),
            revoked_at: None,
        };
        sql(
            "INSERT INTO api_keys (id, tenant_id, name, prefix, secret_hash, scopes, \
             rate_requests, rate_window_secs, created_at) VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9)",
        )
        .bind(&key.id)
        .bind(&key.tenant_id)
        .bind(&key.name)
        .bind(&key.prefix)
        .bind(hex(sha256(secret.as_bytes())))
        .bind(scopes_to_text(&key.scopes))
        .bind(i64::from(key.rate_limit.requests))
        .bind(i64::from(key.rate_limit.window_secs))
        .bind(&key.created_at)
        .execute(&self.pool)
        .await?;
        let token = format!("{KEY_TOKEN_START}{}_{secret}", key.prefix);
        Ok(NewApiKey { key, token })
    }

    /// The key a bearer token names; `None` for a malformed, unknown or
    /// revoked token or a wrong secret. The secret's hash is compared in
    /// constant time.
    pub async fn api_key(&self, token: &str) -> Result<Option<ApiKey>, Error> {
        let Some((prefix, secret)) = split_token(token) else {
            return Ok(None);
        };
        let row: Option<SecretAndKeyRow> = sql(format!(
            "SELECT secret_hash, {KEY_COLUMNS} FROM api_keys WHERE prefix = $1"
        ))
        .bind(prefix)
        .fetch_optional(&self.pool)
        .await?;
        let presented = hex(sha256(secret.as_bytes()));
        // The prefix is public (lists show it); the secret is what must not
        // leak through timing.
        let Some((stored, id, tenant, name, prefix, scopes, requests, window, created, revoked)) =
            row
        else {
            return Ok(None);
        };
        let matches: bool = presented.as_bytes().ct_eq(stored.as_bytes()).into();
        if !matches {
            return Ok(None);
        }
        let key = key_from_row((
            id, tenant, name, prefix, scopes, requests, window, created, revoked,
        ))?;
        Ok(key.revoked_at.is_none().then_some(key))
    }

    /// The tenant's keys, revoked ones included, oldest first.
    pub async fn list_api_keys(&self, tenant_id: &str) -> Result<Vec<ApiKey>, Error> {
        let rows: Vec<KeyRow> = sql(format!(
            "SELECT {KEY_COLUMNS} FROM api_keys WHERE tenant_id = $1 ORDER BY created_at, rowid"
        ))
        .bind(tenant_id)
        .fetch_all(&self.pool)
        .await?;
        rows.into_iter().map(key_from_row).collect()
    }

    /// Revokes a key of the tenant. `true` when the tenant has that key (now
    /// revoked; a key revoked before keeps its first revocation time),
    /// `false` when it has not (unknown id, or another tenant's).
    pub async fn revoke_api_key(&self, tenant_id: &str, key_id: &str) -> Result<bool, Error> {
        let key_id = id_key(key_id);
        sql("UPDATE api_keys SET revoked_at = $1 \
             WHERE tenant_id = $2 AND id = $3 AND revoked_at IS NULL")
        .bind(now_iso())
        .bind(tenant_id)
        .bind(&key_id)
        .execute(&self.pool)
        .await?;
        let exists: bool =
            sql("SELECT EXISTS (SELECT 1 FROM api_keys WHERE tenant_id = $1 AND id = $2)")
                .bind(tenant_id)
                .bind(&key_id)
                .fetch_scalar(&self.pool)
                .await?;
        Ok(exists)
    }
}
