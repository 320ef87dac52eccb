//! The fault server: a small axum server that answers the host's browser tests with the failures
//! the real server cannot produce on demand, serves the scripts the bench loads, and keeps the
//! reports those tests post. It runs on its own thread with its own tokio runtime, so that sync
//! code can start it and drop it.
//!
//! Every answer allows credentialed requests from any origin (the request's `Origin` echoed), and
//! an `OPTIONS` request on any path is a successful preflight. Each connection carries one request
//! and is closed after the answer. The routes:
//!
//! | route | answer |
//! |---|---|
//! | `/status/{code}/…` | that status; 4xx and 5xx with an RFC 9457 problem body (`418`: plain text) |
//! | `/drop/…` | none: the connection is closed without a byte |
//! | `/hang/…` | none: the connection is held open for up to 60 s, or until the server stops |
//! | `/garbage/…` | 200 with `Content-Type: application/json` and a body that is not JSON |
//! | `POST /report/{name}` | 204; the body is kept under `name` (the last one wins) |
//! | `GET /report/{name}` | 200 with the body kept under `name`, or 404 |
//! | `GET /files/{name}` | 200 with a file given to [`FaultServer::serve_file`] (the host tests' tool pages, scripts the bench loads; `no-cache` with an `ETag`, 304 on a match), or 404 |
//! | anything else | 404 with a problem body |
//!
//! A body longer than 16 MiB is refused with 413.

use std::collections::HashMap;
use std::io;
use std::sync::{Arc, Mutex, MutexGuard, PoisonError};
use std::time::Duration;

use axum::Router;
use axum::body::{Body, Bytes};
use axum::extract::{Path, Request, State};
use axum::http::header::{self, HeaderMap, HeaderValue};
use axum::http::{Method, StatusCode, Uri};
use axum::middleware::{self, Next};
use axum::response::{IntoResponse, Response};
use axum::routing::any;
use hyper::server::conn::http1;
use hyper_util::rt::{TokioIo, TokioTimer};
use tokio::net::{TcpListener, TcpStream};
use tokio::sync::oneshot;
use toolbridge_protocol::problem::{PROBLEM_CONTENT_TYPE, Problem};
use toolbridge_protocol::{ErrorCode, Violation};
use tower::ServiceExt as _;

use crate::Error;
use crate::background::Background;
use crate::server::base_url;

/// The longest request body we take.
const MAX_BODY_BYTES: u64 = 16 * 1024 * 1024;
/// How long a client may take to send a request's head.
const HEAD_TIMEOUT: Duration = Duration::from_secs(30);
/// How long `/hang/…` holds a connection at most.
const HANG_LIMIT: Duration = Duration::from_secs(60);
/// The headers a browser may read from our answers.
const EXPOSED_HEADERS: &str = "Retry-After, ETag, X-Request-Id, Location";
/// The request headers a preflight allows when the request names none.
const DEFAULT_ALLOWED_HEADERS: &str = "content-type, idempotency-key";
/// What a 429 asks the client to wait, in seconds (header and body).
const RETRY_AFTER_SECS: u64 = 7;

/// A running fault server on 127.0.0.1. Dropping it stops it, and ends the connections it holds.
pub struct FaultServer {
    state: Arc<Shared>,
    server: Background,
}

/// What the handlers share with the [`FaultServer`].
#[derive(Default)]
struct Shared {
    reports: Mutex<HashMap<String, Report>>,
    /// `/files/{name}`: name → (content type, bytes).
    files: Mutex<HashMap<String, (&'static str, Bytes)>>,
}

/// A body posted to `/report/{name}`.
#[derive(Clone)]
struct Report {
    content_type: Option<HeaderValue>,
    body: Bytes,
}

/// Marks an answer that is not to be sent: the connection is closed instead.
#[derive(Clone, Copy)]
struct Silence;

impl FaultServer {
    /// Listens on 127.0.0.1 at a port the OS picks and starts answering.
    pub fn start() -> Result<Self, Error> {
        let state = Arc::new(Shared::default());
        let app = router(Arc::clone(&state));
        let server = Background::start("fault server", |listener, stopped| {
            serve(listener, app, stopped)
        })?;
        Ok(Self { state, server })
    }

    /// The port the server listens on.
    pub fn port(&self) -> u16 {
        self.server.port()
    }

    /// `http://127.0.0.1:PORT`, without a trailing slash.
    pub fn base_url(&self) -> String {
        base_url(self.server.port())
    }

