//! The reference app's cold load in headless Chromium: from navigation to the quote editor
//! showing its lines, on the release server with the demo data `toolbridge serve --demo` makes
//! (1 000 products), signed in as the demo tenant's admin.
//!
//! Each load goes from `/healthz` on the app's origin (a page that is not the app, so that the
//! session's cookie can be set first) to `http://localhost:PORT/#/quotes/ID`, a Draft quote with
//! lines, and ends when the page marks `toolbridge:quote-lines` (the editor's first render of the
//! lines, `www/js/views/editor/view.js`): that mark's time from the navigation's start is the
//! figure. The page also measures `toolbridge:host-init` around the host module's `await init()`
//! (`www/js/main.js`), from which, with the Resource Timing of the module's `.wasm`, come the
//! phases: the document, the app's scripts until `init()`, `init()` (the wasm's fetch, then its
//! compile and instantiate after the last byte), and the rest until the lines (the session, the
//! tools, the quote and the catalog index, the render).
//!
//! - **First visit**: a new `WebDriver` session each sample, that is a fresh Chromium profile
//!   with an empty HTTP cache and no compiled code cached.
//! - **Repeat**: one session, loading the same page again and again. Its first load has a probe
//!   installed before the page's scripts (`Page.addScriptToEvaluateOnNewDocument`) that wraps
//!   `WebAssembly.instantiateStreaming` and `WebAssembly.instantiate`, to see which the host
//!   module's glue compiled with and what `Content-Type` it got; the second load (a warm HTTP
//!   cache) is when Chromium writes the module's compiled code to its code cache, and is reported
//!   on its own; the loads after it are the samples. The page stays open [`SETTLE`] after each
//!   load, as a user's would, for V8 to tier the module's code up and cache it.
//!
//! The probe's load comes first of all, so that it is also the one that has the server compress
//! its static files and the catalog index for the first time.
//!
//! The sessions are fantoccini's, as in the e2e suites, on a current-thread tokio runtime that
//! this part of the (otherwise synchronous) bench starts for itself; the `DevTools` commands go
//! through chromedriver's `goog/cdp/execute`, a command of fantoccini's custom kind
//! ([`Devtools`]).

use std::path::{Path, PathBuf};
use std::time::Duration;

use fantoccini::wd::WebDriverCompatibleCommand;
use fantoccini::{Client, ClientBuilder};
use hyper_util::client::legacy::connect::HttpConnector;
use serde::{Deserialize, Serialize};
use serde_json::{Value, json};
use tokio::time::{sleep, timeout};
use toolbridge_e2e::server::{ServerOptions, ToolbridgeServer};
use toolbridge_e2e::webdriver::{CHROMIUM, WebDriver, driver_from_env};

use crate::error::Error;
use crate::figures::{median, rounded};
use crate::sizes::HOST_WASM;

/// The goal for the median first visit, in milliseconds (issue 34, on this machine).
pub(crate) const FIRST_VISIT_GOAL_MS: f64 = 500.0;
/// The goal for the median repeat, in milliseconds.
pub(crate) const REPEAT_GOAL_MS: f64 = 150.0;
/// Products in the demo catalog: `toolbridge serve --demo`'s default.
const DEMO_PRODUCTS: u32 = 1000;
/// The demo user the loads are signed in as, and the demo password (`store/src/seed.rs`).
const USER: &str = "admin@harbour.test";
const PASSWORD: &str = "demo-password";
/// How long the page stays open after each load of the repeat session before the next one.
const SETTLE: Duration = Duration::from_millis(2500);
/// How long a load may take to show the lines, in milliseconds, before it is an error.
const PATIENCE_MS: u32 = 20_000;
/// How long one request to the driver may take: a navigation waits for the page's `load` event,
/// and a script run with [`Session::execute_async`] for its own answer.
const REQUEST_TIMEOUT: Duration = Duration::from_secs(120);
/// The page's mark when the editor first renders the quote's lines.
pub(crate) const LINES_MARK: &str = "toolbridge:quote-lines";
/// The page's measure around the host module's `init()`.
pub(crate) const INIT_MEASURE: &str = "toolbridge:host-init";

/// Signs in with the session API from a page on the app's origin, then picks the first Draft
/// quote with lines of the first page of quotes: `{id, ref}`, or `{error}`.
const SIGN_IN: &str = "
const [email, password, done] = arguments;
(async () => {
  const signIn = await fetch('/api/session', {method: 'POST',
    headers: {'content-type': 'application/json'}, body: JSON.stringify({email, password})});
  if (!signIn.ok) return {error: `POST /api/session answered ${signIn.status}`};
  const list = await fetch('/api/v1/quotes');
  if (!list.ok) return {error: `GET /api/v1/quotes answered ${list.status}`};
  const quote = (await list.json()).items.find((q) => q.status === 'Draft' && q.total > 0);
  return quote ? {id: quote.id, ref: quote.ref}
    : {error: 'the first page of the demo quotes has no Draft with lines'};
})().then(done, (error) => done({error: String(error)}));
";

