//! Checking `manifest.json`.
//!
//! Every field is checked and every problem reported at once, one refusal
//! per field. Fields the manifest does not define are refused too, so that a
//! typo such as `shortname` is caught instead of the real field silently
//! being "missing" or, worse, ignored. The text fields are stored trimmed.
//!
//! The two optional fields have rules of their own, kept in the protocol
//! crate with the rest of their rules: `settings` (the install settings'
//! declarations, refused under the `settings` rule) and `permissions` (the
//! outside origins, refused under the `permissions` rule), each problem
//! with its path (`settings[1].options`).

use serde_json::{Map, Value};
use toolbridge_protocol::manifest::{Permissions, ToolManifest, ToolType, read_permissions};
use toolbridge_protocol::settings::read_declarations;
use toolbridge_protocol::value_kind;

use crate::MANIFEST;
use crate::error::{Error, Refusal, Rule};
use crate::name::{check_name, extension};

/// Longest `name`, in characters.
pub(crate) const MAX_NAME_CHARS: usize = 100;
/// Longest `shortName`, in characters.
pub(crate) const MAX_SHORT_NAME_CHARS: usize = 30;
/// Longest `description`, in characters.
pub(crate) const MAX_DESCRIPTION_CHARS: usize = 300;
/// Longest `version`, in characters.
pub(crate) const MAX_VERSION_CHARS: usize = 64;

const FIELDS: [&str; 8] = [
    "name",
    "shortName",
    "type",
    "version",
    "description",
    "entry",
    "settings",
    "permissions",
];

fn refusal(message: String) -> Refusal {
    Refusal::entry(MANIFEST, Rule::Manifest, message)
}

/// Checks `manifest.json`'s bytes; `paths` are the bundle's file paths, in
/// which the manifest's `entry` must appear.
pub(crate) fn check_manifest(bytes: &[u8], paths: &[&str]) -> Result<ToolManifest, Error> {
    let bytes = bytes.strip_prefix(b"\xEF\xBB\xBF").unwrap_or(bytes);
    let text = std::str::from_utf8(bytes)
        .map_err(|_| refusal("the file is not valid UTF-8 text; save it as UTF-8".to_owned()))?;
    let value: Value = serde_json::from_str(text)
        .map_err(|error| refusal(format!("the file is not valid JSON: {error}")))?;
    let Value::Object(object) = value else {
        return Err(refusal(format!(
            "the file must hold one JSON object with the fields {}; it holds {}",
            FIELDS.join(", "),
            value_kind(&value)
        ))
        .into());
    };

    let mut refusals = Vec::new();
    for key in object.keys() {
        if !FIELDS.contains(&key.as_str()) {
            let hint = FIELDS
                .iter()
                .find(|field| field.eq_ignore_ascii_case(key))
                .map(|field| format!(" (did you mean \"{field}\"?)"))
                .unwrap_or_default();
            refusals.push(refusal(format!(
                "{key}: unknown field{hint}; the fields are {}",
                FIELDS.join(", ")
            )));
        }
    }

    let name = text_field(&object, "name", MAX_NAME_CHARS, &mut refusals);
    let short_name = text_field(&object, "shortName", MAX_SHORT_NAME_CHARS, &mut refusals);
    let description = text_field(&object, "description", MAX_DESCRIPTION_CHARS, &mut refusals);
    let tool_type = string_field(&object, "type", &mut refusals).and_then(|token| {
        let parsed = ToolType::from_token(token);
        if parsed.is_none() {
            let tokens: Vec<&str> = ToolType::ALL.iter().map(|t| t.token()).collect();
            refusals.push(refusal(format!(
                "type: {token:?} is not a tool type; use one of {}",
                tokens.join(", ")
            )));
        }
        parsed
    });
    let version = string_field(&object, "version", &mut refusals).and_then(|version| {
        check_version(version)
            .map_err(|message| refusals.push(refusal(message)))
            .ok()
    });
    let entry = string_field(&object, "entry", &mut refusals).and_then(|entry| {
        check_entry(entry, paths)
            .map_err(|(rule, message)| {
                refusals.push(Refusal::entry(MANIFEST, rule, message));
            })
            .ok()
    });

    let settings = match object.get("settings") {
        None => Vec::new(),
        Some(value) => read_declarations(value).unwrap_or_else(|error| {
            refused(Rule::Settings, &error, &mut refusals);
            Vec::new()
        }),
    };
    let permissions = match object.get("permissions") {
        None => Permissions::default(),
        Some(value) => read_permissions(value).unwrap_or_else(|error| {
            refused(Rule::Permissions, &error, &mut refusals);
            Permissions::default()
        }),
    };

    match (name, short_name, tool_type, version, description, entry) {
        (
            Some(name),
            Some(short_name),
            Some(tool_type),
            Some(version),
            Some(description),
            Some(entry),
        ) if refusals.is_empty() => Ok(ToolManifest {
            name,
            short_name,
            tool_type,
            version,
            description,
            entry,
            settings,
            permissions,
        }),
        _ => Err(Error::Refused(refusals)),
    }
}

/// One refusal under `rule` for each problem the protocol found, its path
/// first: `settings[1].options: …`.
fn refused(rule: Rule, error: &toolbridge_protocol::Error, refusals: &mut Vec<Refusal>) {
    for violation in error.details() {
        refusals.push(Refusal::entry(MANIFEST, rule, violation.to_string()));
    }
}

