//! The server's one error type, and its conversion to an HTTP response: a
//! problem+json body (RFC 9457) from `toolbridge-protocol`, with the request
//! id, and the headers some statuses need.

use axum::http::{HeaderValue, StatusCode, header};
use axum::response::{IntoResponse, Response};
use toolbridge_protocol::problem::{PROBLEM_CONTENT_TYPE, Problem};
use toolbridge_protocol::{Error as RuleError, ErrorCode};

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
    /// The store failed.
    #[error("{0}")]
    Store(String),
}

impl From<toolbridge_store::Error> for ApiError {
    fn from(error: toolbridge_store::Error) -> Self {
        match error {
            toolbridge_store::Error::Rule(rule) => ApiError::Rule(rule),
            other @ toolbridge_store::Error::Database(_) => ApiError::Store(other.to_string()),
        }
    }
}

impl From<toolbridge_bundle::Error> for ApiError {
    /// A refused bundle is `INVALID_PARAMS`: one violation per refusal, its
    /// path the entry (or `bundle`), its message ending in the rule's id.
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
            other @ toolbridge_bundle::Error::Io { .. } => ApiError::Store(other.to_string()),
        }
    }
}

impl ApiError {
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

impl IntoResponse for ApiError {
    fn into_response(self) -> Response {
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
            ApiError::Store(message) => {
                tracing::error!(error = %message, "store failure");
                let rule = RuleError::Internal(
                    "the server could not complete the request; quote the requestId when reporting it"
                        .to_owned(),
                );
                (Problem::from_error(&rule), None)
            }
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
        response
    }
}
