//! The catalog index read from its JSON text by a reader made for its shape.
//!
//! The host reads the index each time the editor opens a quote: for 100 000 products that is
//! 7.3 MB of JSON. `serde_json`'s parser read it before, the last JSON text parser left in the
//! host module; `JSON.parse` in the browser takes twice as long. This
//! reader knows the index's five shapes. It takes a string that holds no escape straight from the
//! text, skips a member it does not know (checking that it is JSON), and reads numbers as
//! `serde_json` does, so that a price reads as the same `f64` and the same [`Decimal`].
//!
//! It accepts exactly the texts `serde_json::from_slice::<CatalogIndex>` accepts, with the same
//! index as the result (the property tests in `protocol/tests/spec/index_json.rs` hold it to
//! that); where it refuses, it says what and where: a line and column for text that is not JSON,
//! the path of the field (`products[3].sku`) for JSON that is not an index.
//!
//! In the host module it is 16 KB of code where `serde_json`'s parser and the index types'
//! readers were 28 KB, and 2.5 KB less as brotli; for 100 000 products it reads the index in
//! about the time `serde_json` took (`docs/src/inside/host-weight.md` has the figures).

use std::borrow::Cow;

use rust_decimal::Decimal;

use super::{CatalogIndex, IndexedCostItem, IndexedProduct, IndexedTaskTemplate, TaskSequenceStep};
use crate::error::Error;
use crate::input::{index, join};
use crate::money::decimal_from_f64;

/// The message for a control character inside a string, which JSON text must escape.
const CONTROL_CHARACTER: &str = "control character (\\u0000-\\u001F) found while parsing a string";

/// Why a text is not a catalog index, which [`read_index`] says as an [`Error::Internal`].
#[derive(Debug)]
enum Fault {
    /// Not JSON text: what was expected, and where (line and column from 1, the column in
    /// bytes).
    Syntax {
        message: &'static str,
        line: usize,
        column: usize,
    },
    /// JSON, but not an index: the path of the field at fault (`products[3].sku`, empty for the
    /// whole text) and what is wrong with it.
    Shape { path: String, message: String },
}

impl Fault {
    /// The error for a text that `what` names (`the backend's answer to GET /catalog/index`).
    fn about(self, what: &str) -> Error {
        Error::Internal(match self {
            Fault::Syntax {
                message,
                line,
                column,
            } => format!("{what} is not JSON ({message} at line {line} column {column})"),
            Fault::Shape { path, message } if path.is_empty() => {
                format!("{what} has an unexpected shape ({message})")
            }
            Fault::Shape { path, message } => {
                format!("{what} has an unexpected shape ({path}: {message})")
            }
        })
    }
}

/// Reads the body of `GET /catalog/index`, which `what` names in a message.
///
/// # Errors
///
/// [`Error::Internal`], saying where the text is not JSON (a line and column) or where the JSON
/// is not an index (the path of the field): `WHAT has an unexpected shape
/// (products[3].sku: must be a string, not a number)`.
pub fn read_index(text: &[u8], what: &str) -> Result<CatalogIndex, Error> {
    read(text).map_err(|fault| fault.about(what))
}

fn read(text: &[u8]) -> Result<CatalogIndex, Fault> {
    let mut reader = Reader { text, at: 0 };
    let mut index = reader.object(Path::Root, INDEX)?;
    if reader.peek().is_some() {
        return Err(reader.syntax("trailing characters"));
    }
    Ok(CatalogIndex {
        products: index.products(0, Path::Root)?,
        task_templates: index.task_templates(1, Path::Root)?,
        cost_items: index.cost_items(2, Path::Root)?,
    })
}

/// What a member the index knows holds.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Kind {
    Text,
    Amount,
    /// A product's task sequence: optional, empty when missing.
    Steps,
    Products,
    TaskTemplates,
    CostItems,
}