/// Waits for the lines' mark (or [`PATIENCE_MS`]), then answers the load's timings (see
/// [`PageSample`]), or `{error}` with what the page shows.
const LOAD: &str = "
const [linesMark, initMeasure, wasmPath, quotePath, patience, done] = arguments;
const resource = (path) => {
  const entry = performance.getEntriesByType('resource')
    .find((e) => new URL(e.name).pathname === path);
  return entry ? {start: entry.startTime, responseEnd: entry.responseEnd,
    transferSize: entry.transferSize, encodedBodySize: entry.encodedBodySize,
    initiatorType: entry.initiatorType, status: entry.responseStatus ?? 0} : null;
};
const finish = () => {
  const navigation = performance.getEntriesByType('navigation')[0];
  const init = performance.getEntriesByName(initMeasure)[0];
  return {
    linesMs: performance.getEntriesByName(linesMark)[0].startTime,
    responseEndMs: navigation ? navigation.responseEnd : null,
    domContentLoadedMs: navigation ? navigation.domContentLoadedEventEnd : null,
    init: init ? {start: init.startTime, duration: init.duration} : null,
    wasm: resource(wasmPath),
    quote: resource(quotePath),
    rows: document.querySelectorAll('.lines-table tr[data-line-no]').length,
  };
};
if (performance.getEntriesByName(linesMark).length) {
  done(finish());
} else {
  const observer = new PerformanceObserver(() => {
    if (!performance.getEntriesByName(linesMark).length) return;
    observer.disconnect();
    clearTimeout(timer);
    done(finish());
  });
  const timer = setTimeout(() => {
    observer.disconnect();
    const shown = (document.getElementById('main')?.innerText ?? '').slice(0, 300);
    done({error: `no ${linesMark} mark within ${patience} ms; the page shows: ${shown}`});
  }, patience);
  observer.observe({type: 'mark', buffered: true});
}
";

/// Installed before the page's own scripts on the probe's load: counts the host module's
/// compiles by way of each API and notes the `Content-Type` the streaming one got.
const PROBE: &str = "
(() => {
  const probe = {streamingCalls: 0, streamingOk: 0, instantiateCalls: 0, contentType: null};
  window.__toolbridgeBenchWasm = probe;
  const streaming = WebAssembly.instantiateStreaming;
  if (typeof streaming === 'function') {
    WebAssembly.instantiateStreaming = function (source, imports) {
      probe.streamingCalls += 1;
      return Promise.resolve(source).then((response) => {
        probe.contentType = response.headers.get('content-type');
        return streaming.call(WebAssembly, response, imports);
      }).then((result) => {
        probe.streamingOk += 1;
        return result;
      });
    };
  }
  const instantiate = WebAssembly.instantiate;
  WebAssembly.instantiate = function (...args) {
    probe.instantiateCalls += 1;
    return instantiate.apply(WebAssembly, args);
  };
})();
";

/// One load's timings as the page answers them, in milliseconds from the navigation's start.
#[derive(Clone, Debug, Deserialize, PartialEq)]
#[serde(rename_all = "camelCase")]
struct PageSample {
    /// The lines' mark.
    lines_ms: f64,
    /// The document's last byte.
    response_end_ms: Option<f64>,
    /// The end of `DOMContentLoaded`.
    dom_content_loaded_ms: Option<f64>,
    /// The host module's `init()`.
    init: Option<Span>,
    /// The host module's `.wasm`.
    wasm: Option<Resource>,
    /// The quote's `GET /api/v1/quotes/{id}`.
    quote: Option<Resource>,
    /// The line rows in the editor.
    rows: u64,
}

/// A performance measure: its start and duration.
#[derive(Clone, Copy, Debug, Deserialize, PartialEq)]
struct Span {
    start: f64,
    duration: f64,
}

/// A Resource Timing entry, in part.
#[derive(Clone, Debug, Deserialize, PartialEq)]
#[serde(rename_all = "camelCase")]
struct Resource {
    start: f64,
    response_end: f64,
    /// Bytes over the wire, headers included (about 300 for a `304`).
    transfer_size: u64,
    /// The body's bytes as they came (compressed).
    encoded_body_size: u64,
    /// `fetch` for the host module's glue's `fetch()`.
    initiator_type: String,
    /// The status (`200`; a revalidated answer shows as the cached `200`); 0 when not reported.
    status: u16,
}

/// Where one load's time went, in milliseconds. `document`, `scripts`, `host_init` and `app`
/// follow each other and add up to the load; the others are inside one of them.
#[derive(Clone, Copy, Debug, Default, PartialEq, Serialize)]
pub(crate) struct LoadPhases {
    /// The navigation's start to the document's last byte.
    pub(crate) document: f64,
    /// From there until the page calls the host module's `init()`: the app's modules fetched
    /// (the glue among them), parsed and run.
    pub(crate) scripts: f64,
    /// The host module's `init()`: the wasm's fetch, compile and instantiate.
    pub(crate) host_init: f64,
    /// Inside `init()`: the wasm's request to its last byte.
    pub(crate) host_fetch: f64,
    /// Inside `init()`: from the wasm's last byte to `init()` resolved, the compile a streaming
    /// compile has not done by then, and the instantiate.
    pub(crate) host_compile_instantiate: f64,
    /// After `init()`, until the lines' render: the session, the tools, the quote and the
    /// catalog index, the editor's render.
    pub(crate) app: f64,
    /// Inside `app`: the quote's request to its last byte.
    pub(crate) quote_fetch: f64,
    /// `DOMContentLoaded`'s end, from the navigation's start.
    pub(crate) dom_content_loaded: f64,
}

