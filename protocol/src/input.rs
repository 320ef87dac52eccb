//! Reading untyped JSON requests field by field.
//!
//! Requests arrive from tool pages and HTTP clients as arbitrary JSON. Reading
//! them here, rather than with a derived `Deserialize`, lets one answer list
//! every problem with its exact path (`lines[3].qty`) instead of the first
//! type error serde meets.

use rust_decimal::Decimal;
use serde_json::Value;

use crate::error::Violations;
use crate::money::decimal_from_f64;

/// Marks a field that was present but invalid: its violation is already
/// recorded, so the caller only needs to know that no value came of it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct Recorded;

/// The lower bound of an amount.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Floor {
    /// More than 0 (quantities).
    AboveZero,
    /// 0 or more (prices).
    Zero,
}

/// `prefix.name`, or `name` at the top level. A field named `""` (sent as
/// an unknown field) is `prefix[""]`: the empty path means the whole request.
pub(crate) fn join(prefix: &str, name: &str) -> String {
    if name.is_empty() {
        format!("{prefix}[\"\"]")
    } else if prefix.is_empty() {
        name.to_owned()
    } else {
        format!("{prefix}.{name}")
    }
}

/// `prefix[index]`.
pub(crate) fn index(prefix: &str, index: usize) -> String {
    format!("{prefix}[{index}]")
}

/// How a JSON value is described in messages: "a string", "an array".
pub fn kind(value: &Value) -> &'static str {
    match value {
        Value::Null => "null",
        Value::Bool(_) => "a boolean",
        Value::Number(_) => "a number",
        Value::String(_) => "a string",
        Value::Array(_) => "an array",
        Value::Object(_) => "an object",
    }
}

/// A field's value as the readers below see it, whichever way the request
/// was parsed: from a [`Value`], or straight from JSON text into slots
/// (`quotes.addLines`, where speed matters).
#[derive(Debug, Clone, Copy)]
pub(crate) enum Field<'v> {
    /// `null`.
    Null,
    /// `true` or `false`.
    Bool(bool),
    /// A number (JSON numbers are read as `f64`).
    Number(f64),
    /// A string.
    Str(&'v str),
    /// An array; its items when parsed as a [`Value`], else none.
    Array(&'v [Value]),
    /// An object.
    Object,
}

impl<'v> Field<'v> {
    /// The view of a [`Value`].
    pub(crate) fn of(value: &'v Value) -> Self {
        match value {
            Value::Null => Field::Null,
            Value::Bool(flag) => Field::Bool(*flag),
            // Every JSON number has an `f64` reading; one beyond its range
            // reads as infinite and is refused as not finite.
            Value::Number(number) => Field::Number(number.as_f64().unwrap_or(f64::INFINITY)),
            Value::String(text) => Field::Str(text),
            Value::Array(items) => Field::Array(items),
            Value::Object(_) => Field::Object,
        }
    }

    /// How it is described in messages, as [`kind`] does.
    pub(crate) fn kind(self) -> &'static str {
        match self {
            Field::Null => "null",
            Field::Bool(_) => "a boolean",
            Field::Number(_) => "a number",
            Field::Str(_) => "a string",
            Field::Array(_) => "an array",
            Field::Object => "an object",
        }
    }
}

/// Most fields one object may be read with.
pub(crate) const MAX_FIELDS: usize = 16;

/// Where an object sits in the request. An item of an array keeps its index
/// and is only spelled out (`lines[3]`) when a violation needs the path.
#[derive(Debug, Clone)]
enum Base {
    Plain(String),
    Item(&'static str, usize),
}

impl Base {
    fn path(&self) -> String {
        match self {
            Base::Plain(path) => path.clone(),
            Base::Item(array, i) => index(array, *i),
        }
    }

