//! The fetch stand-in: `POST /tools/{slug}/fetch`, the request the host module sends when a tool
//! calls `bridge.fetch(url, init)` (`toolbridge_protocol::fetch`).
//!
//! The server checks the request, replaces its placeholders with the tenant's secret settings
//! and the identity token, makes it and answers what came back. The memory backend does all of
//! that with the protocol's own rules ([`check_request`], [`expand_request`]) except the last
//! step: the request, its placeholders replaced, goes to a handler the test registers
//! ([`Outgoing`]), and the handler's answer ([`Upstream`]) becomes the [`FetchResponse`].

use toolbridge_protocol::Error as Rule;
use toolbridge_protocol::fetch::{
    BODY_MAX_SHOWN, DROPPED_RESPONSE_HEADERS, FetchBody, FetchRequest, FetchResponse, TIMEOUT_SECS,
    check_body_len, check_request, decode_bytes, encode_bytes, origin_of, split_url,
};
use toolbridge_protocol::manifest::is_tool_slug;
use toolbridge_protocol::placeholders::{Values, expand_request, uses_token};
use toolbridge_protocol::webhooks::non_public_address;

use super::{MemoryBackend, Request, Response, json_body};

/// A request for the test's fetch handler: what the server would send upstream, every
/// placeholder replaced.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Outgoing {
    /// The slug of the tool that asked.
    pub tool: String,
    /// The absolute `https://` URL, its query's placeholders replaced (percent-encoded).
    pub url: String,
    /// `GET`, `POST`…
    pub method: String,
    /// Name and value pairs in the tool's order, their placeholders replaced.
    pub headers: Vec<(String, String)>,
    /// The body's bytes: a text body as UTF-8, its placeholders replaced; a binary body exactly
    /// as the tool sent it.
    pub body: Option<Vec<u8>>,
}

/// A fetch the backend accepted, waiting for the handler's answer
/// ([`MemoryBackend::finish`]).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct PendingFetch {
    /// The host's request, for the log.
    pub(super) method: String,
    pub(super) path: String,
    /// What to ask the handler.
    pub outgoing: Outgoing,
}

/// How [`MemoryBackend::start`] went.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Started {
    /// The request is answered.
    Answered(Response),
    /// A fetch to hand to the test's handler.
    Fetch(PendingFetch),
}

/// What the test's fetch handler made of an [`Outgoing`] request.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Upstream {
    /// The handler's answer.
    Answer {
        /// Its status.
        status: u16,
        /// Its headers, in order.
        headers: Vec<(String, String)>,
        /// Its body's bytes.
        body: Vec<u8>,
    },
    /// No handler is registered.
    NoHandler,
    /// The handler threw, rejected, or answered something other than a response: why.
    Failed(String),
    /// The handler did not answer within [`TIMEOUT_SECS`].
    TimedOut,
}

impl MemoryBackend {
    /// Reads and checks a fetch of tool `slug` as the server does, in the server's order, and
    /// replaces its placeholders; `Err` is the server's answer when it refuses it.
    pub(super) fn outgoing(&self, slug: &str, request: &Request<'_>) -> Result<Outgoing, Response> {
        let body = json_body(request)?;
        if !is_tool_slug(slug) {
            return Err(Response::problem(&Rule::NotFound(format!(
                "no tool the app lists has the slug {slug:?}"
            ))));
        }
        let fetch: FetchRequest = serde_path_to_error::deserialize(body).map_err(|error| {
            let path = error.path().to_string();
            let path = if path == "." { String::new() } else { path };
            Response::problem(&Rule::invalid(path, error.into_inner().to_string()))
        })?;
        self.accept(slug, &fetch)
            .map_err(|refused| Response::problem(&refused))
    }

