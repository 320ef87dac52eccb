//! Hostile and well-formed bundles against `read_zip`, `read_dir` and `pack`.
//!
//! The hostile corpus is built here in code: with `zip::ZipWriter` where it
//! can express the case, and by assembling the archive's bytes by hand where
//! the writer would refuse or normalise (escaping names, links, encryption
//! flags, foreign methods, headers that disagree, shared data, lying sizes).
//! Each case checks the rule id and that the refusal names the entry.
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

use std::io::{Cursor, Write};
use std::path::PathBuf;

use proptest::prelude::*;
use toolbridge_bundle::{
    Error, MAX_COMPRESSED_BYTES, MAX_DECOMPRESSED_BYTES, MAX_FILES, Rule, pack, read_dir, read_zip,
};
use zip::write::SimpleFileOptions;

// ---------------------------------------------------------------- helpers

const INDEX: &[u8] = b"<!doctype html><title>t</title><p>hi</p>";

fn manifest_json() -> Vec<u8> {
    serde_json::json!({
        "name": "Roof Estimator",
        "shortName": "Roof Est.",
        "type": "standalone",
        "version": "1.0.0",
        "description": "Estimates roofs.",
        "entry": "index.html"
    })
    .to_string()
    .into_bytes()
}

fn manifest_with(field: &str, value: serde_json::Value) -> Vec<u8> {
    let mut manifest: serde_json::Value = serde_json::from_slice(&manifest_json()).unwrap();
    if value.is_null() {
        manifest.as_object_mut().unwrap().remove(field);
    } else {
        manifest[field] = value;
    }
    manifest.to_string().into_bytes()
}

/// A zip written by the `zip` crate, deflated, with these files.
fn written(files: &[(&str, &[u8])]) -> Vec<u8> {
    let mut writer = zip::ZipWriter::new(Cursor::new(Vec::new()));
    let options = SimpleFileOptions::default();
    for (name, contents) in files {
        if let Some(folder) = name.strip_suffix('/') {
            writer.add_directory(folder, options).unwrap();
        } else {
            writer.start_file(*name, options).unwrap();
            writer.write_all(contents).unwrap();
        }
    }
    writer.finish().unwrap().into_inner()
}

fn good_files() -> Vec<(&'static str, Vec<u8>)> {
    vec![
        ("manifest.json", manifest_json()),
        ("index.html", INDEX.to_vec()),
        ("css/app.css", b"body { margin: 0 }".to_vec()),
        ("js/app.js", b"console.log('hi');".to_vec()),
        (
            "img/logo.svg",
            b"<svg xmlns='http://www.w3.org/2000/svg'/>".to_vec(),
        ),
    ]
}

fn good_zip() -> Vec<u8> {
    let files = good_files();
    let refs: Vec<(&str, &[u8])> = files.iter().map(|(n, c)| (*n, c.as_slice())).collect();
    written(&refs)
}

fn crc32(bytes: &[u8]) -> u32 {
    let mut crc = !0_u32;
    for &byte in bytes {
        crc ^= u32::from(byte);
        for _ in 0..8 {
            crc = if crc & 1 == 1 {
                (crc >> 1) ^ 0xEDB8_8320
            } else {
                crc >> 1
            };
        }
    }
    !crc
}

/// One hand-made entry. Central and local fields start equal; tests change
/// either side.
#[derive(Clone)]
struct Raw {
    name: Vec<u8>,
    local_name: Vec<u8>,
    data: Vec<u8>,
    method: u16,
    local_method: u16,
    flags: u16,
    local_flags: u16,
    crc: u32,
    local_crc: u32,
    compressed: u32,
    uncompressed: u32,
    local_uncompressed: u32,
    made_by: u16,
    external: u32,
    /// Point the central entry at another entry's local header.
    offset_of: Option<usize>,
    /// Write no local header or data for this entry (with `offset_of`).
    central_only: bool,
}

impl Raw {
    fn stored(name: impl AsRef<[u8]>, data: impl AsRef<[u8]>) -> Self {
        let data = data.as_ref().to_vec();
        let len = u32::try_from(data.len()).unwrap();
        let crc = crc32(&data);
        let name = name.as_ref().to_vec();
        Self {
            local_name: name.clone(),
            name,
            data,
            method: 0,
            local_method: 0,
            flags: 1 << 11,
            local_flags: 1 << 11,
            crc,
            local_crc: crc,
            compressed: len,
            uncompressed: len,
            local_uncompressed: len,
            made_by: 0x0314, // Unix, zip 2.0
            external: 0o100_644 << 16,
            offset_of: None,
            central_only: false,
        }
    }

    fn flags(mut self, flags: u16) -> Self {
        self.flags = flags;
        self.local_flags = flags;
        self
    }

    fn method(mut self, method: u16) -> Self {
        self.method = method;
        self.local_method = method;
        self
    }

    fn mode(mut self, mode: u32) -> Self {
        self.external = mode << 16;
        self
    }
}

fn le16(out: &mut Vec<u8>, value: u16) {
    out.extend_from_slice(&value.to_le_bytes());
}

fn le32(out: &mut Vec<u8>, value: u32) {
    out.extend_from_slice(&value.to_le_bytes());
}

fn len16(bytes: &[u8]) -> u16 {
    u16::try_from(bytes.len()).unwrap()
}

fn local_header(entry: &Raw) -> Vec<u8> {
    let mut out = Vec::new();
    le32(&mut out, 0x0403_4b50);
    le16(&mut out, 20);
    le16(&mut out, entry.local_flags);
    le16(&mut out, entry.local_method);
    le16(&mut out, 0);
    le16(&mut out, 0x21);
    le32(&mut out, entry.local_crc);
    le32(&mut out, entry.compressed);
    le32(&mut out, entry.local_uncompressed);
    le16(&mut out, len16(&entry.local_name));
    le16(&mut out, 0);
    out.extend_from_slice(&entry.local_name);
    out
}

