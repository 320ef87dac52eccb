//! The bytes that actually travel over HTTP from the running release server: bridge.js, the host
//! module's wasm and JavaScript, a page of 500 products and the catalog index, each fetched with
//! `curl` three ways: with no `Accept-Encoding` (identity), with `Accept-Encoding: br, gzip` as a
//! browser sends it, and with `gzip` alone. The server compresses its static files once per
//! version, on the first request for each coding, so the first `br, gzip` request of a static file
//! is timed apart from a repeat: the difference is the one-time cost of its brotli.

use std::process::Command;

use serde::{Serialize, Serializer};
use toolbridge_e2e::server::ToolbridgeServer;

use crate::error::Error;
use crate::figures::rounded;
use crate::process::{capture, require};

/// What a browser sends.
pub(crate) const BROWSER_ACCEPT: &str = "br, gzip";

/// The resources measured: the name in the report and the path.
const RESOURCES: [(&str, &str); 5] = [
    ("bridge_js", "/sdk/bridge.js"),
    ("host_wasm", "/host/toolbridge_host_bg.wasm"),
    ("host_js", "/host/toolbridge_host.js"),
    ("products_500", "/api/v1/products?pageSize=500"),
    ("catalog_index", "/api/v1/catalog/index"),
];

/// One resource's bytes on the wire, each way it was fetched.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub(crate) struct Transfer {
    /// The name in the report (`bridge_js`).
    #[serde(skip)]
    pub(crate) name: &'static str,
    /// The path fetched.
    pub(crate) path: &'static str,
    /// Bytes without `Accept-Encoding`.
    pub(crate) identity_bytes: u64,
    /// Bytes with `Accept-Encoding: br, gzip`.
    pub(crate) browser_bytes: u64,
    /// The `Content-Encoding` of that answer (`br`; `identity` when there was none).
    pub(crate) browser_encoding: String,
    /// Bytes with `Accept-Encoding: gzip`.
    pub(crate) gzip_bytes: u64,
    /// The first `br, gzip` request, in milliseconds.
    pub(crate) first_browser_ms: f64,
    /// A repeat of it, in milliseconds.
    pub(crate) repeat_browser_ms: f64,
}

/// Every resource, in the order of [`RESOURCES`], and the catalog they were measured against.
#[derive(Clone, Debug, PartialEq)]
pub(crate) struct Transfers {
    /// Products seeded in the server's catalog.
    pub(crate) catalog_products: u32,
    /// One per resource.
    pub(crate) items: Vec<Transfer>,
}

impl Serialize for Transfers {
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        serializer.collect_map(
            std::iter::once((
                "catalog_products",
                serde_json::Value::from(self.catalog_products),
            ))
            .chain(self.items.iter().map(|item| {
                (
                    item.name,
                    serde_json::to_value(item).unwrap_or(serde_json::Value::Null),
                )
            })),
        )
    }
}

impl Transfers {
    /// What the bench prints: a header, then a line per resource.
    pub(crate) fn lines(&self) -> Vec<String> {
        let mut lines = vec![format!(
            "HTTP transfer from the release server (catalog of {} products), bytes: identity, \
             `Accept-Encoding: {BROWSER_ACCEPT}`, gzip alone; the first `{BROWSER_ACCEPT}` \
             request and a repeat",
            self.catalog_products
        )];
        lines.extend(self.items.iter().map(|item| {
            format!(
                "  {:<14} identity {:>9}  {BROWSER_ACCEPT} {:>9} ({:<8})  gzip {:>9}  \
                 first {:>8.1} ms  repeat {:>7.1} ms",
                item.name,
                item.identity_bytes,
                item.browser_bytes,
                item.browser_encoding,
                item.gzip_bytes,
                item.first_browser_ms,
                item.repeat_browser_ms
            )
        }));
        lines
    }
}

