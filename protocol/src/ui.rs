//! The `ui.*` extensions: what a tool may ask the host page to show or do
//! (`ui.toast`, `ui.confirm`, `ui.openQuote`), the heights it reports for
//! auto-resize (`ui.resize`), and the rules the host holds them to.
//!
//! A tool's frame has no modal dialogs and cannot navigate the app, so these
//! are the only ways it reaches the user outside its frame. The host page
//! renders every text as plain text, labelled with the tool's name.

use std::collections::VecDeque;

use serde::Serialize;
use serde_json::Value;

use crate::error::{Error, Violations};
use crate::input::Fields;
use crate::limits::TEXT_MAX_CHARS;

/// Longest toast message, in characters.
pub const TOAST_MAX_CHARS: usize = 300;
/// Toasts one mounted tool may show within [`TOAST_WINDOW_MS`].
pub const TOAST_LIMIT: usize = 5;
/// The window of the toast limit, in milliseconds.
pub const TOAST_WINDOW_MS: f64 = 10_000.0;
/// Longest confirm title, in characters.
pub const CONFIRM_TITLE_MAX_CHARS: usize = 100;
/// Longest confirm message, in characters.
pub const CONFIRM_MESSAGE_MAX_CHARS: usize = 1000;
/// Longest button label of a confirm dialog, in characters.
pub const CONFIRM_LABEL_MAX_CHARS: usize = 30;
/// The tallest frame auto-resize may ask for, in CSS pixels.
pub const MAX_FRAME_HEIGHT: u32 = 10_000;

/// The severity of a toast, as the app's own toasts have them.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "camelCase")]
pub enum ToastKind {
    /// Green: something worked.
    Success,
    /// Orange: worth a look.
    Warning,
    /// Red: something failed.
    Error,
}

impl ToastKind {
    /// Every kind.
    pub const ALL: [ToastKind; 3] = [ToastKind::Success, ToastKind::Warning, ToastKind::Error];

    /// The wire token.
    pub fn token(self) -> &'static str {
        match self {
            ToastKind::Success => "success",
            ToastKind::Warning => "warning",
            ToastKind::Error => "error",
        }
    }
}

/// `ui.toast({kind, message})`, checked.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct Toast {
    /// Its severity.
    pub kind: ToastKind,
    /// Plain text on one line, at most [`TOAST_MAX_CHARS`] characters.
    pub message: String,
}

/// `ui.confirm({title, message, confirmLabel?, cancelLabel?})`, checked, with
/// the default labels filled in.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct ConfirmRequest {
    /// The dialog's heading: one line.
    pub title: String,
    /// What the user is asked; may hold line breaks.
    pub message: String,
    /// The button that answers `true` (default "OK").
    pub confirm_label: String,
    /// The button that answers `false` (default "Cancel").
    pub cancel_label: String,
}

/// Reads `ui.toast`'s argument; every problem is listed with its path.
pub fn read_toast(params: &Value) -> Result<Toast, Error> {
    let mut errors = Violations::default();
    let toast = Fields::open(params, "", &["kind", "message"], &mut errors).and_then(|mut f| {
        let kind = required_token(&mut f, "kind", &ToastKind::ALL, ToastKind::token);
        let message = plain_text(&mut f, "message", TOAST_MAX_CHARS, Lines::One);
        Some(Toast {
            kind: kind?,
            message: message?,
        })
    });
    errors.finish(toast)
}

/// Reads `ui.confirm`'s argument; every problem is listed with its path.
pub fn read_confirm(params: &Value) -> Result<ConfirmRequest, Error> {
    const KNOWN: &[&str] = &["title", "message", "confirmLabel", "cancelLabel"];
    let mut errors = Violations::default();
    let request = Fields::open(params, "", KNOWN, &mut errors).and_then(|mut f| {
        let title = plain_text(&mut f, "title", CONFIRM_TITLE_MAX_CHARS, Lines::One);
        let message = plain_text(&mut f, "message", CONFIRM_MESSAGE_MAX_CHARS, Lines::Many);
        let confirm = optional_label(&mut f, "confirmLabel", "OK");
        let cancel = optional_label(&mut f, "cancelLabel", "Cancel");
        Some(ConfirmRequest {
            title: title?,
            message: message?,
            confirm_label: confirm?,
            cancel_label: cancel?,
        })
    });
    errors.finish(request)
}

