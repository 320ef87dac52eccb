//! The tools mounted in the page: each one's frame, registered origin and
//! manifest type, and its private port once the handshake is done.

use std::rc::Weak;

use js_sys::Object;
use toolbridge_protocol::capability::Capability;
use toolbridge_protocol::manifest::ToolType;
use toolbridge_protocol::ui::ToastLimiter;
use wasm_bindgen::JsValue;
use wasm_bindgen::closure::Closure;
use wasm_bindgen::prelude::wasm_bindgen;
use web_sys::{AbortController, HtmlIFrameElement, MessageEvent, MessagePort};

use crate::host::Shared;
use crate::options::ToolOptions;

/// The frame's sandbox (DESIGN.md §6): scripts, its own origin (so its
/// `localStorage` works), forms and popups; no modals, no top navigation.
pub(crate) const SANDBOX: &str = "allow-scripts allow-same-origin allow-forms allow-popups";

/// A connected tool's private channel. Dropping it (the tool reloaded or
/// was unmounted) closes the port and gives up its open dialog.
pub(crate) struct Link {
    /// The SDK's per-page-load token from its hello.
    pub(crate) instance: String,
    /// The host's end of the channel.
    pub(crate) port: MessagePort,
    /// What the welcome offered this page load.
    pub(crate) capabilities: Vec<Capability>,
    /// The `ui.confirm` dialog the page shows for this tool, if any:
    /// aborting it tells the page to close it, and answers `false`.
    pub(crate) confirm: Option<AbortController>,
    _on_message: Closure<dyn FnMut(MessageEvent)>,
}

impl Link {
    /// A link over `port`, answered by `on_message`.
    pub(crate) fn new(
        instance: String,
        port: MessagePort,
        capabilities: Vec<Capability>,
        on_message: Closure<dyn FnMut(MessageEvent)>,
    ) -> Self {
        port.set_onmessage(Some(wasm_bindgen::JsCast::unchecked_ref(
            on_message.as_ref(),
        )));
        Self {
            instance,
            port,
            capabilities,
            confirm: None,
            _on_message: on_message,
        }
    }

    /// Whether the welcome offered `capability`.
    pub(crate) fn offers(&self, capability: Capability) -> bool {
        self.capabilities.contains(&capability)
    }

    /// Gives up the open `ui.confirm` dialog, if any.
    pub(crate) fn abandon_confirm(&mut self) {
        if let Some(dialog) = self.confirm.take() {
            dialog.abort();
        }
    }
}

impl Drop for Link {
    fn drop(&mut self) {
        self.abandon_confirm();
        self.port.set_onmessage(None);
        self.port.close();
    }
}

/// One mounted tool.
pub(crate) struct Mounted {
    /// Identifies the mount (a slug may be mounted twice).
    pub(crate) key: u32,
    /// What the page said about the tool.
    pub(crate) tool: ToolOptions,
    /// The iframe the host created.
    pub(crate) frame: HtmlIFrameElement,
    /// The private channel, after the handshake.
    pub(crate) link: Option<Link>,
    /// The tool's `ui.toast` limit; kept across reloads, so a reload does
    /// not reset it.
    pub(crate) toasts: ToastLimiter,
}

/// Every mounted tool.
#[derive(Default)]
pub(crate) struct Registry {
    mounted: Vec<Mounted>,
    next_key: u32,
}

impl Registry {
    /// Registers a mounted frame; returns its key.
    pub(crate) fn add(&mut self, tool: ToolOptions, frame: HtmlIFrameElement) -> u32 {
        let key = self.next_key;
        self.next_key = self.next_key.wrapping_add(1);
        self.mounted.push(Mounted {
            key,
            tool,
            frame,
            link: None,
            toasts: ToastLimiter::default(),
        });
        key
    }

    /// Unregisters a tool, closing its port; returns it.
    pub(crate) fn remove(&mut self, key: u32) -> Option<Mounted> {
        let position = self.mounted.iter().position(|m| m.key == key)?;
        Some(self.mounted.remove(position))
    }

    /// Removes every tool.
    pub(crate) fn drain(&mut self) -> Vec<Mounted> {
        std::mem::take(&mut self.mounted)
    }

    /// The tool with this key.
    pub(crate) fn get(&self, key: u32) -> Option<&Mounted> {
        self.mounted.iter().find(|m| m.key == key)
    }

    /// The tool with this key, to change.
    pub(crate) fn get_mut(&mut self, key: u32) -> Option<&mut Mounted> {
        self.mounted.iter_mut().find(|m| m.key == key)
    }

    /// The tool whose frame's window is `source` (a message's
    /// `event.source`): identity, never anything the message says.
    pub(crate) fn key_of_window(&self, source: &Object) -> Option<u32> {
        let source: &JsValue = source.as_ref();
        self.mounted
            .iter()
            .find(|m| {
                m.frame
                    .content_window()
                    .is_some_and(|window| Object::is(window.as_ref(), source))
            })
            .map(|m| m.key)
    }

    /// Every mounted tool, in mount order.
    pub(crate) fn iter(&self) -> impl Iterator<Item = &Mounted> {
        self.mounted.iter()
    }

    /// Every mounted tool, to change.
    pub(crate) fn iter_mut(&mut self) -> impl Iterator<Item = &mut Mounted> {
        self.mounted.iter_mut()
    }
}

/// A tool mounted by `host.mount(…)`: its frame, and `unmount()`.
#[wasm_bindgen]
pub struct MountedTool {
    key: u32,
    shared: Weak<Shared>,
    slug: String,
    tool_type: ToolType,
    frame: HtmlIFrameElement,
}

impl MountedTool {
    pub(crate) fn new(
        key: u32,
        shared: Weak<Shared>,
        tool: &ToolOptions,
        frame: HtmlIFrameElement,
    ) -> Self {
        Self {
            key,
            shared,
            slug: tool.slug.clone(),
            tool_type: tool.tool_type,
            frame,
        }
    }
}

#[wasm_bindgen]
impl MountedTool {
    /// The tool's slug.
    #[wasm_bindgen(getter)]
    pub fn slug(&self) -> String {
        self.slug.clone()
    }

    /// The tool's type, as given to `mount`.
    #[wasm_bindgen(getter = type, unchecked_return_type = "ToolType")]
    pub fn tool_type(&self) -> String {
        self.tool_type.token().to_owned()
    }

    /// The iframe the host created for the tool.
    #[wasm_bindgen(getter)]
    pub fn frame(&self) -> HtmlIFrameElement {
        self.frame.clone()
    }

    /// Whether the tool has completed the handshake (and is still mounted).
    #[wasm_bindgen(getter)]
    pub fn connected(&self) -> bool {
        self.shared.upgrade().is_some_and(|shared| {
            shared
                .tools
                .borrow()
                .get(self.key)
                .is_some_and(|m| m.link.is_some())
        })
    }

    /// Removes the frame and closes the tool's port. Calls in flight get no
    /// answer; calling it twice does nothing.
    pub fn unmount(&self) {
        if let Some(shared) = self.shared.upgrade() {
            shared.unmount(self.key);
        } else {
            self.frame.remove();
        }
    }
}
