//! Little-endian fields read from a byte slice, bounds-checked: running off
//! the end gives `None`, never a panic.

/// A position in a byte slice, moving forward as fields are read.
pub(crate) struct ByteReader<'a> {
    bytes: &'a [u8],
    at: usize,
}

impl<'a> ByteReader<'a> {
    /// Starts reading `bytes` at offset `at` (which may be out of range).
    pub(crate) fn at(bytes: &'a [u8], at: usize) -> Self {
        Self { bytes, at }
    }

    /// The next `len` bytes.
    pub(crate) fn take(&mut self, len: usize) -> Option<&'a [u8]> {
        let end = self.at.checked_add(len)?;
        let slice = self.bytes.get(self.at..end)?;
        self.at = end;
        Some(slice)
    }

    fn array<const N: usize>(&mut self) -> Option<[u8; N]> {
        self.take(N)?.try_into().ok()
    }

    /// The next two bytes as a little-endian `u16`.
    pub(crate) fn u16(&mut self) -> Option<u16> {
        self.array().map(u16::from_le_bytes)
    }

    /// The next four bytes as a little-endian `u32`.
    pub(crate) fn u32(&mut self) -> Option<u32> {
        self.array().map(u32::from_le_bytes)
    }
}

#[cfg(test)]
mod tests {
    use super::ByteReader;

    #[test]
    fn reads_fields_and_stops_at_the_end() {
        let mut reader = ByteReader::at(&[1, 0, 2, 0, 0, 0, 9], 0);
        assert_eq!(reader.u16(), Some(1));
        assert_eq!(reader.u32(), Some(2));
        assert_eq!(reader.u16(), None);
        assert_eq!(ByteReader::at(&[1, 2], usize::MAX).take(1), None);
    }
}
