//! The REST figures: the release `toolbridge` server on a fresh demo database (1 000 products),
//! loaded by `wrk` on the same machine with `GET /api/v1/products?pageSize=500`: on `SQLite`, on
//! `PostgreSQL` with one instance, and with two instances on that database loaded at once.
//!
//! `PostgreSQL` is the tests' throwaway cluster (`toolbridge-test-postgres`), on this machine,
//! without `fsync`: the figure is toolbridge's side of the work, not a disk's.

use std::path::Path;
use std::process::{Child, Command, Stdio};

use toolbridge_e2e::server::{ServerOptions, ToolbridgeServer};

use crate::error::Error;
use crate::process::require;

/// Requests per second the budget asks for, at least.
pub(crate) const MIN_REQUESTS_PER_SEC: f64 = 1000.0;
/// The 99th-percentile latency the budget allows, in milliseconds.
pub(crate) const MAX_P99_MS: f64 = 25.0;
/// The request under load.
pub(crate) const PATH: &str = "/api/v1/products?pageSize=500";
/// Products in the catalog under load.
const PRODUCTS: u32 = 1000;
/// Seconds of load before the measured run.
const WARM_UP_SECS: u32 = 2;
/// The share of `SQLite`'s requests per second that one instance on `PostgreSQL` reaches, at
/// least.
pub(crate) const MIN_POSTGRES_SHARE: f64 = 0.5;
/// wrk's threads and connections in all: one wrk with all of them for one instance, a wrk with
/// half of them on each of two.
const THREADS: u32 = 2;
const CONNECTIONS: u32 = 16;

/// What wrk measured.
#[derive(Clone, Copy, Debug, PartialEq)]
pub(crate) struct Load {
    /// Requests per second over the run.
    pub(crate) requests_per_sec: f64,
    /// 99th-percentile latency in milliseconds.
    pub(crate) p99_ms: f64,
}

impl Load {
    /// Whether both budgets hold.
    pub(crate) fn within_budget(&self) -> bool {
        self.requests_per_sec >= MIN_REQUESTS_PER_SEC && self.p99_ms <= MAX_P99_MS
    }

    /// The line the bench prints.
    pub(crate) fn line(&self) -> String {
        format!(
            "REST GET {PATH}  {:.0} requests/s  p99 {:.2} ms  budget >= {MIN_REQUESTS_PER_SEC:.0} \
             requests/s, p99 <= {MAX_P99_MS:.0} ms  ({})",
            self.requests_per_sec,
            self.p99_ms,
            if self.within_budget() { "ok" } else { "OVER" }
        )
    }
}

/// The REST figure on each database.
#[derive(Clone, Copy, Debug, PartialEq)]
pub(crate) struct RestFigures {
    /// On `SQLite`.
    pub(crate) sqlite: Load,
    /// On `PostgreSQL`, one instance.
    pub(crate) postgres: Load,
    /// On `PostgreSQL`, two instances loaded at once: their requests per second added up, and
    /// the higher of their two p99s.
    pub(crate) postgres_two: Load,
}

impl RestFigures {
    /// Whether one instance on `PostgreSQL` reaches [`MIN_POSTGRES_SHARE`] of `SQLite`'s
    /// requests per second within the p99 budget.
    pub(crate) fn postgres_within_budget(&self) -> bool {
        self.postgres.requests_per_sec >= MIN_POSTGRES_SHARE * self.sqlite.requests_per_sec
            && self.postgres.p99_ms <= MAX_P99_MS
    }

