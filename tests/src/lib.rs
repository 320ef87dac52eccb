//! What the suites that run the real programs start and stop around themselves: a `toolbridge`
//! server on a free port with a fresh database ([`server`]), a browser's `WebDriver` server
//! ([`webdriver`]), the fault-injecting server the host's browser tests and bench talk to
//! ([`fault_server`]), a webhook receiver that records and verifies what it gets
//! ([`webhook_receiver`]), the book's code blocks and what each says about running it
//! ([`book`]), the first tool the book teaches, written out as folders ([`first_tool`]), and a
//! certificate authority made for the run ([`tls`]), and the virtual display a browser with no
//! headless mode draws on ([`xvfb`]).
//!
//! The `with-backends` binary starts what one suite needs, runs the suite's command with their
//! addresses in its environment, and stops them when it ends; `cargo xtask test` runs the
//! browser suites through it.

mod background;
pub mod book;
pub mod error;
pub mod fault_server;
pub mod first_tool;
pub mod host_backends;
pub mod schemathesis;
pub mod server;
pub mod tls;
pub mod webdriver;
pub mod webhook_receiver;
pub mod xvfb;

pub use error::Error;
