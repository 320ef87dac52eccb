//! `POST /api/v1/tools/{slug}/fetch`: the server's fetch, a request the server makes for a tool
//! (`bridge.fetch(url, init)`, forwarded by the host module with the page's session), so that the
//! tenant's secret settings and the user's identity token can go into it without ever reaching
//! the browser ([`toolbridge_protocol::fetch`], [`toolbridge_protocol::placeholders`]).
//!
//! In order: the tool must be one the app lists, the request must keep the protocol's rules
//! ([`check_request`]) and go to an origin the tool's `permissions.connect` lists; at most
//! [`IN_FLIGHT_MAX`] requests of one tool and tenant run at once (on this instance) and
//! [`PER_MINUTE_MAX`] a minute (counted in the database, so across instances). Then the
//! placeholders are replaced, the host is resolved and every address checked with the webhook
//! destination rules (`crate::webhooks::destination`), unless `--allow-private-fetch HOST:PORT`
//! names it, and the connection goes only to the addresses checked. Redirects are not followed,
//! the whole exchange has [`TIMEOUT_SECS`], and an answer over [`BODY_MAX_BYTES`] is refused.
//! The server asks for a compressed answer (gzip or brotli) and decodes it before the tool gets
//! it, the limit applying to the body decoded.
//!
//! Nothing of a request's headers, query or body, nor of the answer's, is ever logged: one line
//! per fetch names the tool, the tenant, the method, the origin, the path, the status and the
//! time it took.

use std::collections::HashMap;
use std::error::Error as StdError;
use std::io;
use std::net::{IpAddr, SocketAddr};
use std::str::FromStr;
use std::sync::{Arc, Mutex, PoisonError};
use std::time::{Duration, Instant};

use async_compression::tokio::bufread::{BrotliDecoder, GzipDecoder};
use axum::extract::State;
use axum::{Extension, Json};
use futures_util::{StreamExt as _, future, stream};
use reqwest::header::{
    ACCEPT_ENCODING, CONTENT_ENCODING, CONTENT_LENGTH, HeaderMap, HeaderName, HeaderValue,
};
use tokio::io::AsyncReadExt as _;
use tokio_util::io::StreamReader;
use toolbridge_protocol::Error as RuleError;
use toolbridge_protocol::fetch::{
    BODY_MAX_BYTES, BODY_MAX_SHOWN, DROPPED_RESPONSE_HEADERS, FetchBody, FetchRequest,
    FetchResponse, IN_FLIGHT_MAX, PER_MINUTE_MAX, TIMEOUT_SECS, check_request, decode_bytes,
    encode_bytes, origin_of,
};
use toolbridge_protocol::manifest::ToolManifest;
use toolbridge_protocol::placeholders::{Values, expand_request, uses_token};
use toolbridge_protocol::problem::Problem;
use toolbridge_store::RateLimit;

use crate::app::AppState;
use crate::auth::Principal;
use crate::error::{ApiError, Chain};
use crate::extract::PathParam;
use crate::identity::{listed_manifest, mint};
use crate::json::{LargeJsonBody, typed};
use crate::outgoing::TrustedRoots;
use crate::webhooks::destination::{DestinationError, first_refused, lookup};

/// The largest request body the endpoint takes: a [`BODY_MAX_BYTES`] body as base64 (a third
/// larger) in JSON, with room for the URL and headers. Over it the answer is 413.
pub const FETCH_JSON_LIMIT: usize = 8 * 1024 * 1024;

const _: () = assert!(BODY_MAX_BYTES.div_ceil(3) * 4 + 1024 * 1024 < FETCH_JSON_LIMIT);

/// The `User-Agent` of a fetch, unless the tool sets its own.
pub const USER_AGENT_VALUE: &str = concat!("toolbridge-fetch/", env!("CARGO_PKG_VERSION"));

/// An address and port that the server's fetch may reach although it is not public
/// (`--allow-private-fetch HOST:PORT`): a vendor's server on the operator's own network, or a
/// test's on loopback. `HOST` is a name (every address it resolves to is then allowed on that
/// port) or an IP address (`[::1]` for IPv6).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct PrivateFetch {
    /// The host in lower case, an IPv6 address without brackets.
    host: String,
    /// The port.
    port: u16,
}

