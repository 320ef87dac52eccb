// Live updates from the server: `GET /api/events` is a Server-Sent Events stream. Each `quote`
// event carries `{kind: "created" | "saved" | "sent", quote: {id, ref, customerName, total,
// status, date}, by}` for the signed-in user's tenant, whoever made the change; `by` says who:
// `{kind: "user", name, email}` or `{kind: "key", name}` (an integrator's API key).
//
// A `toolSettings` event carries `{slug, settings}` after an admin of the tenant changed a tool's
// install settings: the values go to the tool list and, through `host.setToolSettings`, to every
// open frame of that tool, which hears `settings.changed`.
//
// Every event has an id. After a dropped connection EventSource reconnects by itself and sends the
// last id it heard; the server then sends what the page missed, or, when it cannot tell what that
// was (too long ago, or its own feed was interrupted), a `resync` event: the page reloads the tools'
// settings and lets the current view reload what it shows (`onResync`).

import { app, loadTools, toolBySlug } from "./app.js";
import { reloadContext } from "./context.js";

const listeners = new Set();
const resyncListeners = new Set();
let source = null;

function parsed(message) {
  try {
    return JSON.parse(message.data);
  } catch {
    return null;
  }
}

function applyToolSettings(slug, settings) {
  const tool = toolBySlug(slug);
  if (tool) tool.settings = settings;
  try {
    app.host?.setToolSettings(slug, settings);
  } catch (error) {
    console.error(`the new settings of ${slug} did not reach its frames`, error);
  }
}

/** After `resync`: the tools' settings as the server has them now, then every view's own reload. */
async function resync() {
  const before = new Map(app.tools.map((tool) => [tool.slug, JSON.stringify(tool.settings ?? null)]));
  try {
    await loadTools();
    for (const tool of app.tools) {
      if (tool.settings && before.get(tool.slug) !== JSON.stringify(tool.settings)) applyToolSettings(tool.slug, tool.settings);
    }
  } catch (error) {
    console.error("could not reload the tools after a resync", error);
  }
  try {
    await reloadContext();
  } catch (error) {
    console.error("could not reload the context after a resync", error);
  }
  for (const listener of resyncListeners) {
    try {
      await listener();
    } catch (error) {
      console.error("resync listener failed", error);
    }
  }
}

export function connectLive() {
  if (source) return;
  source = new EventSource("/api/events");
  source.addEventListener("quote", (message) => {
    const event = parsed(message);
    if (!event || typeof event !== "object" || !event.quote || typeof event.quote.id !== "string") return;
    for (const listener of listeners) {
      try {
        listener(event);
      } catch (error) {
        console.error("quote event listener failed", error);
      }
    }
  });
  source.addEventListener("toolSettings", (message) => {
    const event = parsed(message);
    if (!event || typeof event.slug !== "string" || !event.settings || typeof event.settings !== "object") return;
    applyToolSettings(event.slug, event.settings);
  });
  // The organisation's or this user's own time zone, currency, units or theme changed: the page
  // reads its context again and passes it on to the host, which tells the tools what changed.
  source.addEventListener("context", () => {
    reloadContext().catch((error) => console.error("could not reload the context", error));
  });
  source.addEventListener("resync", () => {
    resync();
  });
}

export function disconnectLive() {
  source?.close();
  source = null;
}

/** `onResync(fn)`: `fn` runs (and may return a promise) after the page may have missed events. */
export function onResync(listener) {
  resyncListeners.add(listener);
  return () => resyncListeners.delete(listener);
}

/** `onQuoteEvent(fn)` → a function that stops it. */
export function onQuoteEvent(listener) {
  listeners.add(listener);
  return () => listeners.delete(listener);
}
