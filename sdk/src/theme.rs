//! The page's theme on the tool's document: the host names it (`light` or `dark`) in the welcome
//! and in each `context.changed` that changes it, and bridge.js sets it on the document's root
//! element before the tool's code hears of it. A tool that styles itself with the properties (as
//! `/sdk/ui.css` does) follows the theme with no code of its own.
//!
//! What is set, and only on `document.documentElement`: the `data-tb-theme` attribute, the
//! `color-scheme` property (the browser's own controls and scroll bars), and a fixed set of CSS
//! custom properties: `--tb-bg` (the page), `--tb-surface` (fields, cards), `--tb-fg` (text),
//! `--tb-muted` (secondary text), `--tb-accent` (links, primary buttons), `--tb-border` and
//! `--tb-danger` (errors).

use wasm_bindgen::prelude::*;

use crate::js::Window;
use crate::object::{get, set, text};

/// The declarations of each theme, appended to the root element's inline style (where a property
/// set again replaces its earlier value, so the style never grows). One string each, set through
/// `cssText`, keeps the script small: it needs no browser function the SDK does not call already.
const LIGHT: &str = "--tb-bg:#f4f6f9;--tb-surface:#ffffff;--tb-fg:#1c2430;--tb-muted:#4f5b6b;\
--tb-accent:#0b5cad;--tb-border:#8a96a6;--tb-danger:#b3261e;color-scheme:light;";
const DARK: &str = "--tb-bg:#12161c;--tb-surface:#1c222b;--tb-fg:#e6eaf0;--tb-muted:#a7b1bf;\
--tb-accent:#7ab8ff;--tb-border:#5d6878;--tb-danger:#ff8a80;color-scheme:dark;";

/// Sets `theme` on the document when it is `"light"` or `"dark"`; anything else (no theme from
/// an older host) changes nothing.
pub(crate) fn apply(window: &Window, theme: &JsValue) {
    let (dark, light): (JsValue, JsValue) = ("dark".into(), "light".into());
    let declarations = if *theme == dark {
        DARK
    } else if *theme == light {
        LIGHT
    } else {
        return;
    };
    let root: JsValue = window.document().root().into();
    set(&get(&root, "dataset"), "tbTheme", theme);
    let style = get(&root, "style");
    let css = text(&[&get(&style, "cssText"), &declarations.into()]);
    set(&style, "cssText", &css.into());
}