/// Assembles an archive from hand-made entries.
fn assemble(entries: &[Raw]) -> Vec<u8> {
    let mut out = Vec::new();
    let mut offsets = Vec::new();
    for entry in entries {
        offsets.push(u32::try_from(out.len()).unwrap());
        if !entry.central_only {
            out.extend_from_slice(&local_header(entry));
            out.extend_from_slice(&entry.data);
        }
    }
    let directory_start = u32::try_from(out.len()).unwrap();
    for (index, entry) in entries.iter().enumerate() {
        le32(&mut out, 0x0201_4b50);
        le16(&mut out, entry.made_by);
        le16(&mut out, 20);
        le16(&mut out, entry.flags);
        le16(&mut out, entry.method);
        le16(&mut out, 0);
        le16(&mut out, 0x21);
        le32(&mut out, entry.crc);
        le32(&mut out, entry.compressed);
        le32(&mut out, entry.uncompressed);
        le16(&mut out, len16(&entry.name));
        le16(&mut out, 0);
        le16(&mut out, 0);
        le16(&mut out, 0);
        le16(&mut out, 0);
        le32(&mut out, entry.external);
        le32(&mut out, offsets[entry.offset_of.unwrap_or(index)]);
        out.extend_from_slice(&entry.name);
    }
    let directory_size = u32::try_from(out.len()).unwrap() - directory_start;
    le32(&mut out, 0x0605_4b50);
    le16(&mut out, 0);
    le16(&mut out, 0);
    le16(&mut out, u16::try_from(entries.len()).unwrap());
    le16(&mut out, u16::try_from(entries.len()).unwrap());
    le32(&mut out, directory_size);
    le32(&mut out, directory_start);
    le16(&mut out, 0);
    out
}

/// The good manifest and entry page as hand-made entries, plus `extra`.
fn raw_bundle(extra: Vec<Raw>) -> Vec<u8> {
    let mut entries = vec![
        Raw::stored("manifest.json", manifest_json()),
        Raw::stored("index.html", INDEX),
    ];
    entries.extend(extra);
    assemble(&entries)
}

/// Asserts the bytes are refused with `rule`, the first such refusal naming
/// `entry` (when given), and returns the error.
#[track_caller]
fn refused(bytes: &[u8], rule: Rule, entry: Option<&str>) -> Error {
    let error = match read_zip(bytes) {
        Ok(bundle) => panic!("accepted, expected {rule}: {:?}", bundle.manifest()),
        Err(error) => error,
    };
    let refusal = error
        .refusals()
        .iter()
        .find(|refusal| refusal.rule == rule)
        .unwrap_or_else(|| panic!("expected {rule}, got: {error}"));
    assert_eq!(refusal.entry.as_deref(), entry, "{error}");
    let shown = error.to_string();
    assert!(shown.contains(&format!("[{}]", rule.as_str())), "{shown}");
    error
}

// ---------------------------------------------------------------- names

#[test]
fn zip_slip_names_of_every_kind_are_refused() {
    let cases: [(&[u8], &str); 14] = [
        (b"../evil.js", "../evil.js"),
        (b"js/../../evil.js", "js/../../evil.js"),
        (b"./evil.js", "./evil.js"),
        (b"/etc/evil.js", "/etc/evil.js"),
        (b"js\\..\\evil.js", "js\\..\\evil.js"),
        (b"..\\evil.js", "..\\evil.js"),
        (b"C:evil.js", "C:evil.js"),
        (b"c:/evil.js", "c:/evil.js"),
        (b"js//evil.js", "js//evil.js"),
        (b"nul\0.js", "nul\\u{0}.js"),
        (b"ctl\x01.js", "ctl\\u{1}.js"),
        (b"del\x7f.js", "del\\u{7f}.js"),
        (b"new\nline.js", "new\\nline.js"),
        (b"..", ".."),
    ];
    for (name, shown) in cases {
        let bytes = raw_bundle(vec![Raw::stored(name, "x")]);
        refused(&bytes, Rule::Name, Some(shown));
    }
    let long = format!("{}.js", "a".repeat(253));
    refused(
        &raw_bundle(vec![Raw::stored(&long, "x")]),
        Rule::Name,
        Some(&long),
    );
    // Directory entries obey the same rules.
    refused(
        &raw_bundle(vec![Raw::stored("../up/", "")]),
        Rule::Name,
        Some("../up/"),
    );
}

#[test]
fn names_must_be_utf8() {
    // CP437 bytes (not UTF-8) are refused, not guessed at.
    let cp437 = Raw::stored(b"caf\x82.js".as_slice(), "x").flags(0);
    refused(&raw_bundle(vec![cp437]), Rule::Name, Some("caf\u{fffd}.js"));
    // UTF-8 is accepted with or without the UTF-8 flag (Info-ZIP omits it).
    for flags in [0, 1 << 11] {
        let entry = Raw::stored("café.js", "x").flags(flags);
        let bundle = read_zip(&raw_bundle(vec![entry])).unwrap();
        assert_eq!(bundle.file("café.js"), Some(b"x".as_slice()));
    }
}

#[test]
fn duplicate_and_case_colliding_names_are_refused() {
    refused(
        &raw_bundle(vec![Raw::stored("a.js", "1"), Raw::stored("a.js", "2")]),
        Rule::Duplicate,
        Some("a.js"),
    );
    refused(
        &raw_bundle(vec![Raw::stored("A.js", "1"), Raw::stored("a.js", "2")]),
        Rule::Duplicate,
        Some("a.js"),
    );
    refused(
        &raw_bundle(vec![Raw::stored("Ünï.js", "1"), Raw::stored("üNÏ.js", "2")]),
        Rule::Duplicate,
        Some("üNÏ.js"),
    );
    refused(
        &raw_bundle(vec![
            Raw::stored("img.png", "1"),
            Raw::stored("img.png/x.png", "2"),
        ]),
        Rule::Duplicate,
        Some("img.png"),
    );
    refused(
        &raw_bundle(vec![Raw::stored("INDEX.HTML", "1")]),
        Rule::Duplicate,
        Some("INDEX.HTML"),
    );
}

#[test]
fn disallowed_extensions_are_refused() {
    let bytes = written(&[
        ("manifest.json", &manifest_json()),
        ("index.html", INDEX),
        ("run.exe", b"MZ"),
        ("noext", b""),
    ]);
    let error = refused(&bytes, Rule::Extension, Some("run.exe"));
    assert!(
        error
            .refusals()
            .iter()
            .any(|r| r.entry.as_deref() == Some("noext") && r.rule == Rule::Extension)
    );
    // Case does not matter.
    let upper = written(&[
        ("manifest.json", &manifest_json()),
        ("index.html", INDEX),
        ("A.PNG", b""),
    ]);
    read_zip(&upper).unwrap();
}

// ---------------------------------------------------------------- kinds and flags

