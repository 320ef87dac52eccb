//! An `addLines` batch read straight from JSON text: each line's known fields
//! go into slots on the stack, strings borrowed from the text, and the line
//! is handed over while the parse goes on, so nothing is kept per line. The
//! validation reads the slots exactly as it reads a parsed
//! [`serde_json::Value`] (see [`crate::input::Fields`]), so both ways give
//! the same answer; the property tests hold them to that.

use std::borrow::Cow;
use std::fmt;

use serde::de::{self, DeserializeSeed, Deserializer, IgnoredAny, MapAccess, SeqAccess, Visitor};

use crate::input::{Field, MAX_FIELDS, position};

/// A field's value, owned only when the text escaped it.
#[derive(Debug)]
enum RawField<'a> {
    Null,
    Bool(bool),
    Number(f64),
    Str(Cow<'a, str>),
    Array,
    Object,
}

impl RawField<'_> {
    /// The view validation reads.
    fn view(&self) -> Field<'_> {
        match self {
            RawField::Null => Field::Null,
            RawField::Bool(flag) => Field::Bool(*flag),
            RawField::Number(value) => Field::Number(*value),
            RawField::Str(text) => Field::Str(text),
            RawField::Array => Field::Array(&[]),
            RawField::Object => Field::Object,
        }
    }
}

/// One line of the batch, as handed to the caller of [`each_line`].
#[derive(Debug)]
pub(crate) enum RawLine<'s> {
    /// An object: its known fields by position, and the other names, sorted.
    Object {
        slots: &'s [Option<Field<'s>>; MAX_FIELDS],
        unknown: &'s [&'s str],
    },
    /// Anything else, by its kind ("a string").
    Other(&'static str),
}

/// What the batch turned out to be.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Shape {
    /// An array of this many lines.
    Lines(usize),
    /// Something else, by its kind.
    Other(&'static str),
}

/// Parses `text` as a batch whose lines have the fields `known`, calling
/// `line(i, line)` for each line as it is read.
pub(crate) fn each_line<F>(text: &str, known: &[&str], line: F) -> serde_json::Result<Shape>
where
    F: FnMut(usize, RawLine<'_>),
{
    let mut line = line;
    let mut deserializer = serde_json::Deserializer::from_str(text);
    let shape = BatchSeed {
        known,
        line: &mut line,
    }
    .deserialize(&mut deserializer)?;
    deserializer.end()?;
    Ok(shape)
}

/// The `visit_*` methods of a visitor that answers a scalar with `$other`
/// and its kind ("a number").
macro_rules! scalars_are_other {
    ($other:path) => {
        fn visit_unit<E: de::Error>(self) -> Result<Self::Value, E> {
            Ok($other("null"))
        }

        fn visit_bool<E: de::Error>(self, _: bool) -> Result<Self::Value, E> {
            Ok($other("a boolean"))
        }

        fn visit_i64<E: de::Error>(self, _: i64) -> Result<Self::Value, E> {
            Ok($other("a number"))
        }

        fn visit_u64<E: de::Error>(self, _: u64) -> Result<Self::Value, E> {
            Ok($other("a number"))
        }

        fn visit_f64<E: de::Error>(self, _: f64) -> Result<Self::Value, E> {
            Ok($other("a number"))
        }

        fn visit_str<E: de::Error>(self, _: &str) -> Result<Self::Value, E> {
            Ok($other("a string"))
        }
    };
}

struct BatchSeed<'k, 'f, F> {
    known: &'k [&'k str],
    line: &'f mut F,
}

impl<'de, F> DeserializeSeed<'de> for BatchSeed<'_, '_, F>
where
    F: FnMut(usize, RawLine<'_>),
{
    type Value = Shape;

    fn deserialize<D: Deserializer<'de>>(self, deserializer: D) -> Result<Self::Value, D::Error> {
        deserializer.deserialize_any(self)
    }
}

impl<'de, F> Visitor<'de> for BatchSeed<'_, '_, F>
where
    F: FnMut(usize, RawLine<'_>),
{
    type Value = Shape;

    fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("an array of lines")
    }

    fn visit_seq<A: SeqAccess<'de>>(self, mut seq: A) -> Result<Self::Value, A::Error> {
        let mut count = 0;
        while seq
            .next_element_seed(LineSeed {
                known: self.known,
                index: count,
                line: &mut *self.line,
            })?
            .is_some()
        {
            count += 1;
        }
        Ok(Shape::Lines(count))
    }

    fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<Self::Value, A::Error> {
        while map.next_entry::<IgnoredAny, IgnoredAny>()?.is_some() {}
        Ok(Shape::Other("an object"))
    }

    scalars_are_other!(Shape::Other);
}

struct LineSeed<'k, 'f, F> {
    known: &'k [&'k str],
    index: usize,
    line: &'f mut F,
}

impl<'de, F> DeserializeSeed<'de> for LineSeed<'_, '_, F>
where
    F: FnMut(usize, RawLine<'_>),
{
    type Value = ();

    fn deserialize<D: Deserializer<'de>>(self, deserializer: D) -> Result<Self::Value, D::Error> {
        deserializer.deserialize_any(self)
    }
}

