//! What a readiness check asks of the store: whether the database answers, whether its schema has
//! every migration this build knows, and (on `PostgreSQL`) whether this instance's live-event
//! listener is connected.

use std::fmt;

use crate::db::{Pool, sql};
use crate::{Error, Store, migrations};

/// Where a database's schema stands against the migrations this build knows
/// ([`Store::migration_status`]).
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct MigrationStatus {
    /// How many migrations this build knows.
    pub known: usize,
    /// Versions this build knows that the database has not applied.
    pub missing: Vec<i64>,
    /// Versions applied from a text other than this build's (their checksums differ).
    pub changed: Vec<i64>,
    /// Versions whose run failed partway (sqlx records them as not successful).
    pub failed: Vec<i64>,
    /// Versions the database has applied that this build does not know: a newer build migrated
    /// it. This alone does not make the schema unfit: during a rolling upgrade the first new
    /// instance migrates while the old ones still serve, and taking every old one out of the
    /// balancer at that moment would leave nothing serving.
    pub newer: Vec<i64>,
}

impl MigrationStatus {
    /// Whether every migration this build knows has been applied, as this build has it.
    pub fn is_current(&self) -> bool {
        self.missing.is_empty() && self.changed.is_empty() && self.failed.is_empty()
    }
}

impl fmt::Display for MigrationStatus {
    /// `all 6 applied`, or what is wrong: `not applied: 5, 6; failed: 4`.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let list = |versions: &[i64]| {
            versions
                .iter()
                .map(i64::to_string)
                .collect::<Vec<_>>()
                .join(", ")
        };
        let mut parts = Vec::new();
        for (versions, what) in [
            (&self.missing, "not applied"),
            (&self.changed, "applied from another text than this build's"),
            (&self.failed, "failed partway"),
        ] {
            if !versions.is_empty() {
                parts.push(format!("{what}: {}", list(versions)));
            }
        }
        if parts.is_empty() {
            write!(f, "all {} applied", self.known)?;
        } else {
            f.write_str(&parts.join("; "))?;
        }
        if !self.newer.is_empty() {
            write!(f, " (and newer ones: {})", list(&self.newer))?;
        }
        Ok(())
    }
}

/// Where this instance's live-event listener stands ([`Store::live_listener`]).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum LiveListener {
    /// `SQLite`: the store's own writes are all there is to hear; there is no listener.
    NotUsed,
    /// `PostgreSQL`, and nothing has started it yet ([`Store::listen`], [`Store::live`]).
    NotStarted,
    /// `PostgreSQL`, listening on a connection now.
    Connected,
    /// `PostgreSQL`, started but without a connection now: it lost it, or has not made its first
    /// one, and is trying again. Events committed meanwhile are missed (the pages hear `resync`).
    Disconnected,
}

impl LiveListener {
    /// Whether live events of other instances reach this one now (`true` on `SQLite`, where
    /// there are no others).
    pub fn is_ready(self) -> bool {
        matches!(self, LiveListener::NotUsed | LiveListener::Connected)
    }
}

impl fmt::Display for LiveListener {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            LiveListener::NotUsed => "not used (SQLite)",
            LiveListener::NotStarted => "not started",
            LiveListener::Connected => "connected",
            LiveListener::Disconnected => "not connected; trying again",
        })
    }
}

impl Store {
    /// Whether the database answers a trivial query (`SELECT 1`, as a `BIGINT`) on a connection of the pool.
    ///
    /// # Errors
    ///
    /// What the database or the pool said: no connection to be had (the pool is closed, or its
    /// wait for a connection timed out), or the query failed.
    pub async fn ping(&self) -> Result<(), Error> {
        let _: i64 = sql("SELECT CAST(1 AS BIGINT)")
            .fetch_scalar(&self.pool)
            .await?;
        Ok(())
    }

    /// The migrations the database has applied (sqlx's `_sqlx_migrations`) against those this
    /// build knows: which are missing, applied from another text, failed, or newer than this
    /// build.
    ///
    /// # Errors
    ///
    /// When the table cannot be read (the database does not answer, or was never migrated).
    pub async fn migration_status(&self) -> Result<MigrationStatus, Error> {
        let known = migrations::migrator(self.pool.backend()).await?;
        let applied: Vec<(i64, Vec<u8>, bool)> =
            sql("SELECT version, checksum, success FROM _sqlx_migrations ORDER BY version")
                .fetch_all(&self.pool)
                .await?;
        let mut status = MigrationStatus {
            known: known.iter().count(),
            ..MigrationStatus::default()
        };
        for migration in known.iter() {
            match applied
                .iter()
                .find(|(version, _, _)| *version == migration.version)
            {
                None => status.missing.push(migration.version),
                Some((version, _, false)) => status.failed.push(*version),
                Some((version, checksum, true)) => {
                    if checksum.as_slice() != &*migration.checksum {
                        status.changed.push(*version);
                    }
                }
            }
        }
        status.newer = applied
            .iter()
            .map(|(version, _, _)| *version)
            .filter(|version| !known.iter().any(|m| m.version == *version))
            .collect();
        Ok(status)
    }

    /// Where this instance's live-event listener stands: on `PostgreSQL` whether it is
    /// connected now; [`LiveListener::NotUsed`] on `SQLite`.
    pub fn live_listener(&self) -> LiveListener {
        match &self.pool {
            Pool::Sqlite(_) => LiveListener::NotUsed,
            Pool::Postgres(_) => self.live.listener_state(),
        }
    }
}