#[test]
fn symlinks_are_refused() {
    let mut writer = zip::ZipWriter::new(Cursor::new(Vec::new()));
    let options = SimpleFileOptions::default();
    writer.start_file("manifest.json", options).unwrap();
    writer.write_all(&manifest_json()).unwrap();
    writer.start_file("index.html", options).unwrap();
    writer.write_all(INDEX).unwrap();
    writer
        .add_symlink("app.js", "/etc/passwd", options)
        .unwrap();
    let bytes = writer.finish().unwrap().into_inner();
    refused(&bytes, Rule::Symlink, Some("app.js"));

    let raw = Raw::stored("up.js", "../../etc/passwd").mode(0o120_777);
    refused(&raw_bundle(vec![raw]), Rule::Symlink, Some("up.js"));
}

#[test]
fn special_files_are_refused() {
    let fifo = Raw::stored("pipe.js", "").mode(0o010_644);
    refused(&raw_bundle(vec![fifo]), Rule::NotAFile, Some("pipe.js"));
}

#[test]
fn encrypted_entries_are_refused() {
    let zip_crypto = Raw::stored("secret.js", "x").flags(1 | 1 << 11);
    refused(
        &raw_bundle(vec![zip_crypto]),
        Rule::Encrypted,
        Some("secret.js"),
    );
    let strong = Raw::stored("strong.js", "x").flags(1 << 6 | 1 << 11);
    refused(
        &raw_bundle(vec![strong]),
        Rule::Encrypted,
        Some("strong.js"),
    );
    let aes = Raw::stored("aes.js", "x").method(99);
    refused(&raw_bundle(vec![aes]), Rule::Encrypted, Some("aes.js"));
}

#[test]
fn foreign_compression_methods_are_refused() {
    for method in [1, 9, 12, 14, 93, 95, 98, 7777] {
        let entry = Raw::stored("packed.js", "x").method(method);
        let error = refused(
            &raw_bundle(vec![entry]),
            Rule::CompressionMethod,
            Some("packed.js"),
        );
        assert!(
            error.to_string().contains(&format!("method {method}")),
            "{error}"
        );
    }
}

// ---------------------------------------------------------------- structure

#[test]
fn local_and_central_headers_must_agree() {
    let mut name = Raw::stored("a.js", "x");
    name.local_name = b"b.js".to_vec();
    refused(&raw_bundle(vec![name]), Rule::HeaderMismatch, Some("a.js"));

    let mut method = Raw::stored("a.js", "x");
    method.local_method = 8;
    refused(
        &raw_bundle(vec![method]),
        Rule::HeaderMismatch,
        Some("a.js"),
    );

    let mut flags = Raw::stored("a.js", "x");
    flags.local_flags |= 1;
    refused(&raw_bundle(vec![flags]), Rule::HeaderMismatch, Some("a.js"));

    let mut crc = Raw::stored("a.js", "x");
    crc.local_crc ^= 1;
    refused(&raw_bundle(vec![crc]), Rule::HeaderMismatch, Some("a.js"));

    let mut size = Raw::stored("a.js", "x");
    size.local_uncompressed = 1000;
    refused(&raw_bundle(vec![size]), Rule::HeaderMismatch, Some("a.js"));

    // A central entry pointing at no local header at all.
    let mut nowhere = Raw::stored("a.js", "x");
    nowhere.central_only = true;
    refused(
        &raw_bundle(vec![nowhere]),
        Rule::HeaderMismatch,
        Some("a.js"),
    );
}

#[test]
fn overlapping_entries_are_refused() {
    // Two central entries sharing one local header.
    let mut twin = Raw::stored("a.js", "x");
    twin.offset_of = Some(2);
    twin.central_only = true;
    let bytes = raw_bundle(vec![Raw::stored("a.js", "x"), twin]);
    refused(&bytes, Rule::OverlappingEntries, Some("a.js"));

    // Fifield-style: the first entry's data quotes the second entry's
    // local header and data, so both inflate the same bytes.
    let inner = Raw::stored("inner.js", "shared bytes");
    let mut quoted = local_header(&inner);
    quoted.extend_from_slice(&inner.data);
    let mut entries = vec![
        Raw::stored("manifest.json", manifest_json()),
        Raw::stored("index.html", INDEX),
        Raw::stored("outer.js", &quoted),
    ];
    let mut bytes = assemble(&entries);
    // Re-point a new central entry at the quoted header inside outer.js.
    let quoted_at = bytes
        .windows(quoted.len())
        .position(|window| window == quoted.as_slice())
        .unwrap();
    entries.push(inner);
    let mut with_inner = assemble(&entries[..3]);
    with_inner.truncate(quoted_at + quoted.len());
    bytes = rebuild_directory(&with_inner, &entries, &[None, None, None, Some(quoted_at)]);
    refused(&bytes, Rule::OverlappingEntries, Some("inner.js"));
}

/// Writes a central directory for `entries` after `data`, each entry at the
/// offset of its own local header in `data` or at the given offset.
fn rebuild_directory(data: &[u8], entries: &[Raw], at: &[Option<usize>]) -> Vec<u8> {
    let mut out = data.to_vec();
    let mut offsets = Vec::new();
    let mut search_from = 0;
    for (entry, at) in entries.iter().zip(at) {
        let offset = at.unwrap_or_else(|| {
            let header = local_header(entry);
            let found = out[search_from..]
                .windows(header.len())
                .position(|w| w == header.as_slice())
                .unwrap()
                + search_from;
            search_from = found + 1;
            found
        });
        offsets.push(offset);
    }
    let directory_start = out.len();
    for (entry, offset) in entries.iter().zip(&offsets) {
        le32(&mut out, 0x0201_4b50);
        le16(&mut out, entry.made_by);
        le16(&mut out, 20);
        le16(&mut out, entry.flags);
        le16(&mut out, entry.method);
        le16(&mut out, 0);
        le16(&mut out, 0x21);
        le32(&mut out, entry.crc);
        le32(&mut out, entry.compressed);
        le32(&mut out, entry.uncompressed);
        le16(&mut out, len16(&entry.name));
        le16(&mut out, 0);
        le16(&mut out, 0);
        le16(&mut out, 0);
        le16(&mut out, 0);
        le32(&mut out, entry.external);
        le32(&mut out, u32::try_from(*offset).unwrap());
        out.extend_from_slice(&entry.name);
    }
    let size = out.len() - directory_start;
    le32(&mut out, 0x0605_4b50);
    le16(&mut out, 0);
    le16(&mut out, 0);
    le16(&mut out, u16::try_from(entries.len()).unwrap());
    le16(&mut out, u16::try_from(entries.len()).unwrap());
    le32(&mut out, u32::try_from(size).unwrap());
    le32(&mut out, u32::try_from(directory_start).unwrap());
    le16(&mut out, 0);
    out
}