impl PageSample {
    /// The phases of this load, or why there are none (a page without the measure).
    fn phases(&self) -> Result<LoadPhases, String> {
        let init = self.init.ok_or_else(|| {
            format!(
                "the page has no `{INIT_MEASURE}` measure (www/js/main.js makes it around \
                 `await init()`)"
            )
        })?;
        let wasm = self
            .wasm
            .as_ref()
            .ok_or_else(|| format!("the page has no Resource Timing entry for {HOST_WASM}"))?;
        let document = self.response_end_ms.unwrap_or_default();
        let init_end = init.start + init.duration;
        Ok(LoadPhases {
            document,
            scripts: init.start - document,
            host_init: init.duration,
            host_fetch: wasm.response_end - wasm.start,
            host_compile_instantiate: init_end - wasm.response_end,
            app: self.lines_ms - init_end,
            quote_fetch: self
                .quote
                .as_ref()
                .map_or(0.0, |quote| quote.response_end - quote.start),
            dom_content_loaded: self.dom_content_loaded_ms.unwrap_or_default(),
        })
    }
}

/// Reads the page's answer to [`LOAD`]: a sample, or its error.
fn parse_sample(value: Value) -> Result<PageSample, Error> {
    if let Some(error) = value.get("error").and_then(Value::as_str) {
        return Err(Error::failed(format!("the app's cold load: {error}")));
    }
    let text = value.to_string();
    let sample: PageSample = serde_json::from_value(value).map_err(|e| {
        Error::failed(format!(
            "the app's cold load: the page's timings cannot be read ({e}): {text}"
        ))
    })?;
    if sample.rows == 0 {
        return Err(Error::failed(format!(
            "the app's cold load: the page marked {LINES_MARK} but shows no line rows: {text}"
        )));
    }
    Ok(sample)
}

/// The samples of one kind of load, summed up: medians.
#[derive(Clone, Debug, PartialEq)]
pub(crate) struct Visit {
    /// The median load, navigation to the lines, in milliseconds.
    pub(crate) median_ms: f64,
    /// How many loads.
    pub(crate) samples: usize,
    /// Each phase's own median (so they need not add up to [`Self::median_ms`]).
    pub(crate) phases: LoadPhases,
    /// The host module's wasm over the wire (`transferSize`, headers included), median.
    pub(crate) wasm_transfer_bytes: u64,
    /// Its body as it came (`encodedBodySize`), median.
    pub(crate) wasm_body_bytes: u64,
}

impl Visit {
    /// The medians of `samples`; `None` when there are none.
    fn of(samples: &[PageSample]) -> Result<Option<Self>, Error> {
        let phases = samples
            .iter()
            .map(PageSample::phases)
            .collect::<Result<Vec<_>, String>>()
            .map_err(|why| Error::failed(format!("the app's cold load: {why}")))?;
        let each = |phase: fn(&LoadPhases) -> f64| {
            median(&phases.iter().map(phase).collect::<Vec<_>>()).unwrap_or_default()
        };
        let bytes = |size: fn(&Resource) -> u64| {
            let mut sizes: Vec<u64> = samples
                .iter()
                .filter_map(|s| s.wasm.as_ref().map(size))
                .collect();
            sizes.sort_unstable();
            sizes.get(sizes.len() / 2).copied().unwrap_or_default()
        };
        let lines: Vec<f64> = samples.iter().map(|s| s.lines_ms).collect();
        Ok(median(&lines).map(|median_ms| Self {
            median_ms,
            samples: samples.len(),
            phases: LoadPhases {
                document: each(|p| p.document),
                scripts: each(|p| p.scripts),
                host_init: each(|p| p.host_init),
                host_fetch: each(|p| p.host_fetch),
                host_compile_instantiate: each(|p| p.host_compile_instantiate),
                app: each(|p| p.app),
                quote_fetch: each(|p| p.quote_fetch),
                dom_content_loaded: each(|p| p.dom_content_loaded),
            },
            wasm_transfer_bytes: bytes(|r| r.transfer_size),
            wasm_body_bytes: bytes(|r| r.encoded_body_size),
        }))
    }
}

/// What the probe saw the host module's glue do (see [`PROBE`]).
#[derive(Clone, Debug, Default, Deserialize, PartialEq)]
#[serde(rename_all = "camelCase")]
pub(crate) struct CompileProbe {
    /// Calls of `WebAssembly.instantiateStreaming`, and those that resolved.
    pub(crate) streaming_calls: u32,
    pub(crate) streaming_ok: u32,
    /// Calls of `WebAssembly.instantiate` (the glue's fallback, with the bytes).
    pub(crate) instantiate_calls: u32,
    /// The `Content-Type` of the response given to `instantiateStreaming`.
    pub(crate) content_type: Option<String>,
}

