// The app's own calls to the server: the session API (`/api/session`), the tool listing
// (`/api/tools`), settings (`/api/settings/…`) and reads of the REST API (`/api/v1/…`), all on this
// origin with the session cookie. Tools never come through here: the host module answers them.
//
// Errors are `application/problem+json`: `{type, title, status, detail, code, errors?, requestId}`.
// They reject as an `ApiError` carrying all of that, plus `retryAfter` from the header.

import { describeError as describeWith } from "/sdk/ui.js";

export class ApiError extends Error {
  constructor({ status, code, title, detail, errors, requestId, retryAfter }) {
    super(detail || title || `HTTP ${status}`);
    this.name = "ApiError";
    this.status = status;
    this.code = code || (status ? `HTTP_${status}` : "BACKEND_UNAVAILABLE");
    this.title = title || "";
    this.errors = Array.isArray(errors) ? errors : [];
    this.requestId = requestId || "";
    this.retryAfter = retryAfter;
  }
}

// Called with every 401 from an endpoint that needs a session, so the app can ask to sign in again.
let onUnauthenticated = () => {};
export function setUnauthenticatedHandler(handler) {
  onUnauthenticated = handler;
}

/**
 * `request("GET", "/api/v1/quotes", {query: {page: 1}})`; `json` sends a JSON body, `body` any
 * other body with `contentType`. Resolves with the parsed JSON, or `null` for 204.
 */
export async function request(method, path, { query, json, body, contentType, quiet401 = false } = {}) {
  const url = new URL(path, window.location.origin);
  for (const [name, value] of Object.entries(query ?? {})) {
    if (value !== undefined && value !== null && value !== "") url.searchParams.set(name, String(value));
  }
  const headers = { Accept: "application/json, application/problem+json" };
  let payload = body;
  if (json !== undefined) {
    headers["Content-Type"] = "application/json";
    payload = JSON.stringify(json);
  } else if (contentType) {
    headers["Content-Type"] = contentType;
  }
  let response;
  try {
    response = await fetch(url, { method, headers, body: payload, credentials: "same-origin" });
  } catch (cause) {
    // As the host module says it: the request never reached the server.
    throw new ApiError({ status: 0, code: "OFFLINE", detail: `The server could not be reached (${cause.message}).` });
  }
  if (response.status === 204) return null;
  const text = await response.text();
  let data = null;
  if (text) {
    try {
      data = JSON.parse(text);
    } catch {
      data = null;
    }
  }
  if (!response.ok) {
    const retryHeader = Number.parseInt(response.headers.get("Retry-After") ?? "", 10);
    const error = new ApiError({
      status: response.status,
      ...(data && typeof data === "object" ? data : { detail: text.slice(0, 300) }),
      retryAfter: Number.isFinite(retryHeader) ? retryHeader : undefined,
    });
    if (response.status === 401 && !quiet401) onUnauthenticated(error);
    throw error;
  }
  return data;
}

