//! The store against real `SQLite` files: one fresh temporary database per
//! test.

// Test code: a failed unwrap is a failed test.
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

mod auth;
mod catalog;
mod common;
mod quotes;
mod reads;
mod seed;
mod tools;
