// Live updates from the server: `GET /api/events` is a Server-Sent Events stream. Each `quote`
// event carries `{kind: "created" | "saved" | "sent", quote: {id, ref, customerName, total,
// status, date}, by}` for the signed-in user's tenant, whoever made the change; `by` says who:
// `{kind: "user", name, email}` or `{kind: "key", name}` (an integrator's API key). EventSource
// reconnects by itself after a dropped connection.

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
