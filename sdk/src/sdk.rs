//! The state of the bridge on one page, shared by the closures that make up
//! `window.bridge` and the handlers of the handshake and the port.

use alloc::rc::Rc;
use alloc::string::String;
use alloc::vec::Vec;
use core::cell::{Cell, OnceCell, RefCell};

use js_sys::{Function, Object};
use web_sys::{MessagePort, Window};

use crate::config::Config;
use crate::error::ErrorClass;

/// Where the connection stands.
pub(crate) enum Link {
    /// Waiting for the welcome.
    Connecting,
    /// Welcomed: calls go over this port; `info` is what `ready()` gives.
    Connected {
        /// The private port.
        port: MessagePort,
        /// `{toolType, methods, sdkVersion, protocol}`.
        info: Object,
    },
    /// No host: calls fail at once with this message.
    NoHost(String),
}

/// A call waiting for its reply.
pub(crate) struct Pending {
    pub(crate) id: u32,
    pub(crate) method: &'static str,
    pub(crate) resolve: Function,
    pub(crate) reject: Function,
    pub(crate) timer: i32,
    /// The request, while it waits for the handshake.
    pub(crate) queued: Option<Object>,
}

/// The handlers registered with the browser, made once.
pub(crate) struct Handlers {
    /// `setTimeout` target for call deadlines, called with the call's id.
    pub(crate) call_deadline: Function,
    /// `onmessage` of the port.
    pub(crate) reply: Function,
    /// `setTimeout` target that repeats the hello.
    pub(crate) hello_tick: Function,
}

/// The bridge of one page.
pub(crate) struct Sdk {
    pub(crate) window: Window,
    pub(crate) config: Config,
    pub(crate) link: RefCell<Link>,
    pub(crate) hello: Object,
    pub(crate) hello_delay_ms: Cell<i32>,
    /// `ready()` promises waiting for the welcome: (resolve, reject).
    pub(crate) waiters: RefCell<Vec<(Function, Function)>>,
    pub(crate) next_id: Cell<u32>,
    /// In id order, so the queue flushes in call order.
    pub(crate) pending: RefCell<Vec<Pending>>,
    pub(crate) warned_product_id: Cell<bool>,
    pub(crate) errors: ErrorClass,
    pub(crate) handlers: OnceCell<Handlers>,
}

impl Sdk {
    /// The bridge for this page, before the handshake starts.
    pub(crate) fn new(window: Window) -> Rc<Self> {
        let config = Config::from_current_script(&window);
        let hello = crate::channel::hello_message();
        let sdk = Rc::new(Self {
            window,
            config,
            link: RefCell::new(Link::Connecting),
            hello,
            hello_delay_ms: Cell::new(crate::channel::FIRST_HELLO_DELAY_MS),
            waiters: RefCell::new(Vec::new()),
            next_id: Cell::new(1),
            pending: RefCell::new(Vec::new()),
            warned_product_id: Cell::new(false),
            errors: ErrorClass::new(),
            handlers: OnceCell::new(),
        });
        let _ = sdk.handlers.set(Handlers {
            call_deadline: crate::calls::deadline_handler(&sdk),
            reply: crate::calls::reply_handler(&sdk),
            hello_tick: crate::channel::hello_tick_handler(&sdk),
        });
        sdk
    }

    /// The registered handlers (always set by [`Sdk::new`]).
    pub(crate) fn handlers(&self) -> Option<&Handlers> {
        self.handlers.get()
    }
}