/// Measures every resource against `server`, whose catalog has `catalog_products`, with a key
/// made for it.
pub(crate) fn measure(
    server: &ToolbridgeServer,
    catalog_products: u32,
) -> Result<Transfers, Error> {
    let curl = require("curl", "install it (Debian: curl)")?;
    let key = server.create_key(
        "bench-transfer",
        "products:read,catalog:read",
        "1000000000/60s",
    )?;
    let base = server.base_url();
    let fetch = |path: &str, accept: Option<&str>| -> Result<Fetched, Error> {
        let mut command = Command::new(&curl);
        command
            .args([
                "--silent",
                "--show-error",
                "--fail",
                "--output",
                "/dev/null",
            ])
            .args([
                "--write-out",
                "%{size_download} %{time_total} %header{content-encoding}",
            ])
            .args(["--header", &format!("Authorization: Bearer {key}")]);
        if let Some(accept) = accept {
            command.args(["--header", &format!("Accept-Encoding: {accept}")]);
        }
        command.arg(format!("{base}{path}"));
        parse(&String::from_utf8_lossy(&capture(&mut command)?))
    };
    let items = RESOURCES
        .iter()
        .map(|&(name, path)| {
            let first = fetch(path, Some(BROWSER_ACCEPT))?;
            let repeat = fetch(path, Some(BROWSER_ACCEPT))?;
            let identity = fetch(path, None)?;
            let gzip = fetch(path, Some("gzip"))?;
            Ok(Transfer {
                name,
                path,
                identity_bytes: identity.bytes,
                browser_bytes: repeat.bytes,
                browser_encoding: repeat.encoding,
                gzip_bytes: gzip.bytes,
                first_browser_ms: rounded(first.seconds * 1000.0, 1),
                repeat_browser_ms: rounded(repeat.seconds * 1000.0, 1),
            })
        })
        .collect::<Result<Vec<_>, Error>>()?;
    Ok(Transfers {
        catalog_products,
        items,
    })
}

/// What one `curl` saw.
#[derive(Debug, PartialEq)]
struct Fetched {
    bytes: u64,
    seconds: f64,
    encoding: String,
}

/// Reads curl's `--write-out` line: bytes, seconds, and the `Content-Encoding` (empty when none).
fn parse(text: &str) -> Result<Fetched, Error> {
    let bad = || Error::failed(format!("cannot read curl's `--write-out`: {text:?}"));
    let mut words = text.split_whitespace();
    let bytes = words
        .next()
        .and_then(|word| word.parse().ok())
        .ok_or_else(bad)?;
    let seconds = words
        .next()
        .and_then(|word| word.parse().ok())
        .ok_or_else(bad)?;
    let encoding = words.next().unwrap_or("identity").to_owned();
    Ok(Fetched {
        bytes,
        seconds,
        encoding,
    })
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;

    #[test]
    fn curl_output_is_read() {
        assert_eq!(
            parse("13183 0.002433 br").unwrap(),
            Fetched {
                bytes: 13183,
                seconds: 0.002_433,
                encoding: "br".to_owned()
            }
        );
        assert_eq!(parse("56469 0.001 ").unwrap().encoding, "identity");
        assert!(parse("").is_err());
        assert!(parse("many 0.1").is_err());
    }

    #[test]
    fn the_transfers_are_reported_by_name() {
        let transfers = Transfers {
            catalog_products: 105_300,
            items: vec![Transfer {
                name: "bridge_js",
                path: "/sdk/bridge.js",
                identity_bytes: 56_469,
                browser_bytes: 13_183,
                browser_encoding: "br".to_owned(),
                gzip_bytes: 15_776,
                first_browser_ms: 84.2,
                repeat_browser_ms: 1.1,
            }],
        };
        assert_eq!(
            serde_json::to_value(&transfers).unwrap(),
            json!({
                "catalog_products": 105_300,
                "bridge_js": {"path": "/sdk/bridge.js", "identity_bytes": 56_469,
                    "browser_bytes": 13_183, "browser_encoding": "br", "gzip_bytes": 15_776,
                    "first_browser_ms": 84.2, "repeat_browser_ms": 1.1}
            })
        );
        let lines = transfers.lines();
        assert_eq!(lines.len(), 2);
        assert!(lines[1].contains("13183 (br"), "{}", lines[1]);
    }
}
