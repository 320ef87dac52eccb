//! `POST /api/dev-tools/{slug}/blocked`: the app passes on what a tool
//! served from a folder (`toolbridge serve --dev-tool`) was refused by its
//! frame (bridge.js's `sdk.blocked` reports), and the server prints it with
//! what the author should change, one line on stderr:
//! `dev tool <slug>: <advice> (<kind>: <detail>)`.
//!
//! Only folders under development take reports: an installed tool's
//! refusals stay in the app's debug panel, and nothing reaches the server's
//! output from them.

use axum::extract::State;
use axum::http::{HeaderMap, StatusCode};
use toolbridge_protocol::blocked::{BlockedKind, BlockedReport, read_blocked_params};
use toolbridge_protocol::problem::Problem;
use toolbridge_protocol::text::escape_controls;
use toolbridge_protocol::{Error as RuleError, Violation};

use crate::app::AppState;
use crate::auth;
use crate::error::ApiError;
use crate::extract::PathParam;
use crate::json::{BodyErrors, JsonBody};

/// OpenAPI: the body, bridge.js's report as the host received it.
#[derive(utoipa::ToSchema)]
#[allow(dead_code)] // documents the body read by `read_blocked_params`
pub struct BlockedReportBody {
    /// What was tried: `modal`, `securityError`, `policy`, `appRequest` or
    /// `forgedWelcome`.
    kind: String,
    /// What bridge.js saw (for `policy`, the directive and the URL:
    /// `connect-src https://elsewhere.example/prices`).
    detail: String,
}

/// `POST /api/dev-tools/{slug}/blocked`: prints the report and the advice
/// for the author of the folder served as `slug`.
#[utoipa::path(post, path = "/api/dev-tools/{slug}/blocked", tag = "session", operation_id = "reportDevToolBlocked",
    params(("slug" = String, Path, description = "the slug of a tool served with --dev-tool")),
    request_body = BlockedReportBody,
    responses((status = 204, description = "printed on the server's stderr"), BodyErrors, (status = 401, description = "not signed in", body = Problem, content_type = "application/problem+json"), (status = 403, description = "an API key; reports come from the app's pages", body = Problem, content_type = "application/problem+json"), (status = 404, description = "no folder is served as this tool (installed tools take no reports)", body = Problem, content_type = "application/problem+json"), (status = 422, description = "not a report: errors[] names the field", body = Problem, content_type = "application/problem+json")),
    security(("session" = [])))]
pub async fn blocked(
    State(state): State<AppState>,
    headers: HeaderMap,
    PathParam(slug): PathParam,
    body: JsonBody,
) -> Result<StatusCode, ApiError> {
    auth::authenticate(&state, &headers).await?.user()?;
    if state.tool_sites.dev_tool(&slug).is_none() {
        return Err(ApiError::not_found(format!(
            "no folder is served as the tool {slug:?} (toolbridge serve --dev-tool); \
             only tools under development take reports"
        )));
    }
    let report = read_blocked_params(&body.value).map_err(as_body_error)?;
    eprintln!("{}", line(&slug, &report));
    Ok(StatusCode::NO_CONTENT)
}

/// The line printed for a report: `dev tool <slug>: <advice> (<kind>:
/// <detail>)`, control characters escaped so that it stays one line (the
/// detail is the page's text, and the advice may quote it).
pub fn line(slug: &str, report: &BlockedReport) -> String {
    escape_controls(format!(
        "dev tool {slug}: {} ({}: {})",
        report.advice(),
        kind_token(report.kind),
        report.detail
    ))
}

/// The kind as the report names it.
fn kind_token(kind: BlockedKind) -> &'static str {
    match kind {
        BlockedKind::Modal => "modal",
        BlockedKind::SecurityError => "securityError",
        BlockedKind::Policy => "policy",
        BlockedKind::AppRequest => "appRequest",
        BlockedKind::ForgedWelcome => "forgedWelcome",
    }
}

/// The reader names the fields of a notification's `params`; here they are
/// the body's own.
fn as_body_error(error: RuleError) -> ApiError {
    match error {
        RuleError::InvalidParams(violations) => ApiError::Rule(RuleError::InvalidParams(
            violations
                .into_iter()
                .map(|violation| {
                    let path = match violation.path.strip_prefix("params") {
                        Some(rest) => rest.trim_start_matches('.').to_owned(),
                        None => violation.path,
                    };
                    Violation::new(path, violation.message)
                })
                .collect(),
        )),
        other => ApiError::Rule(other),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_line_names_the_tool_the_advice_and_the_report_on_one_line() {
        let report = BlockedReport {
            kind: BlockedKind::Policy,
            detail: "script-src-elem inline".to_owned(),
        };
        assert_eq!(
            line("ten-lines", &report),
            format!(
                "dev tool ten-lines: {} (policy: script-src-elem inline)",
                report.advice()
            )
        );
        let report = BlockedReport {
            kind: BlockedKind::Policy,
            detail: "img-src https://x.example/\nfake line\u{1b}[31m".to_owned(),
        };
        let printed = line("ten-lines", &report);
        assert_eq!(printed.lines().count(), 1, "{printed}");
        assert!(!printed.contains('\u{1b}'), "{printed}");
        assert!(
            printed.ends_with("(policy: img-src https://x.example/\\nfake line\\u{1b}[31m)"),
            "{printed}"
        );
    }
}
