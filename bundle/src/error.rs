//! The crate's error type: refusals (the bundle breaks a rule) and I/O failures.

use std::fmt;
use std::path::PathBuf;

use toolbridge_protocol::text::escape_controls;

/// Which rule a refusal is about. [`Rule::as_str`] gives a stable id for
/// users, logs and tests.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Rule {
    /// The bytes are not a zip archive this crate can read (no end record,
    /// truncated, split over several disks, inconsistent directory).
    NotAZip,
    /// The archive uses ZIP64 records; bundles are far too small to need them.
    Zip64,
    /// The .zip file itself is larger than [`crate::MAX_COMPRESSED_BYTES`].
    CompressedSize,
    /// The inflated files add up to more than [`crate::MAX_DECOMPRESSED_BYTES`].
    DecompressedSize,
    /// More than [`crate::MAX_FILES`] files, or none at all.
    FileCount,
    /// A file whose extension is not in [`crate::ALLOWED_EXTENSIONS`].
    Extension,
    /// A name that could escape the bundle or is otherwise unusable: `..`,
    /// absolute, backslash, drive letter, control characters, bad encoding,
    /// empty segments or too long.
    Name,
    /// Two entries with the same name (also ignoring case), or a file whose
    /// name is also used as a folder.
    Duplicate,
    /// A symbolic link.
    Symlink,
    /// Something that is neither a file nor a folder (device, pipe, socket).
    NotAFile,
    /// An encrypted entry.
    Encrypted,
    /// A compression method other than stored or deflate.
    CompressionMethod,
    /// The local header of an entry disagrees with the central directory.
    HeaderMismatch,
    /// Two entries share bytes of the archive (a known zip-bomb trick).
    OverlappingEntries,
    /// An entry inflated to a different size than its header declares.
    SizeMismatch,
    /// An entry's CRC-32 does not match its inflated bytes.
    Checksum,
    /// An entry's compressed data could not be inflated.
    CorruptData,
    /// There is no `manifest.json` at the bundle's root.
    ManifestMissing,
    /// `manifest.json` is not valid, or one of its fields is wrong.
    Manifest,
    /// The manifest's `entry` names a file the bundle does not hold.
    EntryMissing,
    /// The manifest's `settings` declarations are malformed.
    Settings,
    /// The manifest's `permissions` ask for something not allowed, or name
    /// an origin that is not an exact https origin.
    Permissions,
}

impl Rule {
    /// Every rule, in declaration order.
    pub const ALL: [Rule; 22] = [
        Rule::NotAZip,
        Rule::Zip64,
        Rule::CompressedSize,
        Rule::DecompressedSize,
        Rule::FileCount,
        Rule::Extension,
        Rule::Name,
        Rule::Duplicate,
        Rule::Symlink,
        Rule::NotAFile,
        Rule::Encrypted,
        Rule::CompressionMethod,
        Rule::HeaderMismatch,
        Rule::OverlappingEntries,
        Rule::SizeMismatch,
        Rule::Checksum,
        Rule::CorruptData,
        Rule::ManifestMissing,
        Rule::Manifest,
        Rule::EntryMissing,
        Rule::Settings,
        Rule::Permissions,
    ];

    /// The rule's stable kebab-case id, e.g. `"decompressed-size"`.
    pub fn as_str(self) -> &'static str {
        match self {
            Rule::NotAZip => "not-a-zip",
            Rule::Zip64 => "zip64",
            Rule::CompressedSize => "compressed-size",
            Rule::DecompressedSize => "decompressed-size",
            Rule::FileCount => "file-count",
            Rule::Extension => "extension",
            Rule::Name => "name",
            Rule::Duplicate => "duplicate",
            Rule::Symlink => "symlink",
            Rule::NotAFile => "not-a-file",
            Rule::Encrypted => "encrypted",
            Rule::CompressionMethod => "compression-method",
            Rule::HeaderMismatch => "header-mismatch",
            Rule::OverlappingEntries => "overlapping-entries",
            Rule::SizeMismatch => "size-mismatch",
            Rule::Checksum => "checksum",
            Rule::CorruptData => "corrupt-data",
            Rule::ManifestMissing => "manifest-missing",
            Rule::Manifest => "manifest",
            Rule::EntryMissing => "entry-missing",
            Rule::Settings => "settings",
            Rule::Permissions => "permissions",
        }
    }
}

impl fmt::Display for Rule {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

/// One broken rule: which entry (when the problem belongs to one), which
/// rule, and a plain-words message saying what was wrong and what is allowed.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Refusal {
    /// The entry's path in the bundle, as written in the archive or folder.
    pub entry: Option<String>,
    /// The rule that was broken.
    pub rule: Rule,
    /// What was wrong, in plain words.
    pub message: String,
}