    /// Serves `bytes` as `GET /files/{name}`, with a JavaScript content type for `.js` and an
    /// HTML one for `.html`.
    pub fn serve_file(&self, name: &str, bytes: impl Into<Bytes>) {
        let extension = std::path::Path::new(name)
            .extension()
            .and_then(|extension| extension.to_str())
            .map(str::to_ascii_lowercase);
        let content_type = match extension.as_deref() {
            Some("js") => "text/javascript; charset=utf-8",
            Some("html") => "text/html; charset=utf-8",
            _ => "application/octet-stream",
        };
        lock(&self.state.files).insert(name.to_owned(), (content_type, bytes.into()));
    }

    /// The last body posted to `/report/{name}`, as text.
    pub fn report(&self, name: &str) -> Option<String> {
        lock(&self.state.reports)
            .get(name)
            .map(|report| String::from_utf8_lossy(&report.body).into_owned())
    }
}

/// A lock that a handler cannot leave half-changed, so a poisoned one is still good.
fn lock<T>(mutex: &Mutex<T>) -> MutexGuard<'_, T> {
    mutex.lock().unwrap_or_else(PoisonError::into_inner)
}

/// Accepts connections until `stopped`, each served on its own task.
async fn serve(listener: TcpListener, app: Router, mut stopped: oneshot::Receiver<()>) {
    loop {
        tokio::select! {
            _ = &mut stopped => return,
            accepted = listener.accept() => match accepted {
                Ok((stream, _)) => {
                    tokio::spawn(serve_connection(stream, app.clone()));
                }
                // Out of file descriptors and the like: wait a little rather than spin.
                Err(_) => tokio::time::sleep(Duration::from_millis(10)).await,
            },
        }
    }
}

/// Serves one request on `stream` and closes it. An answer marked [`Silence`] becomes an error of
/// the service, on which hyper closes the connection without writing a byte.
async fn serve_connection(stream: TcpStream, app: Router) {
    let service = hyper::service::service_fn(move |request: Request<hyper::body::Incoming>| {
        let app = app.clone();
        async move {
            let response = match app.oneshot(request.map(Body::new)).await {
                Ok(response) => response,
                Err(never) => match never {},
            };
            if response.extensions().get::<Silence>().is_some() {
                Err(io::Error::other("the fault server drops this connection"))
            } else {
                Ok(response)
            }
        }
    });
    let _ = http1::Builder::new()
        .keep_alive(false)
        .timer(TokioTimer::new())
        .header_read_timeout(HEAD_TIMEOUT)
        .serve_connection(TokioIo::new(stream), service)
        .await;
}

/// The routes; see the module's documentation.
fn router(state: Arc<Shared>) -> Router {
    let mut router = Router::new()
        .route("/status/{*rest}", any(status))
        .route("/files/{*name}", any(file))
        .route("/report/{*name}", any(report));
    // Each of these answers the same at its own path and below it.
    for (prefix, handler) in [
        ("/drop", any(|| async { silence() })),
        ("/hang", any(hang)),
        ("/garbage", any(garbage)),
    ] {
        router = router
            .route(prefix, handler.clone())
            .route(&format!("{prefix}/"), handler.clone())
            .route(&format!("{prefix}/{{*rest}}"), handler);
    }
    router
        .fallback(no_route)
        .layer(middleware::from_fn(cors))
        .with_state(state)
}

/// The CORS headers on every answer, preflights answered here, and bodies too long refused
/// before any handler reads them.
async fn cors(request: Request, next: Next) -> Response {
    let origin = request.headers().get(header::ORIGIN).cloned();
    let declared_length = request
        .headers()
        .get(header::CONTENT_LENGTH)
        .and_then(|value| value.to_str().ok())
        .and_then(|value| value.parse::<u64>().ok());
    let mut response = if request.method() == Method::OPTIONS {
        preflight(request.headers())
    } else if declared_length.is_some_and(|length| length > MAX_BODY_BYTES) {
        too_large()
    } else {
        next.run(request).await
    };
    let headers = response.headers_mut();
    if let Some(origin) = origin {
        headers.insert(header::ACCESS_CONTROL_ALLOW_ORIGIN, origin);
    }
    headers.insert(
        header::ACCESS_CONTROL_ALLOW_CREDENTIALS,
        HeaderValue::from_static("true"),
    );
    headers.insert(header::VARY, HeaderValue::from_static("Origin"));
    headers.insert(
        header::ACCESS_CONTROL_EXPOSE_HEADERS,
        HeaderValue::from_static(EXPOSED_HEADERS),
    );
    headers
        .entry(header::CACHE_CONTROL)
        .or_insert(HeaderValue::from_static("no-store"));
    response
}

