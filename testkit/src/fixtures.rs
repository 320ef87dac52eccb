//! Fixtures: the tenant's data a memory backend starts from, read from JSON
//! and checked, every problem reported with its path
//! (`products[2].sellPrice: must be a decimal string such as "89.50"`).
//!
//! ```json
//! {
//!   "user": {"id": "u-1", "name": "Olivia Office", "email": "office@example.test", "role": "office",
//!            "theme": "dark"},
//!   "tenant": {"name": "Harbour Flooring", "taxRate": "0.15", "cultureCode": "en-NZ",
//!              "timeZone": "Pacific/Auckland", "currency": "NZD", "units": "metric", "theme": "light"},
//!   "customers": [{"id": "c1", "name": "Aroha Ngata", "email": "aroha@example.test"}],
//!   "taskTemplates": [{"code": "INSTALL", "name": "Installation", "unitPrice": "25", "costPrice": "18"}],
//!   "products": [{"sku": "OAK-01", "name": "Oak board", "unit": "T_SQUARE_METRE", "sellPrice": "89.50",
//!                 "costPrice": "61", "taskSequence": [{"taskTemplate": "INSTALL", "qtyPerUnit": "0.25"}]}],
//!   "costItems": [{"code": "TRAVEL", "name": "Travel", "type": "T_TRAVEL"}],
//!   "jobs": [{"ref": "J-1001", "customerId": "c1", "status": "Scheduling"}],
//!   "quotes": [{"id": "q1", "ref": "Q-1001", "customerId": "c1", "lines": []}],
//!   "openQuote": "q1",
//!   "manifest": {"version": "1.2.0", "permissions": {"identity": true, "connect": ["https://api.vendor.test"]},
//!                "settings": [{"key": "wastePercent", "label": "Waste", "type": "number"},
//!                             {"key": "apiKey", "label": "API key", "type": "string", "secret": true}]},
//!   "settings": {"wastePercent": 12, "apiKey": "test-key"},
//!   "token": {"issuer": "https://app.example.com", "audience": "https://prices.tools.example.com"}
//! }
//! ```
//!
//! The manifest's `permissions` give the tool identity tokens and the
//! origins its fetches may reach; the values of its secret settings are
//! kept apart from the settings the tool sees, for the fetch stand-in.
//!
//! Every field is optional but the names, codes and prices that say what a
//! row is. Amounts are decimal strings, so that they are exact. Rows without
//! an `id` get one.

use std::collections::{BTreeMap, BTreeSet, HashSet};
use std::str::FromStr;

use serde_json::{Map, Value};
use toolbridge_protocol::add_lines::{LineType, Unit};
use toolbridge_protocol::catalog::{MAX_QTY_PER_UNIT, id_key};
use toolbridge_protocol::context::{
    BridgeContextDto, ContextField, ContextValues, OrganisationContextDto, OwnContextDto, Role,
};
use toolbridge_protocol::create_quote::{NEW_QUOTE_EXPIRY_DAYS, generated_reference, sku_key};
use toolbridge_protocol::fetch::origin_of;
use toolbridge_protocol::limits::{MAX_LINE_PRICE, TEXT_MAX_CHARS};
use toolbridge_protocol::manifest::{Permissions, read_permissions};
use toolbridge_protocol::notification::read_settings_values;
use toolbridge_protocol::open_quote::OpenQuote;
use toolbridge_protocol::quote::{QuoteDto, QuoteHeader, QuoteLine, QuoteStatus, QuoteType};
use toolbridge_protocol::quote_header::MAX_EXPIRY_DAYS;
use toolbridge_protocol::settings::{
    SettingDeclaration, check_update, effective_values, read_declarations, values_to_json,
};
use toolbridge_protocol::{Decimal, Error as Rule, Violation, value_kind};

use crate::error::Error;
use crate::ids::Ids;

/// The tenant the signed-in user works for.
#[derive(Debug, Clone)]
pub(crate) struct Tenant {
    pub(crate) id: String,
    pub(crate) name: String,
    pub(crate) culture_code: String,
    /// The default tax rate of new quote lines, a fraction.
    pub(crate) tax_rate: Decimal,
    /// The last number of the `Q-<n>` sequence used.
    pub(crate) quote_sequence: u64,
    /// Its time zone, currency, units and theme, where the fixtures give them (beyond 2.1.0).
    pub(crate) values: ContextValues,
}

impl Tenant {
    /// The tenant of fixtures that name none.
    fn default_for_tests() -> Self {
        Self {
            id: "test-tenant".to_owned(),
            name: "Test Tenant".to_owned(),
            culture_code: "en-NZ".to_owned(),
            tax_rate: Decimal::new(15, 2),
            quote_sequence: 0,
            values: ContextValues::default(),
        }
    }
}

/// A customer.
#[derive(Debug, Clone)]
pub(crate) struct Customer {
    pub(crate) id: String,
    pub(crate) name: String,
    pub(crate) email: String,
    pub(crate) phone: String,
}

/// A catalog product.
#[derive(Debug, Clone)]
pub(crate) struct Product {
    pub(crate) id: String,
    pub(crate) sku: String,
    pub(crate) name: String,
    pub(crate) unit: Unit,
    pub(crate) price: Decimal,
    pub(crate) cost: Decimal,
    pub(crate) active: bool,
    /// (task template id, quantity per unit), in order.
    pub(crate) task_sequence: Vec<(String, Decimal)>,
}

/// A task template.
#[derive(Debug, Clone)]
pub(crate) struct TaskTemplate {
    pub(crate) id: String,
    pub(crate) code: String,
    pub(crate) name: String,
    pub(crate) unit_price: Decimal,
    pub(crate) cost_price: Decimal,
    pub(crate) active: bool,
}

/// A cost-of-business item.
#[derive(Debug, Clone)]
pub(crate) struct CostItem {
    pub(crate) id: String,
    pub(crate) code: String,
    pub(crate) name: String,
    pub(crate) item_type: String,
    pub(crate) active: bool,
}

/// A job.
#[derive(Debug, Clone)]
pub(crate) struct Job {
    pub(crate) id: String,
    pub(crate) reference: String,
    pub(crate) customer_id: String,
    pub(crate) status: String,
    pub(crate) closed: bool,
}

