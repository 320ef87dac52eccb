//! The REST API over real HTTP: the server on an ephemeral port, a fresh
//! SQLite file per test, and an HTTP client.

// Test code: a panic is how a helper reports a failed expectation.
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

mod harness;
mod serving;

mod auth;
mod body_limit;
mod cli;
mod compression;
mod deliveries;
mod docs;
mod fetch;
mod health;
mod identity;
mod live;
mod openapi;
mod operations;
mod preferences;
mod public_urls;
mod quotes;
mod rate_limits;
mod reads;
mod served_files;
mod settings;
mod shutdown;
mod tool_settings;
mod tools;
mod versions;
mod webhooks;
mod worker_drain;
mod writers;