    fn accept(&self, slug: &str, fetch: &FetchRequest) -> Result<Outgoing, Rule> {
        check_request(fetch)?;
        let origin = origin_of(&fetch.url).unwrap_or_default();
        let Some(permissions) = &self.data.permissions else {
            return Err(Rule::NotAllowed(format!(
                "the tool {slug} may not fetch from {origin}: the fixtures give no manifest, so it declares no permissions.connect (give the tool's manifest.json as the fixtures' `manifest`)"
            )));
        };
        if !permissions.connect.contains(&origin) {
            let declared = if permissions.connect.is_empty() {
                "lists no origin".to_owned()
            } else {
                format!("lists {}", permissions.connect.join(", "))
            };
            return Err(Rule::NotAllowed(format!(
                "the tool {slug} may not fetch from {origin}: its manifest's permissions.connect {declared}"
            )));
        }
        let token = if permissions.identity && uses_token(fetch) {
            Some(self.identity_token(slug)?.token)
        } else {
            None
        };
        let values = Values {
            declarations: self.data.declarations.as_deref().unwrap_or(&[]),
            secrets: &self.data.secrets,
            token: token.as_deref(),
        };
        let expanded = expand_request(fetch, &values)?;
        // The server resolves the host and refuses a private address; here only an address
        // written in the URL can be judged.
        if let Some((host, address, why)) = literal_address(&expanded.url) {
            return Err(Rule::NotAllowed(format!(
                "the server does not fetch from {origin}: {host} is {why} ({address}), and the server fetches only from public addresses (an operator may allow one with --allow-private-fetch HOST:PORT)"
            )));
        }
        let body = match expanded.body {
            None => None,
            Some(FetchBody::Text(text)) => Some(text.into_bytes()),
            Some(FetchBody::Base64(encoded)) => Some(
                decode_bytes(&encoded).map_err(|problem| Rule::invalid("body.base64", problem))?,
            ),
        };
        Ok(Outgoing {
            tool: slug.to_owned(),
            url: expanded.url,
            method: expanded.method,
            headers: expanded.headers,
            body,
        })
    }
}

/// The host of a URL written as an IP address that is not public: the host as the server names
/// it (lower case, an IPv6 address in brackets), the address, and what kind it is.
fn literal_address(url: &str) -> Option<(String, std::net::IpAddr, &'static str)> {
    let host = split_url(url).ok()?.host.to_ascii_lowercase();
    let address: std::net::IpAddr = host
        .strip_prefix('[')
        .and_then(|inner| inner.strip_suffix(']'))
        .unwrap_or(&host)
        .parse()
        .ok()?;
    let why = non_public_address(address)?;
    Some((host, address, why))
}

/// The answer to the host for `outgoing`, from what the handler made of it.
pub(super) fn answer(outgoing: &Outgoing, upstream: Upstream) -> Response {
    let origin = origin_of(&outgoing.url).unwrap_or_default();
    let refused = match upstream {
        Upstream::Answer {
            status,
            headers,
            body,
        } => {
            if check_body_len(body.len()).is_ok() {
                let headers = headers
                    .into_iter()
                    .filter(|(name, _)| {
                        !DROPPED_RESPONSE_HEADERS
                            .iter()
                            .any(|dropped| dropped.eq_ignore_ascii_case(name))
                    })
                    .collect();
                return Response::json(
                    200,
                    &FetchResponse {
                        status,
                        headers,
                        body: encode_bytes(&body),
                    },
                );
            }
            Rule::BackendUnavailable(format!(
                "the answer from {origin} is larger than {BODY_MAX_SHOWN}, the most the server passes on"
            ))
        }
        Upstream::NoHandler => Rule::Internal(format!(
            "the tool asked to fetch {} {}, and the test registers no fetch handler to answer in place of {origin}: register one before the tool fetches, e.g. host.onFetch((request) => Response.json({{ok: true}}))",
            outgoing.method,
            shown_url(&outgoing.url)
        )),
        Upstream::Failed(why) => Rule::BackendUnavailable(format!(
            "cannot reach {origin}: the fetch handler did not answer {} {}: {why}",
            outgoing.method,
            shown_url(&outgoing.url)
        )),
        Upstream::TimedOut => Rule::Timeout(format!(
            "{origin} did not answer in full within {TIMEOUT_SECS} s (the fetch handler took longer)"
        )),
    };
    Response::problem(&refused)
}

/// The URL without its query, which may hold a secret once placeholders are replaced: messages
/// name the place, never a value.
fn shown_url(url: &str) -> &str {
    url.split_once('?').map_or(url, |(before, _)| before)
}

#[cfg(test)]
mod tests {
    use serde_json::{Value, json};

    use super::*;

    fn backend(fixtures: &Value) -> MemoryBackend {
        MemoryBackend::on_page(fixtures, "http://localhost:8000").unwrap()
    }

    /// The paths of an error's violations.
    fn at(error: &Rule) -> Vec<&str> {
        error.details().iter().map(|v| v.path.as_str()).collect()
    }

