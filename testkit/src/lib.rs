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
//! - [`MemoryBackend`] answers requests ([`Request`] → [`Response`]);
//! - in wasm32 builds, `MemoryBackend` is exported to JavaScript as a class
//!   whose `fetch(request)` answers a `Request` with a `Response`, which is
//!   what `new Host({apiBase, backend})` takes.
//!
//! `testkit/tests/parity.rs` sends the same requests here and to the real
//! server and compares the answers.

#![deny(missing_docs)]

mod backend;
mod error;
mod fixtures;
mod ids;
#[cfg(target_arch = "wasm32")]
mod wasm;

pub use backend::{Answered, MemoryBackend, Request, Response};
pub use error::Error;
