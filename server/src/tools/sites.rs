//! Each tool at its own origin, `http://<slug>.tools.localhost:<port>` by
//! default or as `--tools-url` says ([`PublicUrls`]): the same server answers, and the `Host` a request names picks the
//! tool. An origin per tool is what keeps tools apart in the browser (their
//! own `localStorage`, no access to the app's cookies or to each other).
//!
//! A tool's origin serves its bundle's files from the store (or, for a
//! `--dev-tool` folder, from disk as it is now), `/` as a redirect to the
//! entry page, and the platform's SDK at `/sdk/bridge.js`, so a tool loads it
//! with one root-relative script tag wherever it is installed (and the page
//! helpers beside it, `/sdk/ui.js` and `/sdk/ui.css`). Every answer
//! carries a Content-Security-Policy: scripts from the tool's own origin only
//! (plus `'wasm-unsafe-eval'` for the SDK's WebAssembly), connections to the
//! tool's own origin and the outside origins its manifest declares
//! (`permissions.connect`), and framing only by the app's pages.

use std::path::PathBuf;

use axum::body::Body;
use axum::extract::{Request, State};
use axum::http::{HeaderMap, HeaderValue, Method, StatusCode, header};
use axum::middleware::Next;
use axum::response::{IntoResponse, Response};
use percent_encoding::{AsciiSet, CONTROLS, percent_decode_str, utf8_percent_encode};
use toolbridge_bundle::{Bundle, is_valid_name, media_type};
use toolbridge_protocol::manifest::is_tool_slug;

use crate::app::AppState;
use crate::conditional::respond;
use crate::digest::sha256_hex;
use crate::error::ApiError;
use crate::public_urls::PublicUrls;
use crate::sdk_files;

/// The default parent domain of tool origins: browsers resolve every
/// `*.localhost` name to the loopback address.
pub const DEFAULT_DOMAIN: &str = crate::public_urls::DEFAULT_TOOLS_DOMAIN;

/// The path at which every tool origin serves the SDK.
pub const SDK_PATH: &str = "/sdk/bridge.js";

/// The paths at which every tool origin serves the page helpers beside the SDK.
pub const HELPER_PATHS: [&str; 2] = ["/sdk/ui.js", "/sdk/ui.css"];

/// Characters escaped in a `Location` path.
const PATH_ESCAPES: &AsciiSet = &CONTROLS
    .add(b' ')
    .add(b'"')
    .add(b'#')
    .add(b'%')
    .add(b'<')
    .add(b'>')
    .add(b'?')
    .add(b'`')
    .add(b'{')
    .add(b'}');

/// A tool folder served live from disk (`toolbridge serve --dev-tool DIR`).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct DevTool {
    /// The slug its origin is named by.
    pub slug: String,
    /// The folder.
    pub dir: PathBuf,
}

/// Where tools are served: their origins, and the folders served live.
#[derive(Debug, Clone)]
pub struct ToolSites {
    urls: PublicUrls,
    dev: Vec<DevTool>,
}

impl ToolSites {
    /// Tools at the origins `urls` gives them.
    pub fn new(urls: PublicUrls) -> Self {
        Self {
            urls,
            dev: Vec::new(),
        }
    }

    /// The same, also serving `tool`'s folder live at its origin (in place
    /// of an installed tool of the same slug).
    #[must_use]
    pub fn with_dev_tool(mut self, tool: DevTool) -> Self {
        self.dev.retain(|known| known.slug != tool.slug);
        self.dev.push(tool);
        self
    }

    /// The app's and the tools' public origins.
    pub fn urls(&self) -> &PublicUrls {
        &self.urls
    }

    /// The origin of the tool `slug`.
    pub fn origin(&self, slug: &str) -> String {
        self.urls.tool_origin(slug)
    }

    /// Every tool origin at once, as a CSP source (`https://*.tools.example.com`).
    pub fn frame_source(&self) -> String {
        self.urls.tools_source()
    }

    /// The folders served live.
    pub fn dev_tools(&self) -> &[DevTool] {
        &self.dev
    }

    /// The folder served live as the tool `slug`, if any.
    pub fn dev_tool(&self, slug: &str) -> Option<&DevTool> {
        self.dev.iter().find(|dev| dev.slug == slug)
    }
}

/// The path of a bundle's `entry` page on its origin (`/index.html`).
pub fn entry_path(entry: &str) -> String {
    format!("/{}", utf8_percent_encode(entry, PATH_ESCAPES))
}

/// Answers requests to a tool origin; passes every other request on.
pub async fn middleware(State(state): State<AppState>, request: Request, next: Next) -> Response {
    let host = request
        .uri()
        .host()
        .or_else(|| {
            request
                .headers()
                .get(header::HOST)
                .and_then(|host| host.to_str().ok())
        })
        .map(str::to_owned);
    let Some(label) = host
        .as_deref()
        .and_then(|host| state.tool_sites.urls().tool_label(host))
    else {
        return next.run(request).await;
    };
    let label = label.to_ascii_lowercase();
    // Filled in once the tool's manifest is read.
    let mut connect = Vec::new();
    let response = serve(
        &state,
        &label,
        request.method(),
        request.uri().path(),
        request.headers(),
        &mut connect,
    )
    .await
    .unwrap_or_else(IntoResponse::into_response);
    let mut response = with_policy(&state, response, &connect);
    // For the request log and the metrics: whatever route the path matched, a tool origin
    // answered.
    response
        .extensions_mut()
        .insert(crate::request_id::Route::TOOL_ORIGIN);
    response
}

