//! The server binary under stress, as an operator runs it: `cargo xtask test` builds the release
//! `toolbridge` and names it in `TOOLBRIDGE_BIN`, with a folder for databases and logs in
//! `TOOLBRIDGE_RELIABILITY_DIR`. Each suite starts its own servers on a fresh database (a
//! `SQLite` file, or a database of a throwaway `PostgreSQL` cluster the test process starts under
//! `target/postgres/`), and prints its figures as it goes.
//!
//! - `load`: 16 clients for a minute, with rate limits, idempotent repeats and a faulty client;
//!   the quote counts, every key's windows and the server's memory afterwards.
//! - `crash`: the server killed with SIGKILL while clients create quotes, three times; every
//!   quote answered 201 is still there, whole, and a `SQLite` file passes
//!   `PRAGMA integrity_check`. On each backend.
//! - `cluster`: two servers on one `PostgreSQL` database behave as one (rate limits, the sign-in
//!   throttle, live events, idempotency, one of them killed, seeding, each webhook delivered
//!   once).
//! - `one_binary`: the binary copied alone into an empty folder serves the app, the SDK and the
//!   host module it carries, and gives a demo database the example tools it carries.
//! - `proxied`: the example deployment (`deploy/nginx.conf` with TLS in front of two servers on
//!   `PostgreSQL`), in Chromium trusting the suite's own CA: https origins only, a tool's
//!   handshake, live events across instances, and SIGTERM to one instance under load with
//!   nothing lost.
//! - `webhooks`: a delivery cut off by SIGKILL is sent again after a restart, with the same event
//!   id (run with `crash`: its tests are `webhooks::crash::`). On each backend.

// Test code: a panic is how a helper reports a failed expectation.
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

mod client;
mod cluster;
mod crash;
mod db;
mod load;
mod one_binary;
mod page;
mod proxied;
mod server;
mod stats;
mod webhooks;
