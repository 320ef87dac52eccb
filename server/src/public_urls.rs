//! Where browsers find the app and its tools: the app's public origin and the template of the
//! tools' origins (`toolbridge serve --public-url … --tools-url …`).
//!
//! Behind a proxy that terminates TLS, the port the server is bound to is nobody's business but
//! the proxy's: every origin the server writes (Content-Security-Policies, `frame-ancestors`, the
//! tool list, the session API's allowed origins) comes from these two, never from the socket.
//! Without them the local defaults apply, `http://localhost:<port>` for the app and
//! `http://{slug}.tools.localhost:<port>` for the tools (browsers resolve every `*.localhost` name
//! to this machine).

use std::fmt;

use axum::extract::{Request, State};
use axum::http::{HeaderValue, header};
use axum::middleware::Next;
use axum::response::Response;
use url::Url;

use crate::app::AppState;

/// The parent domain of the tools' origins by default.
pub const DEFAULT_TOOLS_DOMAIN: &str = "tools.localhost";

/// What stands for a tool's slug in a tools URL template.
pub const SLUG: &str = "{slug}";

/// What an https app sends as `Strict-Transport-Security`: a year, the app's name only (the
/// tools may live under another parent domain the operator serves otherwise).
const HSTS: &str = "max-age=31536000";

/// Why a public URL or a tools URL template was refused.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("{flag} {given}: {problem}")]
pub struct UrlError {
    /// The flag that gave it (`--public-url`, `--tools-url`).
    pub flag: &'static str,
    /// What was given.
    pub given: String,
    /// What is wrong with it, and what would do.
    pub problem: String,
}

/// `http` or `https`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Scheme {
    /// Plain HTTP: local development, or a proxy that does not terminate TLS.
    Http,
    /// HTTPS, usually terminated by a proxy in front of the server.
    Https,
}

impl Scheme {
    fn as_str(self) -> &'static str {
        match self {
            Scheme::Http => "http",
            Scheme::Https => "https",
        }
    }
}

/// A scheme, a host and an optional port: one origin, or, with `*.` or a slug in front of the
/// host, the tools' origins.
#[derive(Debug, Clone, PartialEq, Eq)]
struct Site {
    scheme: Scheme,
    /// Lower case; an IPv6 address in brackets.
    host: String,
    /// `None` for the scheme's default port.
    port: Option<u16>,
}

impl Site {
    /// `scheme://[label.]host[:port]`.
    fn write(&self, label: Option<&str>) -> String {
        let scheme = self.scheme.as_str();
        let label = label.map(|label| format!("{label}.")).unwrap_or_default();
        let host = &self.host;
        match self.port {
            Some(port) => format!("{scheme}://{label}{host}:{port}"),
            None => format!("{scheme}://{label}{host}"),
        }
    }

    /// A local site: `http://host:port`, the port left out when it is 80.
    fn local(host: &str, port: u16) -> Self {
        Self {
            scheme: Scheme::Http,
            host: host.to_owned(),
            port: (port != 80).then_some(port),
        }
    }
}

/// Reads `given` as an origin: http or https, a host, maybe a port, and nothing else.
fn parse_origin(flag: &'static str, given: &str, example: &str) -> Result<Site, UrlError> {
    let refuse = |problem: String| UrlError {
        flag,
        given: given.to_owned(),
        problem,
    };
    let url = Url::parse(given).map_err(|e| refuse(format!("not a URL ({e}); give {example}")))?;
    let scheme = match url.scheme() {
        "http" => Scheme::Http,
        "https" => Scheme::Https,
        other => {
            return Err(refuse(format!(
                "the scheme is {other}; give http or https, as {example}"
            )));
        }
    };
    let host = match url.host() {
        Some(url::Host::Domain(domain)) => domain.to_ascii_lowercase(),
        Some(url::Host::Ipv4(address)) => address.to_string(),
        Some(url::Host::Ipv6(address)) => format!("[{address}]"),
        None => return Err(refuse(format!("there is no host; give {example}"))),
    };
    if !url.username().is_empty() || url.password().is_some() {
        return Err(refuse(format!(
            "an origin has no user or password; give {example}"
        )));
    }
    if url.path() != "/" {
        return Err(refuse(format!(
            "the server is served at the root of its origin, so there is no path ({}); give {example}",
            url.path()
        )));
    }
    if url.query().is_some() || url.fragment().is_some() {
        return Err(refuse(format!(
            "an origin has no query or fragment; give {example}"
        )));
    }
    Ok(Site {
        scheme,
        host,
        port: url.port(),
    })
}

