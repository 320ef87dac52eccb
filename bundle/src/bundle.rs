//! [`Bundle`]: a checked manifest and the files it came with.

use std::collections::BTreeMap;

use toolbridge_protocol::manifest::{SLUG_MAX_LEN, ToolManifest};

use crate::error::{Error, Refusal, Rule};
use crate::manifest::check_manifest;
use crate::{MANIFEST, MAX_DECOMPRESSED_BYTES};

/// A bundle that passed every check: its manifest and every file, by its
/// path in the bundle (`"css/app.css"`). Only this crate's readers make one.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Bundle {
    manifest: ToolManifest,
    files: BTreeMap<String, Vec<u8>>,
    total_bytes: u64,
}

impl Bundle {
    /// Builds a bundle from files whose names, count and kinds were already
    /// checked: checks the size total and the manifest.
    pub(crate) fn from_checked_files(files: BTreeMap<String, Vec<u8>>) -> Result<Self, Error> {
        let total_bytes = files.values().fold(0_u64, |sum, contents| {
            sum.saturating_add(u64::try_from(contents.len()).unwrap_or(u64::MAX))
        });
        if total_bytes > MAX_DECOMPRESSED_BYTES {
            return Err(Refusal::bundle(
                Rule::DecompressedSize,
                format!(
                    "the files add up to {total_bytes} bytes; at most {MAX_DECOMPRESSED_BYTES} bytes (50 MB) are allowed"
                ),
            )
            .into());
        }
        let Some(manifest_bytes) = files.get(MANIFEST) else {
            return Err(Refusal::bundle(
                Rule::ManifestMissing,
                format!("there is no {MANIFEST} at the bundle's root; every bundle needs one"),
            )
            .into());
        };
        let paths: Vec<&str> = files.keys().map(String::as_str).collect();
        let manifest = check_manifest(manifest_bytes, &paths)?;
        Ok(Self {
            manifest,
            files,
            total_bytes,
        })
    }

    /// The checked manifest.
    pub fn manifest(&self) -> &ToolManifest {
        &self.manifest
    }

    /// Every file with its contents, sorted by path (byte order).
    pub fn files(&self) -> impl Iterator<Item = (&str, &[u8])> {
        self.files
            .iter()
            .map(|(path, contents)| (path.as_str(), contents.as_slice()))
    }

    /// One file's contents, by its exact path in the bundle.
    pub fn file(&self, path: &str) -> Option<&[u8]> {
        self.files.get(path).map(Vec::as_slice)
    }

    /// How many files the bundle holds (folders are not counted).
    pub fn file_count(&self) -> usize {
        self.files.len()
    }

    /// The sum of all files' sizes, in bytes.
    pub fn total_bytes(&self) -> u64 {
        self.total_bytes
    }

    /// A default origin slug made from the manifest's `shortName`: lowercase
    /// ASCII letters and digits, every other run of characters turned into
    /// one `-`, no `-` at either end, at most 63 characters. `None` when
    /// nothing is left (a `shortName` with no ASCII letters or digits).
    pub fn suggested_slug(&self) -> Option<String> {
        slug(&self.manifest.short_name)
    }
}

fn slug(text: &str) -> Option<String> {
    let mut slug = String::new();
    let mut pending_dash = false;
    for c in text.chars() {
        if c.is_ascii_alphanumeric() {
            if pending_dash && !slug.is_empty() {
                slug.push('-');
            }
            pending_dash = false;
            slug.push(c.to_ascii_lowercase());
        } else {
            pending_dash = true;
        }
    }
    slug.truncate(SLUG_MAX_LEN);
    let slug = slug.trim_end_matches('-');
    (!slug.is_empty()).then(|| slug.to_owned())
}

#[cfg(test)]
mod tests {
    use super::slug;

    #[test]
    fn slugs() {
        assert_eq!(slug("Roof Estimator").as_deref(), Some("roof-estimator"));
        assert_eq!(
            slug("  --Hello,  World!! 2 ").as_deref(),
            Some("hello-world-2")
        );
        assert_eq!(slug("Café au lait").as_deref(), Some("caf-au-lait"));
        assert_eq!(slug("日本語"), None);
        assert_eq!(slug("---"), None);
        let long = slug(&format!("{} b", "a".repeat(62))).unwrap();
        assert_eq!(long, "a".repeat(62));
        assert_eq!(slug(&"x".repeat(100)).unwrap().len(), 63);
    }
}
