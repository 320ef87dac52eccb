//! Live updates for the app's pages: `GET /api/events`, a stream of Server-Sent Events with every
//! quote created, saved or sent in the signed-in user's tenant, whoever made the change and on
//! whichever instance of the server (this page, another user, or an integrator through the REST
//! API), every change an administrator of the tenant made to a tool's install settings or to the
//! organisation's time zone, currency, units or theme, and every change the user made to their own
//! time zone or theme (which only their pages hear).
//!
//! The store records each event in the transaction of its change and hands it to every
//! instance's subscribers once committed ([`Store::live`]); this module only streams them. Each
//! event goes out with its id, so a page whose connection dropped names the last one it heard
//! (`Last-Event-ID`, which `EventSource` sends by itself) and hears what it missed. When that
//! cannot be told, it hears `resync` instead and reloads what it shows.
//!
//! A stream lasts as long as the session it was opened with: before each event it sends, and every
//! half minute while idle, it checks that the session still holds, and ends when the user has
//! signed out, been disabled or had their password reset.

use std::convert::Infallible;
use std::time::Duration;

use axum::extract::State;
use axum::http::HeaderMap;
use axum::response::sse::{Event, KeepAlive, Sse};
use futures_util::Stream;
use futures_util::stream::{self, StreamExt};
use tokio::sync::broadcast;
use tokio::time::{self, Instant};
use toolbridge_protocol::live::RESYNC;
use toolbridge_protocol::problem::Problem;
use toolbridge_store::{Backlog, Live, LiveEvent, Store};

use crate::app::AppState;
use crate::auth;
use crate::error::{ApiError, Chain};
use crate::telemetry::OpenStream;

/// How often an idle stream checks that its session still holds, unless the state says otherwise
/// ([`AppState::live_session_recheck`]). Before each event it sends, a stream checks anyway; this
/// ends the stream of a user who signed out, was disabled or had their password reset while
/// nothing happened in their tenant.
pub(crate) const SESSION_RECHECK: Duration = Duration::from_secs(30);

/// Where one page's stream stands.
struct Cursor {
    store: Store,
    tenant_id: String,
    user_id: String,
    /// The session the page opened the stream with: events go out only while it holds.
    session: String,
    /// How often an idle stream checks its session, and when it next does.
    recheck_every: Duration,
    recheck_at: Instant,
    live: broadcast::Receiver<Live>,
    /// The id of the last event sent (or the tenant's last when `resync` was sent): a live event
    /// at or below it was already sent, as part of what the page had missed.
    last_sent: i64,
    /// Counts the stream as open in the metrics until it is dropped.
    _open: OpenStream,
}

impl Cursor {
    /// The next event for this page, waiting for one if need be; `None` once the store stops
    /// publishing (the server is shutting down) or the page's session has ended.
    async fn next(&mut self) -> Option<Event> {
        loop {
            let received = tokio::select! {
                received = self.live.recv() => received,
                () = time::sleep_until(self.recheck_at) => {
                    if !self.session_holds().await {
                        return None;
                    }
                    continue;
                }
            };
            match received {
                Ok(Live::Event(event)) => {
                    if event.tenant_id == self.tenant_id
                        && event.id > self.last_sent
                        && event
                            .user_id
                            .as_ref()
                            .is_none_or(|user| *user == self.user_id)
                    {
                        if !self.session_holds().await {
                            return None;
                        }
                        self.last_sent = event.id;
                        return Some(sse(&event));
                    }
                }
                Ok(Live::Missed) | Err(broadcast::error::RecvError::Lagged(_)) => {
                    return Some(self.resync().await);
                }
                Err(broadcast::error::RecvError::Closed) => return None,
            }
        }
    }

    /// Whether the page's session is still the same user's, signed in and active. When it is
    /// not, or the store cannot say, the stream ends: the page's `EventSource` connects again,
    /// and that request is authenticated afresh (a `401` for a session that has ended).
    async fn session_holds(&mut self) -> bool {
        self.recheck_at = Instant::now() + self.recheck_every;
        match self.store.session_user(&self.session).await {
            Ok(Some(user)) => user.id == self.user_id,
            Ok(None) => false,
            Err(error) => {
                tracing::warn!(error = %Chain(&error), "cannot check a live stream's session; ending the stream");
                false
            }
        }
    }

    /// A `resync` event carrying the tenant's last event id, from which a later reconnect picks
    /// up (what came before, the page reloads now).
    async fn resync(&mut self) -> Event {
        match self.store.last_live_event_id(&self.tenant_id).await {
            Ok(last) => {
                self.last_sent = self.last_sent.max(last);
                resync(Some(self.last_sent))
            }
            Err(error) => {
                tracing::warn!(error = %Chain(&error), "cannot read the last event id for a resync");
                resync(None)
            }
        }
    }
}

