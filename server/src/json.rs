//! Request bodies: read as raw bytes (for the idempotency hash), parsed as
//! JSON with a clear 400 when they are not JSON, then handed to the
//! protocol's validation, which reports every rule broken with its path.

use std::collections::BTreeMap;

use axum::body::Bytes;
use axum::extract::{FromRequest, Request};
use axum::http::{StatusCode, header};
use futures_util::StreamExt;
use serde_json::Value;
use utoipa::IntoResponses;
use utoipa::openapi::{RefOr, Response};

use crate::error::{ApiError, problem_response};

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

    async fn from_request(request: Request, _state: &S) -> Result<Self, ApiError> {
        read_json(request, BODY_LIMIT).await
    }
}

/// A JSON request body of up to `LIMIT` bytes, for the one endpoint that takes more than
/// [`BODY_LIMIT`] (the server's fetch, whose binary bodies travel as base64).
#[derive(Debug)]
pub struct LargeJsonBody<const LIMIT: usize>(pub JsonBody);

impl<S: Send + Sync, const LIMIT: usize> FromRequest<S> for LargeJsonBody<LIMIT> {
    type Rejection = ApiError;

    async fn from_request(request: Request, _state: &S) -> Result<Self, ApiError> {
        read_json(request, LIMIT).await.map(Self)
    }
}

/// The JSON body of `request`, of at most `limit` bytes.
async fn read_json(request: Request, limit: usize) -> Result<JsonBody, ApiError> {
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
    let bytes = read_body(request, limit).await?;
    let value = serde_json::from_slice(&bytes)
        .map_err(|error| ApiError::malformed(format!("the body is not valid JSON: {error}")))?;
    Ok(JsonBody { value, bytes })
}

/// The largest JSON body taken (2 MiB, as axum's default limit).
pub const BODY_LIMIT: usize = 2 * 1024 * 1024;

/// How much of a body over its limit is still read, and thrown away, so
/// that a client that is still sending it gets the 413 rather than a broken
/// pipe: this many times the limit. A longer body is cut off where it
/// crosses that.
const DRAIN_FACTOR: usize = 8;

/// The body of `request`: 413 when it is over `limit` (read to its end first,
/// up to [`DRAIN_FACTOR`] times the limit), 400 when it cannot be read.
async fn read_body(request: Request, limit: usize) -> Result<Bytes, ApiError> {
    let too_large = || ApiError::Unreadable {
        status: StatusCode::PAYLOAD_TOO_LARGE,
        message: format!("the body is over {} MiB", limit / (1024 * 1024)),
    };
    let drain_limit = limit.saturating_mul(DRAIN_FACTOR);
    let declared = request
        .headers()
        .get(header::CONTENT_LENGTH)
        .and_then(|value| value.to_str().ok())
        .and_then(|value| value.parse::<usize>().ok());
    if declared.is_some_and(|length| length > drain_limit) {
        return Err(too_large());
    }
    // A body declared over the limit is only drained, never kept.
    let keep = declared.is_none_or(|length| length <= limit);
    let mut body = request.into_body().into_data_stream();
    let mut bytes = Vec::with_capacity(if keep { declared.unwrap_or(0) } else { 0 });
    let mut read: usize = 0;
    while let Some(chunk) = body.next().await {
        let chunk = chunk
            .map_err(|error| ApiError::malformed(format!("the body cannot be read: {error}")))?;
        read = read.saturating_add(chunk.len());
        if read > drain_limit {
            return Err(too_large());
        } else if keep && read <= limit {
            bytes.extend_from_slice(&chunk);
        } else if !bytes.is_empty() {
            bytes = Vec::new();
        }
    }
    if read > limit {
        return Err(too_large());
    }
    Ok(Bytes::from(bytes))
}

/// OpenAPI: what [`JsonBody`] answers before the handler sees the request.
/// Name it in the `responses` of every operation that reads one.
pub struct BodyErrors;

impl IntoResponses for BodyErrors {
    fn responses() -> BTreeMap<String, RefOr<Response>> {
        BTreeMap::from([
            (
                "400".to_owned(),
                problem_response(
                    "the body is not JSON, or was not sent as `Content-Type: application/json`",
                )
                .into(),
            ),
            (
                "413".to_owned(),
                problem_response(&format!(
                    "the body is over {} MiB, the server's limit for JSON",
                    BODY_LIMIT / (1024 * 1024)
                ))
                .into(),
            ),
        ])
    }
}

