//! The server's life after it starts: serving, then a clean drain when it is told to stop
//! (SIGTERM or SIGINT), so that an instance behind a load balancer can be replaced without a
//! request failing, a live page losing an event or a webhook delivery being lost.
//!
//! The drain ([`serve`]) goes in this order:
//! 1. It starts ([`Lifecycle::start_draining`], which [`Signals::watch`] calls on the first
//!    SIGTERM or SIGINT): from now on `/readyz` answers 503, every live event stream
//!    (`GET /api/events`) ends, so that the pages' `EventSource`s reconnect (elsewhere, once the
//!    balancer has taken this instance out) and pick up where they were, and answers carry
//!    `Connection: close`, so that clients do not keep idle connections to this instance. The
//!    webhook worker claims no more deliveries.
//! 2. For the drain delay (`--drain-delay-secs`, 0 by default) requests are served as before:
//!    time for a balancer that polls `/readyz` to stop sending new ones.
//! 3. The listener is closed: new connections are refused; requests in flight finish, and idle
//!    connections are closed.
//! 4. Once every connection has ended, or when the grace (`--shutdown-grace-secs`, counted from
//!    the listener's closing) runs out, whatever is left is cut: requests still in flight lose
//!    their connections (the log says how many), and the worker's attempts still in flight are
//!    cut off and their deliveries handed back (see [`Worker::drain`]). The worker's attempts
//!    have the delay and the grace in all.
//! 5. [`serve`] returns, and the process exits (0).
//!
//! A second signal during the drain cuts it short: step 4 at once.

use std::io;
use std::net::SocketAddr;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Mutex, OnceLock, PoisonError};
use std::time::Duration;

use axum::Router;
use axum::extract::{Request, State};
use axum::http::{HeaderValue, header};
use axum::middleware::Next;
use axum::response::Response;
use tokio::net::TcpListener;
use tokio::signal::unix::{Signal, SignalKind, signal};
use tokio::task::JoinHandle;
use tokio::time::Instant;
use tokio_util::sync::{CancellationToken, WaitForCancellationFutureOwned};

use crate::webhooks::worker::{Drained, Worker};

/// Whether the server is draining, and what is in flight: shared by the handlers (through
/// [`crate::AppState`]), the signal watcher and [`serve`]. Cheap to clone; clones share one state.
#[derive(Clone, Debug, Default)]
pub struct Lifecycle {
    inner: Arc<Inner>,
}

#[derive(Debug, Default)]
struct Inner {
    /// Cancelled when the drain starts.
    draining: CancellationToken,
    /// Cancelled when the drain is to be cut short.
    cut: CancellationToken,
    /// Why the drain started (`SIGTERM`, …), once it has.
    reason: OnceLock<String>,
    /// Requests whose answer has not begun.
    in_flight: AtomicUsize,
    /// The reason `/readyz` last gave for not being ready (`None` when it was ready), so that
    /// a change is logged once rather than at every probe.
    last_unready: Mutex<Option<String>>,
}

impl Lifecycle {
    /// A server that is serving.
    pub fn new() -> Self {
        Self::default()
    }

    /// Starts the drain, `reason` saying why (`SIGTERM`); `false` when it had started already.
    pub fn start_draining(&self, reason: &str) -> bool {
        let first = self.inner.reason.set(reason.to_owned()).is_ok();
        self.inner.draining.cancel();
        first
    }

    /// Whether the drain has started.
    pub fn is_draining(&self) -> bool {
        self.inner.draining.is_cancelled()
    }

    /// Why the drain started, once it has.
    pub fn drain_reason(&self) -> Option<&str> {
        self.inner.reason.get().map(String::as_str)
    }

    /// Completes when the drain starts (at once if it has).
    pub fn until_draining(&self) -> WaitForCancellationFutureOwned {
        self.inner.draining.clone().cancelled_owned()
    }

    /// Cuts the drain short: what is still in flight is cut now rather than when the grace runs
    /// out. Starts the drain too, if it has not started.
    pub fn cut_short(&self, reason: &str) {
        self.start_draining(reason);
        self.inner.cut.cancel();
    }

    /// Completes when the drain is cut short.
    fn until_cut(&self) -> WaitForCancellationFutureOwned {
        self.inner.cut.clone().cancelled_owned()
    }

    /// Requests being handled whose answer has not begun ([`track`] counts them).
    pub fn requests_in_flight(&self) -> usize {
        self.inner.in_flight.load(Ordering::SeqCst)
    }

    /// Records what `/readyz` found (`None`: ready); answers whether it differs from what it
    /// found last time.
    pub(crate) fn readiness_changed(&self, unready: Option<&str>) -> bool {
        let mut last = self
            .inner
            .last_unready
            .lock()
            .unwrap_or_else(PoisonError::into_inner);
        if last.as_deref() == unready {
            return false;
        }
        *last = unready.map(str::to_owned);
        true
    }
}

