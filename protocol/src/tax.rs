//! Tax rates: `quotes.create` takes a decimal fraction; `quotes.addLines`
//! takes a fraction or a percentage and normalises it to a fraction.

use rust_decimal::Decimal;

use crate::money::decimal_from_f64;

/// A tax rate as given to `quotes.addLines` (15 or 0.15), normalised to a
/// fraction: above 1 it is a percentage, 0 to 1 inclusive it is a fraction.
/// Negative rates and percentages above 100 are refused with the reason.
pub fn normalise_add_line_rate(rate: f64) -> Result<Decimal, String> {
    let value = decimal_from_f64(rate).ok_or_else(|| "must be a finite number".to_owned())?;
    if value.is_sign_negative() && !value.is_zero() {
        return Err(format!("must not be negative (got {rate})"));
    }
    if value <= Decimal::ONE {
        return Ok(value);
    }
    if value <= Decimal::ONE_HUNDRED {
        // Dividing by 100 is moving the decimal point: exact, and far cheaper
        // than a decimal division.
        let mut fraction = value;
        return Ok(match fraction.set_scale(value.scale() + 2) {
            Ok(()) => fraction.normalize(),
            Err(_) => (value / Decimal::ONE_HUNDRED).normalize(),
        });
    }
    Err(format!(
        "must be a percentage up to 100 or a fraction up to 1 (15 and 0.15 both mean 15%); got {rate}"
    ))
}

/// A tax rate as given to `quotes.create` and the REST API: a decimal
/// fraction from 0 to 1.
pub fn fraction_rate(rate: f64) -> Result<Decimal, String> {
    let value = decimal_from_f64(rate).ok_or_else(|| "must be a finite number".to_owned())?;
    if value.is_sign_negative() && !value.is_zero() {
        return Err(format!("must not be negative (got {rate})"));
    }
    if value > Decimal::ONE {
        return Err(format!(
            "must be a decimal fraction from 0 to 1: 0.15 means 15%; got {rate}"
        ));
    }
    Ok(value)
}
