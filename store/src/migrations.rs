//! Each backend's migrations, embedded in the binary as sqlx's `migrate!` would embed them: the
//! version and description from the file name, the migration's SQL and its checksum. So a database
//! migrated by either one agrees with the other.
//!
//! They are listed here rather than by the macro because the macro is a proc-macro crate that
//! builds sqlx and a second bundled SQLite for the compiler: a fresh release build of the server
//! had 336 units to build with it and has 224 without. A test checks that each list matches its
//! directory and what the macro gives.
//!
//! `SQLite`'s are in `migrations/sqlite/`, unchanged since they were written (a file that changes
//! no longer matches the checksum databases keep, and they would refuse to open); `PostgreSQL`'s
//! in `migrations/postgres/`, starting from the schema `SQLite` had when `PostgreSQL` came.

use std::borrow::Cow;
use std::future::Future;
use std::pin::Pin;

use sqlx::error::BoxDynError;
use sqlx::migrate::{Migration, MigrationSource, MigrationType, Migrator};

use crate::Error;
use crate::db::Backend;

/// A migration's file name and its SQL.
type File = (&'static str, &'static str);

/// Every `SQLite` migration: its file name in `migrations/sqlite/` and its SQL, oldest first.
const SQLITE: [File; 11] = [
    (
        "0001_init.sql",
        include_str!("../migrations/sqlite/0001_init.sql"),
    ),
    (
        "0002_catalog_version.sql",
        include_str!("../migrations/sqlite/0002_catalog_version.sql"),
    ),
    (
        "0003_tools.sql",
        include_str!("../migrations/sqlite/0003_tools.sql"),
    ),
    (
        "0004_tool_settings.sql",
        include_str!("../migrations/sqlite/0004_tool_settings.sql"),
    ),
    (
        "0005_shared_state.sql",
        include_str!("../migrations/sqlite/0005_shared_state.sql"),
    ),
    (
        "0006_webhooks.sql",
        include_str!("../migrations/sqlite/0006_webhooks.sql"),
    ),
    (
        "0007_signing_keys.sql",
        include_str!("../migrations/sqlite/0007_signing_keys.sql"),
    ),
    (
        "0008_preferences.sql",
        include_str!("../migrations/sqlite/0008_preferences.sql"),
    ),
    (
        "0009_tool_secrets.sql",
        include_str!("../migrations/sqlite/0009_tool_secrets.sql"),
    ),
    (
        "0010_quote_versions.sql",
        include_str!("../migrations/sqlite/0010_quote_versions.sql"),
    ),
    (
        "0011_sealed_secrets.sql",
        include_str!("../migrations/sqlite/0011_sealed_secrets.sql"),
    ),
];

/// Every `PostgreSQL` migration: its file name in `migrations/postgres/` and its SQL, oldest
/// first.
const POSTGRES: [File; 8] = [
    (
        "0001_init.sql",
        include_str!("../migrations/postgres/0001_init.sql"),
    ),
    (
        "0002_shared_state.sql",
        include_str!("../migrations/postgres/0002_shared_state.sql"),
    ),
    (
        "0003_webhooks.sql",
        include_str!("../migrations/postgres/0003_webhooks.sql"),
    ),
    (
        "0004_signing_keys.sql",
        include_str!("../migrations/postgres/0004_signing_keys.sql"),
    ),
    (
        "0005_preferences.sql",
        include_str!("../migrations/postgres/0005_preferences.sql"),
    ),
    (
        "0006_tool_secrets.sql",
        include_str!("../migrations/postgres/0006_tool_secrets.sql"),
    ),
    (
        "0007_quote_versions.sql",
        include_str!("../migrations/postgres/0007_quote_versions.sql"),
    ),
    (
        "0008_sealed_secrets.sql",
        include_str!("../migrations/postgres/0008_sealed_secrets.sql"),
    ),
];

/// The migrations of `backend`.
fn files(backend: Backend) -> &'static [File] {
    match backend {
        Backend::Sqlite => &SQLITE,
        Backend::Postgres => &POSTGRES,
    }
}

/// What brings a database of `backend` up to the schema of this build.
pub(crate) async fn migrator(backend: Backend) -> Result<Migrator, Error> {
    Ok(Migrator::new(Embedded(files(backend))).await?)
}

