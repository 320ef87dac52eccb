//! Money and quantities in decimal arithmetic.
//!
//! JSON carries numbers as binary floats; they become [`Decimal`] at the edge
//! (so `0.1 + 0.2` as typed by a person is `0.3`), every sum and product is
//! decimal, and money is rounded half away from zero to 2 places.

use rust_decimal::prelude::{FromPrimitive, ToPrimitive};
use rust_decimal::{Decimal, RoundingStrategy};
use serde::{Deserialize, Serialize};

/// Decimal places of money amounts.
pub const MONEY_DP: u32 = 2;

/// A JSON number as a decimal: `None` when it is not finite or too large to
/// be a quantity or an amount. A float holds 15 significant decimal digits
/// exactly, so the number keeps 15 and the binary noise beyond them is
/// dropped: `0.1 + 0.2` gives `0.3`, `89.5 * 0.6` gives `53.7`, and a typed
/// `4455184554.02` stays that.
pub fn decimal_from_f64(value: f64) -> Option<Decimal> {
    if !value.is_finite() {
        return None;
    }
    // Typed quantities and prices mostly have a few decimal places: those
    // are a scaled integer at once (the property tests check that this
    // agrees with the general way below on every float).
    for (scale, factor) in (0_u32..).zip(POWERS_OF_TEN.iter().take(7)) {
        let scaled = value * factor;
        if scaled.fract() == 0.0 && scaled.abs() < FIFTEEN_DIGITS {
            return whole_scaled(scaled, scale);
        }
    }
    fifteen_digits(value)
}

/// `value` rounded to 15 significant digits, the general way.
pub fn fifteen_digits(value: f64) -> Option<Decimal> {
    if value == 0.0 {
        return Some(Decimal::ZERO);
    }
    #[allow(clippy::cast_possible_truncation)] // a float's decimal exponent is within ±330
    let exponent = value.abs().log10().floor() as i32;
    // `log10` can land one below near a power of ten: then 16 digits come
    // out, and one scale less is right.
    for scale in [14 - exponent, 13 - exponent] {
        let Some(factor) = usize::try_from(scale)
            .ok()
            .and_then(|i| POWERS_OF_TEN.get(i))
        else {
            break;
        };
        let scaled = (value * factor).round();
        if scaled.abs() < FIFTEEN_DIGITS {
            return whole_scaled(scaled, scale.unsigned_abs());
        }
    }
    // Very large or very small: the decimal type's own conversion (tiny
    // values become 0; beyond its range, `None`).
    Decimal::from_scientific(&format!("{value:.14e}"))
        .ok()
        .or_else(|| Decimal::from_f64(value))
        .map(|d| d.normalize())
}

/// `scaled / 10^scale` for a whole `scaled` below 10^15, without trailing
/// zeros.
fn whole_scaled(scaled: f64, scale: u32) -> Option<Decimal> {
    #[allow(clippy::cast_possible_truncation)] // whole and below 10^15
    let mut mantissa = scaled as i64;
    let mut scale = scale;
    while scale > 0 && mantissa % 10 == 0 {
        mantissa /= 10;
        scale -= 1;
    }
    Decimal::try_new(mantissa, scale).ok()
}

/// 10^0 to 10^22, each exact in an `f64`.
const POWERS_OF_TEN: [f64; 23] = [
    1e0, 1e1, 1e2, 1e3, 1e4, 1e5, 1e6, 1e7, 1e8, 1e9, 1e10, 1e11, 1e12, 1e13, 1e14, 1e15, 1e16,
    1e17, 1e18, 1e19, 1e20, 1e21, 1e22,
];

/// Integers below this have at most 15 digits.
const FIFTEEN_DIGITS: f64 = 1e15;

/// A decimal as a JSON number. Exact for every amount rounded to 2 places in
/// the ranges that validation allows.
pub fn decimal_to_f64(value: Decimal) -> f64 {
    value.to_f64().unwrap_or(0.0)
}

/// Rounds to 2 places, half away from zero (2.675 → 2.68, -2.665 → -2.67).
pub fn round_money(value: Decimal) -> Decimal {
    value.round_dp_with_strategy(MONEY_DP, RoundingStrategy::MidpointAwayFromZero)
}

// Validation bounds every quantity and price far below the decimal range, so
// these never saturate; they exist so that no arithmetic can panic.
fn mul(a: Decimal, b: Decimal) -> Decimal {
    a.checked_mul(b).unwrap_or(Decimal::MAX)
}

fn add(a: Decimal, b: Decimal) -> Decimal {
    a.checked_add(b).unwrap_or(Decimal::MAX)
}

