//! The server's one error type, and its conversion to an HTTP response: a
//! problem+json body (RFC 9457) from `toolbridge-protocol`, with the request
//! id, and the headers some statuses need (the quote's current `ETag` with
//! a 412). The OpenAPI side of the same conversion is here too: the problem
//! response every operation documents, and the headers that come with 401,
//! 412 and 429.

use std::fmt;

use axum::http::{HeaderValue, StatusCode, header};
use axum::response::{IntoResponse, Response};
use toolbridge_protocol::create_quote::{taken_reference, unknown_job};
use toolbridge_protocol::problem::{PROBLEM_CONTENT_TYPE, Problem};
use toolbridge_protocol::quote::{changed_quote, locked_quote, quote_not_found, unsendable_quote};
use toolbridge_protocol::versions::quote_etag;
use toolbridge_protocol::{Error as RuleError, ErrorCode};
use toolbridge_store::{Cause, Error as StoreError, QuoteAction, Record, Unique};
use utoipa::Modify;
use utoipa::openapi::schema::{ObjectBuilder, Type};
use utoipa::openapi::{ContentBuilder, HeaderBuilder, OpenApi, Ref, ResponseBuilder};

use crate::openapi::each_response;

/// Why a request failed.
#[derive(Debug, thiserror::Error)]
pub enum ApiError {
    /// The request broke a rule of the protocol (422, 401, 403, 404, 409, 429...).
    #[error(transparent)]
    Rule(#[from] RuleError),
    /// The request cannot be read at all: not JSON (400), too large (413).
    #[error("{message}")]
    Unreadable {
        /// 400 or 413.
        status: StatusCode,
        /// What is wrong with it.
        message: String,
    },
    /// The store refused the request, or failed (`store_rule` below says
    /// which, and what a refusal means to the client).
    #[error(transparent)]
    Store(#[from] toolbridge_store::Error),
    /// Something else on the server failed, not the request.
    #[error("{doing} failed")]
    Internal {
        /// What the server was doing, e.g. `checking a bundle`.
        doing: String,
        /// Why it failed.
        #[source]
        cause: Cause,
    },
}

/// What a store error means to the client: the protocol's error for a
/// refusal, `None` for a failure of the server. The one place where the
/// store's kinds meet the wire.
fn store_rule(error: &StoreError) -> Option<RuleError> {
    Some(match error {
        StoreError::NotFound {
            what: Record::Quote,
            id,
        } => quote_not_found(id),
        StoreError::NotFound {
            what: Record::Job,
            id,
        } => unknown_job(id),
        StoreError::NotFound { .. } => RuleError::NotFound(error.to_string()),
        StoreError::Invalid(violations) => RuleError::InvalidParams(violations.clone()),
        StoreError::QuoteLocked {
            reference,
            status,
            action: QuoteAction::Change,
        } => locked_quote(reference, *status),
        StoreError::QuoteLocked {
            reference,
            status,
            action: QuoteAction::Send,
        } => unsendable_quote(reference, *status),
        StoreError::Changed { reference, .. } => changed_quote(reference),
        StoreError::IdempotencyKeyReused => RuleError::invalid(
            "Idempotency-Key",
            "was already used with a different request body",
        ),
        StoreError::Taken {
            what: Unique::QuoteReference,
            value,
        } => RuleError::InvalidParams(vec![taken_reference(value)]),
        StoreError::Taken {
            what: Unique::ProductSku,
            value,
        } => RuleError::invalid(
            "sku",
            format!("{value} is already a product of this tenant"),
        ),
        // Tenants and users are made with the CLI, not through the API (yet).
        StoreError::Taken {
            what: Unique::TenantName,
            value,
        } => RuleError::invalid("name", format!("a tenant named {value:?} exists already")),
        StoreError::Taken {
            what: Unique::UserEmail,
            value,
        } => RuleError::invalid("email", format!("{value} is another user's email")),
        StoreError::NotEmpty => RuleError::NotAllowed(
            "the database already holds data; demo data goes into an empty database only"
                .to_owned(),
        ),
        StoreError::Database(_)
        | StoreError::Unusable { .. }
        | StoreError::Migration(_)
        | StoreError::Corrupt { .. }
        | StoreError::Hashing(_)
        | StoreError::KeyGeneration(_)
        | StoreError::Sealing(_)
        | StoreError::Encoding { .. } => return None,
    })
}

impl From<toolbridge_bundle::Error> for ApiError {
    /// A refused bundle is `INVALID_PARAMS`: one violation per refusal, its
    /// path the entry (or `bundle`), its message ending in the rule's id. A
    /// bundle that could not be read is the server's failure.
    fn from(error: toolbridge_bundle::Error) -> Self {
        match error {
            toolbridge_bundle::Error::Refused(refusals) => {
                ApiError::Rule(RuleError::InvalidParams(
                    refusals
                        .iter()
                        .take(toolbridge_bundle::REFUSALS_SHOWN)
                        .map(|refusal| {
                            toolbridge_protocol::Violation::new(
                                refusal.entry.as_deref().unwrap_or("bundle"),
                                format!("{} [{}]", refusal.message, refusal.rule.as_str()),
                            )
                        })
                        .collect(),
                ))
            }
            other @ toolbridge_bundle::Error::Io { .. } => {
                ApiError::internal("reading a tool bundle", other)
            }
        }
    }
}

/// An error and its causes, each `source()` after it, joined with `": "`:
/// what a log line needs to say what went wrong, and why.
pub struct Chain<'a>(pub &'a (dyn std::error::Error + 'static));

impl fmt::Display for Chain<'_> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}", self.0)?;
        let mut source = self.0.source();
        while let Some(cause) = source {
            write!(f, ": {cause}")?;
            source = cause.source();
        }
        Ok(())
    }
}

impl ApiError {
    /// The server failed while `doing` something, because of `cause`.
    pub fn internal(doing: impl Into<String>, cause: impl Into<Cause>) -> Self {
        ApiError::Internal {
            doing: doing.into(),
            cause: cause.into(),
        }
    }

