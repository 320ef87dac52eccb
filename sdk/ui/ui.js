// The toolbridge page helpers (`@toolbridge/sdk/ui`), an ES module with no dependencies: what tool
// pages (and the reference app) would otherwise each write again.
//
// - Numbers, money and dates in the tenant's culture (`cultureCode` of `bridge.context.get()`).
// - Building DOM from data as text only: nothing here parses HTML.
// - Words a user understands for each bridge error code.
// - Form fields: reading a number, showing a problem under its field, clearing it on edit.
// - Walking every page of a bridge list, shortening text, keeping preferences in localStorage.
//
// Every tool origin serves it at `/sdk/ui.js`, beside `/sdk/bridge.js`; its types are `ui.d.ts`.

// ---------------------------------------------------------------------------------------------
// Formatting in the tenant's culture

/** Currencies of the regions we know; any other culture gets plain numbers with 2 decimals. */
export const CURRENCY_BY_REGION = Object.freeze({ NZ: "NZD", AU: "AUD", GB: "GBP", IE: "EUR", US: "USD", CA: "CAD", ZA: "ZAR" });

const isNumber = (value) => typeof value === "number" && Number.isFinite(value);

/** `cultureCode` as a canonical locale, or `undefined` (the browser's own) when it is not one. */
function canonicalLocale(cultureCode) {
  try {
    return cultureCode ? Intl.getCanonicalLocales(cultureCode)[0] : undefined;
  } catch {
    return undefined;
  }
}

/** `value` (ISO 8601 text, a time in ms or a Date) with `format`; text that is no date as it is. */
function formatWhen(format, value) {
  const date = new Date(value);
  return Number.isNaN(date.getTime()) ? String(value ?? "") : format.format(date);
}

/** `make()`, or `fallback()` when the browser refuses the options (an unknown zone or currency). */
function orElse(make, fallback) {
  try {
    return make();
  } catch {
    return fallback();
  }
}

/**
 * Formatting for one culture: `formatter("en-NZ").money(12.5)` → "$12.50". A culture code that is
 * not one (or none) formats as the browser's own locale, and money then without a currency.
 * Anything that is not a finite number formats as "–".
 *
 * Given the whole context (`formatter(await bridge.context.get())`), it takes the host's `locale`
 * (else `cultureCode`), `currency` (else the region's) and `timeZone` (dates and times shown in
 * it, else in the browser's own zone), where the host has them.
 */
export function formatter(cultureOrContext) {
  const context = cultureOrContext && typeof cultureOrContext === "object" ? cultureOrContext : { cultureCode: cultureOrContext };
  const locale = canonicalLocale(context.locale || context.cultureCode);
  const region = locale ? new Intl.Locale(locale).region : undefined;
  const timeZone = typeof context.timeZone === "string" ? context.timeZone : undefined;
  const money = orElse(
    () => {
      const currency = typeof context.currency === "string" ? context.currency : region ? CURRENCY_BY_REGION[region] : undefined;
      if (!currency) throw new RangeError("no currency");
      return new Intl.NumberFormat(locale, { style: "currency", currency });
    },
    () => new Intl.NumberFormat(locale, { minimumFractionDigits: 2, maximumFractionDigits: 2 }),
  );
  const currency = money.resolvedOptions().currency;
  const numbers = new Map();
  const number = (value, maximumFractionDigits = 3) => {
    if (!isNumber(value)) return "–";
    if (!numbers.has(maximumFractionDigits)) {
      numbers.set(maximumFractionDigits, new Intl.NumberFormat(locale, { maximumFractionDigits }));
    }
    return numbers.get(maximumFractionDigits).format(value);
  };
  const when = (options) => orElse(
    () => new Intl.DateTimeFormat(locale, { ...options, timeZone }),
    () => new Intl.DateTimeFormat(locale, options),
  );
  const dates = when({ dateStyle: "medium" });
  const dateTimes = when({ dateStyle: "medium", timeStyle: "short" });
  return Object.freeze({
    locale,
    currency,
    timeZone: dateTimes.resolvedOptions().timeZone,
    money: (value) => (isNumber(value) ? money.format(value) : "–"),
    number,
    /** `15` (already a percentage) → "15%". */
    percent: (value, maximumFractionDigits = 2) => (isNumber(value) ? `${number(value, maximumFractionDigits)}%` : "–"),
    date: (value) => formatWhen(dates, value),
    dateTime: (value) => formatWhen(dateTimes, value),
  });
}