/// Migrations listed in the binary, as a source sqlx's migrator reads.
#[derive(Debug)]
struct Embedded(&'static [File]);

impl MigrationSource<'static> for Embedded {
    fn resolve(
        self,
    ) -> Pin<Box<dyn Future<Output = Result<Vec<Migration>, BoxDynError>> + Send + 'static>> {
        Box::pin(async move {
            self.0
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

    /// Each backend, and its directory of migrations.
    const DIRECTORIES: [(Backend, &str); 2] = [
        (Backend::Sqlite, "migrations/sqlite"),
        (Backend::Postgres, "migrations/postgres"),
    ];

    #[test]
    fn every_file_in_each_migrations_directory_is_listed_with_its_text() {
        for (backend, directory) in DIRECTORIES {
            let dir = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join(directory);
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
            let listed: Vec<(String, String)> = files(backend)
                .iter()
                .map(|&(name, sql)| (name.to_owned(), sql.to_owned()))
                .collect();
            assert_eq!(
                listed, on_disk,
                "store/src/migrations.rs must list every file of store/{directory}, in order"
            );
        }
    }

    fn summary(migrator: &Migrator) -> Vec<(i64, String, MigrationType, String, Vec<u8>, bool)> {
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
    }

    #[tokio::test]
    async fn the_migrations_are_those_sqlx_migrate_would_embed() {
        let sqlite = migrator(Backend::Sqlite).await.expect("they resolve");
        assert_eq!(
            summary(&sqlite),
            summary(&sqlx::migrate!("./migrations/sqlite"))
        );
        let postgres = migrator(Backend::Postgres).await.expect("they resolve");
        assert_eq!(
            summary(&postgres),
            summary(&sqlx::migrate!("./migrations/postgres"))
        );
    }

    #[tokio::test]
    async fn the_sqlite_migrations_keep_the_checksums_databases_hold() {
        // SHA-384 of each file as first released: a database that ran a migration keeps its
        // checksum and refuses to open if the file no longer matches.
        let sqlite = migrator(Backend::Sqlite).await.expect("they resolve");
        let checksums: Vec<String> = sqlite
            .iter()
            .map(|m| {
                m.checksum.iter().fold(String::new(), |mut hex, byte| {
                    use std::fmt::Write as _;
                    let _ = write!(hex, "{byte:02x}");
                    hex
                })
            })
            .collect();
        assert_eq!(checksums, RELEASED_SQLITE_CHECKSUMS);
    }

    /// SHA-384 of each `SQLite` migration as released.
    const RELEASED_SQLITE_CHECKSUMS: [&str; 11] = [
        "3c9f01828b014da45b88a2ca60fd002d1671eeff60ba3b026bb8d149eec4f3d87a363161a68ea50451d070f11e50cf74",
        "3a1c74f44567b7f21403309a4274679632f270e9d33ff56d524bb0f29c38af1013538abdb78fd1206dabb63600146e57",
        "ecac023d5580f688757cb7b891170f9ebb48cb878ad47de70d9757c3960846135dceec9db0fa8ab43e287bf9b1070cb5",
        "e410b22a8e5a07b7f288a6d36a0b9c7ea2d5d3917db72aad458133b0098296c26d2c4da26e2e39830cc87f8b6e506537",
        "565c6f15c57bc7e423eaeaf86c187d3e5fa2e563e00afd0ce6533199adc18a8e8cd4bebeec8a9cf9e2a959007d556f23",
        "4c52bb87b88c6e51bdfe99b7da9321f70852c376187306d81d687d1fb328eb2e5fa8fb71bb0be7b9187410d7aa8a5ed8",
        "5a789fea59ef509e73796224f29099387262a8d45a30bcce428affc6ccb3cac578aea00db57145419a298d3fedd8726d",
        "74b4d1739b794c679514975f1fc8d918ef4ab3a0056454e492212475247e610a6253e8d7b2566201ce0a6361f96057df",
        "5f06e5bd8c46392ff48bfb2abd3da805781094cd8791c43d3f1b8fba6668d10b18fba4a5185e1c66dfbc113f11ab0c6c",
        "68ce79fb596a9e8f38fe408564a43ebd9c8d77f1db80a022eee6c7c71499658ab2feea1f3cda280ae116c216faeb3c4a",
        "acab86ce82d6c319c2ca337a70af923cbbe4ccba867846e3529fd4e2ec58bcaee5bb72a3eedbe3fa59a37aee101c558c",
    ];

    #[test]
    fn a_badly_named_file_is_refused_with_its_name() {
        let error = migration("init.sql", "").expect_err("no version");
        assert!(error.to_string().contains("\"init.sql\""), "{error}");
        let error = migration("one_init.sql", "").expect_err("not a number");
        assert!(error.to_string().contains("whole number"), "{error}");
    }
}
