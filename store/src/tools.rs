//! Installed tools: each tool's manifest and the files of its bundle, kept
//! in the database so that a restart (or a copy of the file) keeps them.
//!
//! The store takes a manifest and files that the `bundle` crate has already
//! checked; what it checks itself is the slug, which names the tool's origin.
//!
//! Each tenant's values of a tool's install settings are kept per tenant and
//! tool, checked against the tool's declarations when set and pruned to
//! those that still fit whenever the tool is installed again; removing a
//! tool removes them. The values of secret settings are kept apart, one row
//! per key: the only function that reads them back is [`Store::tool_secrets`],
//! for the requests the server makes for the tool; everything else learns
//! only which are set ([`Store::tenant_secret_keys`]). With a secrets key,
//! they are sealed at rest (`crate::sealing`).

use std::collections::{BTreeMap, BTreeSet};

use toolbridge_protocol::Violation;
use toolbridge_protocol::live::{self, ToolSettingsEvent};
use toolbridge_protocol::manifest::{Permissions, SLUG_RULE, ToolManifest, ToolType, is_tool_slug};
use toolbridge_protocol::settings::{
    SecretChanges, SettingDeclaration, SettingValues, check_update, effective_values,
    retained_values, secret_is_retained,
};

use crate::db::{Turn, Tx, sql};
use crate::sealing::{Place, SecretsKey, open_text, seal_text};
use crate::util::{hex, now_iso, sha256};
use crate::{Error, Store};

/// A tool as installed.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct InstalledTool {
    /// The tool's slug: the first label of its origin.
    pub slug: String,
    /// Its manifest.
    pub manifest: ToolManifest,
    /// Whether the app offers it (a disabled tool is kept but not served).
    pub enabled: bool,
    /// SHA-256 over its files' paths and contents: equal for equal bundles.
    pub bundle_sha256: String,
    /// When it was installed (ISO 8601, UTC).
    pub installed_at: String,
    /// How many files its bundle holds.
    pub file_count: u32,
    /// Their bytes in all.
    pub total_bytes: u64,
}

/// One file of an installed tool.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ToolFile {
    /// The file's bytes.
    pub body: Vec<u8>,
    /// SHA-256 of `body`, as lower-case hex.
    pub sha256: String,
}

const TOOL_COLUMNS: &str = "t.slug, t.name, t.short_name, t.tool_type, t.version, \
    t.description, t.entry, t.setting_declarations, t.connect_origins, t.identity, t.enabled, \
    t.bundle_sha256, t.installed_at, \
    (SELECT COUNT(*) FROM tool_files f WHERE f.slug = t.slug) AS file_count, \
    (SELECT COALESCE(SUM(LENGTH(f.body)), 0) FROM tool_files f WHERE f.slug = t.slug) AS total_bytes";

/// A row of [`TOOL_COLUMNS`].
type ToolRow = (
    String,
    String,
    String,
    String,
    String,
    String,
    String,
    String,
    String,
    i64,
    i64,
    String,
    String,
    i64,
    i64,
);

