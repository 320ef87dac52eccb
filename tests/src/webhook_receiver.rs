//! A webhook receiver for tests: a real HTTP server on 127.0.0.1 that records every request it
//! gets and answers from a script. It runs on its own thread with its own tokio runtime (like the
//! fault server), so sync and async tests alike can start it, read what it got and drop it.
//!
//! Answers are taken from a queue, one per request, in order ([`WebhookReceiver::answer`]); once
//! the queue is empty every request gets 200. [`Answer::Never`] holds the connection open without
//! a byte of answer until the receiver is dropped, which is how a sender's timeout is tested.
//!
//! [`Received::verify`] checks the `Toolbridge-Signature` header as an integrator's receiver
//! would, with an HMAC-SHA256 written here from the definition (RFC 2104) rather than taken from
//! the server, so that a server signing the wrong bytes or with the wrong key fails the tests.

use std::collections::VecDeque;
use std::fmt::Write as _;
use std::sync::{Arc, Mutex, MutexGuard, PoisonError};
use std::thread;
use std::time::{Duration, Instant, SystemTime, UNIX_EPOCH};

use axum::Router;
use axum::body::Body;
use axum::extract::{Request, State};
use axum::http::StatusCode;
use axum::response::{IntoResponse, Response};
use sha2::{Digest, Sha256};

use crate::Error;
use crate::background::Background;
use crate::server::base_url;

/// The header that carries the event's id.
pub const EVENT_ID_HEADER: &str = "toolbridge-event-id";
/// The header that carries the signature, `t=<unix seconds>,v1=<hex>`.
pub const SIGNATURE_HEADER: &str = "toolbridge-signature";
/// How far a signature's timestamp may be from the time of receipt, as the book's webhooks page tells
/// receivers: five minutes.
pub const TOLERANCE: Duration = Duration::from_secs(5 * 60);
/// The longest body the receiver reads.
const MAX_BODY_BYTES: usize = 16 * 1024 * 1024;
/// How often the waits look again.
const POLL: Duration = Duration::from_millis(20);

/// What the receiver answers one request with.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Answer {
    /// This status, with an empty body.
    Status(u16),
    /// Nothing: the connection is held open, unanswered, until the receiver is dropped.
    Never,
}

/// One request the receiver got.
#[derive(Clone, Debug)]
pub struct Received {
    /// `POST`, normally.
    pub method: String,
    /// The path and query it was sent to (`/hook`).
    pub path: String,
    /// The headers, names in lower case, in the order they came.
    pub headers: Vec<(String, String)>,
    /// The body's bytes as they came.
    pub body: Vec<u8>,
    /// When it arrived, on this process's clock.
    pub at: Instant,
    /// When it arrived, in seconds since the Unix epoch (what a signature's `t` is checked
    /// against).
    pub unix_secs: u64,
    /// What the receiver answered.
    pub answer: Answer,
}

impl Received {
    /// The first header called `name` (any case).
    pub fn header(&self, name: &str) -> Option<&str> {
        self.headers
            .iter()
            .find(|(key, _)| key.eq_ignore_ascii_case(name))
            .map(|(_, value)| value.as_str())
    }

    /// The `Toolbridge-Event-Id` header.
    pub fn event_id(&self) -> Option<&str> {
        self.header(EVENT_ID_HEADER)
    }

    /// The body as JSON.
    pub fn json(&self) -> Result<serde_json::Value, Error> {
        serde_json::from_slice(&self.body).map_err(|error| {
            Error::failed(format!(
                "the webhook body is not JSON ({error}): {}",
                String::from_utf8_lossy(&self.body)
            ))
        })
    }

