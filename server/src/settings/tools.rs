//! `/api/settings/tools`: every installed tool (enabled or not), upload of a
//! bundle .zip (checked by every bundle rule; refusals name the entry and
//! the rule), enable or disable, remove, and the values of a tool's install
//! settings for the administrator's tenant. A secret setting is write-only:
//! every answer says only whether it is set (`secrets`), never its value.

use std::collections::{BTreeMap, BTreeSet};

use axum::Json;
use axum::body::{Body, to_bytes};
use axum::extract::State;
use axum::http::{HeaderMap, StatusCode};
use axum::response::{IntoResponse, Response};
use serde::{Deserialize, Serialize};
use toolbridge_bundle::MAX_COMPRESSED_BYTES;
use toolbridge_protocol::problem::Problem;
use toolbridge_protocol::settings::{SettingDeclaration, SettingValue, SettingValues};
use toolbridge_store::{InstalledTool, User};
use utoipa::IntoResponses;
use utoipa::openapi::{RefOr, Response as ApiResponse};

use super::{AdminRefusals, administrator};
use crate::app::AppState;
use crate::error::{ApiError, problem_response};
use crate::extract::{PathParam, Query};
use crate::json::{BodyErrors, JsonBody, typed};
use crate::tools::listing::ToolListing;
use crate::tools::sites::ToolSites;
use crate::tools::{self, Installed};

/// An installed tool as the settings page shows it: what the app's tool
/// list says of it, and its install.
#[derive(Debug, Clone, Serialize, utoipa::ToSchema)]
#[serde(rename_all = "camelCase")]
pub struct InstalledListing {
    /// The tool as the app's tool list shows it, with the values of its
    /// settings for the administrator's tenant.
    #[serde(flatten)]
    pub tool: ToolListing,
    /// The install settings its manifest declares (`[]` when none), for the
    /// settings form.
    pub setting_declarations: Vec<SettingDeclaration>,
    /// Each secret setting it declares, by key: whether the tenant has set it
    /// (`{}` when it declares none). Never the value.
    pub secrets: BTreeMap<String, SecretState>,
    /// Whether the app offers it.
    pub enabled: bool,
    /// When it was installed (ISO 8601, UTC).
    pub installed_at: String,
    /// Files in its bundle.
    pub file_count: u32,
    /// Their bytes in all.
    pub total_bytes: u64,
}

/// What an answer says of one secret setting: only whether it is set.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, utoipa::ToSchema)]
pub struct SecretState {
    /// Whether the tenant has a value for it.
    pub set: bool,
}

/// What the settings page knows of a tenant's tools: the values of each, and
/// which secrets it has set.
#[derive(Debug, Default)]
struct Stored {
    values: BTreeMap<String, SettingValues>,
    secrets: BTreeMap<String, BTreeSet<String>>,
}

impl Stored {
    async fn of(state: &AppState, tenant_id: &str) -> Result<Self, ApiError> {
        Ok(Self {
            values: state.store.tenant_tool_settings(tenant_id).await?,
            secrets: state.store.tenant_secret_keys(tenant_id).await?,
        })
    }

    fn listing(&self, sites: &ToolSites, tool: InstalledTool) -> InstalledListing {
        let set = self.secrets.get(&tool.slug);
        let values = self.values.get(&tool.slug);
        InstalledListing::new(sites, tool, values, set)
    }
}

impl InstalledListing {
    fn new(
        sites: &ToolSites,
        tool: InstalledTool,
        stored: Option<&SettingValues>,
        secrets_set: Option<&BTreeSet<String>>,
    ) -> Self {
        let secrets = tool
            .manifest
            .settings
            .iter()
            .filter(|declaration| declaration.secret)
            .map(|declaration| {
                let set = secrets_set.is_some_and(|set| set.contains(&declaration.key));
                (declaration.key.clone(), SecretState { set })
            })
            .collect();
        Self {
            tool: ToolListing::new(sites, &tool.slug, &tool.manifest, false, stored),
            secrets,
            setting_declarations: tool.manifest.settings,
            enabled: tool.enabled,
            installed_at: tool.installed_at,
            file_count: tool.file_count,
            total_bytes: tool.total_bytes,
        }
    }
}

