//! The `Toolbridge-Signature` header: `t=<unix seconds>,v1=<hex>`, where the hex is the
//! HMAC-SHA256 of the bytes `"<t>.<body>"`, keyed with the endpoint's secret.
//!
//! The key is the whole secret string as it was shown, `whsec_` included, taken as its UTF-8
//! bytes: an integrator pastes the secret into their receiver and uses it as it is, with nothing
//! to strip or decode. The timestamp is inside the signed bytes, so a receiver that refuses an
//! old `t` (the book's webhooks page says five minutes) refuses a replayed delivery too.

use hmac::{Hmac, Mac};
use sha2::Sha256;

/// HMAC-SHA256.
type HmacSha256 = Hmac<Sha256>;

/// Why a signature header does not verify.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum SignatureError {
    /// The header has no `t=` or no `v1=`, or its `t` is not a number.
    #[error("the signature header `{0}` is not `t=<unix seconds>,v1=<hex>`")]
    Malformed(String),
    /// The timestamp is further from now than the tolerance allows.
    #[error(
        "the signature's timestamp {t} is {off} s from now ({now}); at most {tolerance} s is accepted"
    )]
    Stale {
        /// The header's `t`.
        t: i64,
        /// The receiver's clock.
        now: i64,
        /// How far apart they are, in seconds.
        off: u64,
        /// How far apart they may be, in seconds.
        tolerance: u64,
    },
    /// No `v1=` is the HMAC of this body with this secret.
    #[error("no v1 signature matches the body with this secret")]
    Mismatch,
}

/// The header value for `body` sent at `t` (Unix seconds), signed with `secret`.
pub fn sign(secret: &str, t: i64, body: &[u8]) -> String {
    format!("t={t},v1={}", hex::encode(mac(secret, t, body)))
}

/// Checks `header` as a receiver holding `secret` would: a `t` within `tolerance_secs` of `now`
/// (both Unix seconds), and a `v1` (of possibly several) equal to the HMAC of `"<t>.<body>"`,
/// compared in constant time.
pub fn verify(
    secret: &str,
    header: &str,
    body: &[u8],
    now: i64,
    tolerance_secs: u64,
) -> Result<(), SignatureError> {
    let malformed = || SignatureError::Malformed(header.to_owned());
    let mut t = None;
    let mut signatures = Vec::new();
    for part in header.split(',') {
        match part.trim().split_once('=') {
            Some(("t", value)) => t = Some(value.parse::<i64>().map_err(|_| malformed())?),
            Some(("v1", value)) => signatures.push(value),
            _ => {}
        }
    }
    let t = t.ok_or_else(malformed)?;
    if signatures.is_empty() {
        return Err(malformed());
    }
    let off = t.abs_diff(now);
    if off > tolerance_secs {
        return Err(SignatureError::Stale {
            t,
            now,
            off,
            tolerance: tolerance_secs,
        });
    }
    for given in signatures {
        let Ok(given) = hex::decode(given) else {
            continue;
        };
        if keyed(secret)
            .chain_update(signed_bytes(t, body))
            .verify_slice(&given)
            .is_ok()
        {
            return Ok(());
        }
    }
    Err(SignatureError::Mismatch)
}

/// The HMAC of `"<t>.<body>"`.
fn mac(secret: &str, t: i64, body: &[u8]) -> [u8; 32] {
    keyed(secret)
        .chain_update(signed_bytes(t, body))
        .finalize()
        .into_bytes()
        .into()
}

/// An HMAC keyed with the secret's bytes.
fn keyed(secret: &str) -> HmacSha256 {
    // HMAC takes a key of any length (a long one is hashed first), so this cannot fail.
    HmacSha256::new_from_slice(secret.as_bytes()).unwrap_or_else(|_| unreachable_mac())
}

/// What [`keyed`] falls back to; HMAC accepts every key, so it is never reached.
#[cold]
fn unreachable_mac() -> HmacSha256 {
    <HmacSha256 as hmac::digest::KeyInit>::new(&hmac::digest::Key::<HmacSha256>::default())
}

/// The bytes that are signed: `"<t>.<body>"`.
fn signed_bytes(t: i64, body: &[u8]) -> Vec<u8> {
    let mut bytes = format!("{t}.").into_bytes();
    bytes.extend_from_slice(body);
    bytes
}

#[cfg(test)]
mod tests {
    use super::*;

    const SECRET: &str = "whsec_5f0c2a1e9b7d4c3f8a6e2d1b0c9f8e7d6a5b4c3d2e1f0a9b8c7d6e5f4a3b2c1d";
    const BODY: &[u8] = br#"{"id":"evt_1","type":"quote.created"}"#;

    #[test]
    fn a_known_vector() {
        // Worked out apart from this code, with Python's
        // hmac.new(SECRET.encode(), b'1700000000.' + BODY, hashlib.sha256).hexdigest().
        assert_eq!(
            sign(SECRET, 1_700_000_000, BODY),
            "t=1700000000,v1=e52f8d69dddc2047fa9af4f35bc55603d30c006a6cae8c2fdd696ef40ce58273"
        );
        // RFC 4231, test case 2, through the same code.
        assert_eq!(
            hex::encode(
                keyed("Jefe")
                    .chain_update(b"what do ya want for nothing?")
                    .finalize()
                    .into_bytes()
            ),
            "5bdcc146bf60754e6a042426089575c75a003f089d2739839dec58b964ec3843"
        );
    }

    #[test]
    fn a_signature_verifies_with_its_secret_body_and_time_only() {
        let t = 1_700_000_000;
        let header = sign(SECRET, t, BODY);
        assert_eq!(verify(SECRET, &header, BODY, t + 299, 300), Ok(()));
        assert_eq!(verify(SECRET, &header, BODY, t - 300, 300), Ok(()));
        // Several v1 (as during a rotation on the receiver's side): one match is enough.
        let both = format!("{header},v1=00ff");
        assert_eq!(verify(SECRET, &both, BODY, t, 300), Ok(()));
        assert_eq!(
            verify("whsec_other", &header, BODY, t, 300),
            Err(SignatureError::Mismatch)
        );
        assert_eq!(
            verify(SECRET, &header, b"{\"id\":\"evt_2\"}", t, 300),
            Err(SignatureError::Mismatch)
        );
        // The time is signed: the same v1 under another t does not verify.
        let moved = header.replace("t=1700000000", "t=1700000001");
        assert_eq!(
            verify(SECRET, &moved, BODY, t, 300),
            Err(SignatureError::Mismatch)
        );
        let stale = verify(SECRET, &header, BODY, t + 301, 300).unwrap_err();
        assert_eq!(
            stale.to_string(),
            "the signature's timestamp 1700000000 is 301 s from now (1700000301); at most 300 s is accepted"
        );
        for bad in [
            "",
            "v1=00",
            "t=abc,v1=00",
            "t=1700000000",
            "t=1700000000,v2=00",
        ] {
            assert_eq!(
                verify(SECRET, bad, BODY, t, 300),
                Err(SignatureError::Malformed(bad.to_owned())),
                "{bad}"
            );
        }
    }
}
