//! Webhooks: the events toolbridge pushes to an integrator's endpoint, the body of each `POST`,
//! how it is signed, and the rules an endpoint's URL and event types follow (the store and the
//! server state them from here).
//!
//! A delivery is a `POST` of a [`WebhookPayload`] as JSON, with the headers [`EVENT_ID_HEADER`]
//! (the event's id, the same on every attempt and on a redelivery) and [`SIGNATURE_HEADER`]:
//! `t=<unix seconds>,v1=<hex HMAC-SHA256 of "<t>.<body>" with the endpoint's secret>`. A 2xx
//! answer counts as delivered; anything else is tried again, [`MAX_ATTEMPTS`] times in all.

use std::fmt;
use std::net::{IpAddr, Ipv4Addr, Ipv6Addr};

use serde::{Deserialize, Serialize};

use crate::error::Violation;
use crate::quote::QuoteDto;

/// The header that carries the event's id.
pub const EVENT_ID_HEADER: &str = "Toolbridge-Event-Id";
/// The header that carries the signature: `t=<unix seconds>,v1=<hex HMAC-SHA256>`.
pub const SIGNATURE_HEADER: &str = "Toolbridge-Signature";
/// Every event id starts with this.
pub const EVENT_ID_START: &str = "evt_";
/// Every endpoint's signing secret starts with this (then 32 random bytes as hex).
pub const SECRET_START: &str = "whsec_";
/// Attempts at one delivery before it is marked failed: the first and 3 retries (SPEC.md: a
/// failed delivery is retried automatically up to 3 times).
pub const MAX_ATTEMPTS: u32 = 4;
/// Longest endpoint URL, in characters.
pub const URL_MAX_CHARS: usize = 2048;

/// What happened, as an endpoint subscribes to it. The set is designed to grow: receivers should
/// ignore types they do not know.
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize, Deserialize)]
pub enum WebhookEventType {
    /// A quote was created (`quote.created`).
    #[serde(rename = "quote.created")]
    QuoteCreated,
    /// A Draft quote's lines or header were saved (`quote.saved`).
    #[serde(rename = "quote.saved")]
    QuoteSaved,
    /// A quote was sent, and is now locked (`quote.sent`).
    #[serde(rename = "quote.sent")]
    QuoteSent,
}

impl WebhookEventType {
    /// Every event type, in a fixed order.
    pub const ALL: [WebhookEventType; 3] = [
        WebhookEventType::QuoteCreated,
        WebhookEventType::QuoteSaved,
        WebhookEventType::QuoteSent,
    ];

    /// The token, e.g. `quote.sent`.
    pub fn as_str(self) -> &'static str {
        match self {
            WebhookEventType::QuoteCreated => "quote.created",
            WebhookEventType::QuoteSaved => "quote.saved",
            WebhookEventType::QuoteSent => "quote.sent",
        }
    }

    /// Parses a token (exact match).
    pub fn parse(token: &str) -> Option<WebhookEventType> {
        Self::ALL.into_iter().find(|kind| kind.as_str() == token)
    }
}

impl fmt::Display for WebhookEventType {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

/// The body of every delivery.
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct WebhookPayload {
    /// The event's id, `evt_…`: the same on every attempt and on a redelivery, so that a
    /// receiver can drop an event it has already handled.
    pub id: String,
    /// What happened.
    #[serde(rename = "type")]
    pub event_type: WebhookEventType,
    /// When it happened: RFC 3339, UTC, to the second.
    pub created: String,
    /// The tenant it happened in.
    pub tenant_id: String,
    /// What it is about.
    pub data: WebhookData,
}

/// The `data` of a [`WebhookPayload`].
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct WebhookData {
    /// The quote after the change, as `GET /api/v1/quotes/{id}` answers it.
    pub quote: QuoteDto,
}

/// Where a delivery stands.
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum WebhookDeliveryStatus {
    /// Not delivered yet: its next attempt is due at a time it names.
    Pending,
    /// A 2xx answer came.
    Delivered,
    /// Every attempt failed.
    Failed,
}

impl WebhookDeliveryStatus {
    /// The token: `pending`, `delivered` or `failed`.
    pub fn as_str(self) -> &'static str {
        match self {
            WebhookDeliveryStatus::Pending => "pending",
            WebhookDeliveryStatus::Delivered => "delivered",
            WebhookDeliveryStatus::Failed => "failed",
        }
    }

