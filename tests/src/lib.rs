//! What the suites that run the real programs start and stop around themselves: a `toolbridge`
//! server on a free port with a fresh database ([`server`]), a browser's `WebDriver` server
//! ([`webdriver`]), the fault-injecting server the host's browser tests and bench talk to
//! ([`fault_server`]), a webhook receiver that records and verifies what it gets
//! ([`webhook_receiver`]), and the tool the README teaches, written out as folders
//! ([`readme_example`]).
//!
//! The `with-backends` binary starts what one suite needs, runs the suite's command with their
//! addresses in its environment, and stops them when it ends; `cargo xtask test` runs the
//! browser suites through it.

mod background;
pub mod error;
pub mod fault_server;
pub mod host_backends;
pub mod readme_example;
pub mod schemathesis;
pub mod server;
pub mod webdriver;
pub mod webhook_receiver;

pub use error::Error;
