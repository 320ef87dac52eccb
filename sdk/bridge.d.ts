// Type definitions for bridge.js, the toolbridge SDK (window.bridge 2.1.0,
// with the extensions beyond it).
// Reference them from a tool written in TypeScript:
//   /// <reference path="./bridge.d.ts" />
// Every method returns a Promise and rejects with a BridgeError. An extension
// works only where the host offers it: check bridge.supports(name) first.

/** The stable error codes a BridgeError carries. */
export type BridgeErrorCode =
  | "INVALID_PARAMS"
  | "NOT_ALLOWED"
  | "NO_OPEN_QUOTE"
  | "QUOTE_LOCKED"
  | "NOT_FOUND"
  | "RATE_LIMITED"
  | "UNAUTHENTICATED"
  | "BACKEND_UNAVAILABLE"
  | "METHOD_NOT_FOUND"
  | "TIMEOUT"
  | "NOT_CONNECTED"
  | "OFFLINE"
  | "INTERNAL";

/** One broken rule: where (`lines[3].qty`) and what. */
export interface BridgeErrorDetail {
  path: string;
  message: string;
}

/** What every bridge method rejects with. A real `Error`. */
export interface BridgeError extends Error {
  readonly name: "BridgeError";
  readonly code: BridgeErrorCode;
  /** Every violation, for INVALID_PARAMS; empty otherwise. */
  readonly details: BridgeErrorDetail[];
  /** Seconds to wait before retrying, for RATE_LIMITED. */
  readonly retryAfter?: number;
}

/** `bridge.BridgeError`: for `instanceof`, or to make one in a tool's own tests. */
export interface BridgeErrorConstructor {
  (init: { code: BridgeErrorCode; message: string; details?: BridgeErrorDetail[]; retryAfter?: number }): BridgeError;
  readonly prototype: BridgeError;
}

/** A role token. */
export type Role = "super_user" | "admin" | "office" | "field";

/**
 * `context.get()`: the six fields of 2.1.0, and beside them the host's context
 * where the host knows it (an older host, or a backend without them, leaves
 * them out: check before use).
 */
export interface BridgeContextDto extends BridgeContextValues {
  userName: string;
  userEmail: string;
  userRole: Role;
  tenantName: string;
  tenantId: string;
  cultureCode: string;
}

/** The host's context beyond 2.1.0; also what `context.changed` carries (only what changed). */
export interface BridgeContextValues {
  /** An IANA time zone name, e.g. "Pacific/Auckland": show times in it. */
  timeZone?: string;
  /** An ISO 4217 currency code, e.g. "NZD": amounts are in it. */
  currency?: string;
  /** A BCP 47 language tag, e.g. "en-NZ": format numbers and dates for it. */
  locale?: string;
  /** How lengths and areas are shown. */
  units?: "metric" | "imperial";
  /** The page's theme; bridge.js has set it on the document already. */
  theme?: "light" | "dark";
}

export interface BridgeCustomerDto {
  id: string;
  name: string;
  email: string;
  phone: string;
}

export interface BridgeProductDto {
  id: string;
  /** Human-readable code, stable across environments (GUIDs are not). */
  sku: string;
  name: string;
  /** Retail sell price. */
  price: number;
  /** Unit-of-measure token, e.g. T_ITEM. */
  unit: string;
}

export interface BridgeTaskTemplateDto {
  /** Pass as `linkedItemId` on a `task` line. */
  id: string;
  code: string;
  name: string;
}

export interface BridgeCostItemDto {
  /** Pass as `linkedItemId` on a `cost` line. */
  id: string;
  code: string;
  name: string;
  /** Cost-item type token, e.g. T_TRAVEL. */
  type: string;
}

export type QuoteStatus = "Draft" | "Sent" | "Accepted" | "Rejected" | "Expired";

export interface BridgeQuoteDto {
  id: string;
  ref: string;
  customerName: string;
  total: number;
  status: QuoteStatus;
  /** ISO 8601 datetime. */
  date: string;
}

export interface BridgeJobDto {
  id: string;
  ref: string;
  customerName: string;
  customerIdGuid: string;
  status: string;
}