impl Store {
    /// Installs a checked bundle as the tool `slug`, replacing the tool's
    /// manifest and every file if it is installed already (in one
    /// transaction: readers see the old tool or the new one, never a mix).
    /// Keeps an installed tool's enabled flag, each tenant's setting values
    /// that still fit the new declarations, and the secrets whose key is still
    /// declared secret (the others are dropped). Returns the tool it replaced.
    pub async fn install_tool(
        &self,
        slug: &str,
        manifest: &ToolManifest,
        files: &[(&str, &[u8])],
    ) -> Result<Option<InstalledTool>, Error> {
        if !is_tool_slug(slug) {
            return Err(Error::Invalid(vec![Violation::new(
                "slug",
                format!("{slug:?} must be {SLUG_RULE}"),
            )]));
        }
        let digest = bundle_digest(files);
        let mut tx = self.begin_write().await?;
        tx.take_turn(Turn::Tools).await?;
        let replaced: Option<ToolRow> = sql(format!(
            "SELECT {TOOL_COLUMNS} FROM tools t WHERE t.slug = $1"
        ))
        .bind(slug)
        .fetch_optional(&mut *tx)
        .await?;
        let replaced = replaced.map(tool_from_row).transpose()?;
        sql("DELETE FROM tool_files WHERE slug = $1")
            .bind(slug)
            .execute(&mut *tx)
            .await?;
        sql(
            "INSERT INTO tools (slug, name, short_name, tool_type, version, description, entry, \
             setting_declarations, connect_origins, identity, enabled, bundle_sha256, \
             installed_at) \
             VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, 1, $11, $12) \
             ON CONFLICT (slug) DO UPDATE SET name = excluded.name, \
             short_name = excluded.short_name, tool_type = excluded.tool_type, \
             version = excluded.version, description = excluded.description, \
             entry = excluded.entry, setting_declarations = excluded.setting_declarations, \
             connect_origins = excluded.connect_origins, identity = excluded.identity, \
             bundle_sha256 = excluded.bundle_sha256, installed_at = excluded.installed_at",
        )
        .bind(slug)
        .bind(&manifest.name)
        .bind(&manifest.short_name)
        .bind(manifest.tool_type.token())
        .bind(&manifest.version)
        .bind(&manifest.description)
        .bind(&manifest.entry)
        .bind(
            serde_json::to_string(&manifest.settings)
                .map_err(Error::encoding("setting declarations"))?,
        )
        .bind(
            serde_json::to_string(&manifest.permissions.connect)
                .map_err(Error::encoding("connect origins"))?,
        )
        .bind(manifest.permissions.identity)
        .bind(&digest)
        .bind(now_iso())
        .execute(&mut *tx)
        .await?;
        for (path, body) in files {
            sql("INSERT INTO tool_files (slug, path, sha256, body) VALUES ($1, $2, $3, $4)")
                .bind(slug)
                .bind(*path)
                .bind(hex(sha256(body)))
                .bind(*body)
                .execute(&mut *tx)
                .await?;
        }
        let stored: Vec<(String, String)> =
            sql("SELECT tenant_id, setting_values FROM tool_settings WHERE slug = $1")
                .bind(slug)
                .fetch_all(&mut *tx)
                .await?;
        for (tenant_id, text) in stored {
            let before = values_from_json(&text)?;
            let kept = retained_values(&manifest.settings, &before);
            if kept != before {
                write_values(&mut tx, &tenant_id, slug, &kept).await?;
            }
        }
        let secret_keys: Vec<(String,)> =
            sql("SELECT DISTINCT setting_key FROM tool_secrets WHERE slug = $1")
                .bind(slug)
                .fetch_all(&mut *tx)
                .await?;
        for (key,) in secret_keys {
            if !secret_is_retained(&manifest.settings, &key) {
                sql("DELETE FROM tool_secrets WHERE slug = $1 AND setting_key = $2")
                    .bind(slug)
                    .bind(&key)
                    .execute(&mut *tx)
                    .await?;
            }
        }
        tx.commit().await?;
        Ok(replaced)
    }

    /// The values each tool has stored for the tenant, by slug. Each value
    /// fits its tool's current declarations; what a tool sees is
    /// [`toolbridge_protocol::settings::effective_values`] of its
    /// declarations and these.
    pub async fn tenant_tool_settings(
        &self,
        tenant_id: &str,
    ) -> Result<BTreeMap<String, SettingValues>, Error> {
        let rows: Vec<(String, String)> = sql(
            "SELECT slug, setting_values FROM tool_settings WHERE tenant_id = $1 ORDER BY slug",
        )
        .bind(tenant_id)
        .fetch_all(&self.pool)
        .await?;
        rows.into_iter()
            .map(|(slug, text)| Ok((slug, values_from_json(&text)?)))
            .collect()
    }

