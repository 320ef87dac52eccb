//! Deadlines, with a test-only override read from the script tag.

use crate::js::Window;
use crate::object::get;

/// How long calls wait for the handshake, and for their reply.
#[derive(Clone, Copy, Debug)]
// Each one is a deadline in milliseconds, and says so.
#[allow(clippy::struct_field_names)]
pub(crate) struct Config {
    /// Milliseconds without a welcome before calls fail with `NOT_CONNECTED`.
    pub(crate) connect_timeout_ms: i32,
    /// Milliseconds a call waits for its reply before failing with `TIMEOUT`.
    pub(crate) call_timeout_ms: i32,
    /// The same for `fetch`, longer: the server gives the tool's server 15 s
    /// (`toolbridge_protocol::fetch::TIMEOUT_SECS`) and the host waits 25 s
    /// for the server (`FETCH_TIMEOUT_MS` in the host), so that the server's
    /// `TIMEOUT`, or the host's `BACKEND_UNAVAILABLE`, arrives first.
    pub(crate) fetch_timeout_ms: i32,
}

impl Config {
    /// The defaults (10 s to connect, 30 s per call, 35 s for `fetch`), or
    /// the test-only overrides `data-connect-timeout-ms`,
    /// `data-call-timeout-ms` and `data-fetch-timeout-ms` on the `<script>`
    /// tag that loaded the SDK. They exist so that test suites need
    /// not wait 10 s; tools should not set them.
    pub(crate) fn from_current_script(window: &Window) -> Self {
        // `currentScript` is the tag that loaded the SDK while it starts.
        let data = get(&window.document().current_script(), "dataset");
        let read = |name: &str, default: i32| positive_ms(&get(&data, name)).unwrap_or(default);
        Self {
            connect_timeout_ms: read("connectTimeoutMs", 10_000),
            call_timeout_ms: read("callTimeoutMs", 30_000),
            fetch_timeout_ms: read("fetchTimeoutMs", 35_000),
        }
    }
}

/// A whole, positive number of milliseconds that `setTimeout` takes.
fn positive_ms(value: &wasm_bindgen::JsValue) -> Option<i32> {
    if value.is_undefined() {
        return None;
    }
    let ms = value.unchecked_into_f64();
    if !(1.0..=f64::from(i32::MAX)).contains(&ms) {
        return None;
    }
    // In range, so the conversion cannot saturate; fractions are dropped.
    #[allow(clippy::cast_possible_truncation)]
    Some(ms as i32)
}