impl CompileProbe {
    /// Whether the module was compiled as it streamed in: `instantiateStreaming` resolved, and
    /// nothing fell back to `instantiate`.
    pub(crate) fn streamed(&self) -> bool {
        self.streaming_ok > 0 && self.instantiate_calls == 0
    }
}

/// The app's cold load, first visit and repeat.
#[derive(Clone, Debug, PartialEq)]
pub(crate) struct ColdLoad {
    /// The quote opened, its reference (`Q-1001`), and the line rows the editor showed.
    pub(crate) quote_ref: String,
    pub(crate) rows: u64,
    /// Fresh profiles.
    pub(crate) first: Visit,
    /// The same profile again, the compiled code cached.
    pub(crate) repeat: Visit,
    /// The second load of the repeat session: the HTTP cache warm, the compiled code not cached
    /// yet (Chromium caches it during this load).
    pub(crate) second_visit_ms: f64,
    /// The probe's findings.
    pub(crate) streaming: CompileProbe,
    /// How the wasm was requested (`fetch`).
    pub(crate) wasm_initiator: String,
    /// Bytes in the profile's compiled wasm code cache after the repeats (`Code Cache/wasm`),
    /// when the driver said where the profile is.
    pub(crate) code_cache_bytes: Option<u64>,
}

/// Starts the release server `binary` with the demo data (its files in `dir`) and chromedriver
/// (from `CHROMEDRIVER`), and measures `samples` first visits and `samples` repeats.
pub(crate) fn measure(binary: &Path, dir: &Path, samples: usize) -> Result<ColdLoad, Error> {
    let server = ToolbridgeServer::start(
        binary,
        &ServerOptions::new("bench", dir.join("server"), DEMO_PRODUCTS),
    )?;
    let driver = WebDriver::start(&CHROMIUM, &driver_from_env(&CHROMIUM)?, dir)?;
    let origin = format!("http://localhost:{}", server.port());
    println!(
        "bench: the app's cold load at {origin}: {samples} first visits in fresh profiles, then \
         {samples} repeats in one"
    );
    let runtime = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .map_err(|e| {
            Error::failed(format!(
                "the app's cold load: cannot start a tokio runtime for WebDriver: {e}"
            ))
        })?;
    runtime.block_on(visits(&driver.url(), &origin, samples))
}

/// The repeats, then the first visits, in sessions from the driver at `driver`.
async fn visits(driver: &str, origin: &str, samples: usize) -> Result<ColdLoad, Error> {
    // The repeat session first: its first load is the probe's, and the server's first answers.
    let session = Session::new(driver).await?;
    let repeat = repeat(&session, origin, samples).await;
    session.close().await;
    let repeat = repeat?;

    let mut firsts = Vec::with_capacity(samples);
    for _ in 0..samples {
        let session = Session::new(driver).await?;
        let first = first_visit(&session, origin, &repeat.quote_id).await;
        session.close().await;
        firsts.push(first?);
    }
    let none = || Error::failed("the app's cold load took no samples");
    Ok(ColdLoad {
        quote_ref: repeat.quote_ref,
        rows: repeat.probe_load.rows,
        first: Visit::of(&firsts)?.ok_or_else(none)?,
        repeat: Visit::of(&repeat.samples)?.ok_or_else(none)?,
        second_visit_ms: repeat.second.lines_ms,
        streaming: repeat.streaming,
        wasm_initiator: repeat
            .probe_load
            .wasm
            .map(|wasm| wasm.initiator_type)
            .unwrap_or_default(),
        code_cache_bytes: repeat.code_cache_bytes,
    })
}

/// What the repeat session measured.
struct Repeat {
    /// The quote opened: its id and reference.
    quote_id: String,
    quote_ref: String,
    /// The first load, with the probe.
    probe_load: PageSample,
    /// What the probe saw.
    streaming: CompileProbe,
    /// The second load.
    second: PageSample,
    /// The loads after it.
    samples: Vec<PageSample>,
    /// The bytes in the profile's compiled wasm code cache after them.
    code_cache_bytes: Option<u64>,
}

/// The repeat session's loads in `session`: the probe's, the second, then `samples` more.
async fn repeat(session: &Session, origin: &str, samples: usize) -> Result<Repeat, Error> {
    let (quote_id, quote_ref) = sign_in(session, origin).await?;
    let added = session
        .devtools(
            "Page.addScriptToEvaluateOnNewDocument",
            json!({ "source": PROBE }),
        )
        .await?;
    let probe_load = load(session, origin, &quote_id).await?;
    let streaming = session
        .execute("return window.__toolbridgeBenchWasm ?? null;", Vec::new())
        .await?;
    let streaming: CompileProbe = serde_json::from_value(streaming.clone()).map_err(|e| {
        Error::failed(format!(
            "the app's cold load: the probe of the host module's compile cannot be read ({e}): \
             {streaming}"
        ))
    })?;
    if let Some(identifier) = added.get("identifier") {
        session
            .devtools(
                "Page.removeScriptToEvaluateOnNewDocument",
                json!({ "identifier": identifier }),
            )
            .await?;
    }
    sleep(SETTLE).await;
    let second = load(session, origin, &quote_id).await?;
    sleep(SETTLE).await;
    let mut repeats = Vec::with_capacity(samples);
    for _ in 0..samples {
        repeats.push(load(session, origin, &quote_id).await?);
        sleep(SETTLE).await;
    }
    let code_cache_bytes = session
        .user_data_dir
        .as_deref()
        .map(|dir| folder_bytes(&dir.join("Default/Code Cache/wasm")));
    Ok(Repeat {
        quote_id,
        quote_ref,
        probe_load,
        streaming,
        second,
        samples: repeats,
        code_cache_bytes,
    })
}

