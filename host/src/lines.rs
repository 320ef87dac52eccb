//! A tool's `quotes.addLines` batch read from its JavaScript objects without
//! JSON text. Parsing the 230 KB that `JSON.stringify` makes of 1000 lines
//! took about half of the host's time for a batch (the bench's validate
//! phase: 2.2–2.4 ms with the text, 1.2–1.3 ms this way, in `--quick` runs
//! side by side on the 2-core VM). Here `lines.js` walks the objects and
//! writes, into module memory the module keeps from one batch to the next, a
//! word per field (its kind, its position in [`LINE_FIELDS`] and the length
//! of its text) and each number as an `f64`, and answers the strings one
//! after the other as one string, encoded into module memory once (the
//! bench's read phase about as long as `JSON.stringify` and its encoding
//! took, 0.7–0.8 ms, Chromium's `JSON.stringify` being that fast); [`give`]
//! hands the lines to [`LineByLine`] field by field.
//!
//! The answer is the one the batch gives read as a JSON value
//! ([`json::from_js_at`], the way the host reads every other call; the
//! host's browser tests run both ways side by side): a number goes as the
//! very `f64` the tool's page holds, `-0` as `0` and a number that is not
//! finite as `null`, as JSON writes them; a field whose value is `undefined`
//! is left out. A batch this way cannot read (not an array of plain
//! objects, a field holding an object, an array or a `BigInt`, a lone
//! surrogate in a string, a batch beyond the kept memory) is read as a JSON
//! value.

use std::cell::{Cell, RefCell};

use js_sys::{Array, JsString};
use toolbridge_protocol::add_lines::{FieldValue, LINE_FIELDS, LineByLine};
use toolbridge_protocol::limits::ADD_LINES_MAX_BATCH;
use wasm_bindgen::prelude::wasm_bindgen;
use wasm_bindgen::{JsCast, JsValue};

use crate::json;

#[wasm_bindgen(module = "/src/lines.js")]
extern "C" {
    /// Writes the lines into `tags` and `numbers` and answers the text of
    /// their strings; `undefined` for a batch it leaves to the JSON value way.
    #[wasm_bindgen(js_name = flattenLines)]
    fn flatten_lines(
        lines: &JsValue,
        names: &Array,
        tags: &mut [u32],
        numbers: &mut [f64],
    ) -> JsValue;
}

// The kinds of `lines.js`.
const NULL: u32 = 0;
const FALSE: u32 = 1;
const TRUE: u32 = 2;
const NUMBER: u32 = 3;
const STRING: u32 = 5;
const NAME: u32 = 6;

/// Fields per line the kept memory has room for, on average over a full
/// batch (a line has 14 known ones; a name outside them takes two words).
const FIELDS_PER_LINE: usize = 20;

thread_local! {
    /// [`LINE_FIELDS`] as JavaScript strings, made once.
    static NAMES: Array = LINE_FIELDS.iter().map(|name| JsValue::from_str(name)).collect();
    /// A word per field and one per line, and the line count first.
    static TAGS: RefCell<Vec<u32>> = const { RefCell::new(Vec::new()) };
    /// The numbers, in order.
    static NUMBERS: RefCell<Vec<f64>> = const { RefCell::new(Vec::new()) };
}

thread_local! {
    /// Whether every batch goes as a JSON value, and how many did since
    /// [`read_lines_as_values`] was last called.
    static AS_VALUE: Cell<(bool, u32)> = const { Cell::new((false, 0)) };
}

/// For the host's browser tests, which compare the two ways: with
/// `as_values`, every `quotes.addLines` batch is read as a JSON value from
/// now on. Answers how many batches were read as JSON values since the last
/// call. Not part of the page API.
#[doc(hidden)]
pub fn read_lines_as_values(as_values: bool) -> u32 {
    AS_VALUE.with(|state| state.replace((as_values, 0)).1)
}

/// Whether a batch is to go as a JSON value whatever it holds.
pub(crate) fn only_as_value() -> bool {
    AS_VALUE.with(|state| state.get().0)
}

/// Counts a batch read as a JSON value.
pub(crate) fn read_as_value() {
    AS_VALUE.with(|state| {
        let (as_value, count) = state.get();
        state.set((as_value, count.saturating_add(1)));
    });
}

