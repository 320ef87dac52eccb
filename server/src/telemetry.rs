//! Metrics in the Prometheus text format, served by `toolbridge serve --metrics-bind ADDR:PORT`
//! on a listener of their own ([`serve`]), never on the public one.
//!
//! The code that counts calls the functions here; they go through the `metrics` facade to the
//! recorder [`install`] puts in place. Until it is installed (no `--metrics-bind`) each of them
//! returns at once, after one relaxed atomic load: nothing is recorded and nothing allocated.
//! Figures that belong to the database (the connection pool, the webhook delivery queue) are
//! read when the page is scraped.
//!
//! Every label takes few values: a route is its template (`/api/v1/quotes/{id}`) or the kind of
//! path the fallback served, a method one of the standard ones or `OTHER`, a status a number.

use std::sync::atomic::{AtomicBool, Ordering};
use std::time::Duration;

use axum::Router;
use axum::extract::State;
use axum::http::{HeaderValue, Method, StatusCode, header};
use axum::response::{IntoResponse, Response};
use axum::routing::get;
use metrics::{
    Unit, counter, describe_counter, describe_gauge, describe_histogram, gauge, histogram,
};
use metrics_exporter_prometheus::{BuildError, Matcher, PrometheusBuilder, PrometheusHandle};
use toolbridge_store::Store;

use crate::error::Chain;

/// HTTP requests answered, by `route`, `method` and `status` (counter).
pub const HTTP_REQUESTS: &str = "toolbridge_http_requests_total";
/// How long HTTP requests took to answer (until the response's head), by `route` and `method`
/// (histogram, seconds).
pub const HTTP_DURATION: &str = "toolbridge_http_request_duration_seconds";
/// Requests refused by a rate limit, by `limit`: `api_key` (a key's own limit) or `sign_in` (the
/// failed sign-ins of one email) (counter).
pub const RATE_LIMITED: &str = "toolbridge_rate_limited_requests_total";
/// Sign-ins refused for a wrong email or password (counter).
pub const SIGN_IN_FAILURES: &str = "toolbridge_sign_in_failures_total";
/// Live event streams (`/api/events`) open now (gauge).
pub const EVENT_STREAMS: &str = "toolbridge_event_streams_open";
/// Webhook delivery attempts, by `outcome` (counter): see [`DeliveryAttempt`].
pub const WEBHOOK_ATTEMPTS: &str = "toolbridge_webhook_delivery_attempts_total";
/// Webhook deliveries waiting for an attempt, due or not (gauge).
pub const WEBHOOK_QUEUE_PENDING: &str = "toolbridge_webhook_queue_pending";
/// Webhook deliveries due now that no worker holds (gauge).
pub const WEBHOOK_QUEUE_DUE: &str = "toolbridge_webhook_queue_due";
/// How long the oldest due webhook delivery has waited (gauge, seconds).
pub const WEBHOOK_QUEUE_OLDEST_DUE_AGE: &str = "toolbridge_webhook_queue_oldest_due_age_seconds";
/// Database connections handed out now (gauge).
pub const DB_CONNECTIONS_IN_USE: &str = "toolbridge_db_connections_in_use";
/// Database connections open now, in use or idle (gauge).
pub const DB_CONNECTIONS_OPEN: &str = "toolbridge_db_connections_open";
/// The most database connections the pool opens (gauge).
pub const DB_CONNECTIONS_MAX: &str = "toolbridge_db_connections_max";

/// The path the metrics listener serves.
pub const PATH: &str = "/metrics";

/// The media type of the Prometheus text format.
const TEXT_FORMAT: &str = "text/plain; version=0.0.4; charset=utf-8";

/// The upper bounds of [`HTTP_DURATION`]'s buckets, in seconds: a millisecond to ten seconds.
const DURATION_BUCKETS: [f64; 14] = [
    0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1.0, 2.5, 5.0, 10.0, 30.0,
];

/// How often the recorder's histograms are drained into their buckets between scrapes.
const UPKEEP: Duration = Duration::from_secs(5);

/// Whether a recorder is installed: the one check each recording function makes first.
static ENABLED: AtomicBool = AtomicBool::new(false);

/// Whether metrics are being recorded (`--metrics-bind` was given).
pub fn enabled() -> bool {
    ENABLED.load(Ordering::Relaxed)
}