/// Reads a typed body, naming the path of the first field that does not
/// fit (`lines[2].qty: invalid type: string "x", expected f64`). A whole
/// number written with a fraction part (`3155.0`) reads where an integer is
/// expected: JSON has one kind of number, and JSON Schema's `integer`, which
/// the OpenAPI document uses, is any number whose fraction part is zero.
pub fn typed<T: serde::de::DeserializeOwned>(mut value: Value) -> Result<T, ApiError> {
    whole_numbers_as_integers(&mut value);
    serde_path_to_error::deserialize(value).map_err(|error| {
        let path = error.path().to_string();
        let path = if path == "." { String::new() } else { path };
        ApiError::Rule(toolbridge_protocol::Error::invalid(
            path,
            error.into_inner().to_string(),
        ))
    })
}

/// 2^64 and 2^63, the ends of the integers a JSON number can hold here.
const TWO_TO_64: f64 = 18_446_744_073_709_551_616.0;
const TWO_TO_63: f64 = 9_223_372_036_854_775_808.0;

/// Turns every number of `value` that is whole but was written as a float
/// (`3155.0`, `1e3`) into that integer, where a `u64` or `i64` holds it. A
/// float field still reads the integer as the same value.
fn whole_numbers_as_integers(value: &mut Value) {
    match value {
        Value::Number(number) => {
            let Some(float) = number.as_f64().filter(|_| number.is_f64()) else {
                return;
            };
            if float.fract() != 0.0 {
                return;
            }
            // Whole and within the type's range: the conversions are exact.
            #[allow(clippy::cast_possible_truncation, clippy::cast_sign_loss)]
            let integer = if (0.0..TWO_TO_64).contains(&float) {
                Value::from(float as u64)
            } else if (-TWO_TO_63..0.0).contains(&float) {
                Value::from(float as i64)
            } else {
                return;
            };
            *value = integer;
        }
        Value::Array(items) => items.iter_mut().for_each(whole_numbers_as_integers),
        Value::Object(fields) => fields.values_mut().for_each(whole_numbers_as_integers),
        Value::Null | Value::Bool(_) | Value::String(_) => {}
    }
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;

    #[test]
    fn whole_floats_read_as_integers_and_other_numbers_stay() {
        let mut value = json!({
            "a": 3155.0, "b": [1e3, -2.0, -0.0, 1.5, 1e300, 7],
            "c": {
                "d": 18_446_744_073_709_549_568.0, "e": -9_223_372_036_854_775_808.0,
                "f": 18_446_744_073_709_551_616.0
            }
        });
        whole_numbers_as_integers(&mut value);
        assert_eq!(value["a"].as_u64(), Some(3155));
        assert_eq!(value["b"][0].as_u64(), Some(1000));
        assert_eq!(value["b"][1].as_i64(), Some(-2));
        assert_eq!(value["b"][2].as_u64(), Some(0));
        assert_eq!(value["b"][3].as_f64(), Some(1.5));
        assert!(value["b"][4].is_f64(), "beyond every integer type");
        assert_eq!(value["b"][5].as_u64(), Some(7));
        // The largest float below 2^64, and -2^63; 2^64 fits no integer type.
        assert_eq!(value["c"]["d"].as_u64(), Some(u64::MAX - 2047));
        assert_eq!(value["c"]["e"].as_i64(), Some(i64::MIN));
        assert!(value["c"]["f"].is_f64());
    }

    #[test]
    fn a_typed_body_takes_a_whole_float_for_an_integer_and_names_a_fraction() {
        #[derive(Debug, serde::Deserialize)]
        struct Body {
            count: u32,
        }
        let body: Body = typed(json!({"count": 52906.0})).unwrap();
        assert_eq!(body.count, 52906);
        let Err(ApiError::Rule(error)) = typed::<Body>(json!({"count": 2.5})) else {
            panic!("2.5 is not a count");
        };
        assert!(error.to_string().contains("count"), "{error}");
    }
}