export interface BridgePagedResult<T> {
  items: T[];
  totalCount: number;
  /** From 1. */
  page: number;
  pageSize: number;
}

/** Paging: `page` from 1 (default 1), `pageSize` 1 to 500 (default 50). */
export interface PageOptions {
  page?: number;
  pageSize?: number;
}

/** With `codes`, paging is ignored and every active match is returned. */
export interface CodeListOptions extends PageOptions {
  codes?: string[];
}

export interface BridgeQuoteLineRequest {
  description?: string;
  /** A product's `sku`; links the line when an active product has it. */
  productCode?: string;
  /** More than 0, at most 10000. */
  qty: number;
  /** From 0 to 1000000. */
  unitPrice: number;
  /** A decimal fraction: 0.15 means 15%. */
  taxRate: number;
}

export interface BridgeCreateQuoteRequest {
  jobId?: string;
  customerName?: string;
  /** Required when `upsertByEmail` is true. */
  customerEmail?: string;
  customerPhone?: string;
  /** Match the customer by email, or create one. Default false. */
  upsertByEmail?: boolean;
  title?: string;
  quoteRef?: string;
  /** 1 to 200 lines. */
  lines: BridgeQuoteLineRequest[];
}

export interface BridgeCreateQuoteResult {
  id: string;
  ref: string;
  total: number;
  /** Relative deep link to the quote in the app. */
  url?: string;
}

export type LineType = "product" | "task" | "cost";
export type Unit = "T_ITEM" | "T_SQUARE_METRE" | "T_LINEAR_METRE";

export interface BridgeAddLineDto {
  /** Line name shown in the quote. */
  description?: string;
  /** Human-readable SKU or code; the line's work-object code. */
  productCode?: string;
  /** More than 0. */
  qty: number;
  /** SELL per unit, markup already applied. */
  unitPrice: number;
  /** BUY per unit; SELL when omitted. */
  costPrice?: number;
  /** 15 or 0.15 (both mean 15%). */
  taxRate: number;
  /** Room, area or zone. */
  location?: string;
  /** Dimensions, colours, model. */
  specification?: string;
  /** Default T_ITEM. */
  unit?: Unit;
  /** Lines sharing a key share a group id. */
  groupKey?: string;
  /** Default "product"; selects what `linkedItemId` points at. */
  lineType?: LineType;
  /** GUID of a product, task template or cost item (by `lineType`). */
  linkedItemId?: string;
  /** Section label, at most 100 characters after trimming. */
  section?: string;
  /** @deprecated Use `linkedItemId` with `lineType: "product"`. */
  productId?: string;
}

export type ToolType = "standalone" | "quoting_extension";

export type BridgeMethod =
  | "context.get"
  | "customers.list"
  | "products.list"
  | "taskTemplates.list"
  | "costItems.list"
  | "jobs.list"
  | "quotes.list"
  | "quotes.create"
  | "quotes.addLines";

/**
 * The extensions beyond 2.1.0 a host may offer a tool (the handshake's
 * `capabilities`): methods (`quotes.getOpen`, `settings.get`, `ui.toast`,
 * `ui.confirm`, `ui.openQuote`, `auth.getToken`, `fetch`), events
 * (`quote.changed`, `session.ended`, `settings.changed`, `context.changed`),
 * auto-resize, and `connectivity` (the `connectivity.get` method with the
 * `connectivity.changed` event).
 */
export type BridgeCapability =
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

/** Every method's wire name: those of 2.1.0 and those of the extensions. */
export type BridgeMethodName =
  | BridgeMethod
  | "quotes.getOpen"
  | "settings.get"
  | "ui.toast"
  | "ui.confirm"
  | "ui.openQuote"
  | "auth.getToken"
  | "fetch"
  | "connectivity.get";

/** What `bridge.ready()` resolves with. */
export interface BridgeReadyInfo {
  toolType: ToolType;
  /** The 2.1.0 methods the host granted this tool. */
  methods: BridgeMethod[];
  /** The extensions the host offers this tool; empty from a host of 2.1.0. */
  capabilities: BridgeCapability[];
  sdkVersion: string;
  protocol: number;
}

/**
 * A line of the open quote. `costPrice` and `cost` are present only when the
 * signed-in user's role may see cost.
 */
