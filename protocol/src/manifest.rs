//! The tool manifest (`manifest.json` at a bundle's root) and tool types.

use std::fmt;

use serde::{Deserialize, Serialize};

/// How a tool is launched and what it may call.
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Default, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum ToolType {
    /// A sidebar panel from the tool launcher: reads, plus `quotes.create`.
    #[default]
    Standalone,
    /// Opened inside the quote editor: also `quotes.addLines`.
    QuotingExtension,
}

impl ToolType {
    /// Both types.
    pub const ALL: [ToolType; 2] = [ToolType::Standalone, ToolType::QuotingExtension];

    /// The manifest token.
    pub fn token(self) -> &'static str {
        match self {
            ToolType::Standalone => "standalone",
            ToolType::QuotingExtension => "quoting_extension",
        }
    }

    /// Parses a manifest token.
    pub fn from_token(token: &str) -> Option<Self> {
        Self::ALL.into_iter().find(|t| t.token() == token)
    }
}

impl fmt::Display for ToolType {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.token())
    }
}

/// Longest tool slug: the slug is a DNS label of the tool's own origin
/// (`<slug>.tools.localhost`).
pub const SLUG_MAX_LEN: usize = 63;

/// Whether `slug` names a tool: 1 to [`SLUG_MAX_LEN`] lower-case ASCII
/// letters, digits or inner hyphens, so that it is one DNS label.
pub fn is_tool_slug(slug: &str) -> bool {
    !slug.is_empty()
        && slug.len() <= SLUG_MAX_LEN
        && slug
            .bytes()
            .all(|b| b.is_ascii_lowercase() || b.is_ascii_digit() || b == b'-')
        && !slug.starts_with('-')
        && !slug.ends_with('-')
}

/// What a slug must look like, for messages.
pub const SLUG_RULE: &str = "1 to 63 lower-case letters, digits or inner hyphens";

/// `manifest.json`, with SPEC.md's field names. Checked by the `bundle`
/// crate; this is only its shape.
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct ToolManifest {
    /// Full display name.
    pub name: String,
    /// Short name for tabs and chrome.
    pub short_name: String,
    /// Tool type.
    #[serde(rename = "type")]
    pub tool_type: ToolType,
    /// Semver version of the tool.
    pub version: String,
    /// One-sentence description.
    pub description: String,
    /// Relative path of the HTML entry point.
    pub entry: String,
}
