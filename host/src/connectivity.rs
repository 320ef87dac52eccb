//! Whether the server can be reached from the browser, as the host knows it (the `connectivity`
//! extension): `navigator.onLine` to begin with, then the window's `online` and `offline` events
//! and the outcome of every backend request (`backend`): a request that fails on the network puts
//! the host offline, and any HTTP answer puts it online again. While offline, the host itself
//! asks the backend for `GET /me` every `connectivityCheckMs` until something answers. Each
//! change reaches the tools offered `connectivity` (`connectivity.changed`) and the page's
//! `host.onConnectivity` listeners. While offline, the backend sends nothing: calls and page
//! operations that need it fail at once with `OFFLINE`.

use std::cell::{Cell, RefCell};
use std::fmt;
use std::rc::{Rc, Weak};

use js_sys::{Function, JsString};
use toolbridge_protocol::capability::Capability;
use toolbridge_protocol::connectivity::Connectivity;
use toolbridge_protocol::notification::HostEvent;
use wasm_bindgen::closure::Closure;
use wasm_bindgen::prelude::wasm_bindgen;
use wasm_bindgen::{JsCast, JsValue};
use web_sys::Window;

use crate::host::{Host, Shared};
use crate::json;
use crate::listeners::Listeners;

/// What is called with the new state on each change.
type OnChange = Rc<dyn Fn(bool)>;

/// A window event's name, with the listener the host added for it.
type WindowListener = (&'static str, Closure<dyn FnMut()>);

/// The state itself, shared by the backend (which observes every request) and the host.
pub(crate) struct Reachability {
    online: Cell<bool>,
    /// Called with the new state on each change.
    on_change: RefCell<Option<OnChange>>,
}

impl fmt::Debug for Reachability {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Reachability")
            .field("online", &self.online.get())
            .finish_non_exhaustive()
    }
}

impl Reachability {
    /// Starting `online` (what the browser says).
    pub(crate) fn new(online: bool) -> Self {
        Self {
            online: Cell::new(online),
            on_change: RefCell::new(None),
        }
    }

    /// Whether the server can be reached, as far as the host knows.
    pub(crate) fn online(&self) -> bool {
        self.online.get()
    }

    /// What the browser or a request just showed; a change is told to the callback.
    pub(crate) fn observe(&self, online: bool) {
        if self.online.replace(online) == online {
            return;
        }
        // Taken out first: what it calls (a page's listener) may stop the host.
        let on_change = self.on_change.borrow().clone();
        if let Some(on_change) = on_change {
            on_change(online);
        }
    }

    /// Sets what is called on each change (replacing what was).
    fn set_on_change(&self, on_change: Option<OnChange>) {
        *self.on_change.borrow_mut() = on_change;
    }
}

/// The host's side: the periodic check, the window's listeners and the page's.
pub(crate) struct Watch {
    /// Milliseconds between checks while offline; 0: no checks.
    check_ms: u32,
    /// The timer of the next check, when one is scheduled.
    timer: Cell<Option<i32>>,
    /// Whether a check's request is out.
    checking: Cell<bool>,
    /// What the timer calls (made once the host exists).
    tick: RefCell<Option<Closure<dyn FnMut()>>>,
    /// The window's `online` and `offline` listeners.
    window_events: RefCell<Vec<WindowListener>>,
    /// The page's `onConnectivity` listeners.
    pub(crate) listeners: Rc<Listeners>,
}

impl Watch {
    /// Checking every `check_ms` while offline (0: never).
    pub(crate) fn new(check_ms: u32) -> Self {
        Self {
            check_ms,
            timer: Cell::new(None),
            checking: Cell::new(false),
            tick: RefCell::new(None),
            window_events: RefCell::new(Vec::new()),
            listeners: Rc::default(),
        }
    }
}

/// Starts watching: the window's events, the backend's outcomes, and (when the browser says it is
/// offline already) the checks.
pub(crate) fn start(shared: &Rc<Shared>) {
    let weak: Weak<Shared> = Rc::downgrade(shared);
    shared
        .reach
        .set_on_change(Some(Rc::new(move |online: bool| {
            if let Some(shared) = weak.upgrade() {
                changed(&shared, online);
            }
        })));
    let weak: Weak<Shared> = Rc::downgrade(shared);
    *shared.connectivity.tick.borrow_mut() = Some(Closure::<dyn FnMut()>::new(move || {
        if let Some(shared) = weak.upgrade() {
            check(&shared);
        }
    }));
    let mut events = shared.connectivity.window_events.borrow_mut();
    for (event, online) in [("online", true), ("offline", false)] {
        let reach: Weak<Reachability> = Rc::downgrade(&shared.reach);
        let listener = Closure::<dyn FnMut()>::new(move || {
            if let Some(reach) = reach.upgrade() {
                reach.observe(online);
            }
        });
        // A window always takes listeners; should it not, the backend's outcomes still count.
        let _ = shared
            .window
            .add_event_listener_with_callback(event, listener.as_ref().unchecked_ref());
        events.push((event, listener));
    }
    drop(events);
    if !shared.reach.online() {
        schedule(shared);
    }
}