    /// Sets the tenant's values of the tool `slug`'s settings: `values` is
    /// the complete JSON object, key to value (a key left out is unset and
    /// falls back to its default), except for secret settings, which a string
    /// sets or replaces, `null` or `""` clears, and leaving out keeps.
    /// Checked against the installed tool's declarations in the same
    /// transaction as the write. Returns the values the tool now sees (never
    /// a secret), or `None` when no tool `slug` is installed.
    ///
    /// # Errors
    ///
    /// [`Error::Invalid`] with every problem, each with its key as the path
    /// ([`toolbridge_protocol::settings::check_update`]); nothing is written
    /// then.
    pub async fn set_tool_settings(
        &self,
        tenant_id: &str,
        slug: &str,
        values: &serde_json::Value,
    ) -> Result<Option<SettingValues>, Error> {
        let mut tx = self.begin_write().await?;
        tx.take_turn(Turn::Tools).await?;
        let declarations: Option<String> =
            sql("SELECT setting_declarations FROM tools WHERE slug = $1")
                .bind(slug)
                .fetch_optional_scalar(&mut *tx)
                .await?;
        let Some(declarations) = declarations else {
            return Ok(None);
        };
        let declarations = declarations_from_json(&declarations)?;
        let already_set: Vec<(String,)> =
            sql("SELECT setting_key FROM tool_secrets WHERE tenant_id = $1 AND slug = $2")
                .bind(tenant_id)
                .bind(slug)
                .fetch_all(&mut *tx)
                .await?;
        let already_set: BTreeSet<String> = already_set.into_iter().map(|(key,)| key).collect();
        let update = check_update(&declarations, values, &already_set).map_err(Error::Invalid)?;
        let checked = update.values;
        write_values(&mut tx, tenant_id, slug, &checked).await?;
        write_secrets(
            &mut tx,
            self.secrets_key(),
            (tenant_id, slug),
            &update.secrets,
        )
        .await?;
        let settings = effective_values(&declarations, &checked);
        let event = ToolSettingsEvent {
            slug: slug.to_owned(),
            settings: settings.clone(),
        };
        let data = serde_json::to_string(&event)
            .map_err(|e| Error::corrupt_because("a settings event that does not serialize", e))?;
        tx.record_live(tenant_id, live::TOOL_SETTINGS, data).await?;
        tx.commit().await?;
        Ok(Some(settings))
    }

    /// The keys of the secret settings the tenant has set, by slug: which are
    /// set, never their values.
    pub async fn tenant_secret_keys(
        &self,
        tenant_id: &str,
    ) -> Result<BTreeMap<String, BTreeSet<String>>, Error> {
        let rows: Vec<(String, String)> = sql(
            "SELECT slug, setting_key FROM tool_secrets WHERE tenant_id = $1 \
             ORDER BY slug, setting_key",
        )
        .bind(tenant_id)
        .fetch_all(&self.pool)
        .await?;
        let mut keys: BTreeMap<String, BTreeSet<String>> = BTreeMap::new();
        for (slug, key) in rows {
            keys.entry(slug).or_default().insert(key);
        }
        Ok(keys)
    }

    /// The values of the tenant's secret settings of the tool `slug`, by key:
    /// for the server to put into the requests it makes for the tool, and for
    /// nothing else (no answer, no log).
    pub async fn tool_secrets(
        &self,
        tenant_id: &str,
        slug: &str,
    ) -> Result<BTreeMap<String, String>, Error> {
        let rows: Vec<(String, String, Option<String>)> =
            sql("SELECT setting_key, value, sealed_with FROM tool_secrets \
             WHERE tenant_id = $1 AND slug = $2")
            .bind(tenant_id)
            .bind(slug)
            .fetch_all(&self.pool)
            .await?;
        rows.into_iter()
            .map(|(key, stored, sealed_with)| {
                let place = secret_place(tenant_id, slug, &key);
                let value = open_text(
                    self.secrets_key(),
                    &Place::new(SECRETS_TABLE, SECRETS_COLUMN, &place),
                    stored,
                    sealed_with.as_deref(),
                )?;
                Ok((key, value))
            })
            .collect()
    }

