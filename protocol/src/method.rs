//! The bridge methods and who may call them: the nine of SPEC.md (2.1.0),
//! and the extension methods a host offers beyond them
//! ([`crate::capability`]).

use std::fmt;

use serde::{Deserialize, Serialize};

use crate::context::Role;
use crate::error::Error;
use crate::manifest::ToolType;

/// A bridge method, named on the wire exactly as SPEC.md names it.
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
pub enum Method {
    /// `context.get`
    #[serde(rename = "context.get")]
    ContextGet,
    /// `customers.list`
    #[serde(rename = "customers.list")]
    CustomersList,
    /// `products.list`
    #[serde(rename = "products.list")]
    ProductsList,
    /// `taskTemplates.list`
    #[serde(rename = "taskTemplates.list")]
    TaskTemplatesList,
    /// `costItems.list`
    #[serde(rename = "costItems.list")]
    CostItemsList,
    /// `jobs.list`
    #[serde(rename = "jobs.list")]
    JobsList,
    /// `quotes.list`
    #[serde(rename = "quotes.list")]
    QuotesList,
    /// `quotes.create`
    #[serde(rename = "quotes.create")]
    QuotesCreate,
    /// `quotes.addLines`
    #[serde(rename = "quotes.addLines")]
    QuotesAddLines,
    /// `quotes.getOpen` (extension): the open quote as the editor holds it.
    #[serde(rename = "quotes.getOpen")]
    QuotesGetOpen,
    /// `settings.get` (extension): the tool's install settings, as the page
    /// mounted it with them.
    #[serde(rename = "settings.get")]
    SettingsGet,
    /// `ui.toast` (extension): a toast in the host page.
    #[serde(rename = "ui.toast")]
    UiToast,
    /// `ui.confirm` (extension): a yes/no dialog rendered by the host page.
    #[serde(rename = "ui.confirm")]
    UiConfirm,
    /// `ui.openQuote` (extension): take the user to a quote.
    #[serde(rename = "ui.openQuote")]
    UiOpenQuote,
    /// `auth.getToken` (extension): a token the platform signed about the
    /// signed-in user, for the tool's own server (`crate::identity`).
    #[serde(rename = "auth.getToken")]
    AuthGetToken,
    /// `fetch` (extension): a request the toolbridge server makes for the
    /// tool, with the tenant's secret settings in it (`crate::fetch`).
    #[serde(rename = "fetch")]
    Fetch,
    /// `connectivity.get` (extension): whether the server can be reached
    /// from the browser now, as the host knows it.
    #[serde(rename = "connectivity.get")]
    ConnectivityGet,
}

impl Method {
    /// The nine methods of SPEC.md, version 2.1.0: what the welcome's
    /// `methods` lists.
    pub const SPEC: [Method; 9] = [
        Method::ContextGet,
        Method::CustomersList,
        Method::ProductsList,
        Method::TaskTemplatesList,
        Method::CostItemsList,
        Method::JobsList,
        Method::QuotesList,
        Method::QuotesCreate,
        Method::QuotesAddLines,
    ];

    /// The extension methods, each offered as the capability of the same
    /// name.
    pub const EXTENSIONS: [Method; 8] = [
        Method::QuotesGetOpen,
        Method::SettingsGet,
        Method::UiToast,
        Method::UiConfirm,
        Method::UiOpenQuote,
        Method::AuthGetToken,
        Method::Fetch,
        Method::ConnectivityGet,
    ];

    /// Every method a host answers: the specification's, then the
    /// extensions.
    pub const ALL: [Method; 17] = {
        let mut all = [Method::ContextGet; 17];
        let mut i = 0;
        while i < all.len() {
            all[i] = if i < Self::SPEC.len() {
                Self::SPEC[i]
            } else {
                Self::EXTENSIONS[i - Self::SPEC.len()]
            };
            i += 1;
        }
        all
    };

