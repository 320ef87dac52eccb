//! Small helpers: time stamps, hashing, random tokens, stored decimals and
//! paging arithmetic.

use std::str::FromStr;

use rand::RngCore;
use rand::rngs::OsRng;
use sha2::{Digest, Sha256};
use time::OffsetDateTime;
use time::macros::format_description;
use toolbridge_protocol::Decimal;
use toolbridge_protocol::paging::PageRequest;

use crate::Error;

/// ISO 8601 UTC to the second: `2025-01-31T09:30:00Z` (sorts as text).
pub(crate) fn iso(moment: OffsetDateTime) -> String {
    moment
        .to_offset(time::UtcOffset::UTC)
        .format(format_description!(
            "[year]-[month]-[day]T[hour]:[minute]:[second]Z"
        ))
        .unwrap_or_default()
}

/// Now, as [`iso`] writes it.
pub(crate) fn now_iso() -> String {
    iso(OffsetDateTime::now_utc())
}

/// Unix seconds as ISO 8601 UTC to the second, `2025-01-31T09:30:00Z` (times the store keeps as
/// numbers, shown as text beside its others); the nearest representable moment for seconds out of
/// `time`'s range.
pub fn iso_from_unix(unix_secs: i64) -> String {
    let moment = OffsetDateTime::from_unix_timestamp(unix_secs).unwrap_or(if unix_secs < 0 {
        OffsetDateTime::UNIX_EPOCH
    } else {
        time::PrimitiveDateTime::MAX.assume_utc()
    });
    iso(moment)
}

/// Now, in Unix seconds.
pub(crate) fn now_unix() -> i64 {
    OffsetDateTime::now_utc().unix_timestamp()
}

/// `bytes` as lowercase hex, two digits a byte.
pub(crate) use hex::encode as hex;

/// Whether `text` is lower-case hex.
pub(crate) fn is_hex(text: &str) -> bool {
    text.bytes()
        .all(|b| b.is_ascii_digit() || (b'a'..=b'f').contains(&b))
}

/// SHA-256 of `data`.
pub(crate) fn sha256(data: &[u8]) -> [u8; 32] {
    Sha256::digest(data).into()
}

/// `bytes` random bytes from the operating system, as hex.
pub(crate) fn random_hex(bytes: usize) -> String {
    let mut buffer = vec![0_u8; bytes];
    OsRng.fill_bytes(&mut buffer);
    hex(&buffer)
}

/// A new id (UUID v4, lower case).
pub(crate) fn new_id() -> String {
    uuid::Uuid::new_v4().to_string()
}

/// A decimal read back from its stored text.
pub(crate) fn decimal(text: &str) -> Result<Decimal, Error> {
    Decimal::from_str(text)
        .map_err(|error| Error::corrupt_because(format_args!("decimal {text:?}"), error))
}

/// An integer column that must fit a `u32`.
pub(crate) fn to_u32(value: i64) -> Result<u32, Error> {
    u32::try_from(value)
        .map_err(|error| Error::corrupt_because(format_args!("count {value}"), error))
}

/// An integer column that must fit a `u64`.
pub(crate) fn to_u64(value: i64) -> Result<u64, Error> {
    u64::try_from(value)
        .map_err(|error| Error::corrupt_because(format_args!("count {value}"), error))
}

/// `LIMIT` and `OFFSET` of a page.
pub(crate) fn limit_offset(page: PageRequest) -> (i64, i64) {
    (
        i64::from(page.page_size()),
        i64::try_from(page.offset()).unwrap_or(i64::MAX),
    )
}

/// Whether a page starts past the last item (nothing to fetch).
pub(crate) fn past_the_end(page: PageRequest, total: u64) -> bool {
    page.offset() >= total
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn unix_seconds_read_as_the_stores_other_times() {
        assert_eq!(iso_from_unix(0), "1970-01-01T00:00:00Z");
        assert_eq!(iso_from_unix(951_782_400), "2000-02-29T00:00:00Z");
        assert_eq!(iso_from_unix(1_795_687_868), "2026-11-26T10:11:08Z");
        assert_eq!(iso_from_unix(-1), "1969-12-31T23:59:59Z");
        assert_eq!(iso_from_unix(i64::MAX), "9999-12-31T23:59:59Z");
    }
}
