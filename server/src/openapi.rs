//! `GET /api/v1/openapi.json`: the OpenAPI document, generated from the
//! handlers' annotations and the protocol's DTOs (never written by hand).

use axum::Json;
use utoipa::openapi::security::{HttpAuthScheme, HttpBuilder, SecurityScheme};
use utoipa::{Modify, OpenApi};

use crate::api::{catalog, directory, quotes};
use crate::{events, session, settings, tools};

/// The REST API v1 and the session API.
#[derive(OpenApi)]
#[openapi(
    info(
        title = "toolbridge REST API",
        version = "1",
        description = "Customers, products, jobs and quotes of a field-service tenant. Authenticate with `Authorization: Bearer <API key>`; every keyed response carries X-RateLimit-Limit, X-RateLimit-Remaining and X-RateLimit-Reset (Unix seconds). Errors are application/problem+json with a string `code` and, for 422, `errors[].path`. Lists take `page` (from 1) and `pageSize` (1 to 500, default 50) and answer {items, totalCount, page, pageSize}."
    ),
    paths(
        directory::me, directory::customers, directory::jobs,
        catalog::products, catalog::task_templates, catalog::cost_items, catalog::index,
        quotes::list, quotes::get, quotes::create, quotes::update_header, quotes::save_lines, quotes::send,
        session::sign_in, session::current, session::sign_out,
        tools::listing::list, events::stream,
        settings::keys::list, settings::keys::create, settings::keys::revoke,
        settings::tools::list, settings::tools::upload, settings::tools::toggle, settings::tools::remove,
    ),
    components(schemas(
        toolbridge_protocol::problem::Problem,
        toolbridge_protocol::create_quote::BridgeCreateQuoteRequest,
        toolbridge_protocol::create_quote::BridgeQuoteLineRequest,
        toolbridge_protocol::quote::BridgeCreateQuoteResult,
        toolbridge_protocol::add_lines::BridgeAddLineDto,
    )),
    modifiers(&BearerKeys),
    tags(
        (name = "customers"), (name = "catalog"), (name = "jobs"), (name = "quotes"),
        (name = "session", description = "for the host app; API keys do not use it"),
        (name = "settings", description = "for the app's Admin and Super User, with the session"),
    )
)]
pub struct ApiDoc;

/// Declares the `api_key` bearer scheme the paths refer to.
struct BearerKeys;

impl Modify for BearerKeys {
    fn modify(&self, openapi: &mut utoipa::openapi::OpenApi) {
        let components = openapi.components.get_or_insert_with(Default::default);
        components.add_security_scheme(
            "api_key",
            SecurityScheme::Http(
                HttpBuilder::new()
                    .scheme(HttpAuthScheme::Bearer)
                    .description(Some(
                        "an API key from `toolbridge keys create` or Settings → API tokens",
                    ))
                    .build(),
            ),
        );
    }
}

/// The document as JSON.
pub async fn document() -> Json<utoipa::openapi::OpenApi> {
    Json(ApiDoc::openapi())
}
