//! Reading a bundle .zip held in memory.
//!
//! The archive's structure is checked from its own bytes first
//! ([`crate::central_directory`], [`crate::local_header`]): entry kinds,
//! names, headers that agree, data ranges that do not overlap, declared
//! sizes within the limit. Only then are files inflated, through the `zip`
//! crate, counting every byte it produces against the limit.
//!
//! Names must be valid UTF-8. The UTF-8 flag (general-purpose bit 11) is
//! not required: widely used tools (Info-ZIP `zip` 3.0 on Linux) store UTF-8
//! names without it. Names that are not valid UTF-8 would by the format's
//! rules be code page 437, which nobody means today; rather than guess, they
//! are refused with a message asking for a tool that writes UTF-8 names.

use std::collections::BTreeMap;
use std::io::{Cursor, Read};

use crate::bundle::Bundle;
use crate::central_directory::{self, CentralEntry};
use crate::error::{Error, Refusal, Rule};
use crate::local_header::LocalHeader;
use crate::name::{self, Listed};
use crate::{MAX_COMPRESSED_BYTES, MAX_DECOMPRESSED_BYTES};

/// Flag bit 0: the entry is encrypted.
const FLAG_ENCRYPTED: u16 = 1;
/// Flag bit 6: strong encryption.
const FLAG_STRONG_ENCRYPTION: u16 = 1 << 6;
const METHOD_STORED: u16 = 0;
const METHOD_DEFLATED: u16 = 8;
const METHOD_AES: u16 = 99;
const MODE_TYPE_MASK: u32 = 0o170_000;
const MODE_SYMLINK: u32 = 0o120_000;
const MODE_FILE: u32 = 0o100_000;
const MODE_DIR: u32 = 0o040_000;

/// Deflate cannot expand data by more than about 1032 to 1.
const MAX_DEFLATE_RATIO: u64 = 1032;
/// How many bytes one read asks the inflater for.
pub(crate) const CHUNK: usize = 64 * 1024;

/// Reads and checks a bundle .zip; see [`crate::read_zip`].
pub(crate) fn read_zip(bytes: &[u8]) -> Result<Bundle, Error> {
    let mut inflater = Inflater::default();
    read_zip_with(bytes, &mut inflater)
}

/// An entry that passed the per-entry checks, with its name as text.
struct Checked<'a> {
    index: usize,
    name: &'a str,
    is_dir: bool,
    central: &'a CentralEntry<'a>,
}

fn read_zip_with(bytes: &[u8], inflater: &mut Inflater) -> Result<Bundle, Error> {
    let len = u64::try_from(bytes.len()).unwrap_or(u64::MAX);
    if len > MAX_COMPRESSED_BYTES {
        return Err(Refusal::bundle(
            Rule::CompressedSize,
            format!(
                "the zip file is {len} bytes; at most {MAX_COMPRESSED_BYTES} bytes (10 MB) are allowed"
            ),
        )
        .into());
    }
    let directory = central_directory::parse(bytes)?;

    let mut refusals = Vec::new();
    let mut checked = Vec::with_capacity(directory.entries.len());
    for (index, central) in directory.entries.iter().enumerate() {
        match check_entry(central) {
            Ok((name, is_dir)) => checked.push(Checked {
                index,
                name,
                is_dir,
                central,
            }),
            Err(refusal) => refusals.push(refusal),
        }
    }
    if !refusals.is_empty() {
        return Err(Error::Refused(refusals));
    }
    // Layout before names, so that entries sharing one local header are
    // reported as the bomb they are rather than as duplicate names.
    check_layout(bytes, directory.offset, &checked)?;
    let listed: Vec<Listed<'_>> = checked
        .iter()
        .map(|entry| Listed {
            name: entry.name,
            is_dir: entry.is_dir,
        })
        .collect();
    let refusals = name::check_listing(&listed);
    if !refusals.is_empty() {
        return Err(Error::Refused(refusals));
    }
    check_declared_sizes(&checked)?;

    let mut archive = zip::ZipArchive::new(Cursor::new(bytes)).map_err(|error| {
        Refusal::bundle(
            Rule::NotAZip,
            format!("the zip archive could not be read: {error}"),
        )
    })?;
    check_same_view(&mut archive, &checked)?;

    let mut files = BTreeMap::new();
    for entry in checked.iter().filter(|entry| !entry.is_dir) {
        let mut file = archive.by_index(entry.index).map_err(|error| {
            Refusal::entry(
                entry.name,
                Rule::CorruptData,
                format!("the entry could not be opened: {error}"),
            )
        })?;
        let contents = inflater.inflate(
            &mut file,
            entry.name,
            entry.central.uncompressed_size,
            entry.central.compressed_size,
        )?;
        files.insert(entry.name.to_owned(), contents);
    }
    Bundle::from_checked_files(files)
}

