//! Rate limits: a fixed window per bucket (an API key's id, the email of sign-in attempts), kept
//! in the database so that every instance of the server counts against the same window, and a
//! restart forgets nothing.
//!
//! Each request is one upsert that starts the bucket's window or counts in it, on the database's
//! clock (the instances' clocks need not agree), and returns the count: exact under any
//! concurrency, since the row is updated in place under the database's row lock. Windows start
//! at multiples of their length since the Unix epoch, so every instance agrees on them too.
//!
//! On `PostgreSQL` a statement reads the clock when it starts, and then may wait for the row: a
//! request that read the clock just before a window ended can reach the row after one that
//! started the next window. Such a late request counts in the newer window. Starting its own
//! window again would move the row back, and the next request would then start the newer window
//! from one a second time, letting through more than the limit (two instances under load did).

use std::sync::atomic::{AtomicU64, Ordering};

use crate::db::sql;
use crate::types::RateLimit;
use crate::util::to_u64;
use crate::{Error, Store};

/// Windows that have ended are removed by every this-many-th request.
const SWEEP_EVERY: u64 = 1024;

/// Requests counted by this process, for [`SWEEP_EVERY`].
static COUNTED: AtomicU64 = AtomicU64::new(0);

/// What a bucket may still do in its current window, after a request was counted.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Quota {
    /// Requests per window.
    pub limit: u32,
    /// Requests left in this window, after this one.
    pub remaining: u32,
    /// Unix time (seconds, the database's clock) when the window ends.
    pub reset: u64,
    /// Whether this request is within the limit.
    pub allowed: bool,
    /// Whole seconds until the window ends, at least 1 (for `Retry-After`).
    pub retry_after: u64,
}

impl Quota {
    /// The quota after the window's `count`-th request, with the window ending at `end` and the
    /// database's clock at `now`.
    fn after(limit: RateLimit, count: u64, end: u64, now: u64) -> Quota {
        let requests = u64::from(limit.requests);
        Quota {
            limit: limit.requests,
            remaining: u32::try_from(requests.saturating_sub(count)).unwrap_or(0),
            reset: end,
            allowed: count <= requests,
            retry_after: end.saturating_sub(now).max(1),
        }
    }
}

impl Store {
    /// Counts one request of `bucket` against `limit`, now; whether it is allowed, and what is
    /// left. A request refused still counts (it does not make the window any longer).
    pub async fn count_request(&self, bucket: &str, limit: RateLimit) -> Result<Quota, Error> {
        self.count_at(bucket, limit, self.pool.backend().unix_now())
            .await
    }

    /// [`Store::count_request`] with the clock read as `unix_time` rather than from the
    /// database: for tests of a request that read the clock before another yet reached the row
    /// after it. Not for the server.
    #[doc(hidden)]
    pub async fn count_request_at(
        &self,
        bucket: &str,
        limit: RateLimit,
        unix_time: u64,
    ) -> Result<Quota, Error> {
        // A bare number would be an `INT4` to `PostgreSQL`.
        self.count_at(bucket, limit, &format!("CAST({unix_time} AS BIGINT)"))
            .await
    }

    /// The count, with `now` the SQL of the clock's reading in Unix seconds.
    async fn count_at(&self, bucket: &str, limit: RateLimit, now: &str) -> Result<Quota, Error> {
        let length = i64::from(limit.window_secs.max(1));
        // One statement, which is a transaction of its own: one round trip to the database. The
        // row's window never moves back (see the module's comment).
        let _turn = self.write_turn().await;
        let (count, end, at): (i64, i64, i64) = sql(format!(
            "INSERT INTO rate_windows (bucket, window_end, count) \
             VALUES ($1, {now} - {now} % $2 + $2, 1) \
             ON CONFLICT (bucket) DO UPDATE SET \
             count = CASE WHEN rate_windows.window_end >= excluded.window_end \
                     THEN rate_windows.count + 1 ELSE 1 END, \
             window_end = CASE WHEN rate_windows.window_end >= excluded.window_end \
                     THEN rate_windows.window_end ELSE excluded.window_end END \
             RETURNING count, window_end, {now}"
        ))
        .bind(bucket)
        .bind(length)
        .fetch_one(&self.pool)
        .await?;
        if COUNTED.fetch_add(1, Ordering::Relaxed) % SWEEP_EVERY == SWEEP_EVERY - 1 {
            sql(format!(
                "DELETE FROM rate_windows WHERE window_end <= {now}"
            ))
            .execute(&self.pool)
            .await?;
        }
        Ok(Quota::after(
            limit,
            to_u64(count)?,
            to_u64(end)?,
            to_u64(at)?,
        ))
    }

    /// Takes back one request of `bucket` counted in the window that ends at `window_end` (a
    /// sign-in that succeeded is no failed attempt); nothing once that window has ended.
    pub async fn uncount_request(&self, bucket: &str, window_end: u64) -> Result<(), Error> {
        let end = i64::try_from(window_end).unwrap_or(i64::MAX);
        let _turn = self.write_turn().await;
        sql("UPDATE rate_windows SET count = count - 1 \
             WHERE bucket = $1 AND window_end = $2 AND count > 0")
        .bind(bucket)
        .bind(end)
        .execute(&self.pool)
        .await?;
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_quota_counts_down_to_the_limit_and_refuses_past_it() {
        let limit = RateLimit {
            requests: 3,
            window_secs: 60,
        };
        let third = Quota::after(limit, 3, 1_000_020, 1_000_010);
        assert!(third.allowed);
        assert_eq!((third.remaining, third.retry_after), (0, 10));
        let fourth = Quota::after(limit, 4, 1_000_020, 1_000_019);
        assert!(!fourth.allowed);
        assert_eq!(
            (fourth.remaining, fourth.reset, fourth.retry_after),
            (0, 1_000_020, 1)
        );
        // A clock past the end (the next window is a statement away) still says 1 s.
        assert_eq!(Quota::after(limit, 9, 100, 200).retry_after, 1);
    }
}
