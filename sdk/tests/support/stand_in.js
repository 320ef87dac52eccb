// A stand-in for the host page, for the SDK's browser tests: it mounts a tool
// page (which loads the real built bridge.js), answers the handshake the way
// the host does, replies to calls on the private port, and returns what the
// tool page reports. The Rust tests in tests/browser.rs make the assertions.

const TOOL_PAGE = "/tests/pages/tool.html";
const SIBLING_PAGE = "/tests/pages/sibling.html";

// Origins: the test page is served from 127.0.0.1; "localhost" on the same
// port is a second, real origin.
function otherOrigin() {
  const url = new URL(location.href);
  url.hostname = url.hostname === "localhost" ? "127.0.0.1" : "localhost";
  return url.origin;
}

function frameUrl(kind, page, query) {
  const base = kind === "cross-origin" ? otherOrigin() : location.origin;
  return `${base}${page}?${new URLSearchParams(query)}`;
}

function expectedOrigin(kind) {
  if (kind === "sandboxed") return "null";
  return kind === "cross-origin" ? otherOrigin() : location.origin;
}

function mount(kind, page, query) {
  const frame = document.createElement("iframe");
  if (kind === "sandboxed") frame.setAttribute("sandbox", "allow-scripts");
  frame.src = frameUrl(kind, page, query);
  document.body.appendChild(frame);
  return frame;
}

const CONTEXT = {
  userName: "Test User",
  userEmail: "test@example.test",
  userRole: "office",
  tenantName: "Harbour Flooring",
  tenantId: "t-1",
  cultureCode: "en-NZ",
};

function rpcError(id, code, message, data) {
  return { jsonrpc: "2.0", id, error: { code, message, data } };
}

// Answers one request; `state` holds what a scenario needs across calls.
function answer(request, port, state) {
  const { id, method, params } = request;
  // What the tool's frame refused, as bridge.js reports it: a notification,
  // never answered.
  if (method === "sdk.blocked" && !("id" in request)) {
    state.blocked.push(params);
    return;
  }
  const reply = (result) => port.postMessage({ jsonrpc: "2.0", id, result });
  switch (method) {
    case "context.get":
      return reply(CONTEXT);
    case "products.list": {
      // Replies go out in reverse order once `expect` requests are in, so
      // each call must be matched to its own reply by id.
      state.held.push({ id, page: params && params.page });
      if (state.held.length >= (state.expect || 1)) {
        for (const held of state.held.reverse()) {
          port.postMessage({ jsonrpc: "2.0", id: held.id, result: { items: [{ page: held.page }], totalCount: state.expect || 1, page: held.page, pageSize: 1 } });
        }
        state.held = [];
      }
      return;
    }
    case "quotes.create":
      return port.postMessage(rpcError(id, -32602, "lines[0].qty: must be greater than 0 (got 0)", {
        code: "INVALID_PARAMS",
        details: [{ path: "lines[0].qty", message: "must be greater than 0 (got 0)" }],
      }));
    case "quotes.list":
      return port.postMessage(rpcError(id, -32005, "too many requests; retry in 7 s", { code: "RATE_LIMITED", retryAfter: 7 }));
    case "customers.list":
      // An error object with only the JSON-RPC number: the SDK maps it.
      return port.postMessage(rpcError(id, -32601, "unknown method `customers.list`"));
    case "jobs.list":
      return; // never answered: the SDK's deadline must fire
    case "quotes.addLines":
      return reply(null);
    default:
      return reply({ method, params });
  }
}

let built;

/// Fails with the fix when the SDK under test has not been built.
function requireBuilt() {
  built = built || fetch("/dist/bridge.js", { method: "HEAD" }).then((response) => {
    if (!response.ok) {
      throw new Error("sdk/dist/bridge.js is missing: build it with `cargo xtask build` (`cargo xtask setup` and `cargo xtask test` do too)");
    }
  });
  return built;
}

