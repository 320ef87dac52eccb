//! Who is on the other end of a request: its client's address, computed once per request by
//! [`middleware`] and handed on as a [`ClientAddr`] request extension.
//!
//! It is the TCP peer's address, unless the peer is a proxy this server was told to trust
//! (`toolbridge serve --trust-proxy CIDR`, [`TrustedProxies`]). Then it comes from the
//! `X-Forwarded-For` header (or, without one, from the `for=` parameters of RFC 7239's
//! `Forwarded`): each proxy appends the address it heard from, so reading from the right, the
//! first address that is not itself a trusted proxy is the client's. Entries further left were
//! written by the client or by proxies nobody vouches for, and are never believed. If every entry
//! is a trusted proxy, the left-most is the best known. From a peer that is not trusted the
//! headers are ignored: anyone can send them.

use std::fmt;
use std::net::{IpAddr, SocketAddr};
use std::str::FromStr;
use std::sync::Arc;

use axum::extract::{ConnectInfo, Request, State};
use axum::http::HeaderMap;
use axum::middleware::Next;
use axum::response::Response;
use ipnet::IpNet;

use crate::app::AppState;

/// The header proxies append the address they heard from to.
const X_FORWARDED_FOR: &str = "x-forwarded-for";
/// RFC 7239's header, read when there is no [`X_FORWARDED_FOR`].
const FORWARDED: &str = "forwarded";

/// The request's client address, as [`middleware`] worked it out. Absent when the server was
/// started without the peer's address (the in-process test servers).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct ClientAddr(pub IpAddr);

impl fmt::Display for ClientAddr {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        self.0.fmt(f)
    }
}

/// The networks whose forwarding headers are believed (`--trust-proxy`); empty by default, so
/// that no header can change a client's address.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct TrustedProxies {
    networks: Arc<[IpNet]>,
}

impl TrustedProxies {
    /// Trusts the proxies in `networks`.
    pub fn new(networks: impl IntoIterator<Item = IpNet>) -> Self {
        Self {
            networks: networks.into_iter().collect(),
        }
    }

    /// Reads one `--trust-proxy` value: a network in CIDR notation (`10.0.0.0/8`,
    /// `fd00::/8`) or a bare address, which stands for itself alone (/32 or /128). What is
    /// wrong, in words, when it is neither.
    pub fn parse_network(text: &str) -> Result<IpNet, String> {
        let text = text.trim();
        if text.is_empty() {
            return Err("is empty; give a network such as 10.0.0.0/8 or an address".to_owned());
        }
        if let Ok(network) = IpNet::from_str(text) {
            // `10.1.2.3/8` names a host inside 10.0.0.0/8; take it as that network.
            return Ok(network.trunc());
        }
        if let Ok(address) = IpAddr::from_str(text) {
            return Ok(IpNet::from(address));
        }
        match text.split_once('/') {
            Some((address, prefix)) if IpAddr::from_str(address).is_ok() => Err(format!(
                "/{prefix} is not a prefix length (0 to 32 for IPv4, 0 to 128 for IPv6)"
            )),
            Some((address, _)) => Err(format!("{address:?} is not an IP address")),
            None => Err(format!(
                "{text:?} is not an IP address or a network such as 10.0.0.0/8"
            )),
        }
    }

    /// Whether no proxy is trusted.
    pub fn is_empty(&self) -> bool {
        self.networks.is_empty()
    }

    /// The trusted networks.
    pub fn networks(&self) -> &[IpNet] {
        &self.networks
    }

    /// Whether `address` is one of the trusted proxies.
    pub fn contains(&self, address: IpAddr) -> bool {
        let address = address.to_canonical();
        self.networks
            .iter()
            .any(|network| network.contains(&address))
    }