export interface BridgeOpenQuoteLine {
  /** Number of the line within its quote. */
  lineNo: number;
  lineType: LineType;
  /** The product, task template or cost item the line links to. */
  linkedItemId?: string;
  /** The line's code (a product's SKU). */
  productCode?: string;
  description: string;
  specification?: string;
  location?: string;
  qty: number;
  unit: Unit;
  /** SELL per unit. */
  unitPrice: number;
  /** BUY per unit. */
  costPrice?: number;
  /** A decimal fraction: 0.15 means 15%. */
  taxRate: number;
  /** Absent for lines outside any section. */
  section?: string;
  /** 0 without a group. */
  groupId: number;
  /** Whether the host added it from a product's task sequence. */
  injected: boolean;
  /** The product line an injected line belongs to. */
  parentLineNo?: number;
  /** qty × unitPrice. */
  nett: number;
  tax: number;
  /** nett + tax. */
  total: number;
  /** qty × costPrice. */
  cost?: number;
}

/**
 * The open quote's totals. `cost`, `margin` and `marginPercent` are present
 * only when the signed-in user's role may see cost.
 */
export interface BridgeOpenQuoteTotals {
  nett: number;
  tax: number;
  total: number;
  cost?: number;
  /** nett − cost. */
  margin?: number;
  /** margin / nett, in percent. */
  marginPercent?: number;
}

/** The quote open in the editor, unsaved lines included. */
export interface BridgeOpenQuote {
  id: string;
  ref: string;
  status: QuoteStatus;
  customerName: string;
  /** Whether the editor holds changes not yet saved. */
  dirty: boolean;
  lines: BridgeOpenQuoteLine[];
  totals: BridgeOpenQuoteTotals;
}

/** What changed on the open quote. */
export type QuoteChangeKind = "opened" | "linesAdded" | "edited" | "removed" | "saved" | "sent" | "closed";

/** The `quote.changed` event: after every change to the open quote, whoever made it. */
export interface QuoteChangedEvent {
  kind: QuoteChangeKind;
  /** What `quotes.getOpen()` would answer now; null once the quote is closed. */
  quote: BridgeOpenQuote | null;
}

/** The `session.ended` event: the user signed out, or the session expired. */
export interface SessionEndedEvent {
  reason: "signedOut" | "expired";
}

/**
 * A tool's install settings: what an administrator of the organisation chose
 * for the keys the tool's manifest declares under `settings`, over the
 * declared defaults. A key with neither is absent. Not secret: every user of
 * the organisation's tools can read them.
 */
export type BridgeSettings = Record<string, string | number | boolean>;

/** The `settings.changed` event: an administrator changed the install settings. */
export interface SettingsChangedEvent {
  /** The settings now, whole (as `settings.get()` would answer). */
  settings: BridgeSettings;
}

/**
 * The `context.changed` event: the values of the host's context that changed,
 * and only those (`{theme: "dark"}`), as `context.get()` now answers them.
 */
export type ContextChangedEvent = BridgeContextValues;

/**
 * Whether the app's server can be reached from the browser, as the host
 * knows it: what `connectivity.get()` answers and the `connectivity.changed`
 * event carries. While `online` is false, calls that need the server fail at
 * once with OFFLINE; `quotes.addLines`, `quotes.getOpen`, `settings.get`,
 * `ui.toast`, `ui.confirm` and `context.get` (once the host knows the user)
 * keep working.
 */
export interface BridgeConnectivity {
  online: boolean;
}

/** The `connectivity.changed` event: the server went out of reach, or came back. */
export type ConnectivityChangedEvent = BridgeConnectivity;

/** Every event `bridge.on` takes, with what its listeners receive. */
export interface BridgeEventMap {
  "quote.changed": QuoteChangedEvent;
  "session.ended": SessionEndedEvent;
  "settings.changed": SettingsChangedEvent;
  "context.changed": ContextChangedEvent;
  "connectivity.changed": ConnectivityChangedEvent;
}

/** The name of an event `bridge.on` takes. */
export type BridgeEventName = keyof BridgeEventMap;

export type ToastKind = "success" | "warning" | "error";

