//! Installing a checked bundle: the tool's slug (its origin's name) comes
//! from the caller or from the manifest's short name, and the store replaces
//! any earlier version of the tool in one transaction.

use std::collections::BTreeMap;
use std::path::Path;

use toolbridge_bundle::Bundle;
use toolbridge_protocol::Error as RuleError;
use toolbridge_protocol::manifest::SLUG_RULE;
use toolbridge_store::{InstalledTool, Store};

use crate::embedded::Embedded;
use crate::error::{ApiError, Chain};

/// What an install did.
#[derive(Debug, Clone)]
pub struct Installed {
    /// The tool as now installed.
    pub tool: InstalledTool,
    /// The tool it replaced, if the slug was taken.
    pub replaced: Option<InstalledTool>,
}

/// Installs `bundle` as the tool `slug`, or under the slug its manifest's
/// short name gives.
pub async fn install(
    store: &Store,
    bundle: &Bundle,
    slug: Option<&str>,
) -> Result<Installed, ApiError> {
    let slug = match slug {
        Some(slug) => slug.to_owned(),
        None => bundle.suggested_slug().ok_or_else(|| {
            ApiError::Rule(RuleError::invalid(
                "slug",
                format!(
                    "the manifest's shortName {:?} gives no usable slug; choose one ({SLUG_RULE})",
                    bundle.manifest().short_name
                ),
            ))
        })?,
    };
    let files: Vec<(&str, &[u8])> = bundle.files().collect();
    let replaced = store.install_tool(&slug, bundle.manifest(), &files).await?;
    let tool = store.tool(&slug).await?.ok_or_else(|| {
        ApiError::internal(
            "reading a tool just installed",
            format!("the tool {slug:?} is missing right after its install"),
        )
    })?;
    Ok(Installed { tool, replaced })
}

/// Installs every tool folder in `dir` (each a folder with a
/// `manifest.json`), as a new database does on its first start. A folder
/// that breaks a bundle rule is reported, and the others still install.
pub async fn install_examples(store: &Store, dir: &Path) -> Vec<Result<Installed, String>> {
    let mut folders = match std::fs::read_dir(dir) {
        Ok(entries) => entries
            .filter_map(Result::ok)
            .map(|entry| entry.path())
            .filter(|path| path.join(toolbridge_bundle::MANIFEST).is_file())
            .collect::<Vec<_>>(),
        Err(error) => {
            return vec![Err(format!(
                "cannot read the example tools in {}: {error}",
                dir.display()
            ))];
        }
    };
    folders.sort();
    let mut outcomes = Vec::with_capacity(folders.len());
    for folder in folders {
        let outcome = match toolbridge_bundle::read_dir(&folder) {
            Ok(read) => install(store, &read.bundle, None)
                .await
                .map_err(|error| format!("{}: {}", folder.display(), Chain(&error))),
            Err(error) => Err(format!("{}: {}", folder.display(), Chain(&error))),
        };
        outcomes.push(outcome);
    }
    outcomes
}

/// Installs every example tool built into the server (`example-tools/`, see
/// [`Embedded::ExampleTools`]), as [`install_examples`] installs them from a folder: each folder
/// with a `manifest.json` at its root, without hidden files, in order of name; a tool that
/// breaks a bundle rule is reported, and the others still install.
pub async fn install_builtin_examples(store: &Store) -> Vec<Result<Installed, String>> {
    let set = Embedded::ExampleTools;
    // Each folder's files by their path in the bundle, or the first that could not be read.
    let mut folders: BTreeMap<String, Result<BTreeMap<String, Vec<u8>>, String>> = BTreeMap::new();
    for path in set.paths() {
        // Files beside the tools' folders belong to no tool.
        let Some((folder, name)) = path.split_once('/') else {
            continue;
        };
        if path.split('/').any(|segment| segment.starts_with('.')) {
            continue;
        }
        let file = set.get(&path);
        let entry = folders
            .entry(folder.to_owned())
            .or_insert_with(|| Ok(BTreeMap::new()));
        if let Ok(files) = entry {
            match file {
                Some(file) => {
                    files.insert(name.to_owned(), file.data.into_owned());
                }
                // Only a debug build, which reads the folder from disk, can list a file that is
                // gone when it reads it.
                None => *entry = Err(format!("{}/{path} cannot be read", set.folder())),
            }
        }
    }
    let mut outcomes = Vec::with_capacity(folders.len());
    for (folder, files) in folders {
        let shown = format!("{}/{folder} (built into the server)", set.folder());
        let outcome = match files {
            Ok(files) if !files.contains_key(toolbridge_bundle::MANIFEST) => continue,
            Ok(files) => match toolbridge_bundle::read_files(files) {
                Ok(bundle) => install(store, &bundle, None)
                    .await
                    .map_err(|error| format!("{shown}: {}", Chain(&error))),
                Err(error) => Err(format!("{shown}: {}", Chain(&error))),
            },
            Err(unreadable) => Err(format!("{shown}: {unreadable}")),
        };
        outcomes.push(outcome);
    }
    outcomes
}
