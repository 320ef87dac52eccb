//! What the host tells tools without being asked, as JSON-RPC notifications
//! on their private ports (`quote.changed`, `session.ended`,
//! `settings.changed`, and `bridge.deprecated` to a tool that used a
//! deprecated part of the bridge), and what it
//! does with the notifications tools send it beyond `sdk.blocked`
//! (`ui.resize`).

use js_sys::JsString;
use serde_json::{Map, Value};
use toolbridge_protocol::capability::Capability;
use toolbridge_protocol::manifest::ToolType;
use toolbridge_protocol::notification::{Deprecation, HostEvent, SessionEndReason};
use wasm_bindgen::JsValue;
use web_sys::{HtmlIFrameElement, MessagePort};

use crate::debug::DroppedRecord;
use crate::editor::{Change, QuoteView};
use crate::host::Shared;
use crate::json;

impl Shared {
    /// The ports of the connected tools whose welcome offered `capability`.
    pub(crate) fn ports_offering(&self, capability: Capability) -> Vec<MessagePort> {
        self.tools
            .borrow()
            .iter()
            .filter_map(|mounted| mounted.link.as_ref())
            .filter(|link| link.offers(capability))
            .map(|link| link.port.clone())
            .collect()
    }

    /// Posts the event `encode` makes to every tool that was offered
    /// `capability`; the message is made once, and only when some tool
    /// listens.
    fn post_event(&self, capability: Capability, encode: impl FnOnce() -> Option<JsValue>) {
        post(&self.ports_offering(capability), encode);
    }

    /// Tells the quoting extensions what happened to the open quote, with
    /// the quote as `quotes.getOpen` answers it now, and then the page's
    /// `onChange` listeners. The quote's amounts are worked out once for
    /// both, and not at all when nobody listens; when only tools listen, the
    /// quote they read is made straight from the open quote's lines.
    pub(crate) fn emit_change(&self, change: &Change) {
        let ports = self.ports_offering(Capability::QuoteChanged);
        if !self.has_change_listeners() {
            post(&ports, || {
                let quote = self.editor.borrow().for_tools();
                encode(&HostEvent::QuoteChanged {
                    kind: change.kind_for_tools(),
                    quote: quote.as_ref(),
                })
            });
            return;
        }
        let view = self.editor.borrow().view();
        post(&ports, || {
            let quote = view.as_ref().map(QuoteView::for_tools);
            encode(&HostEvent::QuoteChanged {
                kind: change.kind_for_tools(),
                quote: quote.as_ref(),
            })
        });
        self.tell_change_listeners(view.as_ref(), change);
    }

    /// The session ended: forgets the user and tells every connected tool,
    /// once, until a user is known again.
    pub(crate) fn end_session(&self, reason: SessionEndReason) {
        self.forget_context();
        if self.session_ended.replace(true) {
            return;
        }
        self.post_event(Capability::SessionEnded, || {
            encode(&HostEvent::SessionEnded(reason))
        });
    }

    /// Replaces the install settings of every mount of `slug` that has
    /// settings (one without is left alone), and tells each of those that is
    /// connected and was offered it with `settings.changed`.
    pub(crate) fn set_tool_settings(&self, slug: &str, settings: &Map<String, Value>) {
        let ports: Vec<MessagePort> = self
            .tools
            .borrow_mut()
            .iter_mut()
            .filter(|mounted| mounted.tool.slug == slug)
            .filter_map(|mounted| {
                mounted.tool.settings.as_mut()?.clone_from(settings);
                let link = mounted.link.as_ref()?;
                link.offers(Capability::SettingsChanged)
                    .then(|| link.port.clone())
            })
            .collect();
        post(&ports, || encode(&HostEvent::SettingsChanged(settings)));
    }

    /// Gives up the `ui.confirm` dialogs of the quoting extensions: their
    /// question was about a quote that is no longer the open one.
    pub(crate) fn abandon_quote_dialogs(&self) {
        for mounted in self.tools.borrow_mut().iter_mut() {
            if mounted.tool.tool_type == ToolType::QuotingExtension {
                if let Some(link) = mounted.link.as_mut() {
                    link.abandon_confirm();
                }
            }
        }
    }

    /// A tool reported its document's height: sizes its frame within the
    /// bounds the page mounted it with.
    pub(crate) fn resize_frame(&self, key: u32, height: f64) {
        let tools = self.tools.borrow();
        let Some(mounted) = tools.get(key) else {
            return;
        };
        match mounted.tool.auto_resize {
            Some(bounds) => set_frame_height(&mounted.frame, bounds.height_for(height)),
            None => self.debug.dropped(DroppedRecord {
                reason: format!(
                    "a ui.resize report, but the page mounted tool {} without autoResize",
                    mounted.tool.slug
                ),
                origin: mounted.tool.origin.clone(),
                tool: Some(mounted.tool.slug.clone()),
            }),
        }
    }
}

/// Tells the tool on `port` that its call used `deprecation`; bridge.js
/// shows the notice on the tool's console, once per page.
pub(crate) fn tell_deprecation(port: &MessagePort, deprecation: Deprecation) {
    if let Some(notice) = json::parse(&JsString::from(deprecation.to_json())) {
        // A closed port (the tool just went away) takes nothing.
        let _ = port.post_message(&notice);
    }
}

/// Posts the message `encode` makes to `ports`, when there are any.
fn post(ports: &[MessagePort], encode: impl FnOnce() -> Option<JsValue>) {
    if ports.is_empty() {
        return;
    }
    let Some(message) = encode() else {
        return;
    };
    for port in ports {
        // A closed port (the tool just went away) takes nothing.
        let _ = port.post_message(&message);
    }
}

/// Sets a tool frame's height in CSS pixels.
pub(crate) fn set_frame_height(frame: &HtmlIFrameElement, height: u32) {
    let _ = frame.style().set_property("height", &format!("{height}px"));
}

/// A notification as a JavaScript value, ready to post.
fn encode(event: &HostEvent<'_>) -> Option<JsValue> {
    match event.to_json() {
        Ok(text) => json::parse(&JsString::from(text)),
        Err(error) => {
            web_sys::console::error_1(&JsValue::from_str(&error.to_string()));
            None
        }
    }
}