    fn join(&self, name: &str) -> String {
        match self {
            Base::Plain(path) => join(path, name),
            Base::Item(array, i) => join(&index(array, *i), name),
        }
    }
}

/// The position of `name` among `known`. This runs for every field of every
/// line of a batch, so the cheap tests go first: the very same text (a
/// reader asks for a known field by the same literal the list holds, and
/// the compiler keeps one copy of equal literals), then the length and the
/// last byte, and only then the bytes.
pub(crate) fn position(known: &[&str], name: &str) -> Option<usize> {
    if let Some(at) = known.iter().position(|field| std::ptr::eq(*field, name)) {
        return Some(at);
    }
    let name = name.as_bytes();
    known.iter().position(|field| {
        let field = field.as_bytes();
        field.len() == name.len() && field.last() == name.last() && field == name
    })
}

/// A field a reader asks for: by its name, or as a [`Known`] field, whose
/// position among the object's field names is settled when the code is
/// compiled, so that no read searches for it.
pub(crate) trait FieldName: Copy {
    /// Its position among `known`, when it is one of them.
    fn position_in(self, known: &[&str]) -> Option<usize>;

    /// The name, for paths and messages.
    fn name(&self) -> &str;
}

impl FieldName for &str {
    fn position_in(self, known: &[&str]) -> Option<usize> {
        position(known, self)
    }

    fn name(&self) -> &str {
        self
    }
}

/// A field of a fixed list of names, by its position there.
#[derive(Debug, Clone, Copy)]
pub(crate) struct Known {
    at: usize,
    name: &'static str,
}

impl Known {
    /// The field `name` of `list`. Made as a constant, a name that is not in
    /// the list fails the build (the index past the list's end).
    pub(crate) const fn named(list: &[&'static str], name: &'static str) -> Self {
        let mut at = 0;
        while at < list.len() && !const_eq(list[at], name) {
            at += 1;
        }
        Self { at, name: list[at] }
    }
}

impl FieldName for Known {
    fn position_in(self, known: &[&str]) -> Option<usize> {
        // Read with the list it was made from; checked in debug builds.
        debug_assert_eq!(known.get(self.at), Some(&self.name));
        Some(self.at)
    }

    fn name(&self) -> &str {
        self.name
    }
}

/// `a == b`, where a constant needs it.
const fn const_eq(a: &str, b: &str) -> bool {
    let (a, b) = (a.as_bytes(), b.as_bytes());
    if a.len() != b.len() {
        return false;
    }
    let mut i = 0;
    while i < a.len() {
        if a[i] != b[i] {
            return false;
        }
        i += 1;
    }
    true
}

/// The fields of one JSON object, read with violations recorded under the
/// object's path. Unknown fields are reported when the object is opened, so a
/// typo such as `unitprice` is named instead of silently ignored. Opening
/// sorts the fields into one slot per known name, so each read is a lookup in
/// a short list rather than in the map.
pub(crate) struct Fields<'v, 'e> {
    known: &'v [&'v str],
    slots: [Option<Field<'v>>; MAX_FIELDS],
    base: Base,
    errors: &'e mut Violations,
}

impl<'v, 'e> Fields<'v, 'e> {
    /// Opens `value` as an object with the given field names; records a
    /// violation and returns `None` when it is not an object.
    pub(crate) fn open(
        value: &'v Value,
        path: &str,
        known: &'v [&'v str],
        errors: &'e mut Violations,
    ) -> Option<Self> {
        Self::open_at(value, Base::Plain(path.to_owned()), known, errors)
    }

    /// Opens item `i` of the array `array` (a top-level field), e.g.
    /// `lines[3]`.
    pub(crate) fn open_item(
        value: &'v Value,
        array: &'static str,
        i: usize,
        known: &'v [&'v str],
        errors: &'e mut Violations,
    ) -> Option<Self> {
        Self::open_at(value, Base::Item(array, i), known, errors)
    }

