//! Who is signed in: `context.get` and the roles of SPEC.md, and the host's
//! context beyond 2.1.0 (time zone, currency, locale, units, theme) with the
//! rules each value follows.

use std::fmt;

use serde::de::{MapAccess, Visitor};
use serde::{Deserialize, Deserializer, Serialize};
use serde_json::Value;

use crate::error::{Error, Violation};
use crate::flatten::{Member, read_members};

/// `context.get()`: the signed-in user and their tenant. The six fields of
/// 2.1.0 are always there; the host's context beyond them ([`ContextValues`])
/// is there when the backend or the page gives it.
///
/// Read by a reader of its own (in `flatten.rs`), which does not buffer
/// the object for the flattened values as serde's derived one would.
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct BridgeContextDto {
    /// Display name of the user.
    pub user_name: String,
    /// The user's sign-in email.
    pub user_email: String,
    /// The user's role token.
    pub user_role: Role,
    /// Display name of the tenant (the organisation).
    pub tenant_name: String,
    /// Identifier of the tenant.
    pub tenant_id: String,
    /// The tenant's culture code, e.g. `en-NZ`.
    pub culture_code: String,
    /// Beyond 2.1.0: the time zone, currency, locale, units and theme in
    /// effect for this user (each left out when not known).
    #[serde(flatten)]
    pub values: ContextValues,
}

impl<'de> Deserialize<'de> for BridgeContextDto {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        struct ContextVisitor;

        impl<'de> Visitor<'de> for ContextVisitor {
            type Value = BridgeContextDto;

            fn expecting(&self, formatter: &mut fmt::Formatter<'_>) -> fmt::Result {
                formatter.write_str("struct BridgeContextDto")
            }

            fn visit_map<A: MapAccess<'de>>(self, map: A) -> Result<BridgeContextDto, A::Error> {
                let mut user_name = Member::new("userName");
                let mut user_email = Member::new("userEmail");
                let mut user_role = Member::new("userRole");
                let mut tenant_name = Member::new("tenantName");
                let mut tenant_id = Member::new("tenantId");
                let mut culture_code = Member::new("cultureCode");
                let rest = read_members(map, |name, map| {
                    match name {
                        "userName" => user_name.read(map)?,
                        "userEmail" => user_email.read(map)?,
                        "userRole" => user_role.read(map)?,
                        "tenantName" => tenant_name.read(map)?,
                        "tenantId" => tenant_id.read(map)?,
                        "cultureCode" => culture_code.read(map)?,
                        _ => return Ok(false),
                    }
                    Ok(true)
                })?;
                Ok(BridgeContextDto {
                    user_name: user_name.required()?,
                    user_email: user_email.required()?,
                    user_role: user_role.required()?,
                    tenant_name: tenant_name.required()?,
                    tenant_id: tenant_id.required()?,
                    culture_code: culture_code.required()?,
                    values: rest.read()?,
                })
            }
        }

        deserializer.deserialize_map(ContextVisitor)
    }
}

/// How lengths and areas are shown.
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Units {
    /// Metres, square metres, kilograms.
    Metric,
    /// Feet, square feet, pounds.
    Imperial,
}

impl Units {
    /// Both, as the wire names them.
    pub const ALL: [Units; 2] = [Units::Metric, Units::Imperial];

    /// The wire token.
    pub fn token(self) -> &'static str {
        match self {
            Units::Metric => "metric",
            Units::Imperial => "imperial",
        }
    }

    /// Parses a wire token (exact match).
    pub fn from_token(token: &str) -> Option<Self> {
        Self::ALL.into_iter().find(|units| units.token() == token)
    }
}

/// The page's colour theme, which a tool's page follows.
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Theme {
    /// Dark text on a light background.
    Light,
    /// Light text on a dark background.
    Dark,
}

impl Theme {
    /// Both, as the wire names them.
    pub const ALL: [Theme; 2] = [Theme::Light, Theme::Dark];

    /// The wire token.
    pub fn token(self) -> &'static str {
        match self {
            Theme::Light => "light",
            Theme::Dark => "dark",
        }
    }

    /// Parses a wire token (exact match).
    pub fn from_token(token: &str) -> Option<Self> {
        Self::ALL.into_iter().find(|theme| theme.token() == token)
    }
}

