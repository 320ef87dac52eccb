//! The store against real databases, each test on both backends: a fresh temporary `SQLite`
//! file, and a fresh database of a throwaway `PostgreSQL` cluster (`toolbridge-test-postgres`).

// Test code: a failed unwrap is a failed test.
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

/// Runs `async fn name(backend: Backend)` on each backend, as the tests `name::sqlite` and
/// `name::postgres`.
macro_rules! on_both {
    ($name:ident) => {
        mod $name {
            #[tokio::test]
            async fn sqlite() {
                super::$name(crate::common::Backend::Sqlite).await;
            }

            #[tokio::test]
            async fn postgres() {
                super::$name(crate::common::Backend::Postgres).await;
            }
        }
    };
}

mod accounts;
mod auth;
mod catalog;
mod common;
mod concurrency;
mod health;
mod limits;
mod live;
mod preferences;
mod quotes;
mod reads;
mod sealing;
mod seed;
mod signing;
mod stats;
mod tools;
mod versions;
mod webhooks;
