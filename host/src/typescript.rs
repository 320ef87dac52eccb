//! The TypeScript types of the page API, emitted into the generated
//! `toolbridge_host.d.ts` next to the classes wasm-bindgen describes.

use wasm_bindgen::prelude::wasm_bindgen;

#[wasm_bindgen(typescript_custom_section)]
const TYPES: &'static str = r#"
/** A tool's manifest type. */
export type ToolType = "standalone" | "quoting_extension";

/** `new Host(options)`. */
export interface HostOptions {
  /** The REST API base: a path on the page's origin ("/api/v1") or an absolute URL. */
  apiBase: string;
  /** Write every bridge call and every dropped message to the console. */
  debug?: boolean;
  /** Deadline of each backend request in milliseconds (default 20000). */
  requestTimeoutMs?: number;
  /** While offline, how often the host checks whether the server can be reached again, with a
   * `GET {apiBase}/me` (default 10000 ms); 0 turns the checks off, leaving it to the browser's
   * `online` event. */
  connectivityCheckMs?: number;
  /** Answers every backend request in place of the browser's `fetch` (see `HostBackend`). */
  backend?: HostBackend;
}

/** A backend of the page's own, given as `new Host({apiBase, backend})`. */
export interface HostBackend {
  /** Called for every request the host makes. `request` is a standard `Request`: its URL is
   * `apiBase` followed by the path (`/me`, `/products?page=1&pageSize=50`, `/catalog/index`,
   * `/quotes/{id}/lines`, `/tools/{slug}/token` for a tool's identity token, `/tools/{slug}/fetch`
   * for the server's fetch, …); it has the method, an `Accept: application/json` header,
   * `Content-Type: application/json` and a JSON body when it sends one, `If-None-Match` when
   * revalidating, and a `signal` that aborts at the request timeout. Its
   * `credentials: "include"` and CORS mode matter only if you pass it on to `fetch`.
   * Answer a standard `Response`, which is read exactly as the REST API's answers are: 2xx with
   * a JSON body; `ETag` and `304`; a problem+json body naming the error code (and, for 422,
   * the paths); 401, 429 with `Retry-After`, 5xx. A thrown error, a rejection or
   * `Response.error()` reads as no connection: the request fails with `OFFLINE` and the host is
   * offline (see `host.online`) until a request gets an answer. No answer within the request
   * timeout is `BACKEND_UNAVAILABLE`. While offline the host calls it only for its periodic
   * check (`connectivityCheckMs`). */
  fetch(request: Request): Promise<Response> | Response;
}

/** `host.mount(container, tool)`. */
export interface ToolOptions {
  /** Lower-case letters, digits and hyphens. */
  slug: string;
  /** The tool's registered origin, e.g. "http://estimator.tools.localhost:8080". */
  origin: string;
  /** From the installed manifest; never from the tool. */
  type: ToolType;
  /** The entry page's path on the tool's origin (default "/"). */
  entry?: string;
  /** The frame's accessible title, and the tool's name in toasts and dialogs (default: the slug). */
  title?: string;
  /** Let the tool size its frame: heights in whole CSS pixels, 0 <= min <= max <= 10000. The frame
   * starts at `min`; each height the tool reports is rounded up and held within the bounds. */
  autoResize?: { min: number; max: number };
  /** The tool's install settings, as the app's server answers them for the organisation (in
   * `GET /api/tools`). With them the tool is offered `settings.get` (answering these) and
   * `settings.changed` (see `host.setToolSettings`); without, neither. Not secret: the tool's page
   * reads them, as every user of the organisation's tools can. */
  settings?: ToolSettings;
  /** The installed manifest asks for `permissions.identity` (`identity` in `GET /api/tools`).
   * With it the tool is offered `auth.getToken`, which the host answers by
   * `POST {apiBase}/tools/{slug}/token` with the page's session; without, a call is refused with
   * `NOT_ALLOWED` and no request. The server refuses a tool whose manifest lacks it either way. */
  identity?: boolean;
  /** The installed manifest lists origins in `permissions.connect` (`permissions.connect` in
   * `GET /api/tools`). With it the tool is offered `fetch` (`bridge.fetch(url, init)`): the host
   * checks each request (an https URL, a method, headers a tool may set, a body of at most
   * 5 MiB), refusing a bad one with `INVALID_PARAMS` and no request, then sends it as
   * `POST {apiBase}/tools/{slug}/fetch` with the page's session, waiting at least 25 s (the
   * server's 15 s for the tool's server, and time for the bodies) or `requestTimeoutMs` if longer.
   * The server makes the request with the organisation's secret settings in it and answers what
   * the tool's server answered; its refusals reach the tool as `NOT_ALLOWED` (an origin the
   * manifest does not list, a private address), `RATE_LIMITED` (20 at once, 300 a minute),
   * `TIMEOUT` (15 s) or `BACKEND_UNAVAILABLE`. Without it, a call is refused with `NOT_ALLOWED`
   * and no request. */
  fetch?: boolean;
}

