//! Path and query parameters whose rejections are [`ApiError`]s, so that a
//! request axum cannot read answers problem+json like every other error
//! (axum's own extractors answer such requests with plain text).

use std::collections::HashMap;
use std::ops::Deref;

use axum::extract::FromRequestParts;
use axum::http::request::Parts;

use crate::error::ApiError;

/// The one parameter of a path such as `/quotes/{id}`, as text. A segment
/// that is not valid UTF-8 once percent-decoded names nothing: `NOT_FOUND`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct PathParam(pub String);

impl<S: Send + Sync> FromRequestParts<S> for PathParam {
    type Rejection = ApiError;

    async fn from_request_parts(parts: &mut Parts, state: &S) -> Result<Self, ApiError> {
        axum::extract::Path::<String>::from_request_parts(parts, state)
            .await
            .map(|axum::extract::Path(value)| Self(value))
            .map_err(|rejection| {
                ApiError::not_found(format!(
                    "nothing has the id in this URL ({})",
                    rejection.body_text()
                ))
            })
    }
}

/// The query parameters as sent, by name (a repeated name keeps its last
/// value). Their rules are checked by whoever reads them.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Query(pub HashMap<String, String>);

impl Deref for Query {
    type Target = HashMap<String, String>;

    fn deref(&self) -> &Self::Target {
        &self.0
    }
}

impl<S: Send + Sync> FromRequestParts<S> for Query {
    type Rejection = ApiError;

    async fn from_request_parts(parts: &mut Parts, state: &S) -> Result<Self, ApiError> {
        axum::extract::Query::<HashMap<String, String>>::from_request_parts(parts, state)
            .await
            .map(|axum::extract::Query(values)| Self(values))
            .map_err(|rejection| {
                ApiError::Rule(toolbridge_protocol::Error::invalid(
                    "",
                    format!("the query string cannot be read: {}", rejection.body_text()),
                ))
            })
    }
}