/// Counts a request as in flight until dropped.
struct InFlight(Arc<Inner>);

impl InFlight {
    fn count(lifecycle: &Lifecycle) -> Self {
        lifecycle.inner.in_flight.fetch_add(1, Ordering::SeqCst);
        InFlight(Arc::clone(&lifecycle.inner))
    }
}

impl Drop for InFlight {
    fn drop(&mut self) {
        self.0.in_flight.fetch_sub(1, Ordering::SeqCst);
    }
}

/// Middleware: counts each request in flight until its answer begins (a request whose
/// connection drops stops counting too), and, once the drain has started, asks the client to
/// close the connection after the answer (`Connection: close`), so that it opens its next one
/// elsewhere.
pub async fn track(State(lifecycle): State<Lifecycle>, request: Request, next: Next) -> Response {
    let counted = InFlight::count(&lifecycle);
    let mut response = next.run(request).await;
    drop(counted);
    if lifecycle.is_draining() {
        response
            .headers_mut()
            .insert(header::CONNECTION, HeaderValue::from_static("close"));
    }
    response
}

/// SIGTERM and SIGINT, caught from the moment [`Signals::install`] is called: until then they end
/// the process at once, as by default.
#[derive(Debug)]
pub struct Signals {
    terminate: Signal,
    interrupt: Signal,
}

impl Signals {
    /// Catches SIGTERM and SIGINT from now on.
    ///
    /// # Errors
    ///
    /// When a handler cannot be installed.
    pub fn install() -> io::Result<Self> {
        Ok(Self {
            terminate: signal(SignalKind::terminate())?,
            interrupt: signal(SignalKind::interrupt())?,
        })
    }

    /// The name of the next signal caught; never completes if neither can come any more.
    async fn next(&mut self) -> &'static str {
        tokio::select! {
            Some(()) = self.terminate.recv() => "SIGTERM",
            Some(()) = self.interrupt.recv() => "SIGINT",
            else => std::future::pending().await,
        }
    }

    /// Watches for the signals on a task of its own: the first starts `lifecycle`'s drain, the
    /// next cuts it short.
    pub fn watch(mut self, lifecycle: Lifecycle) -> JoinHandle<()> {
        tokio::spawn(async move {
            let first = self.next().await;
            lifecycle.start_draining(first);
            let second = self.next().await;
            tracing::warn!("{second} during the drain: cutting it short");
            lifecycle.cut_short(second);
        })
    }
}

/// How long the drain's steps may take: `toolbridge serve`'s `--drain-delay-secs` and
/// `--shutdown-grace-secs`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct DrainTimes {
    /// From the drain's start (`/readyz` answering 503) to the listener's closing, during which
    /// requests are served as before.
    pub delay: Duration,
    /// From the listener's closing, how long requests (and webhook attempts) in flight may take
    /// to finish before they are cut.
    pub grace: Duration,
}

impl Default for DrainTimes {
    /// No delay, 20 s of grace.
    fn default() -> Self {
        Self {
            delay: Duration::ZERO,
            grace: Duration::from_secs(20),
        }
    }
}

/// What the drain came to.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct DrainReport {
    /// Why it started (`SIGTERM`, …).
    pub reason: String,
    /// Whether every connection ended within the grace.
    pub connections_finished: bool,
    /// Requests whose answer had not begun when the grace ran out (or the drain was cut short):
    /// their connections were closed.
    pub requests_cut: usize,
    /// What the webhook worker did with the deliveries it held, if there was a worker.
    pub worker: Option<Drained>,
    /// How long the drain took, from its start.
    pub took: Duration,
}

impl DrainReport {
    /// Whether anything was cut: a request, a connection or a webhook attempt.
    pub fn cut_anything(&self) -> bool {
        !self.connections_finished
            || self.requests_cut > 0
            || self.worker.is_some_and(|worker| worker.cut_anything())
    }
}

