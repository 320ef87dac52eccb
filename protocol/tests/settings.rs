//! Install settings and outside origins: the declarations a manifest makes,
//! the values a tenant sets, the values a tool sees, and the origins a
//! manifest may name.

// Test code: a panic is how a helper reports a failed expectation.
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

use proptest::prelude::*;
use serde_json::{Value, json};
use std::collections::BTreeSet;
use toolbridge_protocol::manifest::{ToolManifest, check_connect_origin, read_permissions};

use toolbridge_protocol::settings::{
    SettingDeclaration, SettingValue, SettingValues, check_update, check_values, effective_values,
    read_declarations, retained_values, secret_is_retained, values_to_json,
};
use toolbridge_protocol::{Error, ErrorCode, Violation};

/// The shared interface's example: one setting of each type.
fn declarations() -> Vec<SettingDeclaration> {
    read_declarations(&json!([
        {"key": "wastePercent", "label": "Waste allowance (%)", "type": "number", "default": 10,
         "description": "Added to every room's area."},
        {"key": "region", "label": "Region", "type": "select", "options": ["North", "South"], "required": true},
        {"key": "supplier", "label": "Default supplier", "type": "string"},
        {"key": "showCost", "label": "Show cost", "type": "boolean", "default": false}
    ]))
    .unwrap()
}

/// `(path, message)` of every violation.
fn problems(error: &Error) -> Vec<(String, String)> {
    assert_eq!(error.code(), ErrorCode::InvalidParams, "{error}");
    listed(error.details())
}

fn listed(violations: &[Violation]) -> Vec<(String, String)> {
    violations
        .iter()
        .map(|v| (v.path.clone(), v.message.clone()))
        .collect()
}

fn refused(values: &Value) -> Vec<(String, String)> {
    listed(&check_values(&declarations(), values).unwrap_err())
}

fn values(json: &Value) -> SettingValues {
    serde_json::from_value(json.clone()).unwrap()
}

#[test]
fn valid_values_are_kept_and_empty_text_is_unset() {
    let checked = check_values(
        &declarations(),
        &json!({"wastePercent": 12.5, "region": "North", "supplier": "", "showCost": true}),
    )
    .unwrap();
    assert_eq!(
        values_to_json(&checked),
        json!({"wastePercent": 12.5, "region": "North", "showCost": true})
    );
}

#[test]
fn each_invalid_value_is_named_by_its_key() {
    let found = refused(&json!({
        "wastePercent": "12",
        "region": "East",
        "supplier": "a\nb",
        "showCost": "yes",
        "colour": "red"
    }));
    let paths: Vec<&str> = found.iter().map(|(path, _)| path.as_str()).collect();
    assert_eq!(
        paths,
        ["colour", "region", "showCost", "supplier", "wastePercent"],
        "{found:?}"
    );
    let message = |key: &str| {
        found
            .iter()
            .find(|(path, _)| path == key)
            .map(|(_, message)| message.clone())
            .unwrap()
    };
    assert_eq!(message("wastePercent"), "must be a number, not a string");
    assert!(
        message("region").starts_with("\"East\" is not one of its options: North, South"),
        "{found:?}"
    );
    assert!(message("colour").starts_with("is not a setting of this tool; its settings are"));
    assert!(message("showCost").starts_with("must be true or false"));
    assert!(message("supplier").contains("control characters"));
}

#[test]
fn a_required_setting_needs_a_value_or_a_default() {
    for body in [json!({}), json!({"region": ""})] {
        let found = refused(&body);
        assert_eq!(found.len(), 1, "{found:?}");
        assert_eq!(found[0].0, "region");
        assert!(found[0].1.starts_with("is required"), "{found:?}");
    }
    // A required setting with a default is satisfied by it.
    let with_default = read_declarations(&json!([
        {"key": "region", "label": "Region", "type": "select", "options": ["North"], "required": true, "default": "North"}
    ]))
    .unwrap();
    assert_eq!(
        check_values(&with_default, &json!({})).unwrap(),
        values(&json!({}))
    );
}

#[test]
fn strings_are_bounded_and_the_body_must_be_an_object() {
    let long = "x".repeat(1001);
    let found = refused(&json!({"region": "North", "supplier": long}));
    assert_eq!(found[0].0, "supplier");
    assert!(found[0].1.starts_with("must be at most 1000 characters"));
    assert!(
        check_values(
            &declarations(),
            &json!({"region": "North", "supplier": "x".repeat(1000)})
        )
        .is_ok()
    );
    for body in [json!([]), json!("x"), Value::Null] {
        let found = listed(&check_values(&declarations(), &body).unwrap_err());
        assert_eq!(found[0].0, "", "{body}");
    }
    // A null is not a way to unset a value: leave the key out.
    assert_eq!(
        refused(&json!({"region": "North", "wastePercent": null}))[0].0,
        "wastePercent"
    );
}