#[test]
fn lying_sizes_and_checksums_are_refused() {
    // Stored entry whose two sizes differ.
    let mut stored = Raw::stored("a.js", "hello");
    stored.uncompressed = 3;
    stored.local_uncompressed = 3;
    refused(&raw_bundle(vec![stored]), Rule::SizeMismatch, Some("a.js"));

    // Deflated entry declaring fewer or more bytes than it inflates to.
    for declared in [10, 100_000] {
        let mut bytes = written(&[
            ("manifest.json", &manifest_json()),
            ("index.html", INDEX),
            ("big.js", &[b'a'; 5000]),
        ]);
        patch_entry(&mut bytes, b"big.js", |header, at| {
            let size_at = if header == Header::Local {
                at + 22
            } else {
                at + 24
            };
            bytes_put(size_at, declared)
        });
        refused(&bytes, Rule::SizeMismatch, Some("big.js"));
    }

    // Same CRC in both headers, but wrong for the data.
    let mut crc = Raw::stored("a.js", "hello");
    crc.crc ^= 0xFFFF;
    crc.local_crc = crc.crc;
    refused(&raw_bundle(vec![crc]), Rule::Checksum, Some("a.js"));
}

#[derive(Clone, Copy, PartialEq, Eq)]
enum Header {
    Local,
    Central,
}

/// A patch: write `value` as a little-endian u32 at an offset.
fn bytes_put(at: usize, value: u32) -> (usize, u32) {
    (at, value)
}

/// Applies `patch` to the local and central headers of the entry `name`
/// (found by scanning for signatures followed by that name).
fn patch_entry(bytes: &mut [u8], name: &[u8], patch: impl Fn(Header, usize) -> (usize, u32)) {
    let mut edits = Vec::new();
    for at in 0..bytes.len().saturating_sub(4) {
        let signature = u32::from_le_bytes(bytes[at..at + 4].try_into().unwrap());
        let (header, name_len_at, name_at) = match signature {
            0x0403_4b50 => (Header::Local, at + 26, at + 30),
            0x0201_4b50 => (Header::Central, at + 28, at + 46),
            _ => continue,
        };
        let Some(len) = bytes.get(name_len_at..name_len_at + 2) else {
            continue;
        };
        let len = usize::from(u16::from_le_bytes(len.try_into().unwrap()));
        if bytes.get(name_at..name_at + len) == Some(name) {
            edits.push(patch(header, at));
        }
    }
    assert_eq!(edits.len(), 2, "both headers of {name:?} found");
    for (at, value) in edits {
        bytes[at..at + 4].copy_from_slice(&value.to_le_bytes());
    }
}

#[test]
fn zip64_records_are_refused() {
    let mut bytes = raw_bundle(vec![]);
    let end = bytes.len() - 22;
    bytes[end + 8..end + 12].copy_from_slice(&[0xFF; 4]);
    refused(&bytes, Rule::Zip64, None);
}

// ---------------------------------------------------------------- sizes and counts

#[test]
fn deflate_bomb_over_the_limit_is_refused() {
    let mut writer = zip::ZipWriter::new(Cursor::new(Vec::new()));
    let options = SimpleFileOptions::default();
    writer.start_file("manifest.json", options).unwrap();
    writer.write_all(&manifest_json()).unwrap();
    writer.start_file("index.html", options).unwrap();
    writer.write_all(INDEX).unwrap();
    writer.start_file("bomb.js", options).unwrap();
    let zeros = vec![0_u8; 1024 * 1024];
    for _ in 0..60 {
        writer.write_all(&zeros).unwrap();
    }
    let bytes = writer.finish().unwrap().into_inner();
    assert!(bytes.len() < 200 * 1024, "{}", bytes.len());
    refused(&bytes, Rule::DecompressedSize, Some("bomb.js"));
}

#[test]
fn many_small_bombs_are_refused_by_their_sum() {
    // Six entries of 9 MB each: every one fits, together they do not.
    let mut writer = zip::ZipWriter::new(Cursor::new(Vec::new()));
    let options = SimpleFileOptions::default();
    writer.start_file("manifest.json", options).unwrap();
    writer.write_all(&manifest_json()).unwrap();
    writer.start_file("index.html", options).unwrap();
    writer.write_all(INDEX).unwrap();
    let zeros = vec![0_u8; 9 * 1024 * 1024];
    for index in 0..6 {
        writer
            .start_file(format!("bomb{index}.js"), options)
            .unwrap();
        writer.write_all(&zeros).unwrap();
    }
    let bytes = writer.finish().unwrap().into_inner();
    let error = refused(&bytes, Rule::DecompressedSize, Some("bomb5.js"));
    assert!(
        error
            .to_string()
            .contains(&MAX_DECOMPRESSED_BYTES.to_string())
    );
}

#[test]
fn too_many_files_are_refused() {
    let names: Vec<String> = (0..MAX_FILES).map(|i| format!("js/{i}.js")).collect();
    let manifest = manifest_json();
    let mut files: Vec<(&str, &[u8])> = vec![("manifest.json", &manifest), ("index.html", INDEX)];
    files.extend(names.iter().map(|n| (n.as_str(), b"1".as_slice())));
    refused(&written(&files), Rule::FileCount, None);
    // Exactly the limit passes (folders are not counted).
    files.truncate(MAX_FILES);
    files.push(("js/", b""));
    assert_eq!(read_zip(&written(&files)).unwrap().file_count(), MAX_FILES);
}

#[test]
fn an_input_over_ten_megabytes_is_refused_before_parsing() {
    let bytes = vec![0_u8; usize::try_from(MAX_COMPRESSED_BYTES).unwrap() + 1];
    refused(&bytes, Rule::CompressedSize, None);
}

#[test]
fn non_zips_truncated_and_empty_zips_are_refused() {
    refused(b"", Rule::NotAZip, None);
    refused(b"<html>not a zip</html>", Rule::NotAZip, None);
    let good = good_zip();
    refused(&good[..good.len() - 1], Rule::NotAZip, None);
    refused(&good[..good.len() / 2], Rule::NotAZip, None);
    for len in 0..good.len() {
        assert!(
            read_zip(&good[..len]).is_err(),
            "prefix of {len} bytes accepted"
        );
    }
    refused(&assemble(&[]), Rule::FileCount, None);
    refused(&written(&[("img/", b"")]), Rule::FileCount, None);
}

// ---------------------------------------------------------------- manifest

