//! The toolbridge backend: the public REST API v1 (API keys, scopes, rate
//! limits), the session API the host page uses, each installed tool served
//! at its own origin, and the wiring around the SQLite store.
//!
//! Handlers are thin: they read the request, call `toolbridge-protocol` to
//! validate it and `toolbridge-store` to answer it, and return DTOs. Errors
//! become problem+json bodies in exactly one place ([`error`]).

#![deny(missing_docs)]

pub mod api;
pub mod app;
pub mod app_files;
pub mod asset_cache;
pub mod auth;
mod built_files;
pub mod client;
pub mod conditional;
pub mod cors;
pub mod dev_reports;
pub mod digest;
mod docs_files;
pub mod embedded;
pub mod error;
pub mod events;
pub mod extract;
pub mod fetch;
pub mod health;
pub mod identity;
pub mod json;
pub mod lifecycle;
pub mod openapi;
pub mod outgoing;
pub mod preferences;
pub mod public_urls;
pub mod rate_limit;
pub mod request_id;
pub mod sdk_files;
pub mod session;
pub mod settings;
pub mod telemetry;
pub mod tools;
pub mod webhooks;

pub use app::{AppState, router};