/** A tool's install settings: setting keys to strings, numbers and booleans. */
export type ToolSettings = Record<string, string | number | boolean>;

/** An extension beyond bridge 2.1.0, as a welcome offers it and `bridge.supports` names it. */
export type Capability =
  | "quotes.getOpen"
  | "quote.changed"
  | "session.ended"
  | "settings.get"
  | "settings.changed"
  | "ui.autoResize"
  | "ui.toast"
  | "ui.confirm"
  | "ui.openQuote"
  | "auth.getToken"
  | "context.changed"
  | "fetch"
  | "connectivity";

/** Whether the server can be reached: what `host.onConnectivity` listeners receive, and what
 * tools read with `bridge.connectivity.get()` and hear as `connectivity.changed`. */
export interface Connectivity {
  online: boolean;
}

/** `host.setContext(values)`: the page's context beyond bridge 2.1.0, each value optional. */
export interface HostContext {
  /** An IANA time zone name, e.g. "Pacific/Auckland". */
  timeZone?: string;
  /** An ISO 4217 currency code in capitals, e.g. "NZD". */
  currency?: string;
  /** A BCP 47 language tag, e.g. "en-NZ". */
  locale?: string;
  units?: "metric" | "imperial";
  theme?: "light" | "dark";
}

/** What `host.onToast`'s hook is given: show `message` as text, labelled with `toolName`. */
export interface ToastRequest {
  /** The tool's slug. */
  tool: string;
  /** The tool's name (the `title` it was mounted with). */
  toolName: string;
  kind: "success" | "warning" | "error";
  /** Plain text on one line, at most 300 characters. */
  message: string;
}

/** What `host.onConfirm`'s hook is given; answer `true` for the confirm button. */
export interface ConfirmRequest {
  tool: string;
  toolName: string;
  /** One line, at most 100 characters. */
  title: string;
  /** Plain text, at most 1000 characters; may hold line breaks. */
  message: string;
  /** The button that answers `true` (default "OK"). */
  confirmLabel: string;
  /** The button that answers `false` (default "Cancel"). */
  cancelLabel: string;
  /** Aborts when the tool goes away (unmounted, reloaded, or its quote closed): close the dialog;
   * the tool hears `false`. */
  signal: AbortSignal;
}

/** What `host.onNavigate`'s hook is given; answer whether the user was taken to the quote. */
export interface NavigateRequest {
  tool: string;
  toolName: string;
  /** A quote the signed-in user can open (the host checked). */
  quoteId: string;
  /** The app's deep link, "/quotes/{id}". */
  url: string;
  /** The open quote has unsaved changes: ask the user before dropping them. */
  unsaved: boolean;
}

/** A line of the open quote, with its amounts. */
export interface EditorQuoteLine {
  lineNo: number;
  lineType: "product" | "task" | "cost";
  linkedItemId?: string;
  productCode?: string;
  description: string;
  specification?: string;
  location?: string;
  qty: number;
  unit: "T_ITEM" | "T_SQUARE_METRE" | "T_LINEAR_METRE";
  unitPrice: number;
  costPrice: number;
  taxRate: number;
  section?: string;
  groupId: number;
  injected: boolean;
  parentLineNo?: number;
  nett: number;
  tax: number;
  total: number;
  cost: number;
}

/** The quote open in the editor. */
export interface EditorQuote {
  id: string;
  ref: string;
  customerId: string;
  customerName: string;
  jobId?: string;
  title?: string;
  quoteType: "Quote" | "Estimate";
  status: "Draft" | "Sent" | "Accepted" | "Rejected" | "Expired";
  date: string;
  expiryDays: number;
  lines: EditorQuoteLine[];
  groupKeys: Record<string, number>;
  totals: { cost: number; margin: number; marginPercent: number; nett: number; tax: number; total: number };
  /** Whether there are changes the backend does not have yet. */
  dirty: boolean;
  /** How many changes (a tool's batch, an edit, a removal) the backend does not have yet. */
  unsavedChanges: number;
}

