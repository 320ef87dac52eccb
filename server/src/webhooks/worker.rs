//! The delivery worker: takes due deliveries from the store's queue and `POST`s them to their
//! endpoints, signed, then records what came of each attempt.
//!
//! It claims deliveries with a lease ([`WorkerOptions::lease`]), so that with several instances
//! on one database each delivery is sent by one worker; should an instance die mid-attempt, the
//! lease runs out and another worker (or the same after a restart) sends the delivery again:
//! delivery is at least once, and the event id lets a receiver drop a repeat. A worker that is
//! stopped ([`Worker::drain`]) claims no more, lets its attempts finish within a grace, and hands
//! back what it holds unfinished, so that another worker takes it at once.
//!
//! The worker looks for due deliveries when a live quote event is heard (on PostgreSQL those of
//! every instance) and at least every [`WorkerOptions::poll`], so a retry goes out within about
//! that long of being due. Up to [`WorkerOptions::concurrency`] attempts run at once.
//!
//! Each attempt checks the destination again: an IP address in the URL before sending, a name in
//! the client's resolver, which hands the connection only the addresses it checked (so a name
//! that now resolves into a private network is refused, and DNS cannot answer one thing to the
//! check and another to the connection). No proxy is used and redirects are not followed: a 3xx
//! answer is a failed attempt.

use std::error::Error as StdError;
use std::net::{IpAddr, SocketAddr};
use std::sync::Arc;
use std::time::{Duration, SystemTime, UNIX_EPOCH};

use rand::Rng as _;
use reqwest::dns::{Addrs, Name, Resolve, Resolving};
use reqwest::header::{CONTENT_TYPE, HeaderValue};
use tokio::sync::broadcast;
use tokio::task::{JoinHandle, JoinSet};
use tokio_util::sync::CancellationToken;
use toolbridge_protocol::webhooks::{
    EVENT_ID_HEADER, SIGNATURE_HEADER, WebhookDeliveryStatus, parse_url,
};
use toolbridge_store::{ClaimedDelivery, DeliveryOutcome, Live, Store};

use super::destination::{self, DestinationError, Destinations};
use super::signature;
use crate::error::Chain;
use crate::outgoing::TrustedRoots;
use crate::telemetry::{self, DeliveryAttempt};

/// The `User-Agent` of every delivery.
pub const USER_AGENT_VALUE: &str = concat!("toolbridge-webhooks/", env!("CARGO_PKG_VERSION"));

/// How the worker runs. [`Default`] is what `toolbridge serve` uses.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct WorkerOptions {
    /// How long an attempt may take, connecting included, before it counts as failed (10 s).
    pub timeout: Duration,
    /// How long a claimed delivery is kept from other workers (60 s). It must outlast
    /// [`Self::timeout`] and the time to record the outcome, or a slow attempt may be claimed and
    /// sent again by another worker.
    pub lease: Duration,
    /// The first retry's delay; each later one is [`Self::retry_growth`] times the one before,
    /// each scaled by a random factor between 0.5 and 1.5 (30 s: about 30 s, 2 min and 8 min).
    pub retry_base: Duration,
    /// How much each retry's delay grows over the one before (4).
    pub retry_growth: u32,
    /// The longest wait between two looks for due deliveries (1 s).
    pub poll: Duration,
    /// Attempts in flight at once, at most (16).
    pub concurrency: u32,
}

impl Default for WorkerOptions {
    fn default() -> Self {
        Self {
            timeout: Duration::from_secs(10),
            lease: Duration::from_secs(60),
            retry_base: Duration::from_secs(30),
            retry_growth: 4,
            poll: Duration::from_secs(1),
            concurrency: 16,
        }
    }
}

impl WorkerOptions {
    /// The delay before the next attempt after a failed one, when `attempts` attempts have been
    /// made (this one included), at `jitter` (0.5 to 1.5) times the plain back-off; whole
    /// seconds, at least one.
    pub fn backoff(&self, attempts: u32, jitter: f64) -> u32 {
        let growth = f64::from(self.retry_growth.max(1));
        let exponent = i32::try_from(attempts.saturating_sub(1)).unwrap_or(i32::MAX);
        let secs = self.retry_base.as_secs_f64() * growth.powi(exponent) * jitter.clamp(0.5, 1.5);
        // A day at most; the cast is in range.
        #[allow(clippy::cast_possible_truncation, clippy::cast_sign_loss)]
        let secs = secs.round().clamp(1.0, 86_400.0) as u32;
        secs
    }
}

