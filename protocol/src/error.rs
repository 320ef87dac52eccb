//! The one error type of the protocol, its stable string codes, and the
//! per-field violations that `INVALID_PARAMS` carries.

use std::fmt;

use serde::{Deserialize, Serialize};

/// One rule broken by one field of a request, e.g. `lines[3].qty`.
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Violation {
    /// Where the problem is: `lines[3].qty`, `customerEmail`, `pageSize`.
    pub path: String,
    /// What is wrong there, in words a tool author can act on.
    pub message: String,
}

impl Violation {
    /// A violation at `path`.
    pub fn new(path: impl Into<String>, message: impl Into<String>) -> Self {
        Self {
            path: path.into(),
            message: message.into(),
        }
    }
}

impl fmt::Display for Violation {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        if self.path.is_empty() {
            f.write_str(&self.message)
        } else {
            write!(f, "{}: {}", self.path, self.message)
        }
    }
}

/// The stable string codes of bridge and REST errors (`data.code` on the wire,
/// `code` in problem+json bodies).
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "SCREAMING_SNAKE_CASE")]
pub enum ErrorCode {
    /// A request breaks a validation rule; the details list every violation.
    InvalidParams,
    /// The tool type or the user's role does not permit the method.
    NotAllowed,
    /// `quotes.addLines` while no quote is open in the editor.
    NoOpenQuote,
    /// `quotes.addLines` while the open quote is no longer a Draft.
    QuoteLocked,
    /// A referenced job, customer or quote does not exist for this tenant.
    NotFound,
    /// The backend rate-limited the call; `retryAfter` says for how long.
    RateLimited,
    /// The user's session (or the API key) is missing or no longer valid.
    Unauthenticated,
    /// The backend failed or did not answer in time (or, for the server's
    /// fetch, the tool's own server could not be reached or failed). A
    /// backend the browser cannot reach at all is [`ErrorCode::Offline`].
    BackendUnavailable,
    /// The method name is not one of the bridge methods.
    MethodNotFound,
    /// No reply arrived within the call deadline (raised by the SDK), or a
    /// tool's own server did not answer the server's fetch in time.
    Timeout,
    /// No host answered the handshake (raised by the SDK).
    NotConnected,
    /// The server cannot be reached from the browser (raised by the host
    /// module, never sent by the server): a call that needs the server was
    /// not sent, or its request failed on the network.
    Offline,
    /// A change to a quote was made against a version it no longer has:
    /// someone else changed it since the client read it (`If-Match` did
    /// not match its `ETag`). Nothing was changed.
    Conflict,
    /// Anything else.
    Internal,
}

impl ErrorCode {
    /// Every code, in a fixed order.
    pub const ALL: [ErrorCode; 14] = [
        ErrorCode::InvalidParams,
        ErrorCode::NotAllowed,
        ErrorCode::NoOpenQuote,
        ErrorCode::QuoteLocked,
        ErrorCode::NotFound,
        ErrorCode::RateLimited,
        ErrorCode::Unauthenticated,
        ErrorCode::BackendUnavailable,
        ErrorCode::MethodNotFound,
        ErrorCode::Timeout,
        ErrorCode::NotConnected,
        ErrorCode::Offline,
        ErrorCode::Conflict,
        ErrorCode::Internal,
    ];