    /// Parses a token (exact match).
    pub fn parse(token: &str) -> Option<WebhookDeliveryStatus> {
        [
            WebhookDeliveryStatus::Pending,
            WebhookDeliveryStatus::Delivered,
            WebhookDeliveryStatus::Failed,
        ]
        .into_iter()
        .find(|status| status.as_str() == token)
    }
}

impl fmt::Display for WebhookDeliveryStatus {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

/// An endpoint's URL as read by [`parse_url`]: what the server needs to check where it points
/// (its host, resolved, must not be a private address unless allowed).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct WebhookUrl {
    /// `http` or `https`, lower case.
    pub scheme: &'static str,
    /// The host as written (lower case), an IPv6 literal without its brackets.
    pub host: String,
    /// The port: as written, or the scheme's (80, 443).
    pub port: u16,
}

/// Reads an endpoint's URL: `http://` or `https://` (either case), a host, an optional port, and
/// then anything; at most [`URL_MAX_CHARS`] characters, no spaces or control characters, no
/// user name or password. What is wrong, in words, when it is not.
pub fn parse_url(url: &str) -> Result<WebhookUrl, String> {
    if url.is_empty() {
        return Err("is required".to_owned());
    }
    if url.chars().count() > URL_MAX_CHARS {
        return Err(format!("must be at most {URL_MAX_CHARS} characters"));
    }
    if url.chars().any(|c| c.is_whitespace() || c.is_control()) {
        return Err("must not contain spaces or control characters".to_owned());
    }
    let (scheme, rest) = url
        .split_once("://")
        .ok_or_else(|| "must be an http:// or https:// URL".to_owned())?;
    let (scheme, default_port) = if scheme.eq_ignore_ascii_case("https") {
        ("https", 443)
    } else if scheme.eq_ignore_ascii_case("http") {
        ("http", 80)
    } else {
        return Err("must be an http:// or https:// URL".to_owned());
    };
    let authority = &rest[..rest.find(['/', '?', '#']).unwrap_or(rest.len())];
    if authority.contains('@') {
        return Err("must not carry a user name or password".to_owned());
    }
    let (host, port) = if let Some(literal) = authority.strip_prefix('[') {
        let (host, after) = literal
            .split_once(']')
            .ok_or_else(|| "has an IPv6 address without its closing ]".to_owned())?;
        let valid = !host.is_empty() && host.chars().all(|c| c.is_ascii_hexdigit() || c == ':');
        if !valid {
            return Err(format!("[{host}] is not an IPv6 address"));
        }
        match after {
            "" => (host, None),
            _ => match after.strip_prefix(':') {
                Some(port) => (host, Some(port)),
                None => return Err("must have a host".to_owned()),
            },
        }
    } else {
        let (host, port) = match authority.rsplit_once(':') {
            Some((host, port)) => (host, Some(port)),
            None => (authority, None),
        };
        let valid_name = host
            .chars()
            .all(|c| c.is_ascii_alphanumeric() || matches!(c, '-' | '.' | '_'));
        if !valid_name {
            return Err(format!("{host:?} is not a host name"));
        }
        (host, port)
    };
    if host.is_empty() {
        return Err("must have a host".to_owned());
    }
    let port = match port {
        None => default_port,
        Some(port) => match port.parse::<u16>() {
            Ok(number) if number > 0 && port.bytes().all(|b| b.is_ascii_digit()) => number,
            _ => return Err(format!("{port:?} is not a port (1 to 65535)")),
        },
    };
    Ok(WebhookUrl {
        scheme,
        host: host.to_ascii_lowercase(),
        port,
    })
}