/// How long, once attempts are cut off, the worker still waits for the database to take a
/// hand-back or an attempt's outcome before it gives up on it (the lease then runs out).
const LAST_WRITE: Duration = Duration::from_secs(5);

/// A running worker. [`Worker::drain`] or [`Worker::stop`] ends it; dropping it leaves it running
/// until the runtime ends.
pub struct Worker {
    /// Cancelled when the worker is to stop claiming.
    stop: CancellationToken,
    /// Cancelled when the attempts still in flight are to be cut off.
    cut: CancellationToken,
    task: JoinHandle<Drained>,
}

/// What stopping a worker came to ([`Worker::drain`]): what became of the deliveries it held.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct Drained {
    /// Attempts in flight at the stop that ended within the grace, their outcome recorded.
    pub finished: usize,
    /// Deliveries handed back without being sent: claimed, but the stop came before their
    /// `POST` began.
    pub unsent: usize,
    /// Deliveries whose `POST` was cut off when the grace ran out, and handed back. Such a `POST`
    /// may have reached the receiver, which then gets the event twice (it drops the repeat by its
    /// id).
    pub cut: usize,
    /// Deliveries that were not handed back (the database did not answer in time, or the lease
    /// had run out already and another worker may have taken it), or whose outcome could not be
    /// recorded in time: they are sent again once their leases run out.
    pub left_to_lease: usize,
}

impl Drained {
    /// Whether anything was cut off or left to its lease.
    pub fn cut_anything(&self) -> bool {
        self.cut > 0 || self.left_to_lease > 0
    }

    fn count(&mut self, ended: Ended) {
        match ended {
            Ended::Finished => self.finished += 1,
            Ended::Unsent { handed_back: true } => self.unsent += 1,
            Ended::Cut { handed_back: true } => self.cut += 1,
            Ended::Unsent { handed_back: false }
            | Ended::Cut { handed_back: false }
            | Ended::Unrecorded => self.left_to_lease += 1,
        }
    }
}

/// How one attempt task ended.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Ended {
    /// Sent, and its outcome recorded (or the recording failed and was logged).
    Finished,
    /// Not sent: the worker was stopping before its `POST` began.
    Unsent { handed_back: bool },
    /// Its `POST` was cut off (the grace ran out).
    Cut { handed_back: bool },
    /// Sent, but its outcome was not recorded before the grace (and [`LAST_WRITE`]) ran out.
    Unrecorded,
}

impl Worker {
    /// Stops at once: [`Worker::drain`] with no grace, so attempts in flight are cut off and
    /// their deliveries handed back.
    pub async fn stop(self) -> Drained {
        self.drain(Duration::ZERO).await
    }

    /// Stops claiming deliveries, lets the attempts in flight finish and record their outcomes
    /// for up to `grace`, then cuts off those left and hands their deliveries back, so that
    /// another worker (of this instance after a restart, or of another instance now) takes them
    /// at once rather than when their leases run out. Waits until the worker has ended: at most
    /// `grace`, then five seconds for the last writes to the database.
    ///
    /// A delivery is handed back only when its `POST` has not begun, or has been cut off (its
    /// connection dropped) because the grace ran out: never while the `POST` may still reach the
    /// receiver. One that was cut off may have reached it already; it is sent again (delivery is
    /// at least once, and the event id lets the receiver drop the repeat), as it would be when
    /// its lease ran out.
    pub async fn drain(self, grace: Duration) -> Drained {
        self.drain_until(tokio::time::sleep(grace)).await
    }

    /// [`Worker::drain`], with the attempts in flight cut off when `cut_off` completes rather
    /// than after a grace.
    pub async fn drain_until(self, cut_off: impl Future<Output = ()>) -> Drained {
        self.stop.cancel();
        let mut task = self.task;
        let ended = tokio::select! {
            ended = &mut task => ended,
            () = cut_off => {
                self.cut.cancel();
                task.await
            }
        };
        ended.unwrap_or_else(|error| {
            tracing::warn!(error = %error, "the webhook delivery worker ended abnormally");
            Drained::default()
        })
    }
}

