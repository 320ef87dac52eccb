//! The test harness server: a small HTTP server of our own (std only, one thread per connection)
//! that answers the host's browser tests with the failures the real server cannot produce on
//! demand, and keeps the reports those tests post.
//!
//! Every answer allows credentialed requests from any origin (the request's `Origin` echoed), and
//! an `OPTIONS` request on any path is a successful preflight. The routes:
//!
//! | route | answer |
//! |---|---|
//! | `/status/{code}/…` | that status; 4xx and 5xx with an RFC 9457 problem body (`418`: plain text) |
//! | `/drop/…` | none: the connection is closed without a byte |
//! | `/hang/…` | none: the connection is held open for up to 60 s |
//! | `/garbage/…` | 200 with `Content-Type: application/json` and a body that is not JSON |
//! | `POST /report/{name}` | 204; the body is kept under `name` (the last one wins) |
//! | `GET /report/{name}` | 200 with the body kept under `name`, or 404 |
//! | `GET /files/{name}` | 200 with a file given to [`Harness::serve_file`] (scripts the bench loads; `no-cache` with an `ETag`, 304 on a match), or 404 |
//! | anything else | 404 with a problem body |

use std::collections::HashMap;
use std::fmt::Write as _;
use std::io::{self, ErrorKind, Read, Write};
use std::net::{Ipv4Addr, SocketAddr, TcpListener, TcpStream};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex, PoisonError};
use std::thread::{self, JoinHandle};
use std::time::{Duration, Instant};

use crate::error::Error;
use crate::json;

/// The longest request head (request line and headers) we read.
const MAX_HEAD_BYTES: usize = 64 * 1024;
/// The longest request body we read.
const MAX_BODY_BYTES: usize = 16 * 1024 * 1024;
/// How long a read or write on a connection may block before we give up on it.
const IO_TIMEOUT: Duration = Duration::from_secs(30);
/// How long `/hang/…` holds a connection at most.
const HANG_LIMIT: Duration = Duration::from_secs(60);
/// How often a held connection checks whether the harness stops or the client left.
const HANG_POLL: Duration = Duration::from_millis(50);
/// The headers a browser may read from our answers.
const EXPOSED_HEADERS: &str = "Retry-After, ETag, X-Request-Id, Location";
/// The request headers a preflight allows when the request names none.
const DEFAULT_ALLOWED_HEADERS: &str = "content-type, idempotency-key";
/// What a 429 asks the client to wait, in seconds (header and body).
const RETRY_AFTER_SECS: u32 = 7;

/// A running harness. Dropping it stops accepting connections and ends held ones.
pub(crate) struct Harness {
    port: u16,
    shared: Arc<Shared>,
    accepting: Option<JoinHandle<()>>,
}

/// What the connection threads share with the [`Harness`].
#[derive(Default)]
struct Shared {
    stopping: AtomicBool,
    reports: Mutex<HashMap<String, Report>>,
    /// `/files/{name}`: name → (content type, bytes).
    files: Mutex<HashMap<String, (String, Vec<u8>)>>,
}

/// A body posted to `/report/{name}`.
#[derive(Clone)]
struct Report {
    content_type: Option<String>,
    body: Vec<u8>,
}

impl Harness {
    /// Listens on 127.0.0.1 at a port the OS picks and starts answering.
    pub(crate) fn start() -> Result<Self, Error> {
        let listener = TcpListener::bind((Ipv4Addr::LOCALHOST, 0))
            .map_err(|e| Error::failed(format!("the test harness cannot listen: {e}")))?;
        let port = listener
            .local_addr()
            .map_err(|e| Error::failed(format!("the test harness has no address: {e}")))?
            .port();
        let shared = Arc::new(Shared::default());
        let accepting = {
            let shared = Arc::clone(&shared);
            thread::Builder::new()
                .name("harness-accept".to_owned())
                .spawn(move || accept_loop(&listener, &shared))
                .map_err(|e| Error::failed(format!("cannot start the test harness: {e}")))?
        };
        Ok(Self {
            port,
            shared,
            accepting: Some(accepting),
        })
    }

    /// The port the harness listens on.
    pub(crate) fn port(&self) -> u16 {
        self.port
    }

