//! The one error type of the host module, and its JavaScript form.
//!
//! Bridge calls answer tools with [`toolbridge_protocol::Error`] over the
//! port (see [`crate::dispatch`]); this type is what the *page* sees when it
//! calls the host's own API (`mount`, `openQuote`, `save`, …). It becomes a
//! JavaScript `Error` in exactly one place, [`HostError::into_js`].

use std::fmt;

use js_sys::{Array, Object, Reflect};
use toolbridge_protocol::Error as BridgeError;
use wasm_bindgen::JsValue;

/// Why a call on the host's page API failed.
#[derive(Debug, Clone, PartialEq)]
pub enum HostError {
    /// The page called the API wrongly: a bad option, an unknown tool, no
    /// quote open. The message says what and where.
    Usage(String),
    /// Closing a quote that has unsaved changes without `discard`.
    UnsavedChanges(String),
    /// The backend refused or failed, or the data it sent broke a rule.
    Bridge(BridgeError),
}

impl HostError {
    /// A misuse of the API, e.g. `HostError::usage("mount: origin must be …")`.
    pub(crate) fn usage(message: impl Into<String>) -> Self {
        HostError::Usage(message.into())
    }

    /// The string code: `USAGE`, `UNSAVED_CHANGES`, or a bridge error code.
    pub fn code(&self) -> &'static str {
        match self {
            HostError::Usage(_) => "USAGE",
            HostError::UnsavedChanges(_) => "UNSAVED_CHANGES",
            HostError::Bridge(error) => error.code().as_str(),
        }
    }

    /// The JavaScript form: an `Error` named `HostError` with `code`,
    /// `details` (`[{path, message}]`) and, when rate limited, `retryAfter`.
    pub fn into_js(self) -> JsValue {
        let error = js_sys::Error::new(&self.to_string());
        error.set_name("HostError");
        let details = Array::new();
        let mut retry_after = None;
        if let HostError::Bridge(bridge) = &self {
            for violation in bridge.details() {
                let item = Object::new();
                set(&item, "path", &JsValue::from_str(&violation.path));
                set(&item, "message", &JsValue::from_str(&violation.message));
                details.push(&item);
            }
            retry_after = bridge.retry_after();
        }
        set(&error, "code", &JsValue::from_str(self.code()));
        set(&error, "details", &details);
        if let Some(seconds) = retry_after {
            #[allow(clippy::cast_precision_loss)] // whole seconds, far below 2^53
            set(&error, "retryAfter", &JsValue::from_f64(seconds as f64));
        }
        error.into()
    }
}

fn set(target: &Object, key: &str, value: &JsValue) {
    // Setting a data property on a fresh object cannot fail.
    let _ = Reflect::set(target, &JsValue::from_str(key), value);
}

impl fmt::Display for HostError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            HostError::Usage(message) | HostError::UnsavedChanges(message) => f.write_str(message),
            HostError::Bridge(error) => write!(f, "{error}"),
        }
    }
}

impl std::error::Error for HostError {}

impl From<BridgeError> for HostError {
    fn from(error: BridgeError) -> Self {
        HostError::Bridge(error)
    }
}

impl From<HostError> for JsValue {
    fn from(error: HostError) -> Self {
        error.into_js()
    }
}
