//! Changing a Draft quote's header in the editor: its customer, type, date
//! and expiry. Every field is optional; each one given is checked, and every
//! problem is reported with its path.

use serde::{Deserialize, Serialize};
use serde_json::Value;

use crate::error::{Error, Violation};
use crate::input::join;
use crate::quote::QuoteType;

/// Longest expiry period, in days.
pub const MAX_EXPIRY_DAYS: u32 = 365;

// The OpenAPI document's description of what `validate_header_change`
// reads; its schema attributes state the same bounds (a server test holds
// them to `MAX_EXPIRY_DAYS`). No `min_properties = 1`: utoipa 5.5 writes it
// out as `maxProperties`.
/// `PATCH /api/v1/quotes/{id}` body: at least one of these fields and no
/// others; `null` is refused. A date must name a real day, from 1970 on.
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
#[derive(Debug, Clone, PartialEq, Eq, Default, Serialize, Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct QuoteHeaderChangeRequest {
    /// The quote's new customer: a customer of the tenant (not blank).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[cfg_attr(
        feature = "openapi",
        schema(
            nullable = false,
            pattern = r"[^\t-\r \u0085\u00a0\u1680\u2000-\u200a\u2028\u2029\u202f\u205f\u3000]"
        )
    )]
    pub customer_id: Option<String>,
    /// Quote or Estimate.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[cfg_attr(feature = "openapi", schema(nullable = false))]
    pub quote_type: Option<QuoteType>,
    /// A real day from 1970 on, `YYYY-MM-DD`, or that day and a time in UTC,
    /// `YYYY-MM-DDTHH:MM:SSZ`.
    // The pattern says exactly what `stored_date` takes (29 February only in
    // leap years); a server test compares the two over four centuries.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[cfg_attr(
        feature = "openapi",
        schema(
            nullable = false,
            pattern = r"^((19[7-9][0-9]|[2-9][0-9]{3})-((0[1-9]|1[0-2])-(0[1-9]|1[0-9]|2[0-8])|(0[13-9]|1[0-2])-(29|30)|(0[13578]|1[02])-31)|(19(7[26]|8[048]|9[26])|[2-9][0-9](0[48]|[2468][048]|[13579][26])|([2468][048]|[3579][26])00)-02-29)(T([01][0-9]|2[0-3]):[0-5][0-9]:[0-5][0-9]Z)?$"
        )
    )]
    pub date: Option<String>,
    /// Days the quote stays valid after its date, 1 to 365.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[cfg_attr(
        feature = "openapi",
        schema(nullable = false, minimum = 1, maximum = 365)
    )]
    pub expiry_days: Option<u32>,
}

/// The fields of a header change; `None` leaves a field as it is.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct HeaderChange {
    /// The quote's new customer (a customer of the tenant).
    pub customer_id: Option<String>,
    /// Quote or Estimate.
    pub quote_type: Option<QuoteType>,
    /// The quote's date, as stored: `YYYY-MM-DDTHH:MM:SSZ`.
    pub date: Option<String>,
    /// Days the quote stays valid after its date.
    pub expiry_days: Option<u32>,
}

impl HeaderChange {
    /// Whether the change changes nothing.
    pub fn is_empty(&self) -> bool {
        *self == Self::default()
    }
}

/// Reads a header change from a JSON body: `{customerId?, quoteType?, date?,
/// expiryDays?}`. `date` is `YYYY-MM-DD` or `YYYY-MM-DDTHH:MM:SSZ`.
pub fn validate_header_change(body: &Value) -> Result<HeaderChange, Error> {
    let Some(fields) = body.as_object() else {
        return Err(Error::invalid(
            "",
            "must be an object with any of customerId, quoteType, date, expiryDays",
        ));
    };
    let mut change = HeaderChange::default();
    let mut violations = Vec::new();
    for (name, value) in fields {
        match name.as_str() {
            "customerId" => match value.as_str().map(str::trim) {
                Some(id) if !id.is_empty() => change.customer_id = Some(id.to_owned()),
                _ => violations.push(Violation::new(name, "must be a customer's id")),
            },
            "quoteType" => match value.as_str() {
                Some("Quote") => change.quote_type = Some(QuoteType::Quote),
                Some("Estimate") => change.quote_type = Some(QuoteType::Estimate),
                _ => violations.push(Violation::new(name, "must be \"Quote\" or \"Estimate\"")),
            },
            "date" => match value.as_str().and_then(stored_date) {
                Some(date) => change.date = Some(date),
                None => violations.push(Violation::new(
                    name,
                    "must be a calendar date such as \"2026-03-31\" (or \"2026-03-31T09:00:00Z\")",
                )),
            },
            // Any JSON number that is whole counts: `30.0` is 30, as JSON
            // Schema's `integer` has it.
            "expiryDays" => match value.as_f64() {
                Some(days)
                    if days.fract() == 0.0
                        && (1.0..=f64::from(MAX_EXPIRY_DAYS)).contains(&days) =>
                {
                    // Whole and from 1 to 365: the conversion is exact.
                    #[allow(clippy::cast_possible_truncation, clippy::cast_sign_loss)]
                    let days = days as u32;
                    change.expiry_days = Some(days);
                }
                _ => violations.push(Violation::new(
                    name,
                    format!("must be a whole number of days from 1 to {MAX_EXPIRY_DAYS}"),
                )),
            },
            // `join` names a field called "" by a path of its own.
            _ => violations.push(Violation::new(
                join("", name),
                "is not a header field; the fields are customerId, quoteType, date, expiryDays",
            )),
        }
    }
    if !violations.is_empty() {
        return Err(Error::InvalidParams(violations));
    }
    if change.is_empty() {
        return Err(Error::invalid(
            "",
            "names no field to change; give any of customerId, quoteType, date, expiryDays",
        ));
    }
    Ok(change)
}

