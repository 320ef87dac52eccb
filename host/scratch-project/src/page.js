// A platform's own page hosting a toolbridge tool, bundled from the @toolbridge/host package by
// Vite, webpack 5, Rollup or esbuild (each build's entry, `main.js` or `main-esbuild.js`, calls
// `run`): sign in to the toolbridge server (on another origin), open a new draft quote in the
// host, and mount the flooring estimator (an example tool every demo server installs) beside it.
// The lines the tool adds show in the table as they arrive; Save writes them to the server.
//
// The server is `?server=<origin>` (default: `cargo xtask serve`'s). It must let this page's
// origin use its session: `toolbridge serve --allow-origin <this page's origin>`.

import init, { Host } from "@toolbridge/host";

const server = new URLSearchParams(window.location.search).get("server") ?? "http://localhost:8080";
/** The slug of the example tool mounted here (the flooring estimator); `GET /api/tools` says
 * where it is served. */
const TOOL = "flooring";

const $ = (id) => document.getElementById(id);

function say(text) {
  $("status").textContent = text;
}

/** A request to the server with its session cookie: the answer's JSON, or `null` for 204. */
async function call(method, path, body) {
  const response = await fetch(`${server}${path}`, {
    method,
    credentials: "include",
    headers: body === undefined ? {} : { "Content-Type": "application/json" },
    body: body === undefined ? undefined : JSON.stringify(body),
  });
  if (!response.ok) {
    const problem = await response.json().catch(() => ({}));
    const error = new Error(`${method} ${path}: ${response.status} ${problem.detail ?? problem.title ?? ""}`);
    error.status = response.status;
    throw error;
  }
  return response.status === 204 ? null : response.json();
}

/** The table of the open quote's lines, drawn from `host.quote` after every change. */
function render(quote) {
  $("quote").hidden = quote === null;
  if (quote === null) return;
  $("quote").dataset.quoteId = quote.id;
  $("quote-title").textContent = `${quote.ref}: ${quote.customerName}`;
  $("lines").replaceChildren(
    ...quote.lines.map((line) => {
      const row = document.createElement("tr");
      for (const text of [line.section ?? "", line.description, String(line.qty), line.total.toFixed(2)]) {
        row.append(Object.assign(document.createElement("td"), { textContent: text }));
      }
      return row;
    }),
  );
  $("quote-total").textContent = quote.totals.total.toFixed(2);
  $("save").disabled = !quote.dirty;
}

/** Resolves once the user has a session on the server, asking for a sign-in if there is none. */
async function session() {
  try {
    return await call("GET", "/api/session");
  } catch (error) {
    if (error.status !== 401) throw error;
  }
  const form = $("signin");
  form.hidden = false;
  say("Sign in to the toolbridge server.");
  return new Promise((resolve) => {
    form.addEventListener("submit", async (event) => {
      event.preventDefault();
      try {
        const context = await call("POST", "/api/session", { email: $("signin-email").value, password: $("signin-password").value });
        form.hidden = true;
        resolve(context);
      } catch (error) {
        say(`Sign-in failed: ${error.message}`);
      }
    });
  });
}

async function start(wasm) {
  // With no argument, the host module finds its .wasm by the package's
  // `new URL("toolbridge_host_bg.wasm", import.meta.url)`, which the bundler has rewritten to
  // where it put the file.
  await init(wasm);
  const host = new Host({ apiBase: `${server}/api/v1` });
  host.onChange((quote) => render(quote));
  $("save").addEventListener("click", async () => {
    try {
      await host.save();
      say("Saved.");
    } catch (error) {
      say(`Could not save: ${error.message}`);
    }
  });

  const context = await session();
  // A quote starts with a line of its own; the tool adds its lines below.
  const draft = await call("POST", "/api/v1/quotes", {
    customerName: "Scratch platform customer",
    lines: [{ description: "Site visit", qty: 1, unitPrice: 85, taxRate: 0.15 }],
  });
  await host.openQuote(draft.id);

  const tools = await call("GET", "/api/tools");
  const tool = tools.find((candidate) => candidate.slug === TOOL);
  if (!tool) throw new Error(`the server has no enabled tool ${TOOL}`);
  // What `mount` takes comes from the tool's entry in `GET /api/tools`, never from the tool.
  host.mount($("tools"), {
    slug: tool.slug,
    origin: tool.origin,
    type: tool.type,
    entry: tool.entry,
    title: tool.name,
    autoResize: { min: 400, max: 2000 },
    ...(tool.settings ? { settings: tool.settings } : {}),
    ...(tool.identity ? { identity: true } : {}),
    ...(tool.connect?.length > 0 ? { fetch: true } : {}),
  });
  say(`Signed in as ${context.userName}; ${tool.name} is mounted.`);
}

/** Runs the page; `wasm` is what `init` takes, for a build that says itself where the .wasm is. */
export function run(wasm) {
  start(wasm).catch((error) => say(`The page failed: ${error.message}`));
}
