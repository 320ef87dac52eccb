//! Request bodies: read as raw bytes (for the idempotency hash), parsed as
//! JSON with a clear 400 when they are not JSON, then handed to the
//! protocol's validation, which reports every rule broken with its path.

use axum::body::Bytes;
use axum::extract::{FromRequest, Request};
use axum::http::{StatusCode, header};
use serde_json::Value;

use crate::error::ApiError;

/// A JSON request body and its bytes.
#[derive(Debug)]
pub struct JsonBody {
    /// The parsed body.
    pub value: Value,
    /// The body as sent.
    pub bytes: Bytes,
}

impl<S: Send + Sync> FromRequest<S> for JsonBody {
    type Rejection = ApiError;

    async fn from_request(request: Request, state: &S) -> Result<Self, ApiError> {
        let json = request
            .headers()
            .get(header::CONTENT_TYPE)
            .and_then(|value| value.to_str().ok())
            .is_some_and(|value| {
                value
                    .split(';')
                    .next()
                    .is_some_and(|mime| mime.trim().eq_ignore_ascii_case("application/json"))
            });
        if !json {
            return Err(ApiError::malformed(
                "the body must be JSON sent with `Content-Type: application/json`",
            ));
        }
        let bytes = Bytes::from_request(request, state)
            .await
            .map_err(|rejection| ApiError::Unreadable {
                status: if rejection.status() == StatusCode::PAYLOAD_TOO_LARGE {
                    StatusCode::PAYLOAD_TOO_LARGE
                } else {
                    StatusCode::BAD_REQUEST
                },
                message: rejection.body_text(),
            })?;
        let value = serde_json::from_slice(&bytes)
            .map_err(|error| ApiError::malformed(format!("the body is not valid JSON: {error}")))?;
        Ok(Self { value, bytes })
    }
}

/// Reads a typed body, naming the path of the first field that does not
/// fit (`lines[2].qty: invalid type: string "x", expected f64`).
pub fn typed<T: serde::de::DeserializeOwned>(value: Value) -> Result<T, ApiError> {
    serde_path_to_error::deserialize(value).map_err(|error| {
        let path = error.path().to_string();
        let path = if path == "." { String::new() } else { path };
        ApiError::Rule(toolbridge_protocol::Error::invalid(
            path,
            error.into_inner().to_string(),
        ))
    })
}