    /// Checks the `Toolbridge-Signature` header as a receiver holding `secret` would: a `t=`
    /// within [`TOLERANCE`] of the time of receipt, and a `v1=` equal to the hex HMAC-SHA256 of
    /// `"<t>.<body>"` keyed with the whole secret string (`whsec_…`). The error says what was
    /// wrong.
    pub fn verify(&self, secret: &str) -> Result<(), Error> {
        let header = self
            .header(SIGNATURE_HEADER)
            .ok_or_else(|| Error::failed("the delivery has no Toolbridge-Signature header"))?;
        let mut timestamp = None;
        let mut signatures = Vec::new();
        for part in header.split(',') {
            match part.trim().split_once('=') {
                Some(("t", value)) => timestamp = Some(value),
                Some(("v1", value)) => signatures.push(value),
                _ => {}
            }
        }
        let timestamp = timestamp
            .ok_or_else(|| Error::failed(format!("Toolbridge-Signature `{header}` has no t=")))?;
        let t: u64 = timestamp.parse().map_err(|_| {
            Error::failed(format!(
                "Toolbridge-Signature `{header}`: t={timestamp} is not a number of seconds"
            ))
        })?;
        if t.abs_diff(self.unix_secs) > TOLERANCE.as_secs() {
            return Err(Error::failed(format!(
                "Toolbridge-Signature `{header}`: t={t} is more than {} s from the time of receipt ({})",
                TOLERANCE.as_secs(),
                self.unix_secs
            )));
        }
        let mut message = format!("{timestamp}.").into_bytes();
        message.extend_from_slice(&self.body);
        let expected = hex(&hmac_sha256(secret.as_bytes(), &message));
        if signatures.iter().any(|given| *given == expected) {
            Ok(())
        } else {
            Err(Error::failed(format!(
                "Toolbridge-Signature `{header}` does not match the body with this secret (expected v1={expected})"
            )))
        }
    }
}

/// A running receiver on 127.0.0.1. Dropping it stops it and ends the connections it holds.
pub struct WebhookReceiver {
    state: Arc<Shared>,
    server: Background,
}

/// What the handler shares with the [`WebhookReceiver`].
#[derive(Default)]
struct Shared {
    answers: Mutex<VecDeque<Answer>>,
    received: Mutex<Vec<Received>>,
}

impl WebhookReceiver {
    /// Listens on 127.0.0.1 at a port the OS picks and starts answering 200.
    pub fn start() -> Result<Self, Error> {
        let state = Arc::new(Shared::default());
        let app = Router::new()
            .fallback(receive)
            .with_state(Arc::clone(&state));
        let server = Background::start("webhook receiver", |listener, stopped| async move {
            tokio::select! {
                _ = stopped => {}
                _ = axum::serve(listener, app).into_future() => {}
            }
        })?;
        Ok(Self { state, server })
    }

    /// The port the receiver listens on.
    pub fn port(&self) -> u16 {
        self.server.port()
    }

    /// `http://127.0.0.1:PORT/hook`: a URL for an endpoint.
    pub fn url(&self) -> String {
        self.url_at("/hook")
    }

    /// `http://127.0.0.1:PORT{path}`: another URL on the same receiver, for telling endpoints
    /// apart by [`Received::path`]. `path` starts with `/`.
    pub fn url_at(&self, path: &str) -> String {
        format!("{}{path}", base_url(self.server.port()))
    }

    /// Queues `answer` for the next request not yet answered.
    pub fn answer(&self, answer: Answer) {
        lock(&self.state.answers).push_back(answer);
    }

    /// Queues each of `answers`, in order.
    pub fn answers(&self, answers: impl IntoIterator<Item = Answer>) {
        lock(&self.state.answers).extend(answers);
    }

    /// Every request received so far, in order of arrival.
    pub fn requests(&self) -> Vec<Received> {
        lock(&self.state.received).clone()
    }

    /// The requests received so far at `path`.
    pub fn requests_at(&self, path: &str) -> Vec<Received> {
        lock(&self.state.received)
            .iter()
            .filter(|request| request.path == path)
            .cloned()
            .collect()
    }

    /// Waits (blocking this thread) until at least `n` requests have arrived and returns them
    /// all; fails after `timeout` saying how many came. In an async test whose runtime must keep
    /// running meanwhile, use [`Self::wait_for_async`].
    pub fn wait_for(&self, n: usize, timeout: Duration) -> Result<Vec<Received>, Error> {
        let started = Instant::now();
        loop {
            if let Some(done) = self.check(n, started, timeout) {
                return done;
            }
            thread::sleep(POLL);
        }
    }

    /// [`Self::wait_for`], yielding to the caller's runtime while it waits.
    pub async fn wait_for_async(
        &self,
        n: usize,
        timeout: Duration,
    ) -> Result<Vec<Received>, Error> {
        let started = Instant::now();
        loop {
            if let Some(done) = self.check(n, started, timeout) {
                return done;
            }
            tokio::time::sleep(POLL).await;
        }
    }

    /// `Some` when `n` requests are in, or when the wait is over.
    fn check(
        &self,
        n: usize,
        started: Instant,
        timeout: Duration,
    ) -> Option<Result<Vec<Received>, Error>> {
        let received = self.requests();
        if received.len() >= n {
            return Some(Ok(received));
        }
        (started.elapsed() >= timeout).then(|| {
            Err(Error::failed(format!(
                "the webhook receiver got {} of {n} requests within {:.1} s",
                received.len(),
                timeout.as_secs_f64()
            )))
        })
    }
}