/// One value of the host's context beyond 2.1.0, by its wire name.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum ContextField {
    /// `timeZone`: an IANA time zone name.
    TimeZone,
    /// `currency`: an ISO 4217 code.
    Currency,
    /// `locale`: a BCP 47 language tag.
    Locale,
    /// `units`: `metric` or `imperial`.
    Units,
    /// `theme`: `light` or `dark`.
    Theme,
}

impl ContextField {
    /// Every field, in the order answers list them.
    pub const ALL: [ContextField; 5] = [
        ContextField::TimeZone,
        ContextField::Currency,
        ContextField::Locale,
        ContextField::Units,
        ContextField::Theme,
    ];

    /// The wire name, e.g. `"timeZone"`.
    pub fn name(self) -> &'static str {
        match self {
            ContextField::TimeZone => "timeZone",
            ContextField::Currency => "currency",
            ContextField::Locale => "locale",
            ContextField::Units => "units",
            ContextField::Theme => "theme",
        }
    }

    /// Parses a wire name (exact match).
    pub fn from_name(name: &str) -> Option<Self> {
        Self::ALL.into_iter().find(|field| field.name() == name)
    }
}

impl fmt::Display for ContextField {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

/// The host's context beyond 2.1.0, each value optional: in `context.get`
/// (what is known), in `context.changed` (only what changed), and in what a
/// page or an administrator sets (only what is set).
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct ContextValues {
    /// The IANA time zone to show times in, e.g. `Pacific/Auckland`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub time_zone: Option<String>,
    /// The ISO 4217 code of the currency amounts are in, e.g. `NZD`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub currency: Option<String>,
    /// The BCP 47 language tag to format numbers and dates with, e.g.
    /// `en-NZ`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub locale: Option<String>,
    /// How lengths and areas are shown.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub units: Option<Units>,
    /// The page's colour theme.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub theme: Option<Theme>,
}

impl ContextValues {
    /// Whether no value is set.
    pub fn is_empty(&self) -> bool {
        self.fields().is_empty()
    }

    /// The fields that have a value, in [`ContextField::ALL`]'s order.
    pub fn fields(&self) -> Vec<ContextField> {
        ContextField::ALL
            .into_iter()
            .filter(|field| match field {
                ContextField::TimeZone => self.time_zone.is_some(),
                ContextField::Currency => self.currency.is_some(),
                ContextField::Locale => self.locale.is_some(),
                ContextField::Units => self.units.is_some(),
                ContextField::Theme => self.theme.is_some(),
            })
            .collect()
    }

    /// Sets each value that `other` has, over this one's.
    pub fn apply(&mut self, other: &ContextValues) {
        fn over<T: Clone>(mine: &mut Option<T>, theirs: Option<&T>) {
            if let Some(value) = theirs {
                *mine = Some(value.clone());
            }
        }
        over(&mut self.time_zone, other.time_zone.as_ref());
        over(&mut self.currency, other.currency.as_ref());
        over(&mut self.locale, other.locale.as_ref());
        over(&mut self.units, other.units.as_ref());
        over(&mut self.theme, other.theme.as_ref());
    }

    /// The values of `self` that `before` did not have: what `context.changed`
    /// carries when the context goes from `before` to `before` with `self`
    /// applied.
    #[must_use]
    pub fn changed_from(&self, before: &ContextValues) -> ContextValues {
        fn new<T: Clone + PartialEq>(after: Option<&T>, before: Option<&T>) -> Option<T> {
            after.filter(|value| Some(*value) != before).cloned()
        }
        ContextValues {
            time_zone: new(self.time_zone.as_ref(), before.time_zone.as_ref()),
            currency: new(self.currency.as_ref(), before.currency.as_ref()),
            locale: new(self.locale.as_ref(), before.locale.as_ref()),
            units: new(self.units.as_ref(), before.units.as_ref()),
            theme: new(self.theme.as_ref(), before.theme.as_ref()),
        }
    }