#[test]
fn a_tool_without_settings_takes_only_an_empty_object() {
    assert!(check_values(&[], &json!({})).unwrap().is_empty());
    let found = listed(&check_values(&[], &json!({"a": 1})).unwrap_err());
    assert_eq!(
        found,
        [(
            "a".to_owned(),
            "is not a setting of this tool; it declares no settings".to_owned()
        )]
    );
}

#[test]
fn effective_values_lay_stored_values_over_defaults() {
    let stored = values(&json!({"region": "South", "supplier": "Acme"}));
    assert_eq!(
        values_to_json(&effective_values(&declarations(), &stored)),
        json!({"wastePercent": 10, "region": "South", "supplier": "Acme", "showCost": false})
    );
    // Nothing stored: only the defaults; a key with neither is absent.
    assert_eq!(
        values_to_json(&effective_values(&declarations(), &SettingValues::new())),
        json!({"wastePercent": 10, "showCost": false})
    );
}

#[test]
fn stored_values_that_no_longer_fit_are_dropped() {
    let stored = values(
        &json!({"wastePercent": 12, "region": "South", "supplier": "Acme", "showCost": true}),
    );
    // The next version: region lost "South", supplier became a number, showCost is gone.
    let next = read_declarations(&json!([
        {"key": "wastePercent", "label": "Waste", "type": "number", "default": 5},
        {"key": "region", "label": "Region", "type": "select", "options": ["North", "East"], "default": "North"},
        {"key": "supplier", "label": "Supplier id", "type": "number"}
    ]))
    .unwrap();
    assert_eq!(
        values_to_json(&retained_values(&next, &stored)),
        json!({"wastePercent": 12})
    );
    assert_eq!(
        values_to_json(&effective_values(&next, &stored)),
        json!({"wastePercent": 12, "region": "North"})
    );
}

#[test]
fn declarations_round_trip_through_a_stored_manifest() {
    let manifest = json!({
        "name": "Flooring", "shortName": "Floor", "type": "quoting_extension", "version": "1.0.0",
        "description": "d", "entry": "index.html",
        "settings": [
            {"key": "wastePercent", "label": "Waste allowance (%)", "type": "number", "required": false, "default": 10},
            {"key": "region", "label": "Region", "type": "select", "options": ["North", "South"], "required": true}
        ],
        "permissions": {"connect": ["https://api.vendor.example"]}
    });
    let read: ToolManifest = serde_json::from_value(manifest.clone()).unwrap();
    assert_eq!(
        read.settings,
        read_declarations(&manifest["settings"]).unwrap()
    );
    assert_eq!(serde_json::to_value(&read).unwrap(), manifest);
    // A manifest stored before these fields existed still reads.
    let mut old = manifest;
    old.as_object_mut().unwrap().remove("settings");
    old.as_object_mut().unwrap().remove("permissions");
    let read: ToolManifest = serde_json::from_value(old.clone()).unwrap();
    assert!(read.settings.is_empty() && read.permissions.connect.is_empty());
    assert_eq!(serde_json::to_value(&read).unwrap(), old);
}

#[test]
fn every_declaration_problem_is_reported_at_once() {
    let error = read_declarations(&json!([
        {"key": "1x", "label": "", "type": "select", "options": ["a", "a"], "extra": 1},
        {"key": "ok", "label": "Ok", "type": "number", "default": "7"}
    ]))
    .unwrap_err();
    let paths: Vec<String> = problems(&error).into_iter().map(|(path, _)| path).collect();
    assert_eq!(
        paths,
        [
            "settings[0].extra",
            "settings[0].key",
            "settings[0].label",
            "settings[0].options[1]",
            "settings[1].default"
        ]
    );
}

/// A tool with a secret API key (required) and an optional secret password beside a plain
/// setting.
fn with_secrets() -> Vec<SettingDeclaration> {
    read_declarations(&json!([
        {"key": "region", "label": "Region", "type": "string"},
        {"key": "apiKey", "label": "API key", "type": "string", "secret": true, "required": true},
        {"key": "password", "label": "Password", "type": "string", "secret": true}
    ]))
    .unwrap()
}

