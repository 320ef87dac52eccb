//! Install settings: what a tool's manifest declares (`settings`), the
//! values an administrator sets for a tenant, and the values a tool reads.
//!
//! The manifest declares each setting with a key, a label, a type (`string`,
//! `number`, `boolean` or `select`) and optionally its options, whether it is
//! required, a default and a description ([`read_declarations`]). An
//! administrator sets the values of one tenant as one JSON object, key to
//! value ([`check_values`]). A tool reads the *effective* values: the
//! declared defaults with the stored values that still fit the current
//! declarations laid over them ([`effective_values`]).
//!
//! The values are not secrets: every user of the tenant's tools can read
//! them. A `string` setting declared `"secret": true` is the exception: its
//! value is write-only ([`check_update`] takes it apart from the others), is
//! never among the values a tool reads, and is used only by the server, in the
//! placeholders of a request it makes for the tool ([`crate::placeholders`]).

use std::collections::{BTreeMap, BTreeSet};
use std::fmt;

use serde::{Deserialize, Serialize};
use serde_json::{Map, Value};

use crate::Error;
use crate::error::{Violation, Violations};
use crate::input::{Fields, index, kind};

/// Most settings one manifest may declare.
pub const MAX_SETTINGS: usize = 20;
/// Longest setting key, in characters.
pub const KEY_MAX_CHARS: usize = 40;
/// Longest label, in characters.
pub const LABEL_MAX_CHARS: usize = 100;
/// Longest description, in characters.
pub const DESCRIPTION_MAX_CHARS: usize = 300;
/// Most options of a `select` setting.
pub const MAX_OPTIONS: usize = 50;
/// Longest option, in characters.
pub const OPTION_MAX_CHARS: usize = 100;
/// Longest string value, in characters.
pub const VALUE_MAX_CHARS: usize = 1000;

/// What a key must look like, for messages.
pub const KEY_RULE: &str = "an ASCII letter, then ASCII letters, digits or underscores";

/// The kind of value a setting holds.
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum SettingType {
    /// One line of text.
    String,
    /// A finite number.
    Number,
    /// `true` or `false`.
    Boolean,
    /// One of the declaration's `options`.
    Select,
}

impl SettingType {
    /// Every type.
    pub const ALL: [SettingType; 4] = [
        SettingType::String,
        SettingType::Number,
        SettingType::Boolean,
        SettingType::Select,
    ];

    /// The manifest token.
    pub fn token(self) -> &'static str {
        match self {
            SettingType::String => "string",
            SettingType::Number => "number",
            SettingType::Boolean => "boolean",
            SettingType::Select => "select",
        }
    }
}

impl fmt::Display for SettingType {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.token())
    }
}

/// One value of a setting, as JSON carries it.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(untagged)]
pub enum SettingValue {
    /// For `boolean` settings.
    Boolean(bool),
    /// For `number` settings; always finite (JSON cannot carry anything else).
    Number(serde_json::Number),
    /// For `string` and `select` settings.
    String(String),
}

impl SettingValue {
    /// The value as JSON.
    pub fn to_json(&self) -> Value {
        match self {
            SettingValue::Boolean(flag) => Value::Bool(*flag),
            SettingValue::Number(number) => Value::Number(number.clone()),
            SettingValue::String(text) => Value::String(text.clone()),
        }
    }
}

impl fmt::Display for SettingValue {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            SettingValue::Boolean(flag) => write!(f, "{flag}"),
            SettingValue::Number(number) => write!(f, "{number}"),
            SettingValue::String(text) => write!(f, "{text:?}"),
        }
    }
}

#[cfg(feature = "openapi")]
impl utoipa::PartialSchema for SettingValue {
    fn schema() -> utoipa::openapi::RefOr<utoipa::openapi::schema::Schema> {
        use utoipa::openapi::schema::{ObjectBuilder, OneOfBuilder, Type};
        OneOfBuilder::new()
            .item(ObjectBuilder::new().schema_type(Type::String))
            .item(ObjectBuilder::new().schema_type(Type::Number))
            .item(ObjectBuilder::new().schema_type(Type::Boolean))
            .description(Some(
                "a string, number or boolean, as the setting's type says",
            ))
            .into()
    }
}

#[cfg(feature = "openapi")]
impl utoipa::ToSchema for SettingValue {}

/// Values by key: what an administrator stored, or what a tool reads.
pub type SettingValues = BTreeMap<String, SettingValue>;