/// The tool's files as one source: the store, or a folder read just now.
enum Source {
    Installed,
    Folder(Box<Bundle>),
}

async fn serve(
    state: &AppState,
    slug: &str,
    method: &Method,
    path: &str,
    headers: &HeaderMap,
    connect: &mut Vec<String>,
) -> Result<Response, ApiError> {
    if method != Method::GET && method != Method::HEAD {
        let mut response = ApiError::not_allowed(format!(
            "a tool's origin serves its files; {method} is not one of GET or HEAD"
        ))
        .into_response();
        *response.status_mut() = StatusCode::METHOD_NOT_ALLOWED;
        response
            .headers_mut()
            .insert(header::ALLOW, HeaderValue::from_static("GET, HEAD"));
        return Ok(response);
    }
    if !is_tool_slug(slug) {
        return Err(ApiError::not_found(format!(
            "this is the tools domain; each tool has its own name in front of it \
             ({})",
            state.tool_sites.origin("<slug>")
        )));
    }
    if path == SDK_PATH || HELPER_PATHS.contains(&path) {
        let name = path.trim_start_matches("/sdk/");
        return sdk_files::serve(state, name, headers).await;
    }
    let (entry, source) = if let Some(dev) = state.tool_sites.dev_tool(slug) {
        let folder = read_folder(dev.dir.clone()).await?;
        let entry = folder.manifest().entry.clone();
        connect.clone_from(&folder.manifest().permissions.connect);
        (entry, Source::Folder(Box::new(folder)))
    } else {
        let tool = state.store.tool(slug).await?.ok_or_else(|| {
            ApiError::not_found(format!(
                "no tool named {slug:?} is installed on this server"
            ))
        })?;
        if !tool.enabled {
            return Err(ApiError::not_found(format!(
                "the tool {slug:?} is installed but disabled"
            )));
        }
        *connect = tool.manifest.permissions.connect;
        (tool.manifest.entry, Source::Installed)
    };
    if path == "/" {
        let location = entry_path(&entry);
        let mut response = StatusCode::FOUND.into_response();
        if let Ok(value) = HeaderValue::from_str(&location) {
            response.headers_mut().insert(header::LOCATION, value);
        }
        response
            .headers_mut()
            .insert(header::CACHE_CONTROL, HeaderValue::from_static("no-cache"));
        return Ok(response);
    }
    let name = path
        .strip_prefix('/')
        .and_then(|raw| percent_decode_str(raw).decode_utf8().ok())
        .filter(|name| is_valid_name(name))
        .ok_or_else(|| {
            ApiError::not_found(format!("{path} cannot name a file of a tool bundle"))
        })?;
    let missing = || ApiError::not_found(format!("the tool {slug:?} has no file {name}"));
    let (body, version) = match source {
        Source::Installed => {
            let file = state
                .store
                .tool_file(slug, &name)
                .await?
                .ok_or_else(missing)?;
            (file.body, file.sha256)
        }
        Source::Folder(folder) => {
            let body = folder.file(&name).ok_or_else(missing)?.to_vec();
            let version = sha256_hex(&body);
            (body, version)
        }
    };
    let media_type = media_type(&name);
    // hyper leaves the body out of an answer to HEAD.
    let mut response = respond(headers, &version, "no-cache", || {
        Response::new(Body::from(body))
    });
    response
        .headers_mut()
        .insert(header::CONTENT_TYPE, HeaderValue::from_static(media_type));
    Ok(response)
}

/// Reads a `--dev-tool` folder as it is now, with a bundle's rules.
pub(crate) async fn read_folder(dir: PathBuf) -> Result<Bundle, ApiError> {
    tokio::task::spawn_blocking(move || toolbridge_bundle::read_dir(&dir))
        .await
        .map_err(|error| ApiError::internal("reading a dev tool folder", error))?
        .map(|folder| folder.bundle)
        .map_err(ApiError::from)
}

/// Adds the headers every answer of a tool origin carries; `connect` are
/// the outside origins the tool declares, each already an exact https
/// origin (checked with the rest of the manifest).
fn with_policy(state: &AppState, mut response: Response, connect: &[String]) -> Response {
    let ancestors: Vec<String> = state
        .tool_sites
        .urls()
        .app_origins()
        .into_iter()
        .chain(state.allowed_origins.iter().cloned())
        .collect();
    let connect_src: String = std::iter::once("'self'")
        .chain(connect.iter().map(String::as_str))
        .collect::<Vec<_>>()
        .join(" ");
    let policy = format!(
        "default-src 'self'; script-src 'self' 'wasm-unsafe-eval'; img-src 'self' data:; \
         connect-src {connect_src}; object-src 'none'; base-uri 'none'; form-action 'self'; \
         frame-ancestors {}",
        ancestors.join(" ")
    );
    let headers = response.headers_mut();
    if let Ok(value) = HeaderValue::from_str(&policy) {
        headers.insert(header::CONTENT_SECURITY_POLICY, value);
    }
    headers.insert(
        header::X_CONTENT_TYPE_OPTIONS,
        HeaderValue::from_static("nosniff"),
    );
    headers.insert(
        header::REFERRER_POLICY,
        HeaderValue::from_static("no-referrer"),
    );
    response
}
