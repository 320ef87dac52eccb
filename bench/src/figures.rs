//! Medians, means and how the figures are printed.

/// The median of `values` (the mean of the middle two for an even count); `None` when empty.
pub(crate) fn median(values: &[f64]) -> Option<f64> {
    let mut sorted = values.to_vec();
    sorted.sort_by(f64::total_cmp);
    let middle = sorted.len() / 2;
    match sorted.len() {
        0 => None,
        n if n % 2 == 1 => sorted.get(middle).copied(),
        _ => Some((sorted.get(middle - 1)? + sorted.get(middle)?) / 2.0),
    }
}

/// The mean of `values` (NaN when empty).
pub(crate) fn mean(values: &[f64]) -> f64 {
    #[allow(clippy::cast_precision_loss)] // a few thousand samples
    let count = values.len() as f64;
    values.iter().sum::<f64>() / count
}

/// `value` rounded to `decimals` places, for the JSON reports (which say no more than the
/// terminal does).
pub(crate) fn rounded(value: f64, decimals: i32) -> f64 {
    let scale = 10_f64.powi(decimals);
    (value * scale).round() / scale
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_median_is_the_middle_value() {
        assert_eq!(median(&[]), None);
        assert_eq!(median(&[4.0]), Some(4.0));
        assert_eq!(median(&[9.0, 1.0, 5.0]), Some(5.0));
        assert_eq!(median(&[4.0, 1.0, 3.0, 2.0]), Some(2.5));
        assert_eq!(median(&[0.2, 0.1, 0.1, 10.0, 0.1]), Some(0.1));
    }

    #[test]
    fn the_mean_and_rounding() {
        assert!((mean(&[0.01, 0.02, 0.03]) - 0.02).abs() < 1e-12);
        assert!(mean(&[]).is_nan());
        assert_eq!(rounded(1.142_857, 3).to_string(), "1.143");
        assert_eq!(rounded(1500.25, 1).to_string(), "1500.3");
        assert_eq!(rounded(4.0, 2).to_string(), "4");
    }
}