/// A first visit in `session` (a fresh one): signs in, then loads the quote `quote_id`.
async fn first_visit(session: &Session, origin: &str, quote_id: &str) -> Result<PageSample, Error> {
    sign_in(session, origin).await?;
    load(session, origin, quote_id).await
}

/// Goes to `/healthz` on `origin` (not the app), signs in as [`USER`] from there, and returns
/// the quote to open: its id and reference.
async fn sign_in(session: &Session, origin: &str) -> Result<(String, String), Error> {
    session.goto(&format!("{origin}/healthz")).await?;
    let answer = session
        .execute_async(SIGN_IN, vec![json!(USER), json!(PASSWORD)])
        .await?;
    let field = |name: &str| answer.get(name).and_then(Value::as_str).map(str::to_owned);
    match (field("id"), field("ref"), field("error")) {
        (Some(id), Some(reference), _) => Ok((id, reference)),
        (_, _, error) => Err(Error::failed(format!(
            "the app's cold load: cannot sign in as {USER} and find a quote: {}",
            error.unwrap_or_else(|| answer.to_string())
        ))),
    }
}

/// One load: from `/healthz` on `origin` to the quote `quote_id` in the editor, until the lines
/// show.
async fn load(session: &Session, origin: &str, quote_id: &str) -> Result<PageSample, Error> {
    session.goto(&format!("{origin}/healthz")).await?;
    session
        .goto(&format!("{origin}/#/quotes/{quote_id}"))
        .await?;
    let answer = session
        .execute_async(
            LOAD,
            vec![
                json!(LINES_MARK),
                json!(INIT_MEASURE),
                json!(format!("/host/{HOST_WASM}")),
                json!(format!("/api/v1/quotes/{quote_id}")),
                json!(PATIENCE_MS),
            ],
        )
        .await?;
    parse_sample(answer)
}

/// A `WebDriver` session of headless Chromium, fantoccini's [`Client`], each request of it
/// bounded by [`REQUEST_TIMEOUT`] and its errors named. End it with [`Session::close`]; one
/// dropped unclosed is ended by fantoccini on the runtime, if that still runs.
struct Session {
    client: Client,
    /// The driver's address, `http://127.0.0.1:PORT`, for the errors.
    driver: String,
    /// The browser's profile for this session (chromedriver makes a fresh one in a temporary
    /// folder for each session), when the driver said where.
    user_data_dir: Option<PathBuf>,
}

impl Session {
    /// A new session from the driver at `driver` with [`CHROMIUM`]'s capabilities.
    async fn new(driver: &str) -> Result<Self, Error> {
        let mut builder = ClientBuilder::new(HttpConnector::new());
        builder.capabilities(CHROMIUM.capabilities());
        let client = timeout(REQUEST_TIMEOUT, builder.connect(driver))
            .await
            .map_err(|_| {
                Error::failed(format!(
                    "WebDriver: no new session from the driver at {driver} within \
                     {REQUEST_TIMEOUT:?}"
                ))
            })?
            .map_err(|e| {
                Error::failed(format!(
                    "WebDriver: no new session from the driver at {driver}: {e}"
                ))
            })?;
        let user_data_dir = client
            .capabilities()
            .and_then(|capabilities| capabilities.get("chrome"))
            .and_then(|chrome| chrome.get("userDataDir"))
            .and_then(Value::as_str)
            .map(PathBuf::from);
        Ok(Self {
            client,
            driver: driver.to_owned(),
            user_data_dir,
        })
    }

    /// The answer of `request`, which is `what` the session does, or why there is none.
    async fn answer<T>(
        &self,
        what: &str,
        request: impl Future<Output = Result<T, fantoccini::error::CmdError>>,
    ) -> Result<T, Error> {
        timeout(REQUEST_TIMEOUT, request)
            .await
            .map_err(|_| {
                Error::failed(format!(
                    "WebDriver {what} at {}: no answer within {REQUEST_TIMEOUT:?}",
                    self.driver
                ))
            })?
            .map_err(|e| Error::failed(format!("WebDriver {what} at {}: {e}", self.driver)))
    }

    /// Goes to `url` and waits for the page's `load` event.
    async fn goto(&self, url: &str) -> Result<(), Error> {
        self.answer(&format!("goto {url}"), self.client.goto(url))
            .await
    }

    /// Runs `script` (a function body, with `args` as its `arguments`) in the page and returns
    /// what it returns.
    async fn execute(&self, script: &str, args: Vec<Value>) -> Result<Value, Error> {
        self.answer("execute", self.client.execute(script, args))
            .await
    }

