//! Conditional requests. GETs: a resource with a version answers `304 Not
//! Modified` to an `If-None-Match` that names it, and always carries its
//! `ETag`. Changes to a quote: its `ETag` names its version, and `If-Match`
//! says which versions a change was made against.

use axum::http::{HeaderMap, HeaderValue, StatusCode, header};
use axum::response::{IntoResponse, Response};
use toolbridge_protocol::versions::{if_match_invalid, versions_named};
use toolbridge_store::Expected;

/// `304` when `If-None-Match` names `version`, else `body()`; either way
/// with `ETag: "<version>"` and `Cache-Control: <cache_control>`.
pub fn respond(
    headers: &HeaderMap,
    version: &str,
    cache_control: &'static str,
    body: impl FnOnce() -> Response,
) -> Response {
    let etag = format!("\"{version}\"");
    let fresh = headers
        .get(header::IF_NONE_MATCH)
        .and_then(|value| value.to_str().ok())
        .is_some_and(|sent| sent.split(',').any(|tag| tag.trim() == etag));
    let mut response = if fresh {
        StatusCode::NOT_MODIFIED.into_response()
    } else {
        body()
    };
    if let Ok(value) = HeaderValue::from_str(&etag) {
        response.headers_mut().insert(header::ETAG, value);
    }
    response.headers_mut().insert(
        header::CACHE_CONTROL,
        HeaderValue::from_static(cache_control),
    );
    response
}

/// What the request's `If-Match` asks of quote `quote_id`'s version, by the protocol's rule
/// ([`versions_named`]): [`Expected::Any`] without one or for `*`, else the versions its strong
/// entity tags name of this quote. `INVALID_PARAMS` at `If-Match` for a header that is neither.
pub fn expected(
    headers: &HeaderMap,
    quote_id: &str,
) -> Result<Expected, toolbridge_protocol::Error> {
    let values = headers
        .get_all(header::IF_MATCH)
        .iter()
        .map(|value| value.to_str().map_err(|_| if_match_invalid()))
        .collect::<Result<Vec<&str>, _>>()?;
    Ok(match versions_named(&values, quote_id)? {
        None => Expected::Any,
        Some(versions) => Expected::OneOf(versions),
    })
}

#[cfg(test)]
mod tests {
    use toolbridge_protocol::versions::{IF_MATCH_PATTERN, quote_etag};

    use super::*;

    const ID: &str = "8f14e45f-ceea-467f-a9f1-3a1c3b2f9c11";

    fn with(values: &[&str]) -> HeaderMap {
        let mut headers = HeaderMap::new();
        for value in values {
            headers.append(header::IF_MATCH, HeaderValue::from_str(value).unwrap());
        }
        headers
    }

    #[test]
    fn every_if_match_line_counts_and_none_asks_nothing() {
        assert_eq!(expected(&HeaderMap::new(), ID).unwrap(), Expected::Any);
        assert_eq!(expected(&with(&["*"]), ID).unwrap(), Expected::Any);
        assert_eq!(
            expected(&with(&["\"a\"", &quote_etag(ID, 2)]), ID).unwrap(),
            Expected::OneOf(vec![2])
        );
        assert_eq!(
            expected(&with(&["\"\""]), ID).unwrap(),
            Expected::OneOf(vec![])
        );
        let mut opaque = HeaderMap::new();
        opaque.append(
            header::IF_MATCH,
            HeaderValue::from_bytes(b"\"caf\xe9\"").unwrap(),
        );
        let error = expected(&opaque, ID).unwrap_err();
        assert_eq!(error.details()[0].path, "If-Match");
    }

    #[test]
    fn the_documented_pattern_takes_exactly_the_if_match_the_server_takes() {
        let pattern = regex_lite::Regex::new(IF_MATCH_PATTERN).unwrap();
        let values = [
            "",
            "*",
            "\"a\"",
            "W/\"a\"",
            "\"\"",
            "\"a\",\"b\"",
            "\"a\" , W/\"b\"",
            "\"a\"\t,\t\"b\"",
            "\"!#~\"",
            "a",
            "\"a",
            "a\"",
            "\"a\"\"b\"",
            "\"a\",",
            ",\"a\"",
            "\"a\",,\"b\"",
            "*, \"a\"",
            "**",
            "w/\"a\"",
            "W/ \"a\"",
            "\"a b\"",
            "\"a\" ",
            " \"a\"",
        ];
        for value in values {
            let taken = expected(&with(&[value]), ID).is_ok();
            assert_eq!(pattern.is_match(value), taken, "{value:?}");
        }
    }
}