/// An event as the page reads it: its name, its JSON data and its id.
fn sse(event: &LiveEvent) -> Event {
    Event::default()
        .id(event.id.to_string())
        .event(&event.name)
        .data(&event.data)
}

/// `resync`, with the id to pick up from when known. Its data is an empty JSON object: a
/// browser does not dispatch an event without data.
fn resync(id: Option<i64>) -> Event {
    let event = Event::default().event(RESYNC).data("{}");
    match id {
        Some(id) => event.id(id.to_string()),
        None => event,
    }
}

/// The `Last-Event-ID` a reconnecting `EventSource` sends, when it is one of ours (a number).
fn last_event_id(headers: &HeaderMap) -> Option<i64> {
    headers
        .get("last-event-id")?
        .to_str()
        .ok()?
        .trim()
        .parse()
        .ok()
}

/// `GET /api/events`: the tenant's live events, as Server-Sent Events. `quote` events with a
/// `QuoteEvent` as JSON data, `toolSettings` events with a `ToolSettingsEvent`, `context` events
/// with a `ContextEvent` (the organisation's, or this user's own, time zone, currency, units or
/// theme changed: read `GET /api/session` again), and `resync` events (reload what is shown: events may have been missed). Every event has an id; sent back as `Last-Event-ID`, the stream starts with what came
/// after it, or with `resync` when that is no longer known. The stream ends with the session: once the user signs out, is disabled or has their password reset, before the next event or within half a minute.
#[utoipa::path(get, path = "/api/events", tag = "session",
    params(("Last-Event-ID" = Option<String>, Header, description = "the id of the last event heard, which a reconnecting EventSource sends: the stream first sends what came after it, or `resync`")),
    responses((status = 200, description = "text/event-stream: `quote` events (data: QuoteEvent), `toolSettings` events (data: ToolSettingsEvent), `context` events (data: ContextEvent) and `resync` events, each with an id", content_type = "text/event-stream"), (status = 401, description = "not signed in", body = Problem, content_type = "application/problem+json"), (status = 403, description = "an API key; this stream is for the app's pages", body = Problem, content_type = "application/problem+json")),
    security(("session" = [])))]
pub async fn stream(
    State(state): State<AppState>,
    headers: HeaderMap,
) -> Result<Sse<impl Stream<Item = Result<Event, Infallible>>>, ApiError> {
    let principal = auth::authenticate(&state, &headers).await?;
    let user = principal.user()?;
    let (tenant_id, user_id) = (user.tenant_id.clone(), user.id.clone());
    // A user is only ever authenticated by the session cookie.
    let session = auth::session_token(&state, &headers)
        .ok_or_else(|| ApiError::unauthenticated("the session has ended; sign in again"))?
        .to_owned();
    // Subscribe before reading what was missed: an event committed in between is then in one or
    // the other (or both, and sent once).
    let live = state.store.live();
    let mut first = Vec::new();
    let mut last_sent = 0;
    if let Some(after) = last_event_id(&headers) {
        match state
            .store
            .live_backlog(&tenant_id, &user_id, after)
            .await?
        {
            Backlog::Events(missed) => {
                last_sent = missed.last().map_or(after, |event| event.id);
                first.extend(missed.iter().map(sse));
            }
            Backlog::Unknown { last } => {
                last_sent = last;
                first.push(resync(Some(last)));
            }
        }
    }
    let cursor = Cursor {
        store: state.store.clone(),
        tenant_id,
        user_id,
        session,
        recheck_every: state.live_session_recheck,
        recheck_at: Instant::now() + state.live_session_recheck,
        live,
        last_sent,
        _open: OpenStream::count(),
    };
    let live = stream::unfold(cursor, |mut cursor| async move {
        let event = cursor.next().await?;
        Some((event, cursor))
    });
    // Once the server drains, the stream ends (at once, if it is draining already): the page's
    // EventSource reconnects, to another instance once the balancer has taken this one out,
    // naming the last event it heard.
    let events = stream::iter(first)
        .chain(live)
        .take_until(state.lifecycle.until_draining())
        .map(Ok);
    Ok(Sse::new(events).keep_alive(KeepAlive::default()))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn only_a_number_is_a_last_event_id() {
        let with = |value: &str| {
            let mut headers = HeaderMap::new();
            headers.insert("last-event-id", value.parse().unwrap());
            last_event_id(&headers)
        };
        assert_eq!(with("42"), Some(42));
        assert_eq!(with(" 7 "), Some(7));
        assert_eq!(with("abc"), None);
        assert_eq!(last_event_id(&HeaderMap::new()), None);
    }
}