    /// `UNAUTHENTICATED` with a message.
    pub fn unauthenticated(message: impl Into<String>) -> Self {
        ApiError::Rule(RuleError::Unauthenticated(message.into()))
    }

    /// A 400 for a body that cannot be read.
    pub fn malformed(message: impl Into<String>) -> Self {
        ApiError::Unreadable {
            status: StatusCode::BAD_REQUEST,
            message: message.into(),
        }
    }

    /// `NOT_FOUND` with a message.
    pub fn not_found(message: impl Into<String>) -> Self {
        ApiError::Rule(RuleError::NotFound(message.into()))
    }

    /// `NOT_ALLOWED` with a message.
    pub fn not_allowed(message: impl Into<String>) -> Self {
        ApiError::Rule(RuleError::NotAllowed(message.into()))
    }
}

impl ApiError {
    /// The one place a failure of the server is logged, with the request id
    /// and every cause; the client's problem says only where to look.
    fn failure(&self, what: &str) -> Problem {
        tracing::error!(
            request_id = crate::request_id::current().as_deref().unwrap_or("-"),
            error = %Chain(self),
            "{what}"
        );
        Problem::from_error(&RuleError::Internal(
            "the server could not complete the request; quote the requestId when reporting it"
                .to_owned(),
        ))
    }
}

impl IntoResponse for ApiError {
    fn into_response(self) -> Response {
        // A change refused for the quote's version: the version it is at now.
        let etag = match &self {
            ApiError::Store(StoreError::Changed {
                quote_id, version, ..
            }) => Some(quote_etag(quote_id, *version)),
            _ => None,
        };
        let (mut problem, status) = match &self {
            ApiError::Rule(rule) => (Problem::from_error(rule), None),
            ApiError::Unreadable { status, message } => {
                let mut problem = Problem::from_error(&RuleError::invalid("", message.clone()));
                "Unreadable request".clone_into(&mut problem.title);
                problem.status = status.as_u16();
                problem.detail.clone_from(message);
                problem.errors.clear();
                (problem, Some(*status))
            }
            ApiError::Store(error) => match store_rule(error) {
                Some(rule) => (Problem::from_error(&rule), None),
                None => (self.failure("store failure"), None),
            },
            ApiError::Internal { .. } => (self.failure("server failure"), None),
        };
        if let Some(id) = crate::request_id::current() {
            problem = problem.with_request_id(id);
        }
        let status = status
            .or_else(|| StatusCode::from_u16(problem.status).ok())
            .unwrap_or(StatusCode::INTERNAL_SERVER_ERROR);
        let code = problem.code;
        let retry_after = problem.retry_after;
        let body = serde_json::to_vec(&problem).unwrap_or_default();
        let mut response = (status, body).into_response();
        let headers = response.headers_mut();
        headers.insert(
            header::CONTENT_TYPE,
            HeaderValue::from_static(PROBLEM_CONTENT_TYPE),
        );
        if code == ErrorCode::Unauthenticated {
            headers.insert(header::WWW_AUTHENTICATE, HeaderValue::from_static("Bearer"));
        }
        if let Some(seconds) = retry_after {
            headers.insert(header::RETRY_AFTER, HeaderValue::from(seconds));
        }
        if let Some(value) = etag.and_then(|etag| HeaderValue::from_str(&etag).ok()) {
            headers.insert(header::ETAG, value);
        }
        if status == StatusCode::PAYLOAD_TOO_LARGE {
            // Part of an over-long body may be left unread; the connection
            // ends with this answer, and says so, so that no client reuses it.
            headers.insert(header::CONNECTION, HeaderValue::from_static("close"));
        }
        response
    }
}

/// OpenAPI: an error answer with `description`: a [`Problem`] as
/// `application/problem+json`, as [`ApiError::into_response`] writes it.
pub fn problem_response(description: &str) -> utoipa::openapi::Response {
    ResponseBuilder::new()
        .description(description)
        .content(
            PROBLEM_CONTENT_TYPE,
            ContentBuilder::new()
                .schema(Some(Ref::from_schema_name("Problem")))
                .build(),
        )
        .build()
}

/// OpenAPI: a 412 with `description`, a [`problem_response`] that also
/// carries the quote's current `ETag`, as [`ApiError::into_response`] writes
/// it for a change refused for the quote's version.
pub fn changed_response(description: &str) -> utoipa::openapi::Response {
    let mut response = problem_response(description);
    response.headers.insert(
        "ETag".to_owned(),
        HeaderBuilder::new()
            .schema(ObjectBuilder::new().schema_type(Type::String))
            .description(Some(
                "the version the quote is at now: read it (GET) to see what changed",
            ))
            .build(),
    );
    response
}

/// OpenAPI: the headers [`ApiError::into_response`] adds, on every response
/// of their status wherever it is documented: `WWW-Authenticate: Bearer` on
/// 401, `Retry-After` (whole seconds, at least 1) on 429.
pub struct ErrorHeaders;

impl Modify for ErrorHeaders {
    fn modify(&self, openapi: &mut OpenApi) {
        each_response(openapi, |_, status, response| match status {
            "401" => {
                response.headers.insert(
                    "WWW-Authenticate".to_owned(),
                    HeaderBuilder::new()
                        .schema(
                            ObjectBuilder::new()
                                .schema_type(Type::String)
                                .enum_values(Some(["Bearer"])),
                        )
                        .description(Some("the scheme to authenticate with"))
                        .build(),
                );
            }
            "429" => {
                response.headers.insert(
                    "Retry-After".to_owned(),
                    HeaderBuilder::new()
                        .schema(
                            ObjectBuilder::new()
                                .schema_type(Type::Integer)
                                .minimum(Some(1)),
                        )
                        .description(Some("whole seconds until a request is allowed again"))
                        .build(),
                );
            }
            _ => {}
        });
    }
}

#[cfg(test)]
mod tests {
    use std::io::Write;
    use std::sync::{Arc, Mutex, PoisonError};

