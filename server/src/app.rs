//! The application state and the router.

use std::path::PathBuf;
use std::sync::Arc;
use std::time::Duration;

use axum::Router;
use axum::extract::DefaultBodyLimit;
use axum::middleware;
use axum::routing::{delete, get, patch, post, put};
use toolbridge_store::Store;
use tower_http::compression::CompressionLayer;
use tower_http::compression::predicate::{NotForContentType, Predicate, SizeAbove};

use crate::asset_cache::{AssetCache, MIN_COMPRESSED_SIZE, Precompressed};
use crate::client::TrustedProxies;
use crate::embedded::{Embedded, Source};
use crate::fetch::{Fetcher, PrivateFetch};
use crate::lifecycle::{self, Lifecycle};
use crate::outgoing::TrustedRoots;
use crate::public_urls::PublicUrls;
use crate::tools::{ToolSites, sites};
use crate::webhooks::destination::Destinations;
use crate::{
    api, app_files, cors, dev_reports, events, public_urls, request_id, sdk_files, session,
    settings, tools,
};

/// What every handler may use.
#[derive(Clone)]
pub struct AppState {
    /// The database.
    pub store: Store,
    /// Origins besides the app's own whose pages may use the session (a host
    /// page on a development server, say); never a tool's origin.
    pub allowed_origins: Arc<Vec<String>>,
    /// The built SDK (`sdk/dist`): the binary's copy, or a folder in its place.
    pub sdk_files: Arc<Source>,
    /// Where each tool is served (its origin) and the folders served live.
    pub tool_sites: Arc<ToolSites>,
    /// The reference web app's files (`www`): the binary's copy, or a folder in its place.
    pub www_files: Arc<Source>,
    /// The built host module (`host/dist`): the binary's copy, or a folder in its place.
    pub host_files: Arc<Source>,
    /// The built documentation (`docs/book`): the binary's copy, or a folder in its place.
    pub docs_files: Arc<Source>,
    /// Where webhooks may be sent (`--allow-private-webhooks` allows private addresses).
    pub webhook_destinations: Destinations,
    /// The server's fetch for tools: the private addresses it may reach
    /// (`--allow-private-fetch`), the roots it trusts (`--trust-ca`), the requests in flight.
    pub fetcher: Fetcher,
    /// The static files served (SDK, host module, app), each compressed once per version.
    pub assets: Arc<AssetCache>,
    /// The proxies whose `X-Forwarded-For` (or `Forwarded`) names the client (`--trust-proxy`).
    pub trusted_proxies: TrustedProxies,
    /// Whether the server is draining (shutting down), and its requests in flight.
    pub lifecycle: Lifecycle,
    /// How often an idle live stream (`GET /api/events`) checks that its session still holds.
    pub live_session_recheck: Duration,
}

impl AppState {
    /// State over an opened store, trusting only the app's own origin.
    pub fn new(store: Store) -> Self {
        Self {
            store,
            allowed_origins: Arc::new(Vec::new()),
            sdk_files: Arc::new(Source::Embedded(Embedded::Sdk)),
            tool_sites: Arc::new(ToolSites::new(PublicUrls::local(8080))),
            www_files: Arc::new(Source::Embedded(Embedded::App)),
            host_files: Arc::new(Source::Embedded(Embedded::Host)),
            docs_files: Arc::new(Source::Embedded(Embedded::Docs)),
            webhook_destinations: Destinations::PublicOnly,
            fetcher: Fetcher::default(),
            assets: Arc::new(AssetCache::new()),
            trusted_proxies: TrustedProxies::default(),
            lifecycle: Lifecycle::new(),
            live_session_recheck: events::SESSION_RECHECK,
        }
    }

    /// The same state, draining when `lifecycle` says (`/readyz`, the live event streams and
    /// the answers' `Connection` follow it).
    #[must_use]
    pub fn with_lifecycle(mut self, lifecycle: Lifecycle) -> Self {
        self.lifecycle = lifecycle;
        self
    }

    /// The same state, serving the app from the folder `www` and the host module from the
    /// folder `host` in place of the binary's copies.
    #[must_use]
    pub fn serving_app_from(self, www: PathBuf, host: PathBuf) -> Self {
        self.serving_www_from(www).serving_host_from(host)
    }

