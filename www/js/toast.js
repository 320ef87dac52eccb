// Toasts: success (green), warning (orange), error (red). Each dismisses itself after about
// 5 seconds; the timer pauses while the pointer is over it or focus is inside it, and its close
// button dismisses it at once. Success and warnings are announced politely, errors assertively.

import { h } from "/sdk/ui.js";
import { byId } from "./dom.js";

const LIFETIME_MS = 5000;
const MAX_VISIBLE = 5;
const ICONS = { success: "✓", warning: "!", error: "×" };
const LABELS = { success: "Success", warning: "Warning", error: "Error" };

// The same text within a moment is shown once (a tool retrying in a loop would flood the screen),
// unless its toast was dismissed meanwhile: whoever closed it and does it again sees it again.
const recent = new Map();
const DEDUPE_MS = 1500;

/**
 * `toast("Saved", "success")`. `action: {label, run}` adds a button (e.g. "Reload").
 * Returns a function that dismisses the toast.
 */
export function toast(message, severity = "success", { action } = {}) {
  const key = `${severity}:${message}`;
  const now = Date.now();
  if (recent.has(key) && now - recent.get(key) < DEDUPE_MS) return () => {};
  recent.set(key, now);

  const region = byId(severity === "error" ? "toasts-alert" : "toasts-polite");
  const item = h("div", { class: `toast toast-${severity}`, "data-severity": severity });
  const dismiss = () => {
    clearTimeout(timer);
    item.remove();
    if (recent.get(key) === now) recent.delete(key);
  };
  item.append(
    h("span", { class: "toast-icon", "aria-hidden": "true" }, ICONS[severity] ?? ""),
    h("p", { class: "toast-text" }, h("span", { class: "visually-hidden" }, `${LABELS[severity] ?? ""}: `), message),
  );
  if (action) {
    item.append(h("button", { type: "button", class: "toast-action", on: { click: () => { dismiss(); action.run(); } } }, action.label));
  }
  item.append(h("button", { type: "button", class: "toast-close", "aria-label": "Dismiss notification", on: { click: dismiss } }, "×"));

  let timer;
  let paused = 0; // hover and focus each pause it
  const start = () => {
    clearTimeout(timer);
    timer = setTimeout(dismiss, LIFETIME_MS);
  };
  const pause = () => {
    paused += 1;
    clearTimeout(timer);
  };
  const resume = () => {
    paused = Math.max(0, paused - 1);
    if (paused === 0) start();
  };
  item.addEventListener("mouseenter", pause);
  item.addEventListener("mouseleave", resume);
  item.addEventListener("focusin", pause);
  item.addEventListener("focusout", (event) => {
    if (!item.contains(event.relatedTarget)) resume();
  });

  region.append(item);
  const all = document.querySelectorAll(".toast");
  for (let i = 0; i < all.length - MAX_VISIBLE; i += 1) all[i].remove();
  start();
  return dismiss;
}
