//! Extensions beyond bridge 2.1.0, and which of them a host offers a tool.
//!
//! `bridge.version` stays `"2.1.0"`. A host lists what it offers beyond it
//! in the welcome's `capabilities`, and a tool asks `bridge.supports(name)`
//! before it relies on one, so a tool written for a plain 2.1.0 host keeps
//! working and an extension degrades cleanly where it is missing. What is
//! offered follows from what the page installed (the tool's manifest type,
//! the `autoResize` bounds, `settings`, `identity` and `fetch` it mounted
//! the tool with, and the hooks it set), never from anything the tool says.
//! `session.ended` and `connectivity` are offered to every tool.

use std::fmt;

use serde::{Deserialize, Serialize};

use crate::manifest::ToolType;
use crate::method::Method;

/// One extension, named on the wire as a tool names it in `supports`: an
/// extension method by the method's name, the others by their own.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(into = "&'static str", try_from = "String")]
pub enum Capability {
    /// The `quotes.getOpen` method (`quoting_extension` tools).
    QuotesGetOpen,
    /// The `quote.changed` event (`quoting_extension` tools).
    QuoteChanged,
    /// The `session.ended` event (every tool).
    SessionEnded,
    /// The `settings.get` method (the page mounted the tool with settings).
    SettingsGet,
    /// The `settings.changed` event (the page mounted the tool with
    /// settings).
    SettingsChanged,
    /// The host sizes the tool's frame from the heights bridge.js reports
    /// (`ui.autoResize`).
    UiAutoResize,
    /// The `ui.toast` method (the page set `host.onToast`).
    UiToast,
    /// The `ui.confirm` method (the page set `host.onConfirm`).
    UiConfirm,
    /// The `ui.openQuote` method (the page set `host.onNavigate`).
    UiOpenQuote,
    /// The `auth.getToken` method (the page mounted the tool with
    /// `identity`, which it takes from the installed manifest's
    /// `permissions.identity`).
    AuthGetToken,
    /// The `context.changed` event (the page gave the host its context with
    /// `host.setContext`).
    ContextChanged,
    /// The `fetch` method, the server's fetch for the tool (the page mounted
    /// the tool with `fetch`, which it sets when the installed manifest lists
    /// `permissions.connect`).
    Fetch,
    /// Whether the server can be reached: the `connectivity.get` method and
    /// the `connectivity.changed` event (every tool).
    Connectivity,
}

impl Capability {
    /// Every capability, in the order a welcome lists them.
    pub const ALL: [Capability; 13] = [
        Capability::QuotesGetOpen,
        Capability::QuoteChanged,
        Capability::SessionEnded,
        Capability::SettingsGet,
        Capability::SettingsChanged,
        Capability::UiAutoResize,
        Capability::UiToast,
        Capability::UiConfirm,
        Capability::UiOpenQuote,
        Capability::AuthGetToken,
        Capability::ContextChanged,
        Capability::Fetch,
        Capability::Connectivity,
    ];

