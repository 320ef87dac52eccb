// The reference host app: start-up, sign-in state, the header and navigation, and the routes.
//
// The page loads the host module once and makes one `Host` for its whole life:
//
//   import init, { Host } from "/host/toolbridge_host.js";
//   await init();
//   const host = new Host({ apiBase: "/api/v1" });
//
// Screens then use that host to mount tools (`host.mount`) and to edit a quote
// (`host.openQuote`, `host.quote`, `host.onChange`, `host.updateLine`, `host.removeLine`,
// `host.save`, `host.send`).

import init, { Host } from "/host/toolbridge_host.js";
import { h, replace } from "/sdk/ui.js";
import { setupAccountMenu } from "./account-menu.js";
import { api, setUnauthenticatedHandler, describeError } from "./api.js";
import { forgetMine } from "./kept.js";
import { app, can, loadTools, toolName } from "./app.js";
import { recordCall, setDebug, setupDebugPanel } from "./debug.js";
import { clearDevReports, reportBlocked, setupDevReports } from "./dev-reports.js";
import { ask } from "./dialog.js";
import { byId, focusHeading } from "./dom.js";
import { applyContext, chooseTheme } from "./context.js";
import { ROLE_LABELS } from "./format.js";
import { connectLive, disconnectLive } from "./live.js";
import { dropCurrentView, go, parseRoute, refresh, startRouter } from "./router.js";
import { closeSidebar, setupSidebar } from "./sidebar.js";
import { toast } from "./toast.js";
import { renderEditor } from "./views/editor/view.js";
import { renderNewQuote } from "./views/new-quote.js";
import { renderQuotes } from "./views/quotes.js";
import { renderTokens } from "./views/settings-tokens.js";
import { renderToolSettings } from "./views/settings-tools.js";
import { renderWebhooks } from "./views/settings-webhooks.js";
import { renderAccount, renderOrganisation } from "./views/settings-organisation.js";
import { renderSignIn } from "./views/signin.js";
import { renderTools } from "./views/tools.js";

let signInNotice = "";

// ---------------------------------------------------------------------------------------------
// Routes

function message(root, title, text) {
  replace(root, h("h1", {}, title), h("p", {}, text), h("p", {}, h("a", { href: "#/quotes" }, "Go to quotes")));
  focusHeading(root);
  return {};
}

function markNav(section) {
  for (const link of document.querySelectorAll("[data-nav]")) {
    if (link.dataset.nav === section) link.setAttribute("aria-current", "page");
    else link.removeAttribute("aria-current");
  }
}

async function resolve(route, root) {
  if (!app.context) {
    markNav(null);
    const notice = signInNotice;
    signInNotice = "";
    return renderSignIn(root, { onSignedIn: signedIn, notice });
  }
  const [section, id, more] = route.parts;
  markNav(section ?? "quotes");
  switch (section ?? "quotes") {
    case "quotes":
      if (!id) return renderQuotes(root, { page: route.query.page });
      if (id === "new") {
        return can("createQuote") ? renderNewQuote(root) : message(root, "New quote", "Your role may read quotes but not create them.");
      }
      if (more) return message(root, "Not found", "There is no such page.");
      return renderEditor(root, { id });
    case "tools":
      return can("tools") ? renderTools(root, { slug: id }) : message(root, "Tools", "Your role does not use tools.");
    case "account":
      return id ? message(root, "Not found", "There is no such page.") : renderAccount(root);
    case "settings":
      if (!can("settings")) return message(root, "Settings", "Only Admin and Super User may change settings.");
      if (!id || id === "tokens") return renderTokens(root);
      if (id === "tools") return renderToolSettings(root);
      if (id === "webhooks") return renderWebhooks(root);
      if (id === "organisation") return renderOrganisation(root);
      return message(root, "Not found", "There is no such settings page.");
    default:
      return message(root, "Not found", "There is no such page.");
  }
}

// ---------------------------------------------------------------------------------------------
// Signing in and out

function showAccount(context) {
  byId("account-name").textContent = context.userName;
  byId("account-role").textContent = ROLE_LABELS[context.userRole] ?? context.userRole;
  byId("account-tenant").textContent = context.tenantName;
  byId("account").hidden = false;
  showTheme(context.theme);
  byId("nav").hidden = false;
  for (const item of document.querySelectorAll("[data-requires]")) {
    item.hidden = !can(item.dataset.requires);
  }
}

async function signedIn(context) {
  app.context = context;
  app.host.forgetSession();
  // Before any tool is mounted: their welcomes then offer `context.changed` and name the theme.
  applyContext(context);
  showAccount(context);
  connectLive();
  try {
    await loadTools();
  } catch (error) {
    toast(`Could not load the tools: ${describeError(error)}`, "error");
  }
  const route = parseRoute(window.location.hash);
  if (route.parts.length === 0 || route.parts[0] === "signin") window.history.replaceState(null, "", "#/quotes");
  await refresh();
}

function signedOut(notice = "", reason = "signedOut") {
  // Tools hear `session.ended` while they are still mounted.
  app.host.endSession(reason);
  dropCurrentView();
  closeSidebar();
  disconnectLive();
  app.context = null;
  app.tools = [];
  byId("account").hidden = true;
  byId("nav").hidden = true;
  setDebug(false);
  clearDevReports();
  signInNotice = notice;
  refresh();
}

