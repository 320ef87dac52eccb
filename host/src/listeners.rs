//! Page callbacks (`onChange`, `onCall`): registered, removed by the function
//! the registration returned, and called so that one that throws cannot stop
//! the others or the host.

use std::cell::{Cell, RefCell};
use std::rc::{Rc, Weak};

use js_sys::Function;
use wasm_bindgen::JsValue;
use wasm_bindgen::closure::Closure;

/// A set of JavaScript callbacks.
#[derive(Default)]
pub(crate) struct Listeners {
    entries: RefCell<Vec<(u32, Function)>>,
    next: Cell<u32>,
}

impl Listeners {
    /// Adds `listener`; the returned function removes it again.
    pub(crate) fn add(self: &Rc<Self>, listener: Function) -> Function {
        let id = self.next.get();
        self.next.set(id.wrapping_add(1));
        self.entries.borrow_mut().push((id, listener));
        let weak: Weak<Self> = Rc::downgrade(self);
        let remove = Closure::<dyn FnMut()>::new(move || {
            if let Some(listeners) = weak.upgrade() {
                listeners
                    .entries
                    .borrow_mut()
                    .retain(|(entry, _)| *entry != id);
            }
        });
        remove.into_js_value().into()
    }

    /// Whether anyone is listening (so that a costly argument can be skipped).
    pub(crate) fn is_empty(&self) -> bool {
        self.entries.borrow().is_empty()
    }

    /// Calls every listener with `first` and `second`. A listener that throws
    /// is reported on the console; the rest still run.
    pub(crate) fn emit(&self, first: &JsValue, second: &JsValue) {
        // A listener may add or remove listeners: call a snapshot.
        let snapshot: Vec<Function> = self
            .entries
            .borrow()
            .iter()
            .map(|(_, f)| f.clone())
            .collect();
        for listener in snapshot {
            if let Err(error) = listener.call2(&JsValue::NULL, first, second) {
                web_sys::console::error_2(
                    &JsValue::from_str("[toolbridge host] a listener threw:"),
                    &error,
                );
            }
        }
    }

    /// Removes every listener.
    pub(crate) fn clear(&self) {
        self.entries.borrow_mut().clear();
    }
}
