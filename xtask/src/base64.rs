//! Standard base64 (RFC 4648 §4: `A-Z a-z 0-9 + /`, `=` padding), for inlining wasm in a script.

/// The 64 digits of the standard alphabet, in value order.
const ALPHABET: &[u8; 64] = b"ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";

/// `bytes` in standard base64 with padding, as JavaScript's `atob` reads it.
pub(crate) fn encode(bytes: &[u8]) -> String {
    let mut out = String::with_capacity(bytes.len().div_ceil(3) * 4);
    for chunk in bytes.chunks(3) {
        let b0 = chunk.first().copied().unwrap_or(0);
        let b1 = chunk.get(1).copied().unwrap_or(0);
        let b2 = chunk.get(2).copied().unwrap_or(0);
        let group = u32::from(b0) << 16 | u32::from(b1) << 8 | u32::from(b2);
        // A chunk of n bytes gives n + 1 digits; `=` fills the group up to four.
        for index in 0..4 {
            if index <= chunk.len() {
                let shift = 18 - 6 * index;
                out.push(digit(group >> shift));
            } else {
                out.push('=');
            }
        }
    }
    out
}

/// The digit for the low six bits of `value`.
fn digit(value: u32) -> char {
    // Masked to six bits, so the index is always in range.
    let index = usize::try_from(value & 0x3f).unwrap_or(0);
    char::from(ALPHABET[index])
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn rfc_4648_test_vectors() {
        let vectors = [
            ("", ""),
            ("f", "Zg=="),
            ("fo", "Zm8="),
            ("foo", "Zm9v"),
            ("foob", "Zm9vYg=="),
            ("fooba", "Zm9vYmE="),
            ("foobar", "Zm9vYmFy"),
        ];
        for (plain, encoded) in vectors {
            assert_eq!(encode(plain.as_bytes()), encoded, "{plain:?}");
        }
    }

    #[test]
    fn every_digit_of_the_alphabet_is_used() {
        // 0x00 0x10 0x83 ... : the 48 bytes whose 64 six-bit groups are 0, 1, 2, ..., 63.
        let mut bytes = Vec::new();
        for values in (0u8..64).collect::<Vec<_>>().chunks(4) {
            let group = values
                .iter()
                .fold(0u32, |acc, value| acc << 6 | u32::from(*value));
            bytes.extend_from_slice(&group.to_be_bytes()[1..]);
        }
        assert_eq!(encode(&bytes).as_bytes(), ALPHABET);
    }

    #[test]
    fn high_bytes_and_wasm_magic() {
        assert_eq!(encode(&[0xff, 0xff, 0xff]), "////");
        assert_eq!(encode(&[0xfb, 0xef]), "++8=");
        assert_eq!(encode(b"\0asm"), "AGFzbQ==");
    }
}