impl PrivateFetch {
    /// Whether this lets a URL whose host is `host` reach `address`.
    fn allows(&self, host: &str, address: &SocketAddr) -> bool {
        let host = host
            .strip_prefix('[')
            .and_then(|inner| inner.strip_suffix(']'))
            .unwrap_or(host);
        address.port() == self.port
            && (self.host.eq_ignore_ascii_case(host)
                || self
                    .host
                    .parse::<IpAddr>()
                    .is_ok_and(|ip| ip == address.ip()))
    }
}

impl FromStr for PrivateFetch {
    type Err = String;

    fn from_str(text: &str) -> Result<Self, String> {
        let shape = || {
            format!(
                "{text:?} is not HOST:PORT: write a host name or IP address and a port, such as \
                 localhost:8443, 10.0.0.7:443 or [::1]:8443"
            )
        };
        let (host, port) = if let Some(rest) = text.strip_prefix('[') {
            let (inner, after) = rest.split_once(']').ok_or_else(shape)?;
            let port = after.strip_prefix(':').ok_or_else(shape)?;
            inner.parse::<std::net::Ipv6Addr>().map_err(|_| shape())?;
            (inner, port)
        } else {
            text.rsplit_once(':').ok_or_else(shape)?
        };
        let port: u16 = port
            .parse()
            .ok()
            .filter(|&port| port > 0)
            .ok_or_else(shape)?;
        let name_like = host
            .chars()
            .all(|c| c.is_ascii_alphanumeric() || matches!(c, '-' | '.' | ':'));
        if host.is_empty() || !name_like {
            return Err(shape());
        }
        Ok(Self {
            host: host.to_ascii_lowercase(),
            port,
        })
    }
}

/// What the server's fetch needs besides the store: the addresses it may reach although they
/// are private, the roots it trusts, and the requests in flight.
#[derive(Debug, Clone, Default)]
pub struct Fetcher {
    private: Arc<Vec<PrivateFetch>>,
    roots: TrustedRoots,
    in_flight: Arc<Mutex<HashMap<String, usize>>>,
}

impl Fetcher {
    /// The same, also allowing these private addresses.
    #[must_use]
    pub fn allowing_private(mut self, private: Vec<PrivateFetch>) -> Self {
        self.private = Arc::new(private);
        self
    }

    /// The same, trusting `roots` beside the built-in ones.
    #[must_use]
    pub fn trusting(mut self, roots: TrustedRoots) -> Self {
        self.roots = roots;
        self
    }

    /// The roots it trusts beside the built-in ones.
    pub fn roots(&self) -> &TrustedRoots {
        &self.roots
    }

    /// A place among the requests in flight for `key` (tenant and tool), held until the guard
    /// is dropped; `None` when [`IN_FLIGHT_MAX`] are in flight already.
    fn enter(&self, key: String) -> Option<InFlight> {
        let mut counts = self
            .in_flight
            .lock()
            .unwrap_or_else(PoisonError::into_inner);
        let count = counts.entry(key.clone()).or_insert(0);
        if *count >= IN_FLIGHT_MAX {
            return None;
        }
        *count += 1;
        Some(InFlight {
            counts: Arc::clone(&self.in_flight),
            key,
        })
    }

    /// A client that connects to `host` only at `addresses` (for an IP address in the URL, the
    /// address itself), follows no redirect, uses no proxy and speaks https only.
    fn client(&self, host: &str, addresses: &[SocketAddr]) -> Result<reqwest::Client, ApiError> {
        let builder = reqwest::Client::builder()
            .redirect(reqwest::redirect::Policy::none())
            .no_proxy()
            .https_only(true)
            .pool_max_idle_per_host(0)
            .user_agent(USER_AGENT_VALUE)
            .resolve_to_addrs(host, addresses);
        self.roots
            .apply(builder)
            .build()
            .map_err(|error| ApiError::internal("setting up the client of a fetch", error))
    }
}

/// One request in flight; dropping it frees its place.
struct InFlight {
    counts: Arc<Mutex<HashMap<String, usize>>>,
    key: String,
}

impl Drop for InFlight {
    fn drop(&mut self) {
        let mut counts = self.counts.lock().unwrap_or_else(PoisonError::into_inner);
        if let Some(count) = counts.get_mut(&self.key) {
            *count = count.saturating_sub(1);
            if *count == 0 {
                counts.remove(&self.key);
            }
        }
    }
}

