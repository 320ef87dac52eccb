//! Local file headers, read from the archive's bytes and compared with the
//! central directory. Readers that trust only one of the two can be fooled
//! by archives where they disagree, so a bundle must have both say the same.

use crate::byte_reader::ByteReader;
use crate::central_directory::CentralEntry;

const SIGNATURE: u32 = 0x0403_4b50;
const FIXED_LEN: u64 = 30;

/// Flag bit 3: CRC and sizes follow the data in a data descriptor.
pub(crate) const FLAG_DATA_DESCRIPTOR: u16 = 1 << 3;
/// Flags that must agree between the two headers: encryption (bit 0), data
/// descriptor (bit 3) and strong encryption (bit 6).
const FLAGS_COMPARED: u16 = 1 | FLAG_DATA_DESCRIPTOR | (1 << 6);
/// The smallest data descriptor (CRC and two 32-bit sizes, no signature).
const MIN_DESCRIPTOR_LEN: u64 = 12;

/// The fields a local header and a central directory entry both hold, in the
/// same order: from "version needed to extract" to the extra field's length.
pub(crate) struct SharedFields {
    pub(crate) flags: u16,
    pub(crate) method: u16,
    pub(crate) crc32: u32,
    pub(crate) compressed_size: u32,
    pub(crate) uncompressed_size: u32,
    pub(crate) name_len: u16,
    pub(crate) extra_len: u16,
}

impl SharedFields {
    /// Reads them where `reader` stands, just after the version made by (in
    /// a central directory entry) or the signature (in a local header).
    pub(crate) fn read(reader: &mut ByteReader<'_>) -> Option<Self> {
        let _version_needed = reader.u16()?;
        let flags = reader.u16()?;
        let method = reader.u16()?;
        let _time = reader.u16()?;
        let _date = reader.u16()?;
        let crc32 = reader.u32()?;
        let compressed_size = reader.u32()?;
        let uncompressed_size = reader.u32()?;
        let name_len = reader.u16()?;
        let extra_len = reader.u16()?;
        Some(Self {
            flags,
            method,
            crc32,
            compressed_size,
            uncompressed_size,
            name_len,
            extra_len,
        })
    }
}

/// The fields of a local header that are checked.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct LocalHeader<'a> {
    /// General-purpose bit flags.
    pub(crate) flags: u16,
    /// Compression method.
    pub(crate) method: u16,
    /// CRC-32 (zero when a data descriptor follows).
    pub(crate) crc32: u32,
    /// Compressed size (zero when a data descriptor follows).
    pub(crate) compressed_size: u32,
    /// Inflated size (zero when a data descriptor follows).
    pub(crate) uncompressed_size: u32,
    /// The name's bytes.
    pub(crate) name: &'a [u8],
    /// Offset of the entry's data, just after the header.
    pub(crate) data_start: u64,
}

impl<'a> LocalHeader<'a> {
    /// Reads the local header at `offset`; `None` when there is no complete
    /// header with the right signature there.
    pub(crate) fn parse(bytes: &'a [u8], offset: u64) -> Option<Self> {
        let mut reader = ByteReader::at(bytes, usize::try_from(offset).ok()?);
        if reader.u32()? != SIGNATURE {
            return None;
        }
        let shared = SharedFields::read(&mut reader)?;
        let name = reader.take(usize::from(shared.name_len))?;
        reader.take(usize::from(shared.extra_len))?;
        let data_start = offset
            .checked_add(FIXED_LEN)?
            .checked_add(u64::from(shared.name_len))?
            .checked_add(u64::from(shared.extra_len))?;
        Some(Self {
            flags: shared.flags,
            method: shared.method,
            crc32: shared.crc32,
            compressed_size: shared.compressed_size,
            uncompressed_size: shared.uncompressed_size,
            name,
            data_start,
        })
    }

    /// Where the entry ends: after its data and, when flagged, the smallest
    /// possible data descriptor. `None` on overflow.
    pub(crate) fn end(&self, central: &CentralEntry<'_>) -> Option<u64> {
        let data_end = self.data_start.checked_add(central.compressed_size)?;
        if central.flags & FLAG_DATA_DESCRIPTOR == 0 {
            Some(data_end)
        } else {
            data_end.checked_add(MIN_DESCRIPTOR_LEN)
        }
    }

    /// The first way this header disagrees with its central entry, if any.
    pub(crate) fn mismatch(&self, central: &CentralEntry<'_>) -> Option<&'static str> {
        if self.name != central.name {
            return Some("name");
        }
        if self.method != central.method {
            return Some("compression method");
        }
        if self.flags & FLAGS_COMPARED != central.flags & FLAGS_COMPARED {
            return Some("flags");
        }
        if central.flags & FLAG_DATA_DESCRIPTOR == 0 {
            if self.crc32 != central.crc32 {
                return Some("CRC-32");
            }
            if u64::from(self.compressed_size) != central.compressed_size {
                return Some("compressed size");
            }
            if u64::from(self.uncompressed_size) != central.uncompressed_size {
                return Some("size");
            }
        }
        None
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn header(name: &[u8]) -> Vec<u8> {
        let mut bytes = SIGNATURE.to_le_bytes().to_vec();
        bytes.extend_from_slice(&[20, 0, 0, 0, 8, 0, 0, 0, 0, 0]);
        bytes.extend_from_slice(&7_u32.to_le_bytes());
        bytes.extend_from_slice(&3_u32.to_le_bytes());
        bytes.extend_from_slice(&5_u32.to_le_bytes());
        bytes.extend_from_slice(&u16::try_from(name.len()).unwrap().to_le_bytes());
        bytes.extend_from_slice(&0_u16.to_le_bytes());
        bytes.extend_from_slice(name);
        bytes
    }

    #[test]
    fn parses_a_header() {
        let bytes = header(b"a.js");
        let parsed = LocalHeader::parse(&bytes, 0).unwrap();
        assert_eq!(parsed.name, b"a.js");
        assert_eq!(parsed.method, 8);
        assert_eq!(parsed.crc32, 7);
        assert_eq!(parsed.data_start, 34);
    }

    #[test]
    fn truncated_or_misplaced_headers_are_none() {
        let bytes = header(b"a.js");
        for len in 0..bytes.len() {
            assert_eq!(LocalHeader::parse(&bytes[..len], 0), None, "{len}");
        }
        assert_eq!(LocalHeader::parse(&bytes, 1), None);
        assert_eq!(LocalHeader::parse(&bytes, u64::MAX), None);
    }
}