    use tracing_subscriber::fmt::MakeWriter;

    use super::*;

    /// What a subscriber writes, kept for the test to read.
    #[derive(Clone, Default)]
    struct Captured(Arc<Mutex<Vec<u8>>>);

    impl Captured {
        fn text(&self) -> String {
            let bytes = self.0.lock().unwrap_or_else(PoisonError::into_inner);
            String::from_utf8_lossy(&bytes).into_owned()
        }
    }

    impl Write for Captured {
        fn write(&mut self, buf: &[u8]) -> std::io::Result<usize> {
            self.0
                .lock()
                .unwrap_or_else(PoisonError::into_inner)
                .extend_from_slice(buf);
            Ok(buf.len())
        }

        fn flush(&mut self) -> std::io::Result<()> {
            Ok(())
        }
    }

    impl<'a> MakeWriter<'a> for Captured {
        type Writer = Captured;

        fn make_writer(&'a self) -> Captured {
            self.clone()
        }
    }

    /// The response to `error`, and what answering it logged.
    async fn answer(error: ApiError) -> (StatusCode, String, String) {
        let log = Captured::default();
        let subscriber = tracing_subscriber::fmt()
            .with_writer(log.clone())
            .with_ansi(false)
            .finish();
        let response = tracing::subscriber::with_default(subscriber, || error.into_response());
        let status = response.status();
        let body = axum::body::to_bytes(response.into_body(), usize::MAX)
            .await
            .unwrap();
        (
            status,
            String::from_utf8(body.to_vec()).unwrap(),
            log.text(),
        )
    }

