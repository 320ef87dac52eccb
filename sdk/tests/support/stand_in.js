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
  // In view, so that the browser runs the frame's animation frames.
  frame.style.cssText = "position:fixed;top:0;left:0;border:0;width:300px;height:150px;background:#fff";
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

// The extension methods, which a host of 2.1.0 does not know.
const EXTENSION_METHODS = ["quotes.getOpen", "settings.get", "ui.toast", "ui.confirm", "ui.openQuote", "fetch", "auth.getToken", "connectivity.get"];

// The install settings the stand-in answers settings.get with.
const SETTINGS = { wastePercent: 12, region: "North", showCost: false };

// What a fetch request came as, for the echo: its body's kind, and bytes as numbers.
function received(request) {
  const { url, method, headers, body } = request;
  let sent = body;
  if (body instanceof Uint8Array) sent = { bytes: Array.from(body) };
  else if (body !== null && typeof body !== "string") sent = { other: Object.prototype.toString.call(body) };
  return { url, method, headers, body: sent };
}

// Answers `fetch` as the host does, by the URL's path: an echo of the request as JSON by
// default; `/binary` 300 bytes, `/text` text, `/204`, `/404` and `/101` those statuses,
// `/timeout` the host's TIMEOUT error, `/late` an echo after 600 ms, `/never` nothing.
function answerFetch(id, request, port) {
  const path = new URL(request.url).pathname;
  const reply = (status, headers, body) => port.postMessage({ jsonrpc: "2.0", id, result: { status, headers, body } });
  const encode = (text) => new TextEncoder().encode(text);
  switch (path) {
    case "/binary":
      return reply(200, [["content-type", "application/octet-stream"]], Uint8Array.from({ length: 300 }, (_, i) => i % 256));
    case "/text":
      return reply(200, [["content-type", "text/plain; charset=utf-8"]], encode("grüße"));
    case "/204":
    case "/101":
      return reply(Number(path.slice(1)), [], new Uint8Array(0));
    case "/404":
      return reply(404, [["content-type", "text/plain"]], encode("no such price"));
    case "/timeout":
      return port.postMessage(rpcError(id, -32008, "https://api.test did not answer within 15 s", { code: "TIMEOUT" }));
    case "/never":
      return undefined;
    case "/late":
      return setTimeout(() => reply(200, [], encode("{}")), 600);
    default:
      return reply(200, [["content-type", "application/json"], ["x-echo", "yes"]], encode(JSON.stringify(received(request))));
  }
}

