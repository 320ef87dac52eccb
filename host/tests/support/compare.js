// The bench page's side of the side-by-side bench (`cargo xtask bench`): toolbridge (bridge.js and
// this host), Penpal, Comlink and a bare MessageChannel echo (the floor), each in a tool frame on
// the tools' origin (tests/pages/contender.html), measured in this one browser session:
// sequential round trips of a context-shaped call, 100 calls in flight, a 500-item products page,
// and the time from the script tag to the first resolved call with a fresh frame for each sample.
//
// Every contender answers from the same data: the small call from an object in memory (the host
// keeps the signed-in user after its first `GET /me`), the page with the same REST request to the
// real server (`GET /api/v1/products?page=1&pageSize=500` with the page's session) that the host
// makes for `products.list`. Penpal and Comlink are used as their documentation shows: Penpal's
// `WindowMessenger` on both sides; Comlink's `expose` and `wrap` on a MessageChannel whose port the
// bench page hands to the frame.

import { toolOrigin } from "./harness.js";

const CONTEXT = { userName: "Bench User", userEmail: "bench@example.test", userRole: "office", tenantName: "Bench", tenantId: "t", cultureCode: "en-NZ" };
const PAGE_PATH = "/files/pages/contender.html";
const SANDBOX = "allow-scripts allow-same-origin allow-forms allow-popups";
const CONTENDERS = ["echo", "toolbridge", "penpal", "comlink"];

function loadScript(src) {
  return new Promise((resolve, reject) => {
    const script = document.createElement("script");
    script.src = src;
    script.onload = resolve;
    script.onerror = () => reject(new Error(`${src} did not load`));
    document.head.appendChild(script);
  });
}

// Resolves with the first message from `frame` that `pick` returns something for.
function fromFrame(frame, pick, timeoutMs, what) {
  return new Promise((resolve, reject) => {
    const timer = setTimeout(() => {
      removeEventListener("message", onMessage);
      reject(new Error(`no ${what} within ${timeoutMs} ms`));
    }, timeoutMs);
    function onMessage(event) {
      if (event.source !== frame.contentWindow) return;
      const picked = pick(event.data, event);
      if (picked === undefined) return;
      clearTimeout(timer);
      removeEventListener("message", onMessage);
      resolve(picked);
    }
    addEventListener("message", onMessage);
  });
}

// One contender in one fresh frame: `{frame, ready, close()}`; `ready` resolves with the cold
// start once the frame's first call resolved.
function open(lib, { host, api, libs }) {
  const query = new URLSearchParams({ lib, parentOrigin: location.origin });
  if (libs[lib]) query.set("src", libs[lib]);
  const entry = `${PAGE_PATH}?${query}`;
  const fetchPage = () => fetch(`${api}/products?page=1&pageSize=500`, { credentials: "include" }).then((r) => r.json());
  const methods = { contextGet: () => CONTEXT, productsList: fetchPage };
  let frame;
  let close;
  if (lib === "toolbridge") {
    const container = document.createElement("div");
    document.body.appendChild(container);
    const mounted = host.mount(container, { slug: "bench-toolbridge", origin: toolOrigin(), type: "standalone", entry });
    frame = mounted.frame;
    close = () => { mounted.unmount(); mounted.free(); container.remove(); };
  } else {
    frame = document.createElement("iframe");
    frame.setAttribute("sandbox", SANDBOX);
    frame.src = `${toolOrigin()}${entry}`;
    document.body.appendChild(frame);
    let connection = null;
    let channel = null;
    if (lib === "penpal") {
      const messenger = new Penpal.WindowMessenger({ remoteWindow: frame.contentWindow, allowedOrigins: [toolOrigin()] });
      connection = Penpal.connect({ messenger, methods });
    } else {
      // The echo floor and Comlink: a MessageChannel, its port handed over when the frame asks.
      channel = new MessageChannel();
      if (lib === "comlink") {
        Comlink.expose(methods, channel.port1);
      } else {
        channel.port1.onmessage = async (event) => {
          const { id, method } = event.data;
          const result = method === "products.list" ? await fetchPage() : CONTEXT;
          channel.port1.postMessage({ id, result });
        };
      }
      fromFrame(frame, (data) => (data && data.benchWantsPort ? true : undefined), 20000, "port request")
        .then(() => frame.contentWindow.postMessage({ benchPort: true }, toolOrigin(), [channel.port2]))
        .catch(() => {});
    }
    close = () => {
      if (connection) connection.destroy();
      if (channel) channel.port1.close();
      frame.remove();
    };
  }
  const ready = fromFrame(frame, (data) => (data && data.benchReady) || undefined, 20000, `${lib} frame ready`)
    .then((report) => {
      if (report.error) throw new Error(`${lib}: ${report.error}`);
      return report;
    });
  return { frame, ready, close };
}