#[test]
fn a_missing_manifest_is_refused() {
    refused(
        &written(&[("index.html", INDEX)]),
        Rule::ManifestMissing,
        None,
    );
    // Only at the root, with that exact name.
    refused(
        &written(&[
            ("tool/manifest.json", &manifest_json()),
            ("index.html", INDEX),
        ]),
        Rule::ManifestMissing,
        None,
    );
}

#[track_caller]
fn manifest_refused(manifest: &[u8], rule: Rule, message_start: &str) {
    let bytes = written(&[("manifest.json", manifest), ("index.html", INDEX)]);
    let error = refused(&bytes, rule, Some("manifest.json"));
    assert!(
        error
            .refusals()
            .iter()
            .any(|r| r.message.starts_with(message_start)),
        "no message starting {message_start:?} in: {error}"
    );
}

#[test]
fn invalid_manifests_are_refused() {
    manifest_refused(
        b"{ \"name\": ",
        Rule::Manifest,
        "the file is not valid JSON",
    );
    manifest_refused(b"\xff\xfe{}", Rule::Manifest, "the file is not valid UTF-8");
    manifest_refused(
        b"[1, 2]",
        Rule::Manifest,
        "the file must hold one JSON object",
    );
    for field in [
        "name",
        "shortName",
        "type",
        "version",
        "description",
        "entry",
    ] {
        let manifest = manifest_with(field, serde_json::Value::Null);
        manifest_refused(&manifest, Rule::Manifest, &format!("{field}: missing"));
        let manifest = manifest_with(field, serde_json::json!(42));
        manifest_refused(
            &manifest,
            Rule::Manifest,
            &format!("{field}: must be a string"),
        );
    }
    manifest_refused(
        &manifest_with("type", serde_json::json!("widget")),
        Rule::Manifest,
        "type: \"widget\" is not a tool type",
    );
    for version in ["1.0", "v1.0.0", "", "1.0.0.0"] {
        manifest_refused(
            &manifest_with("version", serde_json::json!(version)),
            Rule::Manifest,
            &format!("version: {version:?} is not a semver version"),
        );
    }
    manifest_refused(
        &manifest_with("shortname", serde_json::json!("Roof")),
        Rule::Manifest,
        "shortname: unknown field (did you mean \"shortName\"?)",
    );
    manifest_refused(
        &manifest_with("entry", serde_json::json!("absent.html")),
        Rule::EntryMissing,
        "entry: \"absent.html\" is not a file in the bundle",
    );
    manifest_refused(
        &manifest_with("entry", serde_json::json!("../index.html")),
        Rule::Manifest,
        "entry: \"../index.html\" is not a usable path",
    );
}

fn setting(key: &str) -> serde_json::Value {
    serde_json::json!({"key": key, "label": "A setting", "type": "string"})
}

/// Asserts `settings` is refused under the `settings` rule with a message
/// that starts with `message_start` (its path first).
#[track_caller]
fn settings_refused(settings: serde_json::Value, message_start: &str) {
    manifest_refused(
        &manifest_with("settings", settings),
        Rule::Settings,
        message_start,
    );
}

/// The same for `permissions` under the `permissions` rule.
#[track_caller]
fn permissions_refused(permissions: serde_json::Value, message_start: &str) {
    manifest_refused(
        &manifest_with("permissions", permissions),
        Rule::Permissions,
        message_start,
    );
}

fn connect(origins: &[&str]) -> serde_json::Value {
    serde_json::json!({ "connect": origins })
}

#[test]
fn malformed_settings_are_refused_with_their_path() {
    use serde_json::json;
    settings_refused(json!({"wastePercent": 10}), "settings: must be an array");
    settings_refused(json!("wastePercent"), "settings: must be an array");
    let many: Vec<_> = (0..21).map(|i| setting(&format!("s{i}"))).collect();
    settings_refused(json!(many), "settings: declares 21 settings; at most 20");
    settings_refused(json!([setting("a"), 5]), "settings[1]: must be an object");
    settings_refused(
        json!([setting("region"), setting("supplier"), setting("region")]),
        "settings[2].key: \"region\" is declared twice (first at settings[0])",
    );
    for key in ["1st", "_x", "waste-percent", "waste percent", "", "é"] {
        settings_refused(json!([setting(key)]), "settings[0].key: ");
    }
    settings_refused(json!([setting(&"k".repeat(41))]), "settings[0].key: \"kkkk");
    settings_refused(
        json!([{"label": "No key", "type": "string"}]),
        "settings[0].key: is required",
    );
    settings_refused(
        json!([{"key": 7, "label": "Seven", "type": "string"}]),
        "settings[0].key: must be a string",
    );
    settings_refused(
        json!([{"key": "a", "type": "string"}]),
        "settings[0].label: is required",
    );
    settings_refused(
        json!([{"key": "a", "label": "x".repeat(101), "type": "string"}]),
        "settings[0].label: must be at most 100 characters",
    );
    settings_refused(
        json!([{"key": "a", "label": "Two\nlines", "type": "string"}]),
        "settings[0].label: must be one line",
    );
    settings_refused(
        json!([{"key": "a", "label": "A", "type": "color"}]),
        "settings[0].type: unknown value \"color\"",
    );
    settings_refused(
        json!([{"key": "a", "label": "A"}]),
        "settings[0].type: is required",
    );
}

