//! The rules of toolbridge, shared by the host module and the server.
//!
//! Everything SPEC.md states and DESIGN.md decides about requests lives here
//! once, as plain Rust with no browser or server dependencies:
//!
//! - the DTOs of both surfaces, with SPEC.md's JSON field names
//!   ([`context`], [`customer`], [`job`], [`catalog`], [`quote`],
//!   [`add_lines`], [`create_quote`], [`paging`], [`manifest`]);
//! - a tool's install settings and outside origins: their declarations in
//!   the manifest, the values a tenant sets and the values a tool reads
//!   ([`settings`], [`manifest::read_permissions`]);
//! - the wire protocol between a tool page and its host ([`handshake`],
//!   [`rpc`], [`method`], and the SDK's reports of what a frame refused,
//!   [`blocked`]) and its errors ([`error`], [`problem`]);
//! - the extensions beyond bridge 2.1.0: what a host offers a tool
//!   ([`capability`]), the notifications both ways on the private port
//!   ([`notification`]), the `ui.*` requests and their limits ([`ui`]), and
//!   the open quote as a tool reads it ([`quote_view`]), and the identity
//!   token a tool asks for to show its own server who the user is
//!   ([`identity`]), and the requests the server makes for a tool with the
//!   tenant's secret settings in them ([`fetch`], [`placeholders`]), and
//!   whether the server can be reached from the browser ([`connectivity`]);
//! - validation that reports every violation with its path
//!   ([`add_lines::validate_batch`], [`create_quote::validate_bridge_create`],
//!   [`create_quote::validate_rest_create`], [`paging::read_list_request`]);
//! - the quote open in the editor and the all-or-nothing merge of
//!   `quotes.addLines` batches into it ([`open_quote`]);
//! - the live updates the app's pages hear ([`live`]), and the events pushed to
//!   integrators' webhook endpoints ([`webhooks`]);
//! - the versions of a quote: the `ETag` that names one and what an
//!   `If-Match` asks of it ([`versions`]);
//! - decimal money ([`money`], [`tax`]) and every limit ([`limits`]);
//! - text from outside made safe to print ([`text`]).

#![deny(missing_docs)]

pub mod add_lines;
pub mod blocked;
pub mod capability;
pub mod catalog;
pub mod connectivity;
pub mod context;
pub mod create_quote;
pub mod customer;
pub mod error;
pub mod error_reference;
pub mod fetch;
mod flatten;
pub mod handshake;
mod id_index;
pub mod identity;
mod input;
pub mod job;
pub mod limits;
pub mod live;
pub mod manifest;
pub mod method;
pub mod money;
pub mod notification;
pub mod open_quote;
pub mod paging;
pub mod placeholders;
pub mod problem;
pub mod quote;
pub mod quote_header;
pub mod quote_view;
pub mod rpc;
pub mod settings;
pub mod tax;
pub mod text;
pub mod ui;
pub mod versions;
pub mod webhooks;

pub use error::{Error, ErrorCode, Violation};
pub use input::kind as value_kind;
pub use rust_decimal::Decimal;