/// Starts the worker on the current tokio runtime: deliveries of `store`, to `destinations`.
///
/// # Errors
///
/// When the HTTP client cannot be built (its TLS setup failed).
pub fn spawn(
    store: Store,
    destinations: Destinations,
    options: WorkerOptions,
) -> Result<Worker, reqwest::Error> {
    spawn_trusting(store, destinations, options, &TrustedRoots::default())
}

/// [`spawn`], the deliveries over https trusting `roots` beside the built-in roots
/// (`--trust-ca`).
///
/// # Errors
///
/// When the HTTP client cannot be built (its TLS setup failed).
pub fn spawn_trusting(
    store: Store,
    destinations: Destinations,
    options: WorkerOptions,
    roots: &TrustedRoots,
) -> Result<Worker, reqwest::Error> {
    let sender = Sender::new(destinations, options, roots)?;
    let (stop, cut) = (CancellationToken::new(), CancellationToken::new());
    let live = store.live();
    let task = tokio::spawn(run(
        store,
        Arc::new(sender),
        live,
        stop.clone(),
        cut.clone(),
    ));
    Ok(Worker { stop, cut, task })
}

/// The worker's loop: claim what is due when woken, keep up to `concurrency` attempts in flight;
/// once `stop` is cancelled, claim no more and wait for the attempts in flight (which `cut`
/// cuts off).
async fn run(
    store: Store,
    sender: Arc<Sender>,
    mut live: broadcast::Receiver<Live>,
    stop: CancellationToken,
    cut: CancellationToken,
) -> Drained {
    let options = sender.options;
    let lease_secs = u32::try_from(options.lease.as_secs())
        .unwrap_or(u32::MAX)
        .max(1);
    let mut in_flight = JoinSet::new();
    let mut listening = true;
    // A steady tick, not a sleep started afresh each turn, so that attempts ending one after
    // another cannot put off the look for due retries.
    let mut tick = tokio::time::interval(options.poll.max(Duration::from_millis(10)));
    tick.set_missed_tick_behavior(tokio::time::MissedTickBehavior::Delay);
    // Look at once: deliveries may have waited while no worker ran.
    let mut look = true;
    loop {
        let room = options
            .concurrency
            .max(1)
            .saturating_sub(u32::try_from(in_flight.len()).unwrap_or(u32::MAX));
        if look && room > 0 && !stop.is_cancelled() {
            look = false;
            match store.claim_deliveries(room, lease_secs).await {
                Ok(claimed) => {
                    // A full claim may have left more behind: look again when one is done.
                    look = u32::try_from(claimed.len()).unwrap_or(u32::MAX) >= room;
                    for delivery in claimed {
                        let (store, sender) = (store.clone(), Arc::clone(&sender));
                        let (stop, cut) = (stop.clone(), cut.clone());
                        in_flight.spawn(async move {
                            attempt(&store, &sender, delivery, &stop, &cut).await
                        });
                    }
                }
                Err(error) => {
                    tracing::warn!(error = %Chain(&error), "cannot claim webhook deliveries");
                }
            }
        }
        tokio::select! {
            biased;
            () = stop.cancelled() => break,
            Some(_) = in_flight.join_next(), if !in_flight.is_empty() => {}
            heard = live.recv(), if listening => match heard {
                Ok(_) | Err(broadcast::error::RecvError::Lagged(_)) => look = true,
                // No more live events: the poll alone wakes the worker.
                Err(broadcast::error::RecvError::Closed) => listening = false,
            },
            _ = tick.tick() => look = true,
        }
    }
    // No more claims. Each attempt in flight finishes, or hands its delivery back when `cut`.
    let mut drained = Drained::default();
    while let Some(joined) = in_flight.join_next().await {
        drained.count(joined.unwrap_or(Ended::Unrecorded));
    }
    drained
}