    /// The lines the bench prints.
    pub(crate) fn lines(&self) -> Vec<String> {
        let share = self.postgres.requests_per_sec / self.sqlite.requests_per_sec.max(1.0);
        vec![
            format!("SQLite: {}", self.sqlite.line()),
            format!(
                "PostgreSQL, one instance: {:.0} requests/s ({:.0}% of SQLite's)  p99 {:.2} ms  \
                 budget >= {:.0}% of SQLite's, p99 <= {MAX_P99_MS:.0} ms  ({})",
                self.postgres.requests_per_sec,
                share * 100.0,
                self.postgres.p99_ms,
                MIN_POSTGRES_SHARE * 100.0,
                if self.postgres_within_budget() {
                    "ok"
                } else {
                    "OVER"
                }
            ),
            format!(
                "PostgreSQL, two instances loaded at once: {:.0} requests/s in all  p99 {:.2} ms \
                 (the higher of the two)",
                self.postgres_two.requests_per_sec, self.postgres_two.p99_ms
            ),
        ]
    }
}

/// Measures the REST figure on each database, for `seconds` each, the servers' databases and
/// logs in `dir`.
pub(crate) fn measure(binary: &Path, dir: &Path, seconds: u32) -> Result<RestFigures, Error> {
    let wrk = require(
        "wrk",
        "run `cargo xtask setup` (it installs Debian's wrk as root)",
    )?;
    println!("bench: REST on SQLite");
    let sqlite = {
        let server = ToolbridgeServer::start(
            binary,
            &ServerOptions::new("bench", dir.join("sqlite"), PRODUCTS),
        )?;
        let token = server.create_key("bench", "products:read", "1000000000/60s")?;
        load(&wrk, &[&server], &token, seconds)?
    };

    println!("bench: REST on PostgreSQL");
    let database = toolbridge_test_postgres::database()
        .map_err(|e| Error::failed(format!("no PostgreSQL for the bench: {e}")))?;
    let instance = |log_name| {
        let mut options = ServerOptions::new("bench", dir.join("postgres"), PRODUCTS);
        options.database = Some(database.url());
        options.log_name = log_name;
        ToolbridgeServer::start(binary, &options)
    };
    let first = instance("server-a.log")?;
    let token = first.create_key("bench", "products:read", "1000000000/60s")?;
    let postgres = load(&wrk, &[&first], &token, seconds)?;
    println!("bench: REST on PostgreSQL, two instances");
    let second = instance("server-b.log")?;
    let postgres_two = load(&wrk, &[&first, &second], &token, seconds)?;
    drop((first, second));
    Ok(RestFigures {
        sqlite,
        postgres,
        postgres_two,
    })
}

/// Loads `servers` at once, [`CONNECTIONS`] shared out between them, for `seconds` after a
/// warm-up; their requests per second added up, and the highest p99.
fn load(
    wrk: &Path,
    servers: &[&ToolbridgeServer],
    token: &str,
    seconds: u32,
) -> Result<Load, Error> {
    let count = u32::try_from(servers.len()).unwrap_or(1).max(1);
    let start = |server: &ToolbridgeServer, seconds: u32| -> Result<Child, Error> {
        Command::new(wrk)
            .arg(format!("-t{}", (THREADS / count).max(1)))
            .arg(format!("-c{}", CONNECTIONS / count))
            .arg(format!("-d{seconds}s"))
            .args(["--latency", "-H"])
            .arg(format!("Authorization: Bearer {token}"))
            .arg(format!("{}{PATH}", server.base_url()))
            .stdout(Stdio::piped())
            .stderr(Stdio::inherit())
            .spawn()
            .map_err(|e| Error::failed(format!("cannot start {}: {e}", wrk.display())))
    };
    let run = |seconds: u32| -> Result<Vec<Load>, Error> {
        let children = servers
            .iter()
            .map(|server| start(server, seconds))
            .collect::<Result<Vec<_>, _>>()?;
        children
            .into_iter()
            .map(|child| {
                let output = child
                    .wait_with_output()
                    .map_err(|e| Error::failed(format!("wrk failed: {e}")))?;
                if !output.status.success() {
                    return Err(Error::failed(format!("wrk exited with {}", output.status)));
                }
                parse_wrk(&String::from_utf8_lossy(&output.stdout))
            })
            .collect()
    };
    // The first requests fill each server's catalog cache; measure them warm.
    println!("bench: warming up for {WARM_UP_SECS} s");
    run(WARM_UP_SECS)?;
    println!("bench: running wrk for {seconds} s against {PATH}");
    let loads = run(seconds)?;
    Ok(Load {
        requests_per_sec: loads.iter().map(|load| load.requests_per_sec).sum(),
        p99_ms: loads.iter().map(|load| load.p99_ms).fold(0.0, f64::max),
    })
}