export const api = {
  // Session
  signIn: (email, password) => request("POST", "/api/session", { json: { email, password }, quiet401: true }),
  session: () => request("GET", "/api/session", { quiet401: true }),
  signOut: () => request("DELETE", "/api/session", { quiet401: true }),
  /** `{demoSignIns: [{email, password, role, tenantName}]}`: empty unless the server has demo data. */
  signInHelp: () => request("GET", "/api/sign-in", { quiet401: true }),
  /** The user's own time zone and theme (`null` where they follow the organisation's). */
  preferences: () => request("GET", "/api/session/preferences"),
  setPreferences: (body) => request("PATCH", "/api/session/preferences", { json: body }),

  // REST API, with the session
  quotes: (page, pageSize) => request("GET", "/api/v1/quotes", { query: { page, pageSize } }),
  quote: (id) => request("GET", `/api/v1/quotes/${encodeURIComponent(id)}`),
  customers: (page, pageSize) => request("GET", "/api/v1/customers", { query: { page, pageSize } }),
  products: (page, pageSize) => request("GET", "/api/v1/products", { query: { page, pageSize } }),
  createQuote: (body) => request("POST", "/api/v1/quotes", { json: body }),
  /** The quote's details: any of `{customerId, quoteType, date, expiryDays}`; the lines go through the host. */
  updateQuote: (id, body) => request("PATCH", `/api/v1/quotes/${encodeURIComponent(id)}`, { json: body }),

  // Enabled tools, with what host.mount takes
  tools: () => request("GET", "/api/tools"),
  /** What a dev folder's frame refused it, for the server to print (`serve --dev-tool` only). */
  reportDevBlocked: (slug, report) => request("POST", `/api/dev-tools/${encodeURIComponent(slug)}/blocked`, { json: report }),

  // Settings (Admin and Super User)
  keys: () => request("GET", "/api/settings/keys"),
  createKey: (body) => request("POST", "/api/settings/keys", { json: body }),
  revokeKey: (id) => request("DELETE", `/api/settings/keys/${encodeURIComponent(id)}`),
  installedTools: () => request("GET", "/api/settings/tools"),
  uploadTool: (file) => request("POST", "/api/settings/tools", { body: file, contentType: "application/zip" }),
  setToolEnabled: (slug, enabled) => request("PATCH", `/api/settings/tools/${encodeURIComponent(slug)}`, { json: { enabled } }),
  removeTool: (slug) => request("DELETE", `/api/settings/tools/${encodeURIComponent(slug)}`),
  /** The organisation's time zone, currency, units and theme. */
  organisation: () => request("GET", "/api/settings/organisation"),
  setOrganisation: (body) => request("PATCH", "/api/settings/organisation", { json: body }),
  /** The complete install settings of a tool for this organisation; a key left out is unset. */
  setToolSettings: (slug, values) => request("PUT", `/api/settings/tools/${encodeURIComponent(slug)}/settings`, { json: values }),
};

/**
 * The app's words for an error code (the page helpers' `describeError` takes them): it is the app,
 * not a tool, and for any other code the server's own `detail` says most.
 */
const APP_WORDS = {
  BACKEND_UNAVAILABLE: "The server failed to answer. Try again in a moment.",
  OFFLINE: "The server cannot be reached from here just now: check the connection.",
  RATE_LIMITED: (error) => (error.retryAfter ? `Too many requests. Try again in ${formatWait(error.retryAfter)}.` : "Too many requests. Try again shortly."),
  NOT_ALLOWED: "Your role does not allow this.",
  UNAUTHENTICATED: "Your session has ended. Sign in again.",
  default: (error) => error.message || "Something went wrong.",
};

/** The words for the quote editor's errors: the host module's `HostError`s and the app's. */
const HOST_WORDS = {
  ...APP_WORDS,
  UNSAVED_CHANGES: "Save or discard the changes first.",
  QUOTE_LOCKED: "This quote is no longer a Draft, so it cannot change.",
  CONFLICT: "This quote was changed on another device since it was opened here.",
  NOT_FOUND: "This quote does not exist, or it belongs to another organisation.",
  INVALID_PARAMS: (error) => {
    const details = (error.details ?? error.errors ?? []).map((d) => `${d.path}: ${d.message}`);
    return details.length ? `The server refused the lines: ${details.slice(0, 3).join("; ")}` : APP_WORDS.default(error);
  },
};

/** Words for an error, for a toast or a message next to a form. */
export function describeError(error) {
  return describeWith(error, APP_WORDS);
}

/** The words for a `HostError` (the quote editor's host module) or an `ApiError`. */
export function describeHostError(error) {
  return describeWith(error, HOST_WORDS);
}

/** `75` → "2 minutes", `20` → "20 seconds". */
export function formatWait(seconds) {
  if (seconds < 60) return `${seconds} second${seconds === 1 ? "" : "s"}`;
  const minutes = Math.ceil(seconds / 60);
  return `${minutes} minute${minutes === 1 ? "" : "s"}`;
}