    fn vendor_fixtures() -> Value {
        json!({
            "manifest": {
                "name": "Prices", "version": "1.0.0",
                "settings": [
                    {"key": "region", "label": "Region", "type": "string", "default": "north"},
                    {"key": "apiKey", "label": "API key", "type": "string", "secret": true},
                    {"key": "user", "label": "User", "type": "string", "secret": true}
                ],
                "permissions": {"identity": true, "connect": ["https://api.vendor.test", "https://10.1.2.3"]}
            },
            "settings": {"region": "south", "apiKey": "k&y 1", "user": "ann"}
        })
    }

    fn fetch_body(request: &Value) -> String {
        request.to_string()
    }

    fn start(memory: &mut MemoryBackend, slug: &str, request: &Value) -> Started {
        let body = fetch_body(request);
        memory.start(&Request {
            method: "POST",
            target: &format!("/tools/{slug}/fetch"),
            headers: &[("content-type".to_owned(), "application/json".to_owned())],
            body: Some(&body),
        })
    }

    fn refusal(started: Started) -> (u16, Value) {
        match started {
            Started::Answered(response) => (
                response.status,
                serde_json::from_str(response.body.as_deref().unwrap_or("null")).unwrap(),
            ),
            Started::Fetch(pending) => panic!("accepted: {pending:?}"),
        }
    }

    #[test]
    fn secrets_are_kept_from_the_settings_the_tool_sees() {
        let memory = backend(&vendor_fixtures());
        assert_eq!(
            Value::Object(memory.settings().unwrap().clone()),
            json!({"region": "south"})
        );
        assert_eq!(memory.secret_keys(), ["apiKey", "user"]);
    }

    #[test]
    fn placeholders_are_replaced_before_the_handler_sees_the_request() {
        let mut memory = backend(&vendor_fixtures());
        let started = start(
            &mut memory,
            "prices",
            &json!({
                "url": "https://api.vendor.test/prices?key={{secret.apiKey}}&sku=A%201",
                "method": "POST",
                "headers": [["Authorization", "Basic {{base64:{{secret.user}}:{{secret.apiKey}}}}"],
                            ["X-Identity", "{{token}}"]],
                "body": {"text": "{\"key\": \"{{secret.apiKey}}\"}"}
            }),
        );
        let Started::Fetch(pending) = started else {
            panic!("refused: {started:?}");
        };
        let outgoing = &pending.outgoing;
        assert_eq!(outgoing.tool, "prices");
        assert_eq!(
            outgoing.url,
            "https://api.vendor.test/prices?key=k%26y%201&sku=A%201"
        );
        assert_eq!(outgoing.headers[0].1, "Basic YW5uOmsmeSAx");
        assert_eq!(outgoing.headers[1].1.split('.').count(), 3);
        assert_eq!(
            outgoing.body.as_deref(),
            Some(b"{\"key\": \"k&y 1\"}".as_slice())
        );
        let response = memory.finish(
            pending,
            Upstream::Answer {
                status: 201,
                headers: vec![
                    (
                        "content-type".to_owned(),
                        "application/octet-stream".to_owned(),
                    ),
                    ("set-cookie".to_owned(), "a=b".to_owned()),
                ],
                body: vec![0, 255, 7],
            },
        );
        assert_eq!(response.status, 200);
        let answer: FetchResponse =
            serde_json::from_str(response.body.as_deref().unwrap()).unwrap();
        assert_eq!(
            answer,
            FetchResponse {
                status: 201,
                headers: vec![(
                    "content-type".to_owned(),
                    "application/octet-stream".to_owned()
                )],
                body: "AP8H".to_owned(),
            }
        );
        assert_eq!(memory.requests().last().unwrap().status, 200);
    }

    #[test]
    fn a_binary_body_goes_as_it_is() {
        let mut memory = backend(&vendor_fixtures());
        let bytes: Vec<u8> = (0..=255).collect();
        let started = start(
            &mut memory,
            "prices",
            &json!({"url": "https://api.vendor.test/upload", "method": "PUT",
                    "body": {"base64": encode_bytes(&bytes)}}),
        );
        let Started::Fetch(pending) = started else {
            panic!("refused: {started:?}");
        };
        assert_eq!(pending.outgoing.body, Some(bytes));
    }