/// The answer to an `OPTIONS` request: whatever it asks for.
fn preflight(request: &HeaderMap) -> Response {
    let allowed = request
        .get(header::ACCESS_CONTROL_REQUEST_HEADERS)
        .cloned()
        .unwrap_or(HeaderValue::from_static(DEFAULT_ALLOWED_HEADERS));
    (
        StatusCode::NO_CONTENT,
        [
            (
                header::ACCESS_CONTROL_ALLOW_METHODS,
                HeaderValue::from_static("GET, POST, PUT, OPTIONS"),
            ),
            (header::ACCESS_CONTROL_ALLOW_HEADERS, allowed),
            (
                header::ACCESS_CONTROL_MAX_AGE,
                HeaderValue::from_static("0"),
            ),
        ],
    )
        .into_response()
}

/// An answer that closes the connection instead (see [`serve_connection`]).
fn silence() -> Response {
    let mut response = StatusCode::NO_CONTENT.into_response();
    response.extensions_mut().insert(Silence);
    response
}

/// `/hang/…`: nothing, until [`HANG_LIMIT`] has passed (or the server stops, which ends this
/// task with its runtime).
async fn hang() -> Response {
    tokio::time::sleep(HANG_LIMIT).await;
    silence()
}

/// `/garbage/…`: 200 with a body that is not JSON.
async fn garbage() -> Response {
    (
        [(header::CONTENT_TYPE, "application/json")],
        "this is not json",
    )
        .into_response()
}

/// `/status/{code}/…`.
async fn status(method: Method, uri: Uri, Path(rest): Path<String>) -> Response {
    let code = rest.split('/').next().unwrap_or_default();
    match code
        .parse::<u16>()
        .ok()
        .filter(|code| (200..=599).contains(code))
        .and_then(|code| StatusCode::from_u16(code).ok())
    {
        Some(status) => status_answer(status),
        None => no_route(method, uri).await,
    }
}

/// The answer of `/status/{status}/…`.
fn status_answer(status: StatusCode) -> Response {
    match status.as_u16() {
        418 => (
            status,
            [(header::CONTENT_TYPE, "text/plain")],
            "I'm a teapot",
        )
            .into_response(),
        400..=599 => problem(
            status,
            format!("the test server answered {}", status.as_u16()),
        ),
        204 | 304 => status.into_response(),
        _ => (status, [(header::CONTENT_TYPE, "application/json")], "{}").into_response(),
    }
}

/// `GET /files/{name}`: cached as the toolbridge server caches bridge.js, kept and revalidated by
/// its `ETag` on every load, so that a page pays the same for each library it loads.
async fn file(
    State(state): State<Arc<Shared>>,
    method: Method,
    uri: Uri,
    Path(name): Path<String>,
    headers: HeaderMap,
) -> Response {
    if method != Method::GET {
        return no_route(method, uri).await;
    }
    let Some((content_type, bytes)) = lock(&state.files).get(&name).cloned() else {
        return problem(StatusCode::NOT_FOUND, format!("no file called `{name}`"));
    };
    let etag = format!("\"{}-{}\"", name.len(), bytes.len());
    let cache = [
        (header::CACHE_CONTROL, "no-cache".to_owned()),
        (header::ETAG, etag.clone()),
    ];
    if headers
        .get(header::IF_NONE_MATCH)
        .is_some_and(|tag| tag.as_bytes() == etag.as_bytes())
    {
        return (StatusCode::NOT_MODIFIED, cache).into_response();
    }
    (
        cache,
        [(header::CONTENT_TYPE, content_type.to_owned())],
        bytes,
    )
        .into_response()
}

/// `POST /report/{name}` keeps the body; `GET` gives it back.
async fn report(
    State(state): State<Arc<Shared>>,
    method: Method,
    uri: Uri,
    Path(name): Path<String>,
    headers: HeaderMap,
    body: Body,
) -> Response {
    match method {
        Method::POST => {
            let limit = usize::try_from(MAX_BODY_BYTES).unwrap_or(usize::MAX);
            let Ok(body) = axum::body::to_bytes(body, limit).await else {
                return too_large();
            };
            let report = Report {
                content_type: headers.get(header::CONTENT_TYPE).cloned(),
                body,
            };
            lock(&state.reports).insert(name, report);
            StatusCode::NO_CONTENT.into_response()
        }
        Method::GET => match lock(&state.reports).get(&name).cloned() {
            Some(report) => {
                let content_type = report
                    .content_type
                    .unwrap_or(HeaderValue::from_static("application/octet-stream"));
                ([(header::CONTENT_TYPE, content_type)], report.body).into_response()
            }
            None => problem(StatusCode::NOT_FOUND, format!("no report called `{name}`")),
        },
        _ => no_route(method, uri).await,
    }
}

