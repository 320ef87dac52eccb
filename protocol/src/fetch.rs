//! The server's fetch: a request a tool asks the toolbridge server to make for it
//! (`bridge.fetch(url, init)`), so that the tenant's secret settings can go into it without
//! ever reaching the browser.
//!
//! The tool passes a URL and a `fetch`-like `init`; bridge.js sends them to the host as the
//! `fetch` call's one parameter (`{url, method, headers, body}`, the body a string or a
//! `Uint8Array`, carried by the port as it is). The host forwards it to the server's session
//! API (`POST /api/v1/tools/{slug}/fetch`) as a [`FetchRequest`], where a binary body travels as
//! base64; the server checks it against these rules and the tool's manifest, replaces the
//! placeholders (`{{secret.NAME}}`, `{{token}}`, `{{base64:…}}`), makes the request and answers
//! a [`FetchResponse`], which the host hands the tool with its body as bytes.
//!
//! The limits are stated here once and enforced by the host (before a round trip) and the server
//! (which alone decides): [`TIMEOUT_SECS`], [`BODY_MAX_BYTES`] each way, [`IN_FLIGHT_MAX`]
//! requests at once and [`PER_MINUTE_MAX`] a minute per tenant and tool.

use base64::Engine as _;
use base64::engine::general_purpose::STANDARD;
use serde::{Deserialize, Serialize};