/// Everything the fixtures hold, checked.
#[derive(Debug, Clone)]
pub(crate) struct Data {
    pub(crate) user: BridgeContextDto,
    pub(crate) tenant: Tenant,
    pub(crate) customers: Vec<Customer>,
    pub(crate) products: Vec<Product>,
    pub(crate) task_templates: Vec<TaskTemplate>,
    pub(crate) cost_items: Vec<CostItem>,
    pub(crate) jobs: Vec<Job>,
    /// In the order they were made (the tie-break of the quote list).
    pub(crate) quotes: Vec<QuoteDto>,
    /// The id of the quote to open in the editor.
    pub(crate) open_quote: Option<String>,
    /// The settings the tool's manifest declares, when the fixtures give
    /// its manifest.
    pub(crate) declarations: Option<Vec<SettingDeclaration>>,
    /// The tool's install settings, as the tool sees them: never a secret
    /// one.
    pub(crate) settings: Option<Map<String, Value>>,
    /// The values of the settings the manifest declares `"secret": true`,
    /// by key: only the fetch stand-in reads them.
    pub(crate) secrets: BTreeMap<String, String>,
    /// The signed-in user's id: an identity token's `sub`.
    pub(crate) user_id: String,
    /// What the tool's manifest asks for, when the fixtures give its
    /// manifest: whether it gets identity tokens, the origins it may fetch.
    pub(crate) permissions: Option<Permissions>,
    /// The manifest's `version`: an identity token's `ver`.
    pub(crate) version: String,
    /// The identity tokens' `iss` and `aud`, where the fixtures name them.
    pub(crate) token: TokenFixture,
}

/// The fixtures' `token`: who issues the identity tokens and for whom.
#[derive(Debug, Clone, Default)]
pub(crate) struct TokenFixture {
    /// The app's public URL, the tokens' `iss`.
    pub(crate) issuer: Option<String>,
    /// The tool's origin, the tokens' `aud`.
    pub(crate) audience: Option<String>,
}

/// The user id of fixtures that name none.
pub(crate) const DEFAULT_USER_ID: &str = "test-user";

/// The version of a tool whose manifest names none (or of fixtures without a manifest).
pub(crate) const DEFAULT_VERSION: &str = "0.0.0";

const TOP: &[&str] = &[
    "user",
    "tenant",
    "customers",
    "products",
    "taskTemplates",
    "costItems",
    "jobs",
    "quotes",
    "openQuote",
    "manifest",
    "settings",
    "token",
];

/// The fields of a quote.
const QUOTE_FIELDS: &[&str] = &[
    "id",
    "ref",
    "customerId",
    "jobId",
    "title",
    "type",
    "status",
    "date",
    "expiryDays",
    "lines",
    "groupKeys",
];

/// The install settings a tool sees for `values`: with the manifest's
/// `declarations`, the values checked as an admin's are (every problem with
/// its key as the path) over the declared defaults; without, the values as
/// they are, strings, numbers and booleans.
///
/// The values of settings declared `"secret": true` are taken apart, as the
/// platform takes them apart ([`check_update`]): they are never among the
/// settings the tool sees, and only the fetch stand-in uses them. `secrets`
/// holds those set before; a secret left out keeps its value, `null` or `""`
/// clears it. Without declarations nothing is secret.
pub(crate) fn install_settings(
    declarations: Option<&[SettingDeclaration]>,
    values: &Value,
    secrets: &mut BTreeMap<String, String>,
) -> Result<Map<String, Value>, Rule> {
    match declarations {
        Some(declarations) => {
            let already_set: BTreeSet<String> = secrets.keys().cloned().collect();
            let update =
                check_update(declarations, values, &already_set).map_err(Rule::InvalidParams)?;
            for (key, change) in update.secrets {
                match change {
                    Some(value) => secrets.insert(key, value),
                    None => secrets.remove(&key),
                };
            }
            match values_to_json(&effective_values(declarations, &update.values)) {
                Value::Object(settings) => Ok(settings),
                _ => Ok(Map::new()),
            }
        }
        None => read_settings_values(values),
    }
}

/// Reads and checks fixtures; `now` dates quotes that give no date.
pub(crate) fn read(value: &Value, ids: &mut Ids, now: &str) -> Result<Data, Error> {
    let mut errors = Vec::new();
    let data = Reader {
        errors: &mut errors,
        ids,
    }
    .data(value, now);
    match data {
        Some(data) if errors.is_empty() => Ok(data),
        _ => Err(Error::Fixtures(errors)),
    }
}

/// Reads fixtures, recording every problem.
struct Reader<'a> {
    errors: &'a mut Vec<Violation>,
    ids: &'a mut Ids,
}

/// One object of the fixtures and its path.
struct Object<'v> {
    map: &'v Map<String, Value>,
    path: String,
}

fn join(path: &str, key: &str) -> String {
    if key.is_empty() {
        path.to_owned()
    } else if path.is_empty() {
        key.to_owned()
    } else {
        format!("{path}.{key}")
    }
}

