//! What a tool page tried that its frame does not allow, as bridge.js tells
//! the host: a JSON-RPC notification on the private port (no `id`, never
//! answered), `{jsonrpc:"2.0", method:"sdk.blocked", params:{kind, detail}}`.
//!
//! The browser and the server refuse these things whether or not the
//! report arrives (the sandbox, the tool's own origin, the session cookie's
//! `SameSite=Strict`); the report only makes the attempt visible in the
//! host's debug log. A hostile page can keep bridge.js from reporting, never
//! from being refused.

use serde::{Deserialize, Serialize};
use serde_json::Value;

use crate::Error;

/// The notification's method name.
pub const BLOCKED_METHOD: &str = "sdk.blocked";

/// Longest `detail` the host keeps, in characters; longer ones are cut
/// (browser messages and URLs can run long).
pub const MAX_DETAIL_CHARS: usize = 300;

/// What was tried.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub enum BlockedKind {
    /// `alert`, `confirm` or `prompt`: a tool frame has no modal dialogs.
    Modal,
    /// An uncaught `SecurityError`: the browser refused to let the page
    /// reach into the app's window (its document, its cookies) or navigate
    /// it.
    SecurityError,
    /// Something the tool origin's Content-Security-Policy refused: a
    /// request to another origin (the app's among them), an inline script.
    /// The detail names the directive and the URL.
    Policy,
    /// A `fetch` straight to the app's origin, past the bridge: the session
    /// cookie is not sent from a tool's origin and the server answers no
    /// session request that does not come from the app itself.
    AppRequest,
    /// A welcome that did not come from the host (another frame posting
    /// one to take over the tool's channel), or a second welcome.
    ForgedWelcome,
}

impl BlockedKind {
    /// What the attempt was, for a log line.
    pub fn describe(self) -> &'static str {
        match self {
            Self::Modal => "a modal dialog",
            Self::SecurityError => "access the browser refused (SecurityError)",
            Self::Policy => "something the tool origin's Content-Security-Policy forbids",
            Self::AppRequest => "a request straight to the app's origin",
            Self::ForgedWelcome => "a welcome message that did not come from the host",
        }
    }
}

/// One report.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct BlockedReport {
    /// What was tried.
    pub kind: BlockedKind,
    /// What bridge.js saw: the dialog's text, the browser's message, the
    /// URL, or the sender's origin; at most [`MAX_DETAIL_CHARS`].
    pub detail: String,
}

/// Reads the params of an `sdk.blocked` notification (the message itself is
/// read by [`crate::notification::read_tool_notification`]): `{kind, detail}`
/// with a known kind and a string detail, cut to [`MAX_DETAIL_CHARS`].
pub(crate) fn read_blocked_params(params: &Value) -> Result<BlockedReport, Error> {
    let Some(params) = params.as_object() else {
        return Err(Error::invalid("params", "must be an object {kind, detail}"));
    };
    let kind = params
        .get("kind")
        .cloned()
        .and_then(|kind| serde_json::from_value::<BlockedKind>(kind).ok());
    let Some(kind) = kind else {
        return Err(Error::invalid(
            "params.kind",
            "must be \"modal\", \"securityError\", \"policy\", \"appRequest\" or \"forgedWelcome\"",
        ));
    };
    let Some(detail) = params.get("detail").and_then(Value::as_str) else {
        return Err(Error::invalid("params.detail", "must be a string"));
    };
    Ok(BlockedReport {
        kind,
        detail: cut(detail),
    })
}

/// `text` up to [`MAX_DETAIL_CHARS`] characters, marked with `…` when cut.
fn cut(text: &str) -> String {
    match text.char_indices().nth(MAX_DETAIL_CHARS) {
        Some((end, _)) => format!("{}…", &text[..end]),
        None => text.to_owned(),
    }
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;

    fn report(params: &Value) -> Result<BlockedReport, Error> {
        read_blocked_params(params)
    }

    #[test]
    fn a_report_is_read_with_its_kind_and_detail() {
        let read = report(&json!({"kind": "modal", "detail": "alert(): saved"}));
        assert_eq!(
            read.unwrap(),
            BlockedReport {
                kind: BlockedKind::Modal,
                detail: "alert(): saved".to_owned()
            }
        );
        for (wire, kind) in [
            ("securityError", BlockedKind::SecurityError),
            ("policy", BlockedKind::Policy),
            ("appRequest", BlockedKind::AppRequest),
            ("forgedWelcome", BlockedKind::ForgedWelcome),
        ] {
            let read = report(&json!({"kind": wire, "detail": ""})).unwrap();
            assert_eq!(read.kind, kind, "{wire}");
        }
    }

    #[test]
    fn a_malformed_report_says_which_param_is_wrong() {
        let path = |read: Result<BlockedReport, Error>| read.unwrap_err().details()[0].path.clone();
        assert_eq!(path(report(&json!(["modal"]))), "params");
        assert_eq!(path(report(&Value::Null)), "params");
        assert_eq!(
            path(report(&json!({"kind": "popup", "detail": ""}))),
            "params.kind"
        );
        assert_eq!(path(report(&json!({"kind": "modal"}))), "params.detail");
        assert_eq!(
            path(report(&json!({"kind": "modal", "detail": 3}))),
            "params.detail"
        );
    }

    #[test]
    fn a_long_detail_is_cut_at_the_limit() {
        let long = "é".repeat(MAX_DETAIL_CHARS + 5);
        let read = report(&json!({"kind": "appRequest", "detail": long})).unwrap();
        assert_eq!(read.detail.chars().count(), MAX_DETAIL_CHARS + 1);
        assert!(read.detail.ends_with('…'));
        let exact = "a".repeat(MAX_DETAIL_CHARS);
        let read = report(&json!({"kind": "appRequest", "detail": exact.clone()})).unwrap();
        assert_eq!(read.detail, exact);
    }
}
