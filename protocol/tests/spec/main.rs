//! Every rule of SPEC.md and DESIGN.md §3-§4 that the protocol crate owns,
//! one test per rule, named after it.

// Test code: a panic is how a helper reports a failed expectation.
#![allow(
    clippy::unwrap_used,
    clippy::expect_used,
    clippy::panic,
    clippy::needless_pass_by_value
)]

mod add_lines;
mod create_quote;
mod edit;
mod fixtures;
mod index_json;
mod json_roundtrip;
mod merge;
mod money;
mod paging;
mod properties;
mod quote_view;
mod wire;