    /// Runs `script` in the page, which answers by calling its last argument, and returns that
    /// answer; the driver gives up after the session's script timeout (30 s).
    async fn execute_async(&self, script: &str, args: Vec<Value>) -> Result<Value, Error> {
        self.answer("execute_async", self.client.execute_async(script, args))
            .await
    }

    /// Sends the Chrome `DevTools` Protocol command `cmd` with `params` to the page, through
    /// chromedriver, and returns its result.
    async fn devtools(&self, cmd: &'static str, params: Value) -> Result<Value, Error> {
        self.answer(
            &format!("goog/cdp/execute {cmd}"),
            self.client.issue_cmd(Devtools { cmd, params }),
        )
        .await
    }

    /// Ends the session, and so its browser; an error here leaves nothing to do but go on.
    async fn close(self) {
        let _ = timeout(REQUEST_TIMEOUT, self.client.close()).await;
    }
}

/// chromedriver's command that passes a Chrome `DevTools` Protocol command, `cmd` with `params`,
/// on to the page: `POST /session/{id}/goog/cdp/execute`.
#[derive(Debug)]
struct Devtools {
    cmd: &'static str,
    params: Value,
}

impl WebDriverCompatibleCommand for Devtools {
    fn endpoint(
        &self,
        base_url: &url::Url,
        session_id: Option<&str>,
    ) -> Result<url::Url, url::ParseError> {
        // fantoccini issues it on a session, which has an id.
        base_url.join(&format!(
            "session/{}/goog/cdp/execute",
            session_id.unwrap_or_default()
        ))
    }

    fn method_and_body(&self, _request_url: &url::Url) -> (http::Method, Option<String>) {
        let body = json!({"cmd": self.cmd, "params": self.params});
        (http::Method::POST, Some(body.to_string()))
    }
}

/// The bytes of the files in `dir` and below it (0 when it is not there).
fn folder_bytes(dir: &Path) -> u64 {
    let Ok(entries) = std::fs::read_dir(dir) else {
        return 0;
    };
    entries
        .filter_map(Result::ok)
        .map(|entry| {
            let path: PathBuf = entry.path();
            match entry.metadata() {
                Ok(meta) if meta.is_dir() => folder_bytes(&path),
                Ok(meta) => meta.len(),
                Err(_) => 0,
            }
        })
        .sum()
}

impl ColdLoad {
    /// Whether the median first visit is under its goal.
    pub(crate) fn first_within_goal(&self) -> bool {
        self.first.median_ms < FIRST_VISIT_GOAL_MS
    }

    /// Whether the median repeat is under its goal.
    pub(crate) fn repeat_within_goal(&self) -> bool {
        self.repeat.median_ms < REPEAT_GOAL_MS
    }

    /// The lines the bench prints.
    pub(crate) fn lines(&self) -> [String; 4] {
        let verdict = |ok: bool| if ok { "ok" } else { "OVER" };
        let phases = |name: &str, visit: &Visit| {
            let p = &visit.phases;
            format!(
                "bench: cold load phases, {name} (median ms of each): the document {:.1}, the \
                 app's scripts until init() {:.1} (DOMContentLoaded at {:.1}), the host module's \
                 init() {:.1} (the wasm's fetch {:.1}, {} bytes over the wire; compile and \
                 instantiate after its last byte {:.1}), on to the lines {:.1} (the quote's \
                 fetch {:.1})",
                p.document,
                p.scripts,
                p.dom_content_loaded,
                p.host_init,
                p.host_fetch,
                visit.wasm_transfer_bytes,
                p.host_compile_instantiate,
                p.app,
                p.quote_fetch
            )
        };
        let streaming = &self.streaming;
        let content_type = streaming.content_type.as_deref().unwrap_or("not seen");
        let compiled = if streaming.streamed() {
            "streaming: WebAssembly.instantiateStreaming".to_owned()
        } else {
            format!(
                "NOT streaming: instantiateStreaming {} calls, {} resolved; instantiate {} calls",
                streaming.streaming_calls, streaming.streaming_ok, streaming.instantiate_calls
            )
        };
        let cache = self
            .code_cache_bytes
            .map_or_else(|| "not found".to_owned(), |bytes| format!("{bytes} bytes"));
        [
            format!(
                "bench: the app's cold load, navigation to the quote editor showing {}'s {} lines \
                 (demo data): first visit (a fresh profile) median {:.1} ms of {} (goal < \
                 {FIRST_VISIT_GOAL_MS} ms) {}; repeat (warm HTTP cache, compiled code cached) \
                 median {:.1} ms of {} (goal < {REPEAT_GOAL_MS} ms) {}",
                self.quote_ref,
                self.rows,
                self.first.median_ms,
                self.first.samples,
                verdict(self.first_within_goal()),
                self.repeat.median_ms,
                self.repeat.samples,
                verdict(self.repeat_within_goal())
            ),
            phases("first visit", &self.first),
            phases("repeat", &self.repeat),
            format!(
                "bench: the host module's wasm: Content-Type {content_type}, requested by {}, \
                 compiled {compiled}; the second visit (warm HTTP cache, code not cached yet) \
                 {:.1} ms; the profile's compiled wasm code cache after the repeats: {cache}",
                if self.wasm_initiator.is_empty() {
                    "?"
                } else {
                    &self.wasm_initiator
                },
                self.second_visit_ms
            ),
        ]
    }

