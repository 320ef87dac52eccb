// @toolbridge/sdk/testing: a test host for a tool's own tests, in a browser page.
//
// It is the platform's real host module (the one the app runs) answering the tool through an
// in-memory backend that holds fixtures and keeps the platform's rules: validation, paging,
// addLines merging and error codes are exactly the platform's. The tool's page is mounted in a
// frame on the test page's own origin, so a test can drive its DOM and read what it asked for.

import initHost, { Host } from "./host/toolbridge_host.js";
import initMemory, { MemoryBackend } from "./memory/toolbridge_testkit.js";

let loading;

/** Loads both WebAssembly modules, once. */
function load() {
  loading ??= Promise.all([initHost(), initMemory()]);
  return loading;
}

// The host's API base. Nothing is fetched from it: every request goes to the memory backend.
const API_BASE = "/toolbridge-test-backend/api/v1";

const DEFAULT_TIMEOUT_MS = 5000;

// The host's context beyond bridge 2.1.0, as the app passes it on from the signed-in user's.
const CONTEXT_FIELDS = ["timeZone", "currency", "locale", "units", "theme"];

// Test hosts not yet destroyed, which runTests destroys after each test.
const live = new Set();

// Whether the test page has its network: `setOnline(false)` takes it away from every test host
// (their requests fail as a dropped connection does) until `setOnline(true)`; runTests gives it
// back after each test.
let networkUp = true;

/** What a request gets while the test has taken the network away. */
function noNetwork() {
  return Promise.reject(new TypeError("the test took the network away (setOnline(false))"));
}

/** The page's network goes or comes back, as the browser tells pages: `offline` or `online`. */
function setNetwork(up) {
  networkUp = up;
  window.dispatchEvent(new Event(up ? "online" : "offline"));
}

/**
 * Resolves with `check()`'s value once it is truthy (checked every 10 ms; `check` may be async);
 * rejects once `timeout` ms have passed, naming `message`.
 */
export async function waitFor(check, { timeout = DEFAULT_TIMEOUT_MS, message } = {}) {
  const deadline = performance.now() + timeout;
  let last;
  for (;;) {
    try {
      const value = await check();
      if (value) {
        return value;
      }
    } catch (error) {
      last = error;
    }
    if (performance.now() > deadline) {
      const what = message ?? `${check}`;
      const why = last ? ` (last: ${last.message ?? last})` : "";
      throw new Error(`waitFor: ${what} did not happen within ${timeout} ms${why}`);
    }
    await new Promise((resolve) => setTimeout(resolve, 10));
  }
}

/** Types `value` into a field of the tool's page: sets it, then fires `input` and `change`. */
export function fill(element, value) {
  const view = element.ownerDocument.defaultView;
  if (element.type === "checkbox" || element.type === "radio") {
    element.checked = Boolean(value);
  } else {
    element.value = String(value);
  }
  element.dispatchEvent(new view.Event("input", { bubbles: true }));
  element.dispatchEvent(new view.Event("change", { bubbles: true }));
}

/** Clicks an element of the tool's page, as a user would. */
export function click(element) {
  element.click();
}

/** Throws `message` unless `condition` holds. */
export function assert(condition, message = "assertion failed") {
  if (!condition) {
    throw new Error(message);
  }
}

/** Throws unless `actual` and `expected` are equal as JSON (objects in any key order). */
export function assertEqual(actual, expected, message = "values differ") {
  const a = canonical(actual);
  const b = canonical(expected);
  if (a !== b) {
    throw new Error(`${message}\n  expected: ${b}\n  actual:   ${a}`);
  }
}

/** An error's message, with its stack where the browser gives one. */
function describe(error) {
  const text = String(error);
  const stack = error && typeof error.stack === "string" ? error.stack : "";
  return stack.includes(text) ? stack : `${text}${stack ? `\n${stack}` : ""}`;
}