/// Reads `ui.openQuote`'s argument, `{id}` (bridge.js wraps the id the tool
/// passes): the quote's id, trimmed.
pub fn read_open_quote(params: &Value) -> Result<String, Error> {
    let mut errors = Violations::default();
    let id = Fields::open(params, "", &["id"], &mut errors)
        .and_then(|mut f| f.required_text("id", TEXT_MAX_CHARS).map(str::to_owned));
    errors.finish(id)
}

/// Reads the params of a `ui.resize` report, `{height}`: CSS pixels, a
/// finite number from 0.
pub fn read_resize(params: &Value) -> Result<f64, Error> {
    let mut errors = Violations::default();
    let height = Fields::open(params, "params", &["height"], &mut errors).and_then(|mut f| {
        let height = f.required_number("height")?;
        if height < 0.0 {
            f.violation("height", format!("must not be negative (got {height})"));
            return None;
        }
        Some(height)
    });
    errors.finish(height)
}

/// The frame heights a page allows a tool with auto-resize, in CSS pixels:
/// `host.mount(…, {autoResize: {min, max}})`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct AutoResize {
    min: u32,
    max: u32,
}

impl AutoResize {
    /// Bounds from the page: whole pixels, `0 <= min <= max <=`
    /// [`MAX_FRAME_HEIGHT`]. The error says which bound is wrong and why.
    pub fn new(min: f64, max: f64) -> Result<Self, String> {
        let whole = |name: &str, value: f64| {
            if value.is_finite()
                && value.fract() == 0.0
                && (0.0..=f64::from(MAX_FRAME_HEIGHT)).contains(&value)
            {
                // Checked just above: a whole number within u32.
                #[allow(clippy::cast_possible_truncation, clippy::cast_sign_loss)]
                Ok(value as u32)
            } else {
                Err(format!(
                    "autoResize.{name} must be a whole number of pixels from 0 to {MAX_FRAME_HEIGHT} (got {value})"
                ))
            }
        };
        let (min, max) = (whole("min", min)?, whole("max", max)?);
        if min > max {
            return Err(format!(
                "autoResize.min ({min}) must not be above autoResize.max ({max})"
            ));
        }
        Ok(Self { min, max })
    }

    /// The smallest height.
    pub fn min(self) -> u32 {
        self.min
    }

    /// The largest height.
    pub fn max(self) -> u32 {
        self.max
    }

    /// The frame height for a reported document height: rounded up to a
    /// whole pixel, then held within the bounds.
    pub fn height_for(self, reported: f64) -> u32 {
        let up = reported.ceil();
        if up <= f64::from(self.min) {
            self.min
        } else if up >= f64::from(self.max) {
            self.max
        } else {
            // Strictly between two u32 values, and whole.
            #[allow(clippy::cast_possible_truncation, clippy::cast_sign_loss)]
            let height = up as u32;
            height
        }
    }
}

/// The toast limit of one mounted tool: at most [`TOAST_LIMIT`] toasts in
/// any [`TOAST_WINDOW_MS`].
#[derive(Debug, Clone, Default)]
pub struct ToastLimiter {
    /// When the toasts still inside the window were shown, oldest first (ms).
    shown: VecDeque<f64>,
}

