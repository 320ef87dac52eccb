//! The tool author's test kit: an in-memory backend for the host module.
//!
//! A tool's tests run the real host module (`host/`) in a page, with its
//! `backend` option set to this backend instead of the platform's REST API.
//! The backend holds a tenant's data from fixtures (the signed-in user,
//! customers, products with task sequences, task templates, cost items, jobs
//! and quotes) and answers every request the host makes — `GET /me`, the
//! catalog index with its `ETag`, the paged lists, creating, reading, saving
//! and sending quotes — with the same status codes, bodies and problem
//! details as the server, because the rules come from `toolbridge-protocol`:
//! paging, `quotes.create` validation, the lines a new quote gets, the merge
//! the editor saves, the error codes.
//!
//! - `fixtures` reads and checks the fixtures, every problem with its path
//!   (`products[2].sellPrice`);
//! - [`MemoryBackend`] answers requests ([`Request`] → [`Response`]), identity
//!   tokens too (`POST /tools/{slug}/token`, signed ES256 by a key each backend
//!   makes, published as a JWKS by [`MemoryBackend::jwks`], on a clock a test
//!   may set), and the server's fetch (`POST /tools/{slug}/fetch`): checked and
//!   its placeholders replaced with the fixtures' secret settings as the server
//!   does, then handed to the test's handler ([`MemoryBackend::start`],
//!   [`Outgoing`], [`Upstream`], [`MemoryBackend::finish`]);
//! - in wasm32 builds, `MemoryBackend` is exported to JavaScript as a class
//!   whose `fetch(request)` answers a `Request` with a `Response`, which is
//!   what `new Host({apiBase, backend})` takes, and whose `onFetch(handler)`
//!   registers the JavaScript handler of the server's fetch.
//!
//! `testkit/tests/parity.rs` sends the same requests here and to the real
//! server and compares the answers.

#![deny(missing_docs)]

mod backend;
mod error;
mod fixtures;
mod identity;
mod ids;
#[cfg(target_arch = "wasm32")]
mod wasm;

pub use backend::{
    Answered, DEFAULT_PAGE_ORIGIN, MemoryBackend, Outgoing, PendingFetch, Request, Response,
    Started, Upstream,
};
pub use error::Error;