    /// The wire name, e.g. `"quote.changed"`.
    pub fn name(self) -> &'static str {
        match self {
            Capability::QuoteChanged => "quote.changed",
            Capability::SessionEnded => "session.ended",
            Capability::SettingsChanged => "settings.changed",
            Capability::UiAutoResize => "ui.autoResize",
            Capability::ContextChanged => "context.changed",
            Capability::Connectivity => "connectivity",
            Capability::QuotesGetOpen
            | Capability::SettingsGet
            | Capability::UiToast
            | Capability::UiConfirm
            | Capability::UiOpenQuote
            | Capability::AuthGetToken
            | Capability::Fetch => self.method().map_or("", Method::name),
        }
    }

    /// Parses a wire name (exact match).
    pub fn from_name(name: &str) -> Option<Self> {
        Self::ALL.into_iter().find(|c| c.name() == name)
    }

    /// The extension method this capability offers; `None` for an event or
    /// something the host does. (`connectivity` offers a method and an
    /// event under one name.)
    pub fn method(self) -> Option<Method> {
        match self {
            Capability::Connectivity => Some(Method::ConnectivityGet),
            Capability::QuotesGetOpen => Some(Method::QuotesGetOpen),
            Capability::SettingsGet => Some(Method::SettingsGet),
            Capability::UiToast => Some(Method::UiToast),
            Capability::UiConfirm => Some(Method::UiConfirm),
            Capability::UiOpenQuote => Some(Method::UiOpenQuote),
            Capability::AuthGetToken => Some(Method::AuthGetToken),
            Capability::Fetch => Some(Method::Fetch),
            Capability::QuoteChanged
            | Capability::SessionEnded
            | Capability::SettingsChanged
            | Capability::UiAutoResize
            | Capability::ContextChanged => None,
        }
    }

    /// The capability an extension method is offered as; `None` for the
    /// methods of the specification.
    pub fn of_method(method: Method) -> Option<Self> {
        Self::ALL.into_iter().find(|c| c.method() == Some(method))
    }

    /// Whether the capability depends on what the page set up (the mount's
    /// `autoResize`, `settings`, `identity` or `fetch`, a hook) rather than on
    /// the tool's type.
    pub fn is_up_to_the_page(self) -> bool {
        matches!(
            self,
            Capability::SettingsGet
                | Capability::SettingsChanged
                | Capability::UiAutoResize
                | Capability::UiToast
                | Capability::UiConfirm
                | Capability::UiOpenQuote
                | Capability::AuthGetToken
                | Capability::ContextChanged
                | Capability::Fetch
        )
    }

    /// Whether the host offers this capability to a tool of `tool_type`,
    /// where the page set up those in `page` (capabilities that are
    /// [up to the page](Self::is_up_to_the_page); others in it are ignored).
    pub fn offered(self, tool_type: ToolType, page: &[Capability]) -> bool {
        match self {
            Capability::QuotesGetOpen | Capability::QuoteChanged => {
                tool_type == ToolType::QuotingExtension
            }
            Capability::SessionEnded | Capability::Connectivity => true,
            _ => page.contains(&self),
        }
    }

    /// The capabilities offered to a tool of `tool_type` where the page set
    /// up those in `page`, for the welcome.
    pub fn offered_to(tool_type: ToolType, page: &[Capability]) -> Vec<Capability> {
        Self::ALL
            .into_iter()
            .filter(|c| c.offered(tool_type, page))
            .collect()
    }

    /// What the page must set up for this capability, by its name in the
    /// host's API (`"host.onToast"`, `"the mount's settings option"`);
    /// `None` for those that follow from the tool's type.
    pub fn page_setup(self) -> Option<&'static str> {
        match self {
            Capability::UiToast => Some("host.onToast"),
            Capability::UiConfirm => Some("host.onConfirm"),
            Capability::UiOpenQuote => Some("host.onNavigate"),
            Capability::SettingsGet | Capability::SettingsChanged => {
                Some("the mount's settings option")
            }
            Capability::UiAutoResize => Some("the mount's autoResize option"),
            Capability::AuthGetToken => Some("the mount's identity option"),
            Capability::Fetch => Some("the mount's fetch option"),
            Capability::ContextChanged => Some("host.setContext"),
            _ => None,
        }
    }
}

impl From<Capability> for &'static str {
    fn from(capability: Capability) -> Self {
        capability.name()
    }
}

impl TryFrom<String> for Capability {
    type Error = String;

    fn try_from(name: String) -> Result<Self, String> {
        Capability::from_name(&name).ok_or_else(|| format!("{name:?} is not a capability"))
    }
}

impl fmt::Display for Capability {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn wire_names_round_trip() {
        for capability in Capability::ALL {
            assert_eq!(
                serde_json::to_value(capability).unwrap(),
                serde_json::json!(capability.name())
            );
            assert_eq!(Capability::from_name(capability.name()), Some(capability));
        }
        assert_eq!(Capability::from_name("ui.Toast"), None);
        let unknown = serde_json::from_value::<Capability>(serde_json::json!("ui.Toast"));
        assert!(unknown.is_err_and(|error| {
            error
                .to_string()
                .contains("\"ui.Toast\" is not a capability")
        }));
    }

    #[test]
    fn each_extension_method_is_offered_as_the_capability_of_its_name() {
        for method in Method::EXTENSIONS {
            let capability = Capability::of_method(method).unwrap();
            if method == Method::ConnectivityGet {
                // A method and an event, offered together under one name.
                assert_eq!(capability, Capability::Connectivity);
                assert_eq!(capability.name(), "connectivity");
            } else {
                assert_eq!(capability.name(), method.name());
            }
        }
        for method in Method::SPEC {
            assert_eq!(Capability::of_method(method), None, "{method}");
        }
    }