/// 404 for what no route answers.
async fn no_route(method: Method, uri: Uri) -> Response {
    problem(
        StatusCode::NOT_FOUND,
        format!("the test server has no route for {method} {}", uri.path()),
    )
}

/// 413 for a body longer than [`MAX_BODY_BYTES`].
fn too_large() -> Response {
    problem(
        StatusCode::PAYLOAD_TOO_LARGE,
        format!("the body is longer than {MAX_BODY_BYTES} bytes"),
    )
}

/// A 4xx or 5xx answer with an RFC 9457 problem body, its bridge error code picked by status.
fn problem(status: StatusCode, detail: String) -> Response {
    let (code, title) = match status.as_u16() {
        401 => (ErrorCode::Unauthenticated, "Unauthenticated"),
        404 => (ErrorCode::NotFound, "Not found"),
        422 => (ErrorCode::InvalidParams, "Invalid request"),
        429 => (ErrorCode::RateLimited, "Too many requests"),
        _ => (ErrorCode::Internal, "Internal error"),
    };
    let body = Problem {
        problem_type: format!("/docs/errors#{}", code.as_str()),
        title: title.to_owned(),
        status: status.as_u16(),
        detail,
        code,
        errors: if status == StatusCode::UNPROCESSABLE_ENTITY {
            vec![Violation::new("lines[0].qty", "from the test server")]
        } else {
            Vec::new()
        },
        retry_after: (status == StatusCode::TOO_MANY_REQUESTS).then_some(RETRY_AFTER_SECS),
        request_id: None,
    };
    let mut response = match serde_json::to_vec(&body) {
        Ok(bytes) => (status, bytes).into_response(),
        // A problem of strings and numbers always serialises; should it not, the status says
        // enough.
        Err(_) => status.into_response(),
    };
    let headers = response.headers_mut();
    headers.insert(
        header::CONTENT_TYPE,
        HeaderValue::from_static(PROBLEM_CONTENT_TYPE),
    );
    if status == StatusCode::UNAUTHORIZED {
        headers.insert(header::WWW_AUTHENTICATE, HeaderValue::from_static("Bearer"));
    }
    if status == StatusCode::TOO_MANY_REQUESTS {
        headers.insert(header::RETRY_AFTER, HeaderValue::from(RETRY_AFTER_SECS));
    }
    response
}

#[cfg(test)]
mod tests {
    use std::io::{ErrorKind, Read, Write};
    use std::net::{Ipv4Addr, TcpStream as StdStream};

    use super::*;

    /// An answer as it came over the wire.
    struct Answer {
        status: u16,
        /// Header names in lower case.
        headers: Vec<(String, String)>,
        body: String,
    }

    impl Answer {
        fn header(&self, name: &str) -> Option<&str> {
            self.headers
                .iter()
                .find(|(key, _)| key == name)
                .map(|(_, value)| value.as_str())
        }
    }

    /// Sends `request` as it is and returns all that comes back until the server closes.
    fn exchange_raw(server: &FaultServer, request: &str) -> String {
        let mut stream = StdStream::connect((Ipv4Addr::LOCALHOST, server.port())).unwrap();
        stream
            .set_read_timeout(Some(Duration::from_secs(10)))
            .unwrap();
        stream.write_all(request.as_bytes()).unwrap();
        let mut answer = Vec::new();
        stream.read_to_end(&mut answer).unwrap();
        String::from_utf8(answer).unwrap()
    }

    /// Sends `request` and reads the answer's status line, headers and body.
    fn exchange(server: &FaultServer, request: &str) -> Answer {
        let raw = exchange_raw(server, request);
        let (head, body) = raw.split_once("\r\n\r\n").unwrap();
        let mut lines = head.split("\r\n");
        let status = lines.next().unwrap().split(' ').nth(1).unwrap();
        Answer {
            status: status.parse().unwrap(),
            headers: lines
                .map(|line| {
                    let (name, value) = line.split_once(':').unwrap();
                    (name.to_ascii_lowercase(), value.trim().to_owned())
                })
                .collect(),
            body: body.to_owned(),
        }
    }

