//! The values the store hands out: tenants, users (and their accounts), API keys and their scopes
//! and rate limits, idempotency records and the conditions of a change, quotes with their
//! versions and what a write made of them, demo sign-ins.

use std::fmt;

use toolbridge_protocol::context::{BridgeContextDto, OrganisationContextDto, OwnContextDto, Role};
use toolbridge_protocol::quote::QuoteDto;

/// An organisation; everything else belongs to one.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Tenant {
    /// GUID.
    pub id: String,
    /// Display name.
    pub name: String,
}

/// A signed-in (or signing-in) user, with what `context.get` needs of their
/// tenant.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct User {
    /// GUID.
    pub id: String,
    /// Display name.
    pub name: String,
    /// Sign-in email, as entered when the user was made.
    pub email: String,
    /// Role.
    pub role: Role,
    /// The user's tenant.
    pub tenant_id: String,
    /// Display name of the tenant.
    pub tenant_name: String,
    /// The tenant's culture code, e.g. `en-NZ`.
    pub culture_code: String,
    /// The tenant's time zone, currency, units and theme.
    pub organisation: OrganisationContextDto,
    /// The user's own time zone and theme, where they chose one.
    pub own: OwnContextDto,
}

impl User {
    /// `context.get()` / `GET /api/v1/me` for this user.
    pub fn context(&self) -> BridgeContextDto {
        BridgeContextDto {
            user_name: self.name.clone(),
            user_email: self.email.clone(),
            user_role: self.role,
            tenant_name: self.tenant_name.clone(),
            tenant_id: self.tenant_id.clone(),
            culture_code: self.culture_code.clone(),
            values: self.organisation.for_user(&self.own, &self.culture_code),
        }
    }
}

/// A user as an operator lists them: the user, and whether they may sign in.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Account {
    /// The user.
    pub user: User,
    /// `false` once the user is disabled: they cannot sign in, and have no session.
    pub active: bool,
}

/// A sign-in that the demo seed created.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct DemoSignIn {
    /// Sign-in email.
    pub email: String,
    /// Password.
    pub password: String,
    /// Role of the user.
    pub role: Role,
    /// Name of the user's tenant.
    pub tenant_name: String,
}

/// What an API key may do.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum Scope {
    /// `customers:read`.
    CustomersRead,
    /// `products:read`.
    ProductsRead,
    /// `quotes:read`.
    QuotesRead,
    /// `quotes:write`.
    QuotesWrite,
    /// `jobs:read`.
    JobsRead,
    /// `catalog:read`: task templates, cost items and the catalog index.
    CatalogRead,
    /// `webhooks:write`: the tenant's webhook endpoints and their delivery logs.
    WebhooksWrite,
}

impl Scope {
    /// Every scope, in a fixed order.
    pub const ALL: [Scope; 7] = [
        Scope::CustomersRead,
        Scope::ProductsRead,
        Scope::QuotesRead,
        Scope::QuotesWrite,
        Scope::JobsRead,
        Scope::CatalogRead,
        Scope::WebhooksWrite,
    ];

    /// The token, e.g. `quotes:write`.
    pub fn as_str(self) -> &'static str {
        match self {
            Scope::CustomersRead => "customers:read",
            Scope::ProductsRead => "products:read",
            Scope::QuotesRead => "quotes:read",
            Scope::QuotesWrite => "quotes:write",
            Scope::JobsRead => "jobs:read",
            Scope::CatalogRead => "catalog:read",
            Scope::WebhooksWrite => "webhooks:write",
        }
    }

    /// Parses a token (exact match).
    pub fn parse(token: &str) -> Option<Scope> {
        Self::ALL.into_iter().find(|scope| scope.as_str() == token)
    }
}

impl fmt::Display for Scope {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

/// An API key's rate limit: at most `requests` per `window_secs` seconds.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct RateLimit {
    /// Requests allowed per window, at least 1.
    pub requests: u32,
    /// Window length in seconds, at least 1.
    pub window_secs: u32,
}

impl Default for RateLimit {
    /// 120 requests per 60 s.
    fn default() -> Self {
        Self {
            requests: 120,
            window_secs: 60,
        }
    }
}

