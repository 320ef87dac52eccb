//! Ids and time stamps for rows the backend makes.

/// Hands out ids shaped like the platform's (lower-case UUIDs), from a
/// counter: the same fixtures give the same ids on every run.
#[derive(Debug, Clone, Default)]
pub(crate) struct Ids {
    next: u64,
}

impl Ids {
    /// The next id.
    pub(crate) fn next(&mut self) -> String {
        self.next += 1;
        format!("00000000-0000-4000-8000-{:012x}", self.next)
    }
}

/// Now, in Unix seconds.
pub(crate) fn now_unix() -> i64 {
    #[cfg(target_arch = "wasm32")]
    {
        // Whole seconds of a millisecond clock: exact in an i64.
        #[allow(clippy::cast_possible_truncation)]
        let seconds = (js_sys::Date::now() / 1000.0).floor() as i64;
        seconds
    }
    #[cfg(not(target_arch = "wasm32"))]
    {
        std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .map_or(0, |elapsed| {
                i64::try_from(elapsed.as_secs()).unwrap_or(i64::MAX)
            })
    }
}

/// ISO 8601 UTC to the second, as the server writes dates:
/// `2025-01-31T09:30:00Z`.
pub(crate) fn iso(unix: i64) -> String {
    let days = unix.div_euclid(86_400);
    let seconds = unix.rem_euclid(86_400);
    let (year, month, day) = civil_from_days(days);
    format!(
        "{year:04}-{month:02}-{day:02}T{:02}:{:02}:{:02}Z",
        seconds / 3600,
        seconds % 3600 / 60,
        seconds % 60
    )
}

/// The calendar date of a day counted from 1970-01-01 (Howard Hinnant's
/// `civil_from_days`).
fn civil_from_days(days: i64) -> (i64, i64, i64) {
    let z = days + 719_468;
    let era = z.div_euclid(146_097);
    let day_of_era = z.rem_euclid(146_097);
    let year_of_era =
        (day_of_era - day_of_era / 1460 + day_of_era / 36_524 - day_of_era / 146_096) / 365;
    let day_of_year = day_of_era - (365 * year_of_era + year_of_era / 4 - year_of_era / 100);
    let shifted_month = (5 * day_of_year + 2) / 153;
    let day = day_of_year - (153 * shifted_month + 2) / 5 + 1;
    let month = if shifted_month < 10 {
        shifted_month + 3
    } else {
        shifted_month - 9
    };
    let year = year_of_era + era * 400 + i64::from(month <= 2);
    (year, month, day)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn dates_are_written_as_the_server_writes_them() {
        assert_eq!(iso(0), "1970-01-01T00:00:00Z");
        assert_eq!(iso(951_782_400), "2000-02-29T00:00:00Z");
        assert_eq!(iso(1_738_315_800), "2025-01-31T09:30:00Z");
        assert_eq!(iso(1_798_761_599), "2026-12-31T23:59:59Z");
    }

    #[test]
    fn ids_are_fresh_and_repeatable() {
        let mut ids = Ids::default();
        assert_eq!(ids.next(), "00000000-0000-4000-8000-000000000001");
        assert_eq!(ids.next(), "00000000-0000-4000-8000-000000000002");
    }
}