    /// The client's address of a request that came from `peer` with `headers`: `peer`, unless
    /// it is trusted; then the right-most forwarded address that is not trusted (the left-most
    /// if all are). A malformed or obfuscated entry (`unknown`, `_hidden`) ends the walk: what
    /// stands left of it cannot be told apart from what a client wrote, so the last trusted hop
    /// is the answer.
    pub fn client_of(&self, peer: IpAddr, headers: &HeaderMap) -> IpAddr {
        let peer = peer.to_canonical();
        if self.networks.is_empty() || !self.contains(peer) {
            return peer;
        }
        let mut nearest = peer;
        let mut walk = |entry: &str| match parse_entry(entry) {
            Some(address) if self.contains(address) => {
                nearest = address;
                Walk::On
            }
            Some(address) => Walk::Found(address),
            None => Walk::Stop,
        };
        if headers.contains_key(X_FORWARDED_FOR) {
            let values: Vec<&str> = headers
                .get_all(X_FORWARDED_FOR)
                .iter()
                .map(|value| value.to_str().unwrap_or(","))
                .collect();
            // Several headers read as one list, in order: the last header's last entry first.
            for entry in values.iter().rev().flat_map(|value| value.rsplit(',')) {
                match walk(entry) {
                    Walk::On => {}
                    Walk::Found(address) => return address,
                    Walk::Stop => break,
                }
            }
        } else if headers.contains_key(FORWARDED) {
            let values: Vec<&str> = headers
                .get_all(FORWARDED)
                .iter()
                .map(|value| value.to_str().unwrap_or(","))
                .collect();
            for element in values.iter().rev().flat_map(|value| value.rsplit(',')) {
                let step = match forwarded_for(element) {
                    Some(node) => walk(node),
                    None => Walk::Stop,
                };
                match step {
                    Walk::On => {}
                    Walk::Found(address) => return address,
                    Walk::Stop => break,
                }
            }
        }
        nearest
    }
}

/// What one entry of a forwarding chain means to the walk from the right.
enum Walk {
    /// A trusted proxy: read the next entry to the left.
    On,
    /// The client.
    Found(IpAddr),
    /// Unreadable: stop.
    Stop,
}

/// One address of a forwarding list: `203.0.113.7`, `2001:db8::1`, or with a port,
/// `203.0.113.7:8080` or `[2001:db8::1]:8080` (some proxies add it), quotes allowed around it
/// (RFC 7239 quotes IPv6).
fn parse_entry(entry: &str) -> Option<IpAddr> {
    let entry = entry.trim();
    let entry = entry
        .strip_prefix('"')
        .and_then(|inner| inner.strip_suffix('"'))
        .unwrap_or(entry);
    if let Ok(address) = IpAddr::from_str(entry) {
        return Some(address.to_canonical());
    }
    if let Ok(socket) = SocketAddr::from_str(entry) {
        return Some(socket.ip().to_canonical());
    }
    // `[2001:db8::1]` without a port.
    let bracketed = entry.strip_prefix('[')?.strip_suffix(']')?;
    bracketed
        .parse::<std::net::Ipv6Addr>()
        .ok()
        .map(|address| IpAddr::V6(address).to_canonical())
}

/// The `for=` value of one element of a `Forwarded` header (`for=192.0.2.60;proto=http`).
fn forwarded_for(element: &str) -> Option<&str> {
    element.split(';').find_map(|pair| {
        let (name, value) = pair.split_once('=')?;
        name.trim()
            .eq_ignore_ascii_case("for")
            .then_some(value.trim())
    })
}

/// Middleware: works out the request's [`ClientAddr`] from the TCP peer
/// ([`ConnectInfo`]) and, when the peer is a trusted proxy, the forwarding headers.
pub async fn middleware(
    State(state): State<AppState>,
    mut request: Request,
    next: Next,
) -> Response {
    let peer = request
        .extensions()
        .get::<ConnectInfo<SocketAddr>>()
        .map(|ConnectInfo(peer)| peer.ip());
    if let Some(peer) = peer {
        let client = state.trusted_proxies.client_of(peer, request.headers());
        request.extensions_mut().insert(ClientAddr(client));
    }
    next.run(request).await
}