    /// Every installed tool, by slug.
    pub async fn tools(&self) -> Result<Vec<InstalledTool>, Error> {
        let rows: Vec<ToolRow> = sql(format!(
            "SELECT {TOOL_COLUMNS} FROM tools t ORDER BY t.slug"
        ))
        .fetch_all(&self.pool)
        .await?;
        rows.into_iter().map(tool_from_row).collect()
    }

    /// The tool `slug`, if installed.
    pub async fn tool(&self, slug: &str) -> Result<Option<InstalledTool>, Error> {
        let row: Option<ToolRow> = sql(format!(
            "SELECT {TOOL_COLUMNS} FROM tools t WHERE t.slug = $1"
        ))
        .bind(slug)
        .fetch_optional(&self.pool)
        .await?;
        row.map(tool_from_row).transpose()
    }

    /// The file at `path` in the bundle of the tool `slug`.
    pub async fn tool_file(&self, slug: &str, path: &str) -> Result<Option<ToolFile>, Error> {
        let row: Option<(Vec<u8>, String)> =
            sql("SELECT body, sha256 FROM tool_files WHERE slug = $1 AND path = $2")
                .bind(slug)
                .bind(path)
                .fetch_optional(&self.pool)
                .await?;
        Ok(row.map(|(body, sha256)| ToolFile { body, sha256 }))
    }

    /// Removes the tool `slug`, its files and every tenant's values of its
    /// settings; whether it was installed. (In turn with installs and
    /// settings, so that a value being set meanwhile finds the tool gone
    /// rather than failing on it.)
    pub async fn remove_tool(&self, slug: &str) -> Result<bool, Error> {
        let mut tx = self.begin_write().await?;
        tx.take_turn(Turn::Tools).await?;
        let removed = sql("DELETE FROM tools WHERE slug = $1")
            .bind(slug)
            .execute(&mut *tx)
            .await?;
        tx.commit().await?;
        Ok(removed > 0)
    }

    /// Turns the tool `slug` on or off; whether it is installed.
    pub async fn set_tool_enabled(&self, slug: &str, enabled: bool) -> Result<bool, Error> {
        let changed = sql("UPDATE tools SET enabled = $1 WHERE slug = $2")
            .bind(enabled)
            .bind(slug)
            .execute(&self.pool)
            .await?;
        Ok(changed > 0)
    }
}

/// Stores `values` as the tenant's for the tool `slug`; no values, no row.
async fn write_values(
    tx: &mut Tx,
    tenant_id: &str,
    slug: &str,
    values: &SettingValues,
) -> Result<(), Error> {
    if values.is_empty() {
        sql("DELETE FROM tool_settings WHERE tenant_id = $1 AND slug = $2")
            .bind(tenant_id)
            .bind(slug)
            .execute(&mut *tx)
            .await?;
    } else {
        sql(
            "INSERT INTO tool_settings (tenant_id, slug, setting_values, updated_at) \
             VALUES ($1, $2, $3, $4) ON CONFLICT (tenant_id, slug) DO UPDATE SET \
             setting_values = excluded.setting_values, updated_at = excluded.updated_at",
        )
        .bind(tenant_id)
        .bind(slug)
        .bind(serde_json::to_string(values).map_err(Error::encoding("setting values"))?)
        .bind(now_iso())
        .execute(&mut *tx)
        .await?;
    }
    Ok(())
}

/// The table and column of a tool's secret settings, for sealing.
const SECRETS_TABLE: &str = "tool_secrets";
const SECRETS_COLUMN: &str = "value";

/// What identifies a secret setting's row: tenant, tool and key.
fn secret_place<'a>(tenant_id: &'a str, slug: &'a str, key: &'a str) -> [&'a str; 3] {
    [tenant_id, slug, key]
}

