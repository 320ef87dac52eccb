//! `/api/settings/organisation`: the time zone, currency, units and theme of the administrator's
//! organisation, which its users' pages and tools show things in.

use axum::Json;
use axum::extract::State;
use axum::http::HeaderMap;
use toolbridge_protocol::context::{
    CURRENCIES, ContextValues, OrganisationContextDto, TIME_ZONE_MAX_CHARS, Theme, Units,
};
use toolbridge_protocol::problem::Problem;

use super::{AdminRefusals, administrator};
use crate::app::AppState;
use crate::error::ApiError;
use crate::json::{BodyErrors, JsonBody};

/// `PATCH /api/settings/organisation` body: the values to change; those left out stay.
#[derive(Debug, serde::Deserialize, utoipa::ToSchema)]
#[serde(rename_all = "camelCase")]
#[allow(dead_code)] // The schema of the body, which is read by the protocol's rules.
pub struct OrganisationChange {
    /// An IANA time zone name, e.g. `Pacific/Auckland`.
    #[schema(pattern = r"^[A-Za-z0-9_+\-]+(/[A-Za-z0-9_+\-]+)*$", max_length = 64)]
    time_zone: Option<String>,
    /// An ISO 4217 currency code, e.g. `NZD`.
    #[schema(schema_with = currency_schema, required = false)]
    currency: Option<String>,
    /// `metric` or `imperial`.
    units: Option<Units>,
    /// `light` or `dark`: the theme of the users' pages, unless a user chose their own.
    theme: Option<Theme>,
}

/// A currency code, one of the protocol's list.
fn currency_schema() -> utoipa::openapi::Object {
    utoipa::openapi::ObjectBuilder::new()
        .schema_type(utoipa::openapi::schema::Type::String)
        .enum_values(Some(CURRENCIES))
        .description(Some("an ISO 4217 currency code, e.g. `NZD`"))
        .build()
}

const _: () = assert!(TIME_ZONE_MAX_CHARS == 64, "the schema's max_length above");

/// `GET /api/settings/organisation`: the organisation's time zone, currency, units and theme.
#[utoipa::path(get, path = "/api/settings/organisation", tag = "settings", operation_id = "getOrganisationContext",
    responses((status = 200, body = OrganisationContextDto), AdminRefusals),
    security(("session" = [])))]
pub async fn get(
    State(state): State<AppState>,
    headers: HeaderMap,
) -> Result<Json<OrganisationContextDto>, ApiError> {
    let user = administrator(&state, &headers).await?;
    Ok(Json(
        state.store.organisation_context(&user.tenant_id).await?,
    ))
}

/// `PATCH /api/settings/organisation`: changes the organisation's time zone, currency, units or
/// theme (those the body has) and answers all four. The tenant's open pages hear of it (a
/// `context` event) and pass it on to their tools.
#[utoipa::path(patch, path = "/api/settings/organisation", tag = "settings", operation_id = "updateOrganisationContext",
    request_body = OrganisationChange,
    responses((status = 200, body = OrganisationContextDto), BodyErrors, AdminRefusals, (status = 422, description = "a value is not a known time zone, currency, units or theme, or the body has another field: errors[] names each", body = Problem, content_type = "application/problem+json")),
    security(("session" = [])))]
pub async fn update(
    State(state): State<AppState>,
    headers: HeaderMap,
    body: JsonBody,
) -> Result<Json<OrganisationContextDto>, ApiError> {
    let user = administrator(&state, &headers).await?;
    let (change, _) = ContextValues::read(&body.value, &OrganisationContextDto::FIELDS, false)?;
    Ok(Json(
        state
            .store
            .set_organisation_context(&user.tenant_id, &change)
            .await?,
    ))
}
