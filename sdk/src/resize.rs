//! Auto-resize: the host sets the tool's frame to the page's height.
//!
//! Once the welcome lists `ui.autoResize` (and unless the tool turned it off
//! with `bridge.ui.setAutoResize(false)`), a `ResizeObserver` on the
//! document element and the body, and the window's `resize` event, schedule
//! a measurement in the next animation frame (one per frame however many
//! changes came). The measurement is the document element's height rounded
//! up to whole pixels, sent as a `ui.resize` notification when it differs
//! from the last one sent.
//!
//! A page whose height follows its frame's (a `100vh` block with body
//! margins) would grow the frame without end: each new frame height makes
//! the page that much higher again. So the SDK remembers the height it sent
//! and the viewport's height at that moment; a measurement taken after the
//! viewport changed, in which the page exceeds the viewport by exactly as
//! much as it did then, is the page following the frame, and is not sent.

use core::cell::Cell;

use wasm_bindgen::JsValue;

use crate::object::object;
use crate::sdk::Sdk;

/// The state of auto-resize on one page.
#[derive(Default)]
pub(crate) struct Resize {
    /// The welcome listed `ui.autoResize`.
    pub(crate) offered: Cell<bool>,
    /// The tool turned auto-resize off (it is on by default).
    turned_off: Cell<bool>,
    /// A measurement waits for the next animation frame.
    frame_pending: Cell<bool>,
    /// The last height sent, and the viewport's height when it was sent.
    sent: Cell<Option<(i32, i32)>>,
}

impl Sdk {
    /// `bridge.ui.setAutoResize(enabled)`: turns auto-resize off or back on
    /// (on reports the current height if it differs from the last one
    /// sent). Before the handshake the choice is kept for it. Throws
    /// `INVALID_PARAMS` unless `enabled` is a boolean.
    pub(crate) fn set_auto_resize(&self, enabled: &JsValue) {
        let Some(enabled) = enabled.as_bool() else {
            wasm_bindgen::throw_val(
                self.errors
                    .invalid("enabled", "bridge.ui.setAutoResize takes true or false"),
            );
        };
        self.resize.turned_off.set(!enabled);
        if enabled {
            self.watch_size();
        } else if let Some(handlers) = self.handlers() {
            handlers.observer.disconnect();
        }
    }

    /// Starts watching the page's size, when the host offers auto-resize
    /// and the tool has not turned it off, and measures it.
    pub(crate) fn watch_size(&self) {
        let resize = &self.resize;
        if !resize.offered.get() || resize.turned_off.get() {
            return;
        }
        let Some(handlers) = self.handlers() else {
            return;
        };
        let document = self.window.document();
        let observer = &handlers.observer;
        observer.observe(&document.root());
        let body = document.body();
        if !body.is_null() {
            observer.observe(&body);
        }
        // (Adding the same listener again changes nothing.)
        self.window.listen("resize", &handlers.resized);
        self.schedule_measure();
    }

    /// Measures the page in the next animation frame, unless a measurement
    /// is already waiting for it.
    pub(crate) fn schedule_measure(&self) {
        let resize = &self.resize;
        if resize.frame_pending.get() || !resize.offered.get() || resize.turned_off.get() {
            return;
        }
        if let Some(handlers) = self.handlers() {
            resize.frame_pending.set(true);
            self.window.request_animation_frame(&handlers.frame);
        }
    }

    /// Measures the page and sends its height when it changed.
    pub(crate) fn measure(&self) {
        let resize = &self.resize;
        resize.frame_pending.set(false);
        if resize.turned_off.get() {
            return;
        }
        let height = whole_pixels(self.window.document().root().bounds().height());
        let viewport = whole_pixels(self.window.inner_height());
        if let Some((sent, sent_viewport)) = resize.sent.get() {
            let follows_frame =
                viewport != sent_viewport && height - viewport == sent - sent_viewport;
            if height == sent || follows_frame {
                return;
            }
        }
        resize.sent.set(Some((height, viewport)));
        self.notify("ui.resize", &object(&[("height", &height.into())]));
    }
}

/// A length in CSS pixels, rounded up to a whole number.
fn whole_pixels(length: f64) -> i32 {
    // Saturates outside i32's range; page heights are far inside it.
    #[allow(clippy::cast_possible_truncation)]
    let whole = length as i32;
    if f64::from(whole) < length {
        whole.saturating_add(1)
    } else {
        whole
    }
}
