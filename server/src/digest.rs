//! SHA-256 digests as lowercase hex.

use sha2::{Digest, Sha256};

/// The SHA-256 of `data`, as 64 lowercase hex digits.
pub fn sha256_hex(data: &[u8]) -> String {
    hex::encode(Sha256::digest(data))
}