    #[tokio::test]
    async fn a_database_failure_is_logged_with_its_cause_and_not_told_to_the_client() {
        let dir = tempfile::tempdir().unwrap();
        let failure = toolbridge_store::Store::open(&dir.path().join("no-such-folder/db.sqlite3"))
            .await
            .unwrap_err();
        let cause = std::error::Error::source(&failure)
            .expect("a database failure keeps sqlx's error")
            .to_string();
        assert!(cause.contains("unable to open database file"), "{cause}");

        let (status, body, log) = answer(ApiError::from(failure)).await;
        assert_eq!(status, StatusCode::INTERNAL_SERVER_ERROR);
        assert!(log.contains("store failure"), "{log}");
        assert!(
            log.contains(&format!("the database failed: {cause}")),
            "{log}"
        );
        assert!(!body.contains(&cause), "{body}");
        assert!(!body.contains("database"), "{body}");
        assert!(body.contains("quote the requestId"), "{body}");
    }

    #[tokio::test]
    async fn a_refusal_of_the_store_is_the_protocols_error_and_is_not_logged() {
        let refusal = toolbridge_store::Error::QuoteLocked {
            reference: "Q-1001".to_owned(),
            status: toolbridge_protocol::quote::QuoteStatus::Sent,
            action: QuoteAction::Send,
        };
        let (status, body, log) = answer(ApiError::from(refusal)).await;
        assert_eq!(status, StatusCode::CONFLICT);
        let problem: serde_json::Value = serde_json::from_str(&body).unwrap();
        assert_eq!(problem["code"], "QUOTE_LOCKED");
        assert_eq!(
            problem["detail"],
            "quote Q-1001 is Sent; only a Draft quote can be sent"
        );
        assert_eq!(log, "");
    }

    #[tokio::test]
    async fn a_change_refused_for_the_quotes_version_is_412_with_its_current_etag() {
        let refusal = toolbridge_store::Error::Changed {
            quote_id: "8f14e45f-ceea-467f-a9f1-3a1c3b2f9c11".to_owned(),
            reference: "Q-1001".to_owned(),
            version: 4,
        };
        let response = ApiError::from(refusal).into_response();
        assert_eq!(response.status(), StatusCode::PRECONDITION_FAILED);
        assert_eq!(
            response.headers()[header::ETAG],
            "\"8f14e45f-ceea-467f-a9f1-3a1c3b2f9c11/v4\""
        );
        let body = axum::body::to_bytes(response.into_body(), usize::MAX)
            .await
            .unwrap();
        let problem: serde_json::Value = serde_json::from_slice(&body).unwrap();
        assert_eq!(problem["code"], "CONFLICT");
        assert_eq!(problem["type"], "/docs/errors#CONFLICT");
        let detail = problem["detail"].as_str().unwrap();
        assert!(
            detail.starts_with("quote Q-1001 changed since the version you have"),
            "{detail}"
        );
    }

    #[test]
    fn a_chain_joins_each_cause() {
        let io = std::io::Error::other("disk on fire");
        let error = ApiError::internal("reading a tool bundle", io);
        assert_eq!(
            Chain(&error).to_string(),
            "reading a tool bundle failed: disk on fire"
        );
    }
}
