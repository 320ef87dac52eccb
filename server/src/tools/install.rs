//! Installing a checked bundle: the tool's slug (its origin's name) comes
//! from the caller or from the manifest's short name, and the store replaces
//! any earlier version of the tool in one transaction.

use std::path::Path;

use toolbridge_bundle::Bundle;
use toolbridge_protocol::Error as RuleError;
use toolbridge_protocol::manifest::SLUG_RULE;
use toolbridge_store::{InstalledTool, Store};

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
