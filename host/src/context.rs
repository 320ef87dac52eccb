//! The host's context beyond 2.1.0 as the page gives it: `host.setContext({timeZone, currency,
//! locale, units, theme})`. The page knows them first (its own session, its settings page), so
//! its values win over those of `GET /me`; `context.get` answers both together, and each change
//! reaches the tools that were offered `context.changed` with only what changed. A page that has
//! given its context before mounting a tool offers it `context.changed`, and its welcome carries
//! the theme, which bridge.js applies to the tool's document at once.

use std::cell::{Cell, RefCell};

use toolbridge_protocol::capability::Capability;
use toolbridge_protocol::context::{ContextField, ContextValues, Theme};
use toolbridge_protocol::notification::HostEvent;
use wasm_bindgen::JsValue;
use wasm_bindgen::prelude::wasm_bindgen;

use crate::error::HostError;
use crate::host::{Host, Shared};
use crate::json;

/// What the page told the host of its context.
#[derive(Default)]
pub(crate) struct PageContext {
    /// The values it gave, each the latest.
    values: RefCell<ContextValues>,
    /// Whether it ever called `setContext` (from then on, tools are offered `context.changed`).
    given: Cell<bool>,
}

impl PageContext {
    /// The page's values set over `values` (what `GET /me` said).
    pub(crate) fn apply_to(&self, values: &mut ContextValues) {
        values.apply(&self.values.borrow());
    }

    /// Forgets the page's values (another user may sign in); tools are still offered
    /// `context.changed`.
    pub(crate) fn forget(&self) {
        *self.values.borrow_mut() = ContextValues::default();
    }
}

impl Shared {
    /// Whether the page gave the host its context, so that tools are offered `context.changed`.
    pub(crate) fn keeps_context(&self) -> bool {
        self.page_context.given.get()
    }

    /// The theme the page gave, if it did: what a welcome carries. (Not that of `GET /me`, which
    /// may or may not have been read by the time a tool says hello.)
    pub(crate) fn theme(&self) -> Option<Theme> {
        self.page_context.values.borrow().theme
    }

    /// The page's new values: kept, set over the kept user's context, and told to the tools
    /// offered `context.changed` (only the values that changed, and nothing when none did).
    fn set_page_context(&self, update: &ContextValues) -> Result<(), HostError> {
        let before = self.kept_values().unwrap_or_else(|| {
            let mut known = ContextValues::default();
            self.page_context.apply_to(&mut known);
            known
        });
        let changed = update.changed_from(&before);
        self.page_context.values.borrow_mut().apply(update);
        self.page_context.given.set(true);
        self.reapply_page_context()?;
        if changed.is_empty() {
            return Ok(());
        }
        let message = HostEvent::ContextChanged(&changed)
            .to_json()
            .map_err(HostError::Bridge)?;
        let Some(message) = json::parse(&js_sys::JsString::from(message)) else {
            return Ok(());
        };
        for port in self.ports_offering(Capability::ContextChanged) {
            // A closed port (the tool just went away) takes nothing.
            let _ = port.post_message(&message);
        }
        Ok(())
    }
}

#[wasm_bindgen]
impl Host {
    /// Gives the host the page's context beyond bridge 2.1.0: any of `timeZone` (an IANA name),
    /// `currency` (an ISO 4217 code), `locale` (a BCP 47 tag), `units` (`"metric"` or
    /// `"imperial"`) and `theme` (`"light"` or `"dark"`). Values left out stay as they were. They
    /// win over those of `GET /me` in `context.get`, and every connected tool that was offered
    /// `context.changed` hears the values that changed. Call it before mounting tools: a welcome
    /// offers `context.changed` (and carries the theme, which bridge.js applies to the tool's
    /// page) only once the page has. Throws `USAGE` naming each value that breaks its rule.
    #[wasm_bindgen(js_name = setContext)]
    pub fn set_context(
        &self,
        #[wasm_bindgen(unchecked_param_type = "HostContext")] values: &JsValue,
    ) -> Result<(), JsValue> {
        let value = json::from_js(values).ok_or_else(|| {
            HostError::usage("setContext: the values must be a plain object of strings")
        })?;
        let (update, _) =
            ContextValues::read(&value, &ContextField::ALL, false).map_err(|error| {
                let problems: Vec<String> =
                    error.details().iter().map(ToString::to_string).collect();
                HostError::usage(format!("setContext: {}", problems.join("; ")))
            })?;
        self.shared().set_page_context(&update)?;
        Ok(())
    }
}