    /// `http://127.0.0.1:PORT`, without a trailing slash.
    pub(crate) fn base_url(&self) -> String {
        format!("http://127.0.0.1:{}", self.port())
    }

    /// Serves `bytes` as `GET /files/{name}`, with a JavaScript content type for `.js`.
    pub(crate) fn serve_file(&self, name: &str, bytes: Vec<u8>) {
        let script = std::path::Path::new(name)
            .extension()
            .is_some_and(|extension| extension.eq_ignore_ascii_case("js"));
        let content_type = if script {
            "text/javascript; charset=utf-8"
        } else {
            "application/octet-stream"
        };
        self.shared
            .files
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .insert(name.to_owned(), (content_type.to_owned(), bytes));
    }

    /// The last body posted to `/report/{name}`, as text.
    pub(crate) fn report(&self, name: &str) -> Option<String> {
        lock_reports(&self.shared)
            .get(name)
            .map(|report| String::from_utf8_lossy(&report.body).into_owned())
    }
}

impl Drop for Harness {
    fn drop(&mut self) {
        self.shared.stopping.store(true, Ordering::SeqCst);
        // Wake the blocking `accept`; it sees the flag and returns. Should the connection fail,
        // the accepting thread is left behind rather than waited for forever.
        let address = SocketAddr::from((Ipv4Addr::LOCALHOST, self.port));
        if TcpStream::connect_timeout(&address, Duration::from_secs(1)).is_ok() {
            if let Some(accepting) = self.accepting.take() {
                let _ = accepting.join();
            }
        }
    }
}

fn lock_reports(shared: &Shared) -> std::sync::MutexGuard<'_, HashMap<String, Report>> {
    // A connection thread cannot leave the map half-changed, so a poisoned lock is still good.
    shared
        .reports
        .lock()
        .unwrap_or_else(PoisonError::into_inner)
}

/// Accepts connections until the harness stops, each on its own thread.
fn accept_loop(listener: &TcpListener, shared: &Arc<Shared>) {
    loop {
        let accepted = listener.accept();
        if shared.stopping.load(Ordering::SeqCst) {
            return;
        }
        match accepted {
            Ok((stream, _)) => {
                let shared = Arc::clone(shared);
                // When no thread can be had, the connection is dropped: the client sees it closed.
                let _ = thread::Builder::new()
                    .name("harness-connection".to_owned())
                    .spawn(move || serve_connection(stream, &shared));
            }
            // Out of file descriptors and the like: wait a little rather than spin.
            Err(_) => thread::sleep(Duration::from_millis(10)),
        }
    }
}

/// One request as read from the socket.
#[derive(Debug)]
struct Request {
    method: String,
    /// The path without the query.
    path: String,
    /// Header names in lower case, in the order they came.
    headers: Vec<(String, String)>,
    body: Vec<u8>,
}

impl Request {
    /// The value of the first header called `name` (lower case).
    fn header(&self, name: &str) -> Option<&str> {
        self.headers
            .iter()
            .find(|(key, _)| key == name)
            .map(|(_, value)| value.as_str())
    }
}

/// An answer to write.
struct Response {
    status: u16,
    headers: Vec<(&'static str, String)>,
    body: Vec<u8>,
}

impl Response {
    fn new(status: u16) -> Self {
        Self {
            status,
            headers: Vec::new(),
            body: Vec::new(),
        }
    }

    fn with_header(mut self, name: &'static str, value: impl Into<String>) -> Self {
        self.headers.push((name, value.into()));
        self
    }

    fn with_body(mut self, content_type: &str, body: impl Into<Vec<u8>>) -> Self {
        self.headers.push(("Content-Type", content_type.to_owned()));
        self.body = body.into();
        self
    }