// ---------------------------------------------------------------------------------------------
// Building DOM as text
//
// Every string goes into the page as a text node or an attribute value, so a customer named
// `<img src=x onerror=alert(1)>` shows exactly those characters.

/** `#…`, a path on this origin, or an http(s) URL; anything else (`javascript:`) becomes `#`. */
export function safeHref(value) {
  const text = String(value);
  if (text.startsWith("#") || text.startsWith("/")) return text.startsWith("//") ? "#" : text;
  try {
    const url = new URL(text, window.location.href);
    return url.protocol === "http:" || url.protocol === "https:" ? url.href : "#";
  } catch {
    return "#";
  }
}

/** Appends `children` to `parent`: strings and numbers as text; `null`, `undefined`, `false` skipped. */
export function append(parent, children) {
  for (const child of children.flat(Infinity)) {
    if (child === null || child === undefined || child === false) continue;
    parent.append(child instanceof Node ? child : document.createTextNode(String(child)));
  }
  return parent;
}

/** Replaces everything inside `parent` with `children`. */
export function replace(parent, ...children) {
  parent.replaceChildren();
  return append(parent, children);
}

/**
 * `h("p", {class: "muted"}, "text", child)`: an element with attributes and children.
 *
 * - Attributes are set with `setAttribute` (`true` as an empty value; `null`, `undefined` and
 *   `false` leave it out). `href` is only set for `#…`, same-origin paths or http(s) URLs.
 * - `on: {click: fn}` adds listeners; `props: {checked: true}` sets properties.
 * - Children as in `append`; arrays are flattened.
 */
export function h(tag, attributes, ...children) {
  const element = document.createElement(tag);
  for (const [name, value] of Object.entries(attributes ?? {})) {
    if (value === null || value === undefined || value === false) continue;
    if (name === "on") {
      for (const [event, listener] of Object.entries(value)) element.addEventListener(event, listener);
    } else if (name === "props") {
      Object.assign(element, value);
    } else if (name === "href") {
      element.setAttribute("href", safeHref(value));
    } else {
      element.setAttribute(name, value === true ? "" : String(value));
    }
  }
  return append(element, children);
}

/** `text` cut to at most `max` characters (code points, as the host counts them), ending in "…". */
export function shorten(text, max) {
  const characters = [...String(text)];
  return characters.length <= max ? characters.join("") : `${characters.slice(0, Math.max(max - 1, 0)).join("")}…`;
}

/** Shows `message` in a status element (its `data-kind` says "info", "success", "warning" or "error"). */
export function showStatus(element, message, kind = "info") {
  element.textContent = message;
  element.dataset.kind = kind;
}

// ---------------------------------------------------------------------------------------------
// Errors in words

/** An INVALID_PARAMS error's details as one sentence: "lines[0].qty: must be above 0; …". */
export function describeDetails(details) {
  if (!Array.isArray(details) || details.length === 0) return "a value was out of range.";
  return details.map((detail) => `${detail.path}: ${detail.message}`).join("; ");
}

/**
 * A sentence a user can act on, for each bridge error code; `default` for any other code (and for
 * a thrown value that is no BridgeError). A value is the sentence, or a function of the error.
 */