/// The tools' origins: `scheme://{slug}.<domain>[:port]`.
#[derive(Debug, Clone, PartialEq, Eq)]
struct ToolsUrl {
    /// The scheme, the domain below which each tool has its name, and the port.
    site: Site,
}

impl ToolsUrl {
    /// Reads a template such as `https://{slug}.tools.example.com`.
    fn parse(given: &str) -> Result<Self, UrlError> {
        const EXAMPLE: &str = "https://{slug}.tools.example.com";
        let refuse = |problem: String| UrlError {
            flag: "--tools-url",
            given: given.to_owned(),
            problem,
        };
        let Some(at) = given.find(SLUG) else {
            return Err(refuse(format!(
                "there is no {SLUG}; each tool's origin puts its slug there, as in {EXAMPLE}"
            )));
        };
        if given.matches(SLUG).count() > 1 {
            return Err(refuse(format!(
                "{SLUG} may appear once, as the host's leftmost label ({EXAMPLE})"
            )));
        }
        let scheme_end = given.find("://").map(|end| end + 3);
        if scheme_end != Some(at) || !given[at + SLUG.len()..].starts_with('.') {
            return Err(refuse(format!(
                "{SLUG} must be the host's whole leftmost label, right after the scheme, as in {EXAMPLE}"
            )));
        }
        // What is left once the slug's label is taken out: the tools' parent domain.
        let parent = format!("{}{}", &given[..at], &given[at + SLUG.len() + 1..]);
        let site = parse_origin("--tools-url", &parent, EXAMPLE).map_err(|mut error| {
            given.clone_into(&mut error.given);
            error
        })?;
        if site.host.starts_with('[') || site.host.parse::<std::net::Ipv4Addr>().is_ok() {
            return Err(refuse(format!(
                "tools need a domain name to put their slugs in front of, not an address ({EXAMPLE})"
            )));
        }
        Ok(Self { site })
    }
}

/// The app's public origin and its tools' origins.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct PublicUrls {
    app: Site,
    /// The same app at `http://127.0.0.1:<port>` too: only with the local defaults.
    loopback_alias: Option<Site>,
    tools: ToolsUrl,
}

impl PublicUrls {
    /// The local defaults for a server bound to `port`: the app at `http://localhost:<port>`
    /// (and `http://127.0.0.1:<port>`), tools at `http://{slug}.tools.localhost:<port>`.
    pub fn local(port: u16) -> Self {
        Self {
            app: Site::local("localhost", port),
            loopback_alias: Some(Site::local("127.0.0.1", port)),
            tools: ToolsUrl {
                site: Site::local(DEFAULT_TOOLS_DOMAIN, port),
            },
        }
    }

    /// From `--public-url` and `--tools-url`, either of which may be absent, for a server bound
    /// to `port`:
    /// - neither: [`Self::local`];
    /// - the app's alone: tools at `{slug}.tools.<the app's host>`, on its scheme and port;
    /// - the tools' alone: the app at the local default.
    ///
    /// Refused, with the reason: an app URL that is not an origin (http or https, a host, maybe a
    /// port, no path); a template without `{slug}` as its leftmost label, or with a path; an https
    /// app with http tools (browsers block such frames as mixed content); an app whose host is
    /// one of the tools' names.
    pub fn new(app: Option<&str>, tools: Option<&str>, port: u16) -> Result<Self, UrlError> {
        let local = Self::local(port);
        let (app_site, loopback_alias) = match app {
            Some(given) => (
                parse_origin("--public-url", given, "https://app.example.com")?,
                None,
            ),
            None => (local.app, local.loopback_alias),
        };
        let tools = match tools {
            Some(given) => ToolsUrl::parse(given)?,
            None if app.is_some() => ToolsUrl {
                site: Site {
                    host: format!("tools.{}", app_site.host),
                    ..app_site.clone()
                },
            },
            None => local.tools,
        };
        if app_site.scheme == Scheme::Https && tools.site.scheme == Scheme::Http {
            return Err(UrlError {
                flag: "--tools-url",
                given: tools.site.write(Some(SLUG)),
                problem: format!(
                    "the app is https ({}), and browsers refuse an http frame in an https page; \
                     serve the tools over https too",
                    app_site.write(None)
                ),
            });
        }
        let urls = Self {
            app: app_site,
            loopback_alias,
            tools,
        };
        if urls.tool_label(&urls.app.host).is_some() {
            return Err(UrlError {
                flag: "--public-url",
                given: urls.app.write(None),
                problem: format!(
                    "its host is one of the tools' names ({}); give the app a name of its own",
                    urls.tools.site.write(Some(SLUG))
                ),
            });
        }
        Ok(urls)
    }