/// Reads `Requests/sec:` and the 99% line of `wrk --latency`.
fn parse_wrk(output: &str) -> Result<Load, Error> {
    let requests_per_sec = output
        .lines()
        .find_map(|line| line.trim().strip_prefix("Requests/sec:"))
        .and_then(|value| value.trim().parse::<f64>().ok());
    let p99_ms = output
        .lines()
        .find_map(|line| line.trim().strip_prefix("99%"))
        .and_then(|value| milliseconds(value.trim()));
    let non_2xx = output.lines().any(|line| line.contains("Non-2xx"));
    match (requests_per_sec, p99_ms, non_2xx) {
        (_, _, true) => Err(Error::failed(format!(
            "some requests under load were not answered 200:\n{output}"
        ))),
        (Some(requests_per_sec), Some(p99_ms), false) => Ok(Load {
            requests_per_sec,
            p99_ms,
        }),
        _ => Err(Error::failed(format!(
            "cannot read wrk's output (no `Requests/sec:` or no `99%` line):\n{output}"
        ))),
    }
}

/// `12.34ms`, `850.00us` or `1.20s` in milliseconds.
fn milliseconds(value: &str) -> Option<f64> {
    let (number, factor) = if let Some(us) = value.strip_suffix("us") {
        (us, 0.001)
    } else if let Some(ms) = value.strip_suffix("ms") {
        (ms, 1.0)
    } else if let Some(s) = value.strip_suffix('s') {
        (s, 1000.0)
    } else {
        return None;
    };
    number.parse::<f64>().ok().map(|n| n * factor)
}

#[cfg(test)]
mod tests {
    use super::*;

    const WRK: &str = "Running 3s test @ http://127.0.0.1:4000/api/v1/products?pageSize=500
  2 threads and 16 connections
  Thread Stats   Avg      Stdev     Max   +/- Stdev
    Latency     8.10ms    2.00ms  30.00ms   70.00%
  Latency Distribution
     50%    7.90ms
     75%    9.10ms
     90%   10.50ms
     99%   14.20ms
  3600 requests in 3.00s, 300.00MB read
Requests/sec:   1200.50
Transfer/sec:    100.00MB
";

    #[test]
    fn wrk_output_is_read() {
        let load = parse_wrk(WRK).unwrap();
        assert!((load.requests_per_sec - 1200.5).abs() < 1e-9);
        assert!((load.p99_ms - 14.2).abs() < 1e-9);
        assert!(load.within_budget());
        assert_eq!(
            load.line(),
            "REST GET /api/v1/products?pageSize=500  1200 requests/s  p99 14.20 ms  budget >= \
             1000 requests/s, p99 <= 25 ms  (ok)"
        );
        let slow = Load {
            requests_per_sec: 900.0,
            p99_ms: 14.2,
        };
        assert!(!slow.within_budget());
        assert!(slow.line().ends_with("(OVER)"));
    }

    #[test]
    fn errors_under_load_fail_the_measurement() {
        let with_errors = format!("{WRK}  Non-2xx or 3xx responses: 12\n");
        assert!(parse_wrk(&with_errors).is_err());
        assert!(parse_wrk("nonsense").is_err());
    }

    #[test]
    fn latency_units_become_milliseconds() {
        assert_eq!(milliseconds("850.00us"), Some(0.85));
        assert_eq!(milliseconds("1.50s"), Some(1500.0));
        assert_eq!(milliseconds("12ms"), Some(12.0));
        assert_eq!(milliseconds("12"), None);
    }
}