#[cfg(test)]
mod tests {
    use super::*;

    fn trusting(networks: &[&str]) -> TrustedProxies {
        TrustedProxies::new(
            networks
                .iter()
                .map(|network| TrustedProxies::parse_network(network).unwrap()),
        )
    }

    fn headers(pairs: &[(&str, &str)]) -> HeaderMap {
        let mut headers = HeaderMap::new();
        for (name, value) in pairs {
            headers.append(
                axum::http::HeaderName::from_bytes(name.as_bytes()).unwrap(),
                value.parse().unwrap(),
            );
        }
        headers
    }

    fn ip(text: &str) -> IpAddr {
        text.parse().unwrap()
    }

    #[test]
    fn networks_read_as_cidr_or_a_bare_address() {
        assert_eq!(
            TrustedProxies::parse_network("10.0.0.0/8").unwrap(),
            "10.0.0.0/8".parse::<IpNet>().unwrap()
        );
        assert_eq!(
            TrustedProxies::parse_network(" 10.1.2.3/8 ").unwrap(),
            "10.0.0.0/8".parse::<IpNet>().unwrap()
        );
        assert_eq!(
            TrustedProxies::parse_network("127.0.0.1").unwrap(),
            "127.0.0.1/32".parse::<IpNet>().unwrap()
        );
        assert_eq!(
            TrustedProxies::parse_network("::1").unwrap(),
            "::1/128".parse::<IpNet>().unwrap()
        );
        let bad_prefix = TrustedProxies::parse_network("10.0.0.0/33").unwrap_err();
        assert!(
            bad_prefix.contains("/33 is not a prefix length"),
            "{bad_prefix}"
        );
        let bad_address = TrustedProxies::parse_network("10.0.0/8").unwrap_err();
        assert!(
            bad_address.contains("\"10.0.0\" is not an IP address"),
            "{bad_address}"
        );
        let word = TrustedProxies::parse_network("proxy.internal").unwrap_err();
        assert!(word.contains("is not an IP address or a network"), "{word}");
        assert!(TrustedProxies::parse_network(" ").is_err());
    }

    #[test]
    fn an_untrusted_peer_is_the_client_whatever_it_forwards() {
        let forged = headers(&[
            ("x-forwarded-for", "203.0.113.7"),
            ("forwarded", "for=198.51.100.1"),
        ]);
        assert_eq!(
            TrustedProxies::default().client_of(ip("127.0.0.1"), &forged),
            ip("127.0.0.1")
        );
        let trusted = trusting(&["10.0.0.0/8"]);
        assert_eq!(trusted.client_of(ip("192.0.2.9"), &forged), ip("192.0.2.9"));
    }

    #[test]
    fn a_trusted_peer_without_headers_is_the_client() {
        let trusted = trusting(&["10.0.0.0/8"]);
        assert_eq!(
            trusted.client_of(ip("10.0.0.2"), &HeaderMap::new()),
            ip("10.0.0.2")
        );
    }

    #[test]
    fn the_right_most_untrusted_hop_is_the_client() {
        let trusted = trusting(&["10.0.0.0/8", "127.0.0.1"]);
        // client -> proxy 10.0.0.5 -> proxy 10.0.0.6 -> (peer) 127.0.0.1
        let chain = headers(&[("x-forwarded-for", "203.0.113.7, 10.0.0.5, 10.0.0.6")]);
        assert_eq!(
            trusted.client_of(ip("127.0.0.1"), &chain),
            ip("203.0.113.7")
        );
        // The same chain split over several headers.
        let split = headers(&[
            ("x-forwarded-for", "203.0.113.7"),
            ("x-forwarded-for", "10.0.0.5,10.0.0.6"),
        ]);
        assert_eq!(
            trusted.client_of(ip("127.0.0.1"), &split),
            ip("203.0.113.7")
        );
    }

