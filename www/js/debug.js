// The debug panel: with the toggle on, `host.debug = true` (the host also logs to the console)
// and the panel lists bridge calls, newest first: tool, method, duration, outcome; what a tool's
// frame refused it shows as a row too (outcome BLOCKED, no duration).
// Every `host.onCall` record since the page loaded is kept (the newest 200), so opening the panel
// shows what already happened. Messages the host dropped go to the console while debug is on.

import { h, replace } from "/sdk/ui.js";
import { app } from "./app.js";
import { byId } from "./dom.js";

const MAX_ROWS = 200;
let rows = []; // newest first: {time, tool, method, durationMs, outcome, message}

function rowFor(entry) {
  const ok = entry.outcome === "ok";
  return h("tr", { class: ok ? "" : "row-error" },
    h("td", {}, entry.time.toLocaleTimeString()),
    h("td", {}, entry.tool ?? ""),
    h("td", {}, h("code", {}, entry.method)),
    h("td", { class: "num" }, typeof entry.durationMs === "number" ? entry.durationMs.toFixed(1) : ""),
    h("td", {}, h("span", { class: `badge ${ok ? "badge-ok" : "badge-error"}` }, entry.outcome),
      entry.message ? h("span", { class: "debug-message" }, ` ${entry.message}`) : null),
  );
}

function render() {
  replace(byId("debug-rows"), rows.map(rowFor));
  byId("debug-empty").hidden = rows.length > 0;
}

function isOpen() {
  return !byId("debug-panel").hidden;
}

/** Called with every `host.onCall` record. */
export function recordCall(record) {
  rows.unshift({ time: new Date(), ...record });
  if (rows.length > MAX_ROWS) rows.length = MAX_ROWS;
  if (isOpen()) byId("debug-rows").prepend(rowFor(rows[0]));
  if (isOpen() && byId("debug-rows").children.length > MAX_ROWS) byId("debug-rows").lastElementChild.remove();
  byId("debug-empty").hidden = rows.length > 0;
}

export function setDebug(on) {
  const button = byId("debug-toggle");
  button.setAttribute("aria-pressed", String(on));
  byId("debug-panel").hidden = !on;
  if (app.host) app.host.debug = on;
  if (on) render();
}

export function setupDebugPanel() {
  byId("debug-toggle").addEventListener("click", () => setDebug(!isOpen()));
  byId("debug-clear").addEventListener("click", () => {
    rows = [];
    render();
  });
}
