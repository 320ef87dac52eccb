//! Placeholders in a request the server makes for a tool ([`crate::fetch`]): the place a
//! tenant's secret settings and the identity token go, replaced on the server so that neither
//! ever reaches the browser.
//!
//! The grammar:
//!
//! - `{{secret.NAME}}`: the tenant's value of the tool's secret setting `NAME` (a setting key
//!   declared `"secret": true`);
//! - `{{token}}`: an identity token for the user ([`crate::identity`]), for a tool whose manifest
//!   asks for `permissions.identity`;
//! - `{{base64:…}}`: standard base64 (with padding) of what is inside, once the placeholders
//!   inside are replaced, so that `Basic {{base64:{{secret.user}}:{{secret.password}}}}` makes
//!   an HTTP Basic `Authorization` header.
//!
//! A `{{` that does not begin one of these (`{{name}}` in a template the tool sends, say) is
//! text like any other. A placeholder must be written exactly so: `{{ token }}` or
//! `{{Secret.key}}` is refused rather than sent as it is.
//!
//! Placeholders are replaced in header values, in the URL's query (where what they turn into is
//! percent-encoded) and in a text body; anywhere else in the URL (scheme, host, path) they are
//! refused, and a base64 body is never looked into. What a placeholder turns into is never read
//! again for placeholders. Everything here is pure (no I/O, no clock), so the server and the
//! test kit (in wasm) replace alike; the values come from a [`Lookup`].

use std::collections::BTreeMap;

use base64::Engine as _;
use base64::engine::general_purpose::STANDARD;

use crate::Error;
use crate::error::Violations;
use crate::fetch::{FetchBody, FetchRequest, check_body_len, check_header_value, split_url};
use crate::settings::{KEY_RULE, SettingDeclaration, is_setting_key};

/// How deep `{{base64:…}}` may nest in another.
pub const MAX_NESTING: usize = 3;

/// What a [`Lookup`] knows of one secret setting.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Secret<'a> {
    /// The tenant's value.
    Set(&'a str),
    /// Declared secret, but the tenant has no value for it.
    NotSet,
    /// Declared, but not secret.
    NotSecret,
    /// Not declared at all.
    NotDeclared,
}

/// Where the values of placeholders come from.
pub trait Lookup {
    /// The tool's secret setting `name` for the tenant.
    fn secret(&self, name: &str) -> Secret<'_>;
    /// The identity token, or `None` when the tool's manifest does not ask for
    /// `permissions.identity`. (A caller mints one only when [`uses_token`] says it is wanted.)
    fn token(&self) -> Option<&str>;
}

/// A ready [`Lookup`]: a tool's declarations, the tenant's secret values and the token.
#[derive(Debug, Clone, Copy)]
pub struct Values<'a> {
    /// The tool's setting declarations.
    pub declarations: &'a [SettingDeclaration],
    /// The tenant's secret values, by key.
    pub secrets: &'a BTreeMap<String, String>,
    /// The identity token, if the tool may have one.
    pub token: Option<&'a str>,
}

impl Lookup for Values<'_> {
    fn secret(&self, name: &str) -> Secret<'_> {
        match self.declarations.iter().find(|d| d.key == name) {
            None => Secret::NotDeclared,
            Some(declaration) if !declaration.secret => Secret::NotSecret,
            Some(_) => self
                .secrets
                .get(name)
                .map_or(Secret::NotSet, |value| Secret::Set(value)),
        }
    }

    fn token(&self) -> Option<&str> {
        self.token
    }
}

/// Where a text sits, which says how a placeholder's value is written into it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Place {
    /// A header value: as it is.
    HeaderValue,
    /// The URL's query: percent-encoded (everything but `A-Z a-z 0-9 - . _ ~`).
    Query,
    /// A text body: as it is.
    Body,
}