/// `POST /api/v1/tools/{slug}/fetch`: an https request made for the tool, with the tenant's
/// secrets put in.
///
/// For the host module, with the page's session (an API key gets 403). The tool must be one the
/// app lists, and the URL's origin one its manifest's `permissions.connect` lists. The
/// placeholders `{{secret.NAME}}` (the tenant's secret setting), `{{token}}` (an identity token
/// for the user) and `{{base64:…}}` are replaced in header values, the query and a text body.
/// The host must not be a private, loopback or link-local address; redirects are not followed
/// (a 3xx is answered as it is); the exchange has 15 s; each body may be 5 MiB. At most 20
/// requests of a tool run at once for a tenant, and 300 a minute.
#[utoipa::path(post, path = "/api/v1/tools/{slug}/fetch", tag = "session", operation_id = "fetchForTool",
    params(("slug" = String, Path, description = "the tool's slug")),
    request_body(content = FetchRequest, content_type = "application/json",
        description = "the URL, method, headers and body, with placeholders; a binary body as base64"),
    responses(
        (status = 200, body = FetchResponse, description = "the upstream's answer, whatever its status, its body as base64"),
        (status = 400, description = "the body is not JSON, or was not sent as `Content-Type: application/json`", body = Problem, content_type = "application/problem+json"),
        (status = 403, description = "an API key; a session request from another origin; an origin the tool's `permissions.connect` does not list; or a private address (`NOT_ALLOWED`)", body = Problem, content_type = "application/problem+json"),
        (status = 404, description = "no tool the app lists has this slug", body = Problem, content_type = "application/problem+json"),
        (status = 413, description = "the JSON body is over 8 MiB", body = Problem, content_type = "application/problem+json"),
        (status = 422, description = "the request breaks a rule: errors[] names each place (`url`, `method`, `headers[2][1]`, `body`)", body = Problem, content_type = "application/problem+json"),
        (status = 429, description = "20 requests of the tool in flight for the tenant, or 300 in this minute (`RATE_LIMITED`)", body = Problem, content_type = "application/problem+json"),
        (status = 502, description = "the upstream does not resolve, cannot be reached, fails TLS, or answers more than 5 MiB (`BACKEND_UNAVAILABLE`)", body = Problem, content_type = "application/problem+json"),
        (status = 504, description = "no complete answer within 15 s (`TIMEOUT`)", body = Problem, content_type = "application/problem+json")),
    security(("session" = [])))]
pub async fn fetch(
    State(state): State<AppState>,
    Extension(principal): Extension<Principal>,
    PathParam(slug): PathParam,
    LargeJsonBody(body): LargeJsonBody<FETCH_JSON_LIMIT>,
) -> Result<Json<FetchResponse>, ApiError> {
    let user = principal.user()?;
    let manifest = listed_manifest(&state, &slug).await?;
    let request: FetchRequest = typed(body.value)?;
    check_request(&request)?;
    let origin = declared_origin(&manifest, &slug, &request.url)?;
    let tenant = &user.tenant_id;
    let _in_flight = take_place(&state, tenant, &slug).await?;
    let secrets = state.store.tool_secrets(tenant, &slug).await?;
    let token = if manifest.permissions.identity && uses_token(&request) {
        Some(mint(&state, user, &slug, &manifest).await?.token)
    } else {
        None
    };
    let ready = expand_request(
        &request,
        &Values {
            declarations: &manifest.settings,
            secrets: &secrets,
            token: token.as_deref(),
        },
    )?;
    let url = url::Url::parse(&ready.url)
        .map_err(|error| RuleError::invalid("url", format!("does not read as a URL: {error}")))?;
    let read_origin = url.origin().ascii_serialization();
    if read_origin != origin {
        return Err(RuleError::invalid(
            "url",
            format!("its host reads as {read_origin}, not {origin}: write the host as it is meant"),
        )
        .into());
    }
    let (host, addresses) = checked_addresses(&state.fetcher, &origin, &url).await?;
    let client = state.fetcher.client(&host, &addresses)?;
    let outgoing = outgoing_request(&client, &ready, url.clone())?;
    let started = Instant::now();
    let outcome = tokio::time::timeout(Duration::from_secs(TIMEOUT_SECS), exchange(outgoing)).await;
    let elapsed = started.elapsed();
    let logged = |outcome: &str, status: Option<u16>| {
        tracing::info!(
            request_id = crate::request_id::current().as_deref().unwrap_or("-"),
            tool = %slug,
            tenant = %tenant,
            method = %ready.method,
            origin = %origin,
            path = %url.path(),
            status = status.unwrap_or(0),
            duration_ms = u64::try_from(elapsed.as_millis()).unwrap_or(u64::MAX),
            outcome,
            "fetch for a tool"
        );
    };
    match outcome {
        Ok(Ok(answer)) => {
            logged("answered", Some(answer.status));
            Ok(Json(answer))
        }
        Ok(Err(Failure::TooLarge)) => {
            logged("too large", None);
            Err(RuleError::BackendUnavailable(format!(
                "the answer from {origin} is larger than {BODY_MAX_SHOWN}, the most the server \
                 passes on"
            ))
            .into())
        }
        Ok(Err(Failure::Undecodable { coding, error })) => {
            logged("undecodable", None);
            Err(RuleError::BackendUnavailable(format!(
                "the answer from {origin} says its body is {coding}-encoded, but it does not \
                 decode as {coding}: {error}"
            ))
            .into())
        }
        Ok(Err(Failure::Transport(error))) => {
            logged("unreachable", None);
            Err(RuleError::BackendUnavailable(format!(
                "cannot reach {origin}: {}",
                transport_error(&error)
            ))
            .into())
        }
        Err(_) => {
            logged("timed out", None);
            Err(RuleError::Timeout(format!(
                "{origin} did not answer in full within {TIMEOUT_SECS} s"
            ))
            .into())
        }
    }
}

