//! Deadlines, with a test-only override read from the script tag.

use wasm_bindgen::JsCast;
use web_sys::{HtmlScriptElement, Window};

/// How long calls wait for the handshake, and for their reply.
#[derive(Clone, Copy, Debug)]
pub(crate) struct Config {
    /// Milliseconds without a welcome before calls fail with `NOT_CONNECTED`.
    pub(crate) connect_timeout_ms: u32,
    /// Milliseconds a call waits for its reply before failing with `TIMEOUT`.
    pub(crate) call_timeout_ms: u32,
}

impl Default for Config {
    fn default() -> Self {
        Self {
            connect_timeout_ms: 10_000,
            call_timeout_ms: 30_000,
        }
    }
}

impl Config {
    /// The defaults, or the test-only overrides `data-connect-timeout-ms` and
    /// `data-call-timeout-ms` on the `<script>` tag that loaded the SDK.
    /// They exist so that test suites need not wait 10 s; tools should not
    /// set them.
    pub(crate) fn from_current_script(window: &Window) -> Self {
        let mut config = Self::default();
        let script = window
            .document()
            .and_then(|document| document.current_script())
            .and_then(|element| element.dyn_into::<HtmlScriptElement>().ok());
        if let Some(script) = script {
            let data = script.dataset();
            if let Some(ms) = data.get("connectTimeoutMs").and_then(|v| parse_ms(&v)) {
                config.connect_timeout_ms = ms;
            }
            if let Some(ms) = data.get("callTimeoutMs").and_then(|v| parse_ms(&v)) {
                config.call_timeout_ms = ms;
            }
        }
        config
    }
}

/// A positive whole number of milliseconds, up to `i32::MAX` (what
/// `setTimeout` takes).
fn parse_ms(text: &str) -> Option<u32> {
    let mut ms: u32 = 0;
    for byte in text.bytes() {
        let digit = byte.checked_sub(b'0').filter(|d| *d <= 9)?;
        ms = ms.checked_mul(10)?.checked_add(u32::from(digit))?;
    }
    (ms > 0 && i32::try_from(ms).is_ok()).then_some(ms)
}
