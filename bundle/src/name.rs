//! Rules for the names of a bundle's files and folders, and for the list of
//! names as a whole (extensions, duplicates, count, manifest present).
//!
//! A name is a relative path with `/` between segments, exactly as it will
//! be served: it must not be able to point outside the bundle on any system
//! that might unpack it, so `..`, `.`, empty segments, absolute paths,
//! backslashes, colons (drive letters, Windows streams) and control
//! characters are all refused.

use std::collections::BTreeMap;

use crate::error::{Refusal, Rule};
use crate::{ALLOWED_EXTENSIONS, MANIFEST, MAX_FILES};

/// Longest accepted name, in bytes.
pub(crate) const MAX_NAME_BYTES: usize = 255;

/// Checks one file name (no trailing `/`); the error says what is wrong.
pub(crate) fn check_name(name: &str) -> Result<(), String> {
    if name.is_empty() {
        return Err("the name is empty".to_owned());
    }
    if name.len() > MAX_NAME_BYTES {
        return Err(format!(
            "the name is {} bytes long; at most {MAX_NAME_BYTES} are allowed",
            name.len()
        ));
    }
    if let Some(c) = name.chars().find(|c| c.is_control()) {
        return Err(format!(
            "the name contains the control character U+{:04X}; names must be printable",
            u32::from(c)
        ));
    }
    if name.contains('\\') {
        return Err("the name contains a backslash; use '/' between folders".to_owned());
    }
    if name.starts_with('/') {
        return Err(
            "the name is an absolute path; names must be relative to the bundle's root".to_owned(),
        );
    }
    if name.contains(':') {
        return Err(
            "the name contains ':' (a drive letter or stream name); it is not allowed in names"
                .to_owned(),
        );
    }
    for segment in name.split('/') {
        match segment {
            "" => {
                return Err(
                    "the name has an empty folder segment ('//' or a trailing '/')".to_owned(),
                );
            }
            "." | ".." => {
                return Err(format!(
                    "the name has a '{segment}' segment; names must stay inside the bundle and cannot use '.' or '..'"
                ));
            }
            _ => {}
        }
    }
    Ok(())
}

/// The lowercased extension of a name's last segment, if it has one.
pub(crate) fn extension(name: &str) -> Option<String> {
    let last = name.rsplit('/').next().unwrap_or(name);
    let (_, ext) = last.rsplit_once('.')?;
    (!ext.is_empty()).then(|| ext.to_ascii_lowercase())
}

/// Checks a file name's extension against [`ALLOWED_EXTENSIONS`].
pub(crate) fn check_extension(name: &str) -> Result<(), String> {
    let allowed = ALLOWED_EXTENSIONS.join(", .");
    match extension(name) {
        Some(ext) if ALLOWED_EXTENSIONS.contains(&ext.as_str()) => Ok(()),
        Some(ext) => Err(format!(
            "files of type .{ext} are not allowed; allowed types are .{allowed}"
        )),
        None => Err(format!(
            "the file has no extension; allowed types are .{allowed}"
        )),
    }
}

/// Whether `path` could name a file in a bundle (name and extension rules).
pub(crate) fn is_valid_file_name(path: &str) -> bool {
    check_name(path).is_ok() && check_extension(path).is_ok()
}

/// One name found in an archive or folder, before its contents are read.
#[derive(Debug, Clone)]
pub(crate) struct Listed<'a> {
    /// The name without any trailing `/`.
    pub(crate) name: &'a str,
    /// Whether this is a folder (a zip directory entry) rather than a file.
    pub(crate) is_dir: bool,
}