    fn open_at(
        value: &'v Value,
        base: Base,
        known: &'v [&'v str],
        errors: &'e mut Violations,
    ) -> Option<Self> {
        debug_assert!(known.len() <= MAX_FIELDS, "raise MAX_FIELDS");
        let Value::Object(map) = value else {
            let path = base.path();
            let subject = if path.is_empty() { "the request " } else { "" };
            errors.push(
                path,
                format!("{subject}must be an object, not {}", kind(value)),
            );
            return None;
        };
        let mut slots = [None; MAX_FIELDS];
        for (name, value) in map {
            match position(known, name).and_then(|i| slots.get_mut(i)) {
                Some(slot) => *slot = Some(Field::of(value)),
                None => errors.push(base.join(name), unknown_field_message(name, known)),
            }
        }
        Some(Self {
            known,
            slots,
            base,
            errors,
        })
    }

    /// Item `i` of the array `array`, already sorted into one slot per known
    /// field (in `known`'s order). `unknown` holds the names of the other
    /// fields, sorted, as a [`Value`] object would list them.
    pub(crate) fn from_slots(
        slots: &[Option<Field<'v>>; MAX_FIELDS],
        unknown: &[&str],
        array: &'static str,
        i: usize,
        known: &'v [&'v str],
        errors: &'e mut Violations,
    ) -> Self {
        let base = Base::Item(array, i);
        for name in unknown {
            errors.push(base.join(name), unknown_field_message(name, known));
        }
        Self {
            known,
            slots: *slots,
            base,
            errors,
        }
    }

    /// The path of a field of this object.
    pub(crate) fn path_of(&self, name: impl FieldName) -> String {
        self.base.join(name.name())
    }

    /// Records a violation at a field of this object.
    pub(crate) fn violation(&mut self, name: impl FieldName, message: impl Into<String>) {
        let path = self.path_of(name);
        self.errors.push(path, message);
    }

    /// The shared violation list, for nested objects.
    pub(crate) fn errors(&mut self) -> &mut Violations {
        self.errors
    }

    /// The value of a field as sent, `null` included.
    fn raw(&self, name: impl FieldName) -> Option<Field<'v>> {
        name.position_in(self.known)
            .and_then(|i| self.slots.get(i).copied())
            .flatten()
    }

    /// The value of a field; JSON `null` counts as absent.
    fn get(&self, name: impl FieldName) -> Option<Field<'v>> {
        self.raw(name).filter(|value| !matches!(value, Field::Null))
    }

    /// Whether the field is present and not `null`.
    pub(crate) fn has(&self, name: impl FieldName) -> bool {
        self.get(name).is_some()
    }

    /// An optional string field.
    pub(crate) fn string(&mut self, name: impl FieldName) -> Option<&'v str> {
        match self.get(name)? {
            Field::Str(text) => Some(text),
            other => {
                let message = format!("must be a string, not {}", other.kind());
                self.violation(name, message);
                None
            }
        }
    }

    /// An optional string of at most `max_chars` characters.
    pub(crate) fn string_max(&mut self, name: impl FieldName, max_chars: usize) -> Option<&'v str> {
        let text = self.string(name)?;
        // No more bytes than the limit means no more characters either.
        if text.len() <= max_chars {
            return Some(text);
        }
        let count = text.chars().count();
        if count > max_chars {
            self.violation(
                name,
                format!("must be at most {max_chars} characters (got {count})"),
            );
            return None;
        }
        Some(text)
    }

    /// An optional string that is `None` when empty or only whitespace;
    /// trimmed.
    pub(crate) fn text(&mut self, name: impl FieldName, max_chars: usize) -> Option<&'v str> {
        self.string_max(name, max_chars)
            .map(str::trim)
            .filter(|text| !text.is_empty())
    }

    /// A required non-blank string of at most `max_chars` characters.
    pub(crate) fn required_text(
        &mut self,
        name: impl FieldName,
        max_chars: usize,
    ) -> Option<&'v str> {
        if !self.has(name) {
            self.violation(name, "is required");
            return None;
        }
        let text = self.string_max(name, max_chars)?.trim();
        if text.is_empty() {
            self.violation(name, "must not be empty");
            return None;
        }
        Some(text)
    }

    /// An optional number.
    pub(crate) fn number(&mut self, name: impl FieldName) -> Option<f64> {
        match self.get(name)? {
            Field::Number(value) if value.is_finite() => Some(value),
            Field::Number(_) => {
                self.violation(name, "must be a finite number");
                None
            }
            other => {
                let message = format!("must be a number, not {}", other.kind());
                self.violation(name, message);
                None
            }
        }
    }

    /// A required number. A `null` is explained: `NaN` and `Infinity`
    /// become `null` when a page serialises JSON.
    pub(crate) fn required_number(&mut self, name: impl FieldName) -> Option<f64> {
        match self.raw(name) {
            None => {
                self.violation(name, "is required");
                None
            }
            Some(Field::Null) => {
                self.violation(
                    name,
                    "is required and must be a finite number (got null; NaN and Infinity arrive as null)",
                );
                None
            }
            Some(_) => self.number(name),
        }
    }

    /// A required amount as a decimal, above its floor and at most `max`.
    pub(crate) fn decimal(
        &mut self,
        name: impl FieldName,
        floor: Floor,
        max: Decimal,
    ) -> Option<Decimal> {
        let raw = self.required_number(name)?;
        let Some(value) = decimal_from_f64(raw).filter(|value| *value <= max) else {
            self.violation(name, format!("must be at most {max} (got {raw})"));
            return None;
        };
        // Compared after conversion: 1e-30 is a positive float but a zero decimal.
        // The sign and zero tests are `<= 0` and `< 0` without a comparison's
        // rescaling.
        let below = match floor {
            Floor::AboveZero => {
                (value.is_zero() || value.is_sign_negative()).then_some("must be greater than 0")
            }
            Floor::Zero => {
                (value.is_sign_negative() && !value.is_zero()).then_some("must not be negative")
            }
        };
        if let Some(message) = below {
            self.violation(name, format!("{message} (got {raw})"));
            return None;
        }
        Some(value)
    }

    /// An optional token that must be one of `expected`.
    pub(crate) fn token<T: Copy>(
        &mut self,
        name: impl FieldName,
        expected: &[T],
        token_of: fn(T) -> &'static str,
    ) -> Result<Option<T>, Recorded> {
        if !self.has(name) {
            return Ok(None);
        }
        let given = self.string(name).ok_or(Recorded)?;
        if let Some(found) = expected.iter().copied().find(|t| token_of(*t) == given) {
            return Ok(Some(found));
        }
        let quoted: Vec<String> = expected
            .iter()
            .map(|t| format!("\"{}\"", token_of(*t)))
            .collect();
        self.violation(
            name,
            format!(
                "unknown value \"{given}\"; expected one of {}",
                quoted.join(", ")
            ),
        );
        Err(Recorded)
    }

    /// An optional boolean.
    pub(crate) fn boolean(&mut self, name: impl FieldName) -> Option<bool> {
        match self.get(name)? {
            Field::Bool(flag) => Some(flag),
            other => {
                let message = format!("must be true or false, not {}", other.kind());
                self.violation(name, message);
                None
            }
        }
    }

    /// An optional array.
    pub(crate) fn array(&mut self, name: impl FieldName) -> Option<&'v [Value]> {
        match self.get(name)? {
            Field::Array(items) => Some(items),
            other => {
                let message = format!("must be an array, not {}", other.kind());
                self.violation(name, message);
                None
            }
        }
    }

    /// A required array.
    pub(crate) fn required_array(&mut self, name: impl FieldName) -> Option<&'v [Value]> {
        if !self.has(name) {
            self.violation(name, "is required");
            return None;
        }
        self.array(name)
    }
}

fn unknown_field_message(name: &str, known: &[&str]) -> String {
    if let Some(close) = known.iter().find(|known| known.eq_ignore_ascii_case(name)) {
        return format!("unknown field; did you mean `{close}`?");
    }
    if known.is_empty() {
        return "unknown field; this request takes no fields".to_owned();
    }
    format!("unknown field; expected one of: {}", known.join(", "))
}
