//! The options the page passes to `new Host(…)` and `host.mount(…)`, read and
//! checked so that a mistake is reported with the option's name.

use js_sys::{Array, Object, Reflect};
use serde::Deserialize;
use serde_json::{Map, Value};
use toolbridge_protocol::Error;
use toolbridge_protocol::connectivity::DEFAULT_CHECK_MS;
use toolbridge_protocol::manifest::{SLUG_RULE, ToolType, is_tool_slug};
use toolbridge_protocol::notification::read_settings_values;
use toolbridge_protocol::ui::AutoResize;
use wasm_bindgen::{JsCast, JsValue};

use crate::backend::{Custom, DEFAULT_TIMEOUT_MS};
use crate::error::HostError;
use crate::json;

/// `new Host({apiBase, backend?, debug?, requestTimeoutMs?, connectivityCheckMs?})`.
#[derive(Debug, Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub(crate) struct HostOptions {
    /// The REST API's base URL, e.g. `/api/v1`.
    pub(crate) api_base: String,
    /// Log every call and dropped message to the console.
    #[serde(default)]
    pub(crate) debug: bool,
    /// Deadline of each backend request.
    #[serde(default = "default_timeout")]
    pub(crate) request_timeout_ms: u32,
    /// How often the host checks whether the server can be reached while it
    /// is offline; 0 turns the checks off.
    #[serde(default = "default_check")]
    pub(crate) connectivity_check_ms: u32,
    /// The page's own backend, if it gave one (read from the JavaScript
    /// object: JSON cannot carry its `fetch`).
    #[serde(skip)]
    pub(crate) backend: Option<Custom>,
}

fn default_timeout() -> u32 {
    DEFAULT_TIMEOUT_MS
}

fn default_check() -> u32 {
    DEFAULT_CHECK_MS
}

impl HostOptions {
    /// Reads the constructor's argument.
    pub(crate) fn read(value: &JsValue) -> Result<Self, HostError> {
        // The rest is read as JSON, without the backend (which need not be
        // JSON at all: an API client, a class instance).
        let (rest, backend) = split_off(value, "backend");
        let mut options: Self =
            json::read_js(&rest, "new Host(options)").map_err(HostError::Usage)?;
        if !backend.is_undefined() {
            options.backend = Some(Custom::read(backend)?);
        }
        Ok(options)
    }
}

/// `host.mount(container, {slug, origin, type, entry?, title?, autoResize?,
/// settings?, identity?, fetch?})`.
#[derive(Debug, Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
struct RawTool {
    slug: String,
    origin: String,
    #[serde(rename = "type")]
    tool_type: String,
    #[serde(default)]
    entry: Option<String>,
    #[serde(default)]
    title: Option<String>,
    #[serde(default)]
    auto_resize: Option<Value>,
    #[serde(default)]
    identity: bool,
    #[serde(default)]
    fetch: bool,
}

/// A tool to mount, checked.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct ToolOptions {
    /// Lower-case letters, digits and hyphens (it names the tool's origin).
    pub(crate) slug: String,
    /// The tool's registered origin, normalised (`https://x.tools.example`).
    pub(crate) origin: String,
    /// From the installed manifest.
    pub(crate) tool_type: ToolType,
    /// The entry page's absolute URL, on `origin`.
    pub(crate) src: String,
    /// The frame's accessible title, also the tool's name in toasts and
    /// dialogs.
    pub(crate) title: String,
    /// The heights the frame may take when the tool sizes it; `None` keeps
    /// the page's own sizing.
    pub(crate) auto_resize: Option<AutoResize>,
    /// The tool's install settings, which `settings.get` answers; `None`
    /// when the page passed none (and then `settings.*` is not offered).
    pub(crate) settings: Option<Map<String, Value>>,
    /// Whether the tool may ask for an identity token (`auth.getToken`): the
    /// page passes its installed manifest's `permissions.identity`.
    pub(crate) identity: bool,
    /// Whether the tool may have the server fetch for it (`fetch`): the page
    /// passes whether its installed manifest lists `permissions.connect`.
    pub(crate) fetch: bool,
}

impl ToolOptions {
    /// Reads and checks `mount`'s second argument.
    pub(crate) fn read(value: &JsValue) -> Result<Self, HostError> {
        // The settings are read from the JavaScript object, where a value
        // JSON would drop or change (a function, NaN) can be named.
        let (rest, settings) = split_off(value, "settings");
        let raw: RawTool =
            json::read_js(&rest, "mount(container, tool)").map_err(HostError::Usage)?;
        if !is_tool_slug(&raw.slug) {
            return Err(HostError::usage(format!(
                "mount: slug {:?} must be {SLUG_RULE}",
                raw.slug
            )));
        }
        let tool_type = ToolType::from_token(&raw.tool_type).ok_or_else(|| {
            HostError::usage(format!(
                "mount: type {:?} must be \"standalone\" or \"quoting_extension\" (the manifest's type)",
                raw.tool_type
            ))
        })?;
        let origin = bare_origin(&raw.origin)?;
        let entry = raw.entry.unwrap_or_else(|| "/".to_owned());
        let src = web_sys::Url::new_with_base(&entry, &origin)
            .map_err(|_| HostError::usage(format!("mount: entry {entry:?} is not a URL path")))?;
        if src.origin() != origin {
            return Err(HostError::usage(format!(
                "mount: entry {entry:?} leaves the tool's origin {origin}; give a path such as \"/index.html\""
            )));
        }
        let auto_resize = raw.auto_resize.as_ref().map(bounds).transpose()?;
        let settings = if settings.is_undefined() || settings.is_null() {
            None
        } else {
            Some(read_settings(&settings, "mount")?)
        };
        Ok(Self {
            auto_resize,
            settings,
            identity: raw.identity,
            fetch: raw.fetch,
            title: raw.title.unwrap_or_else(|| raw.slug.clone()),
            slug: raw.slug,
            origin,
            tool_type,
            src: src.href(),
        })
    }
}