/// Why metrics could not be set up.
#[derive(Debug, thiserror::Error)]
#[error("cannot set up the metrics recorder")]
pub struct InstallError(#[from] BuildError);

/// The installed recorder: what renders the page.
#[derive(Clone)]
pub struct Metrics {
    handle: PrometheusHandle,
}

/// Installs the process's metrics recorder (once: a second call fails) and starts recording.
pub fn install() -> Result<Metrics, InstallError> {
    let handle = PrometheusBuilder::new()
        .set_buckets_for_metric(Matcher::Full(HTTP_DURATION.to_owned()), &DURATION_BUCKETS)?
        .install_recorder()?;
    describe();
    ENABLED.store(true, Ordering::Relaxed);
    // The series that exist before anything happens, at zero, so that a dashboard or an alert
    // sees them from the first scrape.
    for limit in [Limit::ApiKey, Limit::SignIn] {
        counter!(RATE_LIMITED, "limit" => limit.label()).absolute(0);
    }
    counter!(SIGN_IN_FAILURES).absolute(0);
    gauge!(EVENT_STREAMS).set(0.0);
    for outcome in DeliveryAttempt::ALL {
        counter!(WEBHOOK_ATTEMPTS, "outcome" => outcome.label()).absolute(0);
    }
    Ok(Metrics { handle })
}

/// The `# HELP` lines.
fn describe() {
    describe_counter!(
        HTTP_REQUESTS,
        "HTTP requests answered, by route template, method and status"
    );
    describe_histogram!(
        HTTP_DURATION,
        Unit::Seconds,
        "Time to answer an HTTP request (to the response head), by route template and method"
    );
    describe_counter!(
        RATE_LIMITED,
        "Requests refused by a rate limit: an API key's (api_key) or failed sign-ins of one email (sign_in)"
    );
    describe_counter!(
        SIGN_IN_FAILURES,
        "Sign-ins refused for a wrong email or password"
    );
    describe_gauge!(EVENT_STREAMS, "Live event streams (/api/events) open now");
    describe_counter!(
        WEBHOOK_ATTEMPTS,
        "Webhook delivery attempts by outcome: delivered, retrying (failed, will be tried again), gave_up (failed for the last time), unrecorded (the outcome could not be stored, or the delivery was no longer pending)"
    );
    describe_gauge!(
        WEBHOOK_QUEUE_PENDING,
        "Webhook deliveries waiting for an attempt, due or not (all instances on a shared database)"
    );
    describe_gauge!(
        WEBHOOK_QUEUE_DUE,
        "Webhook deliveries due now that no worker holds"
    );
    describe_gauge!(
        WEBHOOK_QUEUE_OLDEST_DUE_AGE,
        Unit::Seconds,
        "How long the oldest due webhook delivery has waited; 0 when none is due"
    );
    describe_gauge!(DB_CONNECTIONS_IN_USE, "Database connections in use now");
    describe_gauge!(
        DB_CONNECTIONS_OPEN,
        "Database connections open now, in use or idle"
    );
    describe_gauge!(
        DB_CONNECTIONS_MAX,
        "The most database connections the pool opens"
    );
}

/// A standard method's name, `OTHER` for the rest (any token is a method, and a label must
/// not take unbounded values).
fn method_label(method: &Method) -> &'static str {
    match *method {
        Method::GET => "GET",
        Method::HEAD => "HEAD",
        Method::POST => "POST",
        Method::PUT => "PUT",
        Method::PATCH => "PATCH",
        Method::DELETE => "DELETE",
        Method::OPTIONS => "OPTIONS",
        Method::TRACE => "TRACE",
        Method::CONNECT => "CONNECT",
        _ => "OTHER",
    }
}

/// Counts an answered request: `route` is its template or kind (never the raw path).
pub fn http_request(route: &str, method: &Method, status: StatusCode, elapsed: Duration) {
    if !enabled() {
        return;
    }
    let method = method_label(method);
    counter!(
        HTTP_REQUESTS,
        "route" => route.to_owned(),
        "method" => method,
        "status" => status.as_u16().to_string()
    )
    .increment(1);
    histogram!(HTTP_DURATION, "route" => route.to_owned(), "method" => method)
        .record(elapsed.as_secs_f64());
}

/// A rate limit that refuses requests.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Limit {
    /// An API key's own limit (`/api/v1`).
    ApiKey,
    /// The failed sign-ins allowed per email (`POST /api/session`).
    SignIn,
}

impl Limit {
    fn label(self) -> &'static str {
        match self {
            Limit::ApiKey => "api_key",
            Limit::SignIn => "sign_in",
        }
    }
}

/// Counts a request refused by `limit`.
pub fn rate_limited(limit: Limit) {
    if enabled() {
        counter!(RATE_LIMITED, "limit" => limit.label()).increment(1);
    }
}

/// Counts a sign-in refused for a wrong email or password.
pub fn sign_in_failed() {
    if enabled() {
        counter!(SIGN_IN_FAILURES).increment(1);
    }
}

/// Counts one open live event stream for as long as it lives: made when the stream starts, kept
/// in it, dropped with it.
#[derive(Debug)]
pub struct OpenStream {
    counted: bool,
}

impl OpenStream {
    /// One more stream open.
    pub fn count() -> Self {
        let counted = enabled();
        if counted {
            gauge!(EVENT_STREAMS).increment(1.0);
        }
        Self { counted }
    }
}