impl RateLimit {
    /// Parses `"120/60s"` (or `"120/60"`): requests per window seconds, both
    /// at least 1.
    pub fn parse(text: &str) -> Result<RateLimit, String> {
        let usage =
            || format!("\"{text}\" is not a rate limit; write requests/seconds, e.g. 120/60s");
        let (requests, window) = text.trim().split_once('/').ok_or_else(usage)?;
        let window = window.trim();
        let window = window.strip_suffix('s').unwrap_or(window);
        let requests: u32 = requests.trim().parse().map_err(|_| usage())?;
        let window_secs: u32 = window.trim().parse().map_err(|_| usage())?;
        if requests == 0 {
            return Err(format!(
                "\"{text}\": a rate limit allows at least 1 request per window"
            ));
        }
        if window_secs == 0 {
            return Err(format!(
                "\"{text}\": a rate limit window is at least 1 second"
            ));
        }
        Ok(RateLimit {
            requests,
            window_secs,
        })
    }
}

impl fmt::Display for RateLimit {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}/{}s", self.requests, self.window_secs)
    }
}

/// An API key as listed (never with its secret).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ApiKey {
    /// GUID.
    pub id: String,
    /// The tenant whose data the key reaches.
    pub tenant_id: String,
    /// What the key is for, as its maker named it.
    pub name: String,
    /// The public part of the token; shown in lists, identifies the key.
    pub prefix: String,
    /// What the key may do, in [`Scope::ALL`] order.
    pub scopes: Vec<Scope>,
    /// Its rate limit.
    pub rate_limit: RateLimit,
    /// ISO 8601 UTC.
    pub created_at: String,
    /// ISO 8601 UTC, when revoked.
    pub revoked_at: Option<String>,
}

impl ApiKey {
    /// Whether the key has `scope`.
    pub fn has_scope(&self, scope: Scope) -> bool {
        self.scopes.contains(&scope)
    }
}

/// A key just made, with its token: shown once, never stored.
#[derive(Clone, PartialEq, Eq)]
pub struct NewApiKey {
    /// The key.
    pub key: ApiKey,
    /// `tbk_<prefix>_<secret>`; only a SHA-256 of the secret is stored.
    pub token: String,
}

impl fmt::Debug for NewApiKey {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("NewApiKey")
            .field("key", &self.key)
            .field("token", &"<redacted>")
            .finish()
    }
}

/// An `Idempotency-Key` of a `POST /quotes`, a `PUT /quotes/{id}/lines` or a
/// `PATCH /quotes/{id}`: one key space per API key (or user), whatever the
/// request.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Idempotency {
    /// The id of the API key (or user) that sent the request.
    pub key_id: String,
    /// The `Idempotency-Key` header (1 to 255 characters).
    pub key: String,
    /// Hex SHA-256 of the request body.
    pub body_hash: String,
}

/// The versions of a quote a change was made against (`If-Match`).
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub enum Expected {
    /// Any version: no condition, or `If-Match: *` (any quote that exists).
    #[default]
    Any,
    /// One of these versions (none: no version can match).
    OneOf(Vec<u64>),
}

impl Expected {
    /// Whether a quote at `version` meets the condition.
    pub fn matches(&self, version: u64) -> bool {
        match self {
            Expected::Any => true,
            Expected::OneOf(versions) => versions.contains(&version),
        }
    }
}

/// What a change to a quote asks beyond the change itself: the versions it
/// was made against, and an idempotency key that makes a repeat of it answer
/// the first one's outcome instead of changing the quote again.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Conditions {
    /// The versions the quote must be at ([`Expected::Any`] when unconditional).
    pub expected: Expected,
    /// The request's idempotency key, if it has one.
    pub idempotency: Option<Idempotency>,
}

/// A quote as the store holds it, with its version: 1 when it was made, and
/// one more with every change to it (its lines saved, its header changed,
/// sent).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Versioned {
    /// The quote.
    pub quote: QuoteDto,
    /// Its version.
    pub version: u64,
}

/// A quote created or changed, or the answer of the request that did it
/// again (`replayed`).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Written {
    /// The quote (for a replay of a create: the first request's quote, as
    /// it is now; of a change: as that change left it, or as it is now when
    /// the request had no condition on its version).
    pub quote: QuoteDto,
    /// The quote's version, as [`Written::quote`] has it.
    pub version: u64,
    /// Whether this was a replay of an earlier request with the same
    /// idempotency key and body: nothing was created or changed.
    pub replayed: bool,
}
