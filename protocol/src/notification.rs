//! JSON-RPC notifications on the private port: messages without an `id`,
//! never answered.
//!
//! - Tool → host: what bridge.js reports, `sdk.blocked` ([`crate::blocked`])
//!   and `ui.resize` (the document's height, for auto-resize).
//! - Host → tool: the events a tool subscribes to with `bridge.on`,
//!   `quote.changed`, `session.ended`, `settings.changed` (with the
//!   install settings the page passes, read by [`read_settings_values`])
//!   and `context.changed` (the values of the host's context that changed),
//!   and `connectivity.changed` (whether the server can be reached);
//!   and `bridge.deprecated`, which bridge.js shows on the tool's console
//!   ([`Deprecation`]).
//!
//! Both directions travel only on the port the host handed over in the
//! welcome, so nothing another window posts can pass for one.

use serde::Serialize;
use serde_json::{Map, Value};

use crate::blocked::{BLOCKED_METHOD, BlockedReport, read_blocked_params};
use crate::connectivity::Connectivity;
use crate::context::ContextValues;
use crate::quote_view::BridgeOpenQuoteDto;
use crate::rpc::JSONRPC_VERSION;
use crate::ui::read_resize;
use crate::{Error, Violation};

/// The method of the report bridge.js sends for auto-resize.
pub const RESIZE_METHOD: &str = "ui.resize";

/// The method name of `message` when it is a well-formed notification
/// (`jsonrpc` "2.0", a string `method`, no `id`), with its object.
fn notification(message: &Value) -> Option<(&str, &Map<String, Value>)> {
    let map = message.as_object()?;
    if map.contains_key("id") || map.get("jsonrpc").and_then(Value::as_str) != Some(JSONRPC_VERSION)
    {
        return None;
    }
    Some((map.get("method")?.as_str()?, map))
}

/// A notification from a tool's bridge.js.
#[derive(Debug, Clone, PartialEq)]
pub enum ToolNotification {
    /// `sdk.blocked`: something the tool's frame refused the page.
    Blocked(BlockedReport),
    /// `ui.resize`: the document's height in CSS pixels.
    Resize(f64),
}

/// Reads a message from a tool's port as one of bridge.js's notifications.
/// `None` when it is not one (a call, or garbage, for the caller to answer);
/// otherwise the method's name with the notification, or with what is wrong
/// with its params.
pub fn read_tool_notification(
    message: &Value,
) -> Option<(&'static str, Result<ToolNotification, Error>)> {
    let (method, map) = notification(message)?;
    let params = map.get("params").unwrap_or(&Value::Null);
    match method {
        BLOCKED_METHOD => Some((
            BLOCKED_METHOD,
            read_blocked_params(params).map(ToolNotification::Blocked),
        )),
        RESIZE_METHOD => Some((
            RESIZE_METHOD,
            read_resize(params).map(ToolNotification::Resize),
        )),
        _ => None,
    }
}

/// The events a tool can subscribe to with `bridge.on`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum EventName {
    /// `quote.changed` (`quoting_extension` tools).
    QuoteChanged,
    /// `session.ended` (every tool).
    SessionEnded,
    /// `settings.changed` (tools the page mounted with settings).
    SettingsChanged,
    /// `context.changed` (the page gave the host its context).
    ContextChanged,
    /// `connectivity.changed` (every tool).
    ConnectivityChanged,
}

impl EventName {
    /// Every event.
    pub const ALL: [EventName; 5] = [
        EventName::QuoteChanged,
        EventName::SessionEnded,
        EventName::SettingsChanged,
        EventName::ContextChanged,
        EventName::ConnectivityChanged,
    ];

    /// The wire name, also the notification's method.
    pub fn name(self) -> &'static str {
        match self {
            EventName::QuoteChanged => "quote.changed",
            EventName::SessionEnded => "session.ended",
            EventName::SettingsChanged => "settings.changed",
            EventName::ContextChanged => "context.changed",
            EventName::ConnectivityChanged => "connectivity.changed",
        }
    }
}