let nextCommand = 1;

function run(frame, command) {
  const id = nextCommand++;
  const reply = fromFrame(frame, (data) => (data && data.benchReply && data.benchReply.id === id ? data.benchReply : undefined), 120000, `reply to ${command.name}`);
  frame.contentWindow.postMessage({ benchCommand: { id, ...command } }, toolOrigin());
  return reply.then((answer) => {
    if (answer.error) throw new Error(`${command.name}: ${answer.error}`);
    return answer.samples;
  });
}

// Measures every contender; resolves with `{contenders: {lib: {sequentialMs, inFlightMs, pageMs,
// coldStartMs, scriptLoadMs, coldPhasesMs}}, batch, inFlight}` (`scriptLoadMs`: the part of the
// cold start until the library's script has run; `coldPhasesMs`: toolbridge's cold start by phase,
// `{fetch: [...], parse: [...], ...}` as tests/pages/contender.html cuts it, empty for the
// others). `libs`: the script each tool page loads, by contender (none for the echo), and
// `penpalParent` / `comlinkParent` for this page. `samples`: `{calls, inFlight, page, cold}`. The
// contenders take turns (each round in a rotated order), so that what the machine does meanwhile
// falls on all of them alike.
export async function compareContenders(host, api, libs, samples) {
  await loadScript(libs.penpalParent);
  await loadScript(libs.comlinkParent);
  const batch = 20;
  const inFlight = 100;
  const contenders = {};
  for (const lib of CONTENDERS) contenders[lib] = { sequentialMs: [], inFlightMs: [], pageMs: [], coldStartMs: [], scriptLoadMs: [], coldPhasesMs: {} };
  const rounds = async (count, each) => {
    for (let round = 0; round < count; round += 1) {
      for (let i = 0; i < CONTENDERS.length; i += 1) await each(CONTENDERS[(round + i) % CONTENDERS.length]);
    }
  };

  await rounds(samples.cold, async (lib) => {
    const opened = open(lib, { host, api, libs });
    try {
      const { coldMs, loadMs, phases } = await opened.ready;
      contenders[lib].coldStartMs.push(coldMs);
      contenders[lib].scriptLoadMs.push(loadMs);
      const byPhase = contenders[lib].coldPhasesMs;
      for (const [phase, ms] of Object.entries(phases || {})) (byPhase[phase] ||= []).push(ms);
    } finally {
      opened.close();
    }
  });

  const frames = {};
  try {
    for (const lib of CONTENDERS) {
      frames[lib] = open(lib, { host, api, libs });
      await frames[lib].ready;
    }
    // Samples in blocks, one block per contender per round: the first sample of each block (the
    // contender's frame coming back into play) is not kept.
    const blocks = 5;
    const block = async (lib, key, command, count) => {
      const taken = await run(frames[lib].frame, { ...command, samples: Math.ceil(count / blocks) + 1 });
      contenders[lib][key].push(...taken.slice(1));
    };
    await rounds(blocks, (lib) => block(lib, "sequentialMs", { name: "sequential", batch }, samples.calls));
    await rounds(blocks, (lib) => block(lib, "inFlightMs", { name: "inFlight", count: inFlight }, samples.inFlight));
    await rounds(blocks, (lib) => block(lib, "pageMs", { name: "page" }, samples.page));
  } finally {
    for (const opened of Object.values(frames)) opened.close();
  }
  return { contenders, batch, inFlight };
}
