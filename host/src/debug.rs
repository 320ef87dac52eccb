//! What the host saw: every bridge call (tool, method, duration, outcome),
//! every message it dropped, and every attempt bridge.js reported that the
//! tool's frame refused, kept in a bounded log, passed to `onCall` and
//! `onBlocked` listeners, and written to the console when the debug switch
//! is on.

use std::borrow::Cow;
use std::cell::{Cell, RefCell};
use std::collections::VecDeque;
use std::rc::Rc;

use serde::Serialize;
use toolbridge_protocol::blocked::BlockedKind;
use wasm_bindgen::JsValue;

use crate::json;
use crate::listeners::Listeners;

/// Entries the log keeps; older ones fall off.
pub(crate) const LOG_CAPACITY: usize = 500;

/// One bridge call, answered.
#[derive(Debug, Clone, Serialize)]
#[serde(rename_all = "camelCase")]
pub(crate) struct CallRecord {
    /// The tool's slug.
    pub(crate) tool: String,
    /// The method, or what the message claimed when it was not a call.
    pub(crate) method: Cow<'static, str>,
    /// From the message's arrival to the reply being posted.
    pub(crate) duration_ms: f64,
    /// `"ok"` or the error code.
    pub(crate) outcome: &'static str,
    /// The error message, when it failed.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub(crate) message: Option<String>,
}

/// Where the last `quotes.addLines` the host answered spent its time, in
/// milliseconds on the page's clock, phase by phase: for the bench
/// (`host/tests/bench.rs`), which reads it after each batch through
/// [`crate::Host::add_lines_phases`]. Not part of the page API. `read`,
/// `validate`, `merge` and `reply` add up to the call's `durationMs`;
/// `notify` follows the reply.
#[doc(hidden)]
#[derive(Debug, Clone, Copy, Default, PartialEq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct AddLinesPhases {
    /// From the message's arrival to the batch in module memory: the
    /// envelope read, the lines walked by `lines.js` into a word per field,
    /// their numbers and one string of their strings, encoded with
    /// `TextEncoder.encodeInto` (or, for a batch that way does not read,
    /// `JSON.stringify` of the lines and the text encoded).
    pub read_ms: f64,
    /// Every line given to the checks field by field (or the text parsed)
    /// and checked against the catalog index as it comes.
    pub validate_ms: f64,
    /// The valid lines merged into the open quote: line numbers, groups,
    /// task lines.
    pub merge_ms: f64,
    /// The reply built and posted on the tool's port.
    pub reply_ms: f64,
    /// After the reply: the call recorded and the change told, the open
    /// quote's amounts and totals worked out and sent to the page's
    /// `onChange` listeners and the tools offered `quote.changed`.
    pub notify_ms: f64,
}

/// Where the last `openQuote` the host resolved spent its time, in
/// milliseconds on the page's clock, phase by phase: for the bench
/// (`host/tests/bench.rs`), which reads it after each open through
/// [`crate::Host::open_quote_phases`]. Not part of the page API. The phases
/// follow one another and add up to the open, less the moments between them.
#[doc(hidden)]
#[derive(Debug, Clone, Copy, Default, PartialEq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct OpenQuotePhases {
    /// `GET /me`, when the user was not known yet (0 once kept).
    pub context_ms: f64,
    /// `GET /quotes/{id}` and the quote read.
    pub quote_ms: f64,
    /// `GET /catalog/index`, from the request to its body's bytes in module
    /// memory (the transfer, the browser's decompressing, the copy); for a
    /// `304`, the round trip alone.
    pub index_fetch_ms: f64,
    /// The index's bytes parsed (0 after a `304`).
    pub index_parse_ms: f64,
    /// The lookups built from the parsed index (0 after a `304`).
    pub index_build_ms: f64,
    /// The quote put in the editor, the page's listeners told and the
    /// quote's view made for the page.
    pub install_ms: f64,
}