/// A lock that the handler cannot leave half-changed, so a poisoned one is still good.
fn lock<T>(mutex: &Mutex<T>) -> MutexGuard<'_, T> {
    mutex.lock().unwrap_or_else(PoisonError::into_inner)
}

/// Every request: recorded, then answered with the next scripted answer (200 when none is left).
async fn receive(State(state): State<Arc<Shared>>, request: Request) -> Response {
    let (parts, body) = request.into_parts();
    let body = axum::body::to_bytes(body, MAX_BODY_BYTES)
        .await
        .map(|bytes| bytes.to_vec())
        .unwrap_or_default();
    let answer = lock(&state.answers)
        .pop_front()
        .unwrap_or(Answer::Status(200));
    let unix_secs = SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .map_or(0, |since| since.as_secs());
    let received = Received {
        method: parts.method.to_string(),
        path: parts
            .uri
            .path_and_query()
            .map_or_else(|| parts.uri.path().to_owned(), ToString::to_string),
        headers: parts
            .headers
            .iter()
            .map(|(name, value)| {
                (
                    name.as_str().to_owned(),
                    String::from_utf8_lossy(value.as_bytes()).into_owned(),
                )
            })
            .collect(),
        body,
        at: Instant::now(),
        unix_secs,
        answer,
    };
    lock(&state.received).push(received);
    match answer {
        Answer::Status(code) => StatusCode::from_u16(code)
            .unwrap_or(StatusCode::INTERNAL_SERVER_ERROR)
            .into_response(),
        Answer::Never => {
            std::future::pending::<()>().await;
            Response::new(Body::empty())
        }
    }
}

/// HMAC-SHA256 (RFC 2104): `H((K ^ opad) || H((K ^ ipad) || message))`, the key hashed first
/// when longer than SHA-256's 64-byte block.
pub fn hmac_sha256(key: &[u8], message: &[u8]) -> [u8; 32] {
    const BLOCK: usize = 64;
    let mut block = [0_u8; BLOCK];
    if key.len() > BLOCK {
        block[..32].copy_from_slice(&Sha256::digest(key));
    } else {
        block[..key.len()].copy_from_slice(key);
    }
    let pad = |byte: u8| block.map(|k| k ^ byte);
    let inner = Sha256::new()
        .chain_update(pad(0x36))
        .chain_update(message)
        .finalize();
    Sha256::new()
        .chain_update(pad(0x5c))
        .chain_update(inner)
        .finalize()
        .into()
}

/// Lower-case hex.
fn hex(bytes: &[u8]) -> String {
    bytes.iter().fold(String::new(), |mut text, byte| {
        let _ = write!(text, "{byte:02x}");
        text
    })
}

#[cfg(test)]
mod tests {
    use std::io::{ErrorKind, Read, Write};
    use std::net::{Ipv4Addr, TcpStream};

    use super::*;

    fn post(receiver: &WebhookReceiver, path: &str, headers: &str, body: &str) -> String {
        let mut stream = TcpStream::connect((Ipv4Addr::LOCALHOST, receiver.port())).unwrap();
        stream
            .set_read_timeout(Some(Duration::from_secs(5)))
            .unwrap();
        write!(
            stream,
            "POST {path} HTTP/1.1\r\nHost: 127.0.0.1\r\nConnection: close\r\n{headers}Content-Length: {}\r\n\r\n{body}",
            body.len()
        )
        .unwrap();
        let mut answer = String::new();
        stream.read_to_string(&mut answer).unwrap();
        answer
    }

    #[test]
    fn hmac_matches_rfc_4231() {
        // Test case 2 of RFC 4231.
        assert_eq!(
            hex(&hmac_sha256(b"Jefe", b"what do ya want for nothing?")),
            "5bdcc146bf60754e6a042426089575c75a003f089d2739839dec58b964ec3843"
        );
        // Test case 6: a key longer than the block.
        assert_eq!(
            hex(&hmac_sha256(
                &[0xaa; 131],
                b"Test Using Larger Than Block-Size Key - Hash Key First"
            )),
            "60e431591ee0b67f0d8a26aacbf5b77f8e0bc6213728c5140546040f0ee37f54"
        );
    }

