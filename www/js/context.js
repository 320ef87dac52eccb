// The host's context beyond bridge 2.1.0: the time zone, currency, locale, units and theme in
// effect for the signed-in user (the organisation's, with the user's own time zone and theme over
// them), as `GET /api/session` answers them. The app shows its own dates in that time zone and
// takes the theme itself (`data-theme` on the root element, which www/css/app.css follows), and it
// passes the values to the host with `host.setContext`, before any tool is mounted: tools are then
// offered `context.changed` and hear each change, and bridge.js sets the theme on their pages.
//
// A change (made here, by an administrator elsewhere, or by this user in another tab) comes as a
// `context` event on the live stream (live.js): the page reads `/api/session` again and passes on
// what it says.

import { api } from "./api.js";
import { app } from "./app.js";
import { setFormatContext } from "./format.js";

const FIELDS = ["timeZone", "currency", "locale", "units", "theme"];

/** Applies the context of `GET /api/session` to the app and its tools. */
export function applyContext(context) {
  setFormatContext(context);
  document.documentElement.dataset.theme = context.theme === "dark" ? "dark" : "light";
  const values = Object.fromEntries(FIELDS.filter((field) => typeof context[field] === "string").map((field) => [field, context[field]]));
  try {
    app.host?.setContext(values);
  } catch (error) {
    console.error("the host refused the session's context", error);
  }
  for (const listener of listeners) listener(context);
}

const listeners = new Set();

/** `onContext(fn)`: `fn(context)` after each change; returns a function that stops it. */
export function onContext(listener) {
  listeners.add(listener);
  return () => listeners.delete(listener);
}

/** Reads the signed-in user's context again and applies it (after a `context` event). */
export async function reloadContext() {
  const context = await api.session();
  app.context = context;
  applyContext(context);
  return context;
}

/** The signed-in user's own theme, saved through the API, then applied. */
export async function chooseTheme(theme) {
  await api.setPreferences({ theme });
  return reloadContext();
}