    /// Reads an object of context values, such as a page or an
    /// administrator sets: only the keys in `fields`, each by its rule
    /// ([`time_zone_problem`], [`currency_problem`], [`locale_problem`], the
    /// tokens of [`Units`] and [`Theme`]). With `clearable`, a `null` value
    /// is allowed and listed in the answer's second part (the value is then
    /// to be cleared).
    ///
    /// # Errors
    ///
    /// `INVALID_PARAMS` with every problem at its key (the whole at `""` when
    /// it is not an object).
    pub fn read(
        value: &Value,
        fields: &[ContextField],
        clearable: bool,
    ) -> Result<(ContextValues, Vec<ContextField>), Error> {
        let Some(object) = value.as_object() else {
            return Err(Error::invalid(
                "",
                format!("must be an object (got {})", crate::input::kind(value)),
            ));
        };
        let mut values = ContextValues::default();
        let mut cleared = Vec::new();
        let mut problems = Vec::new();
        for (key, item) in object {
            let Some(field) = ContextField::from_name(key).filter(|f| fields.contains(f)) else {
                let names: Vec<&str> = fields.iter().map(|field| field.name()).collect();
                problems.push(Violation::new(
                    key.clone(),
                    format!("is not a setting here; use {}", names.join(", ")),
                ));
                continue;
            };
            if item.is_null() && clearable {
                cleared.push(field);
                continue;
            }
            match read_one(&mut values, field, item) {
                Ok(()) => {}
                Err(message) => problems.push(Violation::new(key.clone(), message)),
            }
        }
        if problems.is_empty() {
            Ok((values, cleared))
        } else {
            Err(Error::InvalidParams(problems))
        }
    }
}

/// An organisation's context: what its users' pages and tools show things
/// in (`GET /api/settings/organisation`).
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct OrganisationContextDto {
    /// The IANA time zone times are shown in, e.g. `Pacific/Auckland`.
    pub time_zone: String,
    /// The ISO 4217 code of the currency amounts are in, e.g. `NZD`.
    pub currency: String,
    /// How lengths and areas are shown.
    pub units: Units,
    /// The theme of its users' pages, unless a user chose their own.
    pub theme: Theme,
}

impl OrganisationContextDto {
    /// What an administrator may change.
    pub const FIELDS: [ContextField; 4] = [
        ContextField::TimeZone,
        ContextField::Currency,
        ContextField::Units,
        ContextField::Theme,
    ];

    /// The organisation's values with those set in `change` over them.
    #[must_use]
    pub fn with(&self, change: &ContextValues) -> Self {
        Self {
            time_zone: change
                .time_zone
                .clone()
                .unwrap_or_else(|| self.time_zone.clone()),
            currency: change
                .currency
                .clone()
                .unwrap_or_else(|| self.currency.clone()),
            units: change.units.unwrap_or(self.units),
            theme: change.theme.unwrap_or(self.theme),
        }
    }

    /// The context in effect for a user whose own choices are `own`, with
    /// the tenant's culture code as the locale.
    pub fn for_user(&self, own: &OwnContextDto, culture_code: &str) -> ContextValues {
        ContextValues {
            time_zone: Some(
                own.time_zone
                    .clone()
                    .unwrap_or_else(|| self.time_zone.clone()),
            ),
            currency: Some(self.currency.clone()),
            locale: Some(culture_code.to_owned()),
            units: Some(self.units),
            theme: Some(own.theme.unwrap_or(self.theme)),
        }
    }
}

/// A user's own time zone and theme (`GET /api/session/preferences`); each
/// `null` where the user follows the organisation's.
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct OwnContextDto {
    /// The user's own IANA time zone, or `null` for the organisation's.
    pub time_zone: Option<String>,
    /// The user's own theme, or `null` for the organisation's.
    pub theme: Option<Theme>,
}

impl OwnContextDto {
    /// What a user may choose for themselves.
    pub const FIELDS: [ContextField; 2] = [ContextField::TimeZone, ContextField::Theme];