    /// The bytes on the wire, with the CORS headers for a request from `origin`.
    fn to_bytes(&self, origin: Option<&str>) -> Vec<u8> {
        let mut head = format!("HTTP/1.1 {} {}\r\n", self.status, reason(self.status));
        if let Some(origin) = origin {
            let _ = write!(head, "Access-Control-Allow-Origin: {origin}\r\n");
        }
        head.push_str("Access-Control-Allow-Credentials: true\r\n");
        head.push_str("Vary: Origin\r\n");
        let _ = write!(head, "Access-Control-Expose-Headers: {EXPOSED_HEADERS}\r\n");
        for (name, value) in &self.headers {
            let _ = write!(head, "{name}: {value}\r\n");
        }
        // 204 and 304 have no body and must not say how long it is.
        if !matches!(self.status, 204 | 304) {
            let _ = write!(head, "Content-Length: {}\r\n", self.body.len());
        }
        if !self
            .headers
            .iter()
            .any(|(name, _)| *name == "Cache-Control")
        {
            head.push_str("Cache-Control: no-store\r\n");
        }
        head.push_str("Connection: close\r\n\r\n");
        let mut bytes = head.into_bytes();
        bytes.extend_from_slice(&self.body);
        bytes
    }
}

/// What to do with a connection once its request is read.
enum Action {
    /// Write this answer and close.
    Respond(Response),
    /// Close without writing anything.
    Drop,
    /// Hold the connection open without answering.
    Hang,
}

/// Reads one request, acts on it, closes the connection (when the stream is dropped).
fn serve_connection(mut stream: TcpStream, shared: &Shared) {
    if shared.stopping.load(Ordering::SeqCst) {
        return;
    }
    let _ = stream.set_read_timeout(Some(IO_TIMEOUT));
    let _ = stream.set_write_timeout(Some(IO_TIMEOUT));
    let request = match read_request(&mut stream) {
        Ok(request) => request,
        Err(ReadError::Io) => return,
        Err(ReadError::Refused(status, detail)) => {
            let _ = stream.write_all(&problem(status, &detail).to_bytes(None));
            return;
        }
    };
    let origin = request.header("origin");
    match route(&request, shared) {
        Action::Respond(response) => {
            let _ = stream
                .write_all(&response.to_bytes(origin))
                .and_then(|()| stream.flush());
        }
        Action::Drop => {}
        Action::Hang => hang(&mut stream, shared),
    }
}

/// Why no request could be read.
enum ReadError {
    /// The connection failed, timed out or closed early: nothing to answer.
    Io,
    /// The request is malformed or too large: answer this status with this detail.
    Refused(u16, String),
}

impl From<io::Error> for ReadError {
    fn from(_: io::Error) -> Self {
        Self::Io
    }
}

/// Reads the request line, the headers and a body of `Content-Length` bytes.
fn read_request(stream: &mut impl Read) -> Result<Request, ReadError> {
    let mut buffer = Vec::new();
    let mut chunk = [0_u8; 4096];
    let head_end = loop {
        if let Some(end) = find(&buffer, b"\r\n\r\n") {
            break end;
        }
        if buffer.len() > MAX_HEAD_BYTES {
            return Err(ReadError::Refused(
                431,
                format!("the request head is longer than {MAX_HEAD_BYTES} bytes"),
            ));
        }
        let read = stream.read(&mut chunk)?;
        if read == 0 {
            return Err(ReadError::Io);
        }
        buffer.extend_from_slice(&chunk[..read]);
    };
    let head = String::from_utf8_lossy(&buffer[..head_end]).into_owned();
    let mut lines = head.split("\r\n");
    let request_line = lines.next().unwrap_or_default();
    let mut parts = request_line.split_whitespace();
    let (Some(method), Some(target), Some(version)) = (parts.next(), parts.next(), parts.next())
    else {
        return Err(refused(
            400,
            "the request line is not `METHOD TARGET VERSION`",
        ));
    };
    if !version.starts_with("HTTP/1.") {
        return Err(refused(505, "only HTTP/1.x is spoken here"));
    }
    let mut headers = Vec::new();
    for line in lines {
        let Some((name, value)) = line.split_once(':') else {
            return Err(refused(400, "a header line has no `:`"));
        };
        headers.push((name.trim().to_ascii_lowercase(), value.trim().to_owned()));
    }
    let request = Request {
        method: method.to_owned(),
        path: target.split('?').next().unwrap_or_default().to_owned(),
        headers,
        body: Vec::new(),
    };
    if request.header("transfer-encoding").is_some() {
        return Err(refused(
            411,
            "send the body with a Content-Length, not chunked",
        ));
    }
    let length = match request.header("content-length") {
        None => 0,
        Some(value) => value
            .parse::<usize>()
            .map_err(|_| refused(400, "the Content-Length is not a number"))?,
    };
    if length > MAX_BODY_BYTES {
        return Err(refused(
            413,
            &format!("the body is longer than {MAX_BODY_BYTES} bytes"),
        ));
    }
    let mut body = buffer.split_off(head_end + 4);
    body.truncate(length);
    if body.len() < length {
        let mut rest = vec![0_u8; length - body.len()];
        stream.read_exact(&mut rest)?;
        body.extend_from_slice(&rest);
    }
    Ok(Request { body, ..request })
}

fn refused(status: u16, detail: &str) -> ReadError {
    ReadError::Refused(status, detail.to_owned())
}

/// Where `needle` first starts in `haystack`.
fn find(haystack: &[u8], needle: &[u8]) -> Option<usize> {
    haystack
        .windows(needle.len())
        .position(|window| window == needle)
}

/// The answer to a request.
fn route(request: &Request, shared: &Shared) -> Action {
    let method = request.method.as_str();
    let path = request.path.as_str();
    if method == "OPTIONS" {
        let allowed = request
            .header("access-control-request-headers")
            .unwrap_or(DEFAULT_ALLOWED_HEADERS);
        return Action::Respond(
            Response::new(204)
                .with_header("Access-Control-Allow-Methods", "GET, POST, PUT, OPTIONS")
                .with_header("Access-Control-Allow-Headers", allowed)
                .with_header("Access-Control-Max-Age", "0"),
        );
    }
    if let Some(rest) = path.strip_prefix("/status/") {
        let code = rest.split('/').next().unwrap_or_default();
        if let Some(status) = code.parse::<u16>().ok().filter(|s| (200..=599).contains(s)) {
            return Action::Respond(status_answer(status));
        }
    } else if under(path, "/drop") {
        return Action::Drop;
    } else if under(path, "/hang") {
        return Action::Hang;
    } else if under(path, "/garbage") {
        return Action::Respond(
            Response::new(200).with_body("application/json", "this is not json"),
        );
    } else if let Some(name) = path.strip_prefix("/files/").filter(|_| method == "GET") {
        let files = shared.files.lock().unwrap_or_else(PoisonError::into_inner);
        // Cached as the toolbridge server caches bridge.js: kept, and revalidated by its ETag on
        // every load, so that a page pays the same for each library it loads.
        return Action::Respond(match files.get(name) {
            Some((content_type, bytes)) => {
                let etag = format!("\"{}-{}\"", name.len(), bytes.len());
                let answer = if request.header("if-none-match") == Some(etag.as_str()) {
                    Response::new(304)
                } else {
                    Response::new(200).with_body(content_type, bytes.clone())
                };
                answer
                    .with_header("Cache-Control", "no-cache")
                    .with_header("ETag", &etag)
            }
            None => problem(404, &format!("no file called `{name}`")),
        });
    } else if let Some(name) = path
        .strip_prefix("/report/")
        .filter(|name| !name.is_empty())
    {
        match method {
            "POST" => {
                let report = Report {
                    content_type: request.header("content-type").map(str::to_owned),
                    body: request.body.clone(),
                };
                lock_reports(shared).insert(name.to_owned(), report);
                return Action::Respond(Response::new(204));
            }
            "GET" => {
                if let Some(report) = lock_reports(shared).get(name).cloned() {
                    let content_type = report
                        .content_type
                        .unwrap_or_else(|| "application/octet-stream".to_owned());
                    return Action::Respond(
                        Response::new(200).with_body(&content_type, report.body),
                    );
                }
                return Action::Respond(problem(404, &format!("no report called `{name}`")));
            }
            _ => {}
        }
    }
    Action::Respond(problem(
        404,
        &format!("the test server has no route for {method} {path}"),
    ))
}

/// Whether `path` is `prefix` or lies below it.
fn under(path: &str, prefix: &str) -> bool {
    path.strip_prefix(prefix)
        .is_some_and(|rest| rest.is_empty() || rest.starts_with('/'))
}

/// The answer of `/status/{status}/…`.
fn status_answer(status: u16) -> Response {
    match status {
        418 => Response::new(418).with_body("text/plain", "I'm a teapot"),
        400..=599 => problem(status, &format!("the test server answered {status}")),
        204 | 304 => Response::new(status),
        _ => Response::new(status).with_body("application/json", "{}"),
    }
}

/// A 4xx or 5xx answer with an RFC 9457 problem body, its bridge error code picked by status.
fn problem(status: u16, detail: &str) -> Response {
    let (code, title) = match status {
        401 => ("UNAUTHENTICATED", "Unauthenticated"),
        404 => ("NOT_FOUND", "Not found"),
        422 => ("INVALID_PARAMS", "Invalid request"),
        429 => ("RATE_LIMITED", "Too many requests"),
        _ => ("INTERNAL", "Internal error"),
    };
    let mut body = format!(
        "{{\"type\":\"/docs/errors#{code}\",\"title\":\"{title}\",\"status\":{status},\
         \"detail\":{},\"code\":\"{code}\"",
        json::quote(detail)
    );
    let mut response = Response::new(status);
    match status {
        401 => response = response.with_header("WWW-Authenticate", "Bearer"),
        422 => body.push_str(
            ",\"errors\":[{\"path\":\"lines[0].qty\",\"message\":\"from the test server\"}]",
        ),
        429 => {
            response = response.with_header("Retry-After", RETRY_AFTER_SECS.to_string());
            let _ = write!(body, ",\"retryAfter\":{RETRY_AFTER_SECS}");
        }
        _ => {}
    }
    body.push('}');
    response.with_body("application/problem+json", body)
}

/// Holds a connection open without answering until the client leaves, the harness stops, or
/// [`HANG_LIMIT`] has passed.
fn hang(stream: &mut TcpStream, shared: &Shared) {
    let _ = stream.set_read_timeout(Some(HANG_POLL));
    let started = Instant::now();
    let mut sink = [0_u8; 1024];
    while started.elapsed() < HANG_LIMIT && !shared.stopping.load(Ordering::SeqCst) {
        match stream.read(&mut sink) {
            // The client closed its side: nobody waits any more.
            Ok(0) => return,
            Ok(_) => {}
            Err(e) if matches!(e.kind(), ErrorKind::WouldBlock | ErrorKind::TimedOut) => {}
            Err(_) => return,
        }
    }
}

/// The reason phrase for a status line.
fn reason(status: u16) -> &'static str {
    match status {
        200 => "OK",
        201 => "Created",
        204 => "No Content",
        304 => "Not Modified",
        400 => "Bad Request",
        401 => "Unauthorized",
        403 => "Forbidden",
        404 => "Not Found",
        409 => "Conflict",
        411 => "Length Required",
        413 => "Content Too Large",
        418 => "I'm a teapot",
        422 => "Unprocessable Content",
        429 => "Too Many Requests",
        431 => "Request Header Fields Too Large",
        500 => "Internal Server Error",
        502 => "Bad Gateway",
        503 => "Service Unavailable",
        504 => "Gateway Timeout",
        505 => "HTTP Version Not Supported",
        _ => "Status",
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Sends `request` as it is and returns all that comes back until the harness closes.
    fn exchange(harness: &Harness, request: &str) -> String {
        let mut stream = TcpStream::connect((Ipv4Addr::LOCALHOST, harness.port())).unwrap();
        stream
            .set_read_timeout(Some(Duration::from_secs(10)))
            .unwrap();
        stream.write_all(request.as_bytes()).unwrap();
        let mut answer = Vec::new();
        stream.read_to_end(&mut answer).unwrap();
        String::from_utf8(answer).unwrap()
    }

    fn get(harness: &Harness, path: &str) -> String {
        exchange(
            harness,
            &format!("GET {path} HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n"),
        )
    }

    /// The header lines of an answer.
    fn head(answer: &str) -> Vec<&str> {
        answer
            .split("\r\n\r\n")
            .next()
            .unwrap()
            .split("\r\n")
            .collect()
    }

    fn body(answer: &str) -> &str {
        answer.split_once("\r\n\r\n").unwrap().1
    }

    #[test]
    fn a_status_answer_carries_its_headers_and_problem_body() {
        let harness = Harness::start().unwrap();
        let answer = get(&harness, "/status/429/api/v1/products?page=2");
        let lines = head(&answer);
        assert_eq!(lines[0], "HTTP/1.1 429 Too Many Requests");
        assert!(lines.contains(&"Retry-After: 7"));
        assert!(lines.contains(&"Content-Type: application/problem+json"));
        assert!(lines.contains(&"Access-Control-Allow-Credentials: true"));
        assert!(lines.contains(&"Vary: Origin"));
        assert!(
            lines.contains(
                &"Access-Control-Expose-Headers: Retry-After, ETag, X-Request-Id, Location"
            )
        );
        // No Origin was sent, so none is allowed.
        assert!(!answer.contains("Access-Control-Allow-Origin"));
        assert_eq!(
            body(&answer),
            "{\"type\":\"/docs/errors#RATE_LIMITED\",\"title\":\"Too many requests\",\
             \"status\":429,\"detail\":\"the test server answered 429\",\
             \"code\":\"RATE_LIMITED\",\"retryAfter\":7}"
        );

        let unauthenticated = get(&harness, "/status/401/session");
        assert!(head(&unauthenticated).contains(&"WWW-Authenticate: Bearer"));
        assert!(body(&unauthenticated).contains("\"code\":\"UNAUTHENTICATED\""));

        let invalid = get(&harness, "/status/422");
        assert!(body(&invalid).contains(
            "\"errors\":[{\"path\":\"lines[0].qty\",\"message\":\"from the test server\"}]"
        ));
        assert!(body(&get(&harness, "/status/503/x")).contains("\"code\":\"INTERNAL\""));

        let teapot = get(&harness, "/status/418/brew");
        assert!(head(&teapot).contains(&"Content-Type: text/plain"));
        assert_eq!(body(&teapot), "I'm a teapot");
    }

    #[test]
    fn the_origin_is_echoed_for_credentialed_requests() {
        let harness = Harness::start().unwrap();
        let answer = exchange(
            &harness,
            "POST /status/500/x HTTP/1.1\r\nHost: 127.0.0.1\r\nOrigin: http://localhost:4321\r\n\
             Content-Length: 2\r\n\r\n{}",
        );
        let lines = head(&answer);
        assert_eq!(lines[0], "HTTP/1.1 500 Internal Server Error");
        assert!(lines.contains(&"Access-Control-Allow-Origin: http://localhost:4321"));
        assert!(lines.contains(&"Access-Control-Allow-Credentials: true"));
    }

    #[test]
    fn a_preflight_allows_what_it_is_asked_for() {
        let harness = Harness::start().unwrap();
        let answer = exchange(
            &harness,
            "OPTIONS /status/500/x HTTP/1.1\r\nHost: 127.0.0.1\r\n\
             Origin: http://127.0.0.1:4321\r\nAccess-Control-Request-Method: PUT\r\n\
             Access-Control-Request-Headers: content-type, x-custom\r\n\r\n",
        );
        let lines = head(&answer);
        assert_eq!(lines[0], "HTTP/1.1 204 No Content");
        assert!(lines.contains(&"Access-Control-Allow-Origin: http://127.0.0.1:4321"));
        assert!(lines.contains(&"Access-Control-Allow-Methods: GET, POST, PUT, OPTIONS"));
        assert!(lines.contains(&"Access-Control-Allow-Headers: content-type, x-custom"));
        assert!(lines.contains(&"Access-Control-Max-Age: 0"));
        assert!(!answer.contains("Content-Length"));

        let bare = exchange(
            &harness,
            "OPTIONS /anything HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n",
        );
        assert!(
            head(&bare).contains(&"Access-Control-Allow-Headers: content-type, idempotency-key")
        );
    }

    #[test]
    fn a_drop_closes_the_connection_without_a_byte() {
        let harness = Harness::start().unwrap();
        let answer = exchange(
            &harness,
            "POST /drop/api/v1/quotes HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Length: 5\r\n\r\nhello",
        );
        assert_eq!(answer, "");
    }

    #[test]
    fn a_hang_answers_nothing_until_the_harness_stops() {
        let harness = Harness::start().unwrap();
        let mut stream = TcpStream::connect((Ipv4Addr::LOCALHOST, harness.port())).unwrap();
        stream
            .write_all(b"GET /hang/x HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n")
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
        drop(harness);
        stream
            .set_read_timeout(Some(Duration::from_secs(5)))
            .unwrap();
        assert_eq!(stream.read(&mut byte).unwrap(), 0);
    }

    #[test]
    fn garbage_is_served_as_json() {
        let harness = Harness::start().unwrap();
        let answer = get(&harness, "/garbage/api/v1/products");
        assert_eq!(head(&answer)[0], "HTTP/1.1 200 OK");
        assert!(head(&answer).contains(&"Content-Type: application/json"));
        assert_eq!(body(&answer), "this is not json");
    }

    #[test]
    fn a_file_is_served_by_name_and_an_unknown_one_is_not_found() {
        let harness = Harness::start().unwrap();
        harness.serve_file("penpal.min.js", b"var Penpal={};".to_vec());
        let answer = get(&harness, "/files/penpal.min.js");
        assert_eq!(head(&answer)[0], "HTTP/1.1 200 OK");
        assert!(head(&answer).contains(&"Content-Type: text/javascript; charset=utf-8"));
        assert_eq!(body(&answer), "var Penpal={};");
        assert!(head(&answer).contains(&"Cache-Control: no-cache"));
        assert!(!head(&answer).contains(&"Cache-Control: no-store"));
        let etag = head(&answer)
            .into_iter()
            .find_map(|line| line.strip_prefix("ETag: "))
            .unwrap()
            .to_owned();
        let again = exchange(
            &harness,
            &format!(
                "GET /files/penpal.min.js HTTP/1.1\r\nHost: 127.0.0.1\r\nIf-None-Match: {etag}\r\n\r\n"
            ),
        );
        assert!(
            again.starts_with("HTTP/1.1 304 Not Modified\r\n"),
            "{again}"
        );
        assert!(get(&harness, "/files/comlink.min.js").starts_with("HTTP/1.1 404 Not Found"));
    }

    #[test]
    fn a_report_is_stored_and_read_back() {
        let harness = Harness::start().unwrap();
        assert_eq!(harness.report("host-bench"), None);
        assert!(get(&harness, "/report/host-bench").starts_with("HTTP/1.1 404 Not Found"));
        for body in ["{\"old\":true}", "{\"echoMs\":[0.1,0.2]}"] {
            let answer = exchange(
                &harness,
                &format!(
                    "POST /report/host-bench HTTP/1.1\r\nHost: 127.0.0.1\r\n\
                     Content-Type: application/json\r\nContent-Length: {}\r\n\r\n{body}",
                    body.len()
                ),
            );
            assert!(answer.starts_with("HTTP/1.1 204 No Content\r\n"));
        }
        assert_eq!(
            harness.report("host-bench").as_deref(),
            Some("{\"echoMs\":[0.1,0.2]}")
        );
        let answer = get(&harness, "/report/host-bench");
        assert!(head(&answer).contains(&"Content-Type: application/json"));
        assert_eq!(body(&answer), "{\"echoMs\":[0.1,0.2]}");
    }

    #[test]
    fn unknown_routes_are_not_found() {
        let harness = Harness::start().unwrap();
        for path in [
            "/nothing",
            "/status/abc/x",
            "/status/99",
            "/dropped",
            "/report/",
        ] {
            let answer = get(&harness, path);
            assert!(
                answer.starts_with("HTTP/1.1 404 Not Found\r\n"),
                "{path}: {answer}"
            );
            assert!(body(&answer).contains("\"code\":\"NOT_FOUND\""), "{path}");
        }
    }

    #[test]
    fn a_body_too_large_is_refused() {
        let harness = Harness::start().unwrap();
        let answer = exchange(
            &harness,
            &format!(
                "POST /report/x HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Length: {}\r\n\r\n",
                MAX_BODY_BYTES + 1
            ),
        );
        assert!(answer.starts_with("HTTP/1.1 413 "));
    }
}
