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

/// Keys the limiter holds before it first drops the ones whose window has
/// ended.
const FIRST_SWEEP_AT: usize = 1024;

/// The current window of every key seen lately.
#[derive(Debug)]
pub struct RateLimiter {
    windows: Mutex<Windows>,
}

impl Default for RateLimiter {
    fn default() -> Self {
        Self {
            windows: Mutex::new(Windows {
                by_key: HashMap::new(),
                sweep_at: FIRST_SWEEP_AT,
            }),
        }
    }
}

/// One key's window: when it started, when it ends, and what it counted.
#[derive(Debug, Clone, Copy)]
struct Window {
    start: u64,
    end: u64,
    count: u32,
}

/// The windows by key. Keys come from outside (an API key's id, the email
/// of a failed sign-in), so the map is swept of ended windows whenever it
/// has doubled since the last sweep: it holds at most about twice the keys
/// active in a window, and sweeping costs O(1) per request on average.
#[derive(Debug)]
struct Windows {
    by_key: HashMap<String, Window>,
    sweep_at: usize,
}

impl Windows {
    fn sweep(&mut self, now: u64) {
        if self.by_key.len() < self.sweep_at {
            return;
        }
        self.by_key.retain(|_, window| window.end > now);
        self.sweep_at = (self.by_key.len() * 2).max(FIRST_SWEEP_AT);
    }
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

    /// How many keys the limiter holds a window for.
    #[cfg(test)]
    fn keys_held(&self) -> usize {
        self.lock().by_key.len()
    }

    fn lock(&self) -> std::sync::MutexGuard<'_, Windows> {
        self.windows
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner)
    }

    fn quota_at(&self, key_id: &str, limit: RateLimit, now: u64, count: bool) -> Quota {
        let length = u64::from(limit.window_secs.max(1));
        let start = now - now % length;
        let current = Window {
            start,
            end: start + length,
            count: 0,
        };
        let mut windows = self.lock();
        if count && !windows.by_key.contains_key(key_id) {
            windows.sweep(now);
            windows.by_key.insert(key_id.to_owned(), current);
        }
        // A peek at a key never seen stores nothing.
        let mut unseen = current;
        let window = windows.by_key.get_mut(key_id).unwrap_or(&mut unseen);
        if window.start != start {
            *window = current;
        }
        let allowed = window.count < limit.requests;
        if allowed && count {
            window.count += 1;
        }
        Quota {
            limit: limit.requests,
            remaining: limit.requests.saturating_sub(window.count),
            reset: window.end,
            allowed,
            retry_after: (window.end - now).max(1),
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

    #[test]
    fn ended_windows_are_dropped_once_the_keys_double() {
        let limiter = RateLimiter::default();
        let limit = RateLimit {
            requests: 5,
            window_secs: 60,
        };
        for n in 0..FIRST_SWEEP_AT {
            limiter.check_at(&format!("sign-in:{n}@example.com"), limit, 1_000_000);
        }
        assert_eq!(limiter.keys_held(), FIRST_SWEEP_AT);
        // A minute later every one of those windows has ended: the next new key sweeps them.
        limiter.check_at("live", limit, 1_000_060);
        assert_eq!(limiter.keys_held(), 1);
        // A key still inside its window keeps its count through a sweep.
        for _ in 0..5 {
            limiter.check_at("live", limit, 1_000_061);
        }
        for n in 0..FIRST_SWEEP_AT {
            limiter.check_at(&format!("other-{n}"), limit, 1_000_062);
        }
        assert!(!limiter.check_at("live", limit, 1_000_063).allowed);
    }

    #[test]
    fn peeking_at_an_unknown_key_stores_nothing() {
        let limiter = RateLimiter::default();
        let limit = RateLimit {
            requests: 1,
            window_secs: 60,
        };
        assert!(limiter.peek("nobody@example.com", limit).allowed);
        assert_eq!(limiter.keys_held(), 0);
    }
}