impl Reader<'_> {
    fn push(&mut self, path: impl Into<String>, message: impl Into<String>) {
        self.errors.push(Violation::new(path, message));
    }

    /// `value` as an object with only `known` keys; unknown keys are named.
    fn object<'v>(&mut self, value: &'v Value, path: &str, known: &[&str]) -> Option<Object<'v>> {
        let Some(map) = value.as_object() else {
            let at = if path.is_empty() { "fixtures" } else { path };
            self.push(at, format!("must be an object (got {})", value_kind(value)));
            return None;
        };
        for key in map.keys() {
            if !known.contains(&key.as_str()) {
                self.push(
                    join(path, key),
                    format!("is not a fixture field here; use {}", known.join(", ")),
                );
            }
        }
        Some(Object {
            map,
            path: path.to_owned(),
        })
    }

    /// The items of an optional array field.
    fn array<'v>(&mut self, object: &Object<'v>, key: &str) -> &'v [Value] {
        match object.map.get(key) {
            None | Some(Value::Null) => &[],
            Some(Value::Array(items)) => items,
            Some(other) => {
                self.push(
                    join(&object.path, key),
                    format!("must be an array (got {})", value_kind(other)),
                );
                &[]
            }
        }
    }

    /// An optional text field: at most 1000 characters, not blank.
    fn text(&mut self, object: &Object<'_>, key: &str) -> Option<String> {
        match object.map.get(key) {
            None | Some(Value::Null) => None,
            Some(Value::String(text)) if text.trim().is_empty() => {
                self.push(join(&object.path, key), "must not be blank");
                None
            }
            Some(Value::String(text)) if text.chars().count() > TEXT_MAX_CHARS => {
                self.push(
                    join(&object.path, key),
                    format!("must be at most {TEXT_MAX_CHARS} characters"),
                );
                None
            }
            Some(Value::String(text)) => Some(text.clone()),
            Some(other) => {
                self.push(
                    join(&object.path, key),
                    format!("must be a string (got {})", value_kind(other)),
                );
                None
            }
        }
    }

    /// A text field that must be there.
    fn required_text(&mut self, object: &Object<'_>, key: &str) -> Option<String> {
        if object.map.get(key).is_none_or(Value::is_null) {
            self.push(join(&object.path, key), "is required");
            return None;
        }
        self.text(object, key)
    }

    /// An optional text field that may be empty (an email, a phone).
    fn plain_text(&mut self, object: &Object<'_>, key: &str) -> String {
        match object.map.get(key) {
            None | Some(Value::Null) => String::new(),
            Some(Value::String(text)) => text.clone(),
            Some(other) => {
                self.push(
                    join(&object.path, key),
                    format!("must be a string (got {})", value_kind(other)),
                );
                String::new()
            }
        }
    }

    /// An optional decimal field, written as a string; `Err` when present
    /// but not one.
    fn decimal(&mut self, object: &Object<'_>, key: &str) -> Result<Option<Decimal>, ()> {
        let path = join(&object.path, key);
        match object.map.get(key) {
            None | Some(Value::Null) => Ok(None),
            Some(Value::String(text)) => {
                if let Ok(value) = Decimal::from_str(text.trim()) {
                    Ok(Some(value))
                } else {
                    self.push(
                        path,
                        format!("must be a decimal string such as \"89.50\" (got {text:?})"),
                    );
                    Err(())
                }
            }
            Some(other) => {
                self.push(
                    path,
                    format!(
                        "must be a decimal string such as \"89.50\" (got {other}, {}): amounts are strings so that they stay exact",
                        value_kind(other)
                    ),
                );
                Err(())
            }
        }
    }

    /// A decimal field that must be there, from 0 to `max`.
    fn amount(&mut self, object: &Object<'_>, key: &str, max: Decimal) -> Option<Decimal> {
        match self.decimal(object, key) {
            Ok(Some(value)) => self.bounded(object, key, value, Decimal::ZERO, max),
            Ok(None) => {
                self.push(join(&object.path, key), "is required");
                None
            }
            Err(()) => None,
        }
    }

    /// An optional decimal field from 0 to `max`.
    fn optional_amount(
        &mut self,
        object: &Object<'_>,
        key: &str,
        max: Decimal,
    ) -> Result<Option<Decimal>, ()> {
        match self.decimal(object, key)? {
            Some(value) => self
                .bounded(object, key, value, Decimal::ZERO, max)
                .map(Some)
                .ok_or(()),
            None => Ok(None),
        }
    }

    fn bounded(
        &mut self,
        object: &Object<'_>,
        key: &str,
        value: Decimal,
        min: Decimal,
        max: Decimal,
    ) -> Option<Decimal> {
        if value < min || value > max {
            self.push(
                join(&object.path, key),
                format!("must be from {min} to {max} (got {value})"),
            );
            None
        } else {
            Some(value)
        }
    }

    /// An optional boolean field.
    fn boolean(&mut self, object: &Object<'_>, key: &str, default: bool) -> bool {
        match object.map.get(key) {
            None | Some(Value::Null) => default,
            Some(Value::Bool(value)) => *value,
            Some(other) => {
                self.push(
                    join(&object.path, key),
                    format!("must be true or false (got {})", value_kind(other)),
                );
                default
            }
        }
    }

    /// An optional whole number field from 0 to `max`.
    fn whole(&mut self, object: &Object<'_>, key: &str, max: u64) -> Option<u64> {
        match object.map.get(key) {
            None | Some(Value::Null) => None,
            Some(value) => {
                let whole = value.as_u64().filter(|n| *n <= max);
                if whole.is_none() {
                    self.push(
                        join(&object.path, key),
                        format!("must be a whole number from 0 to {max} (got {value})"),
                    );
                }
                whole
            }
        }
    }

    /// The row's `id`, or a new one; an id another row of `table` has is a
    /// problem.
    fn id(&mut self, object: &Object<'_>, seen: &mut HashSet<String>, table: &str) -> String {
        let id = self.text(object, "id").unwrap_or_else(|| self.ids.next());
        if !seen.insert(id_key(&id)) {
            self.push(
                join(&object.path, "id"),
                format!("another {table} has the id {id:?}"),
            );
        }
        id
    }

    fn data(&mut self, value: &Value, now: &str) -> Option<Data> {
        let top = self.object(value, "", TOP)?;
        // The rest is read with the default tenant when the tenant's fields
        // are wrong, so that every problem is found at once.
        let tenant = self.tenant(top.map.get("tenant"));
        let any_tenant = tenant.clone().unwrap_or_else(Tenant::default_for_tests);
        let user = self.user(top.map.get("user"), &any_tenant);
        let customers = self.customers(&top);
        let task_templates = self.task_templates(&top);
        let products = self.products(&top, &task_templates);
        let cost_items = self.cost_items(&top);
        let jobs = self.jobs(&top, &customers);
        let quotes = self.quotes(&top, &customers, &jobs, &any_tenant, now);
        let open_quote = self.open_quote(&top, &quotes);
        let declarations = self.declarations(&top);
        let (permissions, version) = self.manifest_facts(&top);
        let token = self.token(&top);
        let mut secrets = BTreeMap::new();
        let settings = match (top.map.get("settings"), &declarations) {
            (None | Some(Value::Null), None) => None,
            (settings, declarations) => {
                let empty = Value::Object(Map::new());
                let settings = settings.filter(|value| !value.is_null()).unwrap_or(&empty);
                match install_settings(declarations.as_deref(), settings, &mut secrets) {
                    Ok(settings) => Some(settings),
                    Err(error) => {
                        for violation in error.details() {
                            self.push(join("settings", &violation.path), &violation.message);
                        }
                        None
                    }
                }
            }
        };
        let (user, user_id) = user?;
        Some(Data {
            user,
            tenant: tenant?,
            customers,
            products,
            task_templates,
            cost_items,
            jobs,
            quotes,
            open_quote,
            declarations,
            settings,
            secrets,
            user_id,
            permissions,
            version,
            token,
        })
    }

    /// The manifest's `permissions` (read as the platform reads them, every
    /// problem under `manifest.permissions`) and its `version`; no
    /// permissions without a manifest.
    fn manifest_facts(&mut self, top: &Object<'_>) -> (Option<Permissions>, String) {
        let Some(manifest) = top.map.get("manifest").and_then(Value::as_object) else {
            return (None, DEFAULT_VERSION.to_owned());
        };
        let object = Object {
            map: manifest,
            path: "manifest".to_owned(),
        };
        let version = self
            .text(&object, "version")
            .unwrap_or_else(|| DEFAULT_VERSION.to_owned());
        let permissions = match manifest.get("permissions") {
            None | Some(Value::Null) => Permissions::default(),
            Some(value) => match read_permissions(value) {
                Ok(permissions) => permissions,
                Err(error) => {
                    self.rule_broken("manifest", &error);
                    Permissions::default()
                }
            },
        };
        (Some(permissions), version)
    }

    /// `token`: the identity tokens' `issuer` (the app's public URL) and
    /// `audience` (the tool's origin), each an http(s) origin as a browser
    /// writes it; the issuer may add a path.
    fn token(&mut self, top: &Object<'_>) -> TokenFixture {
        let Some(value) = top.map.get("token").filter(|value| !value.is_null()) else {
            return TokenFixture::default();
        };
        let Some(object) = self.object(value, "token", &["issuer", "audience"]) else {
            return TokenFixture::default();
        };
        let mut url = |key: &str, rule: fn(&str, &str) -> bool, shape: &str| {
            let text = self.text(&object, key)?;
            let web = origin_of(&text).filter(|origin| {
                (origin.starts_with("https://") || origin.starts_with("http://"))
                    && rule(&text, origin)
            });
            if web.is_none() {
                self.push(
                    join("token", key),
                    format!("must be {shape} (got {text:?})"),
                );
            }
            web.map(|_| text)
        };
        let issuer = url(
            "issuer",
            |text, origin| {
                text.strip_prefix(origin).is_some_and(|path| {
                    path.is_empty()
                        || (path.starts_with('/')
                            && !path.ends_with('/')
                            && !path.contains(['?', '#']))
                })
            },
            "the app's public URL, such as \"https://app.example.com\": http(s), in lower case, without a trailing /",
        );
        let audience = url(
            "audience",
            |text, origin| text == origin,
            "the tool's origin, such as \"https://prices.tools.example.com\": http(s), host and port only, in lower case",
        );
        TokenFixture { issuer, audience }
    }

    /// The settings declared by `manifest`, the tool's `manifest.json`, when
    /// the fixtures give it (its other fields are not read).
    fn declarations(&mut self, top: &Object<'_>) -> Option<Vec<SettingDeclaration>> {
        let manifest = top.map.get("manifest").filter(|value| !value.is_null())?;
        let Some(manifest) = manifest.as_object() else {
            self.push(
                "manifest",
                format!(
                    "must be the tool's manifest.json, an object (got {})",
                    value_kind(manifest)
                ),
            );
            return None;
        };
        let Some(declared) = manifest.get("settings") else {
            return Some(Vec::new());
        };
        match read_declarations(declared) {
            Ok(declarations) => Some(declarations),
            Err(error) => {
                for violation in error.details() {
                    self.push(join("manifest", &violation.path), &violation.message);
                }
                None
            }
        }
    }

    fn tenant(&mut self, value: Option<&Value>) -> Option<Tenant> {
        let empty = Value::Object(Map::new());
        let object = self.object(
            value.unwrap_or(&empty),
            "tenant",
            &[
                "id",
                "name",
                "cultureCode",
                "taxRate",
                "quoteSequence",
                "timeZone",
                "currency",
                "units",
                "theme",
            ],
        )?;
        let values = self.context_values(&object, &OrganisationContextDto::FIELDS);
        let tax_rate = self.optional_amount(&object, "taxRate", Decimal::ONE);
        let default = Tenant::default_for_tests();
        let tenant = Tenant {
            id: self.text(&object, "id").unwrap_or(default.id),
            name: self.text(&object, "name").unwrap_or(default.name),
            culture_code: self
                .text(&object, "cultureCode")
                .unwrap_or(default.culture_code),
            tax_rate: tax_rate.ok()?.unwrap_or(default.tax_rate),
            quote_sequence: self
                .whole(&object, "quoteSequence", u64::from(u32::MAX))
                .unwrap_or(default.quote_sequence),
            values,
        };
        Some(tenant)
    }

    /// The signed-in user as `GET /me` answers, and their id. Their own
    /// `timeZone` and `theme`, where given, win over the tenant's, as the
    /// server's do.
    fn user(
        &mut self,
        value: Option<&Value>,
        tenant: &Tenant,
    ) -> Option<(BridgeContextDto, String)> {
        let empty = Value::Object(Map::new());
        let object = self.object(
            value.unwrap_or(&empty),
            "user",
            &["id", "name", "email", "role", "timeZone", "theme"],
        )?;
        let own = self.context_values(&object, &OwnContextDto::FIELDS);
        let id = self
            .text(&object, "id")
            .unwrap_or_else(|| DEFAULT_USER_ID.to_owned());
        let role = match self.text(&object, "role") {
            None => Some(Role::Office),
            Some(token) => {
                let role = Role::from_token(&token);
                if role.is_none() {
                    let tokens: Vec<&str> = Role::ALL.iter().map(|role| role.token()).collect();
                    self.push(
                        "user.role",
                        format!("must be one of {} (got {token:?})", tokens.join(", ")),
                    );
                }
                role
            }
        };
        Some(BridgeContextDto {
            user_name: self
                .text(&object, "name")
                .unwrap_or_else(|| "Test User".to_owned()),
            user_email: self
                .text(&object, "email")
                .unwrap_or_else(|| "test.user@example.test".to_owned()),
            user_role: role?,
            tenant_name: tenant.name.clone(),
            tenant_id: tenant.id.clone(),
            culture_code: tenant.culture_code.clone(),
            // As the server answers: the locale is the tenant's culture code,
            // and the user's own time zone and theme win over the tenant's.
            values: {
                let mut values = ContextValues {
                    locale: Some(tenant.culture_code.clone()),
                    ..tenant.values.clone()
                };
                values.apply(&own);
                values
            },
        })
        .map(|user| (user, id))
    }

    /// The context values among `fields` that `object` gives, each checked
    /// by the platform's rule (a problem is named at its key).
    fn context_values(&mut self, object: &Object<'_>, fields: &[ContextField]) -> ContextValues {
        let given: Map<String, Value> = object
            .map
            .iter()
            .filter(|(key, _)| fields.iter().any(|field| field.name() == key.as_str()))
            .map(|(key, value)| (key.clone(), value.clone()))
            .collect();
        match ContextValues::read(&Value::Object(given), fields, false) {
            Ok((values, _)) => values,
            Err(error) => {
                for violation in error.details() {
                    self.push(
                        join(&object.path, &violation.path),
                        violation.message.clone(),
                    );
                }
                ContextValues::default()
            }
        }
    }

    fn customers(&mut self, top: &Object<'_>) -> Vec<Customer> {
        let mut seen = HashSet::new();
        let mut customers = Vec::new();
        for (i, item) in self.array(top, "customers").iter().enumerate() {
            let path = format!("customers[{i}]");
            let Some(object) = self.object(item, &path, &["id", "name", "email", "phone"]) else {
                continue;
            };
            let id = self.id(&object, &mut seen, "customer");
            let name = self.required_text(&object, "name");
            let email = self.plain_text(&object, "email");
            let phone = self.plain_text(&object, "phone");
            if let Some(name) = name {
                customers.push(Customer {
                    id,
                    name,
                    email,
                    phone,
                });
            }
        }
        customers
    }

    fn task_templates(&mut self, top: &Object<'_>) -> Vec<TaskTemplate> {
        let mut seen = HashSet::new();
        let mut codes = HashSet::new();
        let mut templates = Vec::new();
        for (i, item) in self.array(top, "taskTemplates").iter().enumerate() {
            let path = format!("taskTemplates[{i}]");
            let known = ["id", "code", "name", "unitPrice", "costPrice", "active"];
            let Some(object) = self.object(item, &path, &known) else {
                continue;
            };
            let id = self.id(&object, &mut seen, "task template");
            let code = self.unique_code(&object, &mut codes, "task template");
            let name = self.required_text(&object, "name");
            let unit_price = self.amount(&object, "unitPrice", MAX_LINE_PRICE);
            let cost_price = self.optional_amount(&object, "costPrice", MAX_LINE_PRICE);
            let active = self.boolean(&object, "active", true);
            if let (Some(code), Some(name), Some(unit_price), Ok(cost_price)) =
                (code, name, unit_price, cost_price)
            {
                templates.push(TaskTemplate {
                    id,
                    code,
                    name,
                    unit_price,
                    cost_price: cost_price.unwrap_or(unit_price),
                    active,
                });
            }
        }
        templates
    }

    /// A row's `code`, which no other row of the table has.
    fn unique_code(
        &mut self,
        object: &Object<'_>,
        seen: &mut HashSet<String>,
        table: &str,
    ) -> Option<String> {
        let code = self.required_text(object, "code")?;
        if !seen.insert(code.clone()) {
            self.push(
                join(&object.path, "code"),
                format!("another {table} has the code {code:?}"),
            );
        }
        Some(code)
    }

    fn products(&mut self, top: &Object<'_>, templates: &[TaskTemplate]) -> Vec<Product> {
        let mut seen = HashSet::new();
        let mut skus = HashSet::new();
        let mut products = Vec::new();
        for (i, item) in self.array(top, "products").iter().enumerate() {
            let path = format!("products[{i}]");
            let known = [
                "id",
                "sku",
                "name",
                "unit",
                "sellPrice",
                "costPrice",
                "active",
                "taskSequence",
            ];
            let Some(object) = self.object(item, &path, &known) else {
                continue;
            };
            let id = self.id(&object, &mut seen, "product");
            let sku = self.required_text(&object, "sku");
            if let Some(sku) = &sku {
                if !skus.insert(sku_key(sku)) {
                    self.push(
                        join(&path, "sku"),
                        format!("another product has the sku {sku:?} (skus differ in more than letter case)"),
                    );
                }
            }
            let name = self.required_text(&object, "name");
            let unit = self.unit(&object);
            let price = self.amount(&object, "sellPrice", MAX_LINE_PRICE);
            let cost = self.optional_amount(&object, "costPrice", MAX_LINE_PRICE);
            let active = self.boolean(&object, "active", true);
            let task_sequence = self.task_sequence(&object, templates);
            if let (Some(sku), Some(name), Some(unit), Some(price), Ok(cost), Some(task_sequence)) =
                (sku, name, unit, price, cost, task_sequence)
            {
                products.push(Product {
                    id,
                    sku,
                    name,
                    unit,
                    price,
                    cost: cost.unwrap_or(price),
                    active,
                    task_sequence,
                });
            }
        }
        products
    }

    /// A row's `unit` token, `T_ITEM` when absent.
    fn unit(&mut self, object: &Object<'_>) -> Option<Unit> {
        let Some(token) = self.text(object, "unit") else {
            return object
                .map
                .get("unit")
                .is_none_or(Value::is_null)
                .then_some(Unit::Item);
        };
        let unit = Unit::from_token(&token);
        if unit.is_none() {
            self.push(
                join(&object.path, "unit"),
                format!(
                    "must be one of {} (got {token:?})",
                    Unit::ALL.map(Unit::token).join(", ")
                ),
            );
        }
        unit
    }

    fn task_sequence(
        &mut self,
        product: &Object<'_>,
        templates: &[TaskTemplate],
    ) -> Option<Vec<(String, Decimal)>> {
        let mut steps = Vec::new();
        let mut valid = true;
        for (j, item) in self.array(product, "taskSequence").iter().enumerate() {
            let path = format!("{}.taskSequence[{j}]", product.path);
            let Some(object) = self.object(item, &path, &["taskTemplate", "qtyPerUnit"]) else {
                valid = false;
                continue;
            };
            let template = self
                .required_text(&object, "taskTemplate")
                .and_then(|code| {
                    let found = templates.iter().find(|template| template.code == code);
                    if found.is_none() {
                        self.push(
                            join(&path, "taskTemplate"),
                            format!("no task template has the code {code:?}"),
                        );
                    }
                    found.map(|template| template.id.clone())
                });
            let qty = match self.decimal(&object, "qtyPerUnit") {
                Ok(Some(qty)) if qty > Decimal::ZERO && qty <= MAX_QTY_PER_UNIT => Some(qty),
                Ok(Some(qty)) => {
                    self.push(
                        join(&path, "qtyPerUnit"),
                        format!(
                            "must be greater than 0 and at most {MAX_QTY_PER_UNIT} (got {qty})"
                        ),
                    );
                    None
                }
                Ok(None) => {
                    self.push(join(&path, "qtyPerUnit"), "is required");
                    None
                }
                Err(()) => None,
            };
            match (template, qty) {
                (Some(template), Some(qty)) => steps.push((template, qty)),
                _ => valid = false,
            }
        }
        valid.then_some(steps)
    }

    fn cost_items(&mut self, top: &Object<'_>) -> Vec<CostItem> {
        let mut seen = HashSet::new();
        let mut codes = HashSet::new();
        let mut items = Vec::new();
        for (i, item) in self.array(top, "costItems").iter().enumerate() {
            let path = format!("costItems[{i}]");
            let known = ["id", "code", "name", "type", "active"];
            let Some(object) = self.object(item, &path, &known) else {
                continue;
            };
            let id = self.id(&object, &mut seen, "cost item");
            let code = self.unique_code(&object, &mut codes, "cost item");
            let name = self.required_text(&object, "name");
            let item_type = self
                .text(&object, "type")
                .unwrap_or_else(|| "T_OTHER".to_owned());
            let active = self.boolean(&object, "active", true);
            if let (Some(code), Some(name)) = (code, name) {
                items.push(CostItem {
                    id,
                    code,
                    name,
                    item_type,
                    active,
                });
            }
        }
        items
    }

    fn jobs(&mut self, top: &Object<'_>, customers: &[Customer]) -> Vec<Job> {
        let mut seen = HashSet::new();
        let mut jobs = Vec::new();
        for (i, item) in self.array(top, "jobs").iter().enumerate() {
            let path = format!("jobs[{i}]");
            let known = ["id", "ref", "customerId", "status", "closed"];
            let Some(object) = self.object(item, &path, &known) else {
                continue;
            };
            let id = self.id(&object, &mut seen, "job");
            let reference = self.required_text(&object, "ref");
            let customer_id = self.customer(&object, customers);
            let status = self
                .text(&object, "status")
                .unwrap_or_else(|| "Scheduling".to_owned());
            let closed = self.boolean(&object, "closed", false);
            if let (Some(reference), Some(customer_id)) = (reference, customer_id) {
                jobs.push(Job {
                    id,
                    reference,
                    customer_id,
                    status,
                    closed,
                });
            }
        }
        jobs
    }

    /// The row's `customerId`, which must name a customer; the customer's
    /// id as the fixtures spell it.
    fn customer(&mut self, object: &Object<'_>, customers: &[Customer]) -> Option<String> {
        let id = self.required_text(object, "customerId")?;
        let found = customers
            .iter()
            .find(|customer| id_key(&customer.id) == id_key(&id));
        if found.is_none() {
            self.push(
                join(&object.path, "customerId"),
                format!("no customer has the id {id:?}"),
            );
        }
        found.map(|customer| customer.id.clone())
    }

    fn quotes(
        &mut self,
        top: &Object<'_>,
        customers: &[Customer],
        jobs: &[Job],
        tenant: &Tenant,
        now: &str,
    ) -> Vec<QuoteDto> {
        let mut seen = HashSet::new();
        let mut references = HashSet::new();
        let mut sequence = tenant.quote_sequence;
        let mut quotes = Vec::new();
        for (i, item) in self.array(top, "quotes").iter().enumerate() {
            let path = format!("quotes[{i}]");
            let Some(object) = self.object(item, &path, QUOTE_FIELDS) else {
                continue;
            };
            let id = self.id(&object, &mut seen, "quote");
            let reference = self.text(&object, "ref").unwrap_or_else(|| {
                sequence += 1;
                generated_reference(sequence)
            });
            if !references.insert(reference.clone()) {
                self.push(
                    join(&path, "ref"),
                    format!("another quote has the reference {reference:?}"),
                );
            }
            let customer_id = self.customer(&object, customers);
            let job_id = self.job(&object, jobs);
            let title = self.text(&object, "title");
            let quote_type = self.quote_type(&object);
            let status = self.status(&object);
            let date = self.date(&object).unwrap_or_else(|| now.to_owned());
            let expiry_days = self
                .whole(&object, "expiryDays", u64::from(MAX_EXPIRY_DAYS))
                .and_then(|days| u32::try_from(days).ok())
                .unwrap_or(NEW_QUOTE_EXPIRY_DAYS);
            let lines = self.quote_lines(&object, tenant);
            let group_keys = self.group_keys(&object);
            let customer_name = customer_id.as_ref().and_then(|id| {
                customers
                    .iter()
                    .find(|customer| &customer.id == id)
                    .map(|customer| customer.name.clone())
            });
            let (
                Some(customer_id),
                Some(customer_name),
                Some(quote_type),
                Some(status),
                Some(lines),
                Some(group_keys),
            ) = (
                customer_id,
                customer_name,
                quote_type,
                status,
                lines,
                group_keys,
            )
            else {
                continue;
            };
            let header = QuoteHeader {
                id,
                reference,
                customer_id,
                customer_name,
                job_id,
                title,
                quote_type,
                status,
                date,
                expiry_days,
            };
            // The rules every saved quote keeps, and its amounts.
            match OpenQuote::checked(header, lines, group_keys) {
                Ok(quote) => quotes.push(quote),
                Err(violations) => self.rule_broken(&path, &Rule::InvalidParams(violations)),
            }
        }
        quotes
    }

    /// A quote's `jobId`, which must name a job; the job's id as the
    /// fixtures spell it.
    fn job(&mut self, object: &Object<'_>, jobs: &[Job]) -> Option<String> {
        let job_id = self.text(object, "jobId")?;
        let found = jobs.iter().find(|job| id_key(&job.id) == id_key(&job_id));
        if found.is_none() {
            self.push(
                join(&object.path, "jobId"),
                format!("no job has the id {job_id:?}"),
            );
        }
        found.map(|job| job.id.clone())
    }

    /// A quote's `type`, Quote when absent.
    fn quote_type(&mut self, object: &Object<'_>) -> Option<QuoteType> {
        match self.text(object, "type").as_deref() {
            None | Some("Quote") => Some(QuoteType::Quote),
            Some("Estimate") => Some(QuoteType::Estimate),
            Some(other) => {
                self.push(
                    join(&object.path, "type"),
                    format!("must be \"Quote\" or \"Estimate\" (got {other:?})"),
                );
                None
            }
        }
    }

    /// A quote's `status`, Draft when absent.
    fn status(&mut self, object: &Object<'_>) -> Option<QuoteStatus> {
        // (A status that is no string is recorded by `text`.)
        let Some(name) = self.text(object, "status") else {
            return Some(QuoteStatus::Draft);
        };
        let status = QuoteStatus::from_name(&name);
        if status.is_none() {
            let names: Vec<&str> = QuoteStatus::ALL.iter().map(|s| s.as_str()).collect();
            self.push(
                join(&object.path, "status"),
                format!("must be one of {} (got {name:?})", names.join(", ")),
            );
        }
        status
    }

    /// Records the violations of a protocol rule under `path`.
    fn rule_broken(&mut self, path: &str, error: &Rule) {
        if error.details().is_empty() {
            self.push(path, error.to_string());
        }
        for violation in error.details() {
            self.push(join(path, &violation.path), &violation.message);
        }
    }

    /// A quote's `date`: `YYYY-MM-DD` or the server's `YYYY-MM-DDThh:mm:ssZ`.
    fn date(&mut self, object: &Object<'_>) -> Option<String> {
        let text = self.text(object, "date")?;
        let shape = |text: &str| {
            text.bytes().enumerate().all(|(i, b)| match i {
                4 | 7 => b == b'-',
                10 => b == b'T',
                13 | 16 => b == b':',
                19 => b == b'Z',
                _ => b.is_ascii_digit(),
            })
        };
        match text.len() {
            10 if shape(&text) => Some(format!("{text}T00:00:00Z")),
            20 if shape(&text) => Some(text),
            _ => {
                self.push(
                    join(&object.path, "date"),
                    format!(
                        "must be a date such as \"2025-01-31\" or \"2025-01-31T09:30:00Z\" (got {text:?})"
                    ),
                );
                None
            }
        }
    }

    fn quote_lines(&mut self, quote: &Object<'_>, tenant: &Tenant) -> Option<Vec<QuoteLine>> {
        let mut lines = Vec::new();
        let mut valid = true;
        for (j, item) in self.array(quote, "lines").iter().enumerate() {
            let path = format!("{}.lines[{j}]", quote.path);
            let known = [
                "lineNo",
                "lineType",
                "linkedItemId",
                "productCode",
                "description",
                "specification",
                "location",
                "qty",
                "unit",
                "unitPrice",
                "costPrice",
                "taxRate",
                "section",
                "groupId",
                "injected",
                "parentLineNo",
            ];
            let Some(object) = self.object(item, &path, &known) else {
                valid = false;
                continue;
            };
            let line_no = self
                .whole(&object, "lineNo", u64::from(u32::MAX))
                .and_then(|n| u32::try_from(n).ok())
                .unwrap_or_else(|| u32::try_from(j + 1).unwrap_or(u32::MAX));
            let line_type = match self.text(&object, "lineType") {
                None => Some(LineType::Product),
                Some(token) => {
                    let line_type = LineType::from_token(&token);
                    if line_type.is_none() {
                        self.push(
                            join(&path, "lineType"),
                            format!("must be \"product\", \"task\" or \"cost\" (got {token:?})"),
                        );
                    }
                    line_type
                }
            };
            let description = self.required_text(&object, "description");
            let qty = match self.decimal(&object, "qty") {
                Ok(Some(qty)) => Some(qty),
                Ok(None) => {
                    self.push(join(&path, "qty"), "is required");
                    None
                }
                Err(()) => None,
            };
            let unit = self.unit(&object);
            let unit_price = self.decimal(&object, "unitPrice");
            let unit_price = match unit_price {
                Ok(Some(price)) => Some(price),
                Ok(None) => {
                    self.push(join(&path, "unitPrice"), "is required");
                    None
                }
                Err(()) => None,
            };
            let cost_price = self.decimal(&object, "costPrice");
            let tax_rate = self.decimal(&object, "taxRate");
            let parent_line_no = self
                .whole(&object, "parentLineNo", u64::from(u32::MAX))
                .and_then(|n| u32::try_from(n).ok());
            let line = QuoteLine {
                line_no,
                line_type: line_type?,
                linked_item_id: self.text(&object, "linkedItemId"),
                product_code: self.text(&object, "productCode"),
                description: description?,
                specification: self.text(&object, "specification"),
                location: self.text(&object, "location"),
                qty: qty?,
                unit: unit?,
                unit_price: unit_price?,
                cost_price: cost_price.ok()?.or(unit_price).unwrap_or_default(),
                tax_rate: tax_rate.ok()?.unwrap_or(tenant.tax_rate),
                section: self.text(&object, "section"),
                group_id: self
                    .whole(&object, "groupId", u64::from(u32::MAX))
                    .and_then(|n| u32::try_from(n).ok())
                    .unwrap_or(0),
                injected: self.boolean(&object, "injected", false),
                parent_line_no,
            };
            lines.push(line);
        }
        valid.then_some(lines)
    }

    fn group_keys(
        &mut self,
        quote: &Object<'_>,
    ) -> Option<std::collections::BTreeMap<String, u32>> {
        let mut keys = std::collections::BTreeMap::new();
        match quote.map.get("groupKeys") {
            None | Some(Value::Null) => Some(keys),
            Some(Value::Object(map)) => {
                let mut valid = true;
                for (key, value) in map {
                    if let Some(id) = value.as_u64().and_then(|n| u32::try_from(n).ok()) {
                        keys.insert(key.clone(), id);
                    } else {
                        self.push(
                            format!("{}.groupKeys.{key}", quote.path),
                            format!("must be a group id, a whole number (got {value})"),
                        );
                        valid = false;
                    }
                }
                valid.then_some(keys)
            }
            Some(other) => {
                self.push(
                    join(&quote.path, "groupKeys"),
                    format!(
                        "must be an object of group keys to group ids (got {})",
                        value_kind(other)
                    ),
                );
                None
            }
        }
    }

    /// `openQuote`: the id or reference of one of the quotes.
    fn open_quote(&mut self, top: &Object<'_>, quotes: &[QuoteDto]) -> Option<String> {
        let wanted = self.text(top, "openQuote")?;
        let found = quotes
            .iter()
            .find(|quote| id_key(&quote.header.id) == id_key(&wanted))
            .or_else(|| quotes.iter().find(|quote| quote.header.reference == wanted));
        if found.is_none() {
            self.push(
                "openQuote",
                format!("no quote in quotes has the id or reference {wanted:?}"),
            );
        }
        found.map(|quote| quote.header.id.clone())
    }
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;

    fn problems(fixtures: &Value) -> Vec<String> {
        match read(fixtures, &mut Ids::default(), "2025-01-31T09:30:00Z") {
            Ok(_) => Vec::new(),
            Err(error) => error.violations().iter().map(ToString::to_string).collect(),
        }
    }

    #[test]
    fn empty_fixtures_are_a_tenant_with_an_office_user() {
        let data = read(&json!({}), &mut Ids::default(), "2025-01-31T09:30:00Z").unwrap();
        assert_eq!(data.user.user_role, Role::Office);
        assert_eq!(data.tenant.tax_rate, Decimal::new(15, 2));
        assert!(data.quotes.is_empty() && data.open_quote.is_none());
    }

    #[test]
    fn every_problem_is_named_by_its_path() {
        let found = problems(&json!({
            "products": [
                {"sku": "A", "name": "A", "sellPrice": "1"},
                {"sku": "B", "name": "B", "sellPrice": "2"},
                {"sku": "C", "name": "C", "sellPrice": 89.5},
                {"sku": "a", "name": "D", "sellPrice": "-1", "colour": "red"}
            ],
            "user": {"role": "boss"},
            "openQuote": "nope"
        }));
        assert_eq!(
            found,
            [
                "user.role: must be one of super_user, admin, office, field (got \"boss\")",
                "products[2].sellPrice: must be a decimal string such as \"89.50\" (got 89.5, a number): amounts are strings so that they stay exact",
                "products[3].colour: is not a fixture field here; use id, sku, name, unit, sellPrice, costPrice, active, taskSequence",
                "products[3].sku: another product has the sku \"a\" (skus differ in more than letter case)",
                "products[3].sellPrice: must be from 0 to 1000000000 (got -1)",
                "openQuote: no quote in quotes has the id or reference \"nope\"",
            ]
        );
    }

    #[test]
    fn references_between_rows_must_resolve() {
        let found = problems(&json!({
            "taskTemplates": [{"code": "INSTALL", "name": "Install", "unitPrice": "25"}],
            "products": [{"sku": "A", "name": "A", "sellPrice": "1",
                          "taskSequence": [{"taskTemplate": "LAY", "qtyPerUnit": "0.5"},
                                           {"taskTemplate": "INSTALL", "qtyPerUnit": "0"}]}],
            "jobs": [{"ref": "J-1", "customerId": "c9"}],
        }));
        assert_eq!(
            found,
            [
                "products[0].taskSequence[0].taskTemplate: no task template has the code \"LAY\"",
                "products[0].taskSequence[1].qtyPerUnit: must be greater than 0 and at most 1000 (got 0)",
                "jobs[0].customerId: no customer has the id \"c9\"",
            ]
        );
    }

    #[test]
    fn quote_lines_keep_the_rules_of_a_saved_quote() {
        let found = problems(&json!({
            "customers": [{"id": "c1", "name": "Aroha"}],
            "quotes": [{"customerId": "c1", "lines": [
                {"description": "Board", "qty": "0", "unitPrice": "10"},
                {"lineNo": 1, "description": "Board", "qty": "2", "unitPrice": "10", "taxRate": "1.5"}
            ]}]
        }));
        assert_eq!(
            found,
            [
                "quotes[0].lines[0].qty: must be greater than 0 and at most 1000000000",
                "quotes[0].lines[1].lineNo: 1 is used twice",
                "quotes[0].lines[1].taxRate: must be a fraction from 0 to 1",
            ]
        );
    }

    #[test]
    fn a_quote_is_priced_and_opened_by_reference() {
        let data = read(
            &json!({
                "customers": [{"id": "c1", "name": "Aroha"}],
                "quotes": [{"id": "q1", "ref": "Q-7", "customerId": "C1", "date": "2025-02-01",
                            "lines": [{"description": "Board", "qty": "2", "unitPrice": "10.25"}]}],
                "openQuote": "Q-7",
                "settings": {"wastePercent": 12}
            }),
            &mut Ids::default(),
            "2025-01-31T09:30:00Z",
        )
        .unwrap();
        let quote = &data.quotes[0];
        assert_eq!(quote.header.customer_name, "Aroha");
        assert_eq!(quote.header.date, "2025-02-01T00:00:00Z");
        assert_eq!(quote.totals.total, Decimal::new(2358, 2));
        assert_eq!(data.open_quote.as_deref(), Some("q1"));
        assert_eq!(data.settings.unwrap()["wastePercent"], 12);
    }

    #[test]
    fn with_the_manifest_settings_are_checked_and_defaulted_as_the_platform_does() {
        let manifest = json!({"name": "Flooring", "settings": [
            {"key": "wastePercent", "label": "Waste (%)", "type": "number", "default": 10},
            {"key": "region", "label": "Region", "type": "select", "options": ["North", "South"]}
        ]});
        let data = read(
            &json!({"manifest": manifest, "settings": {"region": "South"}}),
            &mut Ids::default(),
            "2025-01-31T09:30:00Z",
        )
        .unwrap();
        assert_eq!(
            Value::Object(data.settings.unwrap()),
            json!({"wastePercent": 10, "region": "South"})
        );
        assert_eq!(
            problems(
                &json!({"manifest": manifest, "settings": {"wastePercent": "12", "colour": 1}})
            ),
            [
                "settings.colour: is not a setting of this tool; its settings are wastePercent, region",
                "settings.wastePercent: must be a number, not a string",
            ]
        );
        assert_eq!(
            problems(
                &json!({"manifest": {"settings": [{"key": "1x", "label": "X", "type": "text"}]}})
            )
            .len(),
            2
        );
    }

    #[test]
    fn settings_must_be_strings_numbers_and_booleans() {
        assert_eq!(
            problems(&json!({"settings": {"region": ["North"]}})),
            ["settings.region: must be a string, number or boolean (got an array)"]
        );
    }
}