    /// These choices with `change` set over them and the fields in `cleared`
    /// dropped (followed from the organisation again).
    #[must_use]
    pub fn with(&self, change: &ContextValues, cleared: &[ContextField]) -> Self {
        let mut own = self.clone();
        if change.time_zone.is_some() {
            own.time_zone.clone_from(&change.time_zone);
        }
        if change.theme.is_some() {
            own.theme = change.theme;
        }
        if cleared.contains(&ContextField::TimeZone) {
            own.time_zone = None;
        }
        if cleared.contains(&ContextField::Theme) {
            own.theme = None;
        }
        own
    }
}

/// Reads one value into its slot of `values`, or says what is wrong with it.
fn read_one(values: &mut ContextValues, field: ContextField, item: &Value) -> Result<(), String> {
    let Some(text) = item.as_str() else {
        return Err(format!(
            "must be a string (got {})",
            crate::input::kind(item)
        ));
    };
    let tokens = |all: &[&str]| format!("must be \"{}\" (got {text:?})", all.join("\" or \""));
    match field {
        ContextField::TimeZone => match time_zone_problem(text) {
            None => values.time_zone = Some(text.to_owned()),
            Some(problem) => return Err(problem),
        },
        ContextField::Currency => match currency_problem(text) {
            None => values.currency = Some(text.to_owned()),
            Some(problem) => return Err(problem),
        },
        ContextField::Locale => match locale_problem(text) {
            None => values.locale = Some(text.to_owned()),
            Some(problem) => return Err(problem),
        },
        ContextField::Units => {
            values.units =
                Some(Units::from_token(text).ok_or_else(|| tokens(&Units::ALL.map(Units::token)))?);
        }
        ContextField::Theme => {
            values.theme =
                Some(Theme::from_token(text).ok_or_else(|| tokens(&Theme::ALL.map(Theme::token)))?);
        }
    }
    Ok(())
}

/// The longest time zone name taken (the longest IANA name has 32).
pub const TIME_ZONE_MAX_CHARS: usize = 64;

/// What is wrong with `name` as an IANA time zone name, if anything.
///
/// Always checked: its shape (`Area/Location` or a single name such as
/// `UTC`: letters, digits, `_`, `-`, `+`, parts separated by `/`). With the
/// `time-zones` feature (the server, where values are set), the name must
/// also be one of the time zone database's, spelt exactly as it spells it;
/// without it (the host module, whose size it would double) the browser's
/// own `Intl` is left to make sense of a well-formed name.
pub fn time_zone_problem(name: &str) -> Option<String> {
    let well_formed = !name.is_empty()
        && name.len() <= TIME_ZONE_MAX_CHARS
        && name.split('/').all(|part| {
            !part.is_empty()
                && part
                    .chars()
                    .all(|c| c.is_ascii_alphanumeric() || matches!(c, '_' | '-' | '+'))
        });
    if !well_formed {
        return Some(format!(
            "{name:?} is not a time zone name (an IANA name such as \"Pacific/Auckland\" or \"UTC\")"
        ));
    }
    #[cfg(feature = "time-zones")]
    if !tzdb::knows(name) {
        return Some(format!(
            "{name:?} is not a time zone of the IANA database (such as \"Pacific/Auckland\"; letter case counts)"
        ));
    }
    None
}

#[cfg(feature = "time-zones")]
mod tzdb {
    /// Whether the bundled IANA time zone database has a zone (or a link)
    /// named exactly `name`.
    pub(super) fn knows(name: &str) -> bool {
        jiff::tz::db()
            .get(name)
            .is_ok_and(|zone| zone.iana_name() == Some(name))
    }
}

/// The ISO 4217 codes of the currencies in use (funds, metals and test
/// codes left out), sorted.
pub const CURRENCIES: [&str; 156] = [
    "AED", "AFN", "ALL", "AMD", "ANG", "AOA", "ARS", "AUD", "AWG", "AZN", "BAM", "BBD", "BDT",
    "BGN", "BHD", "BIF", "BMD", "BND", "BOB", "BRL", "BSD", "BTN", "BWP", "BYN", "BZD", "CAD",
    "CDF", "CHF", "CLP", "CNY", "COP", "CRC", "CUP", "CVE", "CZK", "DJF", "DKK", "DOP", "DZD",
    "EGP", "ERN", "ETB", "EUR", "FJD", "FKP", "GBP", "GEL", "GHS", "GIP", "GMD", "GNF", "GTQ",
    "GYD", "HKD", "HNL", "HTG", "HUF", "IDR", "ILS", "INR", "IQD", "IRR", "ISK", "JMD", "JOD",
    "JPY", "KES", "KGS", "KHR", "KMF", "KPW", "KRW", "KWD", "KYD", "KZT", "LAK", "LBP", "LKR",
    "LRD", "LSL", "LYD", "MAD", "MDL", "MGA", "MKD", "MMK", "MNT", "MOP", "MRU", "MUR", "MVR",
    "MWK", "MXN", "MYR", "MZN", "NAD", "NGN", "NIO", "NOK", "NPR", "NZD", "OMR", "PAB", "PEN",
    "PGK", "PHP", "PKR", "PLN", "PYG", "QAR", "RON", "RSD", "RUB", "RWF", "SAR", "SBD", "SCR",
    "SDG", "SEK", "SGD", "SHP", "SLE", "SOS", "SRD", "SSP", "STN", "SVC", "SYP", "SZL", "THB",
    "TJS", "TMT", "TND", "TOP", "TRY", "TTD", "TWD", "TZS", "UAH", "UGX", "USD", "UYU", "UZS",
    "VES", "VND", "VUV", "WST", "XAF", "XCD", "XCG", "XOF", "XPF", "YER", "ZAR", "ZMW", "ZWG",
];

/// What is wrong with `code` as a currency, if anything: it must be one of
/// [`CURRENCIES`], in capitals.
pub fn currency_problem(code: &str) -> Option<String> {
    if CURRENCIES.binary_search(&code).is_ok() {
        None
    } else if code.len() == 3
        && CURRENCIES
            .binary_search(&&*code.to_ascii_uppercase())
            .is_ok()
    {
        Some(format!(
            "{code:?} must be in capitals: {:?}",
            code.to_ascii_uppercase()
        ))
    } else {
        Some(format!(
            "{code:?} is not an ISO 4217 currency code (three capitals such as \"NZD\")"
        ))
    }
}

/// The longest locale (and culture code) taken.
pub const LOCALE_MAX_CHARS: usize = 35;

/// What is wrong with `tag` as a BCP 47 language tag (a locale, or a
/// tenant's culture code), if anything: a language of 2 or 3 letters, then
/// subtags of 2 to 8 letters or digits after hyphens (`en`, `en-NZ`,
/// `zh-Hant-TW`), at most [`LOCALE_MAX_CHARS`] characters.
pub fn locale_problem(tag: &str) -> Option<String> {
    let mut parts = tag.split('-');
    let language = parts.next().unwrap_or_default();
    let well_formed = tag.len() <= LOCALE_MAX_CHARS
        && (2..=3).contains(&language.len())
        && language.chars().all(|c| c.is_ascii_alphabetic())
        && parts.all(|part| {
            (2..=8).contains(&part.len()) && part.chars().all(|c| c.is_ascii_alphanumeric())
        });
    (!well_formed)
        .then(|| format!("{tag:?} is not a language tag (such as \"en-NZ\" or \"zh-Hant-TW\")"))
}

/// A user's role. The wire token is the snake-case name (`super_user`).
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Role {
    /// Everything, including system configuration and integrations.
    SuperUser,
    /// Administration, user management and all operational modules.
    Admin,
    /// Jobs, sales, invoicing, purchasing and customers.
    Office,
    /// Assigned jobs and their tasks.
    Field,
}

impl Role {
    /// Every role, most privileged first.
    pub const ALL: [Role; 4] = [Role::SuperUser, Role::Admin, Role::Office, Role::Field];