/// The members of each of the index's objects, in the order their readers take them.
const INDEX: &[(&str, Kind)] = &[
    ("products", Kind::Products),
    ("taskTemplates", Kind::TaskTemplates),
    ("costItems", Kind::CostItems),
];
const PRODUCT: &[(&str, Kind)] = &[
    ("id", Kind::Text),
    ("sku", Kind::Text),
    ("taskSequence", Kind::Steps),
];
const STEP: &[(&str, Kind)] = &[("taskTemplateId", Kind::Text), ("qtyPerUnit", Kind::Amount)];
const TASK_TEMPLATE: &[(&str, Kind)] = &[
    ("id", Kind::Text),
    ("code", Kind::Text),
    ("name", Kind::Text),
    ("unitPrice", Kind::Amount),
    ("costPrice", Kind::Amount),
];
const COST_ITEM: &[(&str, Kind)] = &[
    ("id", Kind::Text),
    ("code", Kind::Text),
    ("name", Kind::Text),
    ("type", Kind::Text),
];

/// The most members an object of the index has.
const MOST_MEMBERS: usize = 5;

/// A member's value, read.
#[derive(Debug)]
enum Member {
    Text(String),
    Amount(Decimal),
    Steps(Vec<TaskSequenceStep>),
    Products(Vec<IndexedProduct>),
    TaskTemplates(Vec<IndexedTaskTemplate>),
    CostItems(Vec<IndexedCostItem>),
}

/// An object's known members as read, by their place in its table.
struct Members {
    table: &'static [(&'static str, Kind)],
    read: [Option<Member>; MOST_MEMBERS],
}

impl Members {
    /// Member `at`, which must have been there.
    fn take(&mut self, at: usize, path: Path<'_>) -> Result<Member, Fault> {
        let name = self.table.get(at).map_or("", |(name, _)| name);
        self.read
            .get_mut(at)
            .and_then(Option::take)
            .ok_or_else(|| path.shape(format!("missing field `{name}`")))
    }

    fn text(&mut self, at: usize, path: Path<'_>) -> Result<String, Fault> {
        match self.take(at, path)? {
            Member::Text(text) => Ok(text),
            _ => Err(self.mixed_up(at, path)),
        }
    }

    fn amount(&mut self, at: usize, path: Path<'_>) -> Result<Decimal, Fault> {
        match self.take(at, path)? {
            Member::Amount(amount) => Ok(amount),
            _ => Err(self.mixed_up(at, path)),
        }
    }

    /// A product's task sequence, empty when it has none.
    fn steps(&mut self, at: usize, path: Path<'_>) -> Result<Vec<TaskSequenceStep>, Fault> {
        match self.read.get_mut(at).and_then(Option::take) {
            None => Ok(Vec::new()),
            Some(Member::Steps(steps)) => Ok(steps),
            Some(_) => Err(self.mixed_up(at, path)),
        }
    }

    fn products(&mut self, at: usize, path: Path<'_>) -> Result<Vec<IndexedProduct>, Fault> {
        match self.take(at, path)? {
            Member::Products(products) => Ok(products),
            _ => Err(self.mixed_up(at, path)),
        }
    }

    fn task_templates(
        &mut self,
        at: usize,
        path: Path<'_>,
    ) -> Result<Vec<IndexedTaskTemplate>, Fault> {
        match self.take(at, path)? {
            Member::TaskTemplates(templates) => Ok(templates),
            _ => Err(self.mixed_up(at, path)),
        }
    }

    fn cost_items(&mut self, at: usize, path: Path<'_>) -> Result<Vec<IndexedCostItem>, Fault> {
        match self.take(at, path)? {
            Member::CostItems(items) => Ok(items),
            _ => Err(self.mixed_up(at, path)),
        }
    }

    /// A member taken as another kind than its table gives it: a mistake in this module, said
    /// rather than panicked.
    #[cold]
    fn mixed_up(&self, at: usize, path: Path<'_>) -> Fault {
        let name = self.table.get(at).map_or("", |(name, _)| name);
        path.member(name)
            .shape("was read as another kind of value than the index holds there")
    }
}

fn product(reader: &mut Reader<'_>, path: Path<'_>) -> Result<IndexedProduct, Fault> {
    let mut members = reader.object(path, PRODUCT)?;
    Ok(IndexedProduct {
        id: members.text(0, path)?,
        sku: members.text(1, path)?,
        task_sequence: members.steps(2, path)?,
    })
}

