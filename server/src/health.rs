//! `GET /healthz` (liveness) and `GET /readyz` (readiness), for a load balancer or an
//! orchestrator: no authentication, no rate limit, short JSON that is never cached.
//!
//! - `/healthz` answers 200 as long as the process serves requests: restart it when it does not.
//! - `/readyz` answers 200 only when this instance can serve the API: the database answers, its
//!   schema has every migration this build knows, on PostgreSQL the live-event listener is
//!   connected (otherwise the pages served here would miss other instances' changes), and the
//!   instance is not draining ([`crate::lifecycle`]). Otherwise 503, with the first check that
//!   failed as `reason` and every check's result. Send no traffic to it while it says 503.
//!
//! What the database said when it failed is logged, not answered: the endpoint is public.

use std::time::Duration;

use axum::Json;
use axum::extract::State;
use axum::http::{HeaderValue, StatusCode, header};
use axum::response::{IntoResponse, Response};
use serde::Serialize;
use toolbridge_store::LiveListener;
use utoipa::ToSchema;

use crate::app::AppState;
use crate::error::Chain;

/// How long each of `/readyz`'s checks of the database may take before it counts as failed.
pub const CHECK_TIMEOUT: Duration = Duration::from_secs(2);

/// `/healthz`'s answer.
#[derive(Debug, Clone, Serialize, ToSchema)]
pub struct Liveness {
    /// Always `ok`: an answer at all is the news.
    pub status: Alive,
}

/// The one status of [`Liveness`].
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, ToSchema)]
#[serde(rename_all = "lowercase")]
pub enum Alive {
    /// The process serves requests.
    Ok,
}

/// `/readyz`'s answer.
#[derive(Debug, Clone, Serialize, ToSchema)]
pub struct Readiness {
    /// `ok` (200) or `unavailable` (503).
    pub status: Ready,
    /// When unavailable, why: the first failed check, `<check>: <what is wrong>`.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub reason: Option<String>,
    /// Each check's result.
    pub checks: Checks,
}

/// The status of [`Readiness`].
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, ToSchema)]
#[serde(rename_all = "lowercase")]
pub enum Ready {
    /// Every check passed: send traffic.
    Ok,
    /// A check failed: send no traffic.
    Unavailable,
}

/// What each of `/readyz`'s checks found.
#[derive(Debug, Clone, Serialize, ToSchema)]
#[serde(rename_all = "camelCase")]
pub struct Checks {
    /// Whether the instance is draining (shutting down): it is then never ready again.
    pub drain: Check,
    /// Whether the database answers a trivial query within 2 s.
    pub database: Check,
    /// Whether the database has every migration this build knows.
    pub migrations: Check,
    /// On PostgreSQL, whether this instance's live-event listener is connected; always passes on
    /// SQLite, which has none.
    pub live_events: Check,
}

/// One check's result.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, ToSchema)]
pub struct Check {
    /// Whether it passed.
    pub ok: bool,
    /// What it found, in words.
    pub detail: String,
}

impl Check {
    fn pass(detail: impl Into<String>) -> Self {
        Self {
            ok: true,
            detail: detail.into(),
        }
    }

    fn fail(detail: impl Into<String>) -> Self {
        Self {
            ok: false,
            detail: detail.into(),
        }
    }
}

/// A JSON answer that no cache keeps.
fn answer(status: StatusCode, body: impl Serialize) -> Response {
    let mut response = (status, Json(body)).into_response();
    response
        .headers_mut()
        .insert(header::CACHE_CONTROL, HeaderValue::from_static("no-store"));
    response
}

/// `GET /healthz`: whether the process serves (liveness): 200 `{"status":"ok"}` while it does.
#[utoipa::path(get, path = "/healthz", tag = "operations", operation_id = "healthz",
    responses((status = 200, description = "the process serves requests (liveness); no authentication", body = Liveness,
        headers(("Cache-Control" = String, description = "`no-store`")))))]
pub async fn live() -> Response {
    answer(StatusCode::OK, Liveness { status: Alive::Ok })
}

/// `GET /readyz`: whether this instance can serve (readiness): 200 when it can, 503 with the
/// reason when it cannot.
#[utoipa::path(get, path = "/readyz", tag = "operations", operation_id = "readyz",
    responses(
        (status = 200, description = "ready: the database answers, its migrations are applied, on PostgreSQL the live-event listener is connected, and the instance is not draining", body = Readiness,
            headers(("Cache-Control" = String, description = "`no-store`"))),
        (status = 503, description = "not ready: `reason` names the first failed check; every check's result is in `checks`. Draining (shutting down) is one such reason", body = Readiness,
            headers(("Cache-Control" = String, description = "`no-store`")))))]
pub async fn ready(State(state): State<AppState>) -> Response {
    let store = &state.store;
    let (database, migrations) = tokio::join!(
        tokio::time::timeout(CHECK_TIMEOUT, store.ping()),
        tokio::time::timeout(CHECK_TIMEOUT, store.migration_status()),
    );
    // What is logged beside what is answered: the database's own words.
    let mut logged = Vec::new();
    let no_answer = || Check::fail(format!("no answer within {} s", CHECK_TIMEOUT.as_secs()));
    let database = match database {
        Ok(Ok(())) => Check::pass("answers"),
        Ok(Err(error)) => {
            logged.push(format!("database: {}", Chain(&error)));
            Check::fail("the query failed (the server's log says why)")
        }
        Err(_) => no_answer(),
    };
    let migrations = match migrations {
        Ok(Ok(status)) if status.is_current() => Check::pass(status.to_string()),
        Ok(Ok(status)) => Check::fail(status.to_string()),
        Ok(Err(error)) => {
            logged.push(format!("migrations: {}", Chain(&error)));
            Check::fail("cannot read the applied migrations (the server's log says why)")
        }
        Err(_) => no_answer(),
    };
    let listener = store.live_listener();
    let live_events = match listener {
        LiveListener::NotUsed => Check::pass("not used on SQLite"),
        other if other.is_ready() => Check::pass(other.to_string()),
        other => Check::fail(other.to_string()),
    };
    let drain = match state.lifecycle.drain_reason() {
        Some(reason) => Check::fail(format!("draining ({reason}): shutting down")),
        None if state.lifecycle.is_draining() => Check::fail("draining: shutting down"),
        None => Check::pass("serving"),
    };
    let checks = Checks {
        drain,
        database,
        migrations,
        live_events,
    };
    let reason = [
        ("drain", &checks.drain),
        ("database", &checks.database),
        ("migrations", &checks.migrations),
        ("liveEvents", &checks.live_events),
    ]
    .into_iter()
    .find(|(_, check)| !check.ok)
    .map(|(name, check)| format!("{name}: {}", check.detail));
    if state.lifecycle.readiness_changed(reason.as_deref()) {
        if let Some(reason) = &reason {
            tracing::warn!(details = logged.join("; "), "/readyz: not ready: {reason}");
        } else {
            tracing::info!("/readyz: ready");
        }
    }
    let (status, ready) = match reason {
        None => (StatusCode::OK, Ready::Ok),
        Some(_) => (StatusCode::SERVICE_UNAVAILABLE, Ready::Unavailable),
    };
    answer(
        status,
        Readiness {
            status: ready,
            reason,
            checks,
        },
    )
}
