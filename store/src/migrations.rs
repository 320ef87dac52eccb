//! The schema's migrations, embedded in the binary as sqlx's `migrate!` would embed them: the
//! version and description from the file name, the migration's SQL and its checksum. So a database
//! migrated by either one agrees with the other.
//!
//! They are listed here rather than by the macro because the macro is a proc-macro crate that
//! builds sqlx and a second bundled SQLite for the compiler: a fresh release build of the server
//! had 336 units to build with it and has 224 without. A test checks that the list matches the
//! directory and what the macro gives.

use std::borrow::Cow;
use std::future::Future;
use std::pin::Pin;

use sqlx::error::BoxDynError;
use sqlx::migrate::{Migration, MigrationSource, MigrationType, Migrator};

use crate::Error;

/// Every migration: its file name in `migrations/` and its SQL, oldest first.
const FILES: [(&str, &str); 4] = [
    ("0001_init.sql", include_str!("../migrations/0001_init.sql")),
    (
        "0002_catalog_version.sql",
        include_str!("../migrations/0002_catalog_version.sql"),
    ),
    (
        "0003_tools.sql",
        include_str!("../migrations/0003_tools.sql"),
    ),
    (
        "0004_tool_settings.sql",
        include_str!("../migrations/0004_tool_settings.sql"),
    ),
];

/// What brings a database up to the schema of this build.
pub(crate) async fn migrator() -> Result<Migrator, Error> {
    Ok(Migrator::new(Embedded).await?)
}

/// The migrations of [`FILES`], as a source sqlx's migrator reads.
#[derive(Debug)]
struct Embedded;

impl MigrationSource<'static> for Embedded {
    fn resolve(
        self,
    ) -> Pin<Box<dyn Future<Output = Result<Vec<Migration>, BoxDynError>> + Send + 'static>> {
        Box::pin(async {
            FILES
                .iter()
                .map(|&(file_name, sql)| migration(file_name, sql))
                .collect()
        })
    }
}

/// One migration from its file name (`<version>_<description>.sql`) and its SQL, read the way
/// sqlx reads a migrations directory.
#[allow(clippy::case_sensitive_file_extension_comparisons)] // as sqlx compares it
fn migration(file_name: &str, sql: &'static str) -> Result<Migration, BoxDynError> {
    let (version, rest) = file_name
        .split_once('_')
        .filter(|(_, rest)| rest.ends_with(".sql"))
        .ok_or_else(|| format!("migration {file_name:?} is not named <version>_<name>.sql"))?;
    let version: i64 = version
        .parse()
        .map_err(|_| format!("migration {file_name:?} does not start with a whole number"))?;
    let migration_type = MigrationType::from_filename(rest);
    let description = rest
        .trim_end_matches(migration_type.suffix())
        .replace('_', " ");
    Ok(Migration::new(
        version,
        Cow::Owned(description),
        migration_type,
        Cow::Borrowed(sql),
        sql.starts_with("-- no-transaction"),
    ))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_file_in_the_migrations_directory_is_listed_with_its_text() {
        let dir = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("migrations");
        let mut on_disk: Vec<(String, String)> = std::fs::read_dir(&dir)
            .expect("the migrations directory is readable")
            .map(|entry| {
                let path = entry.expect("a readable entry").path();
                let name = path
                    .file_name()
                    .and_then(|name| name.to_str())
                    .expect("a UTF-8 file name")
                    .to_owned();
                let sql = std::fs::read_to_string(&path).expect("a readable migration");
                (name, sql)
            })
            .collect();
        on_disk.sort();
        let listed: Vec<(String, String)> = FILES
            .iter()
            .map(|&(name, sql)| (name.to_owned(), sql.to_owned()))
            .collect();
        assert_eq!(
            listed, on_disk,
            "store/src/migrations.rs must list every file of store/migrations, in order"
        );
    }

    #[tokio::test]
    async fn the_migrations_are_those_sqlx_migrate_would_embed() {
        let ours = migrator().await.expect("the embedded migrations resolve");
        let macros = sqlx::migrate!("./migrations");
        let summary = |migrator: &Migrator| -> Vec<_> {
            migrator
                .iter()
                .map(|m| {
                    (
                        m.version,
                        m.description.to_string(),
                        m.migration_type,
                        m.sql.to_string(),
                        m.checksum.to_vec(),
                        m.no_tx,
                    )
                })
                .collect()
        };
        assert_eq!(summary(&ours), summary(&macros));
    }

    #[test]
    fn a_badly_named_file_is_refused_with_its_name() {
        let error = migration("init.sql", "").expect_err("no version");
        assert!(error.to_string().contains("\"init.sql\""), "{error}");
        let error = migration("one_init.sql", "").expect_err("not a number");
        assert!(error.to_string().contains("whole number"), "{error}");
    }
}