/// The origin of `url` ([`origin_of`]), which the tool's `permissions.connect` must list.
fn declared_origin(manifest: &ToolManifest, slug: &str, url: &str) -> Result<String, ApiError> {
    let origin = origin_of(url).unwrap_or_default();
    let connect = &manifest.permissions.connect;
    if connect.contains(&origin) {
        return Ok(origin);
    }
    let declared = if connect.is_empty() {
        "lists no origin".to_owned()
    } else {
        format!("lists {}", connect.join(", "))
    };
    Err(ApiError::not_allowed(format!(
        "the tool {slug} may not fetch from {origin}: its manifest's permissions.connect {declared}"
    )))
}

/// A place among the tool's requests in flight for the tenant, and one more request counted in
/// this minute's; `RATE_LIMITED` when either is used up.
async fn take_place(state: &AppState, tenant: &str, slug: &str) -> Result<InFlight, ApiError> {
    let key = format!("fetch:{tenant}:{slug}");
    let Some(place) = state.fetcher.enter(key.clone()) else {
        return Err(RuleError::RateLimited { retry_after: 1 }.into());
    };
    let quota = state
        .store
        .count_request(
            &key,
            RateLimit {
                requests: PER_MINUTE_MAX,
                window_secs: 60,
            },
        )
        .await?;
    if !quota.allowed {
        return Err(RuleError::RateLimited {
            retry_after: quota.retry_after,
        }
        .into());
    }
    Ok(place)
}

/// The host of `url` and the addresses to connect to: what it resolves to, each public or
/// allowed by `--allow-private-fetch`.
async fn checked_addresses(
    fetcher: &Fetcher,
    origin: &str,
    url: &url::Url,
) -> Result<(String, Vec<SocketAddr>), ApiError> {
    let host = url.host_str().unwrap_or_default().to_owned();
    let port = url.port_or_known_default().unwrap_or(443);
    let addresses = lookup(&host, port).await.map_err(|error| match error {
        DestinationError::Unresolved { .. } => {
            RuleError::BackendUnavailable(format!("cannot reach {origin}: {host} does not resolve"))
        }
        other => RuleError::BackendUnavailable(format!("cannot reach {origin}: {other}")),
    })?;
    let allowed = |address: &SocketAddr| {
        fetcher
            .private
            .iter()
            .any(|allowed| allowed.allows(&host, address))
    };
    if let Some((address, why)) = first_refused(&addresses, allowed) {
        return Err(ApiError::not_allowed(format!(
            "the server does not fetch from {origin}: {host} is {why} ({}), and the server fetches \
             only from public addresses (an operator may allow one with --allow-private-fetch \
             HOST:PORT)",
            address.ip()
        )));
    }
    Ok((host, addresses))
}

