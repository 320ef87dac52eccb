//! Opening a quote against the bench's catalog (just over 100 000 active products), as the host's
//! bench test measures it in Chromium: from `host.openQuote()` to resolved, first in fresh hosts
//! that hold no catalog index and fetch past the browser's HTTP cache (the index downloaded and
//! parsed each time), then again and again in one host (the index revalidated with its `ETag`:
//! `304`). With each, the host's phases (`Host::open_quote_phases`) and the index's body as the
//! browser reports it (`PerformanceResourceTiming`); where the browser reports no size, the
//! bytes `curl` received with a browser's `Accept-Encoding` ([`crate::transfer`]) stand in, and
//! the report says which.

use serde::{Deserialize, Serialize};

use crate::figures::{mean, median, rounded};
use crate::transfer::{BROWSER_ACCEPT, Transfers};

/// The goal for the median first open: under this many milliseconds (issue 23).
pub(crate) const FIRST_OPEN_GOAL_MS: f64 = 300.0;
/// The goal for the median repeat open: under this many milliseconds (issue 23).
pub(crate) const REPEAT_OPEN_GOAL_MS: f64 = 50.0;
/// The name of the catalog index among the transfers.
const INDEX_TRANSFER: &str = "catalog_index";

/// The part of the host bench's report about opening a quote.
#[derive(Clone, Debug, PartialEq, Deserialize)]
pub(crate) struct OpenQuoteReport {
    first: Samples,
    repeat: Samples,
    /// The page's very first open (one sample).
    cold: Samples,
}

/// One kind of open: each sample's time, phases and the index's request.
#[derive(Clone, Debug, PartialEq, Deserialize)]
#[serde(rename_all = "camelCase")]
struct Samples {
    ms: Vec<f64>,
    phases_ms: PhaseSamples,
    /// What the browser reported of the index's request, per sample (`null` when nothing).
    index: Vec<Option<Resource>>,
}

/// The samples of each phase.
#[derive(Clone, Debug, PartialEq, Deserialize)]
#[serde(rename_all = "camelCase")]
struct PhaseSamples {
    context: Vec<f64>,
    quote: Vec<f64>,
    index_fetch: Vec<f64>,
    index_parse: Vec<f64>,
    index_build: Vec<f64>,
    install: Vec<f64>,
}

/// A request as `PerformanceResourceTiming` reports it (sizes are 0 where the browser withholds
/// them from a cross-origin page).
#[derive(Clone, Copy, Debug, PartialEq, Deserialize)]
#[serde(rename_all = "camelCase")]
struct Resource {
    response_status: u16,
    transfer_size: u64,
    encoded_body_size: u64,
    decoded_body_size: u64,
}

/// Where an open spends its time, phase by phase: the mean of each over the samples, in
/// milliseconds.
#[derive(Clone, Copy, Debug, Default, PartialEq, Serialize)]
pub(crate) struct OpenPhases {
    /// `GET /me`, for a host that does not know the user yet.
    pub(crate) context: f64,
    /// `GET /quotes/{id}` and reading the quote.
    pub(crate) quote: f64,
    /// `GET /catalog/index` until its body is in module memory (a `304`: the round trip).
    pub(crate) index_fetch: f64,
    /// The index parsed.
    pub(crate) index_parse: f64,
    /// The lookups built from it.
    pub(crate) index_build: f64,
    /// The quote into the editor, the listeners told, the view made.
    pub(crate) install: f64,
}

impl PhaseSamples {
    fn means(&self) -> OpenPhases {
        OpenPhases {
            context: mean(&self.context),
            quote: mean(&self.quote),
            index_fetch: mean(&self.index_fetch),
            index_parse: mean(&self.index_parse),
            index_build: mean(&self.index_build),
            install: mean(&self.install),
        }
    }
}

/// The figures of one kind of open.
#[derive(Clone, Debug, PartialEq)]
pub(crate) struct Open {
    /// Median time to resolved, in milliseconds.
    pub(crate) median_ms: f64,
    /// How many opens it comes from.
    pub(crate) samples: usize,
    /// Where the time goes (means).
    pub(crate) phases: OpenPhases,
    /// The status the browser reported for the index's request (`200`, `304`), when it did.
    pub(crate) status: Option<u16>,
    /// The index's body as it came over the wire (`encodedBodySize`), median, when the browser
    /// reported a size for every sample.
    pub(crate) browser_body_bytes: Option<u64>,
    /// The index decompressed (`decodedBodySize`), median, likewise.
    pub(crate) browser_decoded_bytes: Option<u64>,
}

