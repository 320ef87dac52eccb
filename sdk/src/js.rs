//! The browser APIs the SDK uses, declared as it uses them.
//!
//! `web-sys` declares every member with the most defensive signature
//! (`Option` for what may be null, `Result` for what may throw), and each of
//! those costs unwrapping code at every call site. These declarations take
//! and return plain JS values instead, and are used only where the browser
//! cannot fail: the script is small because of it.

use js_sys::{Array, Function};
use wasm_bindgen::prelude::*;

#[wasm_bindgen]
extern "C" {
    /// A window: the page's own, or its parent.
    #[derive(Clone)]
    pub(crate) type Window;

    /// `window.parent` (the window itself at the top).
    #[wasm_bindgen(method, getter)]
    pub(crate) fn parent(this: &Window) -> Window;

    /// `window.document`.
    #[wasm_bindgen(method, getter)]
    pub(crate) fn document(this: &Window) -> Document;

    /// `window.innerHeight`: the viewport's height.
    #[wasm_bindgen(method, getter = innerHeight)]
    pub(crate) fn inner_height(this: &Window) -> f64;

    /// `window.setTimeout(handler, ms)`.
    #[wasm_bindgen(method, js_name = setTimeout)]
    pub(crate) fn set_timeout(this: &Window, handler: &Function, ms: i32);

    /// `window.requestAnimationFrame(handler)`.
    #[wasm_bindgen(method, js_name = requestAnimationFrame)]
    pub(crate) fn request_animation_frame(this: &Window, handler: &Function);

    /// `window.addEventListener(kind, handler)` (adding it again changes
    /// nothing).
    #[wasm_bindgen(method, js_name = addEventListener)]
    pub(crate) fn listen(this: &Window, kind: &str, handler: &Function);

    /// `window.postMessage(message, targetOrigin)`.
    #[wasm_bindgen(method, js_name = postMessage)]
    pub(crate) fn post(this: &Window, message: &JsValue, target_origin: &str);

    /// A document.
    pub(crate) type Document;

    /// `document.currentScript` (null once the script has run).
    #[wasm_bindgen(method, getter = currentScript)]
    pub(crate) fn current_script(this: &Document) -> JsValue;

    /// `document.documentElement`.
    #[wasm_bindgen(method, getter = documentElement)]
    pub(crate) fn root(this: &Document) -> Element;

    /// `document.body` (null before the parser reaches it).
    #[wasm_bindgen(method, getter)]
    pub(crate) fn body(this: &Document) -> JsValue;

    /// An element.
    pub(crate) type Element;

    /// `element.getBoundingClientRect().height`, through the rectangle.
    #[wasm_bindgen(method, js_name = getBoundingClientRect)]
    pub(crate) fn bounds(this: &Element) -> Rect;

    /// A `DOMRect`.
    pub(crate) type Rect;

    /// `rect.height`.
    #[wasm_bindgen(method, getter)]
    pub(crate) fn height(this: &Rect) -> f64;

    /// A `MessageEvent`.
    pub(crate) type Message;

    /// `event.data`.
    #[wasm_bindgen(method, getter)]
    pub(crate) fn data(this: &Message) -> JsValue;

    /// `event.ports`.
    #[wasm_bindgen(method, getter)]
    pub(crate) fn ports(this: &Message) -> Array;

    /// `event.source` (null for a message from no window).
    #[wasm_bindgen(method, getter)]
    pub(crate) fn source(this: &Message) -> JsValue;

    /// `event.origin`.
    #[wasm_bindgen(method, getter)]
    pub(crate) fn origin(this: &Message) -> JsValue;

    /// A `MessagePort`.
    pub(crate) type Port;

    /// `port.postMessage(message)`; fails when `message` cannot be cloned.
    #[wasm_bindgen(method, catch, js_name = postMessage)]
    pub(crate) fn post(this: &Port, message: &JsValue) -> Result<(), JsValue>;

    /// `port.onmessage = handler`.
    #[wasm_bindgen(method, setter)]
    pub(crate) fn set_onmessage(this: &Port, handler: &Function);

    /// A `ResizeObserver`.
    pub(crate) type ResizeObserver;

    /// `new ResizeObserver(handler)`.
    #[wasm_bindgen(constructor)]
    pub(crate) fn new(handler: &Function) -> ResizeObserver;

    /// `observer.observe(element)`.
    #[wasm_bindgen(method)]
    pub(crate) fn observe(this: &ResizeObserver, element: &JsValue);

    /// `observer.disconnect()`.
    #[wasm_bindgen(method)]
    pub(crate) fn disconnect(this: &ResizeObserver);

    /// A `PerformanceObserver`.
    pub(crate) type PerformanceObserver;

    /// `new PerformanceObserver(handler)`.
    #[wasm_bindgen(constructor)]
    pub(crate) fn new(handler: &Function) -> PerformanceObserver;

    /// `observer.observe(options)`.
    #[wasm_bindgen(method)]
    pub(crate) fn observe(this: &PerformanceObserver, options: &JsValue);

    /// A `PerformanceObserverEntryList`.
    pub(crate) type Entries;

    /// `list.getEntries()`.
    #[wasm_bindgen(method, js_name = getEntries)]
    pub(crate) fn all(this: &Entries) -> Array;

    /// `Reflect.set(target, key, value)`: false when the target is frozen;
    /// throws when it is not an object.
    #[wasm_bindgen(js_namespace = Reflect, js_name = set)]
    pub(crate) fn reflect_set(target: &JsValue, key: &JsValue, value: &JsValue) -> bool;

    /// `performance.now()`: milliseconds on the page's monotonic clock.
    #[wasm_bindgen(js_namespace = performance)]
    pub(crate) fn now() -> f64;

    /// `console.warn(message)`.
    #[wasm_bindgen(js_namespace = console)]
    pub(crate) fn warn(message: &JsValue);

    /// `console.error(message, error)`.
    #[wasm_bindgen(js_namespace = console)]
    pub(crate) fn error(message: &JsValue, error: &JsValue);
}
