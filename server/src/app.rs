//! The application state and the router.

use std::path::PathBuf;
use std::sync::Arc;

use axum::Router;
use axum::extract::DefaultBodyLimit;
use axum::middleware;
use axum::routing::{delete, get, patch, post, put};
use toolbridge_store::Store;
use tower_http::compression::CompressionLayer;
use tower_http::compression::predicate::{NotForContentType, Predicate, SizeAbove};

use crate::asset_cache::{AssetCache, MIN_COMPRESSED_SIZE, Precompressed};
use crate::tools::{ToolSites, sites};
use crate::webhooks::destination::Destinations;
use crate::{
    api, app_files, cors, dev_reports, events, request_id, sdk_files, session, settings, tools,
};

/// What every handler may use.
#[derive(Clone)]
pub struct AppState {
    /// The database.
    pub store: Store,
    /// Origins besides the app's own whose pages may use the session (a host
    /// page on a development server, say); never a tool's origin.
    pub allowed_origins: Arc<Vec<String>>,
    /// Where the built SDK is (`sdk/dist`).
    pub sdk_dir: Arc<PathBuf>,
    /// Where each tool is served (its origin) and the folders served live.
    pub tool_sites: Arc<ToolSites>,
    /// The reference web app's files (`www`).
    pub www_dir: Arc<PathBuf>,
    /// The built host module (`host/dist`).
    pub host_dir: Arc<PathBuf>,
    /// Where webhooks may be sent (`--allow-private-webhooks` allows private addresses).
    pub webhook_destinations: Destinations,
    /// The static files served (SDK, host module, app), each compressed once per version.
    pub assets: Arc<AssetCache>,
}

impl AppState {
    /// State over an opened store, trusting only the app's own origin.
    pub fn new(store: Store) -> Self {
        Self {
            store,
            allowed_origins: Arc::new(Vec::new()),
            sdk_dir: Arc::new(PathBuf::from("sdk/dist")),
            tool_sites: Arc::new(ToolSites::new(sites::DEFAULT_DOMAIN, 8080)),
            www_dir: Arc::new(PathBuf::from("www")),
            host_dir: Arc::new(PathBuf::from("host/dist")),
            webhook_destinations: Destinations::PublicOnly,
            assets: Arc::new(AssetCache::new()),
        }
    }

    /// The same state, serving the app from `www` and the host module from
    /// `host`.
    #[must_use]
    pub fn serving_app_from(mut self, www: PathBuf, host: PathBuf) -> Self {
        self.www_dir = Arc::new(www);
        self.host_dir = Arc::new(host);
        self
    }

    /// The same state, serving tools as `sites` says.
    #[must_use]
    pub fn serving_tools(mut self, sites: ToolSites) -> Self {
        self.tool_sites = Arc::new(sites);
        self
    }

    /// The same state, serving the SDK from `dir`.
    #[must_use]
    pub fn serving_sdk_from(mut self, dir: PathBuf) -> Self {
        self.sdk_dir = Arc::new(dir);
        self
    }

    /// The same state, also trusting these origins (`http://localhost:3000`).
    #[must_use]
    pub fn allowing_origins(mut self, origins: Vec<String>) -> Self {
        self.allowed_origins = Arc::new(origins);
        self
    }

    /// The same state, sending webhooks to private addresses too (development and tests).
    #[must_use]
    pub fn allowing_private_webhooks(mut self) -> Self {
        self.webhook_destinations = Destinations::AllowPrivate;
        self
    }

    /// Whether `origin` is one of the allowed origins.
    pub fn allows_origin(&self, origin: &str) -> bool {
        self.allowed_origins.iter().any(|allowed| allowed == origin)
    }
}

/// Every route: the REST API under `/api/v1`, the session API under
/// `/api/session`, the app's tool list at `/api/tools`, the SDK under `/sdk`,
/// the host module under `/host`, the app's pages at the root, and each
/// tool's files at its own origin; each request with an id. Answers are
/// compressed where the client asks (`compression`).
pub fn router(state: AppState) -> Router {
    Router::new()
        .nest("/api/v1", api::routes(state.clone()))
        .route("/sdk/{file}", get(sdk_files::file))
        .route(
            "/api/session",
            get(session::current)
                .post(session::sign_in)
                .delete(session::sign_out),
        )
        .route("/api/tools", get(tools::listing::list))
        .route("/api/events", get(events::stream))
        .route(
            "/api/settings/keys",
            get(settings::keys::list).post(settings::keys::create),
        )
        .route("/api/settings/keys/{id}", delete(settings::keys::revoke))
        .route(
            "/api/settings/tools",
            get(settings::tools::list)
                .post(settings::tools::upload)
                .layer(DefaultBodyLimit::disable()),
        )
        .route(
            "/api/settings/tools/{slug}",
            patch(settings::tools::toggle).delete(settings::tools::remove),
        )
        .route(
            "/api/settings/tools/{slug}/settings",
            put(settings::tools::set_settings),
        )
        .route("/api/dev-tools/{slug}/blocked", post(dev_reports::blocked))
        .fallback(app_files::fallback)
        .layer(middleware::from_fn_with_state(
            state.clone(),
            cors::middleware,
        ))
        .layer(middleware::from_fn_with_state(
            state.clone(),
            sites::middleware,
        ))
        .layer(middleware::from_fn(request_id::middleware))
        .layer(compression())
        .with_state(state)
}

/// Brotli or gzip for the dynamic answers (the REST and session APIs' JSON, tools' files), as
/// `Accept-Encoding` asks, with `Vary: Accept-Encoding`; never for the event stream, images,
/// bodies under [`MIN_COMPRESSED_SIZE`] bytes, or the static files, which come compressed
/// already from the [`AssetCache`].
fn compression() -> CompressionLayer<impl Predicate> {
    let min_size = u16::try_from(MIN_COMPRESSED_SIZE).unwrap_or(u16::MAX);
    CompressionLayer::new().compress_when(
        SizeAbove::new(min_size)
            .and(NotForContentType::SSE)
            .and(NotForContentType::IMAGES)
            .and(NotForContentType::GRPC)
            .and(
                |_: axum::http::StatusCode,
                 _: axum::http::Version,
                 _: &axum::http::HeaderMap,
                 extensions: &axum::http::Extensions| {
                    extensions.get::<Precompressed>().is_none()
                },
            ),
    )
}