/// Checks the names of a bundle as a whole: each name, each file's
/// extension, duplicates (also ignoring case, and a file whose name is also
/// a folder), the file count and `manifest.json` at the root. Returns every
/// refusal found.
pub(crate) fn check_listing(entries: &[Listed<'_>]) -> Vec<Refusal> {
    let mut refusals = Vec::new();
    let mut file_count = 0_usize;
    // Folded name -> the first name seen, for files and for folders.
    let mut files: BTreeMap<String, &str> = BTreeMap::new();
    let mut folders: BTreeMap<String, String> = BTreeMap::new();
    let mut valid_files = Vec::new();

    for entry in entries {
        if let Err(message) = check_name(entry.name) {
            let shown = if entry.is_dir {
                format!("{}/", entry.name)
            } else {
                entry.name.to_owned()
            };
            refusals.push(Refusal::entry(shown, Rule::Name, message));
            continue;
        }
        // Every folder on the way to this entry, and the entry itself if it is one.
        let mut prefixes: Vec<&str> = entry
            .name
            .match_indices('/')
            .map(|(at, _)| &entry.name[..at])
            .collect();
        if entry.is_dir {
            prefixes.push(entry.name);
        } else {
            file_count = file_count.saturating_add(1);
            if let Err(message) = check_extension(entry.name) {
                refusals.push(Refusal::entry(entry.name, Rule::Extension, message));
            }
            let folded = entry.name.to_lowercase();
            if let Some(first) = files.get(&folded) {
                let message = if *first == entry.name {
                    "this name appears twice in the bundle; every file needs its own name"
                        .to_owned()
                } else {
                    format!(
                        "this name differs from '{first}' only in upper/lower case; names must differ in more than case"
                    )
                };
                refusals.push(Refusal::entry(entry.name, Rule::Duplicate, message));
            } else {
                files.insert(folded, entry.name);
                valid_files.push(entry.name);
            }
        }
        for prefix in prefixes {
            folders
                .entry(prefix.to_lowercase())
                .or_insert_with(|| prefix.to_owned());
        }
    }

    for name in valid_files {
        if let Some(folder) = folders.get(&name.to_lowercase()) {
            refusals.push(Refusal::entry(
                name,
                Rule::Duplicate,
                format!(
                    "this file has the same name as the folder '{folder}'; a name cannot be both"
                ),
            ));
        }
    }

    if file_count > MAX_FILES {
        refusals.push(Refusal::bundle(
            Rule::FileCount,
            format!("the bundle holds {file_count} files; at most {MAX_FILES} are allowed"),
        ));
    } else if file_count == 0 {
        refusals.push(Refusal::bundle(
            Rule::FileCount,
            format!("the bundle holds no files; it needs at least {MANIFEST} and the entry page"),
        ));
    }
    let has_manifest = entries
        .iter()
        .any(|entry| !entry.is_dir && entry.name == MANIFEST);
    if file_count > 0 && !has_manifest {
        refusals.push(Refusal::bundle(
            Rule::ManifestMissing,
            format!("there is no {MANIFEST} at the bundle's root; every bundle needs one"),
        ));
    }
    refusals
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn good_names_pass() {
        for name in [
            "index.html",
            "css/app.css",
            "img/a b/ünïcode.png",
            ".well-known.json",
        ] {
            assert_eq!(check_name(name), Ok(()), "{name}");
        }
    }

    #[test]
    fn escaping_names_are_refused() {
        for name in [
            "",
            "../x.js",
            "a/../../x.js",
            "./x.js",
            "a/./x.js",
            "/etc/passwd.js",
            "a\\..\\x.js",
            "C:x.js",
            "c:/x.js",
            "a//b.js",
            "a/",
            "nul\0.js",
            "del\u{7f}.js",
            "line\nbreak.js",
            "c1\u{85}.js",
        ] {
            assert!(check_name(name).is_err(), "{name:?} passed");
        }
        assert!(check_name(&"a".repeat(256)).is_err());
        assert!(check_name(&"a".repeat(255)).is_ok());
    }

    #[test]
    fn extensions_are_case_insensitive() {
        assert_eq!(check_extension("A.PNG"), Ok(()));
        assert_eq!(check_extension("manifest.json"), Ok(()));
        assert!(check_extension("run.exe").is_err());
        assert!(check_extension("Makefile").is_err());
        assert!(check_extension("dir.js/readme").is_err());
        assert_eq!(extension(".js"), Some("js".to_owned()));
        assert_eq!(extension("index.html."), None);
        assert!(check_extension("index.html.").is_err());
    }

    fn listing(names: &[&str]) -> Vec<Rule> {
        let entries: Vec<Listed<'_>> = names
            .iter()
            .map(|n| Listed {
                name: n.trim_end_matches('/'),
                is_dir: n.ends_with('/'),
            })
            .collect();
        check_listing(&entries)
            .into_iter()
            .map(|r| r.rule)
            .collect()
    }

    #[test]
    fn listing_rules() {
        assert!(listing(&["manifest.json", "index.html", "img/", "img/a.png"]).is_empty());
        assert_eq!(
            listing(&["manifest.json", "a.js", "A.js"]),
            [Rule::Duplicate]
        );
        assert_eq!(
            listing(&["manifest.json", "a.js", "a.js"]),
            [Rule::Duplicate]
        );
        assert_eq!(
            listing(&["manifest.json", "img.png", "IMG.png/x.png"]),
            [Rule::Duplicate]
        );
        assert_eq!(
            listing(&["manifest.json", "x.json", "x.json/"]),
            [Rule::Duplicate]
        );
        assert_eq!(listing(&["index.html"]), [Rule::ManifestMissing]);
        assert_eq!(listing(&["img/"]), [Rule::FileCount]);
    }
}