/// Per-entry checks that need no other entry: encryption, method, kind and
/// name encoding. Returns the name (without a folder's trailing `/`) and
/// whether the entry is a folder.
fn check_entry<'a>(central: &'a CentralEntry<'a>) -> Result<(&'a str, bool), Refusal> {
    let shown = printable(central.name);
    let refuse = |rule, message: String| Refusal::entry(shown.clone(), rule, message);

    if central.flags & (FLAG_ENCRYPTED | FLAG_STRONG_ENCRYPTION) != 0
        || central.method == METHOD_AES
    {
        return Err(refuse(
            Rule::Encrypted,
            "the entry is encrypted; bundles must not use passwords or encryption".to_owned(),
        ));
    }
    if central.method != METHOD_STORED && central.method != METHOD_DEFLATED {
        return Err(refuse(
            Rule::CompressionMethod,
            format!(
                "the entry uses compression method {} ({}); only stored (0) and deflate (8) are allowed",
                central.method,
                method_name(central.method)
            ),
        ));
    }
    let mode_type = central.unix_mode() & MODE_TYPE_MASK;
    if mode_type == MODE_SYMLINK {
        return Err(refuse(
            Rule::Symlink,
            "the entry is a symbolic link; bundles may hold only files and folders".to_owned(),
        ));
    }
    if central.made_by_unix() && !matches!(mode_type, 0 | MODE_FILE | MODE_DIR) {
        return Err(refuse(
            Rule::NotAFile,
            format!(
                "the entry is a special file (Unix type {mode_type:o}); bundles may hold only files and folders"
            ),
        ));
    }
    let Ok(text) = std::str::from_utf8(central.name) else {
        return Err(refuse(
            Rule::Name,
            "the name is not valid UTF-8; re-create the zip with a tool that stores UTF-8 names"
                .to_owned(),
        ));
    };
    match text.strip_suffix('/') {
        Some(folder) => Ok((folder, true)),
        None => Ok((text, false)),
    }
}

fn method_name(method: u16) -> &'static str {
    match method {
        1..=6 => "a pre-1993 method",
        9 => "deflate64",
        12 => "bzip2",
        14 => "LZMA",
        93 => "Zstandard",
        95 => "XZ",
        97 => "WavPack",
        98 => "PPMd",
        _ => "unknown",
    }
}

/// A name for messages, with invalid UTF-8 replaced.
fn printable(raw: &[u8]) -> String {
    String::from_utf8_lossy(raw).into_owned()
}

/// Local headers agree with the central directory, every entry's data lies
/// before the central directory, and no two entries share bytes.
fn check_layout(
    bytes: &[u8],
    directory_offset: u64,
    entries: &[Checked<'_>],
) -> Result<(), Refusal> {
    let mut spans = Vec::with_capacity(entries.len());
    for entry in entries {
        let raw_name = entry.name_with_slash();
        let mismatch = |what: &str| {
            Refusal::entry(
                raw_name.clone(),
                Rule::HeaderMismatch,
                format!("the entry's local header {what}; the archive is damaged or crafted"),
            )
        };
        let local = LocalHeader::parse(bytes, entry.central.local_header_offset)
            .ok_or_else(|| mismatch("is missing where the central directory points"))?;
        if let Some(field) = local.mismatch(entry.central) {
            return Err(mismatch(&format!(
                "disagrees with the central directory about the {field}"
            )));
        }
        let end = local
            .end(entry.central)
            .filter(|&end| end <= directory_offset)
            .ok_or_else(|| {
                mismatch("says its data runs past the start of the central directory")
            })?;
        spans.push((entry.central.local_header_offset, end, raw_name));
    }
    spans.sort_by_key(|&(start, end, _)| (start, end));
    for pair in spans.windows(2) {
        if let [(_, first_end, first), (second_start, _, second)] = pair {
            if first_end > second_start {
                return Err(Refusal::entry(
                    second.clone(),
                    Rule::OverlappingEntries,
                    format!(
                        "the entry shares archive bytes with '{first}'; every entry must have its own data (overlapping entries are a zip-bomb trick)"
                    ),
                ));
            }
        }
    }
    Ok(())
}

impl Checked<'_> {
    fn name_with_slash(&self) -> String {
        if self.is_dir {
            format!("{}/", self.name)
        } else {
            self.name.to_owned()
        }
    }
}