/// The request to send: `ready`'s method, headers and body, to `url`.
fn outgoing_request(
    client: &reqwest::Client,
    ready: &FetchRequest,
    url: url::Url,
) -> Result<reqwest::RequestBuilder, ApiError> {
    let method = reqwest::Method::from_bytes(ready.method.as_bytes())
        .map_err(|_| RuleError::invalid("method", "is not a method"))?;
    let mut headers = HeaderMap::with_capacity(ready.headers.len());
    for (i, (name, value)) in ready.headers.iter().enumerate() {
        let name = HeaderName::from_bytes(name.as_bytes())
            .map_err(|_| RuleError::invalid(format!("headers[{i}][0]"), "is not a header name"))?;
        let value = HeaderValue::from_str(value).map_err(|_| {
            RuleError::invalid(
                format!("headers[{i}][1]"),
                "once its placeholders are replaced, it is not a header value",
            )
        })?;
        headers.append(name, value);
    }
    let mut builder = client
        .request(method, url)
        .headers(headers)
        .header(ACCEPT_ENCODING, ACCEPTED_CODINGS);
    match &ready.body {
        None => {}
        Some(FetchBody::Text(text)) => builder = builder.body(text.clone().into_bytes()),
        Some(FetchBody::Base64(encoded)) => {
            let bytes = decode_bytes(encoded)
                .map_err(|problem| RuleError::invalid("body.base64", problem))?;
            builder = builder.body(bytes);
        }
    }
    Ok(builder)
}

/// The codings the server's fetch asks for (a tool may not set `Accept-Encoding`): the answer's
/// body is decoded before the tool gets it, as a browser's `fetch` decodes a page's.
const ACCEPTED_CODINGS: &str = "gzip, br";

/// A coding of [`ACCEPTED_CODINGS`], which the server decodes.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Coding {
    Gzip,
    Brotli,
}

impl Coding {
    /// The coding of an answer with these headers, when it is one the server decodes: `None`
    /// for a plain body, and for a coding the server did not ask for, which is passed on as it
    /// came, with its `Content-Encoding`.
    fn of(headers: &HeaderMap) -> Option<Self> {
        let coding = headers.get(CONTENT_ENCODING)?.to_str().ok()?.trim();
        if coding.eq_ignore_ascii_case("gzip") || coding.eq_ignore_ascii_case("x-gzip") {
            Some(Self::Gzip)
        } else if coding.eq_ignore_ascii_case("br") {
            Some(Self::Brotli)
        } else {
            None
        }
    }
}

impl std::fmt::Display for Coding {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(match self {
            Self::Gzip => "gzip",
            Self::Brotli => "br",
        })
    }
}

/// What went wrong in an exchange.
enum Failure {
    /// The answer's body is over [`BODY_MAX_BYTES`] (once decoded).
    TooLarge,
    /// The answer's body does not decode as the coding it names.
    Undecodable { coding: Coding, error: io::Error },
    /// The request could not be made or the answer not read.
    Transport(reqwest::Error),
}

/// Sends the request and reads the answer, its body (decoded) up to [`BODY_MAX_BYTES`], stopping
/// at the first byte beyond.
async fn exchange(request: reqwest::RequestBuilder) -> Result<FetchResponse, Failure> {
    let mut response = request.send().await.map_err(Failure::Transport)?;
    let status = response.status().as_u16();
    let coding = Coding::of(response.headers());
    // A decoded body has neither the coding nor the length it came with.
    let dropped = |name: &str| {
        DROPPED_RESPONSE_HEADERS.contains(&name)
            || (coding.is_some() && (name == CONTENT_ENCODING || name == CONTENT_LENGTH))
    };
    let headers = response
        .headers()
        .iter()
        .filter(|(name, _)| !dropped(name.as_str()))
        .map(|(name, value)| {
            (
                name.as_str().to_owned(),
                String::from_utf8_lossy(value.as_bytes()).into_owned(),
            )
        })
        .collect();
    let too_large = |length: u64| usize::try_from(length).map_or(true, |n| n > BODY_MAX_BYTES);
    if response.content_length().is_some_and(too_large) {
        return Err(Failure::TooLarge);
    }
    let body = if let Some(coding) = coding {
        decoded(response, coding).await?
    } else {
        let mut body = Vec::new();
        while let Some(chunk) = response.chunk().await.map_err(Failure::Transport)? {
            if body.len() + chunk.len() > BODY_MAX_BYTES {
                return Err(Failure::TooLarge);
            }
            body.extend_from_slice(&chunk);
        }
        body
    };
    Ok(FetchResponse {
        status,
        headers,
        body: encode_bytes(&body),
    })
}