#[test]
fn malformed_select_options_and_defaults_are_refused_with_their_path() {
    use serde_json::json;
    settings_refused(
        json!([{"key": "region", "label": "Region", "type": "select"}]),
        "settings[0].options: is required",
    );
    settings_refused(
        json!([{"key": "region", "label": "Region", "type": "select", "options": []}]),
        "settings[0].options: has 0 options",
    );
    let options: Vec<String> = (0..51).map(|i| format!("o{i}")).collect();
    settings_refused(
        json!([{"key": "region", "label": "Region", "type": "select", "options": options}]),
        "settings[0].options: has 51 options",
    );
    settings_refused(
        json!([{"key": "region", "label": "Region", "type": "select", "options": ["North", "North"]}]),
        "settings[0].options[1]: \"North\" is listed twice",
    );
    settings_refused(
        json!([{"key": "region", "label": "Region", "type": "select", "options": ["North", ""]}]),
        "settings[0].options[1]: must not be empty",
    );
    settings_refused(
        json!([{"key": "region", "label": "Region", "type": "select", "options": ["North", 2]}]),
        "settings[0].options[1]: must be a string",
    );
    settings_refused(
        json!([{"key": "region", "label": "Region", "type": "select", "options": ["x".repeat(101)]}]),
        "settings[0].options[0]: must be at most 100 characters",
    );
    settings_refused(
        json!([setting("a"), {"key": "b", "label": "B", "type": "number", "options": ["1"]}]),
        "settings[1].options: only a select setting takes options",
    );
    settings_refused(
        json!([{"key": "a", "label": "A", "type": "number", "default": "10"}]),
        "settings[0].default: is not a valid value: must be a number",
    );
    settings_refused(
        json!([{"key": "a", "label": "A", "type": "boolean", "default": 1}]),
        "settings[0].default: is not a valid value: must be true or false",
    );
    settings_refused(
        json!([{"key": "r", "label": "R", "type": "select", "options": ["North"], "default": "East"}]),
        "settings[0].default: is not a valid value: \"East\" is not one of its options",
    );
    settings_refused(
        json!([{"key": "a", "label": "A", "type": "string", "default": "x".repeat(1001)}]),
        "settings[0].default: is not a valid value: must be at most 1000 characters",
    );
    settings_refused(
        json!([{"key": "a", "label": "A", "type": "string", "required": "yes"}]),
        "settings[0].required: must be true or false",
    );
    settings_refused(
        json!([{"key": "a", "label": "A", "type": "string", "description": "d".repeat(301)}]),
        "settings[0].description: must be at most 300 characters",
    );
    settings_refused(
        json!([{"key": "a", "label": "A", "type": "number", "secret": true}]),
        "settings[0].secret: only a string setting can be secret",
    );
    settings_refused(
        json!([{"key": "a", "label": "A", "type": "string", "secret": true, "default": "k"}]),
        "settings[0].default: a secret setting cannot have a default",
    );
    settings_refused(
        json!([{"key": "a", "label": "A", "type": "string", "Default": "x"}]),
        "settings[0].Default: unknown field; did you mean `default`?",
    );
}

#[test]
fn malformed_permissions_are_refused_with_their_path() {
    use serde_json::json;
    permissions_refused(
        json!(["https://api.vendor.example"]),
        "permissions: must be an object",
    );
    permissions_refused(
        json!({"storage": true}),
        "permissions.storage: unknown permission; a tool may ask only for connect",
    );
    permissions_refused(
        json!({"connect": "https://api.vendor.example"}),
        "permissions.connect: must be an array",
    );
    permissions_refused(
        json!({"connect": [42]}),
        "permissions.connect[0]: must be a string",
    );
}

#[test]
fn connect_origins_must_be_exact_https_origins() {
    for (origin, problem) in [
        ("http://api.vendor.example", "must be an https origin"),
        ("ws://api.vendor.example", "must be an https origin"),
        ("api.vendor.example", "must be an origin such as"),
        (
            "HTTPS://api.vendor.example",
            "must start with https:// in lower case",
        ),
        (
            "https://api.vendor.example/",
            "must be an origin only, without a trailing /",
        ),
        (
            "https://api.vendor.example/prices",
            "must be an origin only, without a path",
        ),
        (
            "https://api.vendor.example?x=1",
            "must be an origin only, without a query",
        ),
        (
            "https://api.vendor.example#top",
            "must be an origin only, without a fragment",
        ),
        (
            "https://*.vendor.example",
            "must name one host exactly; wildcards",
        ),
        ("https://*", "must name one host exactly; wildcards"),
        (
            "https://user:pw@api.vendor.example",
            "must not contain a user name",
        ),
        (
            "https://API.Vendor.example",
            "must have its host in lower case: write https://api.vendor.example",
        ),
        (
            "https://api.vendor.example:0",
            "the port must be a number from 1 to 65535",
        ),
        (
            "https://api.vendor.example:65536",
            "the port must be a number from 1 to 65535",
        ),
        (
            "https://api.vendor.example:",
            "the port must be a number from 1 to 65535",
        ),
        ("https://api.vendor.example:443", "leave out :443"),
        ("https://[::1]", "an IPv6 address cannot be named"),
        ("https://", "the host is missing"),
        ("https://api..example", "is not a host name"),
        ("https://api_vendor.example", "is not a host name"),
        ("https://-api.example", "is not a host name"),
        ("https://300.1.1.1", "300.1.1.1 is not an IPv4 address"),
        ("https://api.vendor.example ", "is not a host name"),
    ] {
        permissions_refused(
            connect(&[origin]),
            &format!("permissions.connect[0]: {origin:?}"),
        );
        let bytes = written(&[
            (
                "manifest.json",
                &manifest_with("permissions", connect(&[origin])),
            ),
            ("index.html", INDEX),
        ]);
        let shown = read_zip(&bytes).unwrap_err().to_string();
        assert!(shown.contains(problem), "{origin}: {shown}");
    }
    let eleven: Vec<String> = (0..11)
        .map(|i| format!("https://api{i}.vendor.example"))
        .collect();
    let eleven: Vec<&str> = eleven.iter().map(String::as_str).collect();
    permissions_refused(
        connect(&eleven),
        "permissions.connect: lists 11 origins; at most 10",
    );
    permissions_refused(
        connect(&[
            "https://api.vendor.example",
            "https://prices.vendor.example",
            "https://api.vendor.example",
        ]),
        "permissions.connect[2]: \"https://api.vendor.example\" is listed twice",
    );
}

#[test]
fn settings_and_permissions_are_read_when_well_formed() {
    use serde_json::json;
    let mut manifest: serde_json::Value = serde_json::from_slice(&manifest_json()).unwrap();
    manifest["settings"] = json!([
        {"key": "wastePercent", "label": " Waste allowance (%) ", "type": "number", "default": 10, "description": "Added to every room's area."},
        {"key": "region", "label": "Region", "type": "select", "options": ["North", "South"], "required": true},
        {"key": "supplier", "label": "Default supplier", "type": "string"},
        {"key": "showCost", "label": "Show cost", "type": "boolean", "default": false}
    ]);
    manifest["permissions"] = json!({"connect": [
        "https://api.vendor.example", "https://prices.vendor.example:8443", "https://192.168.1.20", "https://localhost"
    ]});
    let bytes = written(&[
        ("manifest.json", manifest.to_string().as_bytes()),
        ("index.html", INDEX),
    ]);
    let bundle = read_zip(&bytes).unwrap();
    let read = bundle.manifest();
    let keys: Vec<&str> = read.settings.iter().map(|s| s.key.as_str()).collect();
    assert_eq!(keys, ["wastePercent", "region", "supplier", "showCost"]);
    assert_eq!(read.settings[0].label, "Waste allowance (%)");
    assert!(read.settings[1].required);
    assert_eq!(read.settings[1].options, ["North", "South"]);
    assert_eq!(read.permissions.connect.len(), 4);
    assert_eq!(
        read.permissions.connect[1],
        "https://prices.vendor.example:8443"
    );
    // As stored and served: the same fields back, and none when none were declared.
    let stored = serde_json::to_value(read).unwrap();
    assert_eq!(stored["settings"][0]["default"], json!(10));
    assert_eq!(stored["permissions"], manifest["permissions"]);
    let plain = serde_json::to_value(read_zip(&good_zip()).unwrap().manifest()).unwrap();
    assert!(
        plain.get("settings").is_none() && plain.get("permissions").is_none(),
        "{plain}"
    );
}

