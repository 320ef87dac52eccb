//! `GET /api/tools`: the tools the signed-in user's app page may mount, each
//! with what `host.mount` takes (slug, origin, type, entry page, title, the
//! install settings' values for the user's tenant, whether it may ask for
//! an identity token) and the outside origins it talks to.

use std::collections::BTreeMap;

use axum::Json;
use axum::extract::State;
use axum::http::HeaderMap;
use serde::Serialize;
use toolbridge_protocol::manifest::{ToolManifest, ToolType};
use toolbridge_protocol::problem::Problem;
use toolbridge_protocol::settings::{SettingValue, SettingValues, effective_values};

use crate::app::AppState;
use crate::auth;
use crate::error::ApiError;
use crate::tools::sites::{ToolSites, entry_path, read_folder};

/// One tool, ready to mount.
#[derive(Debug, Clone, Serialize, utoipa::ToSchema)]
#[serde(rename_all = "camelCase")]
pub struct ToolListing {
    /// The tool's slug: the first label of its origin.
    pub slug: String,
    /// Full display name.
    pub name: String,
    /// Short name for tabs and menus.
    pub short_name: String,
    /// `standalone` or `quoting_extension`.
    #[serde(rename = "type")]
    pub tool_type: ToolType,
    /// The tool's own version (semver).
    pub version: String,
    /// One-sentence description.
    pub description: String,
    /// The tool's origin, for the frame and the handshake check.
    pub origin: String,
    /// The entry page's path on the origin, e.g. `/index.html`.
    pub entry: String,
    /// Whether it is a folder served live (`toolbridge serve --dev-tool`).
    pub dev: bool,
    /// The values of its install settings for the user's tenant, key to
    /// value: the declared defaults with the tenant's own values over them
    /// (`{}` when it declares none). Not secret: every user reads them.
    pub settings: BTreeMap<String, SettingValue>,
    /// The outside origins its page may connect to, as its manifest's
    /// `permissions.connect` declares them.
    pub connect: Vec<String>,
    /// Whether its manifest asks for `permissions.identity`: the page mounts
    /// it with `identity: true`, and the host offers it `auth.getToken`.
    pub identity: bool,
}

impl ToolListing {
    /// The listing of the tool `slug` with this manifest, for a tenant that
    /// stored `stored` for it.
    pub(crate) fn new(
        sites: &ToolSites,
        slug: &str,
        manifest: &ToolManifest,
        dev: bool,
        stored: Option<&SettingValues>,
    ) -> Self {
        let none = SettingValues::new();
        let settings = effective_values(&manifest.settings, stored.unwrap_or(&none));
        Self {
            slug: slug.to_owned(),
            name: manifest.name.clone(),
            short_name: manifest.short_name.clone(),
            tool_type: manifest.tool_type,
            version: manifest.version.clone(),
            description: manifest.description.clone(),
            origin: sites.origin(slug),
            entry: entry_path(&manifest.entry),
            dev,
            settings,
            connect: manifest.permissions.connect.clone(),
            identity: manifest.permissions.identity,
        }
    }
}

/// `GET /api/tools`: the enabled tools, by slug; folders served live replace
/// an installed tool of the same slug.
#[utoipa::path(get, path = "/api/tools", tag = "session", operation_id = "listTools",
    responses((status = 200, body = [ToolListing]), (status = 401, description = "not signed in", body = Problem, content_type = "application/problem+json"), (status = 403, description = "an API key; this endpoint is for the app's signed-in users", body = Problem, content_type = "application/problem+json")),
    security(("session" = [])))]
pub async fn list(
    State(state): State<AppState>,
    headers: HeaderMap,
) -> Result<Json<Vec<ToolListing>>, ApiError> {
    let principal = auth::authenticate(&state, &headers).await?;
    let tenant_id = &principal.user()?.tenant_id;
    let stored = state.store.tenant_tool_settings(tenant_id).await?;
    let sites = &state.tool_sites;
    let mut listed: Vec<ToolListing> = Vec::new();
    for dev in sites.dev_tools() {
        // A folder that breaks a rule right now is left out until it reads
        // again; its origin answers with the refusals meanwhile.
        let Ok(folder) = read_folder(dev.dir.clone()).await else {
            continue;
        };
        listed.push(ToolListing::new(
            sites,
            &dev.slug,
            folder.manifest(),
            true,
            stored.get(&dev.slug),
        ));
    }
    for tool in state.store.tools().await? {
        if !tool.enabled || listed.iter().any(|known| known.slug == tool.slug) {
            continue;
        }
        listed.push(ToolListing::new(
            sites,
            &tool.slug,
            &tool.manifest,
            false,
            stored.get(&tool.slug),
        ));
    }
    listed.sort_by(|a, b| a.slug.cmp(&b.slug));
    Ok(Json(listed))
}