    /// The app's origin as browsers see it (`https://app.example.com`).
    pub fn app_origin(&self) -> String {
        self.app.write(None)
    }

    /// Every origin the app's pages may be at: the public one, and with the local defaults
    /// `http://127.0.0.1:<port>` as well.
    pub fn app_origins(&self) -> Vec<String> {
        std::iter::once(&self.app)
            .chain(&self.loopback_alias)
            .map(|site| site.write(None))
            .collect()
    }

    /// Whether the app is served over https: its session cookie is then `Secure` and its answers
    /// carry `Strict-Transport-Security`.
    pub fn is_https(&self) -> bool {
        self.app.scheme == Scheme::Https
    }

    /// The origin of the tool `slug` (`https://estimator.tools.example.com`).
    pub fn tool_origin(&self, slug: &str) -> String {
        self.tools.site.write(Some(slug))
    }

    /// Every tool's origin at once, as a CSP source (`https://*.tools.example.com`).
    pub fn tools_source(&self) -> String {
        self.tools.site.write(Some("*"))
    }

    /// The tools' URL template (`https://{slug}.tools.example.com`).
    pub fn tools_template(&self) -> String {
        self.tools.site.write(Some(SLUG))
    }

    /// What a request's `Host` names: `None` for the app, else the label in front of the tools'
    /// domain (which may not be a slug at all; empty for the tools' domain itself). The port is
    /// not compared: behind a proxy the `Host` it forwards may or may not carry one.
    pub fn tool_label<'h>(&self, host: &'h str) -> Option<&'h str> {
        if host.starts_with('[') {
            // An IPv6 address: the app's, never a tool's.
            return None;
        }
        let name = host.rsplit_once(':').map_or(host, |(name, _port)| name);
        let domain = &self.tools.site.host;
        let label = name
            .len()
            .checked_sub(domain.len() + 1)
            .filter(|&cut| {
                name.is_char_boundary(cut)
                    && name[cut..].starts_with('.')
                    && name[cut + 1..].eq_ignore_ascii_case(domain)
            })
            .map(|cut| &name[..cut]);
        match label {
            Some(label) => Some(label),
            None if name.eq_ignore_ascii_case(domain) => Some(""),
            None => None,
        }
    }
}

impl fmt::Display for PublicUrls {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(
            f,
            "the app at {}, tools at {}",
            self.app_origin(),
            self.tools_template()
        )
    }
}

/// Middleware: `Strict-Transport-Security` on every answer of an https app (its pages, its API
/// and its tools' origins), so a browser never again asks for them over plain HTTP.
pub async fn strict_transport(
    State(state): State<AppState>,
    request: Request,
    next: Next,
) -> Response {
    let mut response = next.run(request).await;
    if state.public_urls().is_https() {
        response.headers_mut().insert(
            header::STRICT_TRANSPORT_SECURITY,
            HeaderValue::from_static(HSTS),
        );
    }
    response
}

#[cfg(test)]
mod tests {
    use super::*;

    fn urls(app: Option<&str>, tools: Option<&str>) -> PublicUrls {
        PublicUrls::new(app, tools, 8080).unwrap_or_else(|e| panic!("{e}"))
    }

    fn refused(app: Option<&str>, tools: Option<&str>) -> String {
        match PublicUrls::new(app, tools, 8080) {
            Ok(urls) => panic!("{app:?} {tools:?} was taken: {urls}"),
            Err(error) => error.to_string(),
        }
    }

    #[test]
    fn the_local_defaults_name_localhost_and_the_bound_port() {
        let local = urls(None, None);
        assert_eq!(local, PublicUrls::local(8080));
        assert_eq!(
            local.app_origins(),
            ["http://localhost:8080", "http://127.0.0.1:8080"]
        );
        assert_eq!(
            local.tool_origin("estimator"),
            "http://estimator.tools.localhost:8080"
        );
        assert_eq!(local.tools_source(), "http://*.tools.localhost:8080");
        assert!(!local.is_https());
        let port_80 = PublicUrls::local(80);
        assert_eq!(port_80.app_origin(), "http://localhost");
        assert_eq!(port_80.tool_origin("a"), "http://a.tools.localhost");
    }