impl Open {
    fn of(samples: &Samples) -> Option<Self> {
        let reported: Vec<Resource> = samples.index.iter().copied().flatten().collect();
        let complete = !reported.is_empty() && reported.len() == samples.index.len();
        let status = reported
            .first()
            .map(|r| r.response_status)
            .filter(|s| *s > 0);
        let sizes = |size: fn(&Resource) -> u64| -> Option<u64> {
            if !complete {
                return None;
            }
            let mut sizes: Vec<u64> = reported.iter().map(size).collect();
            sizes.sort_unstable();
            sizes.get(sizes.len() / 2).copied()
        };
        // A `304` has no body: 0 is its size, not a size withheld.
        let not_modified = status == Some(304);
        let body = sizes(|r| r.encoded_body_size).filter(|&b| b > 0 || not_modified);
        let decoded = sizes(|r| r.decoded_body_size).filter(|&b| b > 0 || not_modified);
        Some(Self {
            median_ms: median(&samples.ms)?,
            samples: samples.ms.len(),
            phases: samples.phases_ms.means(),
            status,
            browser_body_bytes: body,
            browser_decoded_bytes: decoded,
        })
    }
}

/// The open-quote figures of one run.
#[derive(Clone, Debug, PartialEq)]
pub(crate) struct OpenQuoteFigures {
    /// Fresh hosts, the index downloaded.
    pub(crate) first: Open,
    /// One host again and again, the index revalidated.
    pub(crate) repeat: Open,
    /// The page's very first open (one sample): the host module's code never run before, and the
    /// server's first answer for this catalog (it reads the index from the database, writes and
    /// compresses it).
    pub(crate) cold: Open,
    /// The bytes `curl` received for the index with a browser's `Accept-Encoding`, and their
    /// coding, for when the browser reports no size.
    pub(crate) curl_body: Option<(u64, String)>,
}

/// The index's bytes in a first or repeat open, and where the figure comes from.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
pub(crate) struct IndexBytes {
    /// Bytes of the body on the wire (compressed as sent).
    pub(crate) body_bytes: u64,
    /// `browser` (`PerformanceResourceTiming.encodedBodySize`) or `curl` (the bytes `curl` got
    /// with the browser's `Accept-Encoding`, e.g. `br`).
    pub(crate) from: String,
}

impl OpenQuoteFigures {
    /// The figures in the report; `None` when a kind of open has no samples.
    pub(crate) fn from_report(report: &OpenQuoteReport) -> Option<Self> {
        Some(Self {
            first: Open::of(&report.first)?,
            repeat: Open::of(&report.repeat)?,
            cold: Open::of(&report.cold)?,
            curl_body: None,
        })
    }

    /// Notes what `curl` received for the index, to stand in where the browser reports no size.
    pub(crate) fn add_transfers(&mut self, transfers: &Transfers) {
        self.curl_body = transfers
            .items
            .iter()
            .find(|item| item.name == INDEX_TRANSFER)
            .map(|item| (item.browser_bytes, item.browser_encoding.clone()));
    }

    /// The index's bytes in a first open: the browser's figure, else `curl`'s.
    pub(crate) fn first_bytes(&self) -> Option<IndexBytes> {
        match (self.first.browser_body_bytes, &self.curl_body) {
            (Some(bytes), _) => Some(IndexBytes {
                body_bytes: bytes,
                from: "browser".to_owned(),
            }),
            (None, Some((bytes, coding))) => Some(IndexBytes {
                body_bytes: *bytes,
                from: format!("curl ({coding}, Accept-Encoding: {BROWSER_ACCEPT})"),
            }),
            (None, None) => None,
        }
    }

    /// The index's bytes in a repeat open: none when the answer was `304`.
    pub(crate) fn repeat_bytes(&self) -> Option<IndexBytes> {
        self.repeat.browser_body_bytes.map(|bytes| IndexBytes {
            body_bytes: bytes,
            from: "browser".to_owned(),
        })
    }

    /// Whether the median first open is under its goal.
    pub(crate) fn first_within_goal(&self) -> bool {
        self.first.median_ms < FIRST_OPEN_GOAL_MS
    }

    /// Whether the median repeat open is under its goal.
    pub(crate) fn repeat_within_goal(&self) -> bool {
        self.repeat.median_ms < REPEAT_OPEN_GOAL_MS
    }

