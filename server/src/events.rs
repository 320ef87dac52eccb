//! Live updates for the app's pages: `GET /api/events`, a stream of
//! Server-Sent Events with every quote created, saved or sent in the
//! signed-in user's tenant, whoever made the change (this page, another
//! user, or an integrator through the REST API), and every change an
//! administrator of the tenant made to a tool's install settings.

use std::convert::Infallible;

use axum::extract::State;
use axum::http::HeaderMap;
use axum::response::sse::{Event, KeepAlive, Sse};
use futures_util::Stream;
use futures_util::stream::StreamExt;
use serde::Serialize;
use tokio::sync::broadcast;
use tokio_stream::wrappers::BroadcastStream;
use tokio_stream::wrappers::errors::BroadcastStreamRecvError;
use toolbridge_protocol::problem::Problem;
use toolbridge_protocol::quote::{BridgeQuoteDto, QuoteDto};
use toolbridge_protocol::settings::{SettingValue, SettingValues};

use crate::app::AppState;
use crate::auth::{self, Principal};
use crate::error::ApiError;

/// Events kept for a subscriber that falls behind; it then hears that it
/// missed some (a `resync` event) and reloads.
const BACKLOG: usize = 256;

/// What happened to a quote.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, utoipa::ToSchema)]
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
#[derive(Debug, Clone, Serialize, utoipa::ToSchema)]
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

/// The data of a `quote` event.
#[derive(Debug, Clone, Serialize, utoipa::ToSchema)]
pub struct QuoteEvent {
    /// What happened.
    pub kind: QuoteChange,
    /// The quote as lists show it, after the change.
    pub quote: BridgeQuoteDto,
    /// Who made the change.
    pub by: Actor,
}

/// The data of a `toolSettings` event: a tool's install settings changed.
#[derive(Debug, Clone, Serialize, utoipa::ToSchema)]
pub struct ToolSettingsEvent {
    /// The tool's slug.
    pub slug: String,
    /// The values the tool now sees, as `GET /api/tools` lists them.
    pub settings: std::collections::BTreeMap<String, SettingValue>,
}

/// What a published event is about.
#[derive(Debug, Clone)]
enum Payload {
    Quote(QuoteEvent),
    ToolSettings(ToolSettingsEvent),
}

/// An event and the tenant it belongs to.
#[derive(Debug, Clone)]
struct Published {
    tenant_id: String,
    event: Payload,
}

/// The channel every change goes through.
#[derive(Debug)]
pub struct Events {
    sender: broadcast::Sender<Published>,
}

impl Default for Events {
    fn default() -> Self {
        Self {
            sender: broadcast::channel(BACKLOG).0,
        }
    }
}

impl Events {
    /// Tells the tenant's open pages that `principal` changed `quote`.
    pub fn quote(&self, principal: &Principal, kind: QuoteChange, quote: &QuoteDto) {
        let by = match principal {
            Principal::User(user) => Actor::User {
                name: user.name.clone(),
                email: user.email.clone(),
            },
            Principal::Key(key) => Actor::Key {
                name: key.name.clone(),
            },
        };
        // No page listening is no error.
        let _ = self.sender.send(Published {
            tenant_id: principal.tenant_id().to_owned(),
            event: Payload::Quote(QuoteEvent {
                kind,
                quote: quote.summary(),
                by,
            }),
        });
    }

    /// Tells the tenant's open pages that the tool `slug`'s settings are
    /// now `settings` (the values the tool sees).
    pub fn tool_settings(&self, tenant_id: &str, slug: &str, settings: &SettingValues) {
        // No page listening is no error.
        let _ = self.sender.send(Published {
            tenant_id: tenant_id.to_owned(),
            event: Payload::ToolSettings(ToolSettingsEvent {
                slug: slug.to_owned(),
                settings: settings.clone(),
            }),
        });
    }
}

/// `GET /api/events`: `quote` events with a [`QuoteEvent`] as JSON data,
/// `toolSettings` events with a [`ToolSettingsEvent`]; a `resync` event
/// when this stream missed some (reload what is shown).
#[utoipa::path(get, path = "/api/events", tag = "session",
    responses((status = 200, description = "text/event-stream: `quote` events (data: QuoteEvent), `toolSettings` events (data: ToolSettingsEvent) and `resync` events", content_type = "text/event-stream"), (status = 401, description = "not signed in", body = Problem, content_type = "application/problem+json"), (status = 403, description = "an API key; this stream is for the app's pages", body = Problem, content_type = "application/problem+json")))]
pub async fn stream(
    State(state): State<AppState>,
    headers: HeaderMap,
) -> Result<Sse<impl Stream<Item = Result<Event, Infallible>>>, ApiError> {
    let principal = auth::authenticate(&state, &headers).await?;
    let tenant_id = principal.user()?.tenant_id.clone();
    let events = BroadcastStream::new(state.events.sender.subscribe()).filter_map(move |item| {
        let event = match item {
            Ok(published) if published.tenant_id == tenant_id => match &published.event {
                Payload::Quote(event) => Event::default().event("quote").json_data(event).ok(),
                Payload::ToolSettings(event) => {
                    Event::default().event("toolSettings").json_data(event).ok()
                }
            },
            Ok(_) => None,
            Err(BroadcastStreamRecvError::Lagged(missed)) => {
                Some(Event::default().event("resync").data(missed.to_string()))
            }
        };
        std::future::ready(event.map(Ok))
    });
    Ok(Sse::new(events).keep_alive(KeepAlive::default()))
}