    /// The string form, e.g. `"INVALID_PARAMS"`.
    pub fn as_str(self) -> &'static str {
        match self {
            ErrorCode::InvalidParams => "INVALID_PARAMS",
            ErrorCode::NotAllowed => "NOT_ALLOWED",
            ErrorCode::NoOpenQuote => "NO_OPEN_QUOTE",
            ErrorCode::QuoteLocked => "QUOTE_LOCKED",
            ErrorCode::NotFound => "NOT_FOUND",
            ErrorCode::RateLimited => "RATE_LIMITED",
            ErrorCode::Unauthenticated => "UNAUTHENTICATED",
            ErrorCode::BackendUnavailable => "BACKEND_UNAVAILABLE",
            ErrorCode::MethodNotFound => "METHOD_NOT_FOUND",
            ErrorCode::Timeout => "TIMEOUT",
            ErrorCode::NotConnected => "NOT_CONNECTED",
            ErrorCode::Offline => "OFFLINE",
            ErrorCode::Conflict => "CONFLICT",
            ErrorCode::Internal => "INTERNAL",
        }
    }

    /// Parses the string form.
    pub fn from_name(name: &str) -> Option<Self> {
        Self::ALL.into_iter().find(|code| code.as_str() == name)
    }

    /// The JSON-RPC 2.0 `error.code` number. The standard numbers are used
    /// where JSON-RPC defines one; the rest sit in the implementation-defined
    /// server range -32000..=-32099.
    pub fn rpc_code(self) -> i32 {
        match self {
            ErrorCode::InvalidParams => -32602,
            ErrorCode::MethodNotFound => -32601,
            ErrorCode::Internal => -32603,
            ErrorCode::NotAllowed => -32001,
            ErrorCode::NoOpenQuote => -32002,
            ErrorCode::QuoteLocked => -32003,
            ErrorCode::NotFound => -32004,
            ErrorCode::RateLimited => -32005,
            ErrorCode::Unauthenticated => -32006,
            ErrorCode::BackendUnavailable => -32007,
            ErrorCode::Timeout => -32008,
            ErrorCode::NotConnected => -32009,
            ErrorCode::Offline => -32010,
            ErrorCode::Conflict => -32011,
        }
    }

    /// The HTTP status the REST API answers with for this code.
    pub fn http_status(self) -> u16 {
        match self {
            ErrorCode::InvalidParams => 422,
            ErrorCode::NotAllowed => 403,
            ErrorCode::NoOpenQuote | ErrorCode::QuoteLocked => 409,
            ErrorCode::NotFound | ErrorCode::MethodNotFound => 404,
            ErrorCode::RateLimited => 429,
            ErrorCode::Unauthenticated => 401,
            // The server's fetch for a tool: the tool's own server failed to answer.
            ErrorCode::BackendUnavailable => 502,
            ErrorCode::Timeout => 504,
            // `412 Precondition Failed`: the `If-Match` of the request.
            ErrorCode::Conflict => 412,
            // Never sent by the server; the status a proxy gives for an
            // upstream it cannot reach.
            ErrorCode::Offline => 503,
            ErrorCode::NotConnected | ErrorCode::Internal => 500,
        }
    }

    /// The code a bridge call reports when the backend answered `status`
    /// without a readable problem body.
    pub fn from_http_status(status: u16) -> Self {
        match status {
            400 | 422 => ErrorCode::InvalidParams,
            401 => ErrorCode::Unauthenticated,
            403 => ErrorCode::NotAllowed,
            404 => ErrorCode::NotFound,
            409 => ErrorCode::QuoteLocked,
            412 => ErrorCode::Conflict,
            429 => ErrorCode::RateLimited,
            500..=599 => ErrorCode::BackendUnavailable,
            _ => ErrorCode::Internal,
        }
    }
}

impl fmt::Display for ErrorCode {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

/// Everything that can go wrong in a bridge call or a REST request.
///
/// Converted to the JSON-RPC form in [`crate::rpc`] and to problem+json in
/// [`crate::problem`]; nowhere else.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
pub enum Error {
    /// The request breaks one or more rules; every violation is listed.
    #[error("{}", summarize(.0))]
    InvalidParams(Vec<Violation>),
    /// The tool type or the user's role does not permit this.
    #[error("{0}")]
    NotAllowed(String),
    /// `quotes.addLines` with no quote open in the editor.
    #[error("no quote is open in the editor; the user has to open one first")]
    NoOpenQuote,
    /// The open quote is no longer a Draft.
    #[error("{0}")]
    QuoteLocked(String),
    /// The referenced thing does not exist for this tenant.
    #[error("{0}")]
    NotFound(String),
    /// Rate limited; retry after this many seconds.
    #[error("too many requests; retry in {retry_after} s")]
    RateLimited {
        /// Whole seconds until a retry may succeed (at least 1).
        retry_after: u64,
    },
    /// The session or key is missing, unknown or revoked.
    #[error("{0}")]
    Unauthenticated(String),
    /// The backend is unreachable or failed.
    #[error("{0}")]
    BackendUnavailable(String),
    /// Not a bridge method.
    #[error("unknown method `{0}`")]
    MethodNotFound(String),
    /// No reply within the deadline.
    #[error("{0}")]
    Timeout(String),
    /// No host answered.
    #[error("{0}")]
    NotConnected(String),
    /// The server cannot be reached from the browser; the message says
    /// whether the request was sent.
    #[error("{0}")]
    Offline(String),
    /// The quote changed since the version the change was made against;
    /// the message says which quote.
    #[error("{0}")]
    Conflict(String),
    /// Anything else.
    #[error("{0}")]
    Internal(String),
}

impl Error {
    /// A single-violation `INVALID_PARAMS`.
    pub fn invalid(path: impl Into<String>, message: impl Into<String>) -> Self {
        Error::InvalidParams(vec![Violation::new(path, message)])
    }