/// `YYYY-MM-DD` or `YYYY-MM-DDTHH:MM:SSZ` as the stored form, if it names a
/// real day and time.
fn stored_date(text: &str) -> Option<String> {
    let (day, time) = match text.split_once('T') {
        Some((day, time)) => (day, time.strip_suffix('Z')?),
        None => (text, "00:00:00"),
    };
    let number = |part: &str, digits: usize| {
        (part.len() == digits && part.bytes().all(|b| b.is_ascii_digit()))
            .then(|| part.parse::<u32>().ok())
            .flatten()
    };
    let mut date = day.split('-');
    let (year, month, dom) = (
        number(date.next()?, 4)?,
        number(date.next()?, 2)?,
        number(date.next()?, 2)?,
    );
    let mut clock = time.split(':');
    let (hour, minute, second) = (
        number(clock.next()?, 2)?,
        number(clock.next()?, 2)?,
        number(clock.next()?, 2)?,
    );
    let leap = year % 4 == 0 && (year % 100 != 0 || year % 400 == 0);
    let days = match month {
        1 | 3 | 5 | 7 | 8 | 10 | 12 => 31,
        4 | 6 | 9 | 11 => 30,
        2 if leap => 29,
        2 => 28,
        _ => return None,
    };
    let valid = date.next().is_none()
        && clock.next().is_none()
        && (1..=days).contains(&dom)
        && year >= 1970
        && hour < 24
        && minute < 60
        && second < 60;
    valid.then(|| format!("{year:04}-{month:02}-{dom:02}T{hour:02}:{minute:02}:{second:02}Z"))
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;
    use crate::ErrorCode;

    #[test]
    fn each_field_is_read_and_dates_take_their_stored_form() {
        let change = validate_header_change(&json!({
            "customerId": " c-1 ", "quoteType": "Estimate", "date": "2028-02-29", "expiryDays": 45
        }))
        .unwrap();
        assert_eq!(
            change,
            HeaderChange {
                customer_id: Some("c-1".to_owned()),
                quote_type: Some(QuoteType::Estimate),
                date: Some("2028-02-29T00:00:00Z".to_owned()),
                expiry_days: Some(45),
            }
        );
        let timed = validate_header_change(&json!({"date": "2026-12-31T23:59:59Z"})).unwrap();
        assert_eq!(timed.date.as_deref(), Some("2026-12-31T23:59:59Z"));
    }

    #[test]
    fn every_bad_field_is_named() {
        let error = validate_header_change(&json!({
            "customerId": "", "quoteType": "Invoice", "date": "2027-02-29",
            "expiryDays": 0, "status": "Sent"
        }))
        .unwrap_err();
        assert_eq!(error.code(), ErrorCode::InvalidParams);
        let Error::InvalidParams(violations) = error else {
            unreachable!()
        };
        let mut paths: Vec<&str> = violations.iter().map(|v| v.path.as_str()).collect();
        paths.sort_unstable();
        assert_eq!(
            paths,
            ["customerId", "date", "expiryDays", "quoteType", "status"]
        );
    }

    #[test]
    fn a_field_called_empty_string_has_a_path_of_its_own() {
        // The empty path means the whole request, which would not say what
        // was wrong.
        let Err(Error::InvalidParams(violations)) =
            validate_header_change(&json!({"": 1, "expiryDays": 7}))
        else {
            unreachable!()
        };
        let paths: Vec<&str> = violations.iter().map(|v| v.path.as_str()).collect();
        assert_eq!(paths, ["[\"\"]"]);
    }

    #[test]
    fn impossible_dates_and_empty_changes_are_refused() {
        for date in [
            "2026-13-01",
            "2026-04-31",
            "26-01-01",
            "2026-01-01T24:00:00Z",
            "2026-01-01T10:00:00",
            "2026-1-1",
        ] {
            assert!(
                validate_header_change(&json!({ "date": date })).is_err(),
                "{date}"
            );
        }
        assert!(validate_header_change(&json!({})).is_err());
        assert!(validate_header_change(&json!([])).is_err());
        assert!(validate_header_change(&json!({"expiryDays": 366})).is_err());
    }
}