/// What an upload did.
#[derive(Debug, Serialize, utoipa::ToSchema)]
pub struct Upload {
    /// The tool as now installed.
    pub tool: InstalledListing,
    /// The version it replaced, if the slug was taken.
    pub replaced: Option<InstalledListing>,
}

/// OpenAPI: a tool bundle as sent, the raw bytes of a .zip.
pub struct BundleBytes;

impl utoipa::PartialSchema for BundleBytes {
    fn schema() -> utoipa::openapi::RefOr<utoipa::openapi::schema::Schema> {
        utoipa::openapi::schema::ObjectBuilder::new()
            .schema_type(utoipa::openapi::schema::Type::String)
            .format(Some(utoipa::openapi::schema::SchemaFormat::KnownFormat(
                utoipa::openapi::schema::KnownFormat::Binary,
            )))
            .into()
    }
}

impl utoipa::ToSchema for BundleBytes {}

/// `PATCH /api/settings/tools/{slug}` body.
#[derive(Debug, Deserialize, utoipa::ToSchema)]
#[serde(deny_unknown_fields)]
pub struct Toggle {
    /// Whether the app offers the tool.
    pub enabled: bool,
}

/// `GET /api/settings/tools`: every installed tool, by slug.
#[utoipa::path(get, path = "/api/settings/tools", tag = "settings", operation_id = "listInstalledTools",
    responses((status = 200, body = [InstalledListing]), AdminRefusals),
    security(("session" = [])))]
pub async fn list(
    State(state): State<AppState>,
    headers: HeaderMap,
) -> Result<Json<Vec<InstalledListing>>, ApiError> {
    let user = administrator(&state, &headers).await?;
    let installed = state.store.tools().await?;
    let stored = Stored::of(&state, &user.tenant_id).await?;
    Ok(Json(
        installed
            .into_iter()
            .map(|tool| stored.listing(&state.tool_sites, tool))
            .collect(),
    ))
}

/// `POST /api/settings/tools[?slug=S]`: installs the bundle .zip in the body,
/// replacing an earlier version of the same tool.
#[utoipa::path(post, path = "/api/settings/tools", tag = "settings", operation_id = "uploadTool",
    params(("slug" = Option<String>, Query, description = "the tool's slug (default: from the manifest's shortName)")),
    request_body(description = "the bundle .zip, at most 10 MB; its bytes are read whatever the Content-Type", content(
        (BundleBytes = "application/zip"),
        (BundleBytes = "application/octet-stream"),
    )),
    responses((status = 201, body = Upload), AdminRefusals, (status = 413, description = "the body is over 10 MB", body = Problem, content_type = "application/problem+json"), (status = 422, description = "the bundle breaks a rule: errors[] names each entry and rule", body = Problem, content_type = "application/problem+json")),
    security(("session" = [])))]
pub async fn upload(
    State(state): State<AppState>,
    headers: HeaderMap,
    query: Query,
    body: Body,
) -> Result<Response, ApiError> {
    let user = administrator(&state, &headers).await?;
    let limit = usize::try_from(MAX_COMPRESSED_BYTES).unwrap_or(usize::MAX);
    let bytes = to_bytes(body, limit)
        .await
        .map_err(|_| ApiError::Unreadable {
            status: StatusCode::PAYLOAD_TOO_LARGE,
            message: format!("a tool bundle may be at most {MAX_COMPRESSED_BYTES} bytes (10 MB)"),
        })?;
    // Inflating up to 50 MB is work for a blocking thread, not the server's.
    let bundle = tokio::task::spawn_blocking(move || toolbridge_bundle::read_zip(&bytes))
        .await
        .map_err(|error| ApiError::internal("checking a bundle", error))??;
    let Installed { tool, replaced } =
        tools::install(&state.store, &bundle, query.get("slug").map(String::as_str)).await?;
    let sites = &state.tool_sites;
    // The values kept for the new version, and those the old one showed
    // (from its own declarations; the install may have dropped some).
    let stored = Stored::of(&state, &user.tenant_id).await?;
    let answer = Upload {
        replaced: replaced.map(|old| stored.listing(sites, old)),
        tool: stored.listing(sites, tool),
    };
    Ok((StatusCode::CREATED, Json(answer)).into_response())
}