    /// The stable code of this error.
    pub fn code(&self) -> ErrorCode {
        match self {
            Error::InvalidParams(_) => ErrorCode::InvalidParams,
            Error::NotAllowed(_) => ErrorCode::NotAllowed,
            Error::NoOpenQuote => ErrorCode::NoOpenQuote,
            Error::QuoteLocked(_) => ErrorCode::QuoteLocked,
            Error::NotFound(_) => ErrorCode::NotFound,
            Error::RateLimited { .. } => ErrorCode::RateLimited,
            Error::Unauthenticated(_) => ErrorCode::Unauthenticated,
            Error::BackendUnavailable(_) => ErrorCode::BackendUnavailable,
            Error::MethodNotFound(_) => ErrorCode::MethodNotFound,
            Error::Timeout(_) => ErrorCode::Timeout,
            Error::NotConnected(_) => ErrorCode::NotConnected,
            Error::Offline(_) => ErrorCode::Offline,
            Error::Conflict(_) => ErrorCode::Conflict,
            Error::Internal(_) => ErrorCode::Internal,
        }
    }

    /// The per-field violations (empty unless `INVALID_PARAMS`).
    pub fn details(&self) -> &[Violation] {
        match self {
            Error::InvalidParams(violations) => violations,
            _ => &[],
        }
    }

    /// Seconds to wait before retrying, for `RATE_LIMITED`.
    pub fn retry_after(&self) -> Option<u64> {
        match self {
            Error::RateLimited { retry_after } => Some(*retry_after),
            _ => None,
        }
    }

    /// Rebuilds an error from its wire parts (a JSON-RPC error or a
    /// problem+json body), keeping the message the other side wrote.
    pub fn from_parts(
        code: ErrorCode,
        message: String,
        details: Vec<Violation>,
        retry_after: Option<u64>,
    ) -> Self {
        match code {
            ErrorCode::InvalidParams if details.is_empty() => {
                Error::InvalidParams(vec![Violation::new("", message)])
            }
            ErrorCode::InvalidParams => Error::InvalidParams(details),
            ErrorCode::NotAllowed => Error::NotAllowed(message),
            ErrorCode::NoOpenQuote => Error::NoOpenQuote,
            ErrorCode::QuoteLocked => Error::QuoteLocked(message),
            ErrorCode::NotFound => Error::NotFound(message),
            ErrorCode::RateLimited => Error::RateLimited {
                retry_after: retry_after.unwrap_or(1).max(1),
            },
            ErrorCode::Unauthenticated => Error::Unauthenticated(message),
            ErrorCode::BackendUnavailable => Error::BackendUnavailable(message),
            ErrorCode::MethodNotFound => Error::MethodNotFound(message),
            ErrorCode::Timeout => Error::Timeout(message),
            ErrorCode::NotConnected => Error::NotConnected(message),
            ErrorCode::Offline => Error::Offline(message),
            ErrorCode::Conflict => Error::Conflict(message),
            ErrorCode::Internal => Error::Internal(message),
        }
    }
}

/// `lines[3].qty: must be greater than 0 (and 2 more problems)`.
fn summarize(violations: &[Violation]) -> String {
    match violations {
        [] => "invalid parameters".to_owned(),
        [only] => only.to_string(),
        [first, rest @ ..] => {
            let more = rest.len();
            let noun = if more == 1 { "problem" } else { "problems" };
            format!("{first} (and {more} more {noun})")
        }
    }
}

/// Collects violations while a request is read, so that one answer can list
/// every problem instead of only the first.
#[derive(Debug, Default)]
pub(crate) struct Violations(Vec<Violation>);

impl Violations {
    pub(crate) fn push(&mut self, path: impl Into<String>, message: impl Into<String>) {
        self.0.push(Violation::new(path, message));
    }

    /// `Ok(value)` when nothing was recorded, else every violation.
    pub(crate) fn into_result<T>(self, value: T) -> Result<T, Error> {
        self.into_violations()
            .map(|()| value)
            .map_err(Error::InvalidParams)
    }

    /// `Ok` when nothing was recorded, else every violation.
    pub(crate) fn into_violations(self) -> Result<(), Vec<Violation>> {
        if self.0.is_empty() {
            Ok(())
        } else {
            Err(self.0)
        }
    }

    /// `Ok` with the value when it was read and nothing was recorded; else
    /// every violation.
    pub(crate) fn finish<T>(self, value: Option<T>) -> Result<T, Error> {
        match value {
            Some(value) => self.into_result(value),
            None if self.0.is_empty() => Err(Error::invalid("", "invalid request")),
            None => Err(Error::InvalidParams(self.0)),
        }
    }
}