/// One piece of a parsed text.
#[derive(Debug, Clone, PartialEq, Eq)]
enum Node<'a> {
    Text(&'a str),
    Secret(&'a str),
    Token,
    Base64(Vec<Node<'a>>),
}

/// How a placeholder begins.
const SECRET: &str = "{{secret.";
const TOKEN: &str = "{{token}}";
const BASE64: &str = "{{base64:";
const CLOSE: &str = "}}";

struct Parser<'a> {
    text: &'a str,
    at: usize,
    problems: Vec<String>,
}

impl<'a> Parser<'a> {
    fn parse(text: &'a str) -> (Vec<Node<'a>>, Vec<String>) {
        let mut parser = Parser {
            text,
            at: 0,
            problems: Vec::new(),
        };
        let nodes = parser.sequence(0);
        (nodes, parser.problems)
    }

    /// Nodes up to the end, or (at `depth` > 0) up to the `}}` that closes a `{{base64:`.
    fn sequence(&mut self, depth: usize) -> Vec<Node<'a>> {
        let mut nodes = Vec::new();
        let mut text_from = self.at;
        loop {
            let rest = &self.text[self.at..];
            let next_open = rest.find("{{");
            let next_close = if depth > 0 { rest.find(CLOSE) } else { None };
            match (next_open, next_close) {
                (_, Some(close)) if next_open.is_none_or(|open| close < open) => {
                    push_text(&mut nodes, &self.text[text_from..self.at + close]);
                    self.at += close + CLOSE.len();
                    return nodes;
                }
                (None, _) => {
                    push_text(&mut nodes, &self.text[text_from..]);
                    self.at = self.text.len();
                    if depth > 0 {
                        self.problems.push(format!(
                            "{BASE64}… is not closed: end it with }}}} after what it encodes"
                        ));
                    }
                    return nodes;
                }
                (Some(open), _) => {
                    let start = self.at + open;
                    let after = &self.text[start..];
                    if after.starts_with(SECRET)
                        || after.starts_with(TOKEN)
                        || after.starts_with(BASE64)
                    {
                        push_text(&mut nodes, &self.text[text_from..start]);
                        self.at = start;
                        if let Some(node) = self.placeholder(depth) {
                            nodes.push(node);
                        }
                        text_from = self.at;
                    } else {
                        if let Some(problem) = near_miss(after) {
                            self.problems.push(problem);
                        }
                        // Text: step over one brace, so that `{{{token}}` finds `{{token}}`.
                        self.at = start + 1;
                    }
                }
            }
        }
    }

    /// The placeholder at `self.at`, which starts with one of the known openings.
    fn placeholder(&mut self, depth: usize) -> Option<Node<'a>> {
        let rest = &self.text[self.at..];
        if rest.starts_with(TOKEN) {
            self.at += TOKEN.len();
            return Some(Node::Token);
        }
        if let Some(inner) = rest.strip_prefix(SECRET) {
            let name_len = inner
                .find(|c: char| !(c.is_ascii_alphanumeric() || c == '_'))
                .unwrap_or(inner.len());
            let name = &inner[..name_len];
            if !inner[name_len..].starts_with(CLOSE) {
                self.problems.push(format!(
                    "{SECRET}{name}… is not closed: write {{{{secret.NAME}}}}, NAME {KEY_RULE}"
                ));
                self.at += SECRET.len() + name_len;
                return None;
            }
            self.at += SECRET.len() + name_len + CLOSE.len();
            if !is_setting_key(name) {
                self.problems.push(format!(
                    "{{{{secret.{name}}}}} does not name a setting: NAME must be {KEY_RULE}"
                ));
                return None;
            }
            return Some(Node::Secret(name));
        }
        // `{{base64:`
        self.at += BASE64.len();
        if depth >= MAX_NESTING {
            self.problems
                .push(format!("{BASE64}… nests more than {MAX_NESTING} deep"));
            // Skip the rest: nothing deeper is worth reading.
            self.at = self.text.len();
            return None;
        }
        let inner = self.sequence(depth + 1);
        Some(Node::Base64(inner))
    }
}

/// Adds text, joining it to text just before.
fn push_text<'a>(nodes: &mut Vec<Node<'a>>, text: &'a str) {
    if !text.is_empty() {
        nodes.push(Node::Text(text));
    }
}

/// A problem for a `{{` that is almost a placeholder (`{{ token }}`, `{{Secret.key}}`).
fn near_miss(after: &str) -> Option<String> {
    let inner = after.get(2..)?;
    let trimmed = inner.trim_start().to_ascii_lowercase();
    let meant = ["secret.", "token", "base64:"]
        .into_iter()
        .find(|word| trimmed.starts_with(word))?;
    let written: String = after.chars().take(2 + meant.len() + 4).collect();
    let exact = match meant {
        "secret." => "{{secret.NAME}}",
        "token" => "{{token}}",
        _ => "{{base64:…}}",
    };
    Some(format!(
        "{written:?}… looks like a placeholder: write it exactly {exact}, in lower case and \
         without spaces"
    ))
}