fn step(reader: &mut Reader<'_>, path: Path<'_>) -> Result<TaskSequenceStep, Fault> {
    let mut members = reader.object(path, STEP)?;
    Ok(TaskSequenceStep {
        task_template_id: members.text(0, path)?,
        qty_per_unit: members.amount(1, path)?,
    })
}

fn task_template(reader: &mut Reader<'_>, path: Path<'_>) -> Result<IndexedTaskTemplate, Fault> {
    let mut members = reader.object(path, TASK_TEMPLATE)?;
    Ok(IndexedTaskTemplate {
        id: members.text(0, path)?,
        code: members.text(1, path)?,
        name: members.text(2, path)?,
        unit_price: members.amount(3, path)?,
        cost_price: members.amount(4, path)?,
    })
}

fn cost_item(reader: &mut Reader<'_>, path: Path<'_>) -> Result<IndexedCostItem, Fault> {
    let mut members = reader.object(path, COST_ITEM)?;
    Ok(IndexedCostItem {
        id: members.text(0, path)?,
        code: members.text(1, path)?,
        name: members.text(2, path)?,
        item_type: members.text(3, path)?,
    })
}

/// Where in the index a value is, written out only for a message (`products[3].sku`).
#[derive(Debug, Clone, Copy)]
enum Path<'a> {
    Root,
    Member(&'a Path<'a>, &'a str),
    Item(&'a Path<'a>, usize),
}

impl<'a> Path<'a> {
    fn member(&'a self, name: &'a str) -> Path<'a> {
        Path::Member(self, name)
    }

    fn item(&'a self, index: usize) -> Path<'a> {
        Path::Item(self, index)
    }

    fn written(self) -> String {
        match self {
            Path::Root => String::new(),
            Path::Member(parent, name) => join(&parent.written(), name),
            Path::Item(parent, at) => index(&parent.written(), at),
        }
    }

    /// The error that the value here is not what the index holds.
    #[cold]
    fn shape(self, message: impl Into<String>) -> Fault {
        Fault::Shape {
            path: self.written(),
            message: message.into(),
        }
    }
}

/// The kind of JSON value that starts with `byte`, for a message; `None` where no value does.
fn kind(byte: u8) -> Option<&'static str> {
    Some(match byte {
        b'{' => "an object",
        b'[' => "an array",
        b'"' => "a string",
        b't' | b'f' => "a boolean",
        b'n' => "null",
        b'-' | b'0'..=b'9' => "a number",
        _ => return None,
    })
}

/// The text, and how far it has been read.
struct Reader<'a> {
    text: &'a [u8],
    at: usize,
}

impl<'a> Reader<'a> {
    /// The next byte that is not white space, not taken.
    fn peek(&mut self) -> Option<u8> {
        while let Some(b' ' | b'\n' | b'\r' | b'\t') = self.text.get(self.at) {
            self.at += 1;
        }
        self.text.get(self.at).copied()
    }

    /// A syntax error at the byte being read.
    #[cold]
    fn syntax(&self, message: &'static str) -> Fault {
        let before = self.text.get(..self.at).unwrap_or(self.text);
        let line = before.split(|&byte| byte == b'\n').count();
        let column = before
            .iter()
            .rev()
            .take_while(|&&byte| byte != b'\n')
            .count()
            + 1;
        Fault::Syntax {
            message,
            line,
            column,
        }
    }

    /// Takes `byte`, after white space, or fails with `message`.
    fn take(&mut self, byte: u8, message: &'static str) -> Result<(), Fault> {
        if self.peek() == Some(byte) {
            self.at += 1;
            Ok(())
        } else {
            Err(self.syntax(message))
        }
    }

    /// What the next value is, for a message saying it is the wrong kind; a syntax error where
    /// no value starts.
    #[cold]
    fn wrong_kind(&mut self, path: Path<'_>, wanted: &str) -> Fault {
        match self.peek() {
            None => self.syntax("EOF while parsing a value"),
            Some(byte) => match kind(byte) {
                Some(found) => path.shape(format!("must be {wanted}, not {found}")),
                None => self.syntax("expected value"),
            },
        }
    }

