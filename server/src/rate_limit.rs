//! Per-key rate limits: a fixed window per key, counted under one lock so
//! that no key gets more than its limit in a window however many requests
//! arrive at once.

use std::collections::HashMap;
use std::sync::Mutex;
use std::time::{SystemTime, UNIX_EPOCH};

use axum::http::{HeaderMap, HeaderValue};
use toolbridge_store::RateLimit;

/// What a key may still do in the current window.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Quota {
    /// Requests per window.
    pub limit: u32,
    /// Requests left in this window, after this one.
    pub remaining: u32,
    /// Unix time (seconds) when the window resets.
    pub reset: u64,
    /// Whether this request is within the limit.
    pub allowed: bool,
    /// Whole seconds until the reset, at least 1 (for `Retry-After`).
    pub retry_after: u64,
}

impl Quota {
    /// Writes `X-RateLimit-Limit`, `-Remaining` and `-Reset`.
    pub fn write_headers(&self, headers: &mut HeaderMap) {
        headers.insert("x-ratelimit-limit", HeaderValue::from(self.limit));
        headers.insert("x-ratelimit-remaining", HeaderValue::from(self.remaining));
        headers.insert("x-ratelimit-reset", HeaderValue::from(self.reset));
    }
}

/// The windows of every key seen.
#[derive(Debug, Default)]
pub struct RateLimiter {
    windows: Mutex<HashMap<String, (u64, u32)>>,
}

impl RateLimiter {
    /// Counts one request of `key_id` against `limit` now.
    pub fn check(&self, key_id: &str, limit: RateLimit) -> Quota {
        self.check_at(key_id, limit, now())
    }

    /// Counts one request of `key_id` against `limit` at Unix time `now`.
    pub fn check_at(&self, key_id: &str, limit: RateLimit, now: u64) -> Quota {
        self.quota_at(key_id, limit, now, true)
    }

    /// The quota of `key_id` now, without counting a request (for limits
    /// that count only failures, such as sign-in attempts).
    pub fn peek(&self, key_id: &str, limit: RateLimit) -> Quota {
        self.quota_at(key_id, limit, now(), false)
    }

    fn quota_at(&self, key_id: &str, limit: RateLimit, now: u64, count: bool) -> Quota {
        let window = u64::from(limit.window_secs.max(1));
        let start = now - now % window;
        let reset = start + window;
        let mut windows = self
            .windows
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner);
        let entry = windows.entry(key_id.to_owned()).or_insert((start, 0));
        if entry.0 != start {
            *entry = (start, 0);
        }
        let allowed = entry.1 < limit.requests;
        if allowed && count {
            entry.1 += 1;
        }
        Quota {
            limit: limit.requests,
            remaining: limit.requests.saturating_sub(entry.1),
            reset,
            allowed,
            retry_after: (reset - now).max(1),
        }
    }
}

/// Unix time in seconds.
fn now() -> u64 {
    SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .map_or(0, |elapsed| elapsed.as_secs())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_window_allows_exactly_the_limit_then_resets() {
        let limiter = RateLimiter::default();
        let limit = RateLimit {
            requests: 3,
            window_secs: 60,
        };
        let quotas: Vec<Quota> = (0..4)
            .map(|_| limiter.check_at("k", limit, 1_000_010))
            .collect();
        assert_eq!(quotas.iter().filter(|q| q.allowed).count(), 3);
        assert_eq!(quotas[2].remaining, 0);
        assert_eq!(quotas[3].reset, 1_000_020);
        assert_eq!(quotas[3].retry_after, 10);
        assert!(limiter.check_at("k", limit, 1_000_020).allowed);
        assert!(limiter.check_at("other", limit, 1_000_010).allowed);
    }

    #[test]
    fn peeking_counts_nothing() {
        let limiter = RateLimiter::default();
        let limit = RateLimit {
            requests: 1,
            window_secs: 3600,
        };
        assert!(limiter.peek("k", limit).allowed);
        assert!(limiter.peek("k", limit).allowed);
        limiter.check("k", limit);
        assert!(!limiter.peek("k", limit).allowed);
    }
}