/// Stops watching: no more checks, events or listeners.
pub(crate) fn stop(shared: &Shared) {
    shared.reach.set_on_change(None);
    if let Some(timer) = shared.connectivity.timer.take() {
        shared.window.clear_timeout_with_handle(timer);
    }
    // Without it, a check still out schedules no other.
    shared.connectivity.tick.borrow_mut().take();
    for (event, listener) in shared.connectivity.window_events.borrow_mut().drain(..) {
        let _ = shared
            .window
            .remove_event_listener_with_callback(event, listener.as_ref().unchecked_ref());
    }
    shared.connectivity.listeners.clear();
}

/// The state changed: the tools and the page hear of it, and the checks start or stop.
fn changed(shared: &Rc<Shared>, online: bool) {
    let state = Connectivity { online };
    let ports = shared.ports_offering(Capability::Connectivity);
    if !ports.is_empty() {
        let message = HostEvent::ConnectivityChanged(state)
            .to_json()
            .ok()
            .and_then(|text| json::parse(&JsString::from(text)));
        if let Some(message) = message {
            for port in ports {
                // A closed port (the tool just went away) takes nothing.
                let _ = port.post_message(&message);
            }
        }
    }
    if online {
        if let Some(timer) = shared.connectivity.timer.take() {
            shared.window.clear_timeout_with_handle(timer);
        }
    } else {
        schedule(shared);
    }
    if !shared.connectivity.listeners.is_empty() {
        if let Ok(state) = json::to_js(&state) {
            shared
                .connectivity
                .listeners
                .emit(&state, &JsValue::UNDEFINED);
        }
    }
}

/// Schedules the next check, unless one is scheduled or out already, or checks are off.
fn schedule(shared: &Shared) {
    let watch = &shared.connectivity;
    if watch.check_ms == 0 || watch.timer.get().is_some() || watch.checking.get() {
        return;
    }
    let tick = watch.tick.borrow();
    let Some(tick) = tick.as_ref() else {
        return;
    };
    let delay = i32::try_from(watch.check_ms).unwrap_or(i32::MAX);
    let timer = shared
        .window
        .set_timeout_with_callback_and_timeout_and_arguments_0(tick.as_ref().unchecked_ref(), delay)
        .ok();
    watch.timer.set(timer);
}

/// The timer fired: while still offline, one cheap request through the backend; any answer puts
/// the host online (`backend`), and without one the next check is scheduled.
fn check(shared: &Rc<Shared>) {
    shared.connectivity.timer.set(None);
    if shared.reach.online() {
        return;
    }
    shared.connectivity.checking.set(true);
    let shared = Rc::clone(shared);
    wasm_bindgen_futures::spawn_local(async move {
        shared.backend.probe("/me").await;
        shared.connectivity.checking.set(false);
        if !shared.reach.online() {
            schedule(&shared);
        }
    });
}

/// What the browser says now: `navigator.onLine` (online when it cannot tell).
pub(crate) fn browser_online(window: &Window) -> bool {
    window.navigator().on_line()
}

#[wasm_bindgen]
impl Host {
    /// Whether the server can be reached from the browser, as far as the host knows: from the
    /// browser (`navigator.onLine`, the window's `online` and `offline` events) and from its own
    /// requests. While `false`, tools' calls that need the server and the page's `openQuote`,
    /// `save` and `send` fail at once with `OFFLINE`; `addLines` and the open quote keep working.
    #[wasm_bindgen(getter)]
    pub fn online(&self) -> bool {
        self.shared().reach.online()
    }

    /// Calls `listener({online})` on each change of `host.online`; returns a function that
    /// stops it. Tools hear the same change as `connectivity.changed`.
    #[wasm_bindgen(js_name = onConnectivity, unchecked_return_type = "() => void")]
    pub fn on_connectivity(
        &self,
        #[wasm_bindgen(unchecked_param_type = "(state: Connectivity) => void")] listener: Function,
    ) -> Function {
        self.shared().connectivity.listeners.add(listener)
    }
}
