//! Text from outside made safe to print.

/// `text` with each control character escaped as Rust writes it (`\u{0}`,
/// `\n`, `\u{1b}`), so that it prints on one line and cannot drive a
/// terminal; unchanged when it has none.
pub fn escape_controls(text: String) -> String {
    if !text.chars().any(char::is_control) {
        return text;
    }
    text.chars()
        .map(|c| {
            if c.is_control() {
                c.escape_default().to_string()
            } else {
                c.to_string()
            }
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::escape_controls;

    #[test]
    fn control_characters_are_escaped_and_the_rest_kept() {
        assert_eq!(
            escape_controls("a\0b\u{1b}[31m\nc é".to_owned()),
            "a\\u{0}b\\u{1b}[31m\\nc é"
        );
        assert_eq!(escape_controls("plain".to_owned()), "plain");
    }
}
