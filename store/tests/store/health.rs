//! What readiness asks of the store: the database answers, its migrations are those of this
//! build, and on PostgreSQL the live-event listener is connected.

use toolbridge_store::{LiveListener, MigrationStatus};

use crate::common::{Backend, empty, raw};

on_both!(a_new_database_answers_and_has_every_migration);
async fn a_new_database_answers_and_has_every_migration(backend: Backend) {
    let (store, _db) = empty(backend).await;
    store.ping().await.unwrap();
    let status = store.migration_status().await.unwrap();
    assert!(status.is_current(), "{status:?}");
    let known = match backend {
        Backend::Sqlite => 11,
        Backend::Postgres => 8,
    };
    assert_eq!(
        status,
        MigrationStatus {
            known,
            ..MigrationStatus::default()
        }
    );
    assert_eq!(status.to_string(), format!("all {known} applied"));
}

on_both!(missing_changed_failed_and_newer_migrations_are_told_apart);
async fn missing_changed_failed_and_newer_migrations_are_told_apart(backend: Backend) {
    let (store, db) = empty(backend).await;
    let raw = raw(&db).await;
    let last: i64 = raw
        .fetch_scalar("SELECT MAX(version) FROM _sqlx_migrations")
        .await;
    // A newer build's migration is no obstacle on its own.
    raw.execute(
        "INSERT INTO _sqlx_migrations (version, description, success, checksum, execution_time) \
         SELECT 99999, 'from a newer build', success, checksum, 0 FROM _sqlx_migrations \
         WHERE version = 1",
    )
    .await;
    let status = store.migration_status().await.unwrap();
    assert!(status.is_current(), "{status:?}");
    assert_eq!(status.newer, [99_999]);
    // The first applied from another text, the second failed partway, the last not applied.
    raw.execute(
        "UPDATE _sqlx_migrations SET checksum = \
         (SELECT checksum FROM _sqlx_migrations WHERE version = 2) \
         WHERE version = 1",
    )
    .await;
    raw.execute("UPDATE _sqlx_migrations SET success = false WHERE version = 2")
        .await;
    raw.execute(&format!(
        "DELETE FROM _sqlx_migrations WHERE version = {last}"
    ))
    .await;
    let status = store.migration_status().await.unwrap();
    assert!(!status.is_current());
    assert_eq!(
        (
            status.missing.as_slice(),
            status.changed.as_slice(),
            status.failed.as_slice()
        ),
        (&[last][..], &[1][..], &[2][..])
    );
    assert_eq!(
        status.to_string(),
        format!(
            "not applied: {last}; applied from another text than this build's: 1; \
             failed partway: 2 (and newer ones: 99999)"
        )
    );
}

on_both!(a_closed_store_does_not_answer);
async fn a_closed_store_does_not_answer(backend: Backend) {
    let (store, _db) = empty(backend).await;
    store.close().await;
    assert!(store.ping().await.is_err());
    assert!(store.migration_status().await.is_err());
}

on_both!(the_live_listener_is_connected_once_listening_on_postgres_only);
async fn the_live_listener_is_connected_once_listening_on_postgres_only(backend: Backend) {
    let (store, _db) = empty(backend).await;
    match backend {
        Backend::Sqlite => {
            assert_eq!(store.live_listener(), LiveListener::NotUsed);
            store.listen().await.unwrap();
            assert_eq!(store.live_listener(), LiveListener::NotUsed);
            assert!(store.live_listener().is_ready());
        }
        Backend::Postgres => {
            assert_eq!(store.live_listener(), LiveListener::NotStarted);
            assert!(!store.live_listener().is_ready());
            store.listen().await.unwrap();
            assert_eq!(store.live_listener(), LiveListener::Connected);
            assert!(store.live_listener().is_ready());
        }
    }
}