/// A struct of money amounts: each field a [`Decimal`] that is a JSON number
/// on the wire ([`as_number`]) and an `f64` in the OpenAPI document; the
/// attributes every amount needs, written once.
macro_rules! amounts {
    (
        $(#[$attr:meta])*
        pub struct $name:ident {
            $( $(#[doc = $doc:expr])* pub $field:ident, )*
        }
    ) => {
        $(#[$attr])*
        pub struct $name {
            $(
                $(#[doc = $doc])*
                #[serde(with = "as_number")]
                #[cfg_attr(feature = "openapi", schema(value_type = f64))]
                pub $field: Decimal,
            )*
        }
    };
}

amounts! {
    /// The amounts of one quote line.
    #[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
    #[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Serialize, Deserialize)]
    #[serde(rename_all = "camelCase")]
    pub struct LineAmounts {
        /// qty × SELL, rounded.
        pub nett,
        /// nett × tax rate, rounded.
        pub tax,
        /// nett + tax.
        pub total,
        /// qty × BUY, rounded.
        pub cost,
    }
}

impl LineAmounts {
    /// Computes a line's amounts from its quantity, prices and tax fraction.
    pub fn compute(qty: Decimal, sell: Decimal, buy: Decimal, tax_rate: Decimal) -> Self {
        let nett = round_money(mul(qty, sell));
        let tax = round_money(mul(nett, tax_rate));
        Self {
            nett,
            tax,
            total: add(nett, tax),
            cost: round_money(mul(qty, buy)),
        }
    }

    /// Adds `line`'s amounts to these, field by field.
    fn add_line(&mut self, line: Self) {
        self.nett = add(self.nett, line.nett);
        self.tax = add(self.tax, line.tax);
        self.total = add(self.total, line.total);
        self.cost = add(self.cost, line.cost);
    }
}

amounts! {
    /// The totals of a quote: sums of its lines' amounts, plus margin.
    #[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
    #[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Serialize, Deserialize)]
    #[serde(rename_all = "camelCase")]
    pub struct Totals {
        /// Sum of line costs (qty × BUY).
        pub cost,
        /// nett − cost.
        pub margin,
        /// margin / nett as a percentage, rounded to 2 places; 0 when nett is 0.
        pub margin_percent,
        /// Sum of line netts.
        pub nett,
        /// Sum of line taxes.
        pub tax,
        /// Sum of line totals.
        pub total,
    }
}

impl Totals {
    /// Adds up line amounts.
    pub fn sum(lines: impl IntoIterator<Item = LineAmounts>) -> Self {
        let mut sums = LineAmounts::default();
        for line in lines {
            sums.add_line(line);
        }
        Self::of_sums(sums)
    }

    /// The totals of lines whose amounts add up to `sums`. Apart from [`Totals::sum`], like
    /// [`LineAmounts::add_line`], so that each caller's kind of iterator adds only its loop.
    fn of_sums(sums: LineAmounts) -> Self {
        let LineAmounts {
            nett,
            tax,
            total,
            cost,
        } = sums;
        let margin = nett.checked_sub(cost).unwrap_or(Decimal::MIN);
        let margin_percent = if nett.is_zero() {
            Decimal::ZERO
        } else {
            margin.checked_div(nett).map_or(Decimal::ZERO, |ratio| {
                round_money(mul(ratio, Decimal::ONE_HUNDRED))
            })
        };
        Self {
            cost,
            margin,
            margin_percent,
            nett,
            tax,
            total,
        }
    }
}

/// Serde adapter: a [`Decimal`] as a plain JSON number, as SPEC.md's DTOs
/// type their amounts.
pub mod as_number {
    use rust_decimal::Decimal;
    use serde::de::Error as _;
    use serde::{Deserialize, Deserializer, Serializer};

    /// Writes the decimal as a JSON number.
    pub fn serialize<S: Serializer>(value: &Decimal, serializer: S) -> Result<S::Ok, S::Error> {
        serializer.serialize_f64(super::decimal_to_f64(*value))
    }

    /// Reads a JSON number into a decimal.
    pub fn deserialize<'de, D: Deserializer<'de>>(deserializer: D) -> Result<Decimal, D::Error> {
        let value = f64::deserialize(deserializer)?;
        super::decimal_from_f64(value)
            .ok_or_else(|| D::Error::custom(format!("{value} is not a representable amount")))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn d(text: &str) -> Decimal {
        text.parse().unwrap()
    }

    #[test]
    fn float_noise_is_dropped_at_the_edge() {
        assert_eq!(decimal_from_f64(0.1 + 0.2), Some(d("0.3")));
        assert_eq!(decimal_from_f64(89.5 * 0.6), Some(d("53.7")));
        assert_eq!(decimal_from_f64(4_455_184_554.02), Some(d("4455184554.02")));
        assert_eq!(decimal_from_f64(1e-30), Some(Decimal::ZERO));
        assert_eq!(decimal_from_f64(-0.0), Some(Decimal::ZERO));
        assert_eq!(decimal_from_f64(f64::NAN), None);
        assert_eq!(decimal_from_f64(f64::INFINITY), None);
    }

    #[test]
    fn money_rounds_half_away_from_zero_to_two_places() {
        assert_eq!(round_money(d("2.675")), d("2.68"));
        assert_eq!(round_money(d("2.665")), d("2.67"));
        assert_eq!(round_money(d("-2.665")), d("-2.67"));
        assert_eq!(round_money(d("2.664999")), d("2.66"));
    }
}
