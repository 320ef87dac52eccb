//! Building messages without `core::fmt`, which would double the size of
//! the module.

use alloc::string::String;

/// Appends the decimal digits of `n`.
pub(crate) fn push_number(out: &mut String, mut n: u32) {
    let mut digits = [0u8; 10];
    let mut start = digits.len();
    while let Some(slot) = start.checked_sub(1).and_then(|i| digits.get_mut(i)) {
        *slot = b'0' + u8::try_from(n % 10).unwrap_or(0);
        start -= 1;
        n /= 10;
        if n == 0 {
            break;
        }
    }
    for &digit in digits.get(start..).unwrap_or_default() {
        out.push(char::from(digit));
    }
}

/// Joins pieces of text.
pub(crate) fn join(parts: &[&str]) -> String {
    let mut out = String::new();
    for part in parts {
        out.push_str(part);
    }
    out
}

/// A duration in milliseconds as people read it: `30 s` or `250 ms`.
pub(crate) fn push_duration(out: &mut String, ms: u32) {
    if ms >= 1000 && ms % 1000 == 0 {
        push_number(out, ms / 1000);
        out.push_str(" s");
    } else {
        push_number(out, ms);
        out.push_str(" ms");
    }
}