function canonical(value) {
  return JSON.stringify(value, (_, item) =>
    item && typeof item === "object" && !Array.isArray(item)
      ? Object.fromEntries(Object.entries(item).sort(([x], [y]) => (x < y ? -1 : x > y ? 1 : 0)))
      : item);
}

/**
 * A test host holding `fixtures` (see `TestFixtures`), with the quote they name in `openQuote`
 * open in its editor. Throws an Error naming every mistake in the fixtures by its path.
 */
export async function createTestHost(fixtures = {}, options = {}) {
  await load();
  const backend = new MemoryBackend(fixtures, API_BASE);
  const hostOptions = {
    apiBase: API_BASE,
    // The memory backend, as long as the page has its network.
    backend: { fetch: (request) => (networkUp ? backend.fetch(request) : noNetwork()) },
    debug: Boolean(options.debug),
    requestTimeoutMs: options.requestTimeoutMs ?? DEFAULT_TIMEOUT_MS,
  };
  if (options.connectivityCheckMs !== undefined) hostOptions.connectivityCheckMs = options.connectivityCheckMs;
  const host = new Host(hostOptions);
  const testHost = new TestHost(host, backend, options);
  live.add(testHost);
  // As the app does before it mounts a tool: the user's context goes to the host, so that tools
  // are offered `context.changed` and take the theme.
  const user = backend.user;
  host.setContext(Object.fromEntries(CONTEXT_FIELDS.filter((field) => typeof user[field] === "string")
    .map((field) => [field, user[field]])));
  if (backend.openQuoteId) {
    await host.openQuote(backend.openQuoteId);
  }
  return testHost;
}

/** The page, the real host module and the memory backend, with what the tool asked of them. */
class TestHost {
  #confirmAnswers = [];
  #defaultConfirm;
  #navigate;
  #container;
  #tools = [];

  constructor(host, backend, options) {
    /** The host module's `Host`, for what this class does not wrap. */
    this.host = host;
    /** The memory backend: `quotes`, `customers`, `requests`, `signOut()`, `jwks()`,
     * `setNow(seconds)`, `issueToken(slug)`, `onFetch(handler)`. */
    this.backend = backend;
    /** Every `ui.toast` the page was asked to show. */
    this.toasts = [];
    /** Every `ui.confirm` the page was asked, with the `answer` it gave. */
    this.confirms = [];
    /** Every `ui.openQuote` the page was asked. */
    this.navigations = [];
    /** Every bridge call answered: `{tool, method, durationMs, outcome, message?}`. */
    this.calls = [];
    /** Everything a tool's frame refused, with the advice for its author. */
    this.blocked = [];
    /** Every change to the open quote, as `onChange` listeners hear it. */
    this.changes = [];
    this.#defaultConfirm = Boolean(options.confirm);
    this.#navigate = options.navigate ?? true;
    this.#container = options.container ?? null;

    host.onToast((request) => {
      this.toasts.push({ ...request });
    });
    host.onConfirm(({ signal, ...request }) => {
      const answer = this.#confirmAnswers.length > 0 ? this.#confirmAnswers.shift() : this.#defaultConfirm;
      this.confirms.push({ ...request, answer });
      return answer;
    });
    host.onNavigate(async (request) => {
      const went = this.#navigate && !request.unsaved;
      this.navigations.push({ ...request, went });
      if (went) {
        await host.openQuote(request.quoteId);
      }
      return went;
    });
    host.onCall((record) => {
      this.calls.push({ ...record });
    });
    host.onBlocked((record) => {
      this.blocked.push({ ...record });
    });
    host.onChange((_, change) => {
      this.changes.push(change);
    });
  }

  /** The quote open in the editor, with line amounts and totals; `null` when none is open. */
  get quote() {
    return this.host.quote;
  }

  /** Every quote the backend holds (those the tool created too), in the order they were made. */
  get quotes() {
    return this.backend.quotes;
  }

  /** The calls made to `method` (e.g. "quotes.addLines"). */
  callsTo(method) {
    return this.calls.filter((call) => call.method === method);
  }