    #[test]
    fn the_open_quote_is_for_quoting_extensions_and_the_ui_for_pages_with_hooks() {
        let none: &[Capability] = &[];
        assert_eq!(
            Capability::offered_to(ToolType::Standalone, none),
            [Capability::SessionEnded, Capability::Connectivity]
        );
        assert_eq!(
            Capability::offered_to(ToolType::QuotingExtension, none),
            [
                Capability::QuotesGetOpen,
                Capability::QuoteChanged,
                Capability::SessionEnded,
                Capability::Connectivity
            ]
        );
        let all = Capability::ALL;
        assert!(all.iter().filter(|c| c.is_up_to_the_page()).count() == 9);
        assert!(
            all.iter()
                .all(|c| c.is_up_to_the_page() == c.page_setup().is_some())
        );
        assert_eq!(
            Capability::offered_to(ToolType::QuotingExtension, &all),
            Capability::ALL
        );
        let standalone = Capability::offered_to(ToolType::Standalone, &all);
        assert!(!standalone.contains(&Capability::QuotesGetOpen));
        assert!(!standalone.contains(&Capability::QuoteChanged));
        assert_eq!(standalone.len(), Capability::ALL.len() - 2);
        // So is the context's event.
        assert_eq!(
            Capability::offered_to(ToolType::Standalone, &[Capability::ContextChanged]),
            [
                Capability::SessionEnded,
                Capability::ContextChanged,
                Capability::Connectivity
            ]
        );
        assert_eq!(Capability::ContextChanged.name(), "context.changed");
        // Settings are the page's to give, to a tool of either type.
        let settings = [Capability::SettingsGet, Capability::SettingsChanged];
        assert_eq!(
            Capability::offered_to(ToolType::Standalone, &settings),
            [
                Capability::SessionEnded,
                Capability::SettingsGet,
                Capability::SettingsChanged,
                Capability::Connectivity
            ]
        );
        // The type decides the quote's capabilities, whatever the page says.
        let toast_only = [Capability::UiToast, Capability::QuotesGetOpen];
        assert_eq!(
            Capability::offered_to(ToolType::Standalone, &toast_only),
            [
                Capability::SessionEnded,
                Capability::UiToast,
                Capability::Connectivity
            ]
        );
    }

    #[test]
    fn connectivity_is_offered_to_every_tool_whatever_the_page_set_up() {
        assert_eq!(Capability::Connectivity.name(), "connectivity");
        assert_eq!(
            Capability::from_name("connectivity"),
            Some(Capability::Connectivity)
        );
        assert_eq!(
            Capability::Connectivity.method(),
            Some(Method::ConnectivityGet)
        );
        assert_eq!(
            Capability::of_method(Method::ConnectivityGet),
            Some(Capability::Connectivity)
        );
        assert!(!Capability::Connectivity.is_up_to_the_page());
        assert_eq!(Capability::Connectivity.page_setup(), None);
        for tool_type in [ToolType::Standalone, ToolType::QuotingExtension] {
            assert!(Capability::Connectivity.offered(tool_type, &[]));
            assert!(Capability::Connectivity.offered(tool_type, &Capability::ALL));
        }
    }

    #[test]
    fn the_identity_token_is_offered_only_where_the_page_mounted_the_tool_with_identity() {
        assert_eq!(Capability::AuthGetToken.name(), "auth.getToken");
        assert_eq!(
            Capability::AuthGetToken.method(),
            Some(Method::AuthGetToken)
        );
        for tool_type in [ToolType::Standalone, ToolType::QuotingExtension] {
            // Without the mount's identity option: never, whatever else the page set up.
            let everything_else: Vec<Capability> = Capability::ALL
                .into_iter()
                .filter(|c| *c != Capability::AuthGetToken)
                .collect();
            assert!(
                !Capability::offered_to(tool_type, &everything_else)
                    .contains(&Capability::AuthGetToken)
            );
            // With it: to a tool of either type.
            assert!(
                Capability::offered_to(tool_type, &[Capability::AuthGetToken])
                    .contains(&Capability::AuthGetToken)
            );
        }
        assert_eq!(
            Capability::AuthGetToken.page_setup(),
            Some("the mount's identity option")
        );
    }

    #[test]
    fn the_server_s_fetch_is_offered_only_where_the_page_mounted_the_tool_with_fetch() {
        assert_eq!(Capability::Fetch.name(), "fetch");
        assert_eq!(Capability::Fetch.method(), Some(Method::Fetch));
        assert_eq!(
            Capability::of_method(Method::Fetch),
            Some(Capability::Fetch)
        );
        assert_eq!(Capability::from_name("fetch"), Some(Capability::Fetch));
        for tool_type in [ToolType::Standalone, ToolType::QuotingExtension] {
            // Without the mount's fetch option: never, whatever else the page set up
            // (the identity token included).
            let everything_else: Vec<Capability> = Capability::ALL
                .into_iter()
                .filter(|c| *c != Capability::Fetch)
                .collect();
            assert!(
                !Capability::offered_to(tool_type, &everything_else).contains(&Capability::Fetch)
            );
            // With it: to a tool of either type, and nothing else with it.
            assert_eq!(
                Capability::offered_to(tool_type, &[Capability::Fetch])
                    .into_iter()
                    .filter(|c| c.is_up_to_the_page())
                    .collect::<Vec<_>>(),
                [Capability::Fetch]
            );
        }
        assert_eq!(
            Capability::Fetch.page_setup(),
            Some("the mount's fetch option")
        );
    }
}
