//! The end-of-central-directory record and the central directory entries,
//! parsed straight from the archive's bytes so that every field the rules
//! need (flags, creating system, external attributes, raw name bytes) is
//! seen exactly as written.

use crate::byte_reader::ByteReader;
use crate::error::{Refusal, Rule};
use crate::local_header::SharedFields;

const END_SIGNATURE: u32 = 0x0605_4b50;
const END_LEN: usize = 22;
const ZIP64_LOCATOR_SIGNATURE: u32 = 0x0706_4b50;
const ZIP64_LOCATOR_LEN: usize = 20;
const ENTRY_SIGNATURE: u32 = 0x0201_4b50;
const MAX_COMMENT: usize = u16::MAX as usize;

/// One central directory entry.
#[derive(Debug, Clone)]
pub(crate) struct CentralEntry<'a> {
    /// The name's bytes as stored.
    pub(crate) name: &'a [u8],
    /// High byte: the system that made the entry (3 = Unix, 19 = macOS).
    pub(crate) version_made_by: u16,
    /// General-purpose bit flags.
    pub(crate) flags: u16,
    /// Compression method.
    pub(crate) method: u16,
    /// Declared CRC-32 of the inflated bytes.
    pub(crate) crc32: u32,
    /// Declared size of the stored (compressed) data.
    pub(crate) compressed_size: u64,
    /// Declared size of the inflated data.
    pub(crate) uncompressed_size: u64,
    /// External attributes; on Unix-made entries the high 16 bits are the mode.
    pub(crate) external_attributes: u32,
    /// Where the entry's local header starts.
    pub(crate) local_header_offset: u64,
}

impl CentralEntry<'_> {
    /// The Unix file mode, when the attributes carry one.
    pub(crate) fn unix_mode(&self) -> u32 {
        self.external_attributes >> 16
    }

    /// Whether the creating system stores Unix modes in the attributes.
    pub(crate) fn made_by_unix(&self) -> bool {
        matches!(self.version_made_by >> 8, 3 | 19)
    }
}

/// The central directory: where it starts and its entries in stored order.
#[derive(Debug)]
pub(crate) struct CentralDirectory<'a> {
    /// Offset of the first central entry; all file data must lie before it.
    pub(crate) offset: u64,
    /// The entries, in the order the directory lists them.
    pub(crate) entries: Vec<CentralEntry<'a>>,
}

fn not_a_zip(message: impl Into<String>) -> Refusal {
    Refusal::bundle(Rule::NotAZip, message)
}

fn zip64() -> Refusal {
    Refusal::bundle(
        Rule::Zip64,
        "the archive uses ZIP64 records; save it as a plain zip (bundles are far below the sizes that need ZIP64)",
    )
}

/// Finds the end record: the last signature whose comment runs exactly to
/// the end of the bytes.
fn find_end(bytes: &[u8]) -> Option<usize> {
    let last = bytes.len().checked_sub(END_LEN)?;
    let first = last.saturating_sub(MAX_COMMENT);
    (first..=last).rev().find(|&at| {
        let mut reader = ByteReader::at(bytes, at);
        if reader.u32() != Some(END_SIGNATURE) {
            return false;
        }
        let mut comment = ByteReader::at(bytes, at + END_LEN - 2);
        comment
            .u16()
            .is_some_and(|len| at + END_LEN + usize::from(len) == bytes.len())
    })
}