use crate::Error;
use crate::error::Violations;

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
/// the connection rather than for itself. `accept-encoding` is the server's, as it is the
/// browser's in a page's own `fetch`: it asks for gzip or brotli and hands the body on decoded.
pub const FORBIDDEN_REQUEST_HEADERS: [&str; 11] = [
    "host",
    "accept-encoding",
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

/// The one scheme a fetched URL may have: the origins of `permissions.connect` are https ones
/// only, so plain `http://` is refused here rather than later by the origin rule.
pub const SCHEME: &str = "https";

/// Checks a [`FetchRequest`] as the tool sent it, before any placeholder is replaced, and
/// reports every rule it breaks at its path (`url`, `method`, `headers[2][0]`, `headers[2][1]`,
/// `body`):
///
/// - `url`: absolute, `https://` (plain http is refused: `permissions.connect` lists https
///   origins only), at most [`URL_MAX_CHARS`] characters, no user name or password, no fragment,
///   no spaces, control characters or backslashes, a host of ASCII letters, digits, hyphens and
///   dots (or a bracketed IPv6 address) and an optional port from 1 to 65535;
/// - `method`: one of [`METHODS`], in capitals exactly;
/// - `headers`: at most [`MAX_HEADERS`]; each name an RFC 9110 token, not one of
///   [`FORBIDDEN_REQUEST_HEADERS`] in any letter case and not repeated in another letter case;
///   each value at most [`HEADER_VALUE_MAX_CHARS`] characters with no control character other
///   than a tab (so no CR, LF or NUL);
/// - `body`: none with `GET` or `HEAD`; at most [`BODY_MAX_BYTES`] bytes (the UTF-8 length of
///   text, the decoded length of base64, which must be valid standard base64 with padding).
///
/// Where placeholders may go, and what they turn into, is [`crate::placeholders`]' business; the
/// server checks the lengths again once they are replaced.
///
/// # Errors
///
/// `INVALID_PARAMS` listing every violation.
pub fn check_request(request: &FetchRequest) -> Result<(), Error> {
    let mut errors = Violations::default();
    if let Err(problem) = check_url(&request.url) {
        errors.push("url", problem);
    }
    if !METHODS.contains(&request.method.as_str()) {
        let hint = if METHODS.contains(&request.method.to_ascii_uppercase().as_str()) {
            format!(
                "; write it in capitals: {}",
                request.method.to_ascii_uppercase()
            )
        } else {
            String::new()
        };
        errors.push(
            "method",
            format!(
                "{:?} is not a method a tool may use ({}){hint}",
                request.method,
                METHODS.join(", ")
            ),
        );
    }
    if request.headers.len() > MAX_HEADERS {
        errors.push(
            "headers",
            format!(
                "lists {} headers; at most {MAX_HEADERS} are allowed",
                request.headers.len()
            ),
        );
    }
    let mut seen: Vec<(String, usize)> = Vec::new();
    for (i, (name, value)) in request.headers.iter().enumerate() {
        let name_path = format!("headers[{i}][0]");
        let lower = name.to_ascii_lowercase();
        if let Err(problem) = check_header_name(name) {
            errors.push(name_path, problem);
        } else if FORBIDDEN_REQUEST_HEADERS.contains(&lower.as_str()) {
            errors.push(
                name_path,
                format!("{name:?} may not be set by a tool; the server sets it or leaves it out"),
            );
        } else if let Some((_, first)) = seen.iter().find(|(seen, _)| *seen == lower) {
            errors.push(
                name_path,
                format!(
                    "{name:?} repeats headers[{first}][0]; a name may appear once, in any letter \
                     case (join several values with \", \")"
                ),
            );
        } else {
            seen.push((lower, i));
        }
        if let Err(problem) = check_header_value(value) {
            errors.push(format!("headers[{i}][1]"), problem);
        }
    }
    match &request.body {
        None => {}
        Some(_) if matches!(request.method.as_str(), "GET" | "HEAD") => errors.push(
            "body",
            format!("a {} request cannot have a body", request.method),
        ),
        Some(FetchBody::Text(text)) => {
            if let Err(problem) = check_body_len(text.len()) {
                errors.push("body", problem);
            }
        }
        Some(FetchBody::Base64(encoded)) => {
            // Valid base64 of at most BODY_MAX_BYTES is at most this long: no need to decode more.
            if encoded.len() > BODY_MAX_BYTES.div_ceil(3) * 4 {
                errors.push(
                    "body",
                    format!("the body is larger than {BODY_MAX_SHOWN}; at most that may be sent"),
                );
            } else {
                match decode_bytes(encoded) {
                    Ok(bytes) => {
                        if let Err(problem) = check_body_len(bytes.len()) {
                            errors.push("body", problem);
                        }
                    }
                    Err(problem) => errors.push("body.base64", problem),
                }
            }
        }
    }
    errors.into_result(())
}

/// [`BODY_MAX_BYTES`] as messages name it.
pub const BODY_MAX_SHOWN: &str = "5 MiB (5242880 bytes)";

const _: () = assert!(BODY_MAX_BYTES == 5_242_880);

/// Whether a body of `len` bytes may be sent (or received): at most [`BODY_MAX_BYTES`].
///
/// # Errors
///
/// What is wrong, in words.
pub fn check_body_len(len: usize) -> Result<(), String> {
    if len > BODY_MAX_BYTES {
        Err(format!(
            "the body is {len} bytes, larger than {BODY_MAX_SHOWN}; at most that may be sent"
        ))
    } else {
        Ok(())
    }
}

/// Checks a header name: an RFC 9110 token (letters, digits and ``!#$%&'*+-.^_`|~``), not empty.
///
/// # Errors
///
/// What is wrong, in words.
pub fn check_header_name(name: &str) -> Result<(), String> {
    if name.is_empty() {
        return Err("a header name cannot be empty".to_owned());
    }
    if let Some(bad) = name.chars().find(|&c| !is_token_char(c)) {
        return Err(format!(
            "{name:?} is not a header name: {bad:?} may not appear in one (letters, digits and \
             !#$%&'*+-.^_`|~ only)"
        ));
    }
    Ok(())
}

/// Checks a header value: at most [`HEADER_VALUE_MAX_CHARS`] characters, no control character
/// other than a tab (no CR, LF, NUL or DEL).
///
/// # Errors
///
/// What is wrong, in words.
pub fn check_header_value(value: &str) -> Result<(), String> {
    let chars = value.chars().count();
    if chars > HEADER_VALUE_MAX_CHARS {
        return Err(format!(
            "the value is {chars} characters; at most {HEADER_VALUE_MAX_CHARS} are allowed"
        ));
    }
    if let Some(bad) = value.chars().find(|&c| c.is_ascii_control() && c != '\t') {
        return Err(format!(
            "the value contains the control character {bad:?}; CR, LF, NUL and the like may not \
             appear in a header"
        ));
    }
    Ok(())
}

/// RFC 9110 `tchar`.
fn is_token_char(c: char) -> bool {
    c.is_ascii_alphanumeric() || "!#$%&'*+-.^_`|~".contains(c)
}

/// The parts of an absolute URL that the rules look at.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct UrlParts<'a> {
    /// The scheme as written (`https`).
    pub scheme: &'a str,
    /// The host as written, with the brackets of an IPv6 address.
    pub host: &'a str,
    /// The port as written, if any.
    pub port: Option<&'a str>,
    /// Where the query starts: the byte index just after its `?`, if there is one.
    pub query_start: Option<usize>,
}

