// Live updates from the server: `GET /api/events` is a Server-Sent Events stream. Each `quote`
// event carries `{kind: "created" | "saved" | "sent", quote: {id, ref, customerName, total,
// status, date}, by}` for the signed-in user's tenant, whoever made the change; `by` says who:
// `{kind: "user", name, email}` or `{kind: "key", name}` (an integrator's API key). EventSource
// reconnects by itself after a dropped connection.
//
// A `toolSettings` event carries `{slug, settings}` after an admin of the tenant changed a tool's
// install settings: the values go to the tool list and, through `host.setToolSettings`, to every
// open frame of that tool, which hears `settings.changed`.

import { app, toolBySlug } from "./app.js";

const listeners = new Set();
let source = null;

export function connectLive() {
  if (source) return;
  source = new EventSource("/api/events");
  source.addEventListener("quote", (message) => {
    let event;
    try {
      event = JSON.parse(message.data);
    } catch {
      return;
    }
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
    let event;
    try {
      event = JSON.parse(message.data);
    } catch {
      return;
    }
    if (!event || typeof event.slug !== "string" || !event.settings || typeof event.settings !== "object") return;
    const tool = toolBySlug(event.slug);
    if (tool) tool.settings = event.settings;
    try {
      app.host?.setToolSettings(event.slug, event.settings);
    } catch (error) {
      console.error(`the new settings of ${event.slug} did not reach its frames`, error);
    }
  });
}

export function disconnectLive() {
  source?.close();
  source = null;
}

/** `onQuoteEvent(fn)` → a function that stops it. */
export function onQuoteEvent(listener) {
  listeners.add(listener);
  return () => listeners.delete(listener);
}