    #[test]
    fn spoofed_left_most_entries_are_not_believed() {
        let trusted = trusting(&["10.0.0.0/8"]);
        // The client sent `X-Forwarded-For: 1.2.3.4, 10.9.9.9` itself; the trusted proxy
        // appended the address it really heard from.
        let spoofed = headers(&[("x-forwarded-for", "1.2.3.4, 10.9.9.9, 198.51.100.20")]);
        assert_eq!(
            trusted.client_of(ip("10.0.0.1"), &spoofed),
            ip("198.51.100.20")
        );
    }

    #[test]
    fn when_every_hop_is_trusted_the_left_most_is_the_client() {
        let trusted = trusting(&["10.0.0.0/8"]);
        let inside = headers(&[("x-forwarded-for", "10.1.1.1, 10.2.2.2")]);
        assert_eq!(trusted.client_of(ip("10.0.0.1"), &inside), ip("10.1.1.1"));
    }

    #[test]
    fn ipv6_hops_and_ports_are_read() {
        let trusted = trusting(&["fd00::/8", "::1"]);
        let chain = headers(&[(
            "x-forwarded-for",
            "2001:db8::7, [2001:db8::8]:4711, fd00::1",
        )]);
        assert_eq!(trusted.client_of(ip("::1"), &chain), ip("2001:db8::8"));
        let v4_port = headers(&[("x-forwarded-for", "203.0.113.7:51234")]);
        assert_eq!(trusted.client_of(ip("::1"), &v4_port), ip("203.0.113.7"));
        // A peer on a dual-stack socket shows as an IPv4-mapped address.
        let mapped = trusting(&["127.0.0.1"]);
        let chain = headers(&[("x-forwarded-for", "203.0.113.7")]);
        assert_eq!(
            mapped.client_of(ip("::ffff:127.0.0.1"), &chain),
            ip("203.0.113.7")
        );
    }

    #[test]
    fn a_malformed_entry_stops_the_walk_at_the_last_trusted_hop() {
        let trusted = trusting(&["10.0.0.0/8"]);
        let garbage = headers(&[("x-forwarded-for", "203.0.113.7, not-an-address, 10.0.0.5")]);
        assert_eq!(trusted.client_of(ip("10.0.0.1"), &garbage), ip("10.0.0.5"));
        let empty = headers(&[("x-forwarded-for", "203.0.113.7,,")]);
        assert_eq!(trusted.client_of(ip("10.0.0.1"), &empty), ip("10.0.0.1"));
        let unknown = headers(&[("x-forwarded-for", "unknown")]);
        assert_eq!(trusted.client_of(ip("10.0.0.1"), &unknown), ip("10.0.0.1"));
    }

    #[test]
    fn forwarded_is_read_when_there_is_no_x_forwarded_for() {
        let trusted = trusting(&["10.0.0.0/8"]);
        let forwarded = headers(&[(
            "forwarded",
            "for=192.0.2.43;proto=https, For=\"[2001:db8:cafe::17]:4711\", for=10.0.0.9;by=10.0.0.1",
        )]);
        assert_eq!(
            trusted.client_of(ip("10.0.0.1"), &forwarded),
            ip("2001:db8:cafe::17")
        );
        let hidden = headers(&[("forwarded", "for=192.0.2.43, for=_hidden, for=10.0.0.9")]);
        assert_eq!(trusted.client_of(ip("10.0.0.1"), &hidden), ip("10.0.0.9"));
        let no_for = headers(&[("forwarded", "proto=https")]);
        assert_eq!(trusted.client_of(ip("10.0.0.1"), &no_for), ip("10.0.0.1"));
        // With both, X-Forwarded-For wins.
        let both = headers(&[
            ("x-forwarded-for", "203.0.113.7"),
            ("forwarded", "for=192.0.2.43"),
        ]);
        assert_eq!(trusted.client_of(ip("10.0.0.1"), &both), ip("203.0.113.7"));
    }
}