/** `bridge.ui.toast`: shown as text in the app, with the tool's name. */
export interface BridgeToastRequest {
  kind: ToastKind;
  /** Plain text on one line, at most 300 characters. */
  message: string;
}

/** `bridge.ui.confirm`: a yes/no question in the app's own dialog. */
export interface BridgeConfirmRequest {
  /** One line. */
  title: string;
  /** What the user is asked; may hold line breaks. */
  message: string;
  /** The button that answers true (default "OK"). */
  confirmLabel?: string;
  /** The button that answers false (default "Cancel"). */
  cancelLabel?: string;
}

/** `bridge.ui`: the app's own toasts, dialogs and navigation, and auto-resize. */
export interface BridgeUi {
  /** Extension `ui.toast`. Resolves once shown; RATE_LIMITED beyond 5 in 10 s. */
  toast(request: BridgeToastRequest): Promise<null>;
  /**
   * Extension `ui.confirm`. Resolves true when the user confirms, false
   * otherwise (also when the question stops making sense). No call deadline:
   * it waits for the user.
   */
  confirm(request: BridgeConfirmRequest): Promise<boolean>;
  /**
   * Extension `ui.openQuote`. Takes the user to the quote: true once there,
   * false when they chose to stay. No call deadline.
   */
  openQuote(id: string): Promise<boolean>;
  /**
   * Extension `ui.autoResize`: on by default where offered. false stops
   * reporting the page's height, true resumes it. Throws INVALID_PARAMS for a
   * non-boolean.
   */
  setAutoResize(enabled: boolean): void;
}

/**
 * `bridge.fetch`'s second argument, read as `fetch`'s is. Placeholders in
 * the headers, the URL's query and a text body are replaced by the server:
 * `{{secret.NAME}}` by the organisation's secret setting `NAME`, `{{token}}`
 * by an identity token (as `auth.getToken()` answers it), `{{base64:…}}` by
 * the base64 of what it holds (for Basic auth:
 * `Basic {{base64:{{secret.USER}}:{{secret.PASSWORD}}}}`).
 */
export interface BridgeFetchInit {
  /** GET (the default), HEAD, POST, PUT, PATCH, DELETE or OPTIONS, in any letter case. */
  method?: string;
  /**
   * As a `Headers`, a record or an array of pairs. Not `Host`,
   * `Content-Length`, `Cookie`, `Connection` and the other hop-by-hop
   * headers, which the server sets or leaves out; at most 50.
   */
  headers?: Headers | Record<string, string> | [string, string][];
  /**
   * Text (a string, or `URLSearchParams` with its content type unless one is
   * set), in which placeholders are replaced; or bytes, sent exactly as they
   * are (an `ArrayBuffer` or any view of one, a `Blob` with its type as the
   * content type unless one is set). At most 5 MiB; none with GET or HEAD.
   */
  body?: string | ArrayBuffer | ArrayBufferView | Blob | URLSearchParams | null;
}