/// A batch as `lines.js` wrote it, borrowed from the kept memory.
pub(crate) struct Flat<'b> {
    tags: &'b [u32],
    numbers: &'b [f64],
    text: &'b str,
    /// Whether `text` is ASCII, so that a length in UTF-16 units is one in
    /// bytes.
    ascii: bool,
}

impl Flat<'_> {
    /// The number of lines.
    pub(crate) fn lines(&self) -> usize {
        self.tags.first().map_or(0, |&count| count as usize)
    }
}

/// `read` of the batch `params` as `lines.js` writes it into the kept
/// memory; `None` (and `read` not called) for a batch it leaves to the
/// JSON value way.
pub(crate) fn with_flat<R>(params: &JsValue, read: impl FnOnce(&Flat<'_>) -> R) -> Option<R> {
    TAGS.with(|tags| {
        NUMBERS.with(|numbers| {
            let (mut tags, mut numbers) =
                (tags.try_borrow_mut().ok()?, numbers.try_borrow_mut().ok()?);
            if tags.is_empty() {
                tags.resize(1 + ADD_LINES_MAX_BATCH * (1 + FIELDS_PER_LINE), 0);
                numbers.resize(ADD_LINES_MAX_BATCH * FIELDS_PER_LINE, 0.0);
            }
            let text = NAMES.with(|names| flatten_lines(params, names, &mut tags, &mut numbers));
            let text = text.dyn_into::<JsString>().ok()?;
            json::with_utf8(&text, |utf8, ascii| {
                // A lone surrogate, which JSON text refuses, arrives as
                // U+FFFD: a batch with that character goes as a JSON value,
                // which says where the surrogate is.
                if !ascii && utf8.contains('\u{fffd}') {
                    return None;
                }
                Some(read(&Flat {
                    tags: &tags,
                    numbers: &numbers,
                    text: utf8,
                    ascii,
                }))
            })
            .flatten()
        })
    })
}

/// Gives the lines of `flat` to `lines`; `None` where it holds what the
/// JSON value way would read otherwise (then `lines` is to be dropped).
pub(crate) fn give(flat: &Flat<'_>, lines: &mut LineByLine<'_>) -> Option<()> {
    let mut tags = flat.tags.iter().copied();
    let count = tags.next()?;
    let mut numbers = flat.numbers.iter().copied();
    let mut text = Pieces {
        rest: flat.text,
        ascii: flat.ascii,
    };
    let mut unknown = Vec::new();
    for _ in 0..count {
        let entries = tags.next()?;
        let mut known = [None; LINE_FIELDS.len()];
        unknown.clear();
        for _ in 0..entries {
            let mut word = tags.next()?;
            let mut name = None;
            if word & 7 == NAME {
                name = Some(text.take(word >> 8)?);
                word = tags.next()?;
            }
            let value = match word & 7 {
                NULL => FieldValue::Null,
                FALSE => FieldValue::Bool(false),
                TRUE => FieldValue::Bool(true),
                NUMBER => FieldValue::Number(numbers.next()?),
                STRING => FieldValue::Str(text.take(word >> 8)?),
                _ => return None,
            };
            match name {
                Some(name) => unknown.push(name),
                None => *known.get_mut(((word >> 3) & 31) as usize)? = Some(value),
            }
        }
        lines.object(&known, &unknown);
    }
    text.rest.is_empty().then_some(())
}

/// The strings of a batch's text, one after the other.
struct Pieces<'t> {
    rest: &'t str,
    ascii: bool,
}

impl<'t> Pieces<'t> {
    /// The next string, of `units` UTF-16 units.
    fn take(&mut self, units: u32) -> Option<&'t str> {
        let units = units as usize;
        let bytes = if self.ascii {
            units
        } else {
            let mut counted = 0;
            let mut bytes = 0;
            for c in self.rest.chars() {
                if counted >= units {
                    break;
                }
                counted += c.len_utf16();
                bytes += c.len_utf8();
            }
            // A pair of surrogates from two strings is no character of
            // either.
            if counted != units {
                return None;
            }
            bytes
        };
        let piece = self.rest.get(..bytes)?;
        self.rest = self.rest.get(bytes..)?;
        Some(piece)
    }
}