  /** The answers the next `ui.confirm` questions get, in order (then the default). */
  answerConfirm(...answers) {
    this.#confirmAnswers.push(...answers.map(Boolean));
  }

  /** Opens a quote the backend holds, by id or reference, in the editor. */
  async openQuote(idOrRef) {
    const quote = this.backend.quotes.find((q) => q.id === idOrRef || q.ref === idOrRef);
    if (!quote) {
      throw new Error(`openQuote: no quote has the id or reference ${JSON.stringify(idOrRef)}`);
    }
    return this.host.openQuote(quote.id);
  }

  /**
   * Mounts a tool's page in a frame: `{entry, type, settings?, autoResize?, slug?, title?,
   * identity?, fetch?}`. `entry` is the page's URL on this page's origin; `type` its manifest
   * type; `settings` its install settings (default: the fixtures' `settings`); `identity` whether
   * it is offered `auth.getToken` (default: the fixtures' manifest's `permissions.identity`);
   * `fetch` whether it is offered `fetch` (default: whether that manifest lists origins in
   * `permissions.connect`). Wait for `tool.ready()` before driving it.
   */
  mount({ entry, type, settings, autoResize, slug = "tool", title, container, identity, fetch } = {}) {
    if (typeof entry !== "string") {
      throw new TypeError("mount: give the tool page's URL as `entry`, e.g. \"/my-tool/index.html\"");
    }
    const url = new URL(entry, location.href);
    if (url.origin !== location.origin) {
      throw new TypeError(`mount: entry ${entry} must be on the test page's origin (${location.origin})`);
    }
    const given = container ?? this.#container;
    const place = given ?? document.body.appendChild(document.createElement("div"));
    const options = { slug, origin: location.origin, type, entry: `${url.pathname}${url.search}` };
    if (title !== undefined) options.title = title;
    if (autoResize !== undefined) options.autoResize = autoResize;
    const permissions = this.backend.permissions;
    if (identity ?? permissions?.identity ?? false) options.identity = true;
    if (fetch ?? (permissions?.connect.length ?? 0) > 0) options.fetch = true;
    const values = settings ?? this.backend.settings;
    if (values !== null && values !== undefined) options.settings = values;
    // A container made here goes with the tool.
    const tool = new TestTool(this, this.host.mount(place, options), given ? null : place);
    this.#tools.push(tool);
    return tool;
  }

  /**
   * An admin saves `values` as the install settings of tool `slug` (default "tool"): with the
   * fixtures' `manifest`, they are checked against its declarations (an Error names each refused
   * key) and laid over its defaults. Every mounted frame of the tool hears `settings.changed`.
   * Returns the settings the tool now sees.
   */
  setSettings(values, slug = "tool") {
    const settings = this.backend.installSettings(values);
    this.host.setToolSettings(slug, settings);
    return settings;
  }

  /**
   * Changes the context the app gives its tools, as when an admin or the user changes the time
   * zone, currency, locale, units or theme: `values` holds what changes. Every mounted tool that
   * was offered `context.changed` hears what did change; `context.get()` answers the new values.
   */
  setContext(values) {
    this.host.setContext(values);
  }

  /**
   * Whether the app's server can be reached, as the host knows it (what tools read with
   * `bridge.connectivity.get()`).
   */
  get online() {
    return this.host.online;
  }

  /**
   * Takes the network away (`false`) or gives it back (`true`), as when the device loses its
   * connection: the test page's window gets `offline` or `online`, and while it is away every
   * request the test hosts make fails as a dropped connection does. The host goes offline at
   * once: tools hear `connectivity.changed`, their calls that need the server fail with
   * `OFFLINE` without being sent, and `addLines` keeps working. Back online, they hear it again.
   * `runTests` gives the network back after each test.
   */
  setOnline(online) {
    if (typeof online !== "boolean") {
      throw new TypeError(`setOnline: give true or false, not ${JSON.stringify(online)}`);
    }
    setNetwork(online);
  }

