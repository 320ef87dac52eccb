//! Per-key rate limits and the sign-in throttle: fixed windows that the store counts in the
//! database ([`toolbridge_store::Store::count_request`]), so that every instance of the server
//! shares them and a restart forgets nothing; and the headers that tell a client where it stands.

use axum::http::{HeaderMap, HeaderValue};
use toolbridge_store::Quota;

/// The bucket an API key's requests count in.
pub fn key_bucket(key_id: &str) -> String {
    format!("key:{key_id}")
}

/// The bucket sign-in attempts for `email` count in (whatever its case and spacing).
pub fn sign_in_bucket(email: &str) -> String {
    format!("sign-in:{}", email.trim().to_lowercase())
}

/// Writes `X-RateLimit-Limit`, `-Remaining` and `-Reset`.
pub fn write_headers(quota: &Quota, headers: &mut HeaderMap) {
    headers.insert("x-ratelimit-limit", HeaderValue::from(quota.limit));
    headers.insert("x-ratelimit-remaining", HeaderValue::from(quota.remaining));
    headers.insert("x-ratelimit-reset", HeaderValue::from(quota.reset));
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn buckets_of_keys_and_emails_never_meet() {
        assert_eq!(key_bucket("k1"), "key:k1");
        assert_eq!(
            sign_in_bucket("  Ada@Example.TEST "),
            "sign-in:ada@example.test"
        );
        assert_ne!(key_bucket("sign-in:x"), sign_in_bucket("x"));
    }
}