/// One entry of the manifest's `settings` array, as checked by
/// [`read_declarations`].
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct SettingDeclaration {
    /// The key the value is read by: [`KEY_RULE`], at most
    /// [`KEY_MAX_CHARS`], unique within the manifest.
    pub key: String,
    /// What the settings form calls it (trimmed).
    pub label: String,
    /// The kind of value.
    #[serde(rename = "type")]
    pub setting_type: SettingType,
    /// The choices of a `select` setting; empty for every other type.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub options: Vec<String>,
    /// Whether a tenant must have a value (its own or the default).
    #[serde(default)]
    pub required: bool,
    /// The value when a tenant has set none; itself a valid value.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub default: Option<SettingValue>,
    /// A hint shown beside the field (trimmed).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub description: Option<String>,
    /// Whether the value is write-only (`"secret": true`, `string` settings
    /// only, without a default): administrators set it, nobody reads it back,
    /// and only the server uses it, in `{{secret.KEY}}` placeholders.
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub secret: bool,
}

impl SettingDeclaration {
    /// Whether `value` is a valid value of this setting (`""` is not: it
    /// means no value).
    pub fn accepts(&self, value: &SettingValue) -> bool {
        matches!(value_of(self, &value.to_json()), Ok(Some(_)))
    }
}

/// The fields of a declaration.
const DECLARATION_FIELDS: [&str; 8] = [
    "key",
    "label",
    "type",
    "options",
    "required",
    "default",
    "description",
    "secret",
];

/// Whether `key` can name a setting: 1 to [`KEY_MAX_CHARS`] characters,
/// [`KEY_RULE`].
pub fn is_setting_key(key: &str) -> bool {
    let mut bytes = key.bytes();
    key.len() <= KEY_MAX_CHARS
        && bytes.next().is_some_and(|b| b.is_ascii_alphabetic())
        && bytes.all(|b| b.is_ascii_alphanumeric() || b == b'_')
}

/// Reads the manifest's `settings` field: an array of at most
/// [`MAX_SETTINGS`] declarations, each checked field by field.
///
/// # Errors
///
/// `INVALID_PARAMS` with every problem, each at its path under `settings`
/// (`settings[1].options`, `settings[2].default`).
pub fn read_declarations(value: &Value) -> Result<Vec<SettingDeclaration>, Error> {
    let mut errors = Violations::default();
    let Value::Array(items) = value else {
        errors.push(
            "settings",
            format!(
                "must be an array of setting declarations, not {}",
                kind(value)
            ),
        );
        return errors.finish(None);
    };
    if items.len() > MAX_SETTINGS {
        errors.push(
            "settings",
            format!(
                "declares {} settings; at most {MAX_SETTINGS} are allowed",
                items.len()
            ),
        );
        return errors.finish(None);
    }
    let mut declarations = Vec::with_capacity(items.len());
    // Where each key was first declared, to name both places of a duplicate.
    let mut seen: BTreeMap<&str, usize> = BTreeMap::new();
    for (i, item) in items.iter().enumerate() {
        let mut duplicate = false;
        if let Some(Value::String(key)) = item.get("key") {
            if let Some(first) = seen.get(key.as_str()) {
                duplicate = true;
                errors.push(
                    format!("{}.key", index("settings", i)),
                    format!(
                        "{key:?} is declared twice (first at {}); each key must be unique",
                        index("settings", *first)
                    ),
                );
            } else {
                seen.insert(key, i);
            }
        }
        match read_declaration(item, i) {
            Ok(declaration) if !duplicate => declarations.push(declaration),
            Ok(_) => {}
            Err(found) => {
                for violation in found.details() {
                    errors.push(violation.path.clone(), violation.message.clone());
                }
            }
        }
    }
    errors.into_result(declarations)
}

