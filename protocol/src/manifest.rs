//! The tool manifest (`manifest.json` at a bundle's root) and tool types.

use std::fmt;

use serde::{Deserialize, Serialize};
use serde_json::Value;

use crate::Error;
use crate::error::Violations;
use crate::input::{index, kind};
use crate::settings::SettingDeclaration;

/// How a tool is launched and what it may call.
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Default, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum ToolType {
    /// A sidebar panel from the tool launcher: reads, plus `quotes.create`.
    #[default]
    Standalone,
    /// Opened inside the quote editor: also `quotes.addLines`.
    QuotingExtension,
}

impl ToolType {
    /// Both types.
    pub const ALL: [ToolType; 2] = [ToolType::Standalone, ToolType::QuotingExtension];

    /// The manifest token.
    pub fn token(self) -> &'static str {
        match self {
            ToolType::Standalone => "standalone",
            ToolType::QuotingExtension => "quoting_extension",
        }
    }

    /// Parses a manifest token.
    pub fn from_token(token: &str) -> Option<Self> {
        Self::ALL.into_iter().find(|t| t.token() == token)
    }
}

impl fmt::Display for ToolType {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.token())
    }
}

/// Longest tool slug: the slug is a DNS label of the tool's own origin
/// (`<slug>.tools.localhost`).
pub const SLUG_MAX_LEN: usize = 63;

/// Whether `slug` names a tool: 1 to [`SLUG_MAX_LEN`] lower-case ASCII
/// letters, digits or inner hyphens, so that it is one DNS label.
pub fn is_tool_slug(slug: &str) -> bool {
    !slug.is_empty()
        && slug.len() <= SLUG_MAX_LEN
        && slug
            .bytes()
            .all(|b| b.is_ascii_lowercase() || b.is_ascii_digit() || b == b'-')
        && !slug.starts_with('-')
        && !slug.ends_with('-')
}

/// What a slug must look like, for messages.
pub const SLUG_RULE: &str = "1 to 63 lower-case letters, digits or inner hyphens";

/// `manifest.json`, with SPEC.md's field names. Checked by the `bundle`
/// crate; this is only its shape.
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct ToolManifest {
    /// Full display name.
    pub name: String,
    /// Short name for tabs and chrome.
    pub short_name: String,
    /// Tool type.
    #[serde(rename = "type")]
    pub tool_type: ToolType,
    /// Semver version of the tool.
    pub version: String,
    /// One-sentence description.
    pub description: String,
    /// Relative path of the HTML entry point.
    pub entry: String,
    /// Install settings an administrator sets per tenant (none when absent).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub settings: Vec<SettingDeclaration>,
    /// What the tool may reach beyond its own origin (nothing when absent).
    #[serde(default, skip_serializing_if = "Permissions::is_empty")]
    pub permissions: Permissions,
}

/// The manifest's `permissions`: the outside origins the tool's page may
/// connect to (`fetch`, `XMLHttpRequest`, `WebSocket`, `EventSource`), which
/// its origin's Content-Security-Policy adds to `connect-src`, and whether
/// the tool may ask for a platform-signed token about its user
/// (`auth.getToken`, [`crate::identity`]).
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct Permissions {
    /// Exact https origins, at most [`MAX_CONNECT_ORIGINS`], as checked by
    /// [`check_connect_origin`].
    #[serde(default)]
    pub connect: Vec<String>,
    /// Whether the tool may ask the host for an identity token
    /// (`permissions.identity: true`); `false` when absent.
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub identity: bool,
}

impl Permissions {
    /// Whether nothing is asked for.
    pub fn is_empty(&self) -> bool {
        self.connect.is_empty() && !self.identity
    }
}

/// The permissions a manifest may ask for.
pub const PERMISSIONS: [&str; 2] = ["connect", "identity"];

/// Most origins `permissions.connect` may list.
pub const MAX_CONNECT_ORIGINS: usize = 10;

/// Longest origin, in bytes (a DNS name is at most 253).
const ORIGIN_MAX_LEN: usize = 300;

/// Reads the manifest's `permissions` field: an object whose keys are
/// among [`PERMISSIONS`]: `connect`, an array of at most
/// [`MAX_CONNECT_ORIGINS`] unique origins, each as [`check_connect_origin`]
/// wants it, and `identity`, `true` or `false`.
///
/// # Errors
///
/// `INVALID_PARAMS` with every problem at its path (`permissions.storage`,
/// `permissions.connect[2]`, `permissions.identity`).
pub fn read_permissions(value: &Value) -> Result<Permissions, Error> {
    let mut errors = Violations::default();
    let Value::Object(object) = value else {
        errors.push(
            "permissions",
            format!(
                "must be an object such as {{\"connect\": [\"https://api.example.com\"]}}, not {}",
                kind(value)
            ),
        );
        return errors.finish(None);
    };
    for key in object.keys() {
        if !PERMISSIONS.contains(&key.as_str()) {
            errors.push(
                format!("permissions.{key}"),
                format!(
                    "unknown permission; a tool may ask only for {}",
                    PERMISSIONS.join(", ")
                ),
            );
        }
    }
    let mut connect = Vec::new();
    match object.get("connect") {
        None | Some(Value::Null) => {}
        Some(Value::Array(origins)) if origins.len() > MAX_CONNECT_ORIGINS => errors.push(
            "permissions.connect",
            format!(
                "lists {} origins; at most {MAX_CONNECT_ORIGINS} are allowed",
                origins.len()
            ),
        ),
        Some(Value::Array(origins)) => {
            for (i, origin) in origins.iter().enumerate() {
                let path = index("permissions.connect", i);
                let Value::String(origin) = origin else {
                    errors.push(path, format!("must be a string, not {}", kind(origin)));
                    continue;
                };
                if connect.contains(origin) {
                    errors.push(path, format!("{origin:?} is listed twice"));
                } else if let Err(problem) = check_connect_origin(origin) {
                    errors.push(path, problem);
                } else {
                    connect.push(origin.clone());
                }
            }
        }
        Some(other) => errors.push(
            "permissions.connect",
            format!("must be an array of https origins, not {}", kind(other)),
        ),
    }
    let identity = match object.get("identity") {
        None | Some(Value::Null) => false,
        Some(Value::Bool(identity)) => *identity,
        Some(other) => {
            errors.push(
                "permissions.identity",
                format!(
                    "must be true or false (true lets the tool ask for an identity token), not {}",
                    kind(other)
                ),
            );
            false
        }
    };
    errors.into_result(Permissions { connect, identity })
}