    /// `bench.json`'s `app_cold_load`.
    pub(crate) fn json(&self) -> ColdLoadJson {
        let visit = |visit: &Visit, goal: f64, within: bool| VisitJson {
            median_ms: rounded(visit.median_ms, 1),
            samples: visit.samples,
            goal_below_ms: goal,
            within_goal: within,
            host_wasm_transfer_bytes: visit.wasm_transfer_bytes,
            host_wasm_body_bytes: visit.wasm_body_bytes,
            phases_median_ms: rounded_phases(&visit.phases),
        };
        ColdLoadJson {
            demo_products: DEMO_PRODUCTS,
            quote: self.quote_ref.clone(),
            lines: self.rows,
            first_visit: visit(&self.first, FIRST_VISIT_GOAL_MS, self.first_within_goal()),
            repeat: visit(&self.repeat, REPEAT_GOAL_MS, self.repeat_within_goal()),
            second_visit_ms: rounded(self.second_visit_ms, 1),
            host_wasm_content_type: self.streaming.content_type.clone(),
            host_wasm_initiator: self.wasm_initiator.clone(),
            streaming_compile: self.streaming.streamed(),
            wasm_code_cache_bytes: self.code_cache_bytes,
        }
    }
}

/// Each phase rounded to 0.1 ms, for `bench.json`.
fn rounded_phases(p: &LoadPhases) -> LoadPhases {
    LoadPhases {
        document: rounded(p.document, 1),
        scripts: rounded(p.scripts, 1),
        host_init: rounded(p.host_init, 1),
        host_fetch: rounded(p.host_fetch, 1),
        host_compile_instantiate: rounded(p.host_compile_instantiate, 1),
        app: rounded(p.app, 1),
        quote_fetch: rounded(p.quote_fetch, 1),
        dom_content_loaded: rounded(p.dom_content_loaded, 1),
    }
}

/// `app_cold_load` in `bench.json`.
#[derive(Serialize)]
pub(crate) struct ColdLoadJson {
    demo_products: u32,
    quote: String,
    lines: u64,
    first_visit: VisitJson,
    repeat: VisitJson,
    second_visit_ms: f64,
    host_wasm_content_type: Option<String>,
    host_wasm_initiator: String,
    streaming_compile: bool,
    wasm_code_cache_bytes: Option<u64>,
}

/// One kind of load in `bench.json`.
#[derive(Serialize)]
struct VisitJson {
    median_ms: f64,
    samples: usize,
    goal_below_ms: f64,
    within_goal: bool,
    host_wasm_transfer_bytes: u64,
    host_wasm_body_bytes: u64,
    phases_median_ms: LoadPhases,
}

#[cfg(test)]
pub(crate) mod tests {
    use super::*;

    /// A page's answer: the lines at `lines`, `init()` from `init` for 60 ms, the wasm fetched
    /// from 5 ms after `init` to 40 ms after it, `transfer` bytes over the wire, and the quote
    /// fetched from 60 to 56.5 ms before the lines.
    fn page(lines: f64, init: f64, transfer: u64) -> Value {
        let resource = |start: f64, end: f64, transfer: u64| {
            json!({"start": start, "responseEnd": end, "transferSize": transfer,
                "encodedBodySize": 259_905, "initiatorType": "fetch", "status": 200})
        };
        json!({"linesMs": lines, "responseEndMs": 12.0, "domContentLoadedMs": init - 2.0,
            "init": {"start": init, "duration": 60.0},
            "wasm": resource(init + 5.0, init + 40.0, transfer),
            "quote": resource(lines - 60.0, lines - 56.5, 1072), "rows": 2})
    }

    /// Figures of three first visits and three repeats.
    pub(crate) fn cold_load() -> ColdLoad {
        let samples = |init: f64, values: [(f64, u64); 3]| -> Vec<PageSample> {
            values
                .iter()
                .map(|&(lines, transfer)| parse_sample(page(lines, init, transfer)).unwrap())
                .collect()
        };
        ColdLoad {
            quote_ref: "Q-1001".to_owned(),
            rows: 2,
            first: Visit::of(&samples(
                400.0,
                [(650.0, 260_205), (600.0, 260_205), (700.0, 1)],
            ))
            .unwrap()
            .unwrap(),
            repeat: Visit::of(&samples(40.0, [(140.0, 300), (120.0, 300), (180.0, 300)]))
                .unwrap()
                .unwrap(),
            second_visit_ms: 190.04,
            streaming: CompileProbe {
                streaming_calls: 1,
                streaming_ok: 1,
                instantiate_calls: 0,
                content_type: Some("application/wasm".to_owned()),
            },
            wasm_initiator: "fetch".to_owned(),
            code_cache_bytes: Some(135_000),
        }
    }

