//! The whole product in a real browser: `cargo xtask test` starts a fresh `toolbridge serve`
//! (the reference app, the host module, the example tools at their own origins) and a browser's
//! driver (chromedriver, then geckodriver, then WebKitWebDriver on an Xvfb display), then runs
//! these suites against them. Screenshots go to the folder it names.

// Test code: a panic is how a helper reports a failed expectation.
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

mod accessibility;
mod browser;
mod catalog_text;
mod context;
mod dev_tools;
mod docs;
mod extensions;
mod hostile_tool;
mod install_settings;
mod mobile;
mod offline;
mod quick_quote;
mod quote_editor;
mod settings;
mod signin;
mod supplier;
mod tour;
mod webhooks;