async function signOut() {
  if (app.host.quote?.dirty) {
    const choice = await ask({
      title: "Sign out with unsaved changes?",
      message: "The changes to the open quote's lines since the last save would be lost.",
      buttons: [{ label: "Stay", value: "stay" }, { label: "Discard and sign out", value: "discard", kind: "danger" }],
      cancelValue: "stay",
    });
    if (choice !== "discard") return;
  }
  // What was kept on this device for this user goes with their session.
  await forgetMine();
  try {
    await api.signOut();
  } catch (error) {
    console.warn("sign-out request failed", error);
  }
  signedOut("You are signed out.");
}

/** The header's theme switch: pressed when the dark theme is on. */
function showTheme(theme) {
  byId("theme-toggle").setAttribute("aria-pressed", String(theme === "dark"));
}

/** Saves the other theme as the user's own; the app and the open tools follow. */
async function toggleTheme() {
  const next = app.context?.theme === "dark" ? "light" : "dark";
  try {
    const context = await chooseTheme(next);
    showTheme(context.theme);
  } catch (error) {
    toast(`Could not change the theme: ${describeError(error)}`, "error");
  }
}

/** A request found the session gone: back to the sign-in page, once. */
function sessionEnded() {
  if (!app.context) return;
  signedOut("Your session has ended. Sign in again.", "expired");
}

// ---------------------------------------------------------------------------------------------
// Start

async function start() {
  // The quick-quote tool links to `/quotes/<id>` (the `url` of `quotes.create`); the app's routes
  // are hash routes.
  const deepLink = /^\/quotes\/([^/]+)\/?$/.exec(window.location.pathname);
  if (deepLink) window.history.replaceState(null, "", `/#/quotes/${deepLink[1]}`);

  setupDebugPanel();
  setupDevReports();
  setupSidebar();
  setupAccountMenu();
  byId("sign-out").addEventListener("click", signOut);
  byId("theme-toggle").addEventListener("click", toggleTheme);
  setUnauthenticatedHandler(sessionEnded);
  app.onSessionEnded = sessionEnded;

  try {
    // `cargo xtask bench` reads this measure (`bench/src/cold_load.rs`): the host module's fetch,
    // compile and instantiate, within the app's cold load.
    const initStart = performance.now();
    await init();
    performance.measure("toolbridge:host-init", { start: initStart });
    // While the server cannot be reached, the host checks every 5 s; a waiting save goes then.
    app.host = new Host({ apiBase: "/api/v1", connectivityCheckMs: 5000 });
  } catch (error) {
    replace(byId("main"), h("h1", {}, "The app could not start"), h("p", {}, `The host module did not load: ${error.message}`));
    return;
  }

  // Every bridge call: into the debug panel; a failed one also as a toast naming the tool.
  app.host.onCall((record) => {
    recordCall(record);
    if (record.outcome !== "ok") {
      toast(`${toolName(record.tool)}: ${record.message || record.outcome}`, "error");
    }
  });
  // What a tool's frame refused it (a dialog, the app's window, a request past the bridge, a
  // forged welcome): into the debug panel as a row of its own, and for a tool served from a folder
  // under development also in the panel for its author, with what to change.
  app.host.onBlocked((record) => {
    recordCall({ tool: record.tool, method: `refused: ${record.what}`, outcome: "BLOCKED", message: record.detail });
    reportBlocked(record);
  });
  // Whether the server can be reached, in the header on every screen.
  const showConnectivity = ({ online }) => {
    byId("offline-badge").hidden = online;
  };
  showConnectivity({ online: app.host.online });
  app.host.onConnectivity(showConnectivity);
  // What tools did to the open quote.
  app.host.onChange((quote, change) => {
    if (change.kind === "linesAdded") {
      const lines = `${change.linesAdded} line${change.linesAdded === 1 ? "" : "s"}`;
      const tasks = change.tasksInjected ? ` and ${change.tasksInjected} task line${change.tasksInjected === 1 ? "" : "s"}` : "";
      toast(`${toolName(change.tool)} added ${lines}${tasks}`, "success");
    }
  });

  // What tools ask of the page (the bridge's `ui` extensions), in the app's own toasts, dialog and
  // routes. Set before any tool is mounted: a tool's welcome offers only the hooks set by then.
  app.host.onToast(({ toolName: name, kind, message }) => {
    toast(`${name}: ${message}`, kind);
  });
  app.host.onConfirm(async ({ toolName: name, title, message, confirmLabel, cancelLabel, signal }) => {
    // The question goes with the page it was asked on: moving to another route answers "no".
    const leaving = new AbortController();
    const onRoute = () => leaving.abort();
    window.addEventListener("hashchange", onRoute, { once: true });
    const either = AbortSignal.any ? AbortSignal.any([signal, leaving.signal]) : signal;
    try {
      const choice = await ask({
        source: `${name} asks`,
        title,
        message,
        buttons: [
          { label: cancelLabel, value: "cancel" },
          { label: confirmLabel, value: "confirm", kind: "primary", autofocus: true },
        ],
        cancelValue: "cancel",
        signal: either,
      });
      return choice === "confirm";
    } finally {
      window.removeEventListener("hashchange", onRoute);
    }
  });
  app.host.onNavigate(({ quoteId }) => go(`#/quotes/${encodeURIComponent(quoteId)}`));

  startRouter(resolve);
  try {
    const context = await api.session();
    await signedIn(context);
  } catch (error) {
    if (error.status !== 401) signInNotice = describeError(error);
    refresh();
  }
}

start();