    /// The wire name, e.g. `"quotes.addLines"`.
    pub fn name(self) -> &'static str {
        match self {
            Method::ContextGet => "context.get",
            Method::CustomersList => "customers.list",
            Method::ProductsList => "products.list",
            Method::TaskTemplatesList => "taskTemplates.list",
            Method::CostItemsList => "costItems.list",
            Method::JobsList => "jobs.list",
            Method::QuotesList => "quotes.list",
            Method::QuotesCreate => "quotes.create",
            Method::QuotesAddLines => "quotes.addLines",
            Method::QuotesGetOpen => "quotes.getOpen",
            Method::SettingsGet => "settings.get",
            Method::UiToast => "ui.toast",
            Method::UiConfirm => "ui.confirm",
            Method::UiOpenQuote => "ui.openQuote",
            Method::AuthGetToken => "auth.getToken",
            Method::Fetch => "fetch",
            Method::ConnectivityGet => "connectivity.get",
        }
    }

    /// Parses a wire name (exact match).
    pub fn from_name(name: &str) -> Option<Self> {
        Self::ALL.into_iter().find(|m| m.name() == name)
    }

    /// Whether the method is a paged list.
    pub fn is_list(self) -> bool {
        matches!(
            self,
            Method::CustomersList
                | Method::ProductsList
                | Method::TaskTemplatesList
                | Method::CostItemsList
                | Method::JobsList
                | Method::QuotesList
        )
    }

    /// Whether the list takes `codes`.
    pub fn accepts_codes(self) -> bool {
        matches!(self, Method::TaskTemplatesList | Method::CostItemsList)
    }

    /// Whether the method creates or changes a quote. (`quotes.getOpen`
    /// only reads it.)
    pub fn writes_quotes(self) -> bool {
        matches!(self, Method::QuotesCreate | Method::QuotesAddLines)
    }

    /// Whether the method is one of the extensions beyond 2.1.0.
    pub fn is_extension(self) -> bool {
        Self::EXTENSIONS.contains(&self)
    }

    /// Whether the method works on the quote open in the editor, and so is
    /// only for `quoting_extension` tools.
    pub fn needs_open_quote(self) -> bool {
        matches!(self, Method::QuotesAddLines | Method::QuotesGetOpen)
    }

    /// Whether the host may need the server to answer the method, and so
    /// refuses it at once with `OFFLINE` while the server cannot be reached
    /// (see [`crate::connectivity`]). The others are answered in the browser
    /// and keep working offline: `quotes.addLines` and `quotes.getOpen` (the
    /// open quote), `settings.get`, the `ui.*` requests the page answers,
    /// and `connectivity.get` itself. `context.get` needs the server only
    /// until the host knows the signed-in user: a host answers it from what
    /// it keeps before it asks this.
    pub fn needs_server(self) -> bool {
        match self {
            Method::ContextGet
            | Method::CustomersList
            | Method::ProductsList
            | Method::TaskTemplatesList
            | Method::CostItemsList
            | Method::JobsList
            | Method::QuotesList
            | Method::QuotesCreate
            // It checks that the quote exists before the page takes the user there.
            | Method::UiOpenQuote
            | Method::AuthGetToken
            | Method::Fetch => true,
            Method::QuotesAddLines
            | Method::QuotesGetOpen
            | Method::SettingsGet
            | Method::UiToast
            | Method::UiConfirm
            | Method::ConnectivityGet => false,
        }
    }

    /// Whether a tool of this type may call the method at all.
    pub fn allowed_for(self, tool_type: ToolType) -> bool {
        !self.needs_open_quote() || tool_type == ToolType::QuotingExtension
    }

    /// The methods of SPEC.md a tool of this type may call, for the
    /// welcome's `methods` (the extensions go in its `capabilities`).
    pub fn granted_to(tool_type: ToolType) -> Vec<Method> {
        Self::SPEC
            .into_iter()
            .filter(|m| m.allowed_for(tool_type))
            .collect()
    }

    /// `NOT_ALLOWED` when the tool's type or the user's role does not permit
    /// the call.
    pub fn authorize(self, tool_type: ToolType, role: Role) -> Result<(), Error> {
        self.authorize_tool(tool_type)?;
        self.authorize_role(role)
    }

    /// `NOT_ALLOWED` when a tool of this type may not call the method.
    pub fn authorize_tool(self, tool_type: ToolType) -> Result<(), Error> {
        if self.allowed_for(tool_type) {
            Ok(())
        } else {
            Err(Error::NotAllowed(format!(
                "{self} is only for {} tools; this tool is {tool_type} (its manifest type)",
                ToolType::QuotingExtension
            )))
        }
    }

    /// `NOT_ALLOWED` when the signed-in user's role may not call the method.
    pub fn authorize_role(self, role: Role) -> Result<(), Error> {
        if self.writes_quotes() && !role.can_write_quotes() {
            Err(Error::NotAllowed(format!(
                "{} users can read quotes but not create or change them",
                role.label()
            )))
        } else {
            Ok(())
        }
    }
}

impl fmt::Display for Method {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_open_quote_settings_the_page_s_dialogs_and_connectivity_work_without_the_server() {
        let local: Vec<&str> = Method::ALL
            .into_iter()
            .filter(|method| !method.needs_server())
            .map(Method::name)
            .collect();
        assert_eq!(
            local,
            [
                "quotes.addLines",
                "quotes.getOpen",
                "settings.get",
                "ui.toast",
                "ui.confirm",
                "connectivity.get"
            ]
        );
        // Every list reads the server, and so does whatever creates, checks or signs.
        for method in Method::ALL.into_iter().filter(|m| m.is_list()) {
            assert!(method.needs_server(), "{method}");
        }
        for method in [
            Method::ContextGet,
            Method::QuotesCreate,
            Method::UiOpenQuote,
            Method::AuthGetToken,
            Method::Fetch,
        ] {
            assert!(method.needs_server(), "{method}");
        }
    }

    #[test]
    fn connectivity_get_is_an_extension_any_tool_and_role_may_call() {
        let method = Method::ConnectivityGet;
        assert!(method.is_extension());
        assert_eq!(Method::from_name("connectivity.get"), Some(method));
        assert_eq!(
            serde_json::to_value(method).unwrap(),
            serde_json::json!("connectivity.get")
        );
        for tool_type in [ToolType::Standalone, ToolType::QuotingExtension] {
            assert!(
                method.authorize(tool_type, Role::Field).is_ok(),
                "{tool_type}"
            );
        }
        assert!(!Method::granted_to(ToolType::QuotingExtension).contains(&method));
    }
}