export const ERROR_WORDS = Object.freeze({
  INVALID_PARAMS: (error) => `The app didn't accept this: ${describeDetails(error.details)}`,
  NOT_ALLOWED: "You don't have permission to do that here. Ask an administrator if you need it.",
  NO_OPEN_QUOTE: "No quote is open. Open a quote in the app, then try again.",
  QUOTE_LOCKED: "This quote has been sent and can't be changed.",
  NOT_FOUND: "Something this tool refers to no longer exists. Reload the tool and try again.",
  RATE_LIMITED: (error) => (error.retryAfter
    ? `Too many requests. Try again in ${error.retryAfter} s.`
    : "Too many requests. Try again in a moment."),
  UNAUTHENTICATED: "Your session has ended. Sign in to the app again, then retry.",
  BACKEND_UNAVAILABLE: "The app's server can't be reached right now. Try again in a moment.",
  METHOD_NOT_FOUND: "This version of the app doesn't support what this tool asked for.",
  TIMEOUT: "The app took too long to answer. Try again.",
  NOT_CONNECTED: "This tool isn't connected to the app. Open it from the app's tool launcher.",
  OFFLINE: "You're offline, so this wasn't sent. Try again once the connection is back.",
  INTERNAL: "Something went wrong inside the app (INTERNAL). Try again, or report it if it keeps happening.",
  // Not a bridge code: `bridgeReady()` rejects with it where bridge.js did not load at all.
  SDK_MISSING: "The app's tool SDK (bridge.js) didn't load, so this tool can't work.",
  default: (error) => `Something went wrong (${error.code || error.message || "unknown error"}).`,
});

/**
 * The words for `error` (a BridgeError, or anything thrown) from `words`: by default
 * `ERROR_WORDS`; to change some, pass `{...ERROR_WORDS, NOT_ALLOWED: "…"}`.
 */
export function describeError(error, words = ERROR_WORDS) {
  const thrown = error ?? {};
  const code = typeof thrown.code === "string" && thrown.code !== "default" ? thrown.code : "";
  const entry = (code && Object.hasOwn(words, code) ? words[code] : words.default) ?? ERROR_WORDS.default;
  return typeof entry === "function" ? entry(thrown) : String(entry);
}

/**
 * `bridge.ready()`, where bridge.js loaded (its script tag comes before the page's module); where
 * it did not, a rejection with the code `SDK_MISSING`, which `describeError` words.
 */
export function bridgeReady() {
  const { bridge } = globalThis;
  if (typeof bridge?.ready !== "function") {
    const error = new Error("window.bridge is not defined: load /sdk/bridge.js before this module");
    error.code = "SDK_MISSING";
    return Promise.reject(error);
  }
  return bridge.ready();
}

// ---------------------------------------------------------------------------------------------
// Form fields
//
// A problem is `[control, message]`. Its message goes in a `<p class="field-error">` at the end of
// the control's `.field`, and the control points at it with `aria-describedby` (keeping any hint
// it had), so a screen reader reads it with the field.

/** The number in `input`; pushes a problem to `errors` when it is empty, or below `min` (at or below, with `above`), or over `max`. */
export function readNumber(input, errors, { min = 0, max = Infinity, above = false } = {}) {
  const value = input.valueAsNumber;
  if (!Number.isFinite(value)) {
    errors.push([input, "Enter a number."]);
  } else if (above ? value <= min : value < min) {
    errors.push([input, above ? `Must be more than ${min}.` : `Must be at least ${min}.`]);
  } else if (value > max) {
    errors.push([input, `Must be at most ${max}.`]);
  }
  return value;
}

/** Puts `message` under `control` (which needs an id) and links the two. */
export function showFieldError(control, message) {
  const error = h("p", { class: "field-error", id: `${control.id}-error` }, message);
  (control.closest(".field") ?? control.parentElement).append(error);
  control.setAttribute("aria-invalid", "true");
  control.dataset.hint = control.getAttribute("aria-describedby") || "";
  control.setAttribute("aria-describedby", `${error.id} ${control.dataset.hint}`.trim());
}