/// One declaration, `settings[i]`.
fn read_declaration(item: &Value, i: usize) -> Result<SettingDeclaration, Error> {
    let base = index("settings", i);
    let mut errors = Violations::default();
    let (key, label, description, setting_type, required, options, secret) = {
        let Some(mut fields) = Fields::open(item, &base, &DECLARATION_FIELDS, &mut errors) else {
            return errors.finish(None);
        };
        let key = read_key(&mut fields);
        let label = display_text(&mut fields, "label", LABEL_MAX_CHARS, true);
        let description = display_text(&mut fields, "description", DESCRIPTION_MAX_CHARS, false);
        let setting_type = if fields.has("type") {
            fields
                .token("type", &SettingType::ALL, SettingType::token)
                .ok()
                .flatten()
        } else {
            fields.violation(
                "type",
                "is required: one of \"string\", \"number\", \"boolean\", \"select\"",
            );
            None
        };
        let required = fields.boolean("required").unwrap_or(false);
        let secret = fields.boolean("secret").unwrap_or(false);
        if secret && setting_type.is_some_and(|t| t != SettingType::String) {
            if let Some(other) = setting_type {
                fields.violation(
                    "secret",
                    format!("only a string setting can be secret; this one is a {other} setting"),
                );
            }
        }
        let options = match setting_type {
            Some(SettingType::Select) => {
                let path = fields.path_of("options");
                fields
                    .required_array("options")
                    .and_then(|options| read_options(options, &path, fields.errors()))
            }
            Some(other) if fields.has("options") => {
                fields.violation(
                    "options",
                    format!("only a select setting takes options; this one is a {other} setting"),
                );
                None
            }
            _ => Some(Vec::new()),
        };
        (
            key,
            label,
            description,
            setting_type,
            required,
            options,
            secret,
        )
    };
    let (Some(key), Some(label), Some(setting_type), Some(options)) =
        (key, label, setting_type, options)
    else {
        return errors.finish(None);
    };
    let mut declaration = SettingDeclaration {
        key,
        label,
        setting_type,
        options,
        required,
        default: None,
        description,
        secret,
    };
    if let Some(value) = item.get("default").filter(|value| !value.is_null()) {
        let path = format!("{base}.default");
        match value_of(&declaration, value) {
            _ if secret => errors.push(
                path,
                "a secret setting cannot have a default: its value is the tenant's own, set by \
                 an administrator",
            ),
            Ok(Some(default)) => declaration.default = Some(default),
            Ok(None) => errors.push(path, "must not be empty; leave default out for no default"),
            Err(problem) => errors.push(path, format!("is not a valid value: {problem}")),
        }
    }
    errors.into_result(declaration)
}

/// A declaration's `key`, as written (not trimmed).
fn read_key(fields: &mut Fields<'_, '_>) -> Option<String> {
    if !fields.has("key") {
        fields.violation("key", format!("is required: {KEY_RULE}"));
        return None;
    }
    let key = fields.string("key")?;
    if is_setting_key(key) {
        return Some(key.to_owned());
    }
    let problem = if key.chars().count() > KEY_MAX_CHARS {
        format!("must be at most {KEY_MAX_CHARS} characters")
    } else {
        format!("must be {KEY_RULE}")
    };
    fields.violation("key", format!("{key:?} {problem}"));
    None
}

/// A label or description: trimmed, one line, at most `max` characters;
/// `None` (recorded when `required`) when absent or blank.
fn display_text(
    fields: &mut Fields<'_, '_>,
    name: &str,
    max: usize,
    required: bool,
) -> Option<String> {
    let text = if required {
        fields.required_text(name, max)?
    } else {
        fields.text(name, max)?
    };
    if text.chars().any(char::is_control) {
        fields.violation(
            name,
            "must be one line of plain text without control characters",
        );
        return None;
    }
    Some(text.to_owned())
}

/// A select's options: 1 to [`MAX_OPTIONS`] unique, non-empty strings of
/// at most [`OPTION_MAX_CHARS`] without control characters.
fn read_options(options: &[Value], path: &str, errors: &mut Violations) -> Option<Vec<String>> {
    if options.is_empty() || options.len() > MAX_OPTIONS {
        errors.push(
            path,
            format!(
                "has {} options; a select setting takes 1 to {MAX_OPTIONS}",
                options.len()
            ),
        );
        return None;
    }
    let mut ok = true;
    let mut read: Vec<String> = Vec::with_capacity(options.len());
    for (i, option) in options.iter().enumerate() {
        let at = index(path, i);
        let Value::String(text) = option else {
            ok = false;
            errors.push(at, format!("must be a string, not {}", kind(option)));
            continue;
        };
        let problem = if text.trim().is_empty() {
            Some("must not be empty".to_owned())
        } else if text.chars().count() > OPTION_MAX_CHARS {
            Some(format!("must be at most {OPTION_MAX_CHARS} characters"))
        } else if text.chars().any(char::is_control) {
            Some("must be one line of text without control characters".to_owned())
        } else if read.contains(text) {
            Some(format!(
                "{text:?} is listed twice; each option must be unique"
            ))
        } else {
            None
        };
        match problem {
            Some(problem) => {
                ok = false;
                errors.push(at, problem);
            }
            None => read.push(text.clone()),
        }
    }
    ok.then_some(read)
}