    fn get(server: &FaultServer, path: &str) -> Answer {
        exchange(
            server,
            &format!("GET {path} HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n"),
        )
    }

    #[test]
    fn a_status_answer_carries_its_headers_and_problem_body() {
        let server = FaultServer::start().unwrap();
        let answer = get(&server, "/status/429/api/v1/products?page=2");
        assert_eq!(answer.status, 429);
        assert_eq!(answer.header("retry-after"), Some("7"));
        assert_eq!(
            answer.header("content-type"),
            Some("application/problem+json")
        );
        assert_eq!(
            answer.header("access-control-allow-credentials"),
            Some("true")
        );
        assert_eq!(answer.header("vary"), Some("Origin"));
        assert_eq!(
            answer.header("access-control-expose-headers"),
            Some("Retry-After, ETag, X-Request-Id, Location")
        );
        assert_eq!(answer.header("cache-control"), Some("no-store"));
        assert_eq!(answer.header("connection"), Some("close"));
        // No Origin was sent, so none is allowed.
        assert_eq!(answer.header("access-control-allow-origin"), None);
        assert_eq!(
            answer.body,
            "{\"type\":\"/docs/errors#RATE_LIMITED\",\"title\":\"Too many requests\",\
             \"status\":429,\"detail\":\"the test server answered 429\",\
             \"code\":\"RATE_LIMITED\",\"retryAfter\":7}"
        );

        let unauthenticated = get(&server, "/status/401/session");
        assert_eq!(unauthenticated.header("www-authenticate"), Some("Bearer"));
        assert!(
            unauthenticated
                .body
                .contains("\"code\":\"UNAUTHENTICATED\"")
        );

        let invalid = get(&server, "/status/422");
        assert_eq!(invalid.status, 422);
        assert!(invalid.body.contains(
            "\"errors\":[{\"path\":\"lines[0].qty\",\"message\":\"from the test server\"}]"
        ));
        let unavailable = get(&server, "/status/503/x");
        assert_eq!(unavailable.status, 503);
        assert!(unavailable.body.contains("\"code\":\"INTERNAL\""));
        assert!(unavailable.body.contains("\"status\":503"));

        let teapot = get(&server, "/status/418/brew");
        assert_eq!(teapot.header("content-type"), Some("text/plain"));
        assert_eq!(teapot.body, "I'm a teapot");

        let ok = get(&server, "/status/200/");
        assert_eq!((ok.status, ok.body.as_str()), (200, "{}"));
        assert_eq!(get(&server, "/status/204").body, "");
    }

    #[test]
    fn the_origin_is_echoed_for_credentialed_requests() {
        let server = FaultServer::start().unwrap();
        let answer = exchange(
            &server,
            "POST /status/500/x HTTP/1.1\r\nHost: 127.0.0.1\r\nOrigin: http://localhost:4321\r\n\
             Content-Length: 2\r\n\r\n{}",
        );
        assert_eq!(answer.status, 500);
        assert_eq!(
            answer.header("access-control-allow-origin"),
            Some("http://localhost:4321")
        );
        assert_eq!(
            answer.header("access-control-allow-credentials"),
            Some("true")
        );
    }

    #[test]
    fn a_preflight_allows_what_it_is_asked_for() {
        let server = FaultServer::start().unwrap();
        let answer = exchange(
            &server,
            "OPTIONS /status/500/x HTTP/1.1\r\nHost: 127.0.0.1\r\n\
             Origin: http://127.0.0.1:4321\r\nAccess-Control-Request-Method: PUT\r\n\
             Access-Control-Request-Headers: content-type, x-custom\r\n\r\n",
        );
        assert_eq!(answer.status, 204);
        assert_eq!(
            answer.header("access-control-allow-origin"),
            Some("http://127.0.0.1:4321")
        );
        assert_eq!(
            answer.header("access-control-allow-methods"),
            Some("GET, POST, PUT, OPTIONS")
        );
        assert_eq!(
            answer.header("access-control-allow-headers"),
            Some("content-type, x-custom")
        );
        assert_eq!(answer.header("access-control-max-age"), Some("0"));
        assert_eq!(answer.header("content-length"), None);

        let bare = exchange(
            &server,
            "OPTIONS /anything HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n",
        );
        assert_eq!(
            bare.header("access-control-allow-headers"),
            Some("content-type, idempotency-key")
        );
    }