    #[test]
    fn public_urls_name_only_what_was_given_never_the_bound_port() {
        let public = urls(
            Some("https://App.Example.com/"),
            Some("https://{slug}.tools.example.com"),
        );
        assert_eq!(public.app_origins(), ["https://app.example.com"]);
        assert_eq!(
            public.tool_origin("estimator"),
            "https://estimator.tools.example.com"
        );
        assert_eq!(public.tools_source(), "https://*.tools.example.com");
        assert!(public.is_https());
        let ports = urls(
            Some("https://app.example.test:8443"),
            Some("https://{slug}.tools.example.test:8443"),
        );
        assert_eq!(ports.app_origin(), "https://app.example.test:8443");
        assert_eq!(ports.tools_source(), "https://*.tools.example.test:8443");
        // The scheme's own port is left out, as browsers leave it out of an origin.
        assert_eq!(
            urls(Some("https://app.example.com:443"), None).app_origin(),
            "https://app.example.com"
        );
    }

    #[test]
    fn one_url_alone_fills_in_the_other() {
        let app_only = urls(Some("https://app.example.com"), None);
        assert_eq!(
            app_only.tools_template(),
            "https://{slug}.tools.app.example.com"
        );
        let tools_only = urls(None, Some("http://{slug}.tools.test:9000"));
        assert_eq!(
            tools_only.app_origins(),
            ["http://localhost:8080", "http://127.0.0.1:8080"]
        );
        assert_eq!(tools_only.tool_origin("x"), "http://x.tools.test:9000");
    }

    #[test]
    fn a_template_needs_the_slug_as_its_leftmost_label_and_no_path() {
        let no_slug = refused(None, Some("https://tools.example.com"));
        assert!(no_slug.contains("there is no {slug}"), "{no_slug}");
        let inner = refused(None, Some("https://tools.{slug}.example.com"));
        assert!(inner.contains("leftmost label"), "{inner}");
        let partial = refused(None, Some("https://x{slug}.example.com"));
        assert!(partial.contains("leftmost label"), "{partial}");
        let twice = refused(None, Some("https://{slug}.{slug}.example.com"));
        assert!(twice.contains("once"), "{twice}");
        let path = refused(None, Some("https://{slug}.tools.example.com/app"));
        assert!(path.contains("no path (/app)"), "{path}");
        let address = refused(None, Some("https://{slug}.127.0.0.1"));
        assert!(address.contains("domain name"), "{address}");
        let scheme = refused(None, Some("ftp://{slug}.tools.example.com"));
        assert!(scheme.contains("the scheme is ftp"), "{scheme}");
        assert!(no_slug.starts_with("--tools-url https://tools.example.com: "));
    }

    #[test]
    fn an_app_url_is_an_origin() {
        for (given, problem) in [
            ("app.example.com", "not a URL"),
            ("https://app.example.com/toolbridge", "no path"),
            ("https://app.example.com/?x=1", "no query"),
            ("https://user:pw@app.example.com", "no user"),
            ("ws://app.example.com", "the scheme is ws"),
        ] {
            let error = refused(Some(given), Some("https://{slug}.tools.example.com"));
            assert!(
                error.starts_with(&format!("--public-url {given}: ")) && error.contains(problem),
                "{given}: {error}"
            );
        }
    }

    #[test]
    fn an_https_app_with_http_tools_is_refused() {
        let mixed = refused(
            Some("https://app.example.com"),
            Some("http://{slug}.tools.example.com"),
        );
        assert!(
            mixed.contains("mixed") || mixed.contains("http frame"),
            "{mixed}"
        );
        // An http app may frame https tools.
        urls(
            Some("http://app.example.com"),
            Some("https://{slug}.tools.example.com"),
        );
    }

    #[test]
    fn the_app_cannot_be_one_of_the_tools_names() {
        let clash = refused(
            Some("https://tools.example.com"),
            Some("https://{slug}.tools.example.com"),
        );
        assert!(clash.contains("one of the tools' names"), "{clash}");
        let clash = refused(
            Some("https://app.tools.example.com"),
            Some("https://{slug}.tools.example.com"),
        );
        assert!(clash.contains("one of the tools' names"), "{clash}");
    }

    #[test]
    fn a_host_names_a_tool_by_its_label_whatever_its_port() {
        let public = urls(
            Some("https://app.example.com"),
            Some("https://{slug}.tools.example.com"),
        );
        assert_eq!(
            public.tool_label("estimator.tools.example.com"),
            Some("estimator")
        );
        assert_eq!(
            public.tool_label("Estimator.TOOLS.example.com:443"),
            Some("Estimator")
        );
        assert_eq!(public.tool_label("tools.example.com"), Some(""));
        assert_eq!(public.tool_label("app.example.com"), None);
        assert_eq!(public.tool_label("x.tools.example.com.evil.test"), None);
        assert_eq!(public.tool_label("[::1]:8080"), None);
        assert_eq!(public.tool_label("eviltools.example.com"), None);
    }
}
