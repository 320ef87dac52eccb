// Hash routes: `#/quotes`, `#/quotes?page=2`, `#/quotes/new`, `#/quotes/<id>`, `#/tools`,
// `#/tools/<slug>`, `#/settings/tokens`, `#/settings/tools`, `#/settings/webhooks`.
//
// Each navigation renders into a fresh container, so a slow view that finishes after the user has
// moved on writes into a detached element instead of the page. A view may return
// `{dispose(), beforeLeave(nextRoute) → Promise<boolean>}`; `beforeLeave` lets the quote editor
// ask about unsaved changes before the route changes.

import { byId } from "./dom.js";

let resolver = null;
let currentHash = null;
let currentView = null;
let sequence = 0;

/** `"#/quotes/abc?x=1"` → `{hash, parts: ["quotes", "abc"], query: {x: "1"}}`. */
export function parseRoute(hash) {
  const text = (hash || "").replace(/^#\/?/, "");
  const [path, search = ""] = text.split("?");
  const parts = path.split("/").filter(Boolean).map((part) => {
    try {
      return decodeURIComponent(part);
    } catch {
      return part;
    }
  });
  return { hash: `#/${text}`, parts, query: Object.fromEntries(new URLSearchParams(search)) };
}

export function currentRoute() {
  return parseRoute(currentHash);
}

export function navigate(hash) {
  if (window.location.hash === hash) {
    show(hash);
  } else {
    window.location.hash = hash;
  }
}

/**
 * Goes to `hash` the way a click on a link would, asking the current view first (the quote editor
 * asks about unsaved changes). Resolves whether the route changed: `false` when the user stayed.
 */
export async function go(hash) {
  if (hash === currentHash) return true;
  if (currentView?.beforeLeave) {
    const leaving = currentView;
    const ok = await leaving.beforeLeave(parseRoute(hash));
    if (!ok || leaving !== currentView) return false;
  }
  window.history.pushState(null, "", hash);
  await show(hash);
  return true;
}

/** Renders the current route again (after sign-in, for example). */
export function refresh() {
  if (!window.location.hash) window.history.replaceState(null, "", "#/quotes");
  return show(window.location.hash);
}

/** Leaves the current view without asking (sign-out, session ended). */
export function dropCurrentView() {
  currentView?.dispose?.();
  currentView = null;
}

async function show(hash) {
  sequence += 1;
  const mine = sequence;
  currentView?.dispose?.();
  currentView = null;
  currentHash = hash;
  const main = byId("main");
  const container = document.createElement("div");
  container.className = "view";
  main.replaceChildren(container);
  let view = null;
  try {
    view = (await resolver(parseRoute(hash), container)) ?? null;
  } catch (error) {
    console.error("view failed", error);
    container.textContent = `This page failed to load: ${error.message}`;
  }
  if (mine !== sequence) {
    view?.dispose?.();
    return;
  }
  currentView = view;
}

async function onHashChange() {
  const next = window.location.hash || "#/quotes";
  if (next === currentHash) return;
  if (currentView?.beforeLeave) {
    const leaving = currentView;
    // Show the old address while asking; put the new one back if the user agrees.
    window.history.replaceState(null, "", currentHash);
    const ok = await leaving.beforeLeave(parseRoute(next));
    if (!ok || leaving !== currentView) return;
    window.history.replaceState(null, "", next);
  }
  await show(next);
}

/** `resolver(route, container)` renders a route and resolves with its view object. */
export function startRouter(resolve) {
  resolver = resolve;
  window.addEventListener("hashchange", onHashChange);
}
