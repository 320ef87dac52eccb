// What every screen shares: the one `Host` of the page, the signed-in user and what their role may
// do, and the enabled tools (from `GET /api/tools`).

import { api } from "./api.js";

export const app = {
  /** @type {import("/host/toolbridge_host.js").Host | null} */
  host: null,
  /** The session context: {userName, userEmail, userRole, tenantName, tenantId, cultureCode}. */
  context: null,
  /**
   * Enabled tools: [{slug, name, shortName, type, version, description, origin, entry, dev,
   * settings, connect}], `settings` being the organisation's install settings for the tool.
   */
  tools: [],
  /** Set by main.js: back to the sign-in page when a request finds the session gone. */
  onSessionEnded: null,
};

/**
 * What a role may use. Field users read quotes only; Office users work with quotes and tools and
 * see cost prices; Admin and Super User also get Settings.
 */
export function permissions(role) {
  const office = role === "office" || role === "admin" || role === "super_user";
  const admin = role === "admin" || role === "super_user";
  return {
    createQuote: office,
    editQuote: office,
    seeCost: office,
    tools: office,
    settings: admin,
  };
}

export function can(action) {
  return Boolean(app.context && permissions(app.context.userRole)[action]);
}

/** Reloads the enabled tools (after sign-in, and after Settings → Tools changes them). */
export async function loadTools() {
  if (!can("tools")) {
    app.tools = [];
    return app.tools;
  }
  const tools = await api.tools();
  app.tools = Array.isArray(tools) ? tools : [];
  return app.tools;
}

export function toolBySlug(slug) {
  return app.tools.find((tool) => tool.slug === slug) ?? null;
}

/** A tool's display name for toasts: its full name when known, else the slug. */
export function toolName(slug) {
  return toolBySlug(slug)?.name ?? slug;
}

/**
 * What `host.mount` takes, straight from an entry of `GET /api/tools`. With `settings` (the
 * organisation's install settings, `{}` for a tool that declares none) the tool is offered
 * `settings.get` and `settings.changed`; with `identity` (its manifest asks for
 * `permissions.identity`) it is offered `auth.getToken`; with outside origins in its manifest's
 * `permissions.connect` it is offered `fetch` (the server makes the request for it, with the
 * tenant's secret settings put in).
 */
export function mountOptions(tool) {
  const options = { slug: tool.slug, origin: tool.origin, type: tool.type, entry: tool.entry, title: tool.name };
  if (tool.settings) options.settings = tool.settings;
  if (tool.identity) options.identity = true;
  if (Array.isArray(tool.connect) && tool.connect.length > 0) options.fetch = true;
  return options;
}
