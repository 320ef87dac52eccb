//! Catalog positions by id, for the lookups behind every `addLines` line.
//!
//! Ids compare case-insensitively and without surrounding braces or space.
//! GUIDs, the usual ids, are kept as 128-bit numbers: a lookup then parses
//! 32 hex digits, mixes them into one word and follows no pointer to a key
//! string, which matters in a catalog of 100 000 products.

use std::borrow::Cow;
use std::collections::HashMap;
use std::hash::{BuildHasherDefault, Hasher};

/// The canonical form of an id: lower case, without surrounding braces or
/// space.
pub(crate) fn id_key(id: &str) -> String {
    lookup_key(id).into_owned()
}

/// [`id_key`] without an allocation when the id is already in that form
/// (the usual case: ids come from the catalog itself).
fn lookup_key(id: &str) -> Cow<'_, str> {
    let canonical = !id.is_empty()
        && id
            .bytes()
            .all(|b| !b.is_ascii_uppercase() && !b.is_ascii_whitespace() && b != b'{' && b != b'}');
    if canonical {
        Cow::Borrowed(id)
    } else {
        Cow::Owned(
            id.trim()
                .trim_start_matches('{')
                .trim_end_matches('}')
                .to_ascii_lowercase(),
        )
    }
}

/// Positions by id: GUIDs by their number, other ids by their [`id_key`].
#[derive(Debug, Clone, Default)]
pub(crate) struct IdIndex {
    guids: HashMap<u128, usize, BuildHasherDefault<GuidHasher>>,
    others: HashMap<String, usize>,
}

impl IdIndex {
    /// Records `position` for `id`; a later id with the same key wins.
    pub(crate) fn insert(&mut self, id: &str, position: usize) {
        match guid(id) {
            Some(guid) => self.guids.insert(guid, position),
            None => self.others.insert(id_key(id), position),
        };
    }

    /// The position recorded for `id`.
    pub(crate) fn get(&self, id: &str) -> Option<usize> {
        match guid(id) {
            Some(guid) => self.guids.get(&guid),
            None => self.others.get(lookup_key(id).as_ref()),
        }
        .copied()
    }
}

/// A GUID (`8-4-4-4-12` hex digits, either case, optionally in braces or
/// with surrounding space) as a number; `None` for anything else.
pub(crate) fn guid(id: &str) -> Option<u128> {
    // The usual spelling, 36 bytes, needs no trimming.
    let id = if id.len() == 36 {
        id
    } else {
        let id = id.trim();
        id.strip_prefix('{')
            .and_then(|inner| inner.strip_suffix('}'))
            .unwrap_or(id)
    };
    let bytes: &[u8; 36] = id.as_bytes().try_into().ok()?;
    if [8, 13, 18, 23].iter().any(|&at| bytes[at] != b'-') {
        return None;
    }
    // Two 64-bit halves: 128-bit shifts cost several instructions each on
    // wasm32, where this runs for every line of a batch.
    let high = hex_digits(&[&bytes[..8], &bytes[9..13], &bytes[14..18]])?;
    let low = hex_digits(&[&bytes[19..23], &bytes[24..]])?;
    Some((u128::from(high) << 64) | u128::from(low))
}

/// Each byte's value as a hex digit; [`NOT_HEX`] for any other byte.
const HEX_VALUES: [u8; 256] = {
    let mut table = [NOT_HEX; 256];
    let mut digit: u8 = 0;
    while digit < 16 {
        let (lower, upper) = if digit < 10 {
            (b'0' + digit, b'0' + digit)
        } else {
            (b'a' + digit - 10, b'A' + digit - 10)
        };
        table[lower as usize] = digit;
        table[upper as usize] = digit;
        digit += 1;
    }
    table
};

/// Marks a byte that is not a hex digit in [`HEX_VALUES`].
const NOT_HEX: u8 = 0x10;