/// The event types of an endpoint, checked: at least one, each known, none twice. Every problem
/// is a violation at `eventTypes` or `eventTypes[i]`.
pub fn checked_event_types<S: AsRef<str>>(
    tokens: &[S],
) -> Result<Vec<WebhookEventType>, Vec<Violation>> {
    if tokens.is_empty() {
        return Err(vec![Violation::new(
            "eventTypes",
            format!(
                "an endpoint needs at least one event type: {}",
                known_event_types()
            ),
        )]);
    }
    let mut violations = Vec::new();
    let mut types = Vec::with_capacity(tokens.len());
    for (i, token) in tokens.iter().enumerate() {
        let token = token.as_ref();
        match WebhookEventType::parse(token) {
            Some(kind) if types.contains(&kind) => violations.push(Violation::new(
                format!("eventTypes[{i}]"),
                format!("{token} is listed twice"),
            )),
            Some(kind) => types.push(kind),
            None => violations.push(Violation::new(
                format!("eventTypes[{i}]"),
                format!(
                    "{token:?} is not an event type; known: {}",
                    known_event_types()
                ),
            )),
        }
    }
    if violations.is_empty() {
        Ok(types)
    } else {
        Err(violations)
    }
}

/// The known event types, `, ` between them.
fn known_event_types() -> String {
    WebhookEventType::ALL
        .map(WebhookEventType::as_str)
        .join(", ")
}

/// The violation at `url` of a URL [`parse_url`] refuses, if it does.
pub fn url_violation(url: &str) -> Option<Violation> {
    parse_url(url)
        .err()
        .map(|problem| Violation::new("url", problem))
}

/// Why toolbridge will not send a webhook to `ip`, if it will not: an address inside a network
/// (loopback, private, link-local, carrier-grade NAT, unique-local) or one that names no single
/// host (unspecified, broadcast, multicast). An IPv4 address written as IPv6 (`::ffff:10.0.0.1`)
/// is judged as the IPv4 address it is. Servers started with `--allow-private-webhooks` skip this.
pub fn non_public_address(ip: IpAddr) -> Option<&'static str> {
    match ip {
        IpAddr::V4(v4) => non_public_v4(v4),
        IpAddr::V6(v6) => match v6.to_ipv4_mapped() {
            Some(v4) => non_public_v4(v4),
            None => non_public_v6(v6),
        },
    }
}

fn non_public_v4(ip: Ipv4Addr) -> Option<&'static str> {
    let [a, b, ..] = ip.octets();
    if ip.is_loopback() {
        Some("a loopback address")
    } else if ip.is_private() {
        Some("a private address")
    } else if ip.is_link_local() {
        Some("a link-local address")
    } else if a == 100 && (64..128).contains(&b) {
        Some("a carrier-grade NAT address")
    } else if ip.is_unspecified() || a == 0 {
        Some("an unspecified address")
    } else if ip.is_broadcast() {
        Some("the broadcast address")
    } else if ip.is_multicast() || a >= 240 {
        Some("a multicast or reserved address")
    } else {
        None
    }
}

