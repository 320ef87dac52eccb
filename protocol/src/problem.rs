//! REST errors as `application/problem+json` (RFC 9457).

use serde::{Deserialize, Serialize};

use crate::error::{Error, ErrorCode, Violation};

/// The media type of problem bodies.
pub const PROBLEM_CONTENT_TYPE: &str = "application/problem+json";

/// A problem body: RFC 9457's members plus the bridge error `code`, the
/// per-field `errors`, and the request id to quote when reporting it.
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct Problem {
    /// A URI reference naming the kind of problem.
    #[serde(rename = "type")]
    pub problem_type: String,
    /// Short summary of the kind of problem.
    pub title: String,
    /// The HTTP status.
    pub status: u16,
    /// What went wrong with this request.
    pub detail: String,
    /// The bridge error code.
    pub code: ErrorCode,
    /// Every violation, for 422.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub errors: Vec<Violation>,
    /// Seconds to wait, for 429 (also in the `Retry-After` header).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub retry_after: Option<u64>,
    /// The id of the request, as logged by the server.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub request_id: Option<String>,
}

fn title(code: ErrorCode) -> &'static str {
    match code {
        ErrorCode::InvalidParams => "Invalid request",
        ErrorCode::NotAllowed => "Not allowed",
        ErrorCode::NoOpenQuote => "No open quote",
        ErrorCode::QuoteLocked => "Quote locked",
        ErrorCode::NotFound => "Not found",
        ErrorCode::RateLimited => "Too many requests",
        ErrorCode::Unauthenticated => "Unauthenticated",
        ErrorCode::BackendUnavailable => "Backend unavailable",
        ErrorCode::MethodNotFound => "Unknown method",
        ErrorCode::Timeout => "Timeout",
        ErrorCode::NotConnected => "Not connected",
        ErrorCode::Offline => "Offline",
        ErrorCode::Conflict => "Changed meanwhile",
        ErrorCode::Internal => "Internal error",
    }
}

impl Problem {
    /// The problem body for an error.
    pub fn from_error(error: &Error) -> Self {
        let code = error.code();
        Self {
            problem_type: format!("/docs/errors#{}", code.as_str()),
            title: title(code).to_owned(),
            status: code.http_status(),
            detail: error.to_string(),
            code,
            errors: error.details().to_vec(),
            retry_after: error.retry_after(),
            request_id: None,
        }
    }

    /// The same problem, tagged with the request id.
    #[must_use]
    pub fn with_request_id(mut self, request_id: impl Into<String>) -> Self {
        self.request_id = Some(request_id.into());
        self
    }

    /// The bridge error a host reports for this backend answer.
    pub fn into_error(self) -> Error {
        Error::from_parts(self.code, self.detail, self.errors, self.retry_after)
    }
}
