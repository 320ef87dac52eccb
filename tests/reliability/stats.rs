//! Figures the suites print: latency percentiles, counts by name and status, megabytes.

use std::collections::BTreeMap;
use std::time::Duration;

/// Latencies of many requests.
#[derive(Debug, Default)]
pub(crate) struct Latencies(Vec<Duration>);

impl Latencies {
    /// Adds one.
    pub(crate) fn push(&mut self, latency: Duration) {
        self.0.push(latency);
    }

    /// How many there are.
    pub(crate) fn len(&self) -> usize {
        self.0.len()
    }

    /// The `percent`-th percentile (nearest rank), in milliseconds; 0 when there are none.
    pub(crate) fn percentile_ms(&mut self, percent: u32) -> f64 {
        if self.0.is_empty() {
            return 0.0;
        }
        self.0.sort_unstable();
        let len = self.0.len();
        // Nearest rank: the smallest value with at least `percent`% of all at or below it.
        let rank = (len * usize::try_from(percent).expect("a percent fits usize")).div_ceil(100);
        self.0[rank.clamp(1, len) - 1].as_secs_f64() * 1000.0
    }
}

/// Counts of things by a name and a status (or any second label).
#[derive(Debug, Default)]
pub(crate) struct Tally(BTreeMap<String, BTreeMap<String, u64>>);

impl Tally {
    /// Counts one `status` of `name`.
    pub(crate) fn add(&mut self, name: &str, status: &str) {
        *self
            .0
            .entry(name.to_owned())
            .or_default()
            .entry(status.to_owned())
            .or_default() += 1;
    }

    /// How many of `name` there were, whatever their status.
    pub(crate) fn total(&self, name: &str) -> u64 {
        self.0.get(name).map_or(0, |by| by.values().sum())
    }

    /// How many of `status` there were, whatever their name.
    pub(crate) fn of_status(&self, status: &str) -> u64 {
        self.0.values().filter_map(|by| by.get(status)).sum()
    }

    /// The names counted, in order.
    pub(crate) fn names(&self) -> impl Iterator<Item = &str> {
        self.0.keys().map(String::as_str)
    }

    /// The statuses of `name` with their counts: `201 × 5, 429 × 2`.
    pub(crate) fn statuses_of(&self, name: &str) -> String {
        self.0.get(name).map_or_else(String::new, |by| {
            by.iter()
                .map(|(status, n)| format!("{status} × {n}"))
                .collect::<Vec<_>>()
                .join(", ")
        })
    }

    /// Every status with its count over all names: `200 × 5, 201 × 3`.
    pub(crate) fn statuses(&self) -> String {
        let mut by_status: BTreeMap<&str, u64> = BTreeMap::new();
        for by in self.0.values() {
            for (status, n) in by {
                *by_status.entry(status).or_default() += n;
            }
        }
        by_status
            .iter()
            .map(|(status, n)| format!("{status} × {n}"))
            .collect::<Vec<_>>()
            .join(", ")
    }
}

/// KiB as MB (10^6 bytes) with one decimal, for the memory figures.
pub(crate) fn mb(kib: u64) -> String {
    let bytes = kib.saturating_mul(1024);
    #[allow(clippy::cast_precision_loss)] // far below 2^52 bytes
    let megabytes = bytes as f64 / 1e6;
    format!("{megabytes:.1} MB")
}