fn non_public_v6(ip: Ipv6Addr) -> Option<&'static str> {
    let first = ip.segments()[0];
    if ip.is_loopback() {
        Some("a loopback address")
    } else if ip.is_unspecified() {
        Some("an unspecified address")
    } else if first & 0xfe00 == 0xfc00 {
        Some("a unique-local (private) address")
    } else if first & 0xffc0 == 0xfe80 {
        Some("a link-local address")
    } else if ip.is_multicast() {
        Some("a multicast address")
    } else {
        None
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn event_types_read_and_print_their_tokens() {
        for kind in WebhookEventType::ALL {
            assert_eq!(WebhookEventType::parse(kind.as_str()), Some(kind));
            assert_eq!(
                serde_json::to_value(kind).unwrap_or_default(),
                kind.as_str()
            );
        }
        assert_eq!(WebhookEventType::parse("Quote.Created"), None);
        for status in ["pending", "delivered", "failed"] {
            assert_eq!(
                WebhookDeliveryStatus::parse(status).map(WebhookDeliveryStatus::as_str),
                Some(status)
            );
        }
    }

    #[test]
    fn a_url_is_http_or_https_with_a_host() {
        let ok = |url: &str| parse_url(url).unwrap_or_else(|e| panic!("{url}: {e}"));
        let url = ok("https://Example.com/hooks?x=1");
        assert_eq!(
            (url.scheme, url.host.as_str(), url.port),
            ("https", "example.com", 443)
        );
        let url = ok("HTTP://127.0.0.1:8080");
        assert_eq!(
            (url.scheme, url.host.as_str(), url.port),
            ("http", "127.0.0.1", 8080)
        );
        let url = ok("http://[::1]:9/x");
        assert_eq!((url.host.as_str(), url.port), ("::1", 9));
        for bad in [
            "",
            "example.com/hook",
            "ftp://example.com",
            "https://",
            "https:///path",
            "https://:443/",
            "https://user:pw@example.com/",
            "https://example.com:0/",
            "https://example.com:99999/",
            "https://example.com:http/",
            "https://example.com:+80/",
            "https://a:b:80/",
            "https://exa mple.com/",
            "https://[::1/",
            "https://[zz]/",
            "javascript://alert(1)",
        ] {
            assert!(parse_url(bad).is_err(), "{bad:?} was taken");
        }
        let long = format!("https://example.com/{}", "a".repeat(URL_MAX_CHARS));
        assert!(parse_url(&long).is_err());
        let longest = format!("https://example.com/{}", "a".repeat(URL_MAX_CHARS - 20));
        assert!(parse_url(&longest).is_ok());
    }

    #[test]
    fn event_types_are_known_and_listed_once() {
        assert_eq!(
            checked_event_types(&["quote.sent", "quote.created"]),
            Ok(vec![
                WebhookEventType::QuoteSent,
                WebhookEventType::QuoteCreated
            ])
        );
        let paths = |tokens: &[&str]| -> Vec<String> {
            checked_event_types(tokens)
                .err()
                .unwrap_or_default()
                .into_iter()
                .map(|v| v.path)
                .collect()
        };
        assert_eq!(paths(&[]), ["eventTypes"]);
        assert_eq!(
            paths(&["quote.sent", "quote.deleted", "quote.sent"]),
            ["eventTypes[1]", "eventTypes[2]"]
        );
    }

    #[test]
    fn a_payload_reads_as_receivers_expect() {
        use crate::quote::{QuoteHeader, QuoteStatus, QuoteType};
        let header = QuoteHeader {
            id: "q1".to_owned(),
            reference: "Q-1001".to_owned(),
            customer_id: "c1".to_owned(),
            customer_name: "Ada".to_owned(),
            job_id: None,
            title: None,
            quote_type: QuoteType::Quote,
            status: QuoteStatus::Draft,
            date: "2026-11-26".to_owned(),
            expiry_days: 30,
        };
        let payload = WebhookPayload {
            id: "evt_1".to_owned(),
            event_type: WebhookEventType::QuoteSent,
            created: "2026-11-26T08:00:00Z".to_owned(),
            tenant_id: "t1".to_owned(),
            data: WebhookData {
                quote: QuoteDto::new(header, Vec::new(), std::collections::BTreeMap::new()),
            },
        };
        let json = serde_json::to_value(&payload).unwrap_or_default();
        assert_eq!(json["id"], "evt_1");
        assert_eq!(json["type"], "quote.sent");
        assert_eq!(json["created"], "2026-11-26T08:00:00Z");
        assert_eq!(json["tenantId"], "t1");
        assert_eq!(json["data"]["quote"]["ref"], "Q-1001");
        assert_eq!(
            serde_json::from_value::<WebhookPayload>(json).ok(),
            Some(payload)
        );
    }

    #[test]
    fn addresses_inside_a_network_are_not_public() {
        let refused = [
            "127.0.0.1",
            "127.8.9.1",
            "10.1.2.3",
            "172.16.0.1",
            "172.31.255.255",
            "192.168.1.1",
            "169.254.169.254",
            "100.64.0.1",
            "0.0.0.0",
            "255.255.255.255",
            "224.0.0.1",
            "::1",
            "::",
            "fc00::1",
            "fd12:3456::1",
            "fe80::1",
            "ff02::1",
            "::ffff:127.0.0.1",
            "::ffff:10.0.0.1",
        ];
        for address in refused {
            let ip: IpAddr = address.parse().unwrap_or(IpAddr::V4(Ipv4Addr::UNSPECIFIED));
            assert!(non_public_address(ip).is_some(), "{address} passed");
        }
        let allowed = [
            "93.184.216.34",
            "172.32.0.1",
            "100.128.0.1",
            "8.8.8.8",
            "2606:4700::1111",
        ];
        for address in allowed {
            let ip: IpAddr = address.parse().unwrap_or(IpAddr::V4(Ipv4Addr::LOCALHOST));
            assert_eq!(non_public_address(ip), None, "{address} refused");
        }
    }
}