impl Drop for OpenStream {
    fn drop(&mut self) {
        if self.counted {
            gauge!(EVENT_STREAMS).decrement(1.0);
        }
    }
}

/// What came of one webhook delivery attempt.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum DeliveryAttempt {
    /// The receiver answered 2xx.
    Delivered,
    /// It failed and will be tried again.
    Retrying,
    /// It failed for the last time: the delivery is failed.
    GaveUp,
    /// Its outcome could not be recorded (the database failed; the lease runs out and it is
    /// tried again), or the delivery was no longer pending when it was.
    Unrecorded,
}

impl DeliveryAttempt {
    /// Every outcome.
    pub const ALL: [DeliveryAttempt; 4] = [
        DeliveryAttempt::Delivered,
        DeliveryAttempt::Retrying,
        DeliveryAttempt::GaveUp,
        DeliveryAttempt::Unrecorded,
    ];

    fn label(self) -> &'static str {
        match self {
            DeliveryAttempt::Delivered => "delivered",
            DeliveryAttempt::Retrying => "retrying",
            DeliveryAttempt::GaveUp => "gave_up",
            DeliveryAttempt::Unrecorded => "unrecorded",
        }
    }
}

/// Counts a webhook delivery attempt.
pub fn delivery_attempt(outcome: DeliveryAttempt) {
    if enabled() {
        counter!(WEBHOOK_ATTEMPTS, "outcome" => outcome.label()).increment(1);
    }
}

/// What the metrics listener needs.
#[derive(Clone)]
struct Scrape {
    metrics: Metrics,
    store: Store,
}

/// The metrics listener's routes: `GET /metrics`, and 404 for anything else.
pub fn router(metrics: Metrics, store: Store) -> Router {
    Router::new()
        .route(PATH, get(page))
        .fallback(|| async {
            (
                StatusCode::NOT_FOUND,
                "this listener serves only GET /metrics\n",
            )
        })
        .with_state(Scrape { metrics, store })
}

/// Serves [`router`] on `listener` until the future is dropped, draining the recorder's
/// histograms every few seconds meanwhile.
pub async fn serve(
    listener: tokio::net::TcpListener,
    metrics: Metrics,
    store: Store,
) -> std::io::Result<()> {
    let handle = metrics.handle.clone();
    let upkeep = async move {
        let mut tick = tokio::time::interval(UPKEEP);
        loop {
            tick.tick().await;
            handle.run_upkeep();
        }
    };
    tokio::select! {
        served = axum::serve(listener, router(metrics, store)) => served,
        () = upkeep => Ok(()),
    }
}

/// `GET /metrics`: the database's figures read now, then every series.
async fn page(State(scrape): State<Scrape>) -> Response {
    sample(&scrape.store).await;
    let mut response = scrape.metrics.handle.render().into_response();
    response
        .headers_mut()
        .insert(header::CONTENT_TYPE, HeaderValue::from_static(TEXT_FORMAT));
    response
}

/// Sets the gauges that the store knows: its pool and the webhook delivery queue. A queue that
/// cannot be read keeps its last figures, and the failure is logged.
async fn sample(store: &Store) {
    let pool = store.pool_usage();
    gauge!(DB_CONNECTIONS_IN_USE).set(f64::from(pool.in_use));
    gauge!(DB_CONNECTIONS_OPEN).set(f64::from(pool.open));
    gauge!(DB_CONNECTIONS_MAX).set(f64::from(pool.max));
    match store.delivery_queue().await {
        Ok(queue) => {
            // Counts far below 2^52: exact as f64.
            #[allow(clippy::cast_precision_loss)]
            {
                gauge!(WEBHOOK_QUEUE_PENDING).set(queue.pending as f64);
                gauge!(WEBHOOK_QUEUE_DUE).set(queue.due as f64);
                gauge!(WEBHOOK_QUEUE_OLDEST_DUE_AGE).set(queue.oldest_due_age_secs as f64);
            }
        }
        Err(error) => {
            tracing::warn!(error = %Chain(&error), "metrics: cannot read the webhook delivery queue");
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn methods_outside_the_standard_ones_share_a_label() {
        assert_eq!(method_label(&Method::GET), "GET");
        assert_eq!(method_label(&Method::DELETE), "DELETE");
        assert_eq!(method_label(&Method::from_bytes(b"BREW").unwrap()), "OTHER");
    }

    #[test]
    fn without_a_recorder_recording_is_a_no_op() {
        // No test of this crate installs the recorder: these return at once.
        assert!(!enabled());
        http_request("/x", &Method::GET, StatusCode::OK, Duration::from_millis(1));
        rate_limited(Limit::ApiKey);
        sign_in_failed();
        delivery_attempt(DeliveryAttempt::Delivered);
        let stream = OpenStream::count();
        assert!(!stream.counted);
    }
}
