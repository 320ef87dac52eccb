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

/// Reads a report's `{kind, detail}`: the params of an `sdk.blocked`
/// notification (the message itself is read by
/// [`crate::notification::read_tool_notification`]), or a report the app
/// passes on to the server. A known kind and a string detail, cut to
/// [`MAX_DETAIL_CHARS`].
///
/// # Errors
///
/// `INVALID_PARAMS` naming `params`, `params.kind` or `params.detail`.
pub fn read_blocked_params(params: &Value) -> Result<BlockedReport, Error> {
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

impl BlockedReport {
    /// One sentence for the tool's author: what was refused and what to
    /// change so that it works. For the app to show beside a tool served
    /// from a folder under development, and for the server to print.
    pub fn advice(&self) -> String {
        match self.kind {
            BlockedKind::Modal => "alert(), confirm() and prompt() do nothing in a tool frame: \
                show the message in the page, or use bridge.ui.toast and bridge.ui.confirm \
                where the app offers them"
                .to_owned(),
            BlockedKind::SecurityError => "the browser refused the page access to the app's \
                window: a tool reaches the app only through window.bridge"
                .to_owned(),
            BlockedKind::AppRequest => "a request went straight to the app's origin, which \
                never answers a tool: call the app through window.bridge instead"
                .to_owned(),
            BlockedKind::ForgedWelcome => "a window other than the app posted the bridge's \
                welcome to this tool, and it was ignored: if the tool embeds frames, check \
                what they post to it"
                .to_owned(),
            BlockedKind::Policy => policy_advice(&self.detail),
        }
    }
}

/// Advice for a Content-Security-Policy refusal, from bridge.js's detail:
/// the effective directive, a space, and the blocked URI (`inline`, `eval`
/// or a URL).
fn policy_advice(detail: &str) -> String {
    let (directive, blocked) = detail.split_once(' ').unwrap_or((detail, ""));
    let blocked = blocked.trim();
    let origin = origin_of(blocked);
    let own_files = |what: &str| {
        format!(
            "{what} from {origin} was refused: ship it in the tool's own files \
             (its origin's policy allows only those)"
        )
    };
    let family = directive.split('-').next().unwrap_or(directive);
    match (family, directive, blocked) {
        ("script", "script-src-attr", _) => "an inline event handler (onclick=\"…\" and the \
            like) was refused: attach the handler with addEventListener in a .js file"
            .to_owned(),
        ("script", _, "inline") => "an inline script was refused: move it into a .js file \
            and load it with <script src=\"…\">"
            .to_owned(),
        ("script", _, "eval" | "wasm-eval") => "eval(), new Function() or a string given to \
            setTimeout was refused: write the code in a .js file instead"
            .to_owned(),
        ("script", _, _) => own_files("a script"),
        ("style", _, "inline") => "an inline style (a <style> element or a style=\"…\" \
            attribute) was refused: move the rules into a .css file"
            .to_owned(),
        ("style", _, _) => own_files("a stylesheet"),
        ("img", _, _) => format!(
            "an image from {origin} was refused: ship it in the tool's own files, or use a \
             data: URL"
        ),
        ("font", _, _) => own_files("a font"),
        ("media", _, _) => own_files("audio or video"),
        ("connect", _, _) => format!(
            "a request to {origin} was refused: declare that origin in manifest.json's \
             permissions.connect (https origins only)"
        ),
        ("frame" | "child", _, _) => {
            format!("a frame showing {origin} was refused: a tool page may not embed other pages")
        }
        ("form", _, _) => format!(
            "a form sent to {origin} was refused: a tool's forms may post only to its own \
             origin; send data to the app through window.bridge"
        ),
        _ => format!(
            "{directive} refused {origin}: the tool origin's policy allows it only from the \
             tool's own files"
        ),
    }
}

/// The `scheme://host[:port]` a blocked URL starts with; the text itself
/// when it is not a URL (`inline`, `data`, `blob`, an empty string).
fn origin_of(blocked: &str) -> &str {
    let Some(scheme_end) = blocked.find("://") else {
        return if blocked.is_empty() {
            "another origin"
        } else {
            blocked
        };
    };
    let rest = &blocked[scheme_end + 3..];
    let end = rest
        .find(['/', '?', '#'])
        .map_or(blocked.len(), |at| scheme_end + 3 + at);
    &blocked[..end]
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

    fn advice(kind: BlockedKind, detail: &str) -> String {
        BlockedReport {
            kind,
            detail: detail.to_owned(),
        }
        .advice()
    }

    #[test]
    fn a_refused_inline_script_says_to_move_it_into_a_file() {
        for directive in ["script-src-elem", "script-src"] {
            let said = advice(BlockedKind::Policy, &format!("{directive} inline"));
            assert!(said.starts_with("an inline script was refused"), "{said}");
            assert!(said.contains("move it into a .js file"), "{said}");
        }
        let said = advice(BlockedKind::Policy, "script-src-attr inline");
        assert!(said.contains("addEventListener"), "{said}");
        let said = advice(BlockedKind::Policy, "script-src eval");
        assert!(said.contains("eval()"), "{said}");
    }

    #[test]
    fn a_refused_request_names_its_origin_and_the_manifest_field() {
        let said = advice(
            BlockedKind::Policy,
            "connect-src https://api.vendor.example:8443/prices?page=2",
        );
        assert!(
            said.contains("https://api.vendor.example:8443 was refused"),
            "{said}"
        );
        assert!(!said.contains("/prices"), "{said}");
        assert!(said.contains("permissions.connect"), "{said}");
        let said = advice(BlockedKind::Policy, "img-src https://cdn.example/logo.png");
        assert!(said.contains("https://cdn.example was refused"), "{said}");
        let said = advice(BlockedKind::Policy, "style-src-elem inline");
        assert!(said.contains(".css file"), "{said}");
        let said = advice(BlockedKind::Policy, "font-src https://fonts.example");
        assert!(said.contains("own files"), "{said}");
    }

    #[test]
    fn every_kind_has_advice_even_for_an_odd_detail() {
        for kind in [
            BlockedKind::Modal,
            BlockedKind::SecurityError,
            BlockedKind::Policy,
            BlockedKind::AppRequest,
            BlockedKind::ForgedWelcome,
        ] {
            for detail in ["", "worker-src", "x y z", "connect-src https://"] {
                assert!(!advice(kind, detail).is_empty(), "{kind:?} {detail:?}");
            }
        }
        assert!(advice(BlockedKind::Modal, "alert(): hi").contains("bridge.ui.toast"));
        assert!(
            advice(BlockedKind::AppRequest, "fetch http://localhost:8080/api")
                .contains("window.bridge")
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