    #[test]
    fn refusals_carry_the_servers_codes_and_paths() {
        let mut memory = backend(&vendor_fixtures());
        let (status, body) = refusal(start(
            &mut memory,
            "prices",
            &json!({"url": "https://elsewhere.test/", "method": "GET"}),
        ));
        assert_eq!((status, body["code"].as_str()), (403, Some("NOT_ALLOWED")));
        assert!(
            body["detail"]
                .as_str()
                .unwrap()
                .contains("https://elsewhere.test")
        );
        let (status, body) = refusal(start(
            &mut memory,
            "prices",
            &json!({"url": "https://10.1.2.3/", "method": "GET"}),
        ));
        assert_eq!(status, 403);
        assert!(body["detail"].as_str().unwrap().contains("private"));
        let (status, body) = refusal(start(
            &mut memory,
            "prices",
            &json!({"url": "http://api.vendor.test/", "method": "get",
                    "headers": [["Cookie", "a"]]}),
        ));
        assert_eq!(status, 422);
        let paths: Vec<&str> = body["errors"]
            .as_array()
            .unwrap()
            .iter()
            .map(|e| e["path"].as_str().unwrap())
            .collect();
        assert_eq!(paths, ["url", "method", "headers[0][0]"]);
        let (status, body) = refusal(start(
            &mut memory,
            "prices",
            &json!({"url": "https://api.vendor.test/", "method": "GET",
                    "headers": [["X-Key", "{{secret.region}}"], ["X-Other", "{{secret.nope}}"]]}),
        ));
        assert_eq!(status, 422);
        assert_eq!(body["errors"][0]["path"], "headers[0][1]");
        assert_eq!(body["errors"][1]["path"], "headers[1][1]");
        let (status, body) = refusal(start(
            &mut memory,
            "prices",
            &json!({"url": "https://api.vendor.test/", "verb": "GET"}),
        ));
        assert_eq!(status, 422, "{body}");
        let (status, _) = refusal(start(
            &mut memory,
            "Bad_Slug",
            &json!({
            "url": "https://api.vendor.test/", "method": "GET"}),
        ));
        assert_eq!(status, 404);
        let (status, body) = refusal(start(
            &mut backend(&json!({})),
            "prices",
            &json!({"url": "https://api.vendor.test/", "method": "GET"}),
        ));
        assert_eq!(status, 403);
        assert!(body["detail"].as_str().unwrap().contains("no manifest"));
    }

    #[test]
    fn without_a_handler_the_answer_says_to_register_one() {
        let mut memory = backend(&vendor_fixtures());
        let body = fetch_body(
            &json!({"url": "https://api.vendor.test/p?key={{secret.apiKey}}",
                                      "method": "GET"}),
        );
        let response = memory.handle(&Request {
            method: "POST",
            target: "/tools/prices/fetch",
            headers: &[("content-type".to_owned(), "application/json".to_owned())],
            body: Some(&body),
        });
        assert_eq!(response.status, 500);
        let text = response.body.unwrap();
        assert!(text.contains("host.onFetch"), "{text}");
        assert!(!text.contains("k&y"), "no secret in a message: {text}");
    }

    #[test]
    fn what_the_handler_did_wrong_is_said() {
        let outgoing = Outgoing {
            tool: "prices".to_owned(),
            url: "https://api.vendor.test/p?key=secret".to_owned(),
            method: "GET".to_owned(),
            headers: Vec::new(),
            body: None,
        };
        let timed_out = answer(&outgoing, Upstream::TimedOut);
        assert_eq!(timed_out.status, 504);
        let failed = answer(&outgoing, Upstream::Failed("TypeError: boom".to_owned()));
        assert_eq!(failed.status, 502);
        assert!(failed.body.as_deref().unwrap().contains("boom"));
        assert!(!failed.body.as_deref().unwrap().contains("secret"));
        let huge = answer(
            &outgoing,
            Upstream::Answer {
                status: 200,
                headers: Vec::new(),
                body: vec![0; toolbridge_protocol::fetch::BODY_MAX_BYTES + 1],
            },
        );
        assert_eq!(huge.status, 502);
    }

    #[test]
    fn an_admin_replaces_and_clears_secrets_and_never_sees_them() {
        let mut memory = backend(&vendor_fixtures());
        let seen = memory
            .install_settings(&json!({"region": "east", "apiKey": "new"}))
            .unwrap();
        assert_eq!(Value::Object(seen), json!({"region": "east"}));
        assert_eq!(memory.secret_keys(), ["apiKey", "user"]);
        memory.install_settings(&json!({"user": null})).unwrap();
        assert_eq!(memory.secret_keys(), ["apiKey"]);
        let refused = memory.install_settings(&json!({"apiKey": 5})).unwrap_err();
        assert_eq!(at(&refused), ["apiKey"]);
        assert_eq!(memory.secret_keys(), ["apiKey"]);
    }
}
