//! The server's one error type, and its conversion to an HTTP response: a
//! problem+json body (RFC 9457) from `toolbridge-protocol`, with the request
//! id, and the headers some statuses need. The OpenAPI side of the same
//! conversion is here too: the problem response every operation documents,
//! and the headers that come with 401 and 429.

use axum::http::{HeaderValue, StatusCode, header};
use axum::response::{IntoResponse, Response};
use toolbridge_protocol::problem::{PROBLEM_CONTENT_TYPE, Problem};
use toolbridge_protocol::{Error as RuleError, ErrorCode};
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
    /// The store failed.
    #[error("{0}")]
    Store(String),
    /// Something else on the server failed, not the request.
    #[error("{0}")]
    Internal(String),
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
            ApiError::Store(message) | ApiError::Internal(message) => {
                let what = if matches!(self, ApiError::Store(_)) {
                    "store failure"
                } else {
                    "server failure"
                };
                tracing::error!(error = %message, "{what}");
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