/// The 16 hex digits in `parts` as a number.
fn hex_digits(parts: &[&[u8]]) -> Option<u64> {
    let mut value: u64 = 0;
    let mut seen = 0;
    for &byte in parts.iter().copied().flatten() {
        let digit = HEX_VALUES[usize::from(byte)];
        seen |= digit;
        value = (value << 4) | u64::from(digit & 0x0f);
    }
    // One check for the lot: any byte that was not a digit set the mark.
    (seen & NOT_HEX == 0).then_some(value)
}

/// Hashes a GUID's number with one multiply. The ids are the catalog's own,
/// issued by the backend, not chosen by whoever sends a batch, so `SipHash`'s
/// protection against chosen keys buys nothing here; the multiply also
/// spreads ids that differ only in a few digits (sequential GUIDs).
#[derive(Debug, Clone, Copy, Default)]
pub(crate) struct GuidHasher(u64);

/// An odd constant with well-mixed bits (the 64-bit golden ratio).
const MIX: u64 = 0x9e37_79b9_7f4a_7c15;

impl Hasher for GuidHasher {
    fn finish(&self) -> u64 {
        self.0
    }

    fn write_u128(&mut self, value: u128) {
        // Truncation keeps each half; the folding mixes them.
        #[allow(clippy::cast_possible_truncation)]
        let (high, low) = ((value >> 64) as u64, value as u64);
        let folded = (high ^ low.rotate_left(32)).wrapping_mul(MIX);
        // hashbrown takes its tag from the top bits and its bucket from the
        // bottom ones: fold the well-mixed top half down into both.
        self.0 = folded ^ (folded >> 29);
    }

    fn write(&mut self, bytes: &[u8]) {
        // Only `u128` keys use this hasher; any other input still hashes.
        for &byte in bytes {
            self.0 = (self.0.rotate_left(5) ^ u64::from(byte)).wrapping_mul(MIX);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn guids_read_in_any_spelling() {
        let plain = guid("5d0c6e1e-0000-4000-8000-000000000001");
        assert!(plain.is_some());
        assert_eq!(guid("{5D0C6E1E-0000-4000-8000-000000000001}"), plain);
        assert_eq!(guid("  5d0c6e1e-0000-4000-8000-000000000001 "), plain);
        assert_eq!(
            guid("00000000-0000-0000-0000-0000000000ff"),
            Some(0xff),
            "the low half is the last 16 digits"
        );
        assert_eq!(
            guid("00000001-0000-0000-0000-000000000000"),
            Some(1 << 96),
            "the high half is the first 16 digits"
        );
    }

    #[test]
    fn near_guids_are_other_ids() {
        for id in [
            "",
            "5d0c6e1e-0000-4000-8000-00000000000",
            "5d0c6e1e-0000-4000-8000-0000000000011",
            "5d0c6e1e00000-4000-8000-000000000001",
            "5d0c6e1e-0000-4000-8000-00000000000g",
            "5d0c6e1e-0000-4000-8000+000000000001",
            "{5d0c6e1e-0000-4000-8000-000000000001",
            "5d0c6e1e-0000-4000-8000-00000000000é",
        ] {
            assert_eq!(guid(id), None, "{id:?}");
        }
    }

    #[test]
    fn the_index_finds_guids_and_other_ids_by_their_key() {
        let mut index = IdIndex::default();
        for i in 0..1000_usize {
            index.insert(&format!("5d0c6e1e-0000-4000-8000-{i:012}"), i);
        }
        index.insert("Travel-Cost", 1000);
        for i in (0..1000_usize).step_by(37) {
            assert_eq!(
                index.get(&format!("{{5D0C6E1E-0000-4000-8000-{i:012}}}")),
                Some(i)
            );
        }
        assert_eq!(index.get(" travel-cost "), Some(1000));
        assert_eq!(index.get("5d0c6e1e-0000-4000-8000-000000001000"), None);
        assert_eq!(index.get("travel"), None);
    }
}
