//! The server binary under stress, as an operator runs it: `cargo xtask test` builds the release
//! `toolbridge` and names it in `TOOLBRIDGE_BIN`, with a folder for databases and logs in
//! `TOOLBRIDGE_RELIABILITY_DIR`. Each suite starts its own server on a fresh database file, and
//! prints its figures as it goes.
//!
//! - `load`: 16 clients for a minute, with rate limits, idempotent repeats and a faulty client;
//!   the quote counts, every key's windows and the server's memory afterwards.
//! - `crash`: the server killed with SIGKILL while clients create quotes, three times; every
//!   quote answered 201 is still there, whole, and the file passes `PRAGMA integrity_check`.

// Test code: a panic is how a helper reports a failed expectation.
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

mod client;
mod crash;
mod db;
mod load;
mod server;
mod stats;