/// Parses the end record and every central directory entry.
pub(crate) fn parse(bytes: &[u8]) -> Result<CentralDirectory<'_>, Refusal> {
    let end_at = find_end(bytes).ok_or_else(|| {
        not_a_zip("this is not a zip archive (no end-of-central-directory record was found)")
    })?;
    if end_at >= ZIP64_LOCATOR_LEN
        && ByteReader::at(bytes, end_at - ZIP64_LOCATOR_LEN).u32() == Some(ZIP64_LOCATOR_SIGNATURE)
    {
        return Err(zip64());
    }
    let mut end = ByteReader::at(bytes, end_at + 4);
    let truncated = || not_a_zip("the end-of-central-directory record is truncated");
    let disk = end.u16().ok_or_else(truncated)?;
    let directory_disk = end.u16().ok_or_else(truncated)?;
    let entries_here = end.u16().ok_or_else(truncated)?;
    let entries_total = end.u16().ok_or_else(truncated)?;
    let size = end.u32().ok_or_else(truncated)?;
    let offset = end.u32().ok_or_else(truncated)?;
    if entries_total == u16::MAX || size == u32::MAX || offset == u32::MAX {
        return Err(zip64());
    }
    if disk != 0 || directory_disk != 0 || entries_here != entries_total {
        return Err(not_a_zip(
            "the archive is split over several parts; upload it as one single zip file",
        ));
    }
    let start = usize::try_from(offset).map_err(|_| truncated())?;
    let size = usize::try_from(size).map_err(|_| truncated())?;
    let directory_end = start
        .checked_add(size)
        .filter(|&directory_end| directory_end <= end_at)
        .ok_or_else(|| {
            not_a_zip(
                "the central directory lies outside the archive (the file is truncated or damaged)",
            )
        })?;
    let directory = bytes.get(..directory_end).unwrap_or_default();

    let mut entries = Vec::with_capacity(usize::from(entries_total));
    let mut reader = ByteReader::at(directory, start);
    for number in 0..entries_total {
        let entry = parse_entry(&mut reader).ok_or_else(|| {
            not_a_zip(format!(
                "central directory entry {} of {entries_total} is missing or damaged (the file is truncated or not a zip)",
                u32::from(number) + 1
            ))
        })?;
        if entry.compressed_size == u64::from(u32::MAX)
            || entry.uncompressed_size == u64::from(u32::MAX)
            || entry.local_header_offset == u64::from(u32::MAX)
        {
            return Err(zip64());
        }
        entries.push(entry);
    }
    Ok(CentralDirectory {
        offset: u64::from(offset),
        entries,
    })
}

fn parse_entry<'a>(reader: &mut ByteReader<'a>) -> Option<CentralEntry<'a>> {
    if reader.u32()? != ENTRY_SIGNATURE {
        return None;
    }
    let version_made_by = reader.u16()?;
    let shared = SharedFields::read(reader)?;
    let comment_len = reader.u16()?;
    let _disk_start = reader.u16()?;
    let _internal_attributes = reader.u16()?;
    let external_attributes = reader.u32()?;
    let local_header_offset = reader.u32()?;
    let name = reader.take(usize::from(shared.name_len))?;
    reader.take(usize::from(shared.extra_len))?;
    reader.take(usize::from(comment_len))?;
    Some(CentralEntry {
        name,
        version_made_by,
        flags: shared.flags,
        method: shared.method,
        crc32: shared.crc32,
        compressed_size: u64::from(shared.compressed_size),
        uncompressed_size: u64::from(shared.uncompressed_size),
        external_attributes,
        local_header_offset: u64::from(local_header_offset),
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn empty_archive_has_no_entries() {
        let mut bytes = END_SIGNATURE.to_le_bytes().to_vec();
        bytes.extend_from_slice(&[0; 18]);
        let directory = parse(&bytes).unwrap();
        assert!(directory.entries.is_empty());
    }

    #[test]
    fn garbage_and_truncation_are_not_zips() {
        assert_eq!(parse(b"hello").unwrap_err().rule, Rule::NotAZip);
        assert_eq!(parse(&[]).unwrap_err().rule, Rule::NotAZip);
        let mut bytes = END_SIGNATURE.to_le_bytes().to_vec();
        bytes.extend_from_slice(&[0, 0, 0, 0, 1, 0, 1, 0, 46, 0, 0, 0, 0, 0, 0, 0, 0, 0]);
        assert_eq!(parse(&bytes).unwrap_err().rule, Rule::NotAZip);
    }
}