/** Takes `control`'s problem away, and gives it back the hint it had. */
export function clearFieldError(control) {
  document.getElementById(`${control.id}-error`)?.remove();
  control.removeAttribute("aria-invalid");
  if (control.dataset.hint) {
    control.setAttribute("aria-describedby", control.dataset.hint);
  } else {
    control.removeAttribute("aria-describedby");
  }
  delete control.dataset.hint;
}

/**
 * Shows each problem (the first for a control that has several) and focuses the first control;
 * returns a sentence for the page's status: "Check the 2 highlighted fields."
 */
export function showFieldErrors(errors) {
  const shown = new Set();
  for (const [control, message] of errors) {
    if (!shown.has(control)) {
      showFieldError(control, message);
      shown.add(control);
    }
  }
  errors[0]?.[0].focus();
  return shown.size === 1 ? "Check the highlighted field." : `Check the ${shown.size} highlighted fields.`;
}

/** Clears every problem shown inside `root`. */
export function clearFieldErrors(root) {
  for (const control of root.querySelectorAll('[aria-invalid="true"]')) clearFieldError(control);
}

/** From now on, a field's problem goes as soon as the user edits it. */
export function clearErrorsOnEdit(form) {
  form.addEventListener("input", (event) => {
    const control = event.target.closest('[aria-invalid="true"]');
    if (control) clearFieldError(control);
  });
}

/**
 * Groups of fields repeated as the user needs them (the rooms of an estimate, the lines of a
 * quote): each entry a copy of `template`'s first element, appended to `container`. In a copy,
 * each `[data-field=name]` control gets the id `<prefix>-<n>-<name>` (and a `label[data-for=name]`
 * points at it) and is the entry's `fields.name`; each `[data-role=some-part]` element is the
 * entry's `somePart`, with the id `<prefix>-<n>-some-part` if it has none. The `legend` part reads
 * "Room 1", "Room 2"… (`noun` "room"), and the `remove` part removes its entry, is labelled
 * "Remove room 1", and is off while its entry is the only one or the list is busy. After a removal
 * the `focus` field of the entry that took its place has the focus.
 *
 * `onAdd(entry)` runs for each new entry before it is shown, `onRenumber(entries)` after every
 * change. Returns `{entries, add(), remove(entry), reset(), setBusy(busy)}`; `add()` returns the
 * entry, `reset()` leaves one empty entry.
 */
export function repeatedFields({ template, container, prefix, noun, focus, onAdd = () => {}, onRenumber = () => {} }) {
  const entries = [];
  const title = `${noun.charAt(0).toUpperCase()}${noun.slice(1)}`;
  let made = 0;
  let busy = false;

  function renumber() {
    entries.forEach((entry, index) => {
      if (entry.legend) entry.legend.textContent = `${title} ${index + 1}`;
      if (entry.remove) {
        entry.remove.setAttribute("aria-label", `Remove ${noun} ${index + 1}`);
        entry.remove.disabled = entries.length === 1 || busy;
      }
    });
    onRenumber(entries);
  }

  function add() {
    made += 1;
    const id = (name) => `${prefix}-${made}-${name}`;
    const element = template.content.firstElementChild.cloneNode(true);
    const entry = { element, fields: {} };
    for (const control of element.querySelectorAll("[data-field]")) {
      control.id = id(control.dataset.field);
      entry.fields[control.dataset.field] = control;
    }
    for (const label of element.querySelectorAll("label[data-for]")) label.htmlFor = id(label.dataset.for);
    for (const part of element.querySelectorAll("[data-role]")) {
      part.id ||= id(part.dataset.role);
      entry[part.dataset.role.replace(/-(\w)/gu, (_, letter) => letter.toUpperCase())] = part;
    }
    entry.remove?.addEventListener("click", () => remove(entry));
    onAdd(entry);
    entries.push(entry);
    container.append(element);
    renumber();
    return entry;
  }

  function remove(entry) {
    const index = entries.indexOf(entry);
    if (index < 0 || entries.length === 1) return;
    entries.splice(index, 1);
    entry.element.remove();
    renumber();
    // Keeps keyboard users in place.
    entries[Math.min(index, entries.length - 1)].fields[focus]?.focus();
  }

  function reset() {
    for (const entry of entries.splice(0)) entry.element.remove();
    add();
  }

  function setBusy(value) {
    busy = value;
    renumber();
  }

  return { entries, add, remove, reset, setBusy };
}

