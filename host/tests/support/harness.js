// The test page's side of the host's browser tests: tool frames on a second
// origin, commands to them, the session with the real toolbridge server, and
// a few facts about the page (requests made, frames present). The Rust tests
// in tests/browser.rs make the assertions.

const TOOL_PAGE = "/files/pages/tool.html";

// Room for every request of the run, so that counting them stays exact.
performance.setResourceTimingBufferSize(100000);

// Where the tools' pages come from: the fault server (tests/src/fault_server.rs, which serves
// tests/pages/ as /files/pages/), under "localhost": an origin of its own beside this page's
// (127.0.0.1) and the fault server's (127.0.0.1 on its port). Not this page's own server
// (wasm-bindgen-test-runner's, on tiny_http): its pool of threads can leave a new connection
// waiting behind the browser's idle keep-alive ones, and a run's first tool page once waited
// 60 s for its first byte (Chromium's net log).
let toolServer = null;

// Tells the harness the fault server's address (`http://127.0.0.1:P`).
export function useToolServer(base) {
  const url = new URL(base);
  url.hostname = "localhost";
  toolServer = url.origin;
}

// The tools' origin: `http://localhost:P`, P the fault server's port.
export function toolOrigin() {
  if (toolServer === null) throw new Error("useToolServer(the fault server's address) first");
  return toolServer;
}

export function pageOrigin() {
  return location.origin;
}

// The entry path of the test tool with these query parameters.
export function toolEntry(query) {
  return `${TOOL_PAGE}?${new URLSearchParams(query)}`;
}

export function toolPageAt(origin, query) {
  return `${origin}${toolEntry(query)}`;
}

// Resolves when the tool page in `frame` has loaded its script (and so
// listens for commands).
export function loaded(frame, timeoutMs) {
  return new Promise((resolve, reject) => {
    const timer = setTimeout(() => {
      removeEventListener("message", onMessage);
      reject(new Error(`the tool page did not load within ${timeoutMs} ms`));
    }, timeoutMs);
    function onMessage(event) {
      const data = event.data && event.data.toolbridgeTest;
      if (event.source !== frame.contentWindow || !data || !data.loaded) return;
      clearTimeout(timer);
      removeEventListener("message", onMessage);
      resolve();
    }
    addEventListener("message", onMessage);
  });
}

let nextId = 1;

// Sends a command to the tool page in `frame`; resolves with its answer.
export function command(frame, body, timeoutMs) {
  const id = nextId++;
  return new Promise((resolve, reject) => {
    const timer = setTimeout(() => {
      removeEventListener("message", onMessage);
      reject(new Error(`no answer to ${JSON.stringify(body).slice(0, 200)} within ${timeoutMs} ms`));
    }, timeoutMs);
    function onMessage(event) {
      const data = event.data && event.data.toolbridgeTest;
      if (event.source !== frame.contentWindow || !data || data.id !== id) return;
      clearTimeout(timer);
      removeEventListener("message", onMessage);
      resolve(data);
    }
    addEventListener("message", onMessage);
    frame.contentWindow.postMessage({ toolbridgeTest: { id, ...body } }, "*");
  });
}

// Gives the tool page in `frame` a port on which this page echoes every
// message with a context-shaped answer: the floor of a round trip.
export function serveEcho(frame) {
  const channel = new MessageChannel();
  const context = { userName: "Echo", userEmail: "echo@example.test", userRole: "office", tenantName: "Echo", tenantId: "t", cultureCode: "en-NZ" };
  channel.port1.onmessage = (event) => channel.port1.postMessage({ jsonrpc: "2.0", id: event.data.id, result: context });
  frame.contentWindow.postMessage({ toolbridgeTest: { echoPort: true } }, "*", [channel.port2]);
}

// Every tool frame of the run sits at the top left of the viewport, each new one over the
// ones before: none takes room in the page. A test that panics aborts without unmounting its
// tools (their Drop never runs), and frames left below would push later ones out of the
// viewport, where Chromium throttles rendering of cross-origin frames (no animation frames, no
// ResizeObserver callbacks) and auto-resize would never report a height.
const IN_VIEW = "position:fixed;top:0;left:0";

// A frame this page creates itself: never mounted by the host.
export function unmountedFrame(src) {
  const frame = document.createElement("iframe");
  frame.setAttribute("sandbox", "allow-scripts allow-same-origin");
  frame.style.cssText = IN_VIEW;
  frame.src = src;
  document.body.appendChild(frame);
  return frame;
}

// Where a test mounts a tool (see IN_VIEW).
export function container() {
  const div = document.createElement("div");
  div.style.cssText = IN_VIEW;
  document.body.appendChild(div);
  return div;
}

// Requests this page has made so far (fetches included).
export function requestCount() {
  return performance.getEntriesByType("resource").length;
}

export function requestUrls(since) {
  return performance.getEntriesByType("resource").slice(since).map((entry) => entry.name);
}

// A JSON request to the toolbridge server with the page's session, with more `headers` if given;
// answers its status, `ETag` and body.
export async function api(url, method, body, headers) {
  const init = { method, credentials: "include", headers: { Accept: "application/json", ...headers } };
  if (body !== undefined) {
    init.headers["Content-Type"] = "application/json";
    init.body = JSON.stringify(body);
  }
  const response = await fetch(url, init);
  const text = await response.text();
  return { status: response.status, etag: response.headers.get("etag"), body: text ? JSON.parse(text) : null };
}

// A page backend (the host's `backend` option) that fetches as the host
// would, but past the browser's HTTP cache: it neither answers from it nor
// stores in it, so every answer comes over the network.
export function uncachedBackend() {
  return { fetch: (request) => fetch(request, { cache: "no-store" }) };
}

// What the browser reports of the last request to `url` that started at or
// after `since` (the page's clock): its status and sizes, or null.
export function lastResource(url, since) {
  const entry = performance.getEntriesByName(url).filter((e) => e.startTime >= since).pop();
  if (!entry) return null;
  return {
    responseStatus: entry.responseStatus ?? 0,
    transferSize: entry.transferSize,
    encodedBodySize: entry.encodedBodySize,
    decodedBodySize: entry.decodedBodySize,
  };
}
