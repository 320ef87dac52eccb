//! The page's hooks for the `ui.*` extensions: `host.onToast`,
//! `host.onConfirm` and `host.onNavigate`. Each renders a tool's request the
//! page's own way (its toasts, its dialog, its router). A hook that is not
//! set means the extension is not offered, and a call to it is refused with
//! `NOT_ALLOWED` naming the missing hook.

use std::cell::{Cell, RefCell};
use std::rc::{Rc, Weak};

use js_sys::Function;
use toolbridge_protocol::Error;
use toolbridge_protocol::capability::Capability;
use wasm_bindgen::closure::Closure;

use crate::options::ToolOptions;

/// One hook: at most one function at a time; setting it again replaces it.
#[derive(Default)]
pub(crate) struct Hook {
    current: Rc<RefCell<Option<(u32, Function)>>>,
    next: Cell<u32>,
}

impl Hook {
    /// Sets `hook`; the returned function removes it again (unless it was
    /// replaced in the meantime).
    pub(crate) fn set(&self, hook: Function) -> Function {
        let id = self.next.get();
        self.next.set(id.wrapping_add(1));
        *self.current.borrow_mut() = Some((id, hook));
        let weak: Weak<RefCell<Option<(u32, Function)>>> = Rc::downgrade(&self.current);
        let remove = Closure::<dyn FnMut()>::new(move || {
            if let Some(current) = weak.upgrade() {
                let mut current = current.borrow_mut();
                if current.as_ref().is_some_and(|(set, _)| *set == id) {
                    *current = None;
                }
            }
        });
        remove.into_js_value().into()
    }

    /// The hook, when set.
    pub(crate) fn get(&self) -> Option<Function> {
        self.current.borrow().as_ref().map(|(_, hook)| hook.clone())
    }

    /// Removes the hook.
    pub(crate) fn clear(&self) {
        self.current.borrow_mut().take();
    }
}

/// The three hooks.
#[derive(Default)]
pub(crate) struct Hooks {
    pub(crate) toast: Hook,
    pub(crate) confirm: Hook,
    pub(crate) navigate: Hook,
}

impl Hooks {
    /// What the page sets up for `tool` now: the hooks set, auto-resize when
    /// the tool was mounted with bounds, the settings extensions when it was
    /// mounted with settings, the identity token when it was mounted with
    /// `identity`, and the server's fetch when it was mounted with `fetch`.
    pub(crate) fn offers(&self, tool: &ToolOptions) -> Vec<Capability> {
        let settings = tool.settings.is_some();
        [
            (Capability::AuthGetToken, tool.identity),
            (Capability::Fetch, tool.fetch),
            (Capability::SettingsGet, settings),
            (Capability::SettingsChanged, settings),
            (Capability::UiAutoResize, tool.auto_resize.is_some()),
            (Capability::UiToast, self.toast.get().is_some()),
            (Capability::UiConfirm, self.confirm.get().is_some()),
            (Capability::UiOpenQuote, self.navigate.get().is_some()),
        ]
        .into_iter()
        .filter_map(|(capability, set)| set.then_some(capability))
        .collect()
    }

    /// The hook a `ui.*` capability needs, or `NOT_ALLOWED` saying which
    /// hook the page has not set.
    pub(crate) fn for_capability(&self, capability: Capability) -> Result<Function, Error> {
        let hook = match capability {
            Capability::UiToast => &self.toast,
            Capability::UiConfirm => &self.confirm,
            Capability::UiOpenQuote => &self.navigate,
            _ => {
                return Err(Error::Internal(format!(
                    "{capability} is not answered by a page hook"
                )));
            }
        };
        hook.get().ok_or_else(|| {
            Error::NotAllowed(format!(
                "{capability} is not offered here: the host page has not set {} (check bridge.supports(\"{capability}\") first)",
                capability.page_setup().unwrap_or("its hook")
            ))
        })
    }

    /// Removes every hook.
    pub(crate) fn clear(&self) {
        self.toast.clear();
        self.confirm.clear();
        self.navigate.clear();
    }
}
