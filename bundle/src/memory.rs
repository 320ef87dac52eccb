//! Checking a bundle whose files are already in memory (the example tools built into the
//! server): the same name, type, count, size and manifest rules as a zip or a folder.

use std::collections::BTreeMap;

use crate::bundle::Bundle;
use crate::error::Error;
use crate::name::{self, Listed};

/// Checks `files` (path in the bundle, `/` between folders → contents); see
/// [`crate::read_files`].
pub(crate) fn read_files(files: BTreeMap<String, Vec<u8>>) -> Result<Bundle, Error> {
    let listed: Vec<Listed<'_>> = files
        .keys()
        .map(|name| Listed {
            name,
            is_dir: false,
        })
        .collect();
    let refusals = name::check_listing(&listed);
    if !refusals.is_empty() {
        return Err(Error::Refused(refusals));
    }
    Bundle::from_checked_files(files)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::Rule;

    fn files(entries: &[(&str, &str)]) -> BTreeMap<String, Vec<u8>> {
        entries
            .iter()
            .map(|(name, text)| ((*name).to_owned(), text.as_bytes().to_vec()))
            .collect()
    }

    const MANIFEST: &str = r#"{"name":"Demo","shortName":"Demo","type":"standalone","version":"1.0.0","description":"d","entry":"index.html"}"#;

    #[test]
    fn good_files_make_a_bundle() {
        let bundle = read_files(files(&[
            ("manifest.json", MANIFEST),
            ("index.html", "<!doctype html>"),
            ("css/app.css", "body{}"),
        ]))
        .unwrap();
        assert_eq!(bundle.manifest().short_name, "Demo");
        assert_eq!(bundle.file("css/app.css"), Some(&b"body{}"[..]));
        assert_eq!(bundle.file_count(), 3);
    }

    #[test]
    fn the_rules_of_a_zip_hold() {
        let refused = read_files(files(&[
            ("manifest.json", MANIFEST),
            ("index.html", "<!doctype html>"),
            ("../escape.js", ""),
            ("run.exe", ""),
        ]))
        .unwrap_err();
        let rules: Vec<Rule> = refused.refusals().iter().map(|r| r.rule).collect();
        assert!(rules.contains(&Rule::Name), "{rules:?}");
        assert!(rules.contains(&Rule::Extension), "{rules:?}");
        let no_entry = read_files(files(&[("manifest.json", MANIFEST)])).unwrap_err();
        assert!(!no_entry.refusals().is_empty());
        let no_manifest = read_files(files(&[("index.html", "")])).unwrap_err();
        assert!(
            no_manifest
                .refusals()
                .iter()
                .any(|r| r.rule == Rule::ManifestMissing)
        );
    }
}
