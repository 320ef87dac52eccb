//! Where a webhook may be sent. An endpoint's host is resolved, and every address it resolves to
//! must be public (`toolbridge_protocol::webhooks::non_public_address`) unless the server runs
//! with `--allow-private-webhooks`: otherwise a tenant could make the server call its own
//! network (a metadata service, a database's HTTP port). The check runs when an endpoint is
//! saved and again before every delivery, which connects only to the addresses it checked, so a
//! name that later resolves elsewhere is caught too.
//!
//! The server's fetch for tools (`crate::fetch`) follows the same rules with [`lookup`] and
//! [`first_refused`], its exceptions being single addresses and ports
//! (`--allow-private-fetch HOST:PORT`) rather than all of them.

use std::net::{IpAddr, SocketAddr};

use toolbridge_protocol::webhooks::{non_public_address, parse_url};

/// Whether webhooks may go to loopback, private and link-local addresses
/// (`--allow-private-webhooks`, for development and tests).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub enum Destinations {
    /// Only public addresses (the default).
    #[default]
    PublicOnly,
    /// Any address.
    AllowPrivate,
}

/// Why a URL may not receive webhooks, in words for the `url` field of an answer or for the
/// delivery log.
#[derive(Debug, thiserror::Error)]
pub enum DestinationError {
    /// The URL itself breaks a rule (`toolbridge_protocol::webhooks::parse_url`).
    #[error("{0}")]
    Invalid(String),
    /// The host has no address.
    #[error("{host} does not resolve: {source}")]
    Unresolved {
        /// The host as written.
        host: String,
        /// What the resolver said.
        #[source]
        source: std::io::Error,
    },
    /// The host is, or resolves to, an address inside a network.
    #[error("{host} is {why} ({ip}); webhooks go to public addresses only")]
    NonPublic {
        /// The host as written.
        host: String,
        /// The address it is or resolves to.
        ip: IpAddr,
        /// What kind of address that is.
        why: &'static str,
    },
}

/// The addresses `url` may be sent to: its host, resolved, each address checked against
/// `destinations`. A name that resolves to any non-public address is refused as a whole.
pub async fn resolve(
    url: &str,
    destinations: Destinations,
) -> Result<Vec<SocketAddr>, DestinationError> {
    let url = parse_url(url).map_err(DestinationError::Invalid)?;
    let addresses = lookup(&url.host, url.port).await?;
    check(&url.host, &addresses, destinations)?;
    Ok(addresses)
}

/// The addresses of `host` on `port`: the address itself when `host` is one (an IPv6 address
/// with or without its brackets), else what the resolver gives, at least one.
pub async fn lookup(host: &str, port: u16) -> Result<Vec<SocketAddr>, DestinationError> {
    let bare = host
        .strip_prefix('[')
        .and_then(|inner| inner.strip_suffix(']'))
        .unwrap_or(host);
    let addresses: Vec<SocketAddr> = match bare.parse::<IpAddr>() {
        Ok(ip) => vec![SocketAddr::new(ip, port)],
        Err(_) => tokio::net::lookup_host((bare, port))
            .await
            .map_err(|source| DestinationError::Unresolved {
                host: host.to_owned(),
                source,
            })?
            .collect(),
    };
    if addresses.is_empty() {
        return Err(DestinationError::Unresolved {
            host: host.to_owned(),
            source: std::io::Error::new(std::io::ErrorKind::NotFound, "no address"),
        });
    }
    Ok(addresses)
}

/// The first of `addresses` that is not public and that `allowed` does not let through, with
/// what kind of address it is.
pub fn first_refused(
    addresses: &[SocketAddr],
    allowed: impl Fn(&SocketAddr) -> bool,
) -> Option<(SocketAddr, &'static str)> {
    addresses.iter().find_map(|address| {
        non_public_address(address.ip())
            .filter(|_| !allowed(address))
            .map(|why| (*address, why))
    })
}

/// Refuses `addresses` (what `host` resolved to) when one of them is not public and
/// `destinations` does not allow that.
pub fn check(
    host: &str,
    addresses: &[SocketAddr],
    destinations: Destinations,
) -> Result<(), DestinationError> {
    let allowed = |_: &SocketAddr| destinations == Destinations::AllowPrivate;
    match first_refused(addresses, allowed) {
        Some((address, why)) => Err(DestinationError::NonPublic {
            host: host.to_owned(),
            ip: address.ip(),
            why,
        }),
        None => Ok(()),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[tokio::test]
    async fn private_hosts_are_refused_unless_allowed() {
        for url in [
            "http://127.0.0.1:9000/hook",
            "http://localhost/hook",
            "https://[::1]/hook",
            "http://169.254.169.254/latest/meta-data",
            "http://10.0.0.7/",
        ] {
            let refused = resolve(url, Destinations::PublicOnly).await;
            assert!(
                matches!(refused, Err(DestinationError::NonPublic { .. })),
                "{url}: {refused:?}"
            );
            assert!(
                resolve(url, Destinations::AllowPrivate).await.is_ok(),
                "{url}"
            );
        }
    }

    #[tokio::test]
    async fn a_public_address_passes_and_a_bad_url_says_why() {
        let public = resolve("https://93.184.216.34/hook", Destinations::PublicOnly).await;
        assert_eq!(
            public.ok(),
            Some(vec![
                "93.184.216.34:443"
                    .parse()
                    .unwrap_or(SocketAddr::from(([0, 0, 0, 0], 0)))
            ])
        );
        let bad = resolve("ftp://example.com/", Destinations::AllowPrivate).await;
        assert!(matches!(bad, Err(DestinationError::Invalid(_))), "{bad:?}");
        let nowhere = resolve("http://no-such-host.invalid/", Destinations::AllowPrivate).await;
        assert!(
            matches!(nowhere, Err(DestinationError::Unresolved { .. })),
            "{nowhere:?}"
        );
    }
}