    /// The same state, serving the app from the folder `dir` in place of the binary's copy.
    #[must_use]
    pub fn serving_www_from(mut self, dir: PathBuf) -> Self {
        self.www_files = Arc::new(Source::Disk(dir));
        self
    }

    /// The same state, serving the host module from the folder `dir` in place of the binary's
    /// copy.
    #[must_use]
    pub fn serving_host_from(mut self, dir: PathBuf) -> Self {
        self.host_files = Arc::new(Source::Disk(dir));
        self
    }

    /// The same state, serving the documentation from the folder `dir` in place of the binary's
    /// copy.
    #[must_use]
    pub fn serving_docs_from(mut self, dir: PathBuf) -> Self {
        self.docs_files = Arc::new(Source::Disk(dir));
        self
    }

    /// The same state, serving tools as `sites` says.
    #[must_use]
    pub fn serving_tools(mut self, sites: ToolSites) -> Self {
        self.tool_sites = Arc::new(sites);
        self
    }

    /// The same state, serving the SDK from the folder `dir` in place of the binary's copy.
    #[must_use]
    pub fn serving_sdk_from(mut self, dir: PathBuf) -> Self {
        self.sdk_files = Arc::new(Source::Disk(dir));
        self
    }

    /// The same state, also trusting these origins (`http://localhost:3000`).
    #[must_use]
    pub fn allowing_origins(mut self, origins: Vec<String>) -> Self {
        self.allowed_origins = Arc::new(origins);
        self
    }

    /// The same state, its idle live streams checking their session this often (30 s unless
    /// told; tests shorten it).
    #[must_use]
    pub fn checking_live_sessions_every(mut self, every: Duration) -> Self {
        self.live_session_recheck = every;
        self
    }

    /// The same state, sending webhooks to private addresses too (development and tests).
    #[must_use]
    pub fn allowing_private_webhooks(mut self) -> Self {
        self.webhook_destinations = Destinations::AllowPrivate;
        self
    }

    /// The same state, letting the server's fetch for tools reach these private addresses and
    /// ports (development, tests, or a vendor's server on the operator's own network).
    #[must_use]
    pub fn allowing_private_fetch(mut self, private: Vec<PrivateFetch>) -> Self {
        self.fetcher = self.fetcher.allowing_private(private);
        self
    }

    /// The same state, trusting `roots` beside the built-in roots in the server's fetch for
    /// tools (the webhook worker takes them when it is spawned).
    #[must_use]
    pub fn trusting_roots(mut self, roots: TrustedRoots) -> Self {
        self.fetcher = self.fetcher.trusting(roots);
        self
    }

    /// The same state, taking the client's address from the forwarding headers of requests
    /// that come from these proxies.
    #[must_use]
    pub fn trusting_proxies(mut self, proxies: TrustedProxies) -> Self {
        self.trusted_proxies = proxies;
        self
    }

    /// Where browsers find the app and its tools.
    pub fn public_urls(&self) -> &PublicUrls {
        self.tool_sites.urls()
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
/// compressed where the client asks (`compression`). `/healthz` and `/readyz`
/// for load balancers ([`crate::health`]); requests in flight counted for the
/// drain ([`lifecycle::track`]).
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
        .route("/api/sign-in", get(session::help))
        .route(
            "/api/session/preferences",
            get(crate::preferences::get).patch(crate::preferences::update),
        )
        .route("/api/tools", get(tools::listing::list))
        .route("/api/events", get(events::stream))
        .route("/healthz", get(crate::health::live))
        .route(
            toolbridge_protocol::identity::JWKS_PATH,
            get(crate::identity::jwks),
        )
        .route("/readyz", get(crate::health::ready))
        .route(
            "/api/settings/keys",
            get(settings::keys::list).post(settings::keys::create),
        )
        .route("/api/settings/keys/{id}", delete(settings::keys::revoke))
        .route(
            "/api/settings/organisation",
            get(settings::organisation::get).patch(settings::organisation::update),
        )
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
        .layer(middleware::from_fn_with_state(
            state.clone(),
            public_urls::strict_transport,
        ))
        .layer(middleware::from_fn(request_id::middleware))
        .layer(middleware::from_fn_with_state(
            state.clone(),
            crate::client::middleware,
        ))
        .layer(compression())
        .layer(middleware::from_fn_with_state(
            state.lifecycle.clone(),
            lifecycle::track,
        ))
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
