//! JSON-RPC 2.0 over the private port: requests, responses, and the error
//! object carrying the bridge error codes.

use std::fmt;

use serde::de::{self, Unexpected, Visitor};
use serde::{Deserialize, Deserializer, Serialize};
use serde_json::Value;

use crate::error::{Error, ErrorCode, Violation};
use crate::input::kind;
use crate::method::Method;

/// The `jsonrpc` member of every message.
pub const JSONRPC_VERSION: &str = "2.0";

/// A request id: the SDK sends numbers; strings are accepted too.
#[derive(Debug, Clone, PartialEq, Eq, Hash, Serialize)]
#[serde(untagged)]
pub enum RpcId {
    /// A number.
    Number(i64),
    /// A string.
    String(String),
}

// By hand rather than `#[serde(untagged)]`, whose reader buffers the value
// before trying each variant (code the host module would carry for this
// type alone). It takes what the derived one took: an integer that fits an
// `i64`, or a string.
impl<'de> Deserialize<'de> for RpcId {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        struct IdVisitor;

        impl Visitor<'_> for IdVisitor {
            type Value = RpcId;

            fn expecting(&self, formatter: &mut fmt::Formatter<'_>) -> fmt::Result {
                formatter.write_str("a request id: an integer or a string")
            }

            fn visit_i64<E: de::Error>(self, value: i64) -> Result<RpcId, E> {
                Ok(RpcId::Number(value))
            }

            fn visit_u64<E: de::Error>(self, value: u64) -> Result<RpcId, E> {
                i64::try_from(value)
                    .map(RpcId::Number)
                    .map_err(|_| E::invalid_value(Unexpected::Unsigned(value), &self))
            }

            fn visit_str<E: de::Error>(self, value: &str) -> Result<RpcId, E> {
                Ok(RpcId::String(value.to_owned()))
            }

            fn visit_string<E: de::Error>(self, value: String) -> Result<RpcId, E> {
                Ok(RpcId::String(value))
            }
        }

        deserializer.deserialize_any(IdVisitor)
    }
}

/// `{jsonrpc:"2.0", id, method, params}`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct RpcRequest {
    /// Always `"2.0"`.
    pub jsonrpc: String,
    /// Matches the response to the request.
    pub id: RpcId,
    /// A method name.
    pub method: String,
    /// The method's single argument (absent for `context.get`).
    #[serde(default, skip_serializing_if = "Value::is_null")]
    pub params: Value,
}

impl RpcRequest {
    /// A request for `method` with its argument.
    pub fn new(id: RpcId, method: Method, params: Value) -> Self {
        Self {
            jsonrpc: JSONRPC_VERSION.to_owned(),
            id,
            method: method.name().to_owned(),
            params,
        }
    }
}

/// A decoded call, ready for dispatch.
#[derive(Debug, Clone, PartialEq)]
pub struct Call {
    /// Request id.
    pub id: RpcId,
    /// Which method.
    pub method: Method,
    /// Its argument.
    pub params: Value,
}

/// A message that could not be decoded as a call, with the id to answer to
/// when one could be read.
#[derive(Debug, Clone, PartialEq)]
pub struct Rejected {
    /// The request's id, if it had a readable one.
    pub id: Option<RpcId>,
    /// Why it was rejected.
    pub error: Error,
}

/// Decodes a message from the port as a call. Never panics, whatever the
/// input.
pub fn decode_call(message: &Value) -> Result<Call, Rejected> {
    let Value::Object(map) = message else {
        return Err(Rejected {
            id: None,
            error: Error::invalid(
                "",
                format!(
                    "a call must be a JSON-RPC 2.0 object, not {}",
                    kind(message)
                ),
            ),
        });
    };
    let id = map
        .get("id")
        .and_then(|id| serde_json::from_value::<RpcId>(id.clone()).ok());
    let reject = |id: Option<RpcId>, error: Error| Err(Rejected { id, error });
    if map.get("jsonrpc").and_then(Value::as_str) != Some(JSONRPC_VERSION) {
        return reject(id, Error::invalid("jsonrpc", "must be \"2.0\""));
    }
    let Some(id) = id else {
        return reject(None, Error::invalid("id", "must be a number or a string"));
    };
    let Some(name) = map.get("method").and_then(Value::as_str) else {
        return reject(Some(id), Error::invalid("method", "must be a string"));
    };
    let Some(method) = Method::from_name(name) else {
        return reject(Some(id), Error::MethodNotFound(name.to_owned()));
    };
    let params = map.get("params").cloned().unwrap_or(Value::Null);
    Ok(Call { id, method, params })
}

/// The `error` member of a failed response.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct RpcError {
    /// JSON-RPC error number.
    pub code: i32,
    /// What went wrong, in words.
    pub message: String,
    /// The bridge's own error code and details.
    pub data: RpcErrorData,
}

/// `error.data`: the string code, per-field details, and retry advice.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct RpcErrorData {
    /// The bridge error code.
    pub code: ErrorCode,
    /// Every violation, for `INVALID_PARAMS`.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub details: Vec<Violation>,
    /// Seconds to wait, for `RATE_LIMITED`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub retry_after: Option<u64>,
}

impl From<&Error> for RpcError {
    fn from(error: &Error) -> Self {
        let code = error.code();
        Self {
            code: code.rpc_code(),
            message: error.to_string(),
            data: RpcErrorData {
                code,
                details: error.details().to_vec(),
                retry_after: error.retry_after(),
            },
        }
    }
}

impl From<RpcError> for Error {
    fn from(error: RpcError) -> Self {
        Error::from_parts(
            error.data.code,
            error.message,
            error.data.details,
            error.data.retry_after,
        )
    }
}

/// What a response carries: a result or an error.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Outcome {
    /// The method's result.
    Result(Value),
    /// The failure.
    Error(RpcError),
}

/// `{jsonrpc:"2.0", id, result}` or `{jsonrpc:"2.0", id, error}`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct RpcResponse {
    /// Always `"2.0"`.
    pub jsonrpc: String,
    /// The request's id; `null` when it could not be read.
    pub id: Option<RpcId>,
    /// Result or error.
    #[serde(flatten)]
    pub outcome: Outcome,
}

impl RpcResponse {
    /// A successful response.
    pub fn success(id: RpcId, result: Value) -> Self {
        Self {
            jsonrpc: JSONRPC_VERSION.to_owned(),
            id: Some(id),
            outcome: Outcome::Result(result),
        }
    }

    /// A failed response.
    pub fn failure(id: Option<RpcId>, error: &Error) -> Self {
        Self {
            jsonrpc: JSONRPC_VERSION.to_owned(),
            id,
            outcome: Outcome::Error(error.into()),
        }
    }
}

impl From<Rejected> for RpcResponse {
    fn from(rejected: Rejected) -> Self {
        RpcResponse::failure(rejected.id, &rejected.error)
    }
}