/// Splits an absolute URL (`scheme://host[:port][/path][?query][#fragment]`) into the parts the
/// rules read, without judging the scheme.
///
/// # Errors
///
/// What is wrong, in words.
pub fn split_url(url: &str) -> Result<UrlParts<'_>, String> {
    if let Some(bad) = url
        .chars()
        .find(|&c| c.is_ascii_control() || c == ' ' || c == '\\')
    {
        return Err(format!(
            "must not contain {bad:?}; percent-encode spaces and the like (%20)"
        ));
    }
    let Some((scheme, rest)) = url.split_once("://") else {
        return Err("must be an absolute URL such as https://api.example.com/prices".to_owned());
    };
    let scheme_ok = scheme
        .chars()
        .next()
        .is_some_and(|c| c.is_ascii_alphabetic())
        && scheme
            .chars()
            .all(|c| c.is_ascii_alphanumeric() || "+-.".contains(c));
    if !scheme_ok {
        return Err("must be an absolute URL such as https://api.example.com/prices".to_owned());
    }
    let end = rest.find(['/', '?', '#']).unwrap_or(rest.len());
    let authority = &rest[..end];
    if authority.contains('@') {
        return Err("must not contain a user name or password (…@)".to_owned());
    }
    let (host, port) = if authority.starts_with('[') {
        let Some(close) = authority.find(']') else {
            return Err("has an IPv6 address without its closing ]".to_owned());
        };
        let (host, after) = authority.split_at(close + 1);
        match after.strip_prefix(':') {
            Some(port) => (host, Some(port)),
            None if after.is_empty() => (host, None),
            None => return Err(format!("has {after:?} after the IPv6 address")),
        }
    } else {
        match authority.rsplit_once(':') {
            Some((host, port)) => (host, Some(port)),
            None => (authority, None),
        }
    };
    if host.is_empty() {
        return Err("has no host".to_owned());
    }
    if let Some(inner) = host.strip_prefix('[').and_then(|h| h.strip_suffix(']')) {
        if inner.parse::<std::net::Ipv6Addr>().is_err() {
            return Err(format!("{host} is not an IPv6 address"));
        }
    } else if let Some(bad) = host
        .chars()
        .find(|&c| !(c.is_ascii_alphanumeric() || c == '-' || c == '.'))
    {
        return Err(format!(
            "the host {host:?} contains {bad:?}; write a host name of ASCII letters, digits, \
             hyphens and dots (an international name in its xn-- form) or an IP address"
        ));
    }
    if let Some(port) = port {
        let valid = !port.is_empty()
            && port.len() <= 5
            && port.bytes().all(|b| b.is_ascii_digit())
            && port.parse::<u32>().is_ok_and(|n| (1..=65_535).contains(&n));
        if !valid {
            return Err(format!(
                "the port {port:?} must be a number from 1 to 65535"
            ));
        }
    }
    let after_authority = scheme.len() + 3 + end;
    let fragment = url.find('#');
    let query_start = url[after_authority..]
        .find('?')
        .map(|at| after_authority + at + 1)
        .filter(|&at| fragment.is_none_or(|fragment| at <= fragment));
    Ok(UrlParts {
        scheme,
        host,
        port,
        query_start,
    })
}