/// What happened to the open quote, as `quote.changed` says it.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "camelCase")]
pub enum QuoteChangeKind {
    /// A quote was opened in the editor.
    Opened,
    /// A tool's `addLines` batch was merged (this tool's or another's).
    LinesAdded,
    /// The user changed a line.
    Edited,
    /// The user removed lines.
    Removed,
    /// The quote was saved.
    Saved,
    /// The quote was sent, and is now locked.
    Sent,
    /// The quote was closed; no quote is open.
    Closed,
}

/// Why the session ended, as `session.ended` says it.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "camelCase")]
pub enum SessionEndReason {
    /// The user signed out.
    SignedOut,
    /// The backend no longer accepts the session.
    Expired,
}

/// A notification from the host to a tool.
#[derive(Debug, Clone, PartialEq)]
pub enum HostEvent<'q> {
    /// `quote.changed`: `{kind, quote}`, `quote` as `quotes.getOpen` would
    /// answer now (`null` once closed).
    QuoteChanged {
        /// What happened.
        kind: QuoteChangeKind,
        /// The open quote after the change.
        quote: Option<&'q BridgeOpenQuoteDto>,
    },
    /// `session.ended`: `{reason}`.
    SessionEnded(SessionEndReason),
    /// `settings.changed`: `{settings}`, the tool's install settings now,
    /// whole (as `settings.get` would answer).
    SettingsChanged(&'q Map<String, Value>),
    /// `context.changed`: the values of the host's context that changed,
    /// and only those (`{theme: "dark"}`), as `context.get` now answers them.
    ContextChanged(&'q ContextValues),
    /// `connectivity.changed`: `{online}`, whether the server can be reached
    /// now, as `connectivity.get` would answer.
    ConnectivityChanged(Connectivity),
}

impl HostEvent<'_> {
    /// The event's name, the notification's method.
    pub fn name(&self) -> EventName {
        match self {
            HostEvent::QuoteChanged { .. } => EventName::QuoteChanged,
            HostEvent::SessionEnded(_) => EventName::SessionEnded,
            HostEvent::SettingsChanged(_) => EventName::SettingsChanged,
            HostEvent::ContextChanged(_) => EventName::ContextChanged,
            HostEvent::ConnectivityChanged(_) => EventName::ConnectivityChanged,
        }
    }

    /// The notification as JSON text: `{jsonrpc, method, params}`.
    pub fn to_json(&self) -> Result<String, Error> {
        #[derive(Serialize)]
        struct Notification<'a, P> {
            jsonrpc: &'a str,
            method: &'a str,
            params: P,
        }
        #[derive(Serialize)]
        struct Changed<'q> {
            kind: QuoteChangeKind,
            quote: Option<&'q BridgeOpenQuoteDto>,
        }
        #[derive(Serialize)]
        struct Ended {
            reason: SessionEndReason,
        }
        #[derive(Serialize)]
        struct Settings<'s> {
            settings: &'s Map<String, Value>,
        }
        let method = self.name().name();
        let text = match self {
            HostEvent::QuoteChanged { kind, quote } => serde_json::to_string(&Notification {
                jsonrpc: JSONRPC_VERSION,
                method,
                params: Changed {
                    kind: *kind,
                    quote: *quote,
                },
            }),
            HostEvent::SessionEnded(reason) => serde_json::to_string(&Notification {
                jsonrpc: JSONRPC_VERSION,
                method,
                params: Ended { reason: *reason },
            }),
            HostEvent::SettingsChanged(settings) => serde_json::to_string(&Notification {
                jsonrpc: JSONRPC_VERSION,
                method,
                params: Settings { settings },
            }),
            HostEvent::ContextChanged(changed) => serde_json::to_string(&Notification {
                jsonrpc: JSONRPC_VERSION,
                method,
                params: changed,
            }),
            HostEvent::ConnectivityChanged(state) => serde_json::to_string(&Notification {
                jsonrpc: JSONRPC_VERSION,
                method,
                params: state,
            }),
        };
        text.map_err(|error| Error::Internal(format!("cannot encode {method}: {error}")))
    }
}

/// The method of the notice a host sends a tool that used a deprecated part
/// of the bridge: `{message}`, which bridge.js shows on the tool's console,
/// once per page. It comes before the reply to the call that used it.
pub const DEPRECATED_METHOD: &str = "bridge.deprecated";