    #[test]
    fn a_load_s_phases_follow_each_other() {
        let sample = parse_sample(page(650.0, 400.0, 260_205)).unwrap();
        let phases = sample.phases().unwrap();
        assert_eq!(
            phases,
            LoadPhases {
                document: 12.0,
                scripts: 388.0,
                host_init: 60.0,
                host_fetch: 35.0,
                host_compile_instantiate: 20.0,
                app: 190.0,
                quote_fetch: 3.5,
                dom_content_loaded: 398.0,
            }
        );
        let sum = phases.document + phases.scripts + phases.host_init + phases.app;
        assert!((sum - sample.lines_ms).abs() < 1e-9);
    }

    #[test]
    fn a_page_without_its_marks_or_lines_is_an_error() {
        let error =
            parse_sample(json!({"error": "no toolbridge:quote-lines mark within 20000 ms"}))
                .unwrap_err();
        assert!(error.to_string().contains("within 20000 ms"), "{error}");
        let mut empty = page(650.0, 400.0, 1);
        empty["rows"] = json!(0);
        assert!(
            parse_sample(empty)
                .unwrap_err()
                .to_string()
                .contains("no line rows")
        );
        assert!(parse_sample(json!({"linesMs": "soon"})).is_err());
        let mut unmeasured = page(650.0, 400.0, 1);
        unmeasured["init"] = Value::Null;
        let why = parse_sample(unmeasured).unwrap().phases().unwrap_err();
        assert!(why.contains(INIT_MEASURE), "{why}");
    }

    #[test]
    fn the_visits_are_medians_against_their_goals() {
        let mut figures = cold_load();
        assert!((figures.first.median_ms - 650.0).abs() < 1e-9);
        assert_eq!(figures.first.samples, 3);
        assert_eq!(figures.first.wasm_transfer_bytes, 260_205);
        assert!((figures.first.phases.app - 190.0).abs() < 1e-9);
        assert!((figures.repeat.phases.app - 40.0).abs() < 1e-9);
        assert!(!figures.first_within_goal());
        assert!((figures.repeat.median_ms - 140.0).abs() < 1e-9);
        assert!(figures.repeat_within_goal());
        let lines = figures.lines();
        assert_eq!(
            lines[0],
            "bench: the app's cold load, navigation to the quote editor showing Q-1001's 2 lines \
             (demo data): first visit (a fresh profile) median 650.0 ms of 3 (goal < 500 ms) \
             OVER; repeat (warm HTTP cache, compiled code cached) median 140.0 ms of 3 (goal < \
             150 ms) ok"
        );
        assert!(
            lines[1].contains("the host module's init() 60.0 (the wasm's fetch 35.0, 260205 bytes"),
            "{}",
            lines[1]
        );
        assert!(
            lines[3].starts_with(
                "bench: the host module's wasm: Content-Type application/wasm, requested by \
                 fetch, compiled streaming: WebAssembly.instantiateStreaming; the second visit"
            ),
            "{}",
            lines[3]
        );
        let json = serde_json::to_value(figures.json()).unwrap();
        assert_eq!(json["first_visit"]["within_goal"], false);
        assert_eq!(json["first_visit"]["goal_below_ms"].as_f64(), Some(500.0));
        assert_eq!(json["repeat"]["within_goal"], true);
        assert_eq!(json["second_visit_ms"].as_f64(), Some(190.0));
        assert_eq!(json["streaming_compile"], true);
        assert_eq!(
            json["repeat"]["phases_median_ms"]["host_fetch"].as_f64(),
            Some(35.0)
        );

        figures.streaming.instantiate_calls = 1;
        assert!(!figures.streaming.streamed());
        assert!(figures.lines()[3].contains("NOT streaming"));
    }

    #[test]
    fn a_devtools_command_goes_to_chromedriver_s_cdp_endpoint() {
        let command = Devtools {
            cmd: "Page.addScriptToEvaluateOnNewDocument",
            params: json!({"source": "1"}),
        };
        let base = url::Url::parse("http://127.0.0.1:9515").unwrap();
        let endpoint = command.endpoint(&base, Some("abc")).unwrap();
        assert_eq!(
            endpoint.as_str(),
            "http://127.0.0.1:9515/session/abc/goog/cdp/execute"
        );
        let (method, body) = command.method_and_body(&endpoint);
        assert_eq!(method, http::Method::POST);
        let body: Value = serde_json::from_str(&body.unwrap()).unwrap();
        assert_eq!(
            body,
            json!({"cmd": "Page.addScriptToEvaluateOnNewDocument", "params": {"source": "1"}})
        );
    }

    #[test]
    fn a_folder_s_bytes_are_summed_below_it() {
        let dir = std::env::temp_dir().join(format!("toolbridge-bench-{}", std::process::id()));
        let inner = dir.join("index-dir");
        fs_err::create_dir_all(&inner).unwrap();
        fs_err::write(dir.join("a_0"), [0; 100]).unwrap();
        fs_err::write(inner.join("the-real-index"), [0; 48]).unwrap();
        assert_eq!(folder_bytes(&dir), 148);
        fs_err::remove_dir_all(&dir).unwrap();
        assert_eq!(folder_bytes(&dir), 0);
    }
}
