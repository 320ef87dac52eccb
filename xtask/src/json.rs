//! Just enough JSON for the reports our own tests send: a parser into [`Value`], and quoting a
//! string for JSON we write.

use std::fmt::Write as _;

/// Nesting deeper than this is refused rather than followed (the parser recurses).
const MAX_DEPTH: usize = 64;

/// A parsed JSON value. Numbers keep their text, so that each reader picks the type it needs.
#[derive(Clone, Debug, PartialEq)]
pub(crate) enum Value {
    /// `null`.
    Null,
    /// `true` or `false`.
    Bool(bool),
    /// A number, as written.
    Number(String),
    /// A string, unescaped.
    String(String),
    /// An array.
    Array(Vec<Value>),
    /// An object's members in their order.
    Object(Vec<(String, Value)>),
}

impl Value {
    /// The member `key` of an object (the first one, should it repeat).
    pub(crate) fn get(&self, key: &str) -> Option<&Value> {
        match self {
            Self::Object(members) => members
                .iter()
                .find(|(name, _)| name == key)
                .map(|(_, value)| value),
            _ => None,
        }
    }

    /// A number as `f64`.
    pub(crate) fn as_f64(&self) -> Option<f64> {
        match self {
            Self::Number(text) => text.parse().ok(),
            _ => None,
        }
    }

    /// A number that is a whole, non-negative integer, as `u64`.
    pub(crate) fn as_u64(&self) -> Option<u64> {
        match self {
            Self::Number(text) => text.parse().ok(),
            _ => None,
        }
    }

    /// A string's text.
    pub(crate) fn as_str(&self) -> Option<&str> {
        match self {
            Self::String(text) => Some(text),
            _ => None,
        }
    }

    /// An array's items.
    pub(crate) fn as_array(&self) -> Option<&[Value]> {
        match self {
            Self::Array(items) => Some(items),
            _ => None,
        }
    }
}

/// Parses one JSON value (with whitespace around it, nothing else). The error says what is wrong
/// and at which byte.
pub(crate) fn parse(text: &str) -> Result<Value, String> {
    let mut parser = Parser {
        bytes: text.as_bytes(),
        at: 0,
    };
    let value = parser.value(0)?;
    parser.skip_whitespace();
    if parser.at == parser.bytes.len() {
        Ok(value)
    } else {
        Err(parser.error("text after the value"))
    }
}

/// `text` as a JSON string literal, quotes included.
pub(crate) fn quote(text: &str) -> String {
    let mut quoted = String::with_capacity(text.len() + 2);
    quoted.push('"');
    for c in text.chars() {
        match c {
            '"' => quoted.push_str("\\\""),
            '\\' => quoted.push_str("\\\\"),
            '\n' => quoted.push_str("\\n"),
            '\r' => quoted.push_str("\\r"),
            '\t' => quoted.push_str("\\t"),
            c if u32::from(c) < 0x20 => {
                let _ = write!(quoted, "\\u{:04x}", u32::from(c));
            }
            c => quoted.push(c),
        }
    }
    quoted.push('"');
    quoted
}

struct Parser<'a> {
    bytes: &'a [u8],
    at: usize,
}

