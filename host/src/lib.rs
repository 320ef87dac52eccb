//! The toolbridge host module: the parent-page half of the bridge.
//!
//! Built with wasm-bindgen as an ES module for the page that embeds tools.
//! The page creates one [`Host`] for its REST API, mounts each tool with
//! [`Host::mount`] (the tool's slug, registered origin and manifest type),
//! and opens the quote being edited with [`Host::open_quote`]. From then on
//! the host:
//!
//! - accepts a tool's hello only from the frame it mounted, at the tool's
//!   registered origin, and welcomes it with a private `MessagePort`
//!   (`handshake`);
//! - answers the bridge calls on that port (`dispatch`): `context.get`
//!   from `GET /me` (kept), the lists with their paging checked first,
//!   `quotes.create` checked by `toolbridge-protocol` and then posted, and
//!   `quotes.addLines` (only for `quoting_extension` tools) merged into the
//!   open quote in memory with no network call (`editor`);
//! - answers `settings.get` from the install settings the page mounted the
//!   tool with, and tells it of each [`Host::set_tool_settings`] with
//!   `settings.changed` (`tool_events`);
//! - passes a tool's `fetch` to the server, which makes the request with the
//!   tenant's secret settings in it, once the request is checked (`fetch`);
//! - maps backend answers to bridge error codes in one place (`backend`),
//!   reaching the REST API with the browser's `fetch` or through the page's
//!   own `backend.fetch(request)`;
//! - knows whether the server can be reached (`connectivity`): while it
//!   cannot, calls that need it fail at once with `OFFLINE`, and tools hear
//!   each change as `connectivity.changed`;
//! - saves the open quote against the version it last had (`If-Match` with
//!   its `ETag`) and with an `Idempotency-Key` per unsaved state, so that a
//!   retried save lands once and a quote changed on another device meanwhile
//!   is a `CONFLICT` rather than overwritten ([`Host::save`],
//!   [`Host::server_quote`]);
//! - records every call and every dropped message (`debug`).
//!
//! The names in parentheses are the host's private modules that do each part.
//!
//! ```js
//! import init, { Host } from "/host/toolbridge_host.js";
//! await init();
//! const host = new Host({ apiBase: "/api/v1" });
//! await host.openQuote(quoteId);
//! const tool = host.mount(panel, { slug: "estimator", origin: "http://estimator.tools.localhost:8080", type: "quoting_extension" });
//! host.onChange((quote, change) => render(quote));
//! await host.save();
//! ```

#![deny(missing_docs)]

mod backend;
mod connectivity;
mod context;
mod debug;
mod dispatch;
mod editor;
mod error;
mod fetch;
mod handshake;
mod hooks;
mod host;
mod json;
mod lines;
mod listeners;
mod options;
mod registry;
mod tool_events;
mod typescript;

#[doc(hidden)]
pub use debug::{AddLinesPhases, OpenQuotePhases};
pub use error::HostError;
pub use host::Host;
#[doc(hidden)]
pub use lines::read_lines_as_values;
pub use registry::MountedTool;
