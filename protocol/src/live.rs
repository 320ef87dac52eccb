//! Live updates of the app's pages: what `GET /api/events` streams, as the store records each
//! change (in the transaction that makes it) and the server sends it on.
//!
//! Every event has an id that grows in the order the tenant's changes were committed, sent as the
//! Server-Sent Event's `id`, so that a page that reconnects names the last one it heard
//! (`Last-Event-ID`) and hears what it missed. When that cannot be told (too long ago, or the
//! server lost track), the stream sends [`RESYNC`] instead: the page reloads what it shows.

use std::collections::BTreeMap;

use serde::{Deserialize, Serialize};

use crate::quote::BridgeQuoteDto;
use crate::settings::SettingValue;

/// The event name of a [`QuoteEvent`].
pub const QUOTE: &str = "quote";
/// The event name of a [`ToolSettingsEvent`].
pub const TOOL_SETTINGS: &str = "toolSettings";
/// The event name of a [`ContextEvent`].
pub const CONTEXT: &str = "context";
/// The event name that tells a page it may have missed events: reload what it shows.
pub const RESYNC: &str = "resync";

/// What happened to a quote.
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum QuoteChange {
    /// A new quote.
    Created,
    /// Its header or its lines were saved.
    Saved,
    /// It was sent and is now locked.
    Sent,
}

/// Who made a change.
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(tag = "kind", rename_all = "lowercase")]
pub enum Actor {
    /// A signed-in user of the app.
    User {
        /// Their name.
        name: String,
        /// Their sign-in email.
        email: String,
    },
    /// An integrator's API key.
    Key {
        /// The key's name.
        name: String,
    },
}

/// The data of a [`QUOTE`] event.
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct QuoteEvent {
    /// What happened.
    pub kind: QuoteChange,
    /// The quote as lists show it, after the change.
    pub quote: BridgeQuoteDto,
    /// Who made the change.
    pub by: Actor,
}

/// The data of a [`TOOL_SETTINGS`] event: an administrator changed a tool's install settings.
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ToolSettingsEvent {
    /// The tool's slug.
    pub slug: String,
    /// The values the tool now sees, as `GET /api/tools` lists them.
    pub settings: BTreeMap<String, SettingValue>,
}

/// Whose values a [`ContextEvent`] is about.
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum ContextScope {
    /// The organisation's: every user's pages hear it.
    Organisation,
    /// One user's own: only that user's pages hear it.
    User,
}

/// The data of a [`CONTEXT`] event: the time zone, currency, units or theme in effect changed.
/// A page reads the signed-in user's context again (`GET /api/session`) and passes it on to its
/// host.
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ContextEvent {
    /// Whose values changed.
    pub scope: ContextScope,
    /// The names of the values that were set (`timeZone`, `currency`, `units`, `theme`).
    pub fields: Vec<String>,
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::quote::QuoteStatus;

    #[test]
    fn a_quote_event_reads_as_the_pages_expect() {
        let event = QuoteEvent {
            kind: QuoteChange::Saved,
            quote: BridgeQuoteDto {
                id: "q1".to_owned(),
                reference: "Q-1001".to_owned(),
                customer_name: "Ada".to_owned(),
                total: 12.5,
                status: QuoteStatus::Draft,
                date: "2026-11-26T08:00:00Z".to_owned(),
            },
            by: Actor::Key {
                name: "CRM sync".to_owned(),
            },
        };
        let json = serde_json::to_value(&event).unwrap_or_default();
        assert_eq!(json["kind"], "saved");
        assert_eq!(json["quote"]["ref"], "Q-1001");
        assert_eq!(
            json["by"],
            serde_json::json!({"kind": "key", "name": "CRM sync"})
        );
    }
}