impl Parser<'_> {
    fn error(&self, what: &str) -> String {
        format!("{what} at byte {}", self.at)
    }

    fn peek(&self) -> Option<u8> {
        self.bytes.get(self.at).copied()
    }

    fn skip_whitespace(&mut self) {
        while matches!(self.peek(), Some(b' ' | b'\t' | b'\n' | b'\r')) {
            self.at += 1;
        }
    }

    /// Consumes `byte` (after whitespace) or fails.
    fn expect(&mut self, byte: u8) -> Result<(), String> {
        self.skip_whitespace();
        if self.peek() == Some(byte) {
            self.at += 1;
            Ok(())
        } else {
            Err(self.error(&format!("expected `{}`", char::from(byte))))
        }
    }

    fn value(&mut self, depth: usize) -> Result<Value, String> {
        if depth > MAX_DEPTH {
            return Err(self.error("nesting too deep"));
        }
        self.skip_whitespace();
        match self.peek() {
            Some(b'{') => self.object(depth),
            Some(b'[') => self.array(depth),
            Some(b'"') => self.string().map(Value::String),
            Some(b'-' | b'0'..=b'9') => self.number(),
            Some(b't') => self.word("true", Value::Bool(true)),
            Some(b'f') => self.word("false", Value::Bool(false)),
            Some(b'n') => self.word("null", Value::Null),
            Some(_) => Err(self.error("unexpected character")),
            None => Err(self.error("unexpected end")),
        }
    }

    fn word(&mut self, word: &str, value: Value) -> Result<Value, String> {
        if self.bytes[self.at..].starts_with(word.as_bytes()) {
            self.at += word.len();
            Ok(value)
        } else {
            Err(self.error("unexpected word"))
        }
    }

    fn number(&mut self) -> Result<Value, String> {
        let start = self.at;
        while matches!(
            self.peek(),
            Some(b'-' | b'+' | b'.' | b'e' | b'E' | b'0'..=b'9')
        ) {
            self.at += 1;
        }
        let text = String::from_utf8_lossy(&self.bytes[start..self.at]).into_owned();
        if text.parse::<f64>().is_ok() {
            Ok(Value::Number(text))
        } else {
            Err(format!("`{text}` is not a number at byte {start}"))
        }
    }

    fn string(&mut self) -> Result<String, String> {
        self.expect(b'"')?;
        let mut bytes = Vec::new();
        loop {
            let Some(byte) = self.peek() else {
                return Err(self.error("unterminated string"));
            };
            self.at += 1;
            match byte {
                b'"' => break,
                b'\\' => {
                    let Some(escape) = self.peek() else {
                        return Err(self.error("unterminated string"));
                    };
                    self.at += 1;
                    let c = match escape {
                        b'"' => '"',
                        b'\\' => '\\',
                        b'/' => '/',
                        b'b' => '\u{8}',
                        b'f' => '\u{c}',
                        b'n' => '\n',
                        b'r' => '\r',
                        b't' => '\t',
                        b'u' => self.unicode_escape()?,
                        _ => return Err(self.error("unknown escape")),
                    };
                    let mut encoded = [0_u8; 4];
                    bytes.extend_from_slice(c.encode_utf8(&mut encoded).as_bytes());
                }
                0..0x20 => return Err(self.error("control character in a string")),
                _ => bytes.push(byte),
            }
        }
        // The input was a &str and escapes add whole characters, so this cannot fail.
        String::from_utf8(bytes).map_err(|_| self.error("invalid UTF-8 in a string"))
    }

    /// The character of `\uXXXX` (the `\u` already read), joining a surrogate pair; a lone
    /// surrogate becomes U+FFFD.
    fn unicode_escape(&mut self) -> Result<char, String> {
        let first = self.hex4()?;
        if (0xD800..0xDC00).contains(&first) && self.bytes[self.at..].starts_with(b"\\u") {
            let before = self.at;
            self.at += 2;
            let second = self.hex4()?;
            if (0xDC00..0xE000).contains(&second) {
                let joined = 0x10000 + ((first - 0xD800) << 10) + (second - 0xDC00);
                return Ok(char::from_u32(joined).unwrap_or('\u{fffd}'));
            }
            self.at = before;
        }
        Ok(char::from_u32(first).unwrap_or('\u{fffd}'))
    }

    fn hex4(&mut self) -> Result<u32, String> {
        let digits = self
            .bytes
            .get(self.at..self.at + 4)
            .and_then(|digits| std::str::from_utf8(digits).ok())
            .and_then(|digits| u32::from_str_radix(digits, 16).ok())
            .ok_or_else(|| self.error("bad \\u escape"))?;
        self.at += 4;
        Ok(digits)
    }

    fn array(&mut self, depth: usize) -> Result<Value, String> {
        self.expect(b'[')?;
        let mut items = Vec::new();
        self.skip_whitespace();
        if self.peek() == Some(b']') {
            self.at += 1;
            return Ok(Value::Array(items));
        }
        loop {
            items.push(self.value(depth + 1)?);
            self.skip_whitespace();
            match self.peek() {
                Some(b',') => self.at += 1,
                Some(b']') => {
                    self.at += 1;
                    return Ok(Value::Array(items));
                }
                _ => return Err(self.error("expected `,` or `]`")),
            }
        }
    }

    fn object(&mut self, depth: usize) -> Result<Value, String> {
        self.expect(b'{')?;
        let mut members = Vec::new();
        self.skip_whitespace();
        if self.peek() == Some(b'}') {
            self.at += 1;
            return Ok(Value::Object(members));
        }
        loop {
            self.skip_whitespace();
            let key = self.string()?;
            self.expect(b':')?;
            members.push((key, self.value(depth + 1)?));
            self.skip_whitespace();
            match self.peek() {
                Some(b',') => self.at += 1,
                Some(b'}') => {
                    self.at += 1;
                    return Ok(Value::Object(members));
                }
                _ => return Err(self.error("expected `,` or `}`")),
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_report_is_read() {
        let value = parse(
            r#" {"addLinesMs": [2.5, 1e-1, 3], "catalogProducts": 100000,
                "browser": "Mozilla/5.0 \"X\" \u00e9\ud83d\ude00", "ok": true, "none": null,
                "nested": {"a": []}} "#,
        )
        .unwrap();
        let samples: Vec<f64> = value
            .get("addLinesMs")
            .and_then(Value::as_array)
            .unwrap()
            .iter()
            .map(|sample| sample.as_f64().unwrap())
            .collect();
        assert_eq!(samples, [2.5, 0.1, 3.0]);
        assert_eq!(
            value.get("catalogProducts").and_then(Value::as_u64),
            Some(100_000)
        );
        assert_eq!(
            value.get("browser").and_then(Value::as_str),
            Some("Mozilla/5.0 \"X\" \u{e9}\u{1f600}")
        );
        assert_eq!(value.get("ok"), Some(&Value::Bool(true)));
        assert_eq!(value.get("none"), Some(&Value::Null));
        assert_eq!(
            value.get("nested").and_then(|n| n.get("a")),
            Some(&Value::Array(Vec::new()))
        );
        assert_eq!(value.get("missing"), None);
    }

    #[test]
    fn broken_json_is_refused() {
        for text in [
            "",
            "this is not json",
            "{\"a\": 1",
            "{\"a\" 1}",
            "[1, 2,]",
            "[1] [2]",
            "\"open",
            "{\"a\": --1}",
            &"[".repeat(MAX_DEPTH + 2),
        ] {
            assert!(parse(text).is_err(), "{text}");
        }
    }

    #[test]
    fn numbers_are_read_as_the_reader_asks() {
        let number = parse("2.5").unwrap();
        assert_eq!(number.as_f64(), Some(2.5));
        assert_eq!(number.as_u64(), None);
        assert_eq!(parse("-3").unwrap().as_u64(), None);
    }

    #[test]
    fn quoting_escapes_what_json_needs() {
        assert_eq!(
            quote("a \"b\" \\ c\n\u{1}é"),
            "\"a \\\"b\\\" \\\\ c\\n\\u0001é\""
        );
        assert_eq!(
            parse(&quote("a \"b\" \\ c\n\u{1}é")).unwrap(),
            Value::String("a \"b\" \\ c\n\u{1}é".to_owned())
        );
    }
}