/// Checks the URL a tool asks the server to fetch; see [`check_request`].
///
/// # Errors
///
/// What is wrong, in words.
pub fn check_url(url: &str) -> Result<(), String> {
    let chars = url.chars().count();
    if chars > URL_MAX_CHARS {
        return Err(format!(
            "the URL is {chars} characters; at most {URL_MAX_CHARS} are allowed"
        ));
    }
    let parts = split_url(url)?;
    if !parts.scheme.eq_ignore_ascii_case(SCHEME) {
        return Err(if parts.scheme.eq_ignore_ascii_case("http") {
            "must be an https URL: plain http is not allowed (permissions.connect lists https \
             origins only)"
                .to_owned()
        } else {
            format!("must be an https URL (https://…), not {}://", parts.scheme)
        });
    }
    if url.contains('#') {
        return Err(
            "must not have a fragment (#…): a fragment is never sent to a server".to_owned(),
        );
    }
    Ok(())
}

/// The origin of an absolute URL as a browser writes it: `scheme://host[:port]`, the scheme and
/// host in lower case and the scheme's default port (443 for https, 80 for http) left out. `None`
/// when the URL cannot be split ([`split_url`]).
pub fn origin_of(url: &str) -> Option<String> {
    let parts = split_url(url).ok()?;
    let scheme = parts.scheme.to_ascii_lowercase();
    let host = parts.host.to_ascii_lowercase();
    let default = match scheme.as_str() {
        "https" => Some(443),
        "http" => Some(80),
        _ => None,
    };
    let port = parts
        .port
        .and_then(|port| port.parse::<u16>().ok())
        .filter(|&port| Some(port) != default);
    Some(match port {
        Some(port) => format!("{scheme}://{host}:{port}"),
        None => format!("{scheme}://{host}"),
    })
}

/// Bytes as standard base64 with padding (RFC 4648 §4), the form binary bodies travel in.
pub fn encode_bytes(bytes: &[u8]) -> String {
    STANDARD.encode(bytes)
}