  /**
   * Registers the handler that answers the tools' `bridge.fetch` in place of the outside server
   * (`null` removes it): see `MemoryBackend.onFetch`. It gets a standard `Request`, checked and
   * its placeholders replaced as the platform's server replaces them, and `{tool}`; it answers
   * a `Response` or a promise of one.
   */
  onFetch(handler) {
    this.backend.onFetch(handler);
  }

  /** Waits for `check()` to be truthy: see `waitFor`. */
  waitFor(check, options) {
    return waitFor(check, options);
  }

  /** Unmounts every tool and stops the host. */
  destroy() {
    for (const tool of this.#tools) {
      tool.unmount();
    }
    this.#tools = [];
    this.host.destroy();
    live.delete(this);
  }
}

/** A mounted tool page. */
class TestTool {
  #testHost;
  #mounted;
  #place;

  constructor(testHost, mounted, place) {
    this.#testHost = testHost;
    this.#mounted = mounted;
    this.#place = place;
    /** The tool's slug. */
    this.slug = mounted.slug;
    /** The tool's frame. */
    this.frame = mounted.frame;
  }

  /** The tool page's document (same origin as the test page). */
  get document() {
    return this.frame.contentDocument;
  }

  /** The tool page's window. */
  get window() {
    return this.frame.contentWindow;
  }

  /** Whether the tool's bridge has connected. */
  get connected() {
    return this.#mounted.connected;
  }

  /** The extensions the host offered this tool (empty until connected). */
  get capabilities() {
    const status = this.#testHost.host.tools().find((tool) => tool.slug === this.slug && tool.connected);
    return status ? status.capabilities : [];
  }

  /** The bridge calls this tool made. */
  get calls() {
    return this.#testHost.calls.filter((call) => call.tool === this.slug);
  }

  /** The first element of the tool's page matching `selector`; throws when there is none. */
  $(selector) {
    const element = this.document && this.document.querySelector(selector);
    if (!element) {
      throw new Error(`the tool's page has no element matching ${selector}`);
    }
    return element;
  }

  /** Resolves once the tool's bridge has connected to the host. */
  ready({ timeout = DEFAULT_TIMEOUT_MS } = {}) {
    return waitFor(() => this.connected, {
      timeout,
      message: `tool ${this.slug}'s bridge connecting (does its page load bridge.js?)`,
    });
  }

  /** Removes the frame. */
  unmount() {
    this.#mounted.unmount();
    if (this.#place) {
      this.#place.remove();
      this.#place = null;
    }
  }
}

/**
 * Runs `tests` (names to async functions) one after the other, each within `timeout` ms, and
 * destroys the test hosts each one left. Shows the outcome in the page and sets
 * `window.toolbridgeTestResults` to `[{name, ok, error?, ms}]`; resolves with it.
 */
export async function runTests(tests, { timeout = 20000 } = {}) {
  const results = [];
  const list = document.body.appendChild(document.createElement("ol"));
  list.id = "toolbridge-test-results";
  for (const [name, test] of Object.entries(tests)) {
    const started = performance.now();
    let result;
    try {
      let timer;
      const expired = new Promise((_, reject) => {
        timer = setTimeout(() => reject(new Error(`did not finish within ${timeout} ms`)), timeout);
      });
      try {
        await Promise.race([test(), expired]);
      } finally {
        clearTimeout(timer);
      }
      result = { name, ok: true };
    } catch (error) {
      result = { name, ok: false, error: describe(error) };
    }
    for (const testHost of [...live]) {
      testHost.destroy();
    }
    if (!networkUp) setNetwork(true);
    result.ms = Math.round(performance.now() - started);
    results.push(result);
    const item = list.appendChild(document.createElement("li"));
    item.dataset.outcome = result.ok ? "ok" : "failed";
    item.textContent = `${result.ok ? "ok" : "FAILED"} ${name}${result.ok ? "" : `: ${result.error}`}`;
  }
  window.toolbridgeTestResults = results;
  return results;
}