    /// The lines the bench prints.
    pub(crate) fn lines(&self, catalog_products: u64) -> [String; 4] {
        let verdict = |ok: bool| if ok { "ok" } else { "OVER" };
        let bytes = |bytes: Option<IndexBytes>| {
            bytes.map_or_else(
                || "index bytes not measured".to_owned(),
                |b| format!("index body {} bytes ({})", b.body_bytes, b.from),
            )
        };
        let status = |open: &Open| open.status.map_or_else(String::new, |s| format!(", {s}"));
        let phases = |p: &OpenPhases| {
            format!(
                "context {:.1}, quote {:.1}, index fetch {:.1}, index parse {:.1}, index build \
                 {:.1}, install {:.1}",
                p.context, p.quote, p.index_fetch, p.index_parse, p.index_build, p.install
            )
        };
        [
            format!(
                "bench: opening a quote against {catalog_products} products, first open (a fresh \
                 host, the index downloaded{}): median {:.1} ms of {} (goal < {FIRST_OPEN_GOAL_MS} \
                 ms) {}; {}",
                status(&self.first),
                self.first.median_ms,
                self.first.samples,
                verdict(self.first_within_goal()),
                bytes(self.first_bytes())
            ),
            format!(
                "bench: opening a quote again (the index revalidated{}): median {:.1} ms of {} \
                 (goal < {REPEAT_OPEN_GOAL_MS} ms) {}; {}",
                status(&self.repeat),
                self.repeat.median_ms,
                self.repeat.samples,
                verdict(self.repeat_within_goal()),
                bytes(self.repeat_bytes())
            ),
            format!(
                "bench: open phases (host, mean ms), first: {}; repeat: {}",
                phases(&self.first.phases),
                phases(&self.repeat.phases)
            ),
            format!(
                "bench: the page's very first open (the host's code and the server's answer for \
                 this catalog both for the first time): {:.1} ms: {}",
                self.cold.median_ms,
                phases(&self.cold.phases)
            ),
        ]
    }

    /// `bench.json`'s `host_open_quote`.
    pub(crate) fn json(&self, catalog_products: u64) -> OpenQuoteJson {
        let open = |open: &Open, goal: f64, within: bool, bytes: Option<IndexBytes>| OpenJson {
            median_ms: rounded(open.median_ms, 2),
            samples: open.samples,
            goal_below_ms: goal,
            within_goal: within,
            status: open.status,
            index: bytes,
            index_decoded_bytes: open.browser_decoded_bytes,
            phases_mean_ms: rounded_phases(&open.phases),
        };
        OpenQuoteJson {
            catalog_products,
            first: open(
                &self.first,
                FIRST_OPEN_GOAL_MS,
                self.first_within_goal(),
                self.first_bytes(),
            ),
            repeat: open(
                &self.repeat,
                REPEAT_OPEN_GOAL_MS,
                self.repeat_within_goal(),
                self.repeat_bytes(),
            ),
            page_first_open: ColdJson {
                ms: rounded(self.cold.median_ms, 2),
                phases_ms: rounded_phases(&self.cold.phases),
            },
        }
    }
}

/// Each phase rounded to 0.01 ms, for `bench.json`.
fn rounded_phases(phases: &OpenPhases) -> OpenPhases {
    OpenPhases {
        context: rounded(phases.context, 2),
        quote: rounded(phases.quote, 2),
        index_fetch: rounded(phases.index_fetch, 2),
        index_parse: rounded(phases.index_parse, 2),
        index_build: rounded(phases.index_build, 2),
        install: rounded(phases.install, 2),
    }
}

/// `host_open_quote` in `bench.json`.
#[derive(Serialize)]
pub(crate) struct OpenQuoteJson {
    catalog_products: u64,
    first: OpenJson,
    repeat: OpenJson,
    page_first_open: ColdJson,
}

/// The page's very first open in `bench.json`.
#[derive(Serialize)]
struct ColdJson {
    ms: f64,
    phases_ms: OpenPhases,
}

/// One kind of open in `bench.json`.
#[derive(Serialize)]
struct OpenJson {
    median_ms: f64,
    samples: usize,
    goal_below_ms: f64,
    within_goal: bool,
    status: Option<u16>,
    index: Option<IndexBytes>,
    index_decoded_bytes: Option<u64>,
    phases_mean_ms: OpenPhases,
}

#[cfg(test)]
pub(crate) mod tests {
    use serde_json::{Value, json};

    use super::*;
    use crate::transfer::Transfer;

    /// A report's `openQuote`, the browser reporting sizes (or not, with `sizes` false).
    pub(crate) fn report_json(sizes: bool) -> Value {
        let phases = json!({"context": [1.0, 3.0], "quote": [2.0, 2.0], "indexFetch": [40.0, 60.0],
            "indexParse": [100.0, 120.0], "indexBuild": [20.0, 20.0], "install": [0.5, 0.5]});
        let index = |status: u16, body: u64| {
            let body = if sizes { body } else { 0 };
            json!({"responseStatus": status, "transferSize": 0, "encodedBodySize": body,
                "decodedBodySize": body * 3})
        };
        json!({
            "first": {"ms": [180.0, 200.0, 400.0], "phasesMs": phases,
                "index": [index(200, 2_400_000), index(200, 2_400_002), index(200, 2_400_001)]},
            "repeat": {"ms": [9.0, 12.0], "phasesMs": phases, "index": [index(304, 0), null]},
            "cold": {"ms": [450.0], "phasesMs": {"context": [5.0], "quote": [5.0],
                "indexFetch": [300.0], "indexParse": [100.0], "indexBuild": [39.0], "install": [1.0]},
                "index": [null]},
        })
    }