#[test]
fn settings_and_permissions_problems_are_reported_with_the_others() {
    let manifest = br#"{"name": "", "shortName": "S", "type": "standalone", "version": "1.0.0",
        "description": "d", "entry": "index.html",
        "settings": [{"key": "a", "label": "A", "type": "select"}, {"key": "a", "label": "B", "type": "text"}],
        "permissions": {"connect": ["http://x.example"], "camera": true}}"#;
    let bytes = written(&[("manifest.json", manifest), ("index.html", INDEX)]);
    let error = read_zip(&bytes).unwrap_err();
    let rules: Vec<Rule> = error.refusals().iter().map(|r| r.rule).collect();
    assert_eq!(
        rules,
        [
            Rule::Manifest,
            Rule::Settings,
            Rule::Settings,
            Rule::Settings,
            Rule::Permissions,
            Rule::Permissions
        ],
        "{error}"
    );
    let shown = error.to_string();
    assert!(
        shown.contains("manifest.json: settings[0].options: is required [settings]"),
        "{shown}"
    );
    assert!(
        shown.contains("manifest.json: permissions.camera: unknown permission"),
        "{shown}"
    );
}

#[test]
fn every_manifest_problem_is_reported_at_once() {
    let manifest = br#"{"name": "", "type": "x", "version": "1.0", "entry": 3, "extra": true}"#;
    let bytes = written(&[("manifest.json", manifest), ("index.html", INDEX)]);
    let error = read_zip(&bytes).unwrap_err();
    // name empty, type, version, entry type, extra unknown, shortName and description missing.
    assert_eq!(error.refusals().len(), 7, "{error}");
    assert!(error.refusals().iter().all(|r| r.rule == Rule::Manifest));
    assert_eq!(error.to_string().lines().count(), 7);
}

// ---------------------------------------------------------------- good bundles

#[test]
fn a_good_bundle_reads_and_round_trips_through_pack() {
    let bundle = read_zip(&good_zip()).unwrap();
    assert_eq!(bundle.manifest().short_name, "Roof Est.");
    assert_eq!(bundle.suggested_slug().as_deref(), Some("roof-est"));
    assert_eq!(bundle.file_count(), 5);
    let paths: Vec<&str> = bundle.files().map(|(path, _)| path).collect();
    assert_eq!(
        paths,
        [
            "css/app.css",
            "img/logo.svg",
            "index.html",
            "js/app.js",
            "manifest.json"
        ]
    );
    let expected: usize = good_files().iter().map(|(_, c)| c.len()).sum();
    assert_eq!(bundle.total_bytes(), u64::try_from(expected).unwrap());
    assert_eq!(bundle.file("index.html"), Some(INDEX));
    assert_eq!(bundle.file("nope.html"), None);

    let packed = pack(&bundle).unwrap();
    assert_eq!(pack(&bundle).unwrap(), packed, "pack is deterministic");
    let again = read_zip(&packed).unwrap();
    assert_eq!(again, bundle);
    assert!(again.files().eq(bundle.files()));
    assert_eq!(pack(&again).unwrap(), packed);
}

#[test]
fn packed_zips_have_fixed_headers() {
    let packed = pack(&read_zip(&good_zip()).unwrap()).unwrap();
    let mut archive = zip::ZipArchive::new(Cursor::new(&packed)).unwrap();
    for index in 0..archive.len() {
        let file = archive.by_index_raw(index).unwrap();
        assert_eq!(file.compression(), zip::CompressionMethod::Deflated);
        assert_eq!(file.unix_mode(), Some(0o100_644));
        assert_eq!(file.last_modified(), Some(zip::DateTime::default()));
        assert!(file.extra_data().is_none_or(<[u8]>::is_empty));
    }
    // Local headers: time 0, date 1980-01-01, no extra field.
    let mut at = 0;
    while let Some(found) = packed[at..].windows(4).position(|w| w == b"PK\x03\x04") {
        let header = at + found;
        assert_eq!(&packed[header + 10..header + 14], &[0, 0, 0x21, 0]);
        assert_eq!(&packed[header + 28..header + 30], &[0, 0]);
        at = header + 4;
    }
}

#[test]
fn folder_entries_are_allowed_and_not_counted() {
    let manifest = manifest_json();
    let bytes = written(&[
        ("css/", b""),
        ("manifest.json", &manifest),
        ("index.html", INDEX),
        ("css/app.css", b"a{}"),
    ]);
    let bundle = read_zip(&bytes).unwrap();
    assert_eq!(bundle.file_count(), 3);
}

#[test]
fn request_paths_and_media_types() {
    use toolbridge_bundle::{is_valid_name, media_type};
    assert!(is_valid_name("index.html"));
    assert!(is_valid_name("css/APP.CSS"));
    assert!(!is_valid_name("../index.html"));
    assert!(!is_valid_name("a/./b.js"));
    assert!(!is_valid_name(""));
    assert!(!is_valid_name("css/"));
    assert!(!is_valid_name("run.exe"));
    assert_eq!(media_type("index.html"), "text/html; charset=utf-8");
    assert_eq!(media_type("fonts/a.woff2"), "font/woff2");
    assert_eq!(media_type("a.JPG"), "image/jpeg");
}

// ---------------------------------------------------------------- folders

struct TempDir(PathBuf);

impl TempDir {
    fn new(label: &str) -> Self {
        use std::sync::atomic::{AtomicU32, Ordering};
        static COUNTER: AtomicU32 = AtomicU32::new(0);
        let path = std::env::temp_dir().join(format!(
            "toolbridge-bundle-{label}-{}-{}",
            std::process::id(),
            COUNTER.fetch_add(1, Ordering::Relaxed)
        ));
        std::fs::create_dir_all(&path).unwrap();
        Self(path)
    }