/// `PATCH /api/settings/tools/{slug}`: enables or disables the tool.
#[utoipa::path(patch, path = "/api/settings/tools/{slug}", tag = "settings", operation_id = "toggleTool", request_body = Toggle,
    params(("slug" = String, Path, description = "the tool's slug")),
    responses((status = 200, body = InstalledListing), BodyErrors, (status = 422, description = "the body is not `{enabled}` (errors[] says where)", body = Problem, content_type = "application/problem+json"), ToolRefusals),
    security(("session" = [])))]
pub async fn toggle(
    State(state): State<AppState>,
    headers: HeaderMap,
    PathParam(slug): PathParam,
    body: JsonBody,
) -> Result<Json<InstalledListing>, ApiError> {
    let user = administrator(&state, &headers).await?;
    let Toggle { enabled } = typed(body.value)?;
    if !state.store.set_tool_enabled(&slug, enabled).await? {
        return Err(unknown(&slug));
    }
    listing(&state, &user, &slug).await.map(Json)
}

/// `PUT /api/settings/tools/{slug}/settings`: sets the values of the
/// tool's install settings for the administrator's tenant. The body is the
/// complete object, key to value; a key left out is unset and falls back to
/// its default. A secret setting is the exception: a string sets or replaces
/// it, `null` or `""` clears it, and leaving it out keeps it as it is; the
/// answer says only whether each is set. The tenant's open pages hear of the
/// values (a `toolSettings` event), never of a secret.
#[utoipa::path(put, path = "/api/settings/tools/{slug}/settings", tag = "settings", operation_id = "setToolSettings",
    params(("slug" = String, Path, description = "the tool's slug")),
    request_body(description = "every value, by the key its manifest declares (string, number or boolean), which every user of the tenant's tools reads; and for a secret setting a string to set it, null to clear it, or nothing to keep it", content((BTreeMap<String, SettingValue> = "application/json"))),
    responses((status = 200, body = InstalledListing), BodyErrors, ToolRefusals, (status = 422, description = "a value breaks its declaration: errors[] names each by its key (never with a secret's value)", body = Problem, content_type = "application/problem+json")),
    security(("session" = [])))]
pub async fn set_settings(
    State(state): State<AppState>,
    headers: HeaderMap,
    PathParam(slug): PathParam,
    body: JsonBody,
) -> Result<Json<InstalledListing>, ApiError> {
    let user = administrator(&state, &headers).await?;
    // The tenant's open pages hear the new values (a `toolSettings` event) once they are saved.
    state
        .store
        .set_tool_settings(&user.tenant_id, &slug, &body.value)
        .await?
        .ok_or_else(|| unknown(&slug))?;
    listing(&state, &user, &slug).await.map(Json)
}

/// The tool `slug` as the settings page lists it for `user`'s tenant.
async fn listing(state: &AppState, user: &User, slug: &str) -> Result<InstalledListing, ApiError> {
    let tool = state.store.tool(slug).await?.ok_or_else(|| unknown(slug))?;
    let stored = Stored::of(state, &user.tenant_id).await?;
    Ok(stored.listing(&state.tool_sites, tool))
}

/// `DELETE /api/settings/tools/{slug}`: removes the tool and its files.
#[utoipa::path(delete, path = "/api/settings/tools/{slug}", tag = "settings", operation_id = "removeTool",
    params(("slug" = String, Path, description = "the tool's slug")),
    responses((status = 204), ToolRefusals),
    security(("session" = [])))]
pub async fn remove(
    State(state): State<AppState>,
    headers: HeaderMap,
    PathParam(slug): PathParam,
) -> Result<StatusCode, ApiError> {
    administrator(&state, &headers).await?;
    if state.store.remove_tool(&slug).await? {
        Ok(StatusCode::NO_CONTENT)
    } else {
        Err(unknown(&slug))
    }
}

/// OpenAPI: what an operation on one installed tool refuses: the
/// [`AdminRefusals`], and a tool that is not installed (404).
pub struct ToolRefusals;

impl IntoResponses for ToolRefusals {
    fn responses() -> BTreeMap<String, RefOr<ApiResponse>> {
        let mut responses = AdminRefusals::responses();
        responses.insert("404".to_owned(), problem_response("no such tool").into());
        responses
    }
}

fn unknown(slug: &str) -> ApiError {
    ApiError::not_found(format!("no tool {slug:?} is installed"))
}
