//! Figures about the store itself, for the server's metrics: how busy its connection pool is,
//! and how far behind the webhook delivery queue runs. Cheap enough to read on every scrape.

use crate::db::{Pool, sql};
use crate::util::to_u64;
use crate::{Error, Store};

/// The connection pool as it is now.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct PoolUsage {
    /// Connections open, idle or not.
    pub open: u32,
    /// Connections open and handed out (running a statement or held by a transaction).
    pub in_use: u32,
    /// The most connections the pool opens.
    pub max: u32,
}

/// The webhook delivery queue as it is now. On `PostgreSQL` it is every instance's queue.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct DeliveryQueue {
    /// Deliveries waiting for an attempt, a first one or a retry, due or not (those of a
    /// disabled endpoint, which wait for it to be enabled, are not counted).
    pub pending: u64,
    /// Of these, the ones due now that no worker holds.
    pub due: u64,
    /// How long, in seconds on the database's clock, the oldest of the due ones has been due;
    /// 0 when none is.
    pub oldest_due_age_secs: u64,
}

impl Store {
    /// How many connections are open and how many of them are in use.
    pub fn pool_usage(&self) -> PoolUsage {
        let (open, idle, max) = match &self.pool {
            Pool::Sqlite(pool) => (
                pool.size(),
                pool.num_idle(),
                pool.options().get_max_connections(),
            ),
            Pool::Postgres(pool) => (
                pool.size(),
                pool.num_idle(),
                pool.options().get_max_connections(),
            ),
        };
        let idle = u32::try_from(idle).unwrap_or(u32::MAX);
        PoolUsage {
            open,
            in_use: open.saturating_sub(idle),
            max,
        }
    }

    /// How long the webhook delivery queue is and how long its oldest due delivery has waited.
    pub async fn delivery_queue(&self) -> Result<DeliveryQueue, Error> {
        let now = self.pool.backend().unix_now();
        let waiting = format!(
            "d.next_attempt_at <= {now} AND (d.lease_until IS NULL OR d.lease_until <= {now})"
        );
        let (pending, due, oldest_due, now): (i64, i64, Option<i64>, i64) = sql(format!(
            "SELECT COUNT(*), \
             COALESCE(SUM(CASE WHEN {waiting} THEN 1 ELSE 0 END), 0), \
             MIN(CASE WHEN {waiting} THEN d.next_attempt_at END), {now} \
             FROM webhook_deliveries d JOIN webhook_endpoints e ON e.id = d.endpoint_id \
             WHERE d.status = 'pending' AND e.enabled = 1"
        ))
        .fetch_one(&self.pool)
        .await?;
        Ok(DeliveryQueue {
            pending: to_u64(pending)?,
            due: to_u64(due)?,
            oldest_due_age_secs: oldest_due.map_or(0, |due_at| {
                u64::try_from(now.saturating_sub(due_at)).unwrap_or(0)
            }),
        })
    }
}