/// Whether any placeholder appears in `nodes`.
fn has_placeholder(nodes: &[Node<'_>]) -> bool {
    nodes.iter().any(|node| !matches!(node, Node::Text(_)))
}

/// Whether `nodes` use `{{token}}`.
fn has_token(nodes: &[Node<'_>]) -> bool {
    nodes.iter().any(|node| match node {
        Node::Token => true,
        Node::Base64(inner) => has_token(inner),
        _ => false,
    })
}

/// Writes `nodes` with their values, `encode` applied to what each placeholder turns into.
fn render(
    nodes: &[Node<'_>],
    lookup: &impl Lookup,
    encode: fn(&str, &mut String),
    out: &mut String,
    problems: &mut Vec<String>,
) {
    for node in nodes {
        match node {
            Node::Text(text) => out.push_str(text),
            Node::Token => match lookup.token() {
                Some(token) => encode(token, out),
                None => problems.push(
                    "{{token}} is the identity token, and this tool's manifest does not ask for \
                     permissions.identity"
                        .to_owned(),
                ),
            },
            Node::Secret(name) => match lookup.secret(name) {
                Secret::Set(value) => encode(value, out),
                Secret::NotSet => problems.push(format!(
                    "{{{{secret.{name}}}}}: the secret setting {name} is not set for this \
                     tenant; an administrator sets it in Settings → Tools"
                )),
                Secret::NotSecret => problems.push(format!(
                    "{{{{secret.{name}}}}}: the setting {name} is not declared \"secret\": true; \
                     only secret settings go into placeholders"
                )),
                Secret::NotDeclared => problems.push(format!(
                    "{{{{secret.{name}}}}}: the tool declares no setting {name}"
                )),
            },
            Node::Base64(inner) => {
                let mut plain = String::new();
                render(inner, lookup, as_is, &mut plain, problems);
                encode(&STANDARD.encode(plain.as_bytes()), out);
            }
        }
    }
}

fn as_is(value: &str, out: &mut String) {
    out.push_str(value);
}

/// Percent-encodes everything but RFC 3986's unreserved characters.
fn percent_encoded(value: &str, out: &mut String) {
    const HEX: &[u8; 16] = b"0123456789ABCDEF";
    for byte in value.bytes() {
        if byte.is_ascii_alphanumeric() || matches!(byte, b'-' | b'.' | b'_' | b'~') {
            out.push(char::from(byte));
        } else {
            out.push('%');
            out.push(char::from(HEX[usize::from(byte >> 4)]));
            out.push(char::from(HEX[usize::from(byte & 0xF)]));
        }
    }
}

/// Replaces the placeholders of one text that sits at `place`.
///
/// # Errors
///
/// Each problem in words, naming the placeholder (never a value): an unclosed one, a secret
/// not declared, not secret or not set, `{{token}}` for a tool that may have none.
pub fn expand(text: &str, place: Place, lookup: &impl Lookup) -> Result<String, Vec<String>> {
    let (nodes, mut problems) = Parser::parse(text);
    let encode = match place {
        Place::Query => percent_encoded,
        Place::HeaderValue | Place::Body => as_is,
    };
    let mut out = String::with_capacity(text.len());
    render(&nodes, lookup, encode, &mut out, &mut problems);
    if problems.is_empty() {
        Ok(out)
    } else {
        Err(problems)
    }
}

/// Whether the request asks for `{{token}}` where placeholders are replaced: a caller mints a
/// token only then.
pub fn uses_token(request: &FetchRequest) -> bool {
    let query = split_url(&request.url)
        .ok()
        .and_then(|parts| parts.query_start)
        .and_then(|start| request.url.get(start..));
    let body = match &request.body {
        Some(FetchBody::Text(text)) => Some(text.as_str()),
        _ => None,
    };
    query
        .into_iter()
        .chain(request.headers.iter().map(|(_, value)| value.as_str()))
        .chain(body)
        .any(|text| has_token(&Parser::parse(text).0))
}

/// The request with every placeholder replaced: in the URL's query, the header values and a
/// text body. Call it on a request [`crate::fetch::check_request`] accepted; it checks again
/// what a value can break (a header value's length, a body's size), so that what it returns can
/// be sent as it is.
///
/// # Errors
///
/// `INVALID_PARAMS` with every problem at its path (`url`, `headers[1][1]`, `body`), naming the
/// placeholder and never a secret's value.
pub fn expand_request(request: &FetchRequest, lookup: &impl Lookup) -> Result<FetchRequest, Error> {
    let mut errors = Violations::default();
    let url = expand_url(&request.url, lookup).unwrap_or_else(|problems| {
        for problem in problems {
            errors.push("url", problem);
        }
        String::new()
    });
    let mut headers = Vec::with_capacity(request.headers.len());
    for (i, (name, value)) in request.headers.iter().enumerate() {
        let path = format!("headers[{i}][1]");
        match expand(value, Place::HeaderValue, lookup) {
            Ok(expanded) => {
                if let Err(problem) = check_header_value(&expanded) {
                    errors.push(
                        path,
                        format!("once its placeholders are replaced, {problem}"),
                    );
                }
                headers.push((name.clone(), expanded));
            }
            Err(problems) => {
                for problem in problems {
                    errors.push(path.clone(), problem);
                }
            }
        }
    }
    let body = match &request.body {
        Some(FetchBody::Text(text)) => match expand(text, Place::Body, lookup) {
            Ok(expanded) => {
                if let Err(problem) = check_body_len(expanded.len()) {
                    errors.push(
                        "body",
                        format!("once its placeholders are replaced, {problem}"),
                    );
                }
                Some(FetchBody::Text(expanded))
            }
            Err(problems) => {
                for problem in problems {
                    errors.push("body", problem);
                }
                None
            }
        },
        other => other.clone(),
    };
    errors.into_result(FetchRequest {
        url,
        method: request.method.clone(),
        headers,
        body,
    })
}

/// The URL with the placeholders of its query replaced; refused anywhere before the query.
fn expand_url(url: &str, lookup: &impl Lookup) -> Result<String, Vec<String>> {
    let parts = split_url(url).map_err(|problem| vec![problem])?;
    let (before, query) = match parts.query_start {
        Some(start) => url.split_at(start),
        None => (url, ""),
    };
    let (nodes, problems) = Parser::parse(before);
    if has_placeholder(&nodes) || !problems.is_empty() {
        return Err(vec![
            "placeholders may appear only in the URL's query (after ?), not in its scheme, \
             host or path"
                .to_owned(),
        ]);
    }
    let query = expand(query, Place::Query, lookup)?;
    Ok(format!("{before}{query}"))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::settings::SettingType;
    use proptest::prelude::*;

    fn declaration(key: &str, secret: bool) -> SettingDeclaration {
        SettingDeclaration {
            key: key.to_owned(),
            label: key.to_owned(),
            setting_type: SettingType::String,
            options: Vec::new(),
            required: false,
            default: None,
            description: None,
            secret,
        }
    }

    struct Fixture {
        declarations: Vec<SettingDeclaration>,
        secrets: BTreeMap<String, String>,
    }

    fn fixture() -> Fixture {
        Fixture {
            declarations: vec![
                declaration("user", true),
                declaration("password", true),
                declaration("key", true),
                declaration("unset", true),
                declaration("region", false),
            ],
            secrets: [
                ("user", "ann"),
                ("password", "p@ss:w{{token}}"),
                ("key", "k&y=1 2"),
            ]
            .into_iter()
            .map(|(k, v)| (k.to_owned(), v.to_owned()))
            .collect(),
        }
    }

    fn values<'a>(fixture: &'a Fixture, token: Option<&'a str>) -> Values<'a> {
        Values {
            declarations: &fixture.declarations,
            secrets: &fixture.secrets,
            token,
        }
    }

    #[test]
    fn basic_auth_is_base64_of_what_is_inside() {
        let f = fixture();
        let got = expand(
            "Basic {{base64:{{secret.user}}:{{secret.password}}}}",
            Place::HeaderValue,
            &values(&f, None),
        );
        let want = format!("Basic {}", STANDARD.encode("ann:p@ss:w{{token}}"));
        assert_eq!(got, Ok(want));
    }

    #[test]
    fn values_are_not_read_again() {
        let f = fixture();
        // The password holds `{{token}}`: it stays as it is, with no token to be had.
        assert_eq!(
            expand("{{secret.password}}", Place::Body, &values(&f, None)),
            Ok("p@ss:w{{token}}".to_owned())
        );
    }

    #[test]
    fn the_query_is_percent_encoded_and_the_path_refused() {
        let f = fixture();
        let lookup = values(&f, Some("t.o.k"));
        let request = FetchRequest {
            url: "https://api.example.com/p?k={{secret.key}}&t={{token}}&x={a}".to_owned(),
            method: "GET".to_owned(),
            headers: vec![("Authorization".to_owned(), "Bearer {{token}}".to_owned())],
            body: None,
        };
        assert!(uses_token(&request));
        let expanded = expand_request(&request, &lookup).ok();
        assert_eq!(
            expanded.as_ref().map(|r| r.url.as_str()),
            Some("https://api.example.com/p?k=k%26y%3D1%202&t=t.o.k&x={a}")
        );
        assert_eq!(
            expanded.map(|r| r.headers),
            Some(vec![(
                "Authorization".to_owned(),
                "Bearer t.o.k".to_owned()
            )])
        );
        let in_path = FetchRequest {
            url: "https://api.example.com/{{secret.key}}/x".to_owned(),
            ..request
        };
        let error = expand_request(&in_path, &lookup).err();
        assert_eq!(
            error.as_ref().map(|e| e.details()[0].path.as_str()),
            Some("url")
        );
    }

    #[test]
    fn problems_name_the_place_and_the_placeholder() {
        let f = fixture();
        let request = FetchRequest {
            url: "https://api.example.com/".to_owned(),
            method: "POST".to_owned(),
            headers: vec![
                ("A".to_owned(), "{{secret.key}}".to_owned()),
                (
                    "B".to_owned(),
                    "{{secret.nope}} {{secret.unset}}".to_owned(),
                ),
                ("C".to_owned(), "{{token}}".to_owned()),
                ("D".to_owned(), "{{secret.region}}".to_owned()),
            ],
            body: Some(FetchBody::Text("{{base64:{{secret.user}}".to_owned())),
        };
        let Err(error) = expand_request(&request, &values(&f, None)) else {
            panic!("expanded");
        };
        let found: Vec<(&str, &str)> = error
            .details()
            .iter()
            .map(|v| (v.path.as_str(), v.message.as_str()))
            .collect();
        assert_eq!(found.len(), 5, "{found:?}");
        assert_eq!(found[0].0, "headers[1][1]");
        assert!(found[0].1.contains("nope"));
        assert!(found[1].1.contains("not set"));
        assert_eq!(found[2].0, "headers[2][1]");
        assert!(found[2].1.contains("permissions.identity"));
        assert!(found[3].1.contains("not declared \"secret\""));
        assert_eq!(found[4].0, "body");
        assert!(found[4].1.contains("not closed"));
        // No value in any message.
        assert!(!error.to_string().contains("k&y"));
    }

    #[test]
    fn other_braces_are_text_and_near_misses_are_refused() {
        let f = fixture();
        let lookup = values(&f, Some("T"));
        assert_eq!(
            expand("{{name}} {{{token}}} }} {", Place::Body, &lookup),
            Ok("{{name}} {T} }} {".to_owned())
        );
        for near in ["{{ token }}", "{{Secret.key}}", "{{BASE64:x}}"] {
            assert!(expand(near, Place::Body, &lookup).is_err(), "{near}");
        }
        assert!(expand("{{secret.}}", Place::Body, &lookup).is_err());
        assert!(expand("{{secret.key", Place::Body, &lookup).is_err());
    }

    #[test]
    fn nesting_is_bounded() {
        let f = fixture();
        let lookup = values(&f, None);
        let ok = "{{base64:{{base64:{{base64:x}}}}}}";
        assert!(expand(ok, Place::Body, &lookup).is_ok());
        let deep = "{{base64:".repeat(10_000);
        assert!(expand(&deep, Place::Body, &lookup).is_err());
    }

    #[test]
    fn a_body_over_the_limit_once_replaced_is_refused() {
        let mut f = fixture();
        f.secrets.insert("key".to_owned(), "x".repeat(100));
        let text = "{{secret.key}}".repeat(crate::fetch::BODY_MAX_BYTES / 14);
        let request = FetchRequest {
            url: "https://api.example.com/".to_owned(),
            method: "POST".to_owned(),
            headers: Vec::new(),
            body: Some(FetchBody::Text(text)),
        };
        let error = expand_request(&request, &values(&f, None)).err();
        assert_eq!(
            error.as_ref().map(|e| e.details()[0].path.as_str()),
            Some("body")
        );
    }

    proptest! {
        #[test]
        fn never_panics(text in "[{}a-z.:_ ]{0,60}|.{0,60}") {
            let f = fixture();
            let lookup = values(&f, Some("tok"));
            let _ = expand(&text, Place::Query, &lookup);
            let request = FetchRequest {
                url: format!("https://a.example/?{text}"),
                method: "POST".to_owned(),
                headers: vec![("X".to_owned(), text.clone())],
                body: Some(FetchBody::Text(text.clone())),
            };
            let _ = uses_token(&request);
            let _ = expand_request(&request, &lookup);
        }

        #[test]
        fn text_without_placeholders_is_unchanged(text in "[^{]{0,80}") {
            let f = fixture();
            prop_assert_eq!(expand(&text, Place::Body, &values(&f, None)), Ok(text));
        }

        #[test]
        fn a_value_is_never_read_again(value in "[{}a-z.]{0,40}") {
            let mut f = fixture();
            f.secrets.insert("key".to_owned(), value.clone());
            prop_assert_eq!(
                expand("{{secret.key}}", Place::Body, &values(&f, Some("T"))),
                Ok(value)
            );
        }
    }
}