/// One attempt at `delivery`, and its outcome recorded; or, when the worker is stopping before
/// the `POST` begins, or `cut` cuts the `POST` off, the delivery handed back.
async fn attempt(
    store: &Store,
    sender: &Sender,
    delivery: ClaimedDelivery,
    stop: &CancellationToken,
    cut: &CancellationToken,
) -> Ended {
    if stop.is_cancelled() {
        let handed_back =
            hand_back(store, &delivery, "it was not sent: the worker is stopping").await;
        return Ended::Unsent { handed_back };
    }
    let outcome = tokio::select! {
        biased;
        outcome = sender.send(&delivery) => outcome,
        () = cut.cancelled() => {
            // The `POST` is dropped here, its connection closed, before the hand-back: nothing
            // more of it reaches the receiver once another worker may send it again.
            let handed_back = hand_back(
                store,
                &delivery,
                "its POST was cut off: the grace to finish ran out",
            )
            .await;
            return Ended::Cut { handed_back };
        }
    };
    // The outcome is known: it is recorded (never handed back, which would send it again), with
    // a last few seconds for the database to take it once the grace has run out.
    let give_up = async {
        cut.cancelled().await;
        tokio::time::sleep(LAST_WRITE).await;
    };
    tokio::select! {
        () = record(store, &delivery, outcome) => Ended::Finished,
        () = give_up => {
            tracing::warn!(
                delivery = %delivery.id,
                event = %delivery.event_id,
                "the outcome of a webhook delivery attempt was not recorded in time; it is sent again when its lease ends"
            );
            telemetry::delivery_attempt(DeliveryAttempt::Unrecorded);
            Ended::Unrecorded
        }
    }
}

/// Hands `delivery` back to the queue ([`Store::hand_back_delivery`]), `why` as the log says,
/// within [`LAST_WRITE`]; whether it was handed back (if not, its lease runs out).
async fn hand_back(store: &Store, delivery: &ClaimedDelivery, why: &str) -> bool {
    let handed_back = tokio::time::timeout(
        LAST_WRITE,
        store.hand_back_delivery(&delivery.id, delivery.lease_until),
    )
    .await;
    match handed_back {
        Ok(Ok(true)) => {
            tracing::info!(
                delivery = %delivery.id,
                event = %delivery.event_id,
                "handed a webhook delivery back to the queue ({why})"
            );
            true
        }
        // Its lease had run out: another worker has it, or had it. Nothing of ours to give back.
        Ok(Ok(false)) => false,
        Ok(Err(error)) => {
            tracing::warn!(
                delivery = %delivery.id,
                event = %delivery.event_id,
                error = %Chain(&error),
                "cannot hand a webhook delivery back ({why}); it is sent again when its lease ends"
            );
            false
        }
        Err(_) => {
            tracing::warn!(
                delivery = %delivery.id,
                event = %delivery.event_id,
                "the database did not take a webhook delivery's hand-back within {} ({why}); it is sent again when its lease ends",
                seconds(LAST_WRITE)
            );
            false
        }
    }
}

/// Records what came of an attempt at `delivery`.
async fn record(store: &Store, delivery: &ClaimedDelivery, outcome: DeliveryOutcome) {
    if let DeliveryOutcome::Failed {
        status,
        error,
        retry_in_secs,
    } = &outcome
    {
        tracing::warn!(
            delivery = %delivery.id,
            event = %delivery.event_id,
            endpoint = %delivery.endpoint_id,
            attempt = delivery.attempts + 1,
            status = ?status,
            error = error.as_deref().unwrap_or_default(),
            retry_in_secs,
            "a webhook delivery attempt failed"
        );
    }
    let counted = match store.finish_delivery(&delivery.id, &outcome).await {
        Ok(Some(WebhookDeliveryStatus::Delivered)) => DeliveryAttempt::Delivered,
        Ok(Some(WebhookDeliveryStatus::Pending)) => DeliveryAttempt::Retrying,
        Ok(Some(WebhookDeliveryStatus::Failed)) => DeliveryAttempt::GaveUp,
        // No longer pending (another worker, whose lease this attempt outlived, finished it) or
        // gone (its endpoint was deleted).
        Ok(None) => DeliveryAttempt::Unrecorded,
        Err(error) => {
            tracing::warn!(
                delivery = %delivery.id,
                event = %delivery.event_id,
                error = %Chain(&error),
                "cannot record a webhook delivery attempt; it is tried again when its lease ends"
            );
            DeliveryAttempt::Unrecorded
        }
    };
    telemetry::delivery_attempt(counted);
}

/// What sends: the HTTP client and the rules it follows.
struct Sender {
    client: reqwest::Client,
    destinations: Destinations,
    options: WorkerOptions,
}