// Answers one request; `state` holds what a scenario needs across calls.
function answer(request, port, state) {
  const { id, method, params } = request;
  if (!("id" in request)) {
    // What the tool's frame refused, as bridge.js reports it, and the
    // page's height for auto-resize: notifications, never answered.
    if (method === "sdk.blocked") state.blocked.push(params);
    if (method === "ui.resize") state.resized(params.height);
    return;
  }
  const reply = (result) => port.postMessage({ jsonrpc: "2.0", id, result });
  // A call that asks for it is answered after a `context.changed` with what it names.
  if (params && params.sendContextChanged) {
    port.postMessage({ jsonrpc: "2.0", method: "context.changed", params: params.sendContextChanged });
  }
  // A call that asks for it is answered with the JSON-RPC error it names: `{code, message, data?}`.
  if (params && params.failWith) {
    const { code, message, data } = params.failWith;
    return port.postMessage(rpcError(id, code, message, data));
  }
  if (EXTENSION_METHODS.includes(method)) {
    state.requests.push({ method, params: method === "fetch" ? params.map(received) : params, hasParams: "params" in request });
  }
  if (!state.capabilities && EXTENSION_METHODS.includes(method)) {
    // What an older host answers.
    return port.postMessage(rpcError(id, -32601, `unknown method \`${method}\``, { code: "METHOD_NOT_FOUND" }));
  }
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
      // A quoting extension hears of every change to the open quote, its
      // own included, before its call is answered.
      state.changes += 1;
      port.postMessage({ jsonrpc: "2.0", method: "quote.changed", params: { kind: "linesAdded", quote: { id: "q-1", seq: state.changes } } });
      // As the host does from the protocol's rules: a batch that used the
      // deprecated productId brings the notice bridge.js shows, every time.
      if (Array.isArray(params) && params.some((line) => line && line.productId != null)) {
        port.postMessage({ jsonrpc: "2.0", method: "bridge.deprecated", params: { message: "toolbridge: `productId` on quotes.addLines lines is deprecated; send `linkedItemId` with `lineType: \"product\"` instead. (Shown once.)" } });
      }
      return reply(null);
    case "settings.get":
      return reply(SETTINGS);
    case "connectivity.get":
      return reply({ online: state.online });
    case "auth.getToken": {
      // A new token each time it is asked, living `tokenLifetime` seconds (300 by default).
      state.tokens += 1;
      const lifetime = state.tokenLifetime ?? 300;
      return reply({ token: `token-${state.tokens}`, expiresAt: Math.floor(Date.now() / 1000) + lifetime, expiresIn: lifetime });
    }
    case "fetch":
      return answerFetch(id, params[0], port);
    case "ui.confirm":
    case "ui.openQuote":
      // These wait for the user: here, `answerAfterMs` (confirm answers
      // yes, openQuote "stayed").
      setTimeout(() => reply(method === "ui.confirm"), state.answerAfterMs || 0);
      return;
    default:
      // An echo, with whether `params` was sent, and the heights received
      // so far (how the auto-resize scenarios read what the host saw,
      // in order with the notifications on the port).
      return reply({ method, params, hasParams: "params" in request, resizes: state.resizes.slice() });
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
/// a frame that forges welcomes and notifications), `query` (extra query
/// parameters), `page` (another tool page than tool.html), `capabilities`
/// (the welcome's list; without it the welcome is an older host's, which
/// has no such key and answers extension methods with METHOD_NOT_FOUND),
/// `autoResize` (`{min, max}`: the frame starts at `min` px high and each
/// `ui.resize` sets it to the height, within the bounds), `answerAfterMs`
/// (when ui.confirm and ui.openQuote answer), `tokenLifetime` (the seconds each
/// token `auth.getToken` answers lives), `online` (what `connectivity.get`
/// answers; default true). The report carries the hellos
/// counted, the `sdk.blocked` reports, the `ui.resize` heights and the
/// extension calls received, and the frame's height.
export async function runScenario(kind, scenario, options = {}) {
  await requireBuilt();
  return new Promise((resolve, reject) => {
    const state = {
      held: [], expect: options.expect, hellos: 0, blocked: [], changes: 0, resizes: [], requests: [],
      capabilities: options.capabilities, answerAfterMs: options.answerAfterMs,
      tokens: 0, tokenLifetime: options.tokenLifetime, online: options.online ?? true,
      resized(height) {
        state.resizes.push(height);
        const bounds = options.autoResize;
        if (bounds) frame.style.height = `${Math.min(Math.max(Math.ceil(height), bounds.min), bounds.max)}px`;
      },
    };
    // `app`: this page's origin, the app's origin as far as the tool knows.
    const query = { scenario, app: location.origin, ...(options.query || {}) };
    const frame = mount(kind, options.page || TOOL_PAGE, query);
    if (options.autoResize) frame.style.height = `${options.autoResize.min}px`;
    const sibling = options.sibling ? mount(kind === "sandboxed" ? "same-origin" : kind, SIBLING_PAGE, {}) : null;
    let welcomed = false;
    let port = null;
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
        finish(null, { ...data.toolbridgeTest, hellos: state.hellos, blocked: state.blocked, resizes: state.resizes, requests: state.requests, frameHeight: frame.getBoundingClientRect().height });
        return;
      }
      if (data && data.toolbridgeTestSend && port) {
        // Notifications the tool page asks the host to send it.
        for (const notification of data.toolbridgeTestSend) port.postMessage(notification);
        return;
      }
      if (!data || data.toolbridge !== "hello" || event.origin !== expectedOrigin(kind)) return;
      state.hellos += 1;
      if (options.silent || welcomed) return;
      welcomed = true;
      const channel = new MessageChannel();
      port = channel.port1;
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
      const toolType = options.toolType || "quoting_extension";
      const welcomeMessage = { toolbridge: "welcome", protocol: 1, toolType, methods: methodsFor(toolType) };
      if (options.capabilities) welcomeMessage.capabilities = options.capabilities;
      if (options.theme) welcomeMessage.theme = options.theme;
      // A statement, not the arrow's value: JavaScriptCore has proper tail calls, and a
      // postMessage in tail position (`() => frame.contentWindow.postMessage(...)`, run by a
      // timer) leaves no frame of this page on the stack, so WebKit names the frame's own
      // window as the welcome's `source` when it is same-origin, and bridge.js rightly takes
      // it for a welcome the page forged itself. The host module posts from wasm, never so.
      const welcome = () => {
        frame.contentWindow.postMessage(
          welcomeMessage,
          kind === "sandboxed" ? "*" : expectedOrigin(kind),
          [channel.port2],
        );
      };
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