/// `value` as a value of `declaration`: `Ok(None)` for `""` of a text or
/// select setting (no value), `Err` with what is wrong otherwise.
fn value_of(
    declaration: &SettingDeclaration,
    value: &Value,
) -> Result<Option<SettingValue>, String> {
    match (declaration.setting_type, value) {
        (SettingType::String | SettingType::Select, Value::String(text)) if text.is_empty() => {
            Ok(None)
        }
        (SettingType::String, Value::String(text)) => {
            let chars = text.chars().count();
            if chars > VALUE_MAX_CHARS {
                Err(format!(
                    "must be at most {VALUE_MAX_CHARS} characters (got {chars})"
                ))
            } else if text.chars().any(char::is_control) {
                Err("must be one line of text without control characters".to_owned())
            } else {
                Ok(Some(SettingValue::String(text.clone())))
            }
        }
        (SettingType::Select, Value::String(text)) => {
            if declaration.options.contains(text) {
                Ok(Some(SettingValue::String(text.clone())))
            } else {
                Err(format!(
                    "{text:?} is not one of its options: {}",
                    declaration.options.join(", ")
                ))
            }
        }
        (SettingType::Number, Value::Number(number)) => {
            if number.as_f64().is_some_and(f64::is_finite) {
                Ok(Some(SettingValue::Number(number.clone())))
            } else {
                Err("must be a finite number".to_owned())
            }
        }
        (SettingType::Boolean, Value::Bool(flag)) => Ok(Some(SettingValue::Boolean(*flag))),
        (SettingType::String, other) => Err(format!("must be a string, not {}", kind(other))),
        (SettingType::Number, other) => Err(format!("must be a number, not {}", kind(other))),
        (SettingType::Boolean, other) => Err(format!("must be true or false, not {}", kind(other))),
        (SettingType::Select, other) => Err(format!(
            "must be one of its options ({}) as a string, not {}",
            declaration.options.join(", "),
            kind(other)
        )),
    }
}

/// Checks a tenant's complete values for a tool's settings: a JSON object,
/// key to value. A key left out, or a text or select value of `""`, is
/// unset (the default applies); unset keys are not in the answer.
///
/// # Errors
///
/// Every problem (`INVALID_PARAMS` on the wire), each with the key as its
/// path: a key not declared, a value of the wrong type or not among the
/// options, a string over [`VALUE_MAX_CHARS`] or with control characters, a
/// required key with no value and no default. A body that is not an object
/// has the path `""`.
pub fn check_values(
    declarations: &[SettingDeclaration],
    values: &Value,
) -> Result<SettingValues, Vec<Violation>> {
    let mut errors = Violations::default();
    let Value::Object(values) = values else {
        return Err(vec![Violation::new(
            "",
            format!(
                "the settings must be one object of values by key, not {}",
                kind(values)
            ),
        )]);
    };
    let mut checked = SettingValues::new();
    // Keys whose value was refused: that message is enough.
    let mut refused: Vec<&str> = Vec::new();
    for (key, value) in values {
        let Some(declaration) = declarations.iter().find(|d| &d.key == key) else {
            errors.push(key.clone(), undeclared(declarations));
            continue;
        };
        if declaration.secret {
            refused.push(key);
            errors.push(
                key.clone(),
                "is a secret setting: it is set apart from the values a tool reads",
            );
            continue;
        }
        match value_of(declaration, value) {
            Ok(Some(value)) => {
                checked.insert(key.clone(), value);
            }
            Ok(None) => {}
            Err(problem) => {
                refused.push(key);
                errors.push(key.clone(), problem);
            }
        }
    }
    for declaration in declarations {
        if declaration.required
            && !declaration.secret
            && declaration.default.is_none()
            && !checked.contains_key(&declaration.key)
            && !refused.contains(&declaration.key.as_str())
        {
            errors.push(
                declaration.key.clone(),
                format!("is required ({}): give it a value", declaration.label),
            );
        }
    }
    errors.into_violations().map(|()| checked)
}

/// What an undeclared key is told.
fn undeclared(declarations: &[SettingDeclaration]) -> String {
    if declarations.is_empty() {
        return "is not a setting of this tool; it declares no settings".to_owned();
    }
    let keys: Vec<&str> = declarations.iter().map(|d| d.key.as_str()).collect();
    format!(
        "is not a setting of this tool; its settings are {}",
        keys.join(", ")
    )
}

/// The stored values that still fit the declarations (a key still
/// declared, a value still valid for it); the others are dropped, as after
/// a reinstall that changed the declarations.
pub fn retained_values(
    declarations: &[SettingDeclaration],
    stored: &SettingValues,
) -> SettingValues {
    stored
        .iter()
        .filter(|(key, value)| {
            declarations
                .iter()
                .any(|d| &d.key == *key && !d.secret && d.accepts(value))
        })
        .map(|(key, value)| (key.clone(), value.clone()))
        .collect()
}

