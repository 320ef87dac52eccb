//! The server's fetch: a request a tool asks the toolbridge server to make for it
//! (`bridge.fetch(url, init)`), so that the tenant's secret settings can go into it without
//! ever reaching the browser.
//!
//! The tool passes a URL and a `fetch`-like `init`; bridge.js sends them to the host as a
//! [`ToolRequest`] whose body is text or bytes. The host forwards it to the server's session
//! API (`POST /api/v1/tools/{slug}/fetch`) as a [`FetchRequest`], where a binary body travels as
//! base64; the server checks it against these rules and the tool's manifest, replaces the
//! placeholders (`{{secret.NAME}}`, `{{token}}`, `{{base64:…}}`), makes the request and answers
//! a [`FetchResponse`], which the host hands the tool with its body as bytes.
//!
//! The limits are stated here once and enforced by the host (before a round trip) and the server
//! (which alone decides): [`TIMEOUT_SECS`], [`BODY_MAX_BYTES`] each way, [`IN_FLIGHT_MAX`]
//! requests at once and [`PER_MINUTE_MAX`] a minute per tenant and tool.

use serde::{Deserialize, Serialize};

/// The longest the server waits for the upstream's whole answer, in seconds.
pub const TIMEOUT_SECS: u64 = 15;

/// The largest body, in bytes, each way: 5 MiB.
pub const BODY_MAX_BYTES: usize = 5 * 1024 * 1024;

/// Most requests of one tool in one tenant the server makes at once.
pub const IN_FLIGHT_MAX: usize = 20;

/// Most requests of one tool in one tenant a minute.
pub const PER_MINUTE_MAX: u32 = 300;

/// Longest URL, in characters.
pub const URL_MAX_CHARS: usize = 2048;

/// Most request headers.
pub const MAX_HEADERS: usize = 50;

/// Longest header value, in characters (after nothing is replaced).
pub const HEADER_VALUE_MAX_CHARS: usize = 8192;

/// The methods a tool may use.
pub const METHODS: [&str; 7] = ["GET", "HEAD", "POST", "PUT", "PATCH", "DELETE", "OPTIONS"];

/// Request headers a tool may not set: the server sets them, or they would let a tool speak for
/// the connection rather than for itself.
pub const FORBIDDEN_REQUEST_HEADERS: [&str; 10] = [
    "host",
    "content-length",
    "connection",
    "transfer-encoding",
    "upgrade",
    "te",
    "trailer",
    "keep-alive",
    "proxy-authorization",
    "cookie",
];

/// Response headers the server does not pass on to the tool: hop-by-hop ones, and cookies the
/// tool could do nothing with.
pub const DROPPED_RESPONSE_HEADERS: [&str; 8] = [
    "connection",
    "transfer-encoding",
    "keep-alive",
    "upgrade",
    "trailer",
    "te",
    "set-cookie",
    "proxy-authenticate",
];

/// A request body on the session API: text (in which placeholders are replaced) or bytes
/// (sent exactly as they are), as `{"text": "…"}` or `{"base64": "…"}`.
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase", deny_unknown_fields)]
pub enum FetchBody {
    /// A string body, as the tool passed it.
    Text(String),
    /// A binary body (`ArrayBuffer`, `Blob`, typed array), base64 with padding (RFC 4648 §4).
    Base64(String),
}

/// What the host asks the server to fetch for a tool (`POST /api/v1/tools/{slug}/fetch`).
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct FetchRequest {
    /// An absolute `https://` URL whose origin the tool's `permissions.connect` lists.
    /// Placeholders may appear in its query only.
    pub url: String,
    /// One of [`METHODS`], in capitals.
    pub method: String,
    /// Name and value pairs, in order; names are not repeated across letter case.
    #[serde(default)]
    pub headers: Vec<(String, String)>,
    /// The body, if any (not with `GET` or `HEAD`).
    #[serde(default)]
    pub body: Option<FetchBody>,
}

/// The upstream's answer, as the server passes it on.
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct FetchResponse {
    /// The upstream's status (a redirect is answered as it is, never followed).
    pub status: u16,
    /// The upstream's headers, in order, without [`DROPPED_RESPONSE_HEADERS`].
    pub headers: Vec<(String, String)>,
    /// The body, base64 with padding.
    pub body: String,
}