impl Refusal {
    /// A refusal about one entry. Control characters in the name are
    /// escaped (`\u{0}`), so the name is safe to print or log.
    pub(crate) fn entry(entry: impl Into<String>, rule: Rule, message: impl Into<String>) -> Self {
        Self {
            entry: Some(escape_controls(entry.into())),
            rule,
            message: message.into(),
        }
    }

    /// A refusal about the bundle as a whole.
    pub(crate) fn bundle(rule: Rule, message: impl Into<String>) -> Self {
        Self {
            entry: None,
            rule,
            message: message.into(),
        }
    }
}

impl fmt::Display for Refusal {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match &self.entry {
            Some(entry) => write!(f, "{entry}: {} [{}]", self.message, self.rule),
            None => write!(f, "{} [{}]", self.message, self.rule),
        }
    }
}

/// Why a bundle could not be read, checked or packed.
#[derive(Debug, thiserror::Error)]
pub enum Error {
    /// The bundle breaks one or more rules; never empty.
    #[error("{}", RefusalList(.0))]
    Refused(Vec<Refusal>),
    /// A file or folder could not be read, or the packed archive written.
    /// `source` says why; print the chain of sources to show it.
    #[error("input/output failed on {}", path.display())]
    Io {
        /// The file or folder concerned.
        path: PathBuf,
        /// What went wrong.
        #[source]
        source: std::io::Error,
    },
}

impl Error {
    /// The refusals, one per broken rule; empty for [`Error::Io`].
    pub fn refusals(&self) -> &[Refusal] {
        match self {
            Error::Refused(refusals) => refusals,
            Error::Io { .. } => &[],
        }
    }

    pub(crate) fn one(refusal: Refusal) -> Self {
        Error::Refused(vec![refusal])
    }
}

impl From<Refusal> for Error {
    fn from(refusal: Refusal) -> Self {
        Error::one(refusal)
    }
}

/// Refusals a message lists before it only counts the rest: a hostile
/// archive can break one rule in every one of its thousands of entries.
pub const REFUSALS_SHOWN: usize = 50;

/// Shows refusals one per line, at most [`REFUSALS_SHOWN`] of them.
struct RefusalList<'a>(&'a [Refusal]);

impl fmt::Display for RefusalList<'_> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        for (index, refusal) in self.0.iter().take(REFUSALS_SHOWN).enumerate() {
            if index > 0 {
                f.write_str("\n")?;
            }
            write!(f, "{refusal}")?;
        }
        if let Some(more) = self.0.len().checked_sub(REFUSALS_SHOWN).filter(|&n| n > 0) {
            write!(f, "\n… and {more} more refusals")?;
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn rule_ids_are_unique_kebab_case() {
        let mut seen = std::collections::HashSet::new();
        for rule in Rule::ALL {
            let id = rule.as_str();
            assert!(seen.insert(id), "{id} twice");
            assert!(
                id.bytes()
                    .all(|b| b.is_ascii_lowercase() || b.is_ascii_digit() || b == b'-'),
                "{id}"
            );
        }
    }

    #[test]
    fn rule_ids_are_stable() {
        assert_eq!(
            Rule::ALL.map(Rule::as_str),
            [
                "not-a-zip",
                "zip64",
                "compressed-size",
                "decompressed-size",
                "file-count",
                "extension",
                "name",
                "duplicate",
                "symlink",
                "not-a-file",
                "encrypted",
                "compression-method",
                "header-mismatch",
                "overlapping-entries",
                "size-mismatch",
                "checksum",
                "corrupt-data",
                "manifest-missing",
                "manifest",
                "entry-missing",
                "settings",
                "permissions",
            ]
        );
    }

    #[test]
    fn control_characters_in_entry_names_are_escaped() {
        let refusal = Refusal::entry("a\0\u{1b}[31m.js", Rule::Name, "bad");
        assert_eq!(refusal.entry.as_deref(), Some("a\\u{0}\\u{1b}[31m.js"));
    }

    #[test]
    fn an_io_failure_names_the_path_and_keeps_its_cause() {
        let error = Error::Io {
            path: "tool/app.js".into(),
            source: std::io::Error::new(std::io::ErrorKind::PermissionDenied, "access denied"),
        };
        assert_eq!(error.to_string(), "input/output failed on tool/app.js");
        let cause = std::error::Error::source(&error).map(ToString::to_string);
        assert_eq!(cause.as_deref(), Some("access denied"));
    }

    #[test]
    fn display_lists_every_refusal_on_its_own_line() {
        let error = Error::Refused(vec![
            Refusal::entry("a.exe", Rule::Extension, "not allowed"),
            Refusal::bundle(Rule::FileCount, "too many"),
        ]);
        assert_eq!(
            error.to_string(),
            "a.exe: not allowed [extension]\ntoo many [file-count]"
        );
        assert_eq!(error.refusals().len(), 2);
    }
}
