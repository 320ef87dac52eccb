//! Quote versions on the wire: the `ETag` that names a version of a quote, and what an
//! `If-Match` asks of it. The server and the test kit's memory backend both answer by these
//! rules; the host module only sends back the `ETag` it was given.

use crate::catalog::id_key;
use crate::error::Error;

/// The `ETag` of version `version` of the quote `quote_id` (the id as stored): a strong
/// validator, `"<id>/v<version>"`.
pub fn quote_etag(quote_id: &str, version: u64) -> String {
    format!("\"{quote_id}/v{version}\"")
}

/// What `If-Match` may be, as the OpenAPI document states it: `*`, or a list of entity tags
/// separated by commas (spaces or tabs around each comma), each in double quotes, strong or weak
/// (`W/`), of visible ASCII but `"`. The list may be empty (RFC 9110's `#entity-tag`), and then
/// names no version. [`versions_named`] takes exactly these.
pub const IF_MATCH_PATTERN: &str =
    r#"^(\*|((W/)?"[\x21\x23-\x7E]*"([ \t]*,[ \t]*(W/)?"[\x21\x23-\x7E]*")*)?)$"#;

/// `INVALID_PARAMS` at `If-Match`, for one that is neither `*` nor a list of entity tags.
pub fn if_match_invalid() -> Error {
    Error::invalid(
        "If-Match",
        "must be * or a list of entity tags in double quotes, such as the ETag of \
         GET /api/v1/quotes/{id}",
    )
}

/// The versions of quote `quote_id` that the `If-Match` header lines `values` name: `None` for
/// any (no `If-Match` at all, or `*`); otherwise those its strong entity tags name of this quote
/// (a weak tag, or one of another quote or in another form, names none: strong comparison, RFC
/// 9110 §13.1.1), which may be none at all (an empty `If-Match` lists none). [`if_match_invalid`] for a line that is neither `*`
/// nor a list of entity tags ([`IF_MATCH_PATTERN`]).
pub fn versions_named(values: &[&str], quote_id: &str) -> Result<Option<Vec<u64>>, Error> {
    if values.is_empty() {
        return Ok(None);
    }
    let mut tags = Vec::new();
    for value in values {
        if *value == "*" {
            return Ok(None);
        }
        if !value.is_empty() {
            tags.extend(entity_tags(value).ok_or_else(if_match_invalid)?);
        }
    }
    let quote_id = id_key(quote_id);
    let version_of = |(weak, opaque): (bool, &str)| {
        let (id, digits) = opaque.rsplit_once("/v")?;
        let version: u64 = digits.parse().ok()?;
        // Strong comparison: the very text of this quote's tag for that version.
        (!weak && id == quote_id && digits == version.to_string()).then_some(version)
    };
    Ok(Some(tags.into_iter().filter_map(version_of).collect()))
}

/// The entity tags of a list (`"a", W/"b"`): whether each is weak, and what is between its
/// quotes; `None` unless `text` is such a list and nothing else.
fn entity_tags(text: &str) -> Option<Vec<(bool, &str)>> {
    let mut tags = Vec::new();
    let mut rest = text;
    loop {
        let (weak, tagged) = match rest.strip_prefix("W/") {
            Some(tagged) => (true, tagged),
            None => (false, rest),
        };
        let inner = tagged.strip_prefix('"')?;
        let end = inner.find('"')?;
        let opaque = &inner[..end];
        if !opaque.bytes().all(|byte| (0x21..=0x7E).contains(&byte)) {
            return None;
        }
        tags.push((weak, opaque));
        let after = &inner[end + 1..];
        if after.is_empty() {
            return Some(tags);
        }
        rest = after
            .trim_start_matches([' ', '\t'])
            .strip_prefix(',')?
            .trim_start_matches([' ', '\t']);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const ID: &str = "8f14e45f-ceea-467f-a9f1-3a1c3b2f9c11";

    fn named(values: &[&str]) -> Result<Option<Vec<u64>>, Error> {
        versions_named(values, ID)
    }

    #[test]
    fn the_etag_names_the_quote_and_its_version_and_if_match_reads_it_back() {
        let etag = quote_etag(ID, 7);
        assert_eq!(etag, format!("\"{ID}/v7\""));
        assert_eq!(named(&[&etag]).unwrap(), Some(vec![7]));
        // The id as a URL may spell it.
        let spelt = format!("{{{}}}", ID.to_uppercase());
        assert_eq!(versions_named(&[&etag], &spelt).unwrap(), Some(vec![7]));
    }

    #[test]
    fn if_match_names_versions_of_this_quote_only_and_strongly() {
        let other = quote_etag("00000000-0000-4000-8000-000000000000", 3);
        let list = format!(
            "{other}, W/\"{ID}/v4\",\t\"{ID}/v5\" ,\"{ID}/vx\", \"x\", \"{ID}/v06\", \"{ID}/v6\""
        );
        assert_eq!(named(&[&list]).unwrap(), Some(vec![5, 6]));
        assert_eq!(
            named(&["\"a\"", &quote_etag(ID, 2)]).unwrap(),
            Some(vec![2])
        );
        assert_eq!(named(&[]).unwrap(), None);
        assert_eq!(named(&["*"]).unwrap(), None);
        assert_eq!(named(&["\"\""]).unwrap(), Some(vec![]));
        assert_eq!(named(&[""]).unwrap(), Some(vec![]), "an empty list");
    }

    #[test]
    fn what_is_no_list_of_entity_tags_is_refused_at_if_match() {
        for value in [
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
            "\"é\"",
        ] {
            let error = named(&[value]).unwrap_err();
            assert_eq!(error.details()[0].path, "If-Match", "{value:?}");
        }
    }
}
