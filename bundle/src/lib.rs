//! Tool bundles: checking and packing them.
//!
//! A bundle is a `.zip` (or, while an author works on it, a folder) holding
//! `manifest.json` at its root and the tool's files. [`read_zip`] and
//! [`read_dir`] apply the same rules and return a [`Bundle`] only when every
//! rule holds; otherwise an [`Error::Refused`] lists each broken rule with
//! the entry it concerns and a stable [`Rule`] id; [`read_files`] checks
//! files already in memory the same way. [`pack`] writes a bundle back as a
//! deterministic `.zip` that [`read_zip`] accepts.
//!
//! What is checked, in short: the size of the archive, and the real
//! (counted, not declared) size of its contents; the number of files; the
//! file types; names that cannot escape the bundle on any system and do not
//! collide, also ignoring case; no links, special files or encryption; only
//! stored or deflated data; local headers that agree with the central
//! directory and entries that do not share bytes (zip bombs); CRC-32s and
//! declared sizes that match the data; and a manifest whose every field is
//! present and valid, with an `entry` page the bundle holds.
//!
//! Choices made where the rules leave room:
//!
//! - Folder entries in a zip (names ending in `/`) are allowed and skipped;
//!   their names obey the name rules, and they do not count as files.
//! - Names must be valid UTF-8, flagged as such or not; other encodings are
//!   refused rather than guessed. `:` is refused anywhere in a name, not
//!   only as a drive letter.
//! - ZIP64 archives and archives split over several parts are refused.
//! - Unknown manifest fields are refused (a typo must not pass silently).
//!   `name`, `shortName` and `description` are trimmed and may hold at
//!   most 100, 30 and 300 characters, `version` at most 64; a UTF-8 byte
//!   order mark before the JSON is accepted. `entry` must end in `.html`.
//! - [`read_zip`] does not skip hidden files the way [`read_dir`] does: an
//!   archive holds exactly what its author packed.
//!
//! Parsing the archive's structure is done here, from the bytes; inflating
//! is done by the `zip` crate, version 7.3 (the newest release whose minimum
//! Rust version fits this workspace's; 7.4 and later need Rust 1.88), built
//! with only its pure-Rust deflate backend (`deflate-flate2-zlib-rs`). The
//! one advisory in the Rust security advisory database against `zip`,
//! RUSTSEC-2025-0168 (CVE-2025-29787,
//! GHSA-94vh-gphv-8pm8: symlinks followed during `extract`), affects 1.3.0 up
//! to 2.3.0 only, and this crate never extracts to disk anyway.

#![deny(missing_docs)]

mod archive;
mod bundle;
mod byte_reader;
mod central_directory;
mod error;
mod folder;
mod local_header;
mod manifest;
mod media_type;
mod memory;
mod name;
mod pack;

use toolbridge_protocol::manifest::ToolManifest;

pub use bundle::Bundle;
pub use error::{Error, REFUSALS_SHOWN, Refusal, Rule};
pub use folder::Folder;

/// Largest accepted `.zip` file, in bytes (10 MB).
pub const MAX_COMPRESSED_BYTES: u64 = 10 * 1024 * 1024;
/// Largest accepted sum of all files' real, inflated sizes, in bytes (50 MB).
pub const MAX_DECOMPRESSED_BYTES: u64 = 50 * 1024 * 1024;
/// Most files a bundle may hold (folders are not counted).
pub const MAX_FILES: usize = 200;
/// The file types a bundle may hold, compared without regard to case.
pub const ALLOWED_EXTENSIONS: [&str; 8] =
    ["html", "css", "js", "svg", "png", "jpg", "woff2", "json"];
/// The manifest's path, at the bundle's root.
pub const MANIFEST: &str = "manifest.json";

/// Reads and checks a bundle `.zip` held in memory. Nothing is written to
/// disk.
pub fn read_zip(bytes: &[u8]) -> Result<Bundle, Error> {
    archive::read_zip(bytes)
}

/// Reads and checks a tool folder with the same rules as [`read_zip`].
/// Hidden entries (names starting with `.`) at any depth are skipped and
/// listed in [`Folder::skipped`]; a symbolic link inside the folder, to a
/// file or a folder, is refused and never followed.
pub fn read_dir(dir: &std::path::Path) -> Result<Folder, Error> {
    folder::read_dir(dir)
}

/// Checks a bundle's files held in memory, each path in the bundle (`css/app.css`) with its
/// contents, with the same rules as [`read_zip`]: names, types, count, sizes and the manifest.
/// Nothing is skipped: leave out what [`read_dir`] would (hidden entries) before calling it.
pub fn read_files(files: std::collections::BTreeMap<String, Vec<u8>>) -> Result<Bundle, Error> {
    memory::read_files(files)
}

/// Writes `bundle` as a deterministic `.zip` (the same files always give the
/// same bytes) that [`read_zip`] accepts. Refused with
/// [`Rule::CompressedSize`] if the result would be too large to read back.
pub fn pack(bundle: &Bundle) -> Result<Vec<u8>, Error> {
    pack::pack(bundle)
}

/// Checks `manifest.json`'s bytes; `paths` are the paths of the bundle's
/// files, among which the manifest's `entry` must be. Every bad field is
/// reported, one refusal each, all naming `manifest.json`.
pub fn check_manifest(bytes: &[u8], paths: &[&str]) -> Result<ToolManifest, Error> {
    manifest::check_manifest(bytes, paths)
}

/// The `Content-Type` to serve a bundle file with, by its extension;
/// `application/octet-stream` for anything else.
pub fn media_type(path: &str) -> &'static str {
    media_type::media_type(path)
}

/// Whether a request path (percent-decoded, without the leading `/`) is a
/// name a bundle could hold: it passes the same name rules as a bundle's
/// files, including an allowed extension.
pub fn is_valid_name(path: &str) -> bool {
    name::is_valid_file_name(path)
}