    fn write(&self, path: &str, contents: &[u8]) {
        let path = self.0.join(path);
        std::fs::create_dir_all(path.parent().unwrap()).unwrap();
        std::fs::write(path, contents).unwrap();
    }
}

impl Drop for TempDir {
    fn drop(&mut self) {
        let _ = std::fs::remove_dir_all(&self.0);
    }
}

fn good_folder(label: &str) -> TempDir {
    let dir = TempDir::new(label);
    for (path, contents) in good_files() {
        dir.write(path, &contents);
    }
    dir
}

#[test]
fn a_folder_reads_like_its_zip_and_skips_hidden_entries() {
    let dir = good_folder("good");
    dir.write(".DS_Store", b"junk");
    dir.write("css/.DS_Store", b"junk");
    dir.write(".git/HEAD", b"ref: x");
    let folder = read_dir(&dir.0).unwrap();
    assert_eq!(folder.skipped, [".DS_Store", ".git/", "css/.DS_Store"]);
    assert_eq!(folder.bundle, read_zip(&good_zip()).unwrap());
    let packed = pack(&folder.bundle).unwrap();
    assert_eq!(read_zip(&packed).unwrap(), folder.bundle);
    assert_eq!(packed, pack(&read_zip(&good_zip()).unwrap()).unwrap());
}

#[cfg(unix)]
#[test]
fn a_symlink_in_a_folder_is_refused() {
    let dir = good_folder("link");
    std::os::unix::fs::symlink("/etc/passwd", dir.0.join("js/passwd.js")).unwrap();
    std::os::unix::fs::symlink(&dir.0, dir.0.join("loop")).unwrap();
    let error = read_dir(&dir.0).unwrap_err();
    let links: Vec<_> = error
        .refusals()
        .iter()
        .filter(|r| r.rule == Rule::Symlink)
        .map(|r| r.entry.as_deref().unwrap())
        .collect();
    assert_eq!(links, ["loop", "js/passwd.js"], "{error}");
}

#[test]
fn a_disallowed_file_in_a_folder_is_refused_by_name() {
    let dir = good_folder("exe");
    dir.write("bin/tool.exe", b"MZ");
    let error = read_dir(&dir.0).unwrap_err();
    let refusal = &error.refusals()[0];
    assert_eq!(refusal.rule, Rule::Extension);
    assert_eq!(refusal.entry.as_deref(), Some("bin/tool.exe"));
}

#[test]
fn a_missing_folder_is_an_io_error() {
    let error = read_dir(&std::env::temp_dir().join("toolbridge-bundle-no-such-dir")).unwrap_err();
    assert!(matches!(error, Error::Io { .. }));
    assert!(error.refusals().is_empty());
}

// ---------------------------------------------------------------- never panics

proptest! {
    #![proptest_config(ProptestConfig::with_cases(512))]

    #[test]
    fn read_zip_never_panics_on_arbitrary_bytes(bytes in proptest::collection::vec(any::<u8>(), 0..2048)) {
        let _ = read_zip(&bytes);
    }

    #[test]
    fn read_zip_never_panics_on_mutated_zips(
        edits in proptest::collection::vec((any::<prop::sample::Index>(), any::<u8>()), 1..8),
        cut in any::<prop::sample::Index>(),
        truncate in any::<bool>(),
    ) {
        let mut bytes = good_zip();
        for (index, value) in edits {
            let at = index.index(bytes.len());
            bytes[at] = value;
        }
        if truncate {
            bytes.truncate(cut.index(bytes.len()));
        }
        if let Ok(bundle) = read_zip(&bytes) {
            let packed = pack(&bundle).unwrap();
            prop_assert_eq!(read_zip(&packed).unwrap(), bundle);
        }
    }
}

// ---------------------------------------------------------------- fuzz seeds

/// Writes the fuzzer's seed inputs (a few good and hostile zips) to
/// `bundle/fuzz/seeds/read_zip/`. Run it after changing the corpus:
/// `cargo test -p toolbridge-bundle --test hostile -- --ignored write_fuzz_seeds`
#[test]
#[ignore = "writes files into the source tree; run by hand"]
fn write_fuzz_seeds() {
    let dir = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("fuzz/seeds/read_zip");
    std::fs::create_dir_all(&dir).unwrap();
    let good = good_zip();
    let manifest = manifest_json();
    let mut twin = Raw::stored("a.js", "x");
    twin.offset_of = Some(2);
    twin.central_only = true;
    let mut header_mismatch = Raw::stored("a.js", "x");
    header_mismatch.local_name = b"b.js".to_vec();
    let mut bad_crc = Raw::stored("a.js", "hello");
    bad_crc.crc ^= 1;
    bad_crc.local_crc = bad_crc.crc;
    let seeds: Vec<(&str, Vec<u8>)> = vec![
        ("good.zip", good.clone()),
        ("packed.zip", pack(&read_zip(&good).unwrap()).unwrap()),
        (
            "raw-stored.zip",
            raw_bundle(vec![Raw::stored("css/a.css", "a{}")]),
        ),
        (
            "with-folders.zip",
            written(&[
                ("css/", b""),
                ("manifest.json", &manifest),
                ("index.html", INDEX),
                ("css/a.css", b"a{}"),
            ]),
        ),
        (
            "zip-slip.zip",
            raw_bundle(vec![Raw::stored("../evil.js", "x")]),
        ),
        (
            "symlink.zip",
            raw_bundle(vec![Raw::stored("l.js", "/etc").mode(0o120_777)]),
        ),
        (
            "encrypted.zip",
            raw_bundle(vec![Raw::stored("e.js", "x").flags(1)]),
        ),
        (
            "bzip2.zip",
            raw_bundle(vec![Raw::stored("b.js", "x").method(12)]),
        ),
        ("header-mismatch.zip", raw_bundle(vec![header_mismatch])),
        (
            "overlap.zip",
            raw_bundle(vec![Raw::stored("a.js", "x"), twin]),
        ),
        ("bad-crc.zip", raw_bundle(vec![bad_crc])),
        (
            "case-duplicate.zip",
            raw_bundle(vec![Raw::stored("A.js", "1"), Raw::stored("a.js", "2")]),
        ),
        (
            "bad-manifest.zip",
            written(&[
                ("manifest.json", br#"{"name":"","version":"1.0"}"#),
                ("index.html", INDEX),
            ]),
        ),
        ("empty.zip", assemble(&[])),
    ];
    for (name, bytes) in seeds {
        assert!(bytes.len() < 20 * 1024, "{name}");
        std::fs::write(dir.join(name), bytes).unwrap();
    }
}