impl ToastLimiter {
    /// Takes a toast at `now_ms` (any monotonic clock), or answers
    /// `RATE_LIMITED` with the whole seconds until the oldest toast leaves
    /// the window.
    pub fn take(&mut self, now_ms: f64) -> Result<(), Error> {
        while self
            .shown
            .front()
            .is_some_and(|&at| now_ms - at >= TOAST_WINDOW_MS)
        {
            self.shown.pop_front();
        }
        if self.shown.len() < TOAST_LIMIT {
            self.shown.push_back(now_ms);
            return Ok(());
        }
        let oldest = self.shown.front().copied().unwrap_or(now_ms);
        let wait_ms = (oldest + TOAST_WINDOW_MS - now_ms).max(0.0);
        // Whole seconds from a wait of at most the window's 10 s.
        #[allow(clippy::cast_possible_truncation, clippy::cast_sign_loss)]
        let retry_after = ((wait_ms / 1000.0).ceil() as u64).max(1);
        Err(Error::RateLimited { retry_after })
    }
}

/// Whether a text may span lines.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Lines {
    One,
    Many,
}

/// A required, non-blank, trimmed plain text of at most `max_chars`, with no
/// control characters (but line breaks where `lines` allows them).
fn plain_text(
    f: &mut Fields<'_, '_>,
    name: &str,
    max_chars: usize,
    lines: Lines,
) -> Option<String> {
    let text = f.required_text(name, max_chars)?;
    let control = text
        .chars()
        .find(|&c| c.is_control() && !(lines == Lines::Many && c == '\n'));
    if let Some(c) = control {
        let what = if lines == Lines::One {
            "must be plain text on one line"
        } else {
            "must be plain text (line breaks are fine)"
        };
        f.violation(
            name,
            format!(
                "{what}; it holds the control character U+{:04X}",
                u32::from(c)
            ),
        );
        return None;
    }
    Some(text.to_owned())
}

/// An optional button label: plain text on one line, or `default`.
fn optional_label(f: &mut Fields<'_, '_>, name: &str, default: &str) -> Option<String> {
    if f.has(name) {
        plain_text(f, name, CONFIRM_LABEL_MAX_CHARS, Lines::One)
    } else {
        Some(default.to_owned())
    }
}