/// A window message the host did not act on.
#[derive(Debug, Clone, Serialize)]
#[serde(rename_all = "camelCase")]
pub(crate) struct DroppedRecord {
    /// Why it was dropped.
    pub(crate) reason: String,
    /// The sender's origin.
    pub(crate) origin: String,
    /// The mounted tool whose frame sent it, if any.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub(crate) tool: Option<String>,
}

/// Something a tool page tried that its frame refused, as its bridge.js
/// reported it.
#[derive(Debug, Clone, Serialize)]
#[serde(rename_all = "camelCase")]
pub(crate) struct BlockedRecord {
    /// The tool's slug (from the port the report came on).
    pub(crate) tool: String,
    /// What was tried.
    pub(crate) what: BlockedKind,
    /// What bridge.js saw: the dialog's text, the browser's message, the
    /// URL, or the sender's origin.
    pub(crate) detail: String,
    /// One sentence for the tool's author: what to change so that it works.
    pub(crate) advice: String,
}

/// An entry of the log.
#[derive(Debug, Clone, Serialize)]
#[serde(tag = "kind", rename_all = "lowercase")]
pub(crate) enum Entry {
    /// A call.
    Call(CallRecord),
    /// A dropped message.
    Dropped(DroppedRecord),
    /// An attempt the tool's frame refused.
    Blocked(BlockedRecord),
}

/// The log, its switch and its listeners.
#[derive(Default)]
pub(crate) struct DebugLog {
    enabled: Cell<bool>,
    entries: RefCell<VecDeque<Entry>>,
    pub(crate) on_call: Rc<Listeners>,
    pub(crate) on_blocked: Rc<Listeners>,
}

impl DebugLog {
    /// Whether the console output is on.
    pub(crate) fn enabled(&self) -> bool {
        self.enabled.get()
    }

    /// Turns the console output on or off.
    pub(crate) fn set_enabled(&self, enabled: bool) {
        self.enabled.set(enabled);
    }

    /// Records an answered call.
    pub(crate) fn call(&self, record: CallRecord) {
        if self.enabled() {
            let message = format!(
                "[toolbridge host] {} {} {:.2} ms {}{}",
                record.tool,
                record.method,
                record.duration_ms,
                record.outcome,
                record
                    .message
                    .as_deref()
                    .map(|m| format!(": {m}"))
                    .unwrap_or_default()
            );
            web_sys::console::info_1(&JsValue::from_str(&message));
        }
        if !self.on_call.is_empty() {
            if let Ok(value) = json::to_js(&record) {
                self.on_call.emit(&value, &JsValue::UNDEFINED);
            }
        }
        self.push(Entry::Call(record));
    }

    /// Records a dropped message.
    pub(crate) fn dropped(&self, record: DroppedRecord) {
        if self.enabled() {
            let from = record
                .tool
                .as_deref()
                .map(|tool| format!(" (tool {tool})"))
                .unwrap_or_default();
            let message = format!(
                "[toolbridge host] dropped a message from {}{from}: {}",
                record.origin, record.reason
            );
            web_sys::console::warn_1(&JsValue::from_str(&message));
        }
        self.push(Entry::Dropped(record));
    }

    /// Records an attempt a tool's frame refused. Written to the console as
    /// a warning when the debug switch is on.
    pub(crate) fn blocked(&self, record: BlockedRecord) {
        if self.enabled() {
            let message = format!(
                "[toolbridge host] tool {} tried {}, and was refused: {}. {}",
                record.tool,
                record.what.describe(),
                record.detail,
                record.advice
            );
            web_sys::console::warn_1(&JsValue::from_str(&message));
        }
        if !self.on_blocked.is_empty() {
            if let Ok(value) = json::to_js(&record) {
                self.on_blocked.emit(&value, &JsValue::UNDEFINED);
            }
        }
        self.push(Entry::Blocked(record));
    }

    /// The entries, oldest first.
    pub(crate) fn entries(&self) -> Vec<Entry> {
        self.entries.borrow().iter().cloned().collect()
    }

    fn push(&self, entry: Entry) {
        let mut entries = self.entries.borrow_mut();
        if entries.len() == LOG_CAPACITY {
            entries.pop_front();
        }
        entries.push_back(entry);
    }
}