#[test]
fn only_a_string_setting_without_default_can_be_secret() {
    let error = read_declarations(&json!([
        {"key": "a", "label": "A", "type": "number", "secret": true},
        {"key": "b", "label": "B", "type": "string", "secret": true, "default": "x"},
        {"key": "c", "label": "C", "type": "string", "secret": "yes"}
    ]))
    .unwrap_err();
    let paths: Vec<String> = problems(&error).into_iter().map(|(path, _)| path).collect();
    assert_eq!(
        paths,
        [
            "settings[0].secret",
            "settings[1].default",
            "settings[2].secret"
        ]
    );
    let declared = with_secrets();
    assert!(declared[1].secret && !declared[0].secret);
    // The flag travels with a stored manifest, and is left out when false.
    let stored = serde_json::to_value(&declared).unwrap();
    assert_eq!(stored[1]["secret"], json!(true));
    assert!(stored[0].get("secret").is_none());
}

#[test]
fn an_update_takes_secrets_apart_and_never_echoes_them() {
    let declared = with_secrets();
    let none = BTreeSet::new();
    let update = check_update(
        &declared,
        &json!({"region": "North", "apiKey": "k-123", "password": null}),
        &none,
    )
    .unwrap();
    assert_eq!(values_to_json(&update.values), json!({"region": "North"}));
    assert_eq!(
        update.secrets.get("apiKey"),
        Some(&Some("k-123".to_owned()))
    );
    assert_eq!(update.secrets.get("password"), Some(&None));
    // Left out, a set secret stays; a required one never set is refused.
    let set: BTreeSet<String> = ["apiKey".to_owned()].into();
    let kept = check_update(&declared, &json!({}), &set).unwrap();
    assert!(kept.secrets.is_empty());
    let found = listed(&check_update(&declared, &json!({}), &none).unwrap_err());
    assert_eq!(found[0].0, "apiKey");
    let found = listed(
        &check_update(
            &declared,
            &json!({"apiKey": 42, "password": "a\nb", "nope": "x"}),
            &set,
        )
        .unwrap_err(),
    );
    let paths: Vec<&str> = found.iter().map(|(path, _)| path.as_str()).collect();
    assert_eq!(paths, ["nope", "apiKey", "password"]);
    assert!(found.iter().all(|(_, message)| !message.contains("a\nb")));
    // Secrets are never among the values a tool reads, nor kept as plain values.
    assert!(check_values(&declared, &json!({"apiKey": "k"})).is_err());
    let stored = values(&json!({"region": "N", "apiKey": "old plain value"}));
    assert_eq!(
        values_to_json(&effective_values(&declared, &stored)),
        json!({"region": "N"})
    );
    assert_eq!(
        values_to_json(&retained_values(&declared, &stored)),
        json!({"region": "N"})
    );
    assert!(secret_is_retained(&declared, "apiKey"));
    assert!(!secret_is_retained(&declared, "region"));
    assert!(!secret_is_retained(&declared, "gone"));
}

#[test]
fn permissions_read_their_origins_in_order() {
    let read =
        read_permissions(&json!({"connect": ["https://b.example", "https://a.example:8443"]}))
            .unwrap();
    assert_eq!(
        read.connect,
        ["https://b.example", "https://a.example:8443"]
    );
    assert!(read_permissions(&json!({})).unwrap().connect.is_empty());
    let found = problems(
        &read_permissions(&json!({"connect": ["http://a.example"], "storage": true})).unwrap_err(),
    );
    let paths: Vec<&str> = found.iter().map(|(path, _)| path.as_str()).collect();
    assert_eq!(paths, ["permissions.storage", "permissions.connect[0]"]);
}

#[test]
fn permissions_identity_is_a_boolean_false_when_absent() {
    let read = read_permissions(&json!({"identity": true})).unwrap();
    assert!(read.identity && read.connect.is_empty() && !read.is_empty());
    assert!(!read_permissions(&json!({})).unwrap().identity);
    assert!(
        !read_permissions(&json!({"identity": false}))
            .unwrap()
            .identity
    );
    assert!(
        read_permissions(&json!({"identity": false}))
            .unwrap()
            .is_empty()
    );
    for wrong in [json!("true"), json!(1), json!({}), json!([true])] {
        let found = problems(&read_permissions(&json!({"identity": wrong})).unwrap_err());
        assert_eq!(found.len(), 1, "{wrong}: {found:?}");
        assert_eq!(found[0].0, "permissions.identity", "{wrong}");
        assert!(found[0].1.starts_with("must be true or false"), "{found:?}");
    }
    // The permission survives the manifest's round trip, and is left out when not asked for.
    let manifest: ToolManifest = serde_json::from_value(json!({
        "name": "Vendor prices", "shortName": "Prices", "type": "standalone", "version": "1.0.0",
        "description": "Prices from the vendor.", "entry": "index.html",
        "permissions": {"connect": ["https://api.vendor.example"], "identity": true}
    }))
    .unwrap();
    assert!(manifest.permissions.identity);
    let written = serde_json::to_value(&manifest).unwrap();
    assert_eq!(written["permissions"]["identity"], true);
    let mut without = manifest.clone();
    without.permissions.identity = false;
    let written = serde_json::to_value(&without).unwrap();
    assert!(
        written["permissions"].get("identity").is_none(),
        "{written}"
    );
}