    /// Reads an object at `path` whose known members are `table`'s; others are skipped. A known
    /// member named twice is an error, as serde makes it.
    fn object(
        &mut self,
        path: Path<'_>,
        table: &'static [(&'static str, Kind)],
    ) -> Result<Members, Fault> {
        let mut members = Members {
            table,
            read: Default::default(),
        };
        if self.peek() != Some(b'{') {
            return Err(self.wrong_kind(path, "an object"));
        }
        self.at += 1;
        if self.peek() == Some(b'}') {
            self.at += 1;
            return Ok(members);
        }
        loop {
            if self.peek() != Some(b'"') {
                return Err(self.syntax("key must be a string"));
            }
            let name = self.raw_string()?;
            self.take(b':', "expected `:`")?;
            let known = table.iter().position(|(known, _)| *known == name);
            match known.and_then(|at| Some((table.get(at)?, members.read.get_mut(at)?))) {
                Some(((_, _), Some(_))) => {
                    return Err(path.shape(format!("duplicate field `{name}`")));
                }
                Some(((name, kind), slot)) => {
                    *slot = Some(self.member(path.member(name), *kind)?);
                }
                None => self.skip()?,
            }
            match self.peek() {
                Some(b',') => self.at += 1,
                Some(b'}') => {
                    self.at += 1;
                    return Ok(members);
                }
                Some(_) => return Err(self.syntax("expected `,` or `}`")),
                None => return Err(self.syntax("EOF while parsing an object")),
            }
        }
    }

    /// The value of a known member at `path`, of `kind`.
    fn member(&mut self, path: Path<'_>, kind: Kind) -> Result<Member, Fault> {
        Ok(match kind {
            Kind::Text => Member::Text(self.string(path)?),
            Kind::Amount => Member::Amount(self.amount(path)?),
            Kind::Steps => Member::Steps(self.array(path, step)?),
            Kind::Products => Member::Products(self.array(path, product)?),
            Kind::TaskTemplates => Member::TaskTemplates(self.array(path, task_template)?),
            Kind::CostItems => Member::CostItems(self.array(path, cost_item)?),
        })
    }

    /// Reads an array at `path`, each item with `item` (given the item's path).
    fn array<T>(
        &mut self,
        path: Path<'_>,
        item: fn(&mut Self, Path<'_>) -> Result<T, Fault>,
    ) -> Result<Vec<T>, Fault> {
        if self.peek() != Some(b'[') {
            return Err(self.wrong_kind(path, "an array"));
        }
        self.at += 1;
        let mut items = Vec::new();
        if self.peek() == Some(b']') {
            self.at += 1;
            return Ok(items);
        }
        loop {
            items.push(item(self, path.item(items.len()))?);
            match self.peek() {
                Some(b',') => self.at += 1,
                Some(b']') => {
                    self.at += 1;
                    return Ok(items);
                }
                Some(_) => return Err(self.syntax("expected `,` or `]`")),
                None => return Err(self.syntax("EOF while parsing a list")),
            }
        }
    }

    /// A string value at `path`.
    fn string(&mut self, path: Path<'_>) -> Result<String, Fault> {
        if self.peek() != Some(b'"') {
            return Err(self.wrong_kind(path, "a string"));
        }
        self.raw_string().map(Cow::into_owned)
    }

    /// A number at `path`, as an amount.
    fn amount(&mut self, path: Path<'_>) -> Result<Decimal, Fault> {
        if !matches!(self.peek(), Some(b'-' | b'0'..=b'9')) {
            return Err(self.wrong_kind(path, "a number"));
        }
        let number = self.number()?;
        decimal_from_f64(number)
            .ok_or_else(|| path.shape(format!("{number} is not a representable amount")))
    }

    /// The string starting at the `"` being read, its escapes resolved.
    fn raw_string(&mut self) -> Result<Cow<'a, str>, Fault> {
        self.at += 1;
        let start = self.at;
        self.skip_plain_bytes();
        loop {
            match self.text.get(self.at) {
                Some(b'"') => {
                    let text = self.text.get(start..self.at).unwrap_or_default();
                    let text = std::str::from_utf8(text)
                        .map_err(|_| self.syntax("invalid unicode code point"))?;
                    self.at += 1;
                    return Ok(Cow::Borrowed(text));
                }
                Some(b'\\') => break,
                Some(0..0x20) => return Err(self.syntax(CONTROL_CHARACTER)),
                Some(_) => self.at += 1,
                None => return Err(self.syntax("EOF while parsing a string")),
            }
        }
        let mut bytes = self.text.get(start..self.at).unwrap_or_default().to_vec();
        loop {
            match self.text.get(self.at).copied() {
                Some(b'"') => {
                    self.at += 1;
                    return String::from_utf8(bytes)
                        .map(Cow::Owned)
                        .map_err(|_| self.syntax("invalid unicode code point"));
                }
                Some(b'\\') => {
                    self.at += 1;
                    self.escape(&mut bytes)?;
                }
                Some(0..0x20) => return Err(self.syntax(CONTROL_CHARACTER)),
                Some(byte) => {
                    bytes.push(byte);
                    self.at += 1;
                }
                None => return Err(self.syntax("EOF while parsing a string")),
            }
        }
    }

    /// Moves on to the next `"`, `\\` or control character, eight bytes at a time: most of the
    /// index is the text of its strings, and this is what makes reading it as fast as
    /// `serde_json` (which does the same).
    fn skip_plain_bytes(&mut self) {
        const ONES: u64 = u64::from_ne_bytes([1; 8]);
        const HIGH: u64 = u64::from_ne_bytes([0x80; 8]);
        /// Whether any byte of `word` is zero.
        fn has_zero(word: u64) -> bool {
            word.wrapping_sub(ONES) & !word & HIGH != 0
        }
        let rest = self.text.get(self.at..).unwrap_or_default();
        for chunk in rest.chunks_exact(8) {
            let word = u64::from_ne_bytes(chunk.try_into().unwrap_or([0; 8]));
            // A byte below 0x20 is one whose top three bits are clear.
            let control = has_zero(word & u64::from_ne_bytes([0xe0; 8]));
            let quote = has_zero(word ^ u64::from_ne_bytes([b'"'; 8]));
            let backslash = has_zero(word ^ u64::from_ne_bytes([b'\\'; 8]));
            if control || quote || backslash {
                return;
            }
            self.at += 8;
        }
    }

    /// The escape after a `\`, its character's UTF-8 added to `bytes`.
    fn escape(&mut self, bytes: &mut Vec<u8>) -> Result<(), Fault> {
        let Some(&letter) = self.text.get(self.at) else {
            return Err(self.syntax("EOF while parsing a string"));
        };
        self.at += 1;
        let plain = match letter {
            b'"' => b'"',
            b'\\' => b'\\',
            b'/' => b'/',
            b'b' => 0x08,
            b'f' => 0x0c,
            b'n' => b'\n',
            b'r' => b'\r',
            b't' => b'\t',
            b'u' => {
                let character = self.unicode_escape()?;
                let mut buffer = [0; 4];
                bytes.extend_from_slice(character.encode_utf8(&mut buffer).as_bytes());
                return Ok(());
            }
            _ => return Err(self.syntax("invalid escape")),
        };
        bytes.push(plain);
        Ok(())
    }

    /// The character of a `\uXXXX` escape (two, for a surrogate pair), after its `u`.
    fn unicode_escape(&mut self) -> Result<char, Fault> {
        let first = self.hex4()?;
        let code = match first {
            0xD800..=0xDBFF => {
                if self.text.get(self.at..self.at + 2) != Some(b"\\u") {
                    return Err(self.syntax("lone leading surrogate in hex escape"));
                }
                self.at += 2;
                let second = self.hex4()?;
                if !(0xDC00..=0xDFFF).contains(&second) {
                    return Err(self.syntax("lone leading surrogate in hex escape"));
                }
                0x10000 + ((first - 0xD800) << 10) + (second - 0xDC00)
            }
            0xDC00..=0xDFFF => return Err(self.syntax("unexpected end of hex escape")),
            other => other,
        };
        char::from_u32(code).ok_or_else(|| self.syntax("invalid unicode code point"))
    }

    /// Four hex digits.
    fn hex4(&mut self) -> Result<u32, Fault> {
        let mut code = 0;
        for _ in 0..4 {
            let digit = self
                .text
                .get(self.at)
                .and_then(|&byte| char::from(byte).to_digit(16))
                .ok_or_else(|| self.syntax("invalid escape"))?;
            code = code * 16 + digit;
            self.at += 1;
        }
        Ok(code)
    }

    /// A JSON number, as `serde_json` reads it without its `float_roundtrip` feature: the
    /// digits into a `u64` (those past its range only counted), then scaled by a power of ten.
    fn number(&mut self) -> Result<f64, Fault> {
        let (negative, significand, exponent) = self.number_parts()?;
        let magnitude =
            scale(significand, exponent).ok_or_else(|| self.syntax("number out of range"))?;
        Ok(if negative { -magnitude } else { magnitude })
    }

    /// Takes a JSON number, checking its grammar: whether it is negative, its digits as a `u64`
    /// (past its range, a whole part's digits only counted and a fraction's dropped), and the
    /// power of ten they are scaled by.
    fn number_parts(&mut self) -> Result<(bool, u64, i32), Fault> {
        let negative = self.text.get(self.at) == Some(&b'-');
        if negative {
            self.at += 1;
        }
        let mut significand: u64 = 0;
        let mut exponent: i32 = 0;
        match self.text.get(self.at) {
            Some(b'0') => {
                self.at += 1;
                if matches!(self.text.get(self.at), Some(b'0'..=b'9')) {
                    return Err(self.syntax("invalid number"));
                }
            }
            Some(b'1'..=b'9') => {
                // Once the significand is full, the whole part's other digits only count.
                let mut full = false;
                while let Some(&digit) = self.text.get(self.at).filter(|byte| byte.is_ascii_digit())
                {
                    self.at += 1;
                    if let Some(next) = push_digit(significand, digit).filter(|_| !full) {
                        significand = next;
                    } else {
                        full = true;
                        exponent = exponent.saturating_add(1);
                    }
                }
            }
            Some(_) => return Err(self.syntax("invalid number")),
            None => return Err(self.syntax("EOF while parsing a value")),
        }
        if self.text.get(self.at) == Some(&b'.') {
            self.at += 1;
            let mut digits = 0;
            // Once the significand is full, the fraction's other digits are dropped.
            let mut full = false;
            while let Some(&digit) = self.text.get(self.at).filter(|byte| byte.is_ascii_digit()) {
                self.at += 1;
                digits += 1;
                match push_digit(significand, digit).filter(|_| !full) {
                    Some(next) => {
                        significand = next;
                        exponent = exponent.saturating_sub(1);
                    }
                    None => full = true,
                }
            }
            if digits == 0 {
                return Err(self.syntax("invalid number"));
            }
        }
        if let Some(b'e' | b'E') = self.text.get(self.at) {
            self.at += 1;
            let negative_exponent = match self.text.get(self.at) {
                Some(b'-') => {
                    self.at += 1;
                    true
                }
                Some(b'+') => {
                    self.at += 1;
                    false
                }
                _ => false,
            };
            if !matches!(self.text.get(self.at), Some(b'0'..=b'9')) {
                return Err(self.syntax("invalid number"));
            }
            let mut written: i32 = 0;
            while let Some(&digit) = self.text.get(self.at).filter(|byte| byte.is_ascii_digit()) {
                self.at += 1;
                written = written
                    .saturating_mul(10)
                    .saturating_add(i32::from(digit - b'0'));
            }
            exponent = if negative_exponent {
                exponent.saturating_sub(written)
            } else {
                exponent.saturating_add(written)
            };
        }
        Ok((negative, significand, exponent))
    }

    /// Skips a value, checking that it is JSON as `serde_json` checks a value it ignores: its
    /// grammar, and no more (a skipped string's bytes and escapes are not decoded, and arrays and
    /// objects may nest as deep as they like, so the skipping keeps its own stack).
    fn skip(&mut self) -> Result<(), Fault> {
        // The closing bytes of the arrays and objects the value has open.
        let mut open = Vec::new();
        loop {
            match self.peek() {
                Some(opening @ (b'[' | b'{')) => {
                    self.at += 1;
                    let closing = if opening == b'[' { b']' } else { b'}' };
                    if self.peek() == Some(closing) {
                        self.at += 1;
                    } else {
                        open.push(closing);
                        if closing == b'}' {
                            self.skip_name()?;
                        }
                        continue;
                    }
                }
                Some(b'"') => self.skip_string()?,
                // Its grammar only: serde_json ignores a number it skips, `1e999` too.
                Some(b'-' | b'0'..=b'9') => drop(self.number_parts()?),
                Some(b't') => self.word(b"true")?,
                Some(b'f') => self.word(b"false")?,
                Some(b'n') => self.word(b"null")?,
                Some(_) => return Err(self.syntax("expected value")),
                None => return Err(self.syntax("EOF while parsing a value")),
            }
            // A value is skipped: close what it ends, up to the next one.
            loop {
                let Some(&closing) = open.last() else {
                    return Ok(());
                };
                let in_object = closing == b'}';
                match self.peek() {
                    Some(b',') => {
                        self.at += 1;
                        if in_object {
                            self.skip_name()?;
                        }
                        break;
                    }
                    Some(byte) if byte == closing => {
                        self.at += 1;
                        open.pop();
                    }
                    Some(_) if in_object => return Err(self.syntax("expected `,` or `}`")),
                    Some(_) => return Err(self.syntax("expected `,` or `]`")),
                    None if in_object => return Err(self.syntax("EOF while parsing an object")),
                    None => return Err(self.syntax("EOF while parsing a list")),
                }
            }
        }
    }

    /// Skips a member's name and its `:`.
    fn skip_name(&mut self) -> Result<(), Fault> {
        match self.peek() {
            Some(b'"') => self.skip_string()?,
            Some(_) => return Err(self.syntax("key must be a string")),
            None => return Err(self.syntax("EOF while parsing an object")),
        }
        self.take(b':', "expected `:`")
    }

    /// Skips the string starting at the `"` being read.
    fn skip_string(&mut self) -> Result<(), Fault> {
        self.at += 1;
        loop {
            match self.text.get(self.at) {
                Some(b'"') => {
                    self.at += 1;
                    return Ok(());
                }
                Some(b'\\') => {
                    self.at += 1;
                    match self.text.get(self.at) {
                        Some(b'"' | b'\\' | b'/' | b'b' | b'f' | b'n' | b'r' | b't') => {
                            self.at += 1;
                        }
                        Some(b'u') => {
                            self.at += 1;
                            self.hex4()?;
                        }
                        Some(_) => return Err(self.syntax("invalid escape")),
                        None => return Err(self.syntax("EOF while parsing a string")),
                    }
                }
                Some(0..0x20) => return Err(self.syntax(CONTROL_CHARACTER)),
                Some(_) => self.at += 1,
                None => return Err(self.syntax("EOF while parsing a string")),
            }
        }
    }

    /// Takes `word` (`true`, `false`, `null`).
    fn word(&mut self, word: &[u8]) -> Result<(), Fault> {
        if self.text.get(self.at..self.at + word.len()) == Some(word) {
            self.at += word.len();
            Ok(())
        } else {
            Err(self.syntax("expected ident"))
        }
    }
}