/// The values a tool sees: each declared key's stored value when it still
/// fits, else its default; a key with neither is absent.
pub fn effective_values(
    declarations: &[SettingDeclaration],
    stored: &SettingValues,
) -> SettingValues {
    declarations
        .iter()
        .filter(|declaration| !declaration.secret)
        .filter_map(|declaration| {
            stored
                .get(&declaration.key)
                .filter(|value| declaration.accepts(value))
                .or(declaration.default.as_ref())
                .map(|value| (declaration.key.clone(), value.clone()))
        })
        .collect()
}

/// `values` as one JSON object.
pub fn values_to_json(values: &SettingValues) -> Value {
    Value::Object(
        values
            .iter()
            .map(|(key, value)| (key.clone(), value.to_json()))
            .collect::<Map<String, Value>>(),
    )
}

/// What a settings update does to the secret settings: each key it touches,
/// to its new value, or to `None` when it clears it.
pub type SecretChanges = BTreeMap<String, Option<String>>;

/// A settings update taken apart: the values a tool reads, and the changes
/// to the secret settings.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct SettingsUpdate {
    /// The complete values of the settings that are not secret, as
    /// [`check_values`] checks them.
    pub values: SettingValues,
    /// The secret settings it sets, replaces or clears; the others stay as
    /// they are.
    pub secrets: SecretChanges,
}

/// Checks an administrator's settings update for a tool: one JSON object,
/// key to value. The settings that are not secret are as [`check_values`]
/// wants them: the complete set, a key left out is unset. A secret setting is
/// different, since nobody can read it back: a string (at most
/// [`VALUE_MAX_CHARS`], one line) sets or replaces it, `null` or `""` clears
/// it, and a key left out keeps whatever is set. `already_set` names the
/// secrets the tenant has set before, so that a required secret left unset
/// is refused.
///
/// # Errors
///
/// Every problem, each with the key as its path; never the value of a
/// secret.
pub fn check_update(
    declarations: &[SettingDeclaration],
    body: &Value,
    already_set: &BTreeSet<String>,
) -> Result<SettingsUpdate, Vec<Violation>> {
    let Value::Object(object) = body else {
        return check_values(declarations, body).map(|values| SettingsUpdate {
            values,
            secrets: SecretChanges::new(),
        });
    };
    let is_secret = |key: &str| declarations.iter().any(|d| d.key == key && d.secret);
    let (secret_part, plain): (Map<String, Value>, Map<String, Value>) = object
        .iter()
        .map(|(key, value)| (key.clone(), value.clone()))
        .partition(|(key, _)| is_secret(key));
    let mut errors = Violations::default();
    let values = match check_values(declarations, &Value::Object(plain)) {
        Ok(values) => values,
        Err(found) => {
            for violation in found {
                errors.push(violation.path, violation.message);
            }
            SettingValues::new()
        }
    };
    let mut secrets = SecretChanges::new();
    for (key, value) in &secret_part {
        let Some(declaration) = declarations.iter().find(|d| &d.key == key) else {
            continue;
        };
        match value {
            Value::Null => {
                secrets.insert(key.clone(), None);
            }
            Value::String(_) => match value_of(declaration, value) {
                Ok(Some(SettingValue::String(text))) => {
                    secrets.insert(key.clone(), Some(text));
                }
                Ok(_) => {
                    secrets.insert(key.clone(), None);
                }
                Err(problem) => errors.push(key.clone(), problem),
            },
            other => errors.push(
                key.clone(),
                format!(
                    "must be a string (to set the secret) or null (to clear it), not {}",
                    kind(other)
                ),
            ),
        }
    }
    for declaration in declarations.iter().filter(|d| d.secret && d.required) {
        let key = &declaration.key;
        let set_after = match secrets.get(key) {
            Some(change) => change.is_some(),
            None => already_set.contains(key) || secret_part.contains_key(key),
        };
        if !set_after {
            errors.push(
                key.clone(),
                format!(
                    "is required ({}): give the secret a value",
                    declaration.label
                ),
            );
        }
    }
    errors
        .into_violations()
        .map(|()| SettingsUpdate { values, secrets })
}

/// Whether a stored secret `key` is still kept under `declarations`: the key
/// is still declared, and still secret (so a `string` setting).
pub fn secret_is_retained(declarations: &[SettingDeclaration], key: &str) -> bool {
    declarations.iter().any(|d| d.key == key && d.secret)
}