impl Sender {
    fn new(
        destinations: Destinations,
        options: WorkerOptions,
        roots: &TrustedRoots,
    ) -> Result<Self, reqwest::Error> {
        let builder = reqwest::Client::builder()
            .dns_resolver(Arc::new(CheckingResolver { destinations }))
            .redirect(reqwest::redirect::Policy::none())
            .no_proxy()
            .timeout(options.timeout)
            .user_agent(USER_AGENT_VALUE);
        let client = roots.apply(builder).build()?;
        Ok(Self {
            client,
            destinations,
            options,
        })
    }

    /// `POST`s `delivery` and says what came of it.
    async fn send(&self, delivery: &ClaimedDelivery) -> DeliveryOutcome {
        let failed = |status: Option<u16>, error: String| DeliveryOutcome::Failed {
            status,
            error: Some(error),
            retry_in_secs: self.options.backoff(
                delivery.attempts + 1,
                rand::thread_rng().gen_range(0.5..=1.5),
            ),
        };
        // An address in the URL is not resolved, so not seen by the resolver: check it here.
        if let Err(refused) = self.check_literal(&delivery.url) {
            return failed(None, refused.to_string());
        }
        let body = delivery.payload.clone().into_bytes();
        let t = SystemTime::now()
            .duration_since(UNIX_EPOCH)
            .map_or(0, |since| {
                i64::try_from(since.as_secs()).unwrap_or(i64::MAX)
            });
        let signed = signature::sign(&delivery.secret, t, &body);
        let request = self
            .client
            .post(&delivery.url)
            .header(CONTENT_TYPE, HeaderValue::from_static("application/json"))
            .header(EVENT_ID_HEADER, &delivery.event_id)
            .header(SIGNATURE_HEADER, signed)
            .body(body);
        match request.send().await {
            Ok(response) if response.status().is_success() => DeliveryOutcome::Delivered {
                status: response.status().as_u16(),
            },
            Ok(response) => {
                let status = response.status();
                let line = match status.canonical_reason() {
                    Some(reason) => format!("HTTP {} {reason}", status.as_u16()),
                    None => format!("HTTP {}", status.as_u16()),
                };
                failed(Some(status.as_u16()), line)
            }
            Err(error) => failed(None, self.transport_error(&error)),
        }
    }

    /// Refuses a URL whose host is an address that [`Self::destinations`] does not allow.
    fn check_literal(&self, url: &str) -> Result<(), DestinationError> {
        let parsed = parse_url(url).map_err(DestinationError::Invalid)?;
        let host = parsed.host.trim_start_matches('[').trim_end_matches(']');
        if let Ok(ip) = host.parse::<IpAddr>() {
            destination::check(
                &parsed.host,
                &[SocketAddr::new(ip, parsed.port)],
                self.destinations,
            )?;
        }
        Ok(())
    }