    /// The figures of [`report_json`].
    pub(crate) fn figures(sizes: bool) -> OpenQuoteFigures {
        let report: OpenQuoteReport = serde_json::from_value(report_json(sizes)).unwrap();
        OpenQuoteFigures::from_report(&report).unwrap()
    }

    #[test]
    fn the_browser_s_sizes_are_taken_when_it_reports_them() {
        let figures = figures(true);
        assert!((figures.first.median_ms - 200.0).abs() < 1e-9);
        assert_eq!(figures.first.samples, 3);
        assert!((figures.first.phases.index_parse - 110.0).abs() < 1e-9);
        assert_eq!(figures.first.status, Some(200));
        assert_eq!(
            figures.first_bytes(),
            Some(IndexBytes {
                body_bytes: 2_400_001,
                from: "browser".to_owned()
            })
        );
        assert_eq!(figures.first.browser_decoded_bytes, Some(7_200_003));
        assert!(figures.first_within_goal());
        // One repeat has no entry: no size stands for them all.
        assert!((figures.repeat.median_ms - 10.5).abs() < 1e-9);
        assert_eq!(figures.repeat.status, Some(304));
        assert_eq!(figures.repeat_bytes(), None);
        assert!(figures.repeat_within_goal());
    }

    #[test]
    fn curl_s_bytes_stand_in_when_the_browser_withholds_them() {
        let mut figures = figures(false);
        assert_eq!(figures.first.browser_body_bytes, None);
        assert_eq!(figures.first_bytes(), None);
        figures.add_transfers(&Transfers {
            catalog_products: 105_300,
            items: vec![Transfer {
                name: "catalog_index",
                path: "/api/v1/catalog/index",
                identity_bytes: 7_400_000,
                browser_bytes: 2_450_000,
                browser_encoding: "br".to_owned(),
                gzip_bytes: 2_510_000,
                first_browser_ms: 40.0,
                repeat_browser_ms: 30.0,
            }],
        });
        assert_eq!(
            figures.first_bytes(),
            Some(IndexBytes {
                body_bytes: 2_450_000,
                from: "curl (br, Accept-Encoding: br, gzip)".to_owned()
            })
        );
        let lines = figures.lines(100_000);
        assert_eq!(
            lines[0],
            "bench: opening a quote against 100000 products, first open (a fresh host, the index \
             downloaded, 200): median 200.0 ms of 3 (goal < 300 ms) ok; index body 2450000 bytes \
             (curl (br, Accept-Encoding: br, gzip))"
        );
        assert_eq!(
            lines[2],
            "bench: open phases (host, mean ms), first: context 2.0, quote 2.0, index fetch 50.0, \
             index parse 110.0, index build 20.0, install 0.5; repeat: context 2.0, quote 2.0, \
             index fetch 50.0, index parse 110.0, index build 20.0, install 0.5"
        );
        assert!(
            lines[3].ends_with(
                "450.0 ms: context 5.0, quote 5.0, index fetch 300.0, index parse 100.0, index \
                 build 39.0, install 1.0"
            ),
            "{}",
            lines[3]
        );
    }

    #[test]
    fn slow_opens_are_over_their_goals() {
        let mut figures = figures(true);
        figures.first.median_ms = 300.0;
        figures.repeat.median_ms = 50.0;
        assert!(!figures.first_within_goal());
        assert!(!figures.repeat_within_goal());
        let lines = figures.lines(1);
        assert!(lines[0].contains("(goal < 300 ms) OVER"), "{}", lines[0]);
        assert!(lines[1].contains("(goal < 50 ms) OVER"), "{}", lines[1]);
        let json = serde_json::to_value(figures.json(1)).unwrap();
        assert_eq!(json["first"]["within_goal"], false);
        assert_eq!(json["first"]["index"]["from"], "browser");
        assert_eq!(json["repeat"]["index"], Value::Null);
        assert_eq!(json["page_first_open"]["ms"].as_f64(), Some(450.0));
        assert_eq!(
            json["page_first_open"]["phases_ms"]["index_fetch"].as_f64(),
            Some(300.0)
        );
    }
}