export interface Bridge {
  /** "2.1.0". */
  readonly version: string;
  readonly context: {
    get(): Promise<BridgeContextDto>;
  };
  readonly customers: {
    list(options?: PageOptions): Promise<BridgePagedResult<BridgeCustomerDto>>;
  };
  readonly products: {
    list(options?: PageOptions): Promise<BridgePagedResult<BridgeProductDto>>;
  };
  readonly taskTemplates: {
    list(options?: CodeListOptions): Promise<BridgePagedResult<BridgeTaskTemplateDto>>;
  };
  readonly costItems: {
    list(options?: CodeListOptions): Promise<BridgePagedResult<BridgeCostItemDto>>;
  };
  readonly jobs: {
    list(options?: PageOptions): Promise<BridgePagedResult<BridgeJobDto>>;
  };
  readonly quotes: {
    list(options?: PageOptions): Promise<BridgePagedResult<BridgeQuoteDto>>;
    create(request: BridgeCreateQuoteRequest): Promise<BridgeCreateQuoteResult>;
    /** quoting_extension tools only; resolves once the lines are in the open quote. */
    addLines(lines: BridgeAddLineDto[]): Promise<void>;
    /**
     * Extension `quotes.getOpen` (quoting_extension tools): the quote open in
     * the editor; NO_OPEN_QUOTE when there is none.
     */
    getOpen(): Promise<BridgeOpenQuote>;
  };
  readonly settings: {
    /**
     * Extension `settings.get`: the install settings the app passed to this
     * tool; NOT_ALLOWED where it passed none (check `supports("settings.get")`).
     */
    get(): Promise<BridgeSettings>;
  };
  readonly connectivity: {
    /**
     * Extension `connectivity`: whether the app's server can be reached now,
     * answered by the host without the server (check
     * `supports("connectivity")`; a host without it answers
     * METHOD_NOT_FOUND).
     */
    get(): Promise<BridgeConnectivity>;
  };
  readonly auth: {
    /**
     * Extension `auth.getToken`: a token the platform signed (an ES256 JWT)
     * naming the signed-in user, their organisation and role, and this tool,
     * for the tool's own server to verify against the app's
     * `/.well-known/jwks.json`. It lives 5 minutes; bridge.js keeps it and
     * asks for a new one 30 s before it expires, so call this before every
     * request to your server. Concurrent calls share one request.
     * NOT_ALLOWED when the tool's manifest does not ask for
     * `permissions.identity` (check `supports("auth.getToken")`);
     * NOT_CONNECTED without a host; TIMEOUT when the host does not answer.
     */
    getToken(): Promise<string>;
  };
  readonly ui: BridgeUi;
  /**
   * Extension `fetch`: the app's server makes the request for the tool, with
   * the organisation's secret settings in it (see `BridgeFetchInit`), and
   * resolves with a real `Response` (`status`, `ok`, `headers`, `json()`,
   * `text()`, `arrayBuffer()`, `blob()`). Only to an https origin the tool's
   * manifest lists in `permissions.connect`, never to a private address;
   * redirects are answered as they are, not followed. Limits: 15 s for the
   * whole answer, 5 MiB of body each way, 20 requests in flight and 300 a
   * minute for the tool in the organisation.
   *
   * Rejects with INVALID_PARAMS for a bad argument or a request that breaks a
   * rule (`details` name each: `url`, `init.method`, `init.headers`,
   * `init.body`, or the request's `url`, `method`, `headers[2][0]`, `body`);
   * NOT_ALLOWED where the host does not offer it (check
   * `supports("fetch")`), for an origin the manifest does not list, or for a
   * private address; RATE_LIMITED beyond the limits (`retryAfter` says when);
   * TIMEOUT when the tool's server does not answer within 15 s (or no reply
   * comes within 35 s); BACKEND_UNAVAILABLE when the tool's server cannot be
   * reached or answers more than 5 MiB, or the app's server is unavailable;
   * OFFLINE when the app's server cannot be reached from the browser (see
   * `connectivity`); INTERNAL for an answer no `Response` can hold (a 1xx
   * status).
   */
  fetch(url: string | URL, init?: BridgeFetchInit): Promise<Response>;
  /** Resolves once the host has answered; rejects with NOT_CONNECTED if none does. */
  ready(): Promise<BridgeReadyInfo>;
  /**
   * Whether the host granted this method, or offers this extension, to this
   * tool (false until connected).
   */
  supports(name: BridgeMethodName | BridgeCapability | string): boolean;
  /**
   * Subscribes `listener` to `event` (allowed before the handshake; on a host
   * that does not offer the event it never fires). Returns the function that
   * unsubscribes. Throws a BridgeError (INVALID_PARAMS) at once for an unknown
   * event or a listener that is not a function.
   */
  on(event: "quote.changed", listener: (event: QuoteChangedEvent) => void): () => void;
  on(event: "session.ended", listener: (event: SessionEndedEvent) => void): () => void;
  on(event: "settings.changed", listener: (event: SettingsChangedEvent) => void): () => void;
  on(event: "context.changed", listener: (event: ContextChangedEvent) => void): () => void;
  on(event: "connectivity.changed", listener: (event: ConnectivityChangedEvent) => void): () => void;
  on<E extends BridgeEventName>(event: E, listener: (event: BridgeEventMap[E]) => void): () => void;
  readonly BridgeError: BridgeErrorConstructor;
}

declare global {
  interface Window {
    readonly bridge: Bridge;
  }
  const bridge: Bridge;
}