    #[test]
    fn a_drop_closes_the_connection_without_a_byte() {
        let server = FaultServer::start().unwrap();
        for path in ["/drop/api/v1/quotes", "/drop", "/drop/"] {
            let answer = exchange_raw(
                &server,
                &format!(
                    "POST {path} HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Length: 5\r\n\r\nhello"
                ),
            );
            assert_eq!(answer, "", "{path}");
        }
    }

    #[test]
    fn a_hang_answers_nothing_until_the_server_stops() {
        let server = FaultServer::start().unwrap();
        let mut stream = StdStream::connect((Ipv4Addr::LOCALHOST, server.port())).unwrap();
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
        drop(server);
        stream
            .set_read_timeout(Some(Duration::from_secs(5)))
            .unwrap();
        assert_eq!(stream.read(&mut byte).unwrap(), 0);
    }

    #[test]
    fn garbage_is_served_as_json() {
        let server = FaultServer::start().unwrap();
        let answer = get(&server, "/garbage/api/v1/products");
        assert_eq!(answer.status, 200);
        assert_eq!(answer.header("content-type"), Some("application/json"));
        assert_eq!(answer.body, "this is not json");
    }

    #[test]
    fn a_file_is_served_by_name_and_an_unknown_one_is_not_found() {
        let server = FaultServer::start().unwrap();
        server.serve_file("penpal.min.js", b"var Penpal={};".to_vec());
        let answer = get(&server, "/files/penpal.min.js");
        assert_eq!(answer.status, 200);
        assert_eq!(
            answer.header("content-type"),
            Some("text/javascript; charset=utf-8")
        );
        assert_eq!(answer.body, "var Penpal={};");
        assert_eq!(answer.header("cache-control"), Some("no-cache"));
        let etag = answer.header("etag").unwrap();
        let again = exchange(
            &server,
            &format!(
                "GET /files/penpal.min.js HTTP/1.1\r\nHost: 127.0.0.1\r\nIf-None-Match: {etag}\r\n\r\n"
            ),
        );
        assert_eq!(again.status, 304);
        assert_eq!(again.body, "");
        assert_eq!(get(&server, "/files/comlink.min.js").status, 404);
        let posted = exchange(
            &server,
            "POST /files/penpal.min.js HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Length: 0\r\n\r\n",
        );
        assert_eq!(posted.status, 404);
    }

    #[test]
    fn a_report_is_stored_and_read_back() {
        let server = FaultServer::start().unwrap();
        assert_eq!(server.report("host-bench"), None);
        assert_eq!(get(&server, "/report/host-bench").status, 404);
        for body in ["{\"old\":true}", "{\"echoMs\":[0.1,0.2]}"] {
            let answer = exchange(
                &server,
                &format!(
                    "POST /report/host-bench HTTP/1.1\r\nHost: 127.0.0.1\r\n\
                     Content-Type: application/json\r\nContent-Length: {}\r\n\r\n{body}",
                    body.len()
                ),
            );
            assert_eq!(answer.status, 204);
        }
        assert_eq!(
            server.report("host-bench").as_deref(),
            Some("{\"echoMs\":[0.1,0.2]}")
        );
        let answer = get(&server, "/report/host-bench");
        assert_eq!(answer.header("content-type"), Some("application/json"));
        assert_eq!(answer.body, "{\"echoMs\":[0.1,0.2]}");
    }

    #[test]
    fn unknown_routes_are_not_found() {
        let server = FaultServer::start().unwrap();
        for path in [
            "/nothing",
            "/status/abc/x",
            "/status/99",
            "/status/",
            "/dropped",
            "/report/",
        ] {
            let answer = get(&server, path);
            assert_eq!(answer.status, 404, "{path}: {}", answer.body);
            assert!(answer.body.contains("\"code\":\"NOT_FOUND\""), "{path}");
        }
        let put = exchange(
            &server,
            "PUT /report/x HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Length: 0\r\n\r\n",
        );
        assert!(
            put.body
                .contains("the test server has no route for PUT /report/x"),
            "{}",
            put.body
        );
    }

    #[test]
    fn a_body_too_large_is_refused() {
        let server = FaultServer::start().unwrap();
        let answer = exchange(
            &server,
            &format!(
                "POST /report/x HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Length: {}\r\n\r\n",
                MAX_BODY_BYTES + 1
            ),
        );
        assert_eq!(answer.status, 413);
        assert!(answer.body.contains("longer than 16777216 bytes"));
        assert_eq!(server.report("x"), None);
    }
}