/// Checks one origin of `permissions.connect`: exactly `https://`, a
/// lower-case host (a DNS name or an IPv4 address) and an optional `:port`,
/// nothing else (no path, not even `/`, no query, fragment, user name or
/// wildcard): the form a browser writes an origin in, which the tool
/// origin's policy names as it is.
///
/// # Errors
///
/// What is wrong, in words that say what to write instead.
pub fn check_connect_origin(origin: &str) -> Result<(), String> {
    if origin.len() > ORIGIN_MAX_LEN {
        return Err(format!(
            "the origin is longer than {ORIGIN_MAX_LEN} characters"
        ));
    }
    let shown = format!("{origin:?}");
    let Some(rest) = origin.strip_prefix("https://") else {
        let problem = if origin.to_ascii_lowercase().starts_with("https://") {
            "must start with https:// in lower case"
        } else if origin.contains("://") {
            "must be an https origin (https://…); other schemes are not allowed"
        } else {
            "must be an origin such as https://api.example.com"
        };
        return Err(format!("{shown} {problem}"));
    };
    if let Some(at) = rest.find(['/', '?', '#']) {
        let what = match rest.as_bytes().get(at) {
            Some(b'?') => "a query",
            Some(b'#') => "a fragment",
            _ if at + 1 == rest.len() => "a trailing /",
            _ => "a path",
        };
        return Err(format!(
            "{shown} must be an origin only, without {what}: write https://{}",
            &rest[..at]
        ));
    }
    if rest.contains('@') {
        return Err(format!(
            "{shown} must not contain a user name or password (…@)"
        ));
    }
    if rest.contains('*') {
        return Err(format!(
            "{shown} must name one host exactly; wildcards (*) are not allowed"
        ));
    }
    if rest.starts_with('[') {
        return Err(format!(
            "{shown}: an IPv6 address cannot be named in a Content-Security-Policy; use a DNS name"
        ));
    }
    let (host, port) = match rest.rsplit_once(':') {
        Some((host, port)) => (host, Some(port)),
        None => (rest, None),
    };
    if host.bytes().any(|b| b.is_ascii_uppercase()) {
        let lower = origin.to_ascii_lowercase();
        let lower = lower.strip_suffix(":443").unwrap_or(&lower);
        return Err(format!(
            "{shown} must have its host in lower case: write {lower}"
        ));
    }
    if let Some(problem) = host_problem(host) {
        return Err(format!("{shown}: {problem}"));
    }
    if let Some(port) = port {
        let valid = !port.is_empty()
            && port.len() <= 5
            && port.bytes().all(|b| b.is_ascii_digit())
            && !port.starts_with('0')
            && port.parse::<u32>().is_ok_and(|n| n <= 65_535);
        if !valid {
            return Err(format!(
                "{shown}: the port must be a number from 1 to 65535"
            ));
        }
        if port == "443" {
            return Err(format!(
                "{shown}: leave out :443, the https default: write https://{host}"
            ));
        }
    }
    Ok(())
}

/// What is wrong with an origin's host, if anything: a DNS name of
/// lower-case letters, digits and inner hyphens (labels of 1 to 63, 253 in
/// all), or an IPv4 address.
fn host_problem(host: &str) -> Option<String> {
    if host.is_empty() {
        return Some("the host is missing".to_owned());
    }
    if host.len() > 253 {
        return Some("the host is longer than 253 characters".to_owned());
    }
    let labels: Vec<&str> = host.split('.').collect();
    let numeric = labels
        .iter()
        .all(|label| !label.is_empty() && label.bytes().all(|b| b.is_ascii_digit()));
    if numeric {
        return host
            .parse::<std::net::Ipv4Addr>()
            .is_err()
            .then(|| format!("{host} is not an IPv4 address"));
    }
    for label in labels {
        let valid = !label.is_empty()
            && label.len() <= 63
            && label
                .bytes()
                .all(|b| b.is_ascii_lowercase() || b.is_ascii_digit() || b == b'-')
            && !label.starts_with('-')
            && !label.ends_with('-');
        if !valid {
            return Some(format!(
                "{host:?} is not a host name: each dot-separated part must be 1 to 63 lower-case \
                 letters, digits or inner hyphens"
            ));
        }
    }
    None
}