/// `significand` with the decimal digit `digit` written after it; `None` past `u64`.
fn push_digit(significand: u64, digit: u8) -> Option<u64> {
    significand
        .checked_mul(10)
        .and_then(|tens| tens.checked_add(u64::from(digit - b'0')))
}

/// `significand` × 10^`exponent` as `serde_json` computes it: the significand as an `f64`,
/// multiplied or divided by the power of ten; `None` when that is beyond `f64`.
fn scale(significand: u64, mut exponent: i32) -> Option<f64> {
    #[allow(clippy::cast_precision_loss)]
    let mut value = significand as f64;
    loop {
        match POWERS_OF_TEN.get(exponent.unsigned_abs() as usize) {
            Some(&power) if exponent >= 0 => {
                value *= power;
                return value.is_finite().then_some(value);
            }
            Some(&power) => return Some(value / power),
            None if value == 0.0 => return Some(value),
            None if exponent >= 0 => return None,
            None => {
                value /= 1e308;
                exponent += 308;
            }
        }
    }
}

/// 10^0 to 10^308, each the `f64` nearest it.
#[rustfmt::skip]
static POWERS_OF_TEN: [f64; 309] = [
    1e0, 1e1, 1e2, 1e3, 1e4, 1e5, 1e6, 1e7, 1e8, 1e9,
    1e10, 1e11, 1e12, 1e13, 1e14, 1e15, 1e16, 1e17, 1e18, 1e19,
    1e20, 1e21, 1e22, 1e23, 1e24, 1e25, 1e26, 1e27, 1e28, 1e29,
    1e30, 1e31, 1e32, 1e33, 1e34, 1e35, 1e36, 1e37, 1e38, 1e39,
    1e40, 1e41, 1e42, 1e43, 1e44, 1e45, 1e46, 1e47, 1e48, 1e49,
    1e50, 1e51, 1e52, 1e53, 1e54, 1e55, 1e56, 1e57, 1e58, 1e59,
    1e60, 1e61, 1e62, 1e63, 1e64, 1e65, 1e66, 1e67, 1e68, 1e69,
    1e70, 1e71, 1e72, 1e73, 1e74, 1e75, 1e76, 1e77, 1e78, 1e79,
    1e80, 1e81, 1e82, 1e83, 1e84, 1e85, 1e86, 1e87, 1e88, 1e89,
    1e90, 1e91, 1e92, 1e93, 1e94, 1e95, 1e96, 1e97, 1e98, 1e99,
    1e100, 1e101, 1e102, 1e103, 1e104, 1e105, 1e106, 1e107, 1e108, 1e109,
    1e110, 1e111, 1e112, 1e113, 1e114, 1e115, 1e116, 1e117, 1e118, 1e119,
    1e120, 1e121, 1e122, 1e123, 1e124, 1e125, 1e126, 1e127, 1e128, 1e129,
    1e130, 1e131, 1e132, 1e133, 1e134, 1e135, 1e136, 1e137, 1e138, 1e139,
    1e140, 1e141, 1e142, 1e143, 1e144, 1e145, 1e146, 1e147, 1e148, 1e149,
    1e150, 1e151, 1e152, 1e153, 1e154, 1e155, 1e156, 1e157, 1e158, 1e159,
    1e160, 1e161, 1e162, 1e163, 1e164, 1e165, 1e166, 1e167, 1e168, 1e169,
    1e170, 1e171, 1e172, 1e173, 1e174, 1e175, 1e176, 1e177, 1e178, 1e179,
    1e180, 1e181, 1e182, 1e183, 1e184, 1e185, 1e186, 1e187, 1e188, 1e189,
    1e190, 1e191, 1e192, 1e193, 1e194, 1e195, 1e196, 1e197, 1e198, 1e199,
    1e200, 1e201, 1e202, 1e203, 1e204, 1e205, 1e206, 1e207, 1e208, 1e209,
    1e210, 1e211, 1e212, 1e213, 1e214, 1e215, 1e216, 1e217, 1e218, 1e219,
    1e220, 1e221, 1e222, 1e223, 1e224, 1e225, 1e226, 1e227, 1e228, 1e229,
    1e230, 1e231, 1e232, 1e233, 1e234, 1e235, 1e236, 1e237, 1e238, 1e239,
    1e240, 1e241, 1e242, 1e243, 1e244, 1e245, 1e246, 1e247, 1e248, 1e249,
    1e250, 1e251, 1e252, 1e253, 1e254, 1e255, 1e256, 1e257, 1e258, 1e259,
    1e260, 1e261, 1e262, 1e263, 1e264, 1e265, 1e266, 1e267, 1e268, 1e269,
    1e270, 1e271, 1e272, 1e273, 1e274, 1e275, 1e276, 1e277, 1e278, 1e279,
    1e280, 1e281, 1e282, 1e283, 1e284, 1e285, 1e286, 1e287, 1e288, 1e289,
    1e290, 1e291, 1e292, 1e293, 1e294, 1e295, 1e296, 1e297, 1e298, 1e299,
    1e300, 1e301, 1e302, 1e303, 1e304, 1e305, 1e306, 1e307, 1e308,
];