/** The open quote as the server has it now (`host.serverQuote()`): an `EditorQuote` without
 * `dirty` and `unsavedChanges`, to show beside the open one after a save was refused with
 * `CONFLICT`. */
export type ServerQuote = Omit<EditorQuote, "dirty" | "unsavedChanges">;

/** A line as a save sends it: an `EditorQuoteLine` without its amounts. */
export type QuoteLineData = Omit<EditorQuoteLine, "nett" | "tax" | "total" | "cost">;

/** The open quote's unsaved changes (`host.unsaved()`): keep it on the device as it is (it is
 * plain JSON, for IndexedDB or localStorage) and give it back to `openQuote(id, {restore})`. */
export interface UnsavedQuote {
  /** The shape's version; a host refuses one it does not read. */
  format: number;
  quoteId: string;
  /** The quote's reference, to show. */
  reference: string;
  /** The version the changes were made on: their save is made against it. */
  etag: string | null;
  lines: QuoteLineData[];
  groupKeys: Record<string, number>;
  /** How many changes are unsaved. */
  changes: number;
  /** The `Idempotency-Key` of a save of exactly these changes that may have landed. */
  saveKey: string | null;
  base: string;
  unsettled: string | null;
}

/** `host.openQuote(id, options)`. */
export interface OpenOptions {
  /** Unsaved changes `host.unsaved()` gave for this quote, to put back on it, marked unsaved. */
  restore?: UnsavedQuote;
}

/** `host.save(options)`. */
export interface SaveOptions {
  /** Save without `If-Match`, over whatever version the server has: how the user keeps their
   * changes after a `CONFLICT` (default false). */
  overwrite?: boolean;
}

/** What changed, as `onChange` listeners receive it. */
export type QuoteChange =
  | { kind: "opened" }
  | { kind: "linesAdded"; tool: string; linesAdded: number; tasksInjected: number }
  | { kind: "lineEdited"; lineNo: number }
  | { kind: "linesRemoved"; lineNos: number[] }
  | { kind: "saved" }
  | { kind: "sent" }
  | { kind: "closed" };

/** One bridge call, answered. */
export interface CallRecord {
  tool: string;
  method: string;
  durationMs: number;
  /** "ok" or the error code. */
  outcome: string;
  message?: string;
}

/** Something a tool page tried that its frame refused, as its bridge.js reported it. */
export interface BlockedRecord {
  tool: string;
  /** "modal": alert/confirm/prompt; "securityError": reaching into or navigating the app's
   * window; "policy": what the tool origin's Content-Security-Policy refused (the detail names
   * the directive and the URL); "appRequest": a request straight to the app's origin that no
   * policy stopped; "forgedWelcome": a welcome message that did not come from the host. */
  what: "modal" | "securityError" | "policy" | "appRequest" | "forgedWelcome";
  /** The dialog's text, the browser's message, the URL, or the sender's origin. */
  detail: string;
  /** One sentence telling the tool's author what to change, e.g. "an inline script was refused:
   * move it into a .js file and load it with <script src>". */
  advice: string;
}

/** An entry of `host.debugLog()`. */
export type DebugEntry =
  | ({ kind: "call" } & CallRecord)
  | { kind: "dropped"; reason: string; origin: string; tool?: string }
  | ({ kind: "blocked" } & BlockedRecord);

/** An entry of `host.tools()`. */
export interface ToolStatus {
  slug: string;
  type: ToolType;
  origin: string;
  connected: boolean;
  /** What the welcome offered the tool's current page (empty until connected). */
  capabilities: Capability[];
}

/** What the host's methods reject with: an Error named "HostError". */
export interface HostErrorObject extends Error {
  name: "HostError";
  /** "USAGE", "UNSAVED_CHANGES", or a bridge error code such as "UNAUTHENTICATED", "OFFLINE"
   * (the server cannot be reached: the request was not sent, or failed on the network) or
   * "CONFLICT" (`save` or `send`: the quote was changed on another device since it was opened
   * here; nothing was saved, and the open quote is as it was). */
  code: string;
  details: { path: string; message: string }[];
  retryAfter?: number;
}
"#;