/// The body of `response` decoded from `coding`, up to [`BODY_MAX_BYTES`] decoded: a body that
/// came small and decodes larger (a decompression bomb) is stopped at the first byte beyond.
async fn decoded(mut response: reqwest::Response, coding: Coding) -> Result<Vec<u8>, Failure> {
    // No body at all (an answer to HEAD, a 204 or a 304 keeps its `Content-Encoding`) is no
    // body, not a truncated stream of the coding.
    let Some(first) = response.chunk().await.map_err(Failure::Transport)? else {
        return Ok(Vec::new());
    };
    let rest = stream::try_unfold(response, |mut response| async move {
        let chunk = response.chunk().await.map_err(io::Error::other)?;
        Ok::<_, io::Error>(chunk.map(|chunk| (chunk, response)))
    });
    let chunks = stream::once(future::ready(Ok(first))).chain(rest);
    let compressed = StreamReader::new(Box::pin(chunks));
    let limit = u64::try_from(BODY_MAX_BYTES).map_or(u64::MAX, |max| max + 1);
    let mut body = Vec::new();
    let read = match coding {
        Coding::Gzip => {
            GzipDecoder::new(compressed)
                .take(limit)
                .read_to_end(&mut body)
                .await
        }
        Coding::Brotli => {
            BrotliDecoder::new(compressed)
                .take(limit)
                .read_to_end(&mut body)
                .await
        }
    };
    match read {
        Ok(_) if body.len() > BODY_MAX_BYTES => Err(Failure::TooLarge),
        Ok(_) => Ok(body),
        // The network's failure, carried through the reader, or the coding's.
        Err(error) => match error.downcast::<reqwest::Error>() {
            Ok(transport) => Err(Failure::Transport(transport)),
            Err(error) => Err(Failure::Undecodable { coding, error }),
        },
    }
}

/// Why a request failed, in words that never hold its URL (whose query may hold a secret once
/// placeholders are replaced): reqwest's own message names the URL, so only its causes are told.
fn transport_error(error: &reqwest::Error) -> String {
    let mut source: Option<&(dyn StdError + 'static)> = error.source();
    while let Some(cause) = source {
        if let Some(io) = cause.downcast_ref::<std::io::Error>() {
            match io.kind() {
                std::io::ErrorKind::ConnectionRefused => return "connection refused".to_owned(),
                std::io::ErrorKind::ConnectionReset => return "connection reset".to_owned(),
                _ => {}
            }
        }
        source = cause.source();
    }
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

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn private_addresses_are_named_host_and_port() {
        let local: PrivateFetch = "LocalHost:8443".parse().unwrap_or_else(|e| panic!("{e}"));
        let v6: PrivateFetch = "[::1]:9".parse().unwrap_or_else(|e| panic!("{e}"));
        let ip: PrivateFetch = "10.0.0.7:443".parse().unwrap_or_else(|e| panic!("{e}"));
        let at = |text: &str| text.parse::<SocketAddr>().unwrap_or_else(|e| panic!("{e}"));
        assert!(local.allows("localhost", &at("127.0.0.1:8443")));
        assert!(!local.allows("localhost", &at("127.0.0.1:8444")));
        assert!(v6.allows("[::1]", &at("[::1]:9")));
        assert!(ip.allows("vendor.internal", &at("10.0.0.7:443")));
        assert!(!ip.allows("vendor.internal", &at("10.0.0.8:443")));
        for bad in [
            "localhost",
            "localhost:0",
            ":80",
            "a b:1",
            "[::1]",
            "[zz]:1",
            "h:99999",
        ] {
            assert!(bad.parse::<PrivateFetch>().is_err(), "{bad}");
        }
    }

    #[test]
    fn in_flight_places_are_counted_and_freed() {
        let fetcher = Fetcher::default();
        let held: Vec<InFlight> = (0..IN_FLIGHT_MAX)
            .filter_map(|_| fetcher.enter("t:a".to_owned()))
            .collect();
        assert_eq!(held.len(), IN_FLIGHT_MAX);
        assert!(fetcher.enter("t:a".to_owned()).is_none());
        assert!(fetcher.enter("t:b".to_owned()).is_some());
        drop(held);
        assert!(fetcher.enter("t:a".to_owned()).is_some());
    }
}