    /// The wire token.
    pub fn token(self) -> &'static str {
        match self {
            Role::SuperUser => "super_user",
            Role::Admin => "admin",
            Role::Office => "office",
            Role::Field => "field",
        }
    }

    /// Parses a wire token.
    pub fn from_token(token: &str) -> Option<Self> {
        Self::ALL.into_iter().find(|role| role.token() == token)
    }

    /// The name people read: "Super User".
    pub fn label(self) -> &'static str {
        match self {
            Role::SuperUser => "Super User",
            Role::Admin => "Admin",
            Role::Office => "Office",
            Role::Field => "Field",
        }
    }

    /// Field users read quotes but do not create or change them.
    pub fn can_write_quotes(self) -> bool {
        !matches!(self, Role::Field)
    }

    /// `NOT_ALLOWED` for a role that may not create or change quotes, with
    /// the message the backend answers.
    pub fn check_quote_write(self) -> Result<(), Error> {
        if self.can_write_quotes() {
            Ok(())
        } else {
            Err(Error::NotAllowed(format!(
                "{} users can read quotes but not create or change them",
                self.label()
            )))
        }
    }

    /// Field users see no cost prices, costs or margins.
    pub fn can_see_cost(self) -> bool {
        !matches!(self, Role::Field)
    }

    /// API tokens are managed by Admins and Super Users.
    pub fn can_manage_api_keys(self) -> bool {
        matches!(self, Role::SuperUser | Role::Admin)
    }
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;

    fn context(values: ContextValues) -> BridgeContextDto {
        BridgeContextDto {
            user_name: "Ada".to_owned(),
            user_email: "ada@example.test".to_owned(),
            user_role: Role::Admin,
            tenant_name: "Harbour".to_owned(),
            tenant_id: "t1".to_owned(),
            culture_code: "en-NZ".to_owned(),
            values,
        }
    }

    #[test]
    fn the_2_1_0_fields_stay_as_they_were_and_the_new_ones_sit_beside_them() {
        let plain = serde_json::to_value(context(ContextValues::default())).unwrap();
        assert_eq!(
            plain,
            json!({"userName": "Ada", "userEmail": "ada@example.test", "userRole": "admin",
                   "tenantName": "Harbour", "tenantId": "t1", "cultureCode": "en-NZ"})
        );
        let full = context(ContextValues {
            time_zone: Some("Pacific/Auckland".to_owned()),
            currency: Some("NZD".to_owned()),
            locale: Some("en-NZ".to_owned()),
            units: Some(Units::Metric),
            theme: Some(Theme::Dark),
        });
        let value = serde_json::to_value(&full).unwrap();
        assert_eq!(value["timeZone"], "Pacific/Auckland");
        assert_eq!(value["currency"], "NZD");
        assert_eq!(value["locale"], "en-NZ");
        assert_eq!(value["units"], "metric");
        assert_eq!(value["theme"], "dark");
        assert_eq!(value["cultureCode"], "en-NZ");
        // An older backend's answer, without them, still reads.
        let read: BridgeContextDto = serde_json::from_value(plain).unwrap();
        assert!(read.values.is_empty());
        let read: BridgeContextDto = serde_json::from_value(value).unwrap();
        assert_eq!(read, full);
    }

    #[test]
    fn time_zones_are_iana_names() {
        for name in [
            "Pacific/Auckland",
            "UTC",
            "America/Argentina/Buenos_Aires",
            "Etc/GMT+12",
        ] {
            assert_eq!(time_zone_problem(name), None, "{name}");
        }
        for name in [
            "",
            "Pacific//Auckland",
            "/UTC",
            "Pacific/Auck land",
            "Europe/Zürich",
        ] {
            assert!(time_zone_problem(name).is_some(), "{name:?}");
        }
        assert!(time_zone_problem(&"A".repeat(TIME_ZONE_MAX_CHARS + 1)).is_some());
    }

    #[cfg(feature = "time-zones")]
    #[test]
    fn with_the_database_a_time_zone_must_be_one_of_its_spelt_as_it_spells_it() {
        for name in [
            "Pacific/Auckland",
            "UTC",
            "Europe/London",
            "Australia/Sydney",
        ] {
            assert_eq!(time_zone_problem(name), None, "{name}");
        }
        for name in ["Pacific/Atlantis", "pacific/auckland", "Mars/Olympus_Mons"] {
            let problem = time_zone_problem(name).unwrap_or_default();
            assert!(problem.contains("IANA database"), "{name}: {problem}");
        }
    }

    #[test]
    fn currencies_are_known_iso_4217_codes_in_capitals() {
        assert!(CURRENCIES.windows(2).all(|pair| pair[0] < pair[1]));
        for code in ["NZD", "AUD", "USD", "EUR", "GBP", "JPY"] {
            assert_eq!(currency_problem(code), None, "{code}");
        }
        assert!(
            currency_problem("nzd")
                .unwrap_or_default()
                .contains("capitals: \"NZD\"")
        );
        for code in ["ABC", "NZ", "NZDD", "", "XAU", "XXX"] {
            assert!(
                currency_problem(code)
                    .unwrap_or_default()
                    .contains("ISO 4217"),
                "{code}"
            );
        }
    }

    #[test]
    fn locales_are_language_tags() {
        for tag in ["en", "en-NZ", "zh-Hant-TW", "es-419"] {
            assert_eq!(locale_problem(tag), None, "{tag}");
        }
        for tag in ["", "e", "english", "en_NZ", "en-", "en-N"] {
            assert!(locale_problem(tag).is_some(), "{tag:?}");
        }
    }

    #[test]
    fn values_are_read_by_their_rules_each_problem_at_its_key() {
        let all = ContextField::ALL;
        let (values, cleared) = ContextValues::read(
            &json!({"timeZone": "UTC", "currency": "AUD", "locale": "en-AU", "units": "imperial", "theme": "light"}),
            &all,
            false,
        )
        .unwrap();
        assert!(cleared.is_empty());
        assert_eq!(values.fields(), all);
        assert_eq!(values.units, Some(Units::Imperial));
        let error = ContextValues::read(
            &json!({"timeZone": "Nowhere Land", "currency": "nzd", "units": "furlongs", "theme": 1, "colour": "red"}),
            &all,
            false,
        )
        .unwrap_err();
        let mut paths: Vec<&str> = error.details().iter().map(|v| v.path.as_str()).collect();
        paths.sort_unstable();
        assert_eq!(paths, ["colour", "currency", "theme", "timeZone", "units"]);
        let units = error.details().iter().find(|v| v.path == "units").unwrap();
        assert_eq!(
            units.message,
            "must be \"metric\" or \"imperial\" (got \"furlongs\")"
        );
        // Only the fields asked for; null clears only where that is allowed.
        let own = [ContextField::TimeZone, ContextField::Theme];
        let (values, cleared) =
            ContextValues::read(&json!({"timeZone": null, "theme": "dark"}), &own, true).unwrap();
        assert_eq!(cleared, [ContextField::TimeZone]);
        assert_eq!(values.theme, Some(Theme::Dark));
        let error = ContextValues::read(&json!({"currency": "NZD", "theme": null}), &own, false)
            .unwrap_err();
        let paths: Vec<&str> = error.details().iter().map(|v| v.path.as_str()).collect();
        assert_eq!(paths, ["currency", "theme"]);
        assert_eq!(
            ContextValues::read(&json!([]), &own, true)
                .unwrap_err()
                .details()[0]
                .path,
            ""
        );
    }

    #[test]
    fn a_users_own_choices_win_over_the_organisations() {
        let organisation = OrganisationContextDto {
            time_zone: "Pacific/Auckland".to_owned(),
            currency: "NZD".to_owned(),
            units: Units::Metric,
            theme: Theme::Light,
        };
        let follows = organisation.for_user(&OwnContextDto::default(), "en-NZ");
        assert_eq!(follows.time_zone.as_deref(), Some("Pacific/Auckland"));
        assert_eq!(follows.locale.as_deref(), Some("en-NZ"));
        assert_eq!(follows.theme, Some(Theme::Light));
        let own = OwnContextDto::default().with(
            &ContextValues {
                time_zone: Some("Europe/London".to_owned()),
                theme: Some(Theme::Dark),
                ..ContextValues::default()
            },
            &[],
        );
        let mine = organisation.for_user(&own, "en-NZ");
        assert_eq!(mine.time_zone.as_deref(), Some("Europe/London"));
        assert_eq!(mine.theme, Some(Theme::Dark));
        assert_eq!(mine.currency.as_deref(), Some("NZD"));
        let back = own.with(&ContextValues::default(), &[ContextField::TimeZone]);
        assert_eq!(back.time_zone, None);
        assert_eq!(back.theme, Some(Theme::Dark));
        assert_eq!(
            serde_json::to_value(&back).unwrap(),
            json!({"timeZone": null, "theme": "dark"})
        );
        let changed = organisation.with(&ContextValues {
            currency: Some("AUD".to_owned()),
            ..ContextValues::default()
        });
        assert_eq!(changed.currency, "AUD");
        assert_eq!(changed.time_zone, "Pacific/Auckland");
    }

    #[test]
    fn what_changed_is_only_the_values_that_differ() {
        let before = ContextValues {
            time_zone: Some("UTC".to_owned()),
            theme: Some(Theme::Light),
            ..ContextValues::default()
        };
        let update = ContextValues {
            time_zone: Some("UTC".to_owned()),
            theme: Some(Theme::Dark),
            currency: Some("NZD".to_owned()),
            ..ContextValues::default()
        };
        let changed = update.changed_from(&before);
        assert_eq!(
            changed.fields(),
            [ContextField::Currency, ContextField::Theme]
        );
        assert_eq!(changed.time_zone, None);
        let mut after = before.clone();
        after.apply(&update);
        assert_eq!(after.time_zone.as_deref(), Some("UTC"));
        assert_eq!(after.theme, Some(Theme::Dark));
        assert!(update.changed_from(&after).is_empty());
    }
}