/// A required token that must be one of `expected`.
fn required_token<T: Copy>(
    f: &mut Fields<'_, '_>,
    name: &str,
    expected: &[T],
    token_of: fn(T) -> &'static str,
) -> Option<T> {
    if !f.has(name) {
        f.violation(name, "is required");
        return None;
    }
    f.token(name, expected, token_of).ok().flatten()
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;

    fn paths(error: &Error) -> Vec<&str> {
        error.details().iter().map(|v| v.path.as_str()).collect()
    }

    #[test]
    fn a_toast_is_read_with_its_kind_and_trimmed_message() {
        let toast = read_toast(&json!({"kind": "warning", "message": "  Low stock  "})).unwrap();
        assert_eq!(toast.kind, ToastKind::Warning);
        assert_eq!(toast.message, "Low stock");
        let html = read_toast(&json!({"kind": "error", "message": "<b>x</b> & 'y'"})).unwrap();
        assert_eq!(html.message, "<b>x</b> & 'y'", "kept as text, never parsed");
    }

    #[test]
    fn a_bad_toast_names_every_problem() {
        let error = read_toast(&json!({"kind": "info", "message": ""})).unwrap_err();
        assert_eq!(paths(&error), ["kind", "message"]);
        assert!(
            error.details()[0]
                .message
                .contains("\"success\", \"warning\", \"error\"")
        );
        let long = "é".repeat(TOAST_MAX_CHARS + 1);
        let error = read_toast(&json!({"kind": "success", "message": long})).unwrap_err();
        assert!(
            error.details()[0]
                .message
                .contains("at most 300 characters (got 301)")
        );
        let error = read_toast(&json!({"kind": "success", "message": "two\nlines"})).unwrap_err();
        assert!(error.to_string().contains("one line"), "{error}");
        let error = read_toast(&json!({"message": "hi", "colour": "red"})).unwrap_err();
        assert_eq!(paths(&error), ["colour", "kind"]);
        let error = read_toast(&json!("hi")).unwrap_err();
        assert_eq!(paths(&error), [""]);
        assert!(read_toast(&json!({"kind": "success", "message": "a".repeat(300)})).is_ok());
    }

    #[test]
    fn a_confirm_gets_default_labels_and_may_span_lines() {
        let request = read_confirm(
            &json!({"title": "Room exists", "message": "Add it again?\nIt is there."}),
        )
        .unwrap();
        assert_eq!(request.confirm_label, "OK");
        assert_eq!(request.cancel_label, "Cancel");
        assert_eq!(request.message, "Add it again?\nIt is there.");
        let labelled = read_confirm(&json!({
            "title": "t", "message": "m", "confirmLabel": "Add again", "cancelLabel": "Skip"
        }))
        .unwrap();
        assert_eq!(
            (
                labelled.confirm_label.as_str(),
                labelled.cancel_label.as_str()
            ),
            ("Add again", "Skip")
        );
    }

    #[test]
    fn a_bad_confirm_names_every_problem() {
        let error = read_confirm(&json!({
            "title": "a\nb", "confirmLabel": "x".repeat(31), "cancelLabel": 3
        }))
        .unwrap_err();
        assert_eq!(
            paths(&error),
            ["title", "message", "confirmLabel", "cancelLabel"]
        );
    }

    #[test]
    fn open_quote_takes_a_non_blank_id() {
        assert_eq!(read_open_quote(&json!({"id": " q-1 "})).unwrap(), "q-1");
        for bad in [
            json!({}),
            json!({"id": ""}),
            json!({"id": 7}),
            json!("q-1"),
            json!(null),
        ] {
            assert!(read_open_quote(&bad).is_err(), "{bad}");
        }
    }

    #[test]
    fn a_resize_report_is_a_height_from_zero() {
        assert!((read_resize(&json!({"height": 412.5})).unwrap() - 412.5).abs() < f64::EPSILON);
        for bad in [
            json!({"height": -1}),
            json!({"height": "9"}),
            json!({}),
            json!([1]),
        ] {
            let error = read_resize(&bad).unwrap_err();
            assert!(paths(&error)[0].starts_with("params"), "{bad}: {error}");
        }
    }

    #[test]
    fn auto_resize_rounds_up_and_holds_the_bounds() {
        let bounds = AutoResize::new(120.0, 900.0).unwrap();
        assert_eq!(bounds.height_for(0.0), 120);
        assert_eq!(bounds.height_for(400.01), 401);
        assert_eq!(bounds.height_for(400.0), 400);
        assert_eq!(bounds.height_for(899.5), 900);
        assert_eq!(bounds.height_for(5000.0), 900);
        assert_eq!(bounds.height_for(f64::INFINITY), 900);
        let fixed = AutoResize::new(300.0, 300.0).unwrap();
        assert_eq!(fixed.height_for(10.0), 300);
    }

    #[test]
    fn auto_resize_bounds_must_be_whole_ordered_pixels() {
        assert!(
            AutoResize::new(900.0, 120.0)
                .unwrap_err()
                .contains("must not be above")
        );
        assert!(
            AutoResize::new(-1.0, 10.0)
                .unwrap_err()
                .contains("autoResize.min")
        );
        assert!(
            AutoResize::new(0.0, 10.5)
                .unwrap_err()
                .contains("autoResize.max")
        );
        assert!(AutoResize::new(0.0, f64::NAN).is_err());
        assert!(AutoResize::new(0.0, 10_001.0).is_err());
        assert!(AutoResize::new(0.0, 10_000.0).is_ok());
    }

    #[test]
    fn the_toast_limit_is_five_in_any_ten_seconds() {
        let mut limiter = ToastLimiter::default();
        for i in 0..5 {
            limiter.take(f64::from(i) * 100.0).unwrap();
        }
        let Err(Error::RateLimited { retry_after }) = limiter.take(1_000.0) else {
            panic!("the sixth toast within the window must be refused");
        };
        assert_eq!(retry_after, 9, "the first toast leaves the window at 10 s");
        assert!(limiter.take(9_999.0).is_err());
        limiter.take(10_000.0).unwrap();
        let Err(Error::RateLimited { retry_after }) = limiter.take(10_000.5) else {
            panic!("still five within the window");
        };
        assert_eq!(retry_after, 1);
    }
}