/// A DNS label: lower-case letters, digits and inner hyphens.
fn label() -> impl Strategy<Value = String> {
    "[a-z0-9]([a-z0-9-]{0,20}[a-z0-9])?".prop_filter("not all digits", |label| {
        !label.bytes().all(|b| b.is_ascii_digit())
    })
}

fn origin() -> impl Strategy<Value = String> {
    (
        proptest::collection::vec(label(), 1..4),
        proptest::option::of(1u32..=65_535),
    )
        .prop_filter("no :443", |(_, port)| *port != Some(443))
        .prop_map(|(labels, port)| {
            let host = labels.join(".");
            match port {
                Some(port) => format!("https://{host}:{port}"),
                None => format!("https://{host}"),
            }
        })
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(2_000))]

    /// Every origin of the allowed form passes, and no change of it that
    /// leaves the form (a path, a slash, upper case, http, a wildcard, a
    /// user name) does.
    #[test]
    fn origins_pass_exactly_in_their_one_form(origin in origin(), cut in 8usize..40) {
        prop_assert_eq!(check_connect_origin(&origin), Ok(()));
        let host_start = "https://".len();
        let altered = [
            format!("{origin}/"),
            format!("{origin}/v1/prices"),
            format!("{origin}?q=1"),
            origin.replacen("https://", "http://", 1),
            origin.replacen("https://", "https://*.", 1),
            origin.replacen("https://", "https://me@", 1),
            format!("{}{}", &origin[..host_start], origin[host_start..].to_ascii_uppercase()),
        ];
        for bad in &altered {
            // Upper-casing digits alone changes nothing.
            if bad != &origin {
                prop_assert!(check_connect_origin(bad).is_err(), "{} passed", bad);
            }
        }
        // A prefix is either the same form (a shorter host or port) or refused; never a crash.
        let _ = check_connect_origin(&origin[..cut.min(origin.len())]);
    }

    /// What `check_values` accepts is what a tool then sees, and a stored
    /// value never makes a key disappear that has a default.
    #[test]
    fn accepted_values_are_the_values_seen(
        waste in proptest::option::of(-1.0e6f64..1.0e6),
        region in proptest::option::of(prop::sample::select(vec!["North", "South"])),
        supplier in proptest::option::of("[ -~]{0,40}"),
        show in proptest::option::of(any::<bool>()),
    ) {
        let mut body = serde_json::Map::new();
        if let Some(waste) = waste { body.insert("wastePercent".into(), json!(waste)); }
        body.insert("region".into(), json!(region.unwrap_or("North")));
        if let Some(supplier) = &supplier { body.insert("supplier".into(), json!(supplier)); }
        if let Some(show) = show { body.insert("showCost".into(), json!(show)); }
        let checked = check_values(&declarations(), &Value::Object(body)).unwrap();
        let seen = effective_values(&declarations(), &checked);
        for (key, value) in &checked {
            prop_assert_eq!(seen.get(key), Some(value));
        }
        prop_assert!(seen.contains_key("wastePercent") && seen.contains_key("showCost"));
        prop_assert_eq!(seen.contains_key("supplier"), supplier.is_some_and(|s| !s.is_empty()));
        prop_assert_eq!(retained_values(&declarations(), &checked), checked);
    }
}

#[test]
fn a_number_keeps_its_json_form() {
    let checked = check_values(
        &declarations(),
        &json!({"region": "North", "wastePercent": 10}),
    )
    .unwrap();
    assert_eq!(
        checked.get("wastePercent"),
        Some(&SettingValue::Number(10.into()))
    );
    assert_eq!(
        values_to_json(&checked).to_string(),
        r#"{"region":"North","wastePercent":10}"#
    );
}
