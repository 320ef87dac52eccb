//! Talking to the server as an integrator does: timed exchanges whose status, rate-limit headers
//! and body are kept, the demo data a quote needs, and quote bodies made up from a seed.

use std::time::{Duration, Instant, SystemTime, UNIX_EPOCH};

use reqwest::header::HeaderMap;
use reqwest::{Client, RequestBuilder};
use serde_json::{Value, json};

/// The REST API of one server.
#[derive(Clone, Debug)]
pub(crate) struct Api {
    /// The HTTP client (one connection pool for everyone who clones this).
    pub(crate) client: Client,
    base: String,
}

impl Api {
    /// The API of the server at `base` (`http://127.0.0.1:PORT`).
    pub(crate) fn new(base: &str) -> Self {
        Self {
            client: Client::builder()
                .timeout(Duration::from_secs(30))
                .build()
                .expect("the HTTP client builds"),
            base: base.to_owned(),
        }
    }

    /// `GET /api/v1{path}`.
    pub(crate) fn get(&self, path: &str) -> RequestBuilder {
        self.client.get(format!("{}/api/v1{path}", self.base))
    }

    /// `POST /api/v1{path}`.
    pub(crate) fn post(&self, path: &str) -> RequestBuilder {
        self.client.post(format!("{}/api/v1{path}", self.base))
    }
}

/// The rate-limit headers of a keyed answer.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) struct RateHeaders {
    /// `X-RateLimit-Limit`: requests per window.
    pub(crate) limit: u32,
    /// `X-RateLimit-Remaining`: what the window had left after this request.
    pub(crate) remaining: u32,
    /// `X-RateLimit-Reset`: Unix time (server clock, whole seconds) when the window ends.
    pub(crate) reset: u64,
}

/// A whole answer and when it happened.
#[derive(Debug)]
pub(crate) struct Reply {
    /// The HTTP status.
    pub(crate) status: u16,
    /// The response headers.
    pub(crate) headers: HeaderMap,
    /// The body.
    pub(crate) body: Vec<u8>,
    /// When the request was handed to the client (Unix seconds, this machine's clock).
    pub(crate) sent: f64,
    /// When the whole answer had been read.
    pub(crate) received: f64,
    /// `received - sent`, measured with a monotonic clock.
    pub(crate) latency: Duration,
}

impl Reply {
    /// The rate-limit headers, if all three are there and read as numbers.
    pub(crate) fn rate(&self) -> Option<RateHeaders> {
        Some(RateHeaders {
            limit: self.number("x-ratelimit-limit")?,
            remaining: self.number("x-ratelimit-remaining")?,
            reset: self.number("x-ratelimit-reset")?,
        })
    }

    /// A header as a number.
    pub(crate) fn number<T: std::str::FromStr>(&self, name: &str) -> Option<T> {
        self.headers.get(name)?.to_str().ok()?.trim().parse().ok()
    }

    /// A header as text.
    pub(crate) fn header(&self, name: &str) -> Option<&str> {
        self.headers.get(name)?.to_str().ok()
    }

    /// The body as JSON (`Null` when it is not JSON).
    pub(crate) fn json(&self) -> Value {
        serde_json::from_slice(&self.body).unwrap_or(Value::Null)
    }
}

/// Unix time now, in seconds with a fraction.
pub(crate) fn unix_now() -> f64 {
    SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .map_or(0.0, |elapsed| elapsed.as_secs_f64())
}

/// Sends `request` and reads the whole answer; an `Err` is a transport failure (refused, reset,
/// dropped or timed-out connection), with reqwest's description.
pub(crate) async fn exchange(request: RequestBuilder) -> Result<Reply, String> {
    let sent = unix_now();
    let started = Instant::now();
    let response = request.send().await.map_err(|e| describe(&e))?;
    let status = response.status().as_u16();
    let headers = response.headers().clone();
    let body = response.bytes().await.map_err(|e| describe(&e))?;
    Ok(Reply {
        status,
        headers,
        body: body.to_vec(),
        sent,
        received: unix_now(),
        latency: started.elapsed(),
    })
}