    #[test]
    fn requests_are_recorded_and_answered_as_scripted() {
        let receiver = WebhookReceiver::start().unwrap();
        assert!(receiver.url().starts_with("http://127.0.0.1:"));
        receiver.answers([Answer::Status(500), Answer::Status(204)]);
        let first = post(&receiver, "/hook", "X-One: 1\r\n", "{\"a\":1}");
        assert!(first.starts_with("HTTP/1.1 500"), "{first}");
        let second = post(&receiver, "/other?x=1", "", "b");
        assert!(second.starts_with("HTTP/1.1 204"), "{second}");
        let third = post(&receiver, "/hook", "", "c");
        assert!(third.starts_with("HTTP/1.1 200"), "{third}");
        let got = receiver.wait_for(3, Duration::from_secs(5)).unwrap();
        assert_eq!(got.len(), 3);
        assert_eq!(got[0].method, "POST");
        assert_eq!(got[0].header("x-one"), Some("1"));
        assert_eq!(got[0].json().unwrap()["a"], 1);
        assert_eq!(got[0].answer, Answer::Status(500));
        assert_eq!(got[1].path, "/other?x=1");
        assert_eq!(got[2].body, b"c");
        assert_eq!(receiver.requests_at("/hook").len(), 2);
        let short = receiver
            .wait_for(4, Duration::from_millis(100))
            .unwrap_err();
        assert!(short.to_string().contains("got 3 of 4"), "{short}");
    }

    #[test]
    fn never_holds_the_connection_until_the_receiver_stops() {
        let receiver = WebhookReceiver::start().unwrap();
        receiver.answer(Answer::Never);
        let mut stream = TcpStream::connect((Ipv4Addr::LOCALHOST, receiver.port())).unwrap();
        stream
            .write_all(b"POST /hook HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Length: 2\r\n\r\n{}")
            .unwrap();
        stream
            .set_read_timeout(Some(Duration::from_millis(300)))
            .unwrap();
        let mut byte = [0_u8; 1];
        let waited = stream.read(&mut byte).unwrap_err();
        assert!(matches!(
            waited.kind(),
            ErrorKind::WouldBlock | ErrorKind::TimedOut
        ));
        assert_eq!(receiver.requests().len(), 1);
        assert_eq!(receiver.requests()[0].answer, Answer::Never);
        drop(receiver);
        stream
            .set_read_timeout(Some(Duration::from_secs(5)))
            .unwrap();
        assert_eq!(stream.read(&mut byte).unwrap(), 0);
    }

    #[test]
    fn verify_takes_the_right_signature_and_refuses_others() {
        let receiver = WebhookReceiver::start().unwrap();
        let body = "{\"id\":\"evt_1\"}";
        let now = SystemTime::now()
            .duration_since(UNIX_EPOCH)
            .unwrap()
            .as_secs();
        let secret = "whsec_test";
        let sign = |t: u64, key: &str| {
            hex(&hmac_sha256(
                key.as_bytes(),
                format!("{t}.{body}").as_bytes(),
            ))
        };
        let cases = [
            (format!("t={now},v1={}", sign(now, secret)), None),
            (format!("t={now},v1=00,v1={}", sign(now, secret)), None),
            (
                format!("t={now},v1={}", sign(now, "whsec_other")),
                Some("does not match"),
            ),
            (
                format!("t={},v1={}", now - 400, sign(now - 400, secret)),
                Some("more than 300 s"),
            ),
            (format!("v1={}", sign(now, secret)), Some("has no t=")),
        ];
        for (header, _) in &cases {
            post(
                &receiver,
                "/hook",
                &format!("Toolbridge-Signature: {header}\r\n"),
                body,
            );
        }
        let unsigned = post(&receiver, "/hook", "", body);
        assert!(unsigned.starts_with("HTTP/1.1 200"));
        let got = receiver
            .wait_for(cases.len() + 1, Duration::from_secs(5))
            .unwrap();
        for ((header, refusal), request) in cases.iter().zip(&got) {
            match (refusal, request.verify(secret)) {
                (None, Ok(())) => {}
                (Some(words), Err(error)) => {
                    assert!(error.to_string().contains(words), "{header}: {error}");
                }
                (expected, outcome) => panic!("{header}: expected {expected:?}, got {outcome:?}"),
            }
        }
        let missing = got[cases.len()].verify(secret).unwrap_err();
        assert!(
            missing.to_string().contains("no Toolbridge-Signature"),
            "{missing}"
        );
    }
}