/// Hands a line that is not an object over by its kind.
macro_rules! scalar_lines_are_other {
    () => {
        fn visit_unit<E: de::Error>(self) -> Result<Self::Value, E> {
            (self.line)(self.index, RawLine::Other("null"));
            Ok(())
        }

        fn visit_bool<E: de::Error>(self, _: bool) -> Result<Self::Value, E> {
            (self.line)(self.index, RawLine::Other("a boolean"));
            Ok(())
        }

        fn visit_i64<E: de::Error>(self, _: i64) -> Result<Self::Value, E> {
            (self.line)(self.index, RawLine::Other("a number"));
            Ok(())
        }

        fn visit_u64<E: de::Error>(self, _: u64) -> Result<Self::Value, E> {
            (self.line)(self.index, RawLine::Other("a number"));
            Ok(())
        }

        fn visit_f64<E: de::Error>(self, _: f64) -> Result<Self::Value, E> {
            (self.line)(self.index, RawLine::Other("a number"));
            Ok(())
        }

        fn visit_str<E: de::Error>(self, _: &str) -> Result<Self::Value, E> {
            (self.line)(self.index, RawLine::Other("a string"));
            Ok(())
        }
    };
}

impl<'de, F> Visitor<'de> for LineSeed<'_, '_, F>
where
    F: FnMut(usize, RawLine<'_>),
{
    type Value = ();

    fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("a line object")
    }

    fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<Self::Value, A::Error> {
        let mut slots: [Option<RawField<'de>>; MAX_FIELDS] = Default::default();
        let mut unknown = Vec::new();
        while let Some(key) = map.next_key_seed(KeySeed { known: self.known })? {
            match key {
                // A repeated name keeps its last value, as a parsed object does.
                Key::Known(i) => {
                    let value = map.next_value::<RawField<'de>>()?;
                    if let Some(slot) = slots.get_mut(i) {
                        *slot = Some(value);
                    }
                }
                Key::Unknown(name) => {
                    map.next_value::<IgnoredAny>()?;
                    unknown.push(name);
                }
            }
        }
        unknown.sort_unstable();
        unknown.dedup();
        let mut views = [None; MAX_FIELDS];
        for (view, slot) in views.iter_mut().zip(&slots) {
            *view = slot.as_ref().map(RawField::view);
        }
        let unknown: Vec<&str> = unknown.iter().map(String::as_str).collect();
        (self.line)(
            self.index,
            RawLine::Object {
                slots: &views,
                unknown: &unknown,
            },
        );
        Ok(())
    }

    fn visit_seq<A: SeqAccess<'de>>(self, mut seq: A) -> Result<Self::Value, A::Error> {
        while seq.next_element::<IgnoredAny>()?.is_some() {}
        (self.line)(self.index, RawLine::Other("an array"));
        Ok(())
    }

    scalar_lines_are_other!();
}

impl<'de> de::Deserialize<'de> for RawField<'de> {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        deserializer.deserialize_any(FieldVisitor)
    }
}

struct FieldVisitor;

impl<'de> Visitor<'de> for FieldVisitor {
    type Value = RawField<'de>;

    fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("any JSON value")
    }

    fn visit_unit<E: de::Error>(self) -> Result<Self::Value, E> {
        Ok(RawField::Null)
    }

    fn visit_bool<E: de::Error>(self, flag: bool) -> Result<Self::Value, E> {
        Ok(RawField::Bool(flag))
    }

    #[allow(clippy::cast_precision_loss)] // as serde_json's `Value::as_f64` reads it
    fn visit_i64<E: de::Error>(self, value: i64) -> Result<Self::Value, E> {
        Ok(RawField::Number(value as f64))
    }

    #[allow(clippy::cast_precision_loss)] // as serde_json's `Value::as_f64` reads it
    fn visit_u64<E: de::Error>(self, value: u64) -> Result<Self::Value, E> {
        Ok(RawField::Number(value as f64))
    }

    fn visit_f64<E: de::Error>(self, value: f64) -> Result<Self::Value, E> {
        Ok(RawField::Number(value))
    }

    fn visit_borrowed_str<E: de::Error>(self, text: &'de str) -> Result<Self::Value, E> {
        Ok(RawField::Str(Cow::Borrowed(text)))
    }

    fn visit_str<E: de::Error>(self, text: &str) -> Result<Self::Value, E> {
        Ok(RawField::Str(Cow::Owned(text.to_owned())))
    }

    fn visit_string<E: de::Error>(self, text: String) -> Result<Self::Value, E> {
        Ok(RawField::Str(Cow::Owned(text)))
    }

    fn visit_seq<A: SeqAccess<'de>>(self, mut seq: A) -> Result<Self::Value, A::Error> {
        while seq.next_element::<IgnoredAny>()?.is_some() {}
        Ok(RawField::Array)
    }

    fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<Self::Value, A::Error> {
        while map.next_entry::<IgnoredAny, IgnoredAny>()?.is_some() {}
        Ok(RawField::Object)
    }
}

/// A line's field name: its position among the known names, or the name.
enum Key {
    Known(usize),
    Unknown(String),
}

/// Reads a field name without copying it unless it is unknown.
struct KeySeed<'k> {
    known: &'k [&'k str],
}

impl<'de> DeserializeSeed<'de> for KeySeed<'_> {
    type Value = Key;

    fn deserialize<D: Deserializer<'de>>(self, deserializer: D) -> Result<Self::Value, D::Error> {
        deserializer.deserialize_str(self)
    }
}

impl Visitor<'_> for KeySeed<'_> {
    type Value = Key;

    fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("a field name")
    }

    fn visit_str<E: de::Error>(self, name: &str) -> Result<Self::Value, E> {
        Ok(match position(self.known, name) {
            Some(i) => Key::Known(i),
            None => Key::Unknown(name.to_owned()),
        })
    }
}