/// Standard base64 with padding (RFC 4648 §4) back to bytes.
///
/// # Errors
///
/// What is wrong with the text, in words.
pub fn decode_bytes(text: &str) -> Result<Vec<u8>, String> {
    STANDARD.decode(text).map_err(|error| {
        format!("is not valid base64 (standard alphabet, with = padding): {error}")
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    fn request(url: &str, method: &str) -> FetchRequest {
        FetchRequest {
            url: url.to_owned(),
            method: method.to_owned(),
            headers: Vec::new(),
            body: None,
        }
    }

    fn paths(result: Result<(), Error>) -> Vec<String> {
        match result {
            Ok(()) => Vec::new(),
            Err(error) => error.details().iter().map(|v| v.path.clone()).collect(),
        }
    }

    #[test]
    fn a_plain_request_passes() {
        let mut ok = request("https://api.example.com/prices?sku={{secret.key}}", "POST");
        ok.headers = vec![
            ("Authorization".into(), "Bearer {{token}}".into()),
            ("X-Trace".into(), "a\tb".into()),
        ];
        ok.body = Some(FetchBody::Text("{}".into()));
        assert_eq!(check_request(&ok), Ok(()));
        assert_eq!(
            check_request(&request("https://[::1]:8443/", "GET")),
            Ok(())
        );
    }

    #[test]
    fn every_violation_is_listed_with_its_path() {
        let mut bad = request("http://api.example.com/", "get");
        bad.headers = vec![
            ("X-Key".into(), "1".into()),
            ("Bad Name".into(), "2".into()),
            ("x-key".into(), "line\r\nInjected: 1".into()),
            ("Cookie".into(), "a=b".into()),
            ("Accept-Encoding".into(), "gzip".into()),
        ];
        bad.body = Some(FetchBody::Base64("not base64!".into()));
        assert_eq!(
            paths(check_request(&bad)),
            [
                "url",
                "method",
                "headers[1][0]",
                "headers[2][0]",
                "headers[2][1]",
                "headers[3][0]",
                "headers[4][0]",
                "body.base64"
            ]
        );
        let mut get = request("https://api.example.com/", "GET");
        get.body = Some(FetchBody::Text(String::new()));
        assert_eq!(paths(check_request(&get)), ["body"]);
    }

    #[test]
    fn urls_are_refused_with_a_reason() {
        for (url, words) in [
            ("https://user:pw@api.example.com/", "user name"),
            ("https://api.example.com/#top", "fragment"),
            ("ftp://api.example.com/", "https"),
            ("http://api.example.com/", "plain http"),
            ("/relative", "absolute"),
            ("https://api.example.com:0/", "port"),
            ("https://api.example.com:99999/", "port"),
            ("https://exa mple.com/", "' '"),
            ("https://ex%41mple.com/", "'%'"),
            ("https:///path", "no host"),
            ("https://bücher.example/", "xn--"),
            ("https://a.example\\@b.example/", "'\\\\'"),
        ] {
            let problem = check_url(url).err().unwrap_or_default();
            assert!(problem.contains(words), "{url}: {problem}");
        }
        let long = format!("https://a.example/{}", "x".repeat(URL_MAX_CHARS));
        assert!(check_url(&long).is_err());
    }

    #[test]
    fn bodies_are_measured_as_sent() {
        let mut post = request("https://api.example.com/", "POST");
        post.body = Some(FetchBody::Base64(encode_bytes(&vec![7; BODY_MAX_BYTES])));
        assert_eq!(check_request(&post), Ok(()));
        post.body = Some(FetchBody::Base64(encode_bytes(&vec![
            7;
            BODY_MAX_BYTES + 1
        ])));
        assert_eq!(paths(check_request(&post)), ["body"]);
        post.body = Some(FetchBody::Text("é".repeat(BODY_MAX_BYTES / 2 + 1)));
        assert_eq!(paths(check_request(&post)), ["body"]);
    }

    #[test]
    fn too_many_headers_and_long_values() {
        let mut many = request("https://api.example.com/", "GET");
        many.headers = (0..=MAX_HEADERS)
            .map(|i| (format!("X-H{i}"), "v".to_owned()))
            .collect();
        assert_eq!(paths(check_request(&many)), ["headers"]);
        many.headers = vec![("X-Long".into(), "v".repeat(HEADER_VALUE_MAX_CHARS + 1))];
        assert_eq!(paths(check_request(&many)), ["headers[0][1]"]);
    }

    #[test]
    fn origins_are_normalised() {
        assert_eq!(
            origin_of("HTTPS://API.Example.com:443/a?b").as_deref(),
            Some("https://api.example.com")
        );
        assert_eq!(
            origin_of("https://api.example.com:8443").as_deref(),
            Some("https://api.example.com:8443")
        );
        assert_eq!(
            origin_of("http://127.0.0.1:80/").as_deref(),
            Some("http://127.0.0.1")
        );
        assert_eq!(
            origin_of("https://[::1]:9/").as_deref(),
            Some("https://[::1]:9")
        );
        assert_eq!(origin_of("nonsense"), None);
    }

    #[test]
    fn the_query_is_found_before_the_fragment() {
        let url = "https://a.example/p?q=1#f?g";
        let parts = split_url(url).ok();
        assert_eq!(parts.and_then(|p| p.query_start), Some(20));
        assert_eq!(
            split_url("https://a.example/p#f?g")
                .ok()
                .and_then(|p| p.query_start),
            None
        );
        assert_eq!(
            split_url("https://a.example?x")
                .ok()
                .and_then(|p| p.query_start),
            Some(18)
        );
    }

    #[test]
    fn base64_is_standard_with_padding() {
        assert_eq!(encode_bytes(b"user:pw"), "dXNlcjpwdw==");
        assert_eq!(decode_bytes("dXNlcjpwdw==").ok(), Some(b"user:pw".to_vec()));
        assert!(decode_bytes("dXNlcjpwdw").is_err());
        assert!(decode_bytes("dXNl-jpw").is_err());
    }

    proptest! {
        #[test]
        fn base64_round_trips(bytes in proptest::collection::vec(any::<u8>(), 0..512)) {
            prop_assert_eq!(decode_bytes(&encode_bytes(&bytes)).ok(), Some(bytes));
        }

        #[test]
        fn checking_never_panics(
            url in ".{0,80}",
            method in "[A-Za-z]{0,8}",
            headers in proptest::collection::vec((".{0,12}", ".{0,12}"), 0..4),
            body in proptest::option::of(".{0,40}"),
        ) {
            let request = FetchRequest {
                url: url.clone(),
                method,
                headers,
                body: body.map(FetchBody::Base64),
            };
            let _ = check_request(&request);
            let _ = origin_of(&url);
        }
    }
}