/// Refuses early when the declared sizes already break the limit, and
/// stored entries whose two sizes differ. The real sizes are still counted
/// while inflating.
fn check_declared_sizes(entries: &[Checked<'_>]) -> Result<(), Refusal> {
    let mut declared = 0_u64;
    for entry in entries.iter().filter(|entry| !entry.is_dir) {
        let central = entry.central;
        if central.method == METHOD_STORED && central.compressed_size != central.uncompressed_size {
            return Err(Refusal::entry(
                entry.name,
                Rule::SizeMismatch,
                format!(
                    "the entry is stored uncompressed but declares {} stored bytes and {} file bytes; they must be equal",
                    central.compressed_size, central.uncompressed_size
                ),
            ));
        }
        declared = declared.saturating_add(central.uncompressed_size);
        if declared > MAX_DECOMPRESSED_BYTES {
            return Err(Refusal::entry(
                entry.name,
                Rule::DecompressedSize,
                format!(
                    "with this file the bundle unpacks to at least {declared} bytes, by the sizes its headers declare; at most {MAX_DECOMPRESSED_BYTES} bytes (50 MB) are allowed"
                ),
            ));
        }
    }
    Ok(())
}

/// The `zip` crate must see the same entries at the same offsets as the
/// checks above did; otherwise the two readers disagree about the archive.
fn check_same_view(
    archive: &mut zip::ZipArchive<Cursor<&[u8]>>,
    entries: &[Checked<'_>],
) -> Result<(), Refusal> {
    let disagree = || {
        Refusal::bundle(
            Rule::NotAZip,
            "the archive's directory can be read in more than one way; the archive is damaged or crafted",
        )
    };
    if archive.len() != entries.len() {
        return Err(disagree());
    }
    for entry in entries {
        let file = archive.by_index_raw(entry.index).map_err(|_| disagree())?;
        if file.name_raw() != entry.central.name
            || file.header_start() != entry.central.local_header_offset
        {
            return Err(disagree());
        }
    }
    Ok(())
}

/// Inflates entries while counting every byte produced across the whole
/// archive. A read never asks for more than one byte past what the entry
/// declared or the limit leaves, so the work done on a bomb is bounded by
/// the limit plus one read.
#[derive(Debug, Default)]
pub(crate) struct Inflater {
    /// Bytes inflated so far, over all entries.
    pub(crate) total: u64,
}

impl Inflater {
    /// Reads one entry to its end (which makes the `zip` crate check its
    /// CRC-32) and checks its real size against the declared one.
    /// `compressed` is the entry's stored size: memory is reserved up front
    /// only for what that much deflate data could possibly inflate to.
    pub(crate) fn inflate(
        &mut self,
        reader: &mut impl Read,
        name: &str,
        declared: u64,
        compressed: u64,
    ) -> Result<Vec<u8>, Refusal> {
        let left = MAX_DECOMPRESSED_BYTES.saturating_sub(self.total);
        let limit = declared.min(left);
        let plausible = compressed
            .saturating_mul(MAX_DEFLATE_RATIO)
            .saturating_add(1);
        let mut contents = Vec::with_capacity(usize::try_from(limit.min(plausible)).unwrap_or(0));
        let mut buffer = vec![0_u8; CHUNK];
        loop {
            let produced = u64::try_from(contents.len()).unwrap_or(u64::MAX);
            let want = limit.saturating_sub(produced).saturating_add(1);
            let want = usize::try_from(want).unwrap_or(CHUNK).min(CHUNK);
            let read = match reader.read(buffer.get_mut(..want).unwrap_or_default()) {
                Ok(0) => break,
                Ok(read) => read,
                Err(error) if error.kind() == std::io::ErrorKind::Interrupted => continue,
                Err(error) => return Err(read_error(name, &error)),
            };
            contents.extend_from_slice(buffer.get(..read).unwrap_or_default());
            self.total = self
                .total
                .saturating_add(u64::try_from(read).unwrap_or(u64::MAX));
            let produced = u64::try_from(contents.len()).unwrap_or(u64::MAX);
            if self.total > MAX_DECOMPRESSED_BYTES {
                return Err(Refusal::entry(
                    name,
                    Rule::DecompressedSize,
                    format!(
                        "unpacking stopped here: the files add up to more than {MAX_DECOMPRESSED_BYTES} bytes (50 MB), the most allowed"
                    ),
                ));
            }
            if produced > declared {
                return Err(size_mismatch(name, declared, "more"));
            }
        }
        if u64::try_from(contents.len()).unwrap_or(u64::MAX) != declared {
            return Err(size_mismatch(name, declared, "fewer"));
        }
        Ok(contents)
    }
}

fn size_mismatch(name: &str, declared: u64, more_or_fewer: &str) -> Refusal {
    Refusal::entry(
        name,
        Rule::SizeMismatch,
        format!(
            "the entry unpacks to {more_or_fewer} bytes than the {declared} its header declares; the archive is damaged or crafted"
        ),
    )
}

fn read_error(name: &str, error: &std::io::Error) -> Refusal {
    if error.kind() == std::io::ErrorKind::InvalidData
        && error.to_string().to_ascii_lowercase().contains("checksum")
    {
        Refusal::entry(
            name,
            Rule::Checksum,
            "the entry's CRC-32 does not match its contents; the archive is damaged",
        )
    } else {
        Refusal::entry(
            name,
            Rule::CorruptData,
            format!("the entry's data could not be unpacked ({error}); the archive is damaged"),
        )
    }
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used, clippy::panic)]
    use std::io::{Read, Write};

    use super::*;

    const LIMIT_PLUS_ONE_READ: u64 = MAX_DECOMPRESSED_BYTES + CHUNK as u64;

    #[test]
    fn counting_stops_a_truthful_bomb_at_the_limit() {
        let mut inflater = Inflater::default();
        let mut zeros = std::io::repeat(0).take(60 * 1024 * 1024);
        let refusal = inflater
            .inflate(&mut zeros, "bomb.js", 60 * 1024 * 1024, 60 * 1024)
            .unwrap_err();
        assert_eq!(refusal.rule, Rule::DecompressedSize);
        assert!(inflater.total <= LIMIT_PLUS_ONE_READ, "{}", inflater.total);
    }

    #[test]
    fn counting_spans_entries() {
        let mut inflater = Inflater::default();
        let size = 30 * 1024 * 1024;
        let first = inflater
            .inflate(&mut std::io::repeat(1).take(size), "a.js", size, size)
            .unwrap();
        assert_eq!(first.len(), 30 * 1024 * 1024);
        let refusal = inflater
            .inflate(&mut std::io::repeat(1).take(size), "b.js", size, size)
            .unwrap_err();
        assert_eq!(refusal.rule, Rule::DecompressedSize);
        assert_eq!(refusal.entry.as_deref(), Some("b.js"));
        assert!(inflater.total <= LIMIT_PLUS_ONE_READ);
    }

    #[test]
    fn a_lying_size_stops_one_byte_past_the_declared_size() {
        let mut inflater = Inflater::default();
        let refusal = inflater
            .inflate(&mut std::io::repeat(0).take(1 << 30), "x.js", 1000, 10)
            .unwrap_err();
        assert_eq!(refusal.rule, Rule::SizeMismatch);
        assert_eq!(inflater.total, 1001);
    }

    /// A real deflate bomb whose header lies (declares 1 KB) goes through
    /// the whole reader and is stopped by the counter, not by trust.
    #[test]
    fn deflate_bomb_with_lying_header_inflates_little() {
        let mut writer = zip::ZipWriter::new(Cursor::new(Vec::new()));
        let options = zip::write::SimpleFileOptions::default()
            .compression_method(zip::CompressionMethod::Deflated);
        writer.start_file("manifest.json", options).unwrap();
        writer.write_all(b"{}").unwrap();
        writer.start_file("bomb.js", options).unwrap();
        let zeros = vec![0_u8; 1024 * 1024];
        for _ in 0..60 {
            writer.write_all(&zeros).unwrap();
        }
        let mut bytes = writer.finish().unwrap().into_inner();
        // Rewrite bomb.js's declared size in both headers to 1024.
        patch_declared_size(&mut bytes, b"bomb.js", 1024);
        let mut inflater = Inflater::default();
        let error = read_zip_with(&bytes, &mut inflater).unwrap_err();
        assert_eq!(error.refusals()[0].rule, Rule::SizeMismatch, "{error}");
        assert!(inflater.total <= 1024 + 1 + 2, "{}", inflater.total);
    }

    fn patch_declared_size(bytes: &mut [u8], name: &[u8], size: u32) {
        let mut at = 0;
        while at + 4 <= bytes.len() {
            let signature = u32::from_le_bytes(bytes[at..at + 4].try_into().unwrap());
            let (size_at, name_len_at, name_at) = match signature {
                0x0403_4b50 => (at + 22, at + 26, at + 30),
                0x0201_4b50 => (at + 24, at + 28, at + 46),
                _ => {
                    at += 1;
                    continue;
                }
            };
            let name_len = usize::from(u16::from_le_bytes(
                bytes[name_len_at..name_len_at + 2].try_into().unwrap(),
            ));
            if bytes.get(name_at..name_at + name_len) == Some(name) {
                bytes[size_at..size_at + 4].copy_from_slice(&size.to_le_bytes());
            }
            at += 1;
        }
    }
}