    /// A failed request in the log's words: `timed out after 10 s`, `connection refused`, the
    /// destination's refusal, or what the error chain says.
    fn transport_error(&self, error: &reqwest::Error) -> String {
        let mut source: Option<&(dyn StdError + 'static)> = Some(error);
        while let Some(cause) = source {
            if let Some(refused) = cause.downcast_ref::<DestinationError>() {
                return refused.to_string();
            }
            source = cause.source();
        }
        if error.is_timeout() {
            return format!("timed out after {}", seconds(self.options.timeout));
        }
        let mut source: Option<&(dyn StdError + 'static)> = Some(error);
        while let Some(cause) = source {
            if let Some(io) = cause.downcast_ref::<std::io::Error>() {
                return match io.kind() {
                    std::io::ErrorKind::ConnectionRefused => "connection refused".to_owned(),
                    std::io::ErrorKind::ConnectionReset => "connection reset".to_owned(),
                    _ => format!("cannot connect: {io}"),
                };
            }
            source = cause.source();
        }
        // reqwest's own words name the URL, whose path or query may hold a credential of the
        // receiver's, and this goes to the log: say what failed without it, then why.
        let what = if error.is_connect() {
            "cannot connect"
        } else if error.is_body() || error.is_decode() {
            "the answer could not be read"
        } else {
            "the request failed"
        };
        match error.source() {
            Some(cause) => format!("{what}: {}", Chain(cause)),
            None => what.to_owned(),
        }
    }
}

/// `10 s`, or `500 ms` under a second.
fn seconds(duration: Duration) -> String {
    if duration.subsec_millis() == 0 {
        format!("{} s", duration.as_secs())
    } else if duration < Duration::from_secs(1) {
        format!("{} ms", duration.as_millis())
    } else {
        format!("{:.1} s", duration.as_secs_f64())
    }
}

/// Resolves a host's name and refuses it, as the endpoint's URL was when saved, when any of its
/// addresses is not allowed: the connection is made only to addresses that passed.
struct CheckingResolver {
    destinations: Destinations,
}

impl Resolve for CheckingResolver {
    fn resolve(&self, name: Name) -> Resolving {
        let destinations = self.destinations;
        Box::pin(async move {
            let host = name.as_str().to_owned();
            // The port is the URL's: the client puts it in place of this 0.
            let addresses: Vec<SocketAddr> = tokio::net::lookup_host((host.as_str(), 0))
                .await
                .map_err(|source| DestinationError::Unresolved {
                    host: host.clone(),
                    source,
                })?
                .collect();
            if addresses.is_empty() {
                return Err(Box::new(DestinationError::Unresolved {
                    host,
                    source: std::io::Error::new(std::io::ErrorKind::NotFound, "no address"),
                }) as Box<dyn StdError + Send + Sync>);
            }
            destination::check(&host, &addresses, destinations)?;
            let addrs: Addrs = Box::new(addresses.into_iter());
            Ok(addrs)
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_backoff_grows_fourfold_from_its_base_with_jitter() {
        let options = WorkerOptions::default();
        assert_eq!(options.backoff(1, 1.0), 30);
        assert_eq!(options.backoff(2, 1.0), 120);
        assert_eq!(options.backoff(3, 1.0), 480);
        assert_eq!(options.backoff(1, 0.5), 15);
        assert_eq!(options.backoff(3, 1.5), 720);
        // Jitter outside its range is held to it; never under a second, never over a day.
        assert_eq!(options.backoff(1, 9.0), 45);
        let quick = WorkerOptions {
            retry_base: Duration::from_secs(1),
            retry_growth: 1,
            ..WorkerOptions::default()
        };
        assert_eq!(quick.backoff(3, 0.5), 1);
        assert_eq!(options.backoff(40, 1.0), 86_400);
    }

    #[test]
    fn durations_read_as_people_write_them() {
        assert_eq!(seconds(Duration::from_secs(10)), "10 s");
        assert_eq!(seconds(Duration::from_millis(500)), "500 ms");
        assert_eq!(seconds(Duration::from_millis(1500)), "1.5 s");
    }

    fn delivery(url: &str) -> ClaimedDelivery {
        ClaimedDelivery {
            id: "whd_1".to_owned(),
            endpoint_id: "whe_1".to_owned(),
            event_id: "evt_1".to_owned(),
            event_type: toolbridge_protocol::webhooks::WebhookEventType::QuoteCreated,
            url: url.to_owned(),
            secret: "whsec_x".to_owned(),
            payload: "{}".to_owned(),
            attempts: 1,
            lease_until: 0,
        }
    }

    fn failure(outcome: &DeliveryOutcome) -> (Option<u16>, String, u32) {
        match outcome {
            DeliveryOutcome::Failed {
                status,
                error,
                retry_in_secs,
            } => (*status, error.clone().unwrap_or_default(), *retry_in_secs),
            DeliveryOutcome::Delivered { status } => panic!("delivered ({status})"),
        }
    }

    #[tokio::test]
    async fn private_destinations_are_refused_before_any_connection() {
        // Something listens there, so a connection would succeed: the refusal is the check's.
        let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
        let port = listener.local_addr().unwrap().port();
        let sender = Sender::new(
            Destinations::PublicOnly,
            WorkerOptions::default(),
            &TrustedRoots::default(),
        )
        .unwrap();
        for url in [
            format!("http://127.0.0.1:{port}/hook"),
            format!("http://localhost:{port}/hook"),
            format!("http://[::1]:{port}/hook"),
        ] {
            let (status, error, retry) = failure(&sender.send(&delivery(&url)).await);
            assert_eq!(status, None, "{url}");
            assert!(
                error.contains("webhooks go to public addresses only"),
                "{url}: {error}"
            );
            // The second attempt's back-off: about 2 minutes.
            assert!((60..=180).contains(&retry), "{url}: {retry}");
        }
    }

    /// A server on loopback that answers each connection with `answer` as it is, and says where
    /// it listens.
    async fn answering(answer: String) -> (u16, tokio::task::JoinHandle<()>) {
        use tokio::io::{AsyncReadExt as _, AsyncWriteExt as _};
        let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
        let port = listener.local_addr().unwrap().port();
        let task = tokio::spawn(async move {
            while let Ok((mut stream, _)) = listener.accept().await {
                let mut request = [0_u8; 4096];
                let _ = stream.read(&mut request).await;
                let _ = stream.write_all(answer.as_bytes()).await;
                let _ = stream.shutdown().await;
            }
        });
        (port, task)
    }

    #[tokio::test]
    async fn a_redirect_is_a_failed_attempt_and_is_not_followed() {
        let target = toolbridge_e2e::webhook_receiver::WebhookReceiver::start().unwrap();
        let (port, server) = answering(format!(
            "HTTP/1.1 307 Temporary Redirect\r\nLocation: {}\r\nContent-Length: 0\r\n\r\n",
            target.url()
        ))
        .await;
        let sender = Sender::new(
            Destinations::AllowPrivate,
            WorkerOptions::default(),
            &TrustedRoots::default(),
        )
        .unwrap();
        let (status, error, _) = failure(
            &sender
                .send(&delivery(&format!("http://127.0.0.1:{port}/hook")))
                .await,
        );
        assert_eq!(status, Some(307));
        assert_eq!(error, "HTTP 307 Temporary Redirect");
        tokio::time::sleep(Duration::from_millis(300)).await;
        assert!(target.requests().is_empty());
        server.abort();
    }

    #[tokio::test]
    async fn an_https_endpoint_that_speaks_no_tls_fails_the_attempt() {
        let (port, server) =
            answering("HTTP/1.1 200 OK\r\nContent-Length: 0\r\n\r\n".to_owned()).await;
        let sender = Sender::new(
            Destinations::AllowPrivate,
            WorkerOptions::default(),
            &TrustedRoots::default(),
        )
        .unwrap();
        let (status, error, _) = failure(
            &sender
                .send(&delivery(&format!("https://127.0.0.1:{port}/hook")))
                .await,
        );
        assert_eq!(status, None);
        assert!(error.starts_with("cannot connect"), "{error}");
        server.abort();
    }

    #[tokio::test]
    async fn a_receiver_that_closes_without_answering_is_told_without_its_url() {
        let (port, server) = answering(String::new()).await;
        let sender = Sender::new(
            Destinations::AllowPrivate,
            WorkerOptions::default(),
            &TrustedRoots::default(),
        )
        .unwrap();
        let (status, error, _) = failure(
            &sender
                .send(&delivery(&format!(
                    "http://127.0.0.1:{port}/hook?token=receivers-secret"
                )))
                .await,
        );
        assert_eq!(status, None);
        assert!(error.starts_with("the request failed: "), "{error}");
        // What is logged and kept names no part of the URL, which may hold a credential.
        assert!(
            !error.contains("receivers-secret") && !error.contains("/hook"),
            "{error}"
        );
        server.abort();
    }

    #[tokio::test]
    async fn transport_failures_are_told_in_plain_words() {
        let options = WorkerOptions {
            timeout: Duration::from_millis(300),
            ..WorkerOptions::default()
        };
        let sender = Sender::new(
            Destinations::AllowPrivate,
            options,
            &TrustedRoots::default(),
        )
        .unwrap();
        // Refused: a port that was free a moment ago.
        let port = {
            let listener = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
            listener.local_addr().unwrap().port()
        };
        let (_, refused, _) = failure(
            &sender
                .send(&delivery(&format!("http://127.0.0.1:{port}/")))
                .await,
        );
        assert_eq!(refused, "connection refused");
        // Timed out: a listener that accepts and never answers.
        let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
        let port = listener.local_addr().unwrap().port();
        let held = tokio::spawn(async move {
            let mut held = Vec::new();
            while let Ok((stream, _)) = listener.accept().await {
                held.push(stream);
            }
        });
        let (_, timed_out, _) = failure(
            &sender
                .send(&delivery(&format!("http://127.0.0.1:{port}/")))
                .await,
        );
        assert_eq!(timed_out, "timed out after 300 ms");
        held.abort();
        let (_, unresolved, _) =
            failure(&sender.send(&delivery("http://no-such-host.invalid/")).await);
        assert!(
            unresolved.starts_with("no-such-host.invalid does not resolve"),
            "{unresolved}"
        );
    }
}