/// Serves `app` on `listener` (each request with its peer's address, `ConnectInfo`) until
/// `lifecycle`'s drain starts, then drains as the [module](self) says, with `worker` (the webhook
/// delivery worker) stopped alongside; returns once the drain is over.
///
/// # Errors
///
/// When the server fails before the drain starts (it does not end by itself otherwise).
pub async fn serve(
    listener: TcpListener,
    app: Router,
    lifecycle: &Lifecycle,
    worker: Option<Worker>,
    times: DrainTimes,
) -> io::Result<DrainReport> {
    let close = CancellationToken::new();
    let mut server = tokio::spawn(
        axum::serve(
            listener,
            app.into_make_service_with_connect_info::<SocketAddr>(),
        )
        .with_graceful_shutdown(close.clone().cancelled_owned())
        .into_future(),
    );
    tokio::select! {
        () = lifecycle.until_draining() => {}
        ended = &mut server => {
            if let Some(worker) = worker {
                worker.stop().await;
            }
            return Err(match ended {
                Ok(Ok(())) => io::Error::other("the server stopped by itself"),
                Ok(Err(error)) => error,
                Err(error) => io::Error::other(error),
            });
        }
    }
    let started = Instant::now();
    let reason = lifecycle.drain_reason().unwrap_or("asked to").to_owned();
    tracing::info!(
        "draining ({reason}): /readyz answers 503 and live event streams end; the listener closes in {}, then requests in flight have {} to finish",
        seconds(times.delay),
        seconds(times.grace)
    );
    // The worker claims no more from now on; its attempts have until the grace runs out.
    let deadline = started + times.delay + times.grace;
    let worker = worker.map(|worker| {
        let cut = cut_at(lifecycle, deadline);
        tokio::spawn(async move { worker.drain_until(cut).await })
    });
    tokio::select! {
        () = tokio::time::sleep(times.delay) => {}
        () = lifecycle.until_cut() => {}
    }
    close.cancel();
    tracing::info!(
        "draining: no longer accepting connections; {} requests in flight",
        lifecycle.requests_in_flight()
    );
    let connections_finished = tokio::select! {
        biased;
        _ = &mut server => true,
        () = cut_at(lifecycle, Instant::now() + times.grace) => false,
    };
    let requests_cut = if connections_finished {
        0
    } else {
        let cut = lifecycle.requests_in_flight();
        // The connections' own tasks end with the runtime, as the process exits.
        server.abort();
        tracing::warn!(
            "draining: the grace ran out with connections still open and {cut} requests unanswered; they are cut"
        );
        cut
    };
    let worker = match worker {
        Some(task) => match task.await {
            Ok(drained) => Some(drained),
            Err(error) => {
                tracing::warn!(error = %error, "the webhook delivery worker did not stop cleanly");
                None
            }
        },
        None => None,
    };
    if let Some(drained) = worker {
        if drained.cut_anything() {
            tracing::warn!(
                finished = drained.finished,
                handed_back_unsent = drained.unsent,
                cut_and_handed_back = drained.cut,
                left_to_their_leases = drained.left_to_lease,
                "draining: webhook attempts were cut"
            );
        }
    }
    let report = DrainReport {
        reason,
        connections_finished,
        requests_cut,
        worker,
        took: started.elapsed(),
    };
    tracing::info!(
        "drained in {}{}",
        seconds(report.took),
        if report.cut_anything() {
            " (some work was cut; see above)"
        } else {
            ", nothing cut"
        }
    );
    Ok(report)
}

/// Completes at `deadline`, or sooner if the drain is cut short.
fn cut_at(lifecycle: &Lifecycle, deadline: Instant) -> impl Future<Output = ()> + Send + 'static {
    let cut = lifecycle.until_cut();
    async move {
        tokio::select! {
            () = tokio::time::sleep_until(deadline) => {}
            () = cut => {}
        }
    }
}

/// `20 s`, `1.5 s`, `0 s`.
fn seconds(duration: Duration) -> String {
    if duration.subsec_millis() == 0 {
        format!("{} s", duration.as_secs())
    } else {
        format!("{:.1} s", duration.as_secs_f64())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_drain_starts_once_and_keeps_its_first_reason() {
        let lifecycle = Lifecycle::new();
        assert!(!lifecycle.is_draining());
        assert_eq!(lifecycle.drain_reason(), None);
        assert!(lifecycle.start_draining("SIGTERM"));
        assert!(!lifecycle.clone().start_draining("SIGINT"));
        assert!(lifecycle.is_draining());
        assert_eq!(lifecycle.drain_reason(), Some("SIGTERM"));
    }

    #[test]
    fn a_readiness_change_is_reported_once() {
        let lifecycle = Lifecycle::new();
        // Ready at first: nothing changed.
        assert!(!lifecycle.readiness_changed(None));
        assert!(lifecycle.readiness_changed(Some("database: no answer")));
        assert!(!lifecycle.readiness_changed(Some("database: no answer")));
        assert!(lifecycle.readiness_changed(Some("drain: draining")));
        assert!(lifecycle.readiness_changed(None));
    }

    #[test]
    fn requests_count_until_dropped() {
        let lifecycle = Lifecycle::new();
        let one = InFlight::count(&lifecycle);
        let two = InFlight::count(&lifecycle);
        assert_eq!(lifecycle.requests_in_flight(), 2);
        drop(one);
        drop(two);
        assert_eq!(lifecycle.requests_in_flight(), 0);
    }

    #[test]
    fn durations_read_as_people_write_them() {
        assert_eq!(seconds(Duration::from_secs(20)), "20 s");
        assert_eq!(seconds(Duration::from_millis(1500)), "1.5 s");
        assert_eq!(seconds(Duration::ZERO), "0 s");
    }
}