/// A deprecated part of the bridge that a tool used, which still works.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Deprecation {
    /// `productId` on a `quotes.addLines` line (SPEC.md keeps it for older
    /// tools; [`crate::add_lines`] reads it as `linkedItemId` of a product).
    ProductId,
}

impl Deprecation {
    /// What the tool's console says.
    pub fn message(self) -> &'static str {
        match self {
            Deprecation::ProductId => {
                "toolbridge: `productId` on quotes.addLines lines is deprecated; send \
                 `linkedItemId` with `lineType: \"product\"` instead. (Shown once.)"
            }
        }
    }

    /// The notice as JSON text: `{jsonrpc, method, params: {message}}`.
    pub fn to_json(self) -> String {
        serde_json::json!({
            "jsonrpc": JSONRPC_VERSION,
            "method": DEPRECATED_METHOD,
            "params": {"message": self.message()},
        })
        .to_string()
    }
}

/// Reads the install settings a page passes to a tool: a plain object of
/// setting keys to strings, numbers and booleans. Which keys a tool
/// declares and what each may hold is the server's to check; the host passes
/// on what the page gives it, once it is that shape.
///
/// # Errors
///
/// `INVALID_PARAMS` with every problem: the whole (path `""`) when it is not
/// an object, each value that is not a string, number or boolean at its key.
pub fn read_settings_values(value: &Value) -> Result<Map<String, Value>, Error> {
    let Some(object) = value.as_object() else {
        return Err(Error::invalid(
            "",
            format!(
                "must be an object of setting keys to strings, numbers and booleans (got {})",
                crate::input::kind(value)
            ),
        ));
    };
    let problems: Vec<Violation> = object
        .iter()
        .filter(|(_, value)| !matches!(value, Value::String(_) | Value::Number(_) | Value::Bool(_)))
        .map(|(key, value)| {
            Violation::new(
                key.clone(),
                format!(
                    "must be a string, number or boolean (got {})",
                    crate::input::kind(value)
                ),
            )
        })
        .collect();
    if problems.is_empty() {
        Ok(object.clone())
    } else {
        Err(Error::InvalidParams(problems))
    }
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;
    use crate::blocked::BlockedKind;

    #[test]
    fn a_deprecation_notice_is_a_notification_with_its_message() {
        let notice: Value = serde_json::from_str(&Deprecation::ProductId.to_json()).unwrap();
        assert_eq!(notice["jsonrpc"], "2.0");
        assert_eq!(notice["method"], DEPRECATED_METHOD);
        assert!(notice.get("id").is_none());
        let message = notice["params"]["message"].as_str().unwrap();
        assert!(message.contains("`productId`"), "{message}");
        assert!(message.contains("`linkedItemId`"), "{message}");
    }

    #[test]
    fn bridge_js_reports_are_read_by_their_method() {
        let blocked = json!({"jsonrpc": "2.0", "method": "sdk.blocked",
            "params": {"kind": "modal", "detail": "alert(): hi"}});
        let (method, read) = read_tool_notification(&blocked).unwrap();
        assert_eq!(method, "sdk.blocked");
        let Ok(ToolNotification::Blocked(report)) = read else {
            panic!("a blocked report: {read:?}");
        };
        assert_eq!(report.kind, BlockedKind::Modal);
        let resize = json!({"jsonrpc": "2.0", "method": "ui.resize", "params": {"height": 333}});
        assert_eq!(
            read_tool_notification(&resize),
            Some(("ui.resize", Ok(ToolNotification::Resize(333.0))))
        );
        let bad = json!({"jsonrpc": "2.0", "method": "ui.resize", "params": {"height": "tall"}});
        let (_, read) = read_tool_notification(&bad).unwrap();
        assert_eq!(read.unwrap_err().details()[0].path, "params.height");
    }

    #[test]
    fn calls_and_unknown_notifications_are_not_reports() {
        for message in [
            json!({"jsonrpc": "2.0", "id": 1, "method": "ui.resize", "params": {"height": 1}}),
            json!({"jsonrpc": "2.0", "method": "ui.explode"}),
            json!({"jsonrpc": "1.0", "method": "ui.resize", "params": {"height": 1}}),
            json!({"jsonrpc": "2.0", "method": 7}),
            json!("ui.resize"),
        ] {
            assert!(read_tool_notification(&message).is_none(), "{message}");
        }
    }

    #[test]
    fn host_events_are_notifications_without_an_id() {
        let ended = HostEvent::SessionEnded(SessionEndReason::SignedOut);
        let value: Value = serde_json::from_str(&ended.to_json().unwrap()).unwrap();
        assert_eq!(
            value,
            json!({"jsonrpc": "2.0", "method": "session.ended", "params": {"reason": "signedOut"}})
        );
        let closed = HostEvent::QuoteChanged {
            kind: QuoteChangeKind::Closed,
            quote: None,
        };
        let value: Value = serde_json::from_str(&closed.to_json().unwrap()).unwrap();
        assert_eq!(
            value,
            json!({"jsonrpc": "2.0", "method": "quote.changed", "params": {"kind": "closed", "quote": null}})
        );
        for (kind, wire) in [
            (QuoteChangeKind::Opened, "opened"),
            (QuoteChangeKind::LinesAdded, "linesAdded"),
            (QuoteChangeKind::Edited, "edited"),
            (QuoteChangeKind::Removed, "removed"),
            (QuoteChangeKind::Saved, "saved"),
            (QuoteChangeKind::Sent, "sent"),
        ] {
            assert_eq!(serde_json::to_value(kind).unwrap(), json!(wire));
        }
        assert_eq!(
            EventName::ALL.map(EventName::name),
            [
                "quote.changed",
                "session.ended",
                "settings.changed",
                "context.changed",
                "connectivity.changed"
            ]
        );
        for online in [false, true] {
            let changed = HostEvent::ConnectivityChanged(Connectivity { online });
            assert_eq!(changed.name(), EventName::ConnectivityChanged);
            let value: Value = serde_json::from_str(&changed.to_json().unwrap()).unwrap();
            assert_eq!(
                value,
                json!({"jsonrpc": "2.0", "method": "connectivity.changed", "params": {"online": online}})
            );
        }
        let changed = crate::context::ContextValues {
            theme: Some(crate::context::Theme::Dark),
            ..crate::context::ContextValues::default()
        };
        let value: Value =
            serde_json::from_str(&HostEvent::ContextChanged(&changed).to_json().unwrap()).unwrap();
        assert_eq!(
            value,
            json!({"jsonrpc": "2.0", "method": "context.changed", "params": {"theme": "dark"}})
        );
        let settings =
            read_settings_values(&json!({"wastePercent": 12, "region": "North"})).unwrap();
        let changed = HostEvent::SettingsChanged(&settings);
        assert_eq!(changed.name(), EventName::SettingsChanged);
        let value: Value = serde_json::from_str(&changed.to_json().unwrap()).unwrap();
        assert_eq!(
            value,
            json!({"jsonrpc": "2.0", "method": "settings.changed",
                   "params": {"settings": {"wastePercent": 12, "region": "North"}}})
        );
    }

    #[test]
    fn settings_values_are_strings_numbers_and_booleans_each_problem_at_its_key() {
        let read = read_settings_values(&json!({"a": "x", "b": 1.5, "c": false, "d": ""})).unwrap();
        assert_eq!(read.len(), 4);
        assert_eq!(read_settings_values(&json!({})).unwrap().len(), 0);
        let error =
            read_settings_values(&json!({"ok": 1, "list": [1], "nested": {"x": 1}, "none": null}))
                .unwrap_err();
        let problems: Vec<(&str, &str)> = error
            .details()
            .iter()
            .map(|v| (v.path.as_str(), v.message.as_str()))
            .collect();
        assert_eq!(problems.len(), 3, "{problems:?}");
        for (key, kind) in [
            ("list", "an array"),
            ("nested", "an object"),
            ("none", "null"),
        ] {
            assert!(
                problems.contains(&(
                    key,
                    &*format!("must be a string, number or boolean (got {kind})")
                )),
                "{key}: {problems:?}"
            );
        }
        for whole in [json!([1]), json!("x"), json!(null)] {
            let error = read_settings_values(&whole).unwrap_err();
            assert_eq!(error.details()[0].path, "", "{whole}");
        }
    }
}