/// Sets, replaces or clears the tenant's secrets of the tool `slug`, sealed with `sealing` when
/// there is a key.
async fn write_secrets(
    tx: &mut Tx,
    sealing: Option<&SecretsKey>,
    (tenant_id, slug): (&str, &str),
    changes: &SecretChanges,
) -> Result<(), Error> {
    for (key, change) in changes {
        match change {
            Some(value) => {
                let place = secret_place(tenant_id, slug, key);
                let (stored, sealed_with) = seal_text(
                    sealing,
                    &Place::new(SECRETS_TABLE, SECRETS_COLUMN, &place),
                    value,
                )?;
                sql("INSERT INTO tool_secrets \
                     (tenant_id, slug, setting_key, value, sealed_with, updated_at) \
                     VALUES ($1, $2, $3, $4, $5, $6) ON CONFLICT (tenant_id, slug, setting_key) \
                     DO UPDATE SET value = excluded.value, sealed_with = excluded.sealed_with, \
                     updated_at = excluded.updated_at")
                .bind(tenant_id)
                .bind(slug)
                .bind(key)
                .bind(stored)
                .bind(sealed_with)
                .bind(now_iso())
                .execute(&mut *tx)
                .await?;
            }
            None => {
                sql(
                    "DELETE FROM tool_secrets WHERE tenant_id = $1 AND slug = $2 \
                     AND setting_key = $3",
                )
                .bind(tenant_id)
                .bind(slug)
                .bind(key)
                .execute(&mut *tx)
                .await?;
            }
        }
    }
    Ok(())
}

fn values_from_json(text: &str) -> Result<SettingValues, Error> {
    serde_json::from_str(text).map_err(|error| Error::corrupt_because("setting values", error))
}

fn declarations_from_json(text: &str) -> Result<Vec<SettingDeclaration>, Error> {
    serde_json::from_str(text)
        .map_err(|error| Error::corrupt_because("setting declarations", error))
}

fn tool_from_row(row: ToolRow) -> Result<InstalledTool, Error> {
    let (
        slug,
        name,
        short_name,
        tool_type,
        version,
        description,
        entry,
        settings,
        connect,
        identity,
        enabled,
        bundle_sha256,
        installed_at,
        file_count,
        total_bytes,
    ) = row;
    Ok(InstalledTool {
        slug,
        manifest: ToolManifest {
            name,
            short_name,
            tool_type: ToolType::from_token(&tool_type)
                .ok_or_else(|| Error::corrupt(format!("tool type {tool_type:?}")))?,
            version,
            description,
            entry,
            settings: declarations_from_json(&settings)?,
            permissions: Permissions {
                connect: serde_json::from_str(&connect)
                    .map_err(|error| Error::corrupt_because("connect origins", error))?,
                identity: identity != 0,
            },
        },
        enabled: enabled != 0,
        bundle_sha256,
        installed_at,
        file_count: u32::try_from(file_count)
            .map_err(|error| Error::corrupt_because(format!("file count {file_count}"), error))?,
        total_bytes: u64::try_from(total_bytes)
            .map_err(|error| Error::corrupt_because(format!("byte count {total_bytes}"), error))?,
    })
}

/// SHA-256 over each file's path and contents, in path order, each part
/// length-prefixed so that no two different bundles share a digest.
fn bundle_digest(files: &[(&str, &[u8])]) -> String {
    let mut sorted: Vec<&(&str, &[u8])> = files.iter().collect();
    sorted.sort_by_key(|(path, _)| *path);
    let mut framed = Vec::new();
    for (path, body) in sorted {
        framed.extend_from_slice(&(path.len() as u64).to_le_bytes());
        framed.extend_from_slice(path.as_bytes());
        framed.extend_from_slice(&(body.len() as u64).to_le_bytes());
        framed.extend_from_slice(&sha256(body));
    }
    hex(sha256(&framed))
}