/// Mounts a tool page running `scenario` in a frame of `kind` and resolves
/// with its report. Options: `silent` (never welcome), `welcomeDelayMs`,
/// `toolType`, `expect` (products.list calls to hold), `sibling` (also mount
/// a frame that forges welcomes), `query` (extra query parameters). The
/// report carries the hellos counted and the `sdk.blocked` reports received.
export async function runScenario(kind, scenario, options = {}) {
  await requireBuilt();
  return new Promise((resolve, reject) => {
    const state = { held: [], expect: options.expect, hellos: 0, blocked: [] };
    // `app`: this page's origin, the app's origin as far as the tool knows.
    const query = { scenario, app: location.origin, ...(options.query || {}) };
    const frame = mount(kind, TOOL_PAGE, query);
    const sibling = options.sibling ? mount(kind === "sandboxed" ? "same-origin" : kind, SIBLING_PAGE, {}) : null;
    let welcomed = false;
    const timer = setTimeout(() => finish(new Error(`no report from scenario ${scenario} in a ${kind} frame`)), 30000);

    function finish(error, report) {
      clearTimeout(timer);
      window.removeEventListener("message", onMessage);
      frame.remove();
      if (sibling) sibling.remove();
      if (error) reject(error); else resolve(report);
    }

    function onMessage(event) {
      if (event.source !== frame.contentWindow) return;
      const data = event.data;
      if (data && data.toolbridgeTest) {
        finish(null, { ...data.toolbridgeTest, hellos: state.hellos, blocked: state.blocked });
        return;
      }
      if (!data || data.toolbridge !== "hello" || event.origin !== expectedOrigin(kind)) return;
      state.hellos += 1;
      if (options.silent || welcomed) return;
      welcomed = true;
      const channel = new MessageChannel();
      channel.port1.onmessage = (message) => answer(message.data, channel.port1, state);
      // Noise the SDK must ignore without throwing: replies to ids it never
      // sent, things that are not replies, and messages on the window that
      // are not a welcome (or a welcome without a port).
      for (const junk of [{ jsonrpc: "2.0", id: 987654, result: 1 }, { jsonrpc: "2.0", id: "x", error: {} }, "text", null, 42]) {
        channel.port1.postMessage(junk);
      }
      for (const junk of ["text", { toolbridge: "welcome", protocol: 1 }, { toolbridge: "welcome", protocol: 2 }, { type: "webpackOk" }]) {
        frame.contentWindow.postMessage(junk, "*");
      }
      const welcome = () => frame.contentWindow.postMessage(
        { toolbridge: "welcome", protocol: 1, toolType: options.toolType || "quoting_extension", methods: methodsFor(options.toolType || "quoting_extension") },
        kind === "sandboxed" ? "*" : expectedOrigin(kind),
        [channel.port2],
      );
      if (options.welcomeDelayMs) setTimeout(welcome, options.welcomeDelayMs); else welcome();
    }
    window.addEventListener("message", onMessage);
  });
}

function methodsFor(toolType) {
  const all = ["context.get", "customers.list", "products.list", "taskTemplates.list", "costItems.list", "jobs.list", "quotes.list", "quotes.create", "quotes.addLines"];
  return toolType === "standalone" ? all.filter((m) => m !== "quotes.addLines") : all;
}

/// Loads bridge.js into this (top-level) test page itself, where there is no
/// parent to answer, and reports what a first call does.
export async function runUnframed() {
  await requireBuilt();
  if (!window.bridge) {
    await new Promise((resolve, reject) => {
      const script = document.createElement("script");
      script.src = "/dist/bridge.js";
      script.onload = resolve;
      script.onerror = () => reject(new Error("dist/bridge.js did not load: run `cargo xtask build`"));
      document.head.appendChild(script);
    });
  }
  const started = performance.now();
  try {
    await window.bridge.context.get();
    return { settled: "resolved" };
  } catch (error) {
    return { settled: "rejected", code: error.code, message: error.message, ms: performance.now() - started };
  }
}