/// A reqwest error with its causes, which say what happened to the connection.
fn describe(error: &reqwest::Error) -> String {
    let mut text = error.to_string();
    let mut source = std::error::Error::source(error);
    while let Some(cause) = source {
        text.push_str(": ");
        text.push_str(&cause.to_string());
        source = cause.source();
    }
    if error.is_connect() {
        text.insert_str(0, "connect: ");
    }
    text
}

/// Whether a transport failure happened before any connection existed (the server was not
/// listening), as [`exchange`] describes it.
pub(crate) fn never_connected(error: &str) -> bool {
    error.starts_with("connect: ")
}

/// The demo tenant's customers and products, as ids a quote can use.
#[derive(Clone, Debug)]
pub(crate) struct Fixtures {
    /// Customer ids.
    pub(crate) customers: Vec<String>,
    /// Active product ids.
    pub(crate) products: Vec<String>,
}

impl Fixtures {
    /// Reads up to 500 customers and 500 products with `token` (customers:read, products:read).
    pub(crate) async fn fetch(api: &Api, token: &str) -> Self {
        let ids = |path: &'static str| {
            let api = api.clone();
            let token = token.to_owned();
            async move {
                let reply = exchange(api.get(path).bearer_auth(token))
                    .await
                    .unwrap_or_else(|e| panic!("GET {path}: {e}"));
                assert_eq!(reply.status, 200, "GET {path}");
                let items = reply.json()["items"]
                    .as_array()
                    .cloned()
                    .unwrap_or_default();
                items
                    .iter()
                    .filter_map(|item| item["id"].as_str().map(str::to_owned))
                    .collect::<Vec<_>>()
            }
        };
        let customers = ids("/customers?pageSize=500").await;
        let products = ids("/products?pageSize=500").await;
        assert!(
            !customers.is_empty() && !products.is_empty(),
            "the demo tenant has customers and products"
        );
        Self {
            customers,
            products,
        }
    }
}

/// A small, fast pseudo-random sequence (xorshift64*), so that a run is made of varied but
/// reproducible requests without a dependency.
#[derive(Clone, Debug)]
pub(crate) struct Rng(u64);

impl Rng {
    /// A sequence from `seed`.
    pub(crate) fn new(seed: u64) -> Self {
        Self(seed.wrapping_mul(0x9E37_79B9_7F4A_7C15) | 1)
    }

    /// The next number.
    pub(crate) fn next(&mut self) -> u64 {
        self.0 ^= self.0 >> 12;
        self.0 ^= self.0 << 25;
        self.0 ^= self.0 >> 27;
        self.0.wrapping_mul(0x2545_F491_4F6C_DD1D)
    }

    /// A number below `n` (n > 0).
    pub(crate) fn below(&mut self, n: usize) -> usize {
        let n = u64::try_from(n).expect("a usize fits u64");
        usize::try_from(self.next() % n).expect("a number below a usize fits usize")
    }

    /// A number below `n` (n > 0).
    pub(crate) fn below_u32(&mut self, n: u32) -> u32 {
        u32::try_from(self.next() % u64::from(n)).expect("a number below a u32 fits u32")
    }

    /// One of `items`.
    pub(crate) fn pick<'a, T>(&mut self, items: &'a [T]) -> &'a T {
        &items[self.below(items.len())]
    }
}

/// A REST quote body: a customer and 1 to `max_lines` lines of real products with quarter
/// quantities, prices in cents, sometimes a tax rate, and descriptions that name `label`.
pub(crate) fn quote_body(
    rng: &mut Rng,
    fixtures: &Fixtures,
    label: &str,
    max_lines: usize,
) -> Value {
    let count = 1 + rng.below(max_lines);
    let lines: Vec<Value> = (0..count)
        .map(|n| {
            let qty = f64::from(1 + rng.below_u32(400)) / 4.0;
            let unit_price = f64::from(rng.below_u32(250_000)) / 100.0;
            let mut line = json!({
                "skuId": rng.pick(&fixtures.products),
                "qty": qty,
                "unitPrice": unit_price,
                "description": format!("{label} line {}", n + 1),
            });
            if rng.below_u32(3) == 0 {
                line["taxRate"] = json!(0.2);
            }
            line
        })
        .collect();
    json!({
        "customerId": rng.pick(&fixtures.customers),
        "title": label,
        "lines": lines,
    })
}