/// `value` without its property `key` (a shallow copy, or `value` itself
/// when it has no such property), and that property.
fn split_off(value: &JsValue, key: &str) -> (JsValue, JsValue) {
    let key = JsValue::from_str(key);
    let taken = Reflect::get(value, &key).unwrap_or(JsValue::UNDEFINED);
    if taken.is_undefined() {
        return (value.clone(), taken);
    }
    let rest = Object::assign(&Object::new(), value.unchecked_ref());
    let _ = Reflect::delete_property(&rest, &key);
    (rest.into(), taken)
}

/// Install settings the page passes (to `mount` or `setToolSettings`,
/// named by `what`): a plain object of strings, numbers and booleans. Every
/// mistake is named by its key.
pub(crate) fn read_settings(value: &JsValue, what: &str) -> Result<Map<String, Value>, HostError> {
    let refuse = |problems: &[String]| HostError::usage(format!("{what}: {}", problems.join("; ")));
    if !value.is_object() || Array::is_array(value) {
        let got = if Array::is_array(value) {
            "an array".to_owned()
        } else if value.is_null() {
            "null".to_owned()
        } else if value.is_undefined() {
            "undefined".to_owned()
        } else {
            format!("a {}", value.js_typeof().as_string().unwrap_or_default())
        };
        return Err(refuse(&[format!(
            "settings must be an object of setting keys to strings, numbers and booleans (got {got})"
        )]));
    }
    let mut problems = Vec::new();
    let mut object = Map::new();
    for entry in Object::entries(value.unchecked_ref()).iter() {
        let entry: Array = entry.unchecked_into();
        let key = entry.get(0).as_string().unwrap_or_default();
        let item = entry.get(1);
        // What JSON would drop or change is refused here; the rest is the
        // protocol's to read.
        let lost = match item.js_typeof().as_string().as_deref() {
            Some("number") if !item.as_f64().is_some_and(f64::is_finite) => {
                Some("a number that is not finite")
            }
            Some("undefined") => Some("undefined"),
            Some("function") => Some("a function"),
            Some("symbol") => Some("a symbol"),
            Some("bigint") => Some("a BigInt"),
            _ => None,
        };
        match (lost, json::from_js(&item)) {
            (None, Some(json)) => {
                object.insert(key, json);
            }
            (lost, _) => problems.push(format!(
                "settings.{key} must be a string, number or boolean (got {})",
                lost.unwrap_or("a value JSON cannot hold")
            )),
        }
    }
    if let Err(Error::InvalidParams(found)) = read_settings_values(&Value::Object(object.clone())) {
        problems.extend(
            found
                .iter()
                .map(|problem| format!("settings.{} {}", problem.path, problem.message)),
        );
    }
    if problems.is_empty() {
        Ok(object)
    } else {
        Err(refuse(&problems))
    }
}

/// `autoResize: {min, max}`, whole CSS pixels.
fn bounds(value: &Value) -> Result<AutoResize, HostError> {
    let number = |name: &str| value.get(name).and_then(Value::as_f64);
    let only_bounds = value
        .as_object()
        .is_some_and(|object| object.keys().all(|key| key == "min" || key == "max"));
    match (number("min"), number("max")) {
        (Some(min), Some(max)) if only_bounds => {
            AutoResize::new(min, max).map_err(|why| HostError::usage(format!("mount: {why}")))
        }
        _ => Err(HostError::usage(format!(
            "mount: autoResize must be {{min, max}} in whole CSS pixels, such as {{min: 120, max: 900}}; got {value}"
        ))),
    }
}

/// `origin` if it is a bare http(s) origin (scheme, host, optional port),
/// in the form browsers report as `event.origin`.
fn bare_origin(origin: &str) -> Result<String, HostError> {
    let refuse = || {
        HostError::usage(format!(
            "mount: origin {origin:?} must be a bare origin such as \"https://estimator.tools.example\" (scheme, host and port only)"
        ))
    };
    let url = web_sys::Url::new(origin).map_err(|_| refuse())?;
    let normalised = url.origin();
    let protocol = url.protocol();
    if (protocol != "http:" && protocol != "https:")
        || !normalised.eq_ignore_ascii_case(origin.trim_end_matches('/'))
    {
        return Err(refuse());
    }
    Ok(normalised)
}