// ---------------------------------------------------------------------------------------------
// Lists and preferences

/**
 * Every page of a bridge list, in turn: `for await (const page of pages((o) => bridge.jobs.list(o)))`.
 * Each page is the list's answer plus `loaded`, the items so far. Stops after the last page,
 * after `maxPages`, or at an empty page (the list shrank meanwhile). 500 is the largest page the
 * bridge allows: the fewest round trips.
 */
export async function* pages(list, { pageSize = 500, maxPages = Infinity } = {}) {
  let loaded = 0;
  let totalCount = Infinity;
  for (let page = 1; loaded < totalCount && page <= maxPages; page += 1) {
    const result = await list({ page, pageSize });
    loaded += result.items.length;
    totalCount = result.totalCount;
    yield { ...result, loaded };
    if (result.items.length === 0) return;
  }
}

/** Every item of a bridge list; `onProgress(loaded, totalCount)` after each page. */
export async function loadAll(list, { pageSize = 500, onProgress } = {}) {
  const items = [];
  for await (const page of pages(list, { pageSize })) {
    items.push(...page.items);
    onProgress?.(page.loaded, page.totalCount);
  }
  return items;
}

/**
 * Every item of a bridge list, loaded in view: `status` says how far it is ("Loading the product
 * catalog: 500 of 1203…", `what` naming the list) and `progress` (a `<progress>`, shown while
 * loading) fills. On a failure `status` says why, in `words` (see `describeError`), and `retry` (a
 * button, hidden while loading) shows. Resolves with the items, or `null` after a failure.
 */
export async function loadAllInView(list, { what, status, progress, retry, words = ERROR_WORDS, pageSize = 500 }) {
  retry.hidden = true;
  progress.hidden = false;
  status.textContent = `Loading ${what}…`;
  try {
    return await loadAll(list, {
      pageSize,
      onProgress: (loaded, totalCount) => {
        progress.max = Math.max(totalCount, 1);
        progress.value = loaded;
        status.textContent = `Loading ${what}: ${loaded} of ${totalCount}…`;
      },
    });
  } catch (error) {
    status.textContent = `${what.charAt(0).toUpperCase()}${what.slice(1)} didn't load. ${describeError(error, words)}`;
    retry.hidden = false;
    return null;
  } finally {
    progress.hidden = true;
  }
}

/**
 * Products by SKU in any letter case (the reference pattern loads the catalog once, then looks
 * codes up here): `find(" oak-01 ")` is the product whose `sku` is "OAK-01", or `undefined`;
 * `products` are in the catalog's order.
 */
export function bySku(products) {
  const index = new Map(products.map((product) => [String(product.sku).toLowerCase(), product]));
  return {
    products,
    size: index.size,
    find: (sku) => {
      const code = String(sku ?? "").trim().toLowerCase();
      return code ? index.get(code) : undefined;
    },
  };
}

/**
 * The preferences saved under `key` in this origin's localStorage (an object; `{}` when there
 * are none, or storage is off or holds something else). Keep only preferences there: the data
 * belongs to the app.
 */
export function loadPreferences(key) {
  try {
    const saved = JSON.parse(localStorage.getItem(key));
    return saved && typeof saved === "object" && !Array.isArray(saved) ? saved : {};
  } catch {
    return {};
  }
}

/** Saves `values` under `key`; whether it could (storage may be off: preferences are a convenience). */
export function savePreferences(key, values) {
  try {
    localStorage.setItem(key, JSON.stringify(values));
    return true;
  } catch {
    return false;
  }
}