/// A required string field, as written.
fn string_field<'a>(
    object: &'a Map<String, Value>,
    field: &str,
    refusals: &mut Vec<Refusal>,
) -> Option<&'a str> {
    match object.get(field) {
        None => {
            refusals.push(refusal(format!(
                "{field}: missing; it is required (a string)"
            )));
            None
        }
        Some(Value::String(text)) => Some(text),
        Some(other) => {
            refusals.push(refusal(format!(
                "{field}: must be a string, not {}",
                value_kind(other)
            )));
            None
        }
    }
}

/// A required display text: trimmed, not empty, no control characters, at
/// most `max` characters.
fn text_field(
    object: &Map<String, Value>,
    field: &str,
    max: usize,
    refusals: &mut Vec<Refusal>,
) -> Option<String> {
    let text = string_field(object, field, refusals)?.trim();
    let problem = if text.is_empty() {
        Some("must not be empty".to_owned())
    } else if text.chars().any(char::is_control) {
        Some("must be one line of text without control characters".to_owned())
    } else {
        let chars = text.chars().count();
        (chars > max).then(|| format!("is {chars} characters long; at most {max} are allowed"))
    };
    match problem {
        Some(problem) => {
            refusals.push(refusal(format!("{field}: {problem}")));
            None
        }
        None => Some(text.to_owned()),
    }
}

fn check_version(version: &str) -> Result<String, String> {
    if version.chars().count() > MAX_VERSION_CHARS {
        return Err(format!(
            "version: is longer than {MAX_VERSION_CHARS} characters"
        ));
    }
    semver::Version::parse(version)
        .map(|_| version.to_owned())
        .map_err(|error| {
            format!(
                "version: {version:?} is not a semver version ({error}); write it like \"1.0.0\""
            )
        })
}

fn check_entry(entry: &str, paths: &[&str]) -> Result<String, (Rule, String)> {
    if let Err(problem) = check_name(entry) {
        return Err((
            Rule::Manifest,
            format!("entry: {entry:?} is not a usable path: {problem}"),
        ));
    }
    if extension(entry).as_deref() != Some("html") {
        return Err((
            Rule::Manifest,
            format!("entry: {entry:?} must be an .html file"),
        ));
    }
    if !paths.contains(&entry) {
        return Err((
            Rule::EntryMissing,
            format!(
                "entry: {entry:?} is not a file in the bundle; it must name the bundle's HTML page"
            ),
        ));
    }
    Ok(entry.to_owned())
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]
    use super::*;

    const PATHS: [&str; 2] = ["manifest.json", "index.html"];

    fn good() -> Value {
        serde_json::json!({
            "name": "Roof Estimator",
            "shortName": "Roof",
            "type": "quoting_extension",
            "version": "1.2.0",
            "description": "Estimates roofing jobs.",
            "entry": "index.html"
        })
    }

    fn check(value: &Value) -> Result<ToolManifest, Error> {
        check_manifest(value.to_string().as_bytes(), &PATHS)
    }

    fn messages(value: &Value) -> Vec<String> {
        check(value)
            .unwrap_err()
            .refusals()
            .iter()
            .map(|r| r.message.clone())
            .collect()
    }

    #[test]
    fn a_good_manifest_passes() {
        let manifest = check(&good()).unwrap();
        assert_eq!(manifest.tool_type, ToolType::QuotingExtension);
        assert_eq!(manifest.entry, "index.html");
    }

    #[test]
    fn every_bad_field_is_reported() {
        let bad = serde_json::json!({
            "name": " ",
            "shortname": "Roof",
            "type": "widget",
            "version": "1.0",
            "description": 5,
            "entry": "missing.html",
        });
        let messages = messages(&bad);
        assert_eq!(messages.len(), 7, "{messages:#?}");
        assert!(
            messages
                .iter()
                .any(|m| m.starts_with("shortname: unknown field (did you mean \"shortName\"?)"))
        );
        assert!(messages.iter().any(|m| m.starts_with("shortName: missing")));
        assert!(
            messages
                .iter()
                .any(|m| m.starts_with("name: must not be empty"))
        );
        assert!(messages.iter().any(|m| m.starts_with("type: \"widget\"")));
        assert!(
            messages
                .iter()
                .any(|m| m.starts_with("version: \"1.0\" is not a semver version"))
        );
        assert!(
            messages
                .iter()
                .any(|m| m.starts_with("description: must be a string"))
        );
        assert!(
            messages
                .iter()
                .any(|m| m.starts_with("entry: \"missing.html\""))
        );
    }

    #[test]
    fn limits_and_shapes() {
        let mut long = good();
        long["shortName"] = Value::from("x".repeat(31));
        assert_eq!(messages(&long).len(), 1);
        let mut trimmed = good();
        trimmed["name"] = Value::from("  Roof  ");
        assert_eq!(check(&trimmed).unwrap().name, "Roof");
        for entry in ["../index.html", "index.js", "/index.html"] {
            let mut bad = good();
            bad["entry"] = Value::from(entry);
            assert_eq!(messages(&bad).len(), 1, "{entry}");
        }
        assert!(check_manifest(b"[]", &PATHS).is_err());
        assert!(check_manifest(b"\xff", &PATHS).is_err());
        let with_bom = [b"\xEF\xBB\xBF".as_slice(), good().to_string().as_bytes()].concat();
        assert!(check_manifest(&with_bom, &PATHS).is_ok());
    }
}
