// Settings → Webhooks (Admin and Super User): the organisation's endpoints, each a URL that
// receives the quote events it subscribes to, signed with its own secret. Add an endpoint (the
// secret is shown once, in a dialog with Copy), switch one on or off, rotate its secret (again
// shown once), delete it; and per endpoint the delivery log, newest first, with Redeliver on each
// delivery. Everything goes through the REST API (`/api/v1/webhook-endpoints`) with the session.

import { h, replace } from "/sdk/ui.js";
import { describeError, request } from "../api.js";
import { ask } from "../dialog.js";
import { fieldErrors, focusHeading } from "../dom.js";
import { formatDateTime } from "../format.js";
import { toast } from "../toast.js";
import { settingsNav } from "./settings-nav.js";
import { copyText } from "./settings-tokens.js";

/** The event types an endpoint may subscribe to, with what each means. */
const EVENT_TYPES = [
  ["quote.created", "A quote is created"],
  ["quote.saved", "A quote's lines or details are saved"],
  ["quote.sent", "A quote is sent to its customer"],
];

/** Deliveries a page of the log shows. */
const LOG_PAGE_SIZE = 20;

const STATUS_BADGES = { delivered: "badge badge-ok", failed: "badge badge-error", pending: "badge badge-warning" };
const STATUS_LABELS = { delivered: "Delivered", failed: "Failed", pending: "Pending" };

const path = (...parts) => `/api/v1/webhook-endpoints${parts.map((part) => `/${encodeURIComponent(part)}`).join("")}`;

/** The webhook management calls of the REST API, with the session. */
const hooks = {
  endpoints: () => request("GET", path(), { query: { page: 1, pageSize: 500 } }),
  create: (body) => request("POST", path(), { json: body }),
  update: (id, body) => request("PATCH", path(id), { json: body }),
  remove: (id) => request("DELETE", path(id)),
  rotate: (id) => request("POST", `${path(id)}/rotate-secret`),
  deliveries: (id, page) => request("GET", `${path(id)}/deliveries`, { query: { page, pageSize: LOG_PAGE_SIZE } }),
  redeliver: (id, deliveryId) => request("POST", `${path(id)}/deliveries/${encodeURIComponent(deliveryId)}/redeliver`),
};

/**
 * Shows a signing secret once, in a modal dialog of its own with a Copy button; resolves when the
 * user closes it (Done or Escape), after which the secret is gone from the page.
 */
function showSecret(root, { title, url, secret }) {
  const secretText = h("code", { class: "token", id: "webhook-secret" }, secret);
  const copyStatus = h("span", { class: "copy-status", role: "status" });
  const copy = h("button", { type: "button", class: "primary", on: { click: async () => {
    const copied = await copyText(secret, secretText);
    copyStatus.textContent = copied ? "Copied." : "Selected: press Ctrl+C (⌘C) to copy.";
  } } }, "Copy");
  const done = h("button", { type: "submit", class: "secondary", value: "done" }, "Done");
  const dialog = h("dialog", { class: "dialog secret-dialog", "aria-labelledby": "secret-title", "aria-describedby": "secret-warning" },
    h("form", { method: "dialog" },
      h("h2", { id: "secret-title" }, title),
      h("p", { class: "sub" }, h("code", {}, url)),
      h("p", { class: "warning-text", id: "secret-warning" }, h("strong", {}, "Copy this signing secret now. "), "It will not be shown again; if it is lost, rotate the secret for a new one."),
      h("div", { class: "token-row" }, secretText, copy, copyStatus),
      h("p", { class: "hint" }, "Each delivery carries ", h("code", {}, "Toolbridge-Signature: t=…,v1=…"), ": the hex HMAC-SHA256, with this secret, of the timestamp, a dot and the body."),
      h("div", { class: "actions" }, done)));
  const returnFocus = document.activeElement;
  root.append(dialog);
  return new Promise((resolve) => {
    dialog.addEventListener("close", () => {
      dialog.remove();
      if (returnFocus instanceof HTMLElement && returnFocus.isConnected) returnFocus.focus();
      resolve();
    }, { once: true });
    dialog.showModal();
    copy.focus();
  });
}

/**
 * What the last attempt got: the server's words when it failed ("HTTP 500 Internal Server Error",
 * "connection refused"), which name the status themselves; else the status ("HTTP 200"); or "–".
 */
function lastResult(delivery) {
  if (delivery.lastError) return delivery.lastError;
  if (delivery.lastStatus !== null && delivery.lastStatus !== undefined) return `HTTP ${delivery.lastStatus}`;
  return "–";
}

/** The delivery log of one endpoint, a page at a time, with Refresh and Redeliver. */
function deliveryLog(endpoint) {
  let page = 1;
  const body = h("div", { class: "delivery-log-body" }, h("p", { class: "muted" }, "Loading deliveries…"));
  const pageText = h("span", { class: "muted" });
  const prev = h("button", { type: "button", class: "secondary small", on: { click: () => load(page - 1) } }, "Newer");
  const next = h("button", { type: "button", class: "secondary small", on: { click: () => load(page + 1) } }, "Older");
  const refresh = h("button", { type: "button", class: "secondary small", "aria-label": `Refresh the deliveries to ${endpoint.url}`, on: { click: () => load(page) } }, "Refresh");

  async function redeliver(delivery, button) {
    button.disabled = true;
    try {
      await hooks.redeliver(endpoint.id, delivery.id);
      toast(`Event ${delivery.eventId} queued for delivery again.`, "success");
      await load(1);
    } catch (error) {
      button.disabled = false;
      toast(`Could not redeliver ${delivery.eventId}: ${describeError(error)}`, "error");
    }
  }

  async function load(wanted) {
    refresh.disabled = true;
    let result;
    try {
      result = await hooks.deliveries(endpoint.id, wanted);
    } catch (error) {
      replace(body, h("p", { class: "form-error" }, describeError(error)));
      return;
    } finally {
      refresh.disabled = false;
    }
    page = wanted;
    const deliveries = result?.items ?? [];
    const totalCount = result?.totalCount ?? deliveries.length;
    const pages = Math.max(1, Math.ceil(totalCount / LOG_PAGE_SIZE));
    pageText.textContent = `Page ${page} of ${pages} · ${totalCount} deliver${totalCount === 1 ? "y" : "ies"}`;
    prev.hidden = page <= 1;
    next.hidden = page >= pages;
    if (!deliveries.length) {
      replace(body, h("p", { class: "muted" }, "No deliveries yet: events this endpoint subscribes to appear here as they are sent."));
      return;
    }
    replace(body, h("div", { class: "table-wrap" }, h("table", { class: "data delivery-log" },
      h("caption", { class: "visually-hidden" }, `Deliveries to ${endpoint.url}, newest first`),
      h("thead", {}, h("tr", {},
        ["Event", "Event id", "Status", "Attempts", "Last result", "Next attempt", "Created", "Actions"].map((c) => h("th", { scope: "col" }, c)))),
      h("tbody", {}, deliveries.map((delivery) => {
        const button = h("button", { type: "button", class: "secondary small", "aria-label": `Redeliver ${delivery.eventId}` }, "Redeliver");
        button.addEventListener("click", () => redeliver(delivery, button));
        return h("tr", { class: "delivery", "data-status": delivery.status, "data-event-id": delivery.eventId },
          h("th", { scope: "row" }, h("code", {}, delivery.eventType)),
          h("td", {}, h("code", { class: "event-id" }, delivery.eventId)),
          h("td", {}, h("span", { class: STATUS_BADGES[delivery.status] ?? "badge" }, STATUS_LABELS[delivery.status] ?? delivery.status)),
          h("td", { class: "num" }, String(delivery.attempts)),
          h("td", { class: "last-result" }, lastResult(delivery)),
          h("td", { class: "nowrap" }, delivery.nextAttemptAt ? formatDateTime(delivery.nextAttemptAt) : "–"),
          h("td", { class: "nowrap" }, formatDateTime(delivery.createdAt)),
          h("td", {}, button));
      })))));
  }

  const element = h("section", { class: "delivery-log-panel", "aria-label": `Deliveries to ${endpoint.url}` },
    h("div", { class: "pager" }, h("h3", {}, "Deliveries"), refresh, prev, pageText, next),
    body);
  return { element, load: () => load(1) };
}

export async function renderWebhooks(root) {
  const heading = h("h1", {}, "Settings");
  replace(root, heading, settingsNav("webhooks"), h("p", { class: "muted" }, "Loading webhook endpoints…"));
  focusHeading(root);

  const listArea = h("div", {});

  // --- add form ---------------------------------------------------------------------------------
  const url = h("input", { id: "webhook-url", type: "url", maxlength: "2000", autocomplete: "off", required: true, placeholder: "https://crm.example/hooks/toolbridge", "aria-describedby": "webhook-url-hint webhook-url-error" });
  const urlError = h("p", { id: "webhook-url-error", class: "field-error", hidden: true });
  const eventBoxes = EVENT_TYPES.map(([type, label]) => {
    const id = `event-${type.replace(".", "-")}`;
    const box = h("input", { id, type: "checkbox", value: type, "aria-describedby": "webhook-events-error" });
    return { box, element: h("div", { class: "check" }, box, h("label", { for: id }, h("code", {}, type), ` ${label}`)) };
  });
  const eventsError = h("p", { id: "webhook-events-error", class: "field-error", hidden: true });
  const formError = h("p", { class: "form-error", role: "alert", hidden: true });
  const submit = h("button", { type: "submit", class: "primary" }, "Add endpoint");
  const errors = fieldErrors({ url: [urlError, url], eventTypes: [eventsError, eventBoxes[0].box] });
  const clearErrors = () => {
    errors.clear();
    formError.hidden = true;
  };
  const showError = errors.show;

  const form = h("form", { class: "stack", novalidate: true, "aria-labelledby": "add-endpoint-title", on: { submit: async (event) => {
    event.preventDefault();
    clearErrors();
    const body = {
      url: url.value.trim(),
      eventTypes: eventBoxes.filter(({ box }) => box.checked).map(({ box }) => box.value),
      enabled: true,
    };
    let invalid = false;
    if (!body.url) invalid = showError("url", "Enter the URL that receives the events.") || true;
    if (body.eventTypes.length === 0) invalid = showError("eventTypes", "Choose at least one event type.") || true;
    if (invalid) {
      form.querySelector("[aria-invalid=true]")?.focus();
      return;
    }
    submit.disabled = true;
    let created = null;
    try {
      created = await hooks.create(body);
      form.reset();
      toast(`Endpoint ${created.endpoint.url} added.`, "success");
      await loadList();
    } catch (error) {
      const unplaced = (error.errors ?? []).filter((problem) => !showError(problem.path ?? "", problem.message));
      if (!error.errors?.length || unplaced.length) {
        formError.textContent = unplaced.length ? unplaced.map((p) => `${p.path}: ${p.message}`).join(" ") : describeError(error);
        formError.hidden = false;
      }
      (form.querySelector("[aria-invalid=true]") ?? submit).focus();
    } finally {
      submit.disabled = false;
    }
    if (created) await showSecret(root, { title: "Endpoint added", url: created.endpoint.url, secret: created.secret });
  } } },
  h("div", { class: "field" },
    h("label", { for: "webhook-url" }, "URL"),
    h("p", { class: "hint", id: "webhook-url-hint" }, "An http or https address on the internet. Each event is POSTed there as JSON, signed."),
    url, urlError),
  h("fieldset", {}, h("legend", {}, "Events"), eventBoxes.map(({ element }) => element), eventsError),
  formError,
  h("div", { class: "actions" }, submit));

  // --- list -------------------------------------------------------------------------------------
  async function setEnabled(endpoint, box) {
    box.disabled = true;
    try {
      await hooks.update(endpoint.id, { enabled: box.checked });
      endpoint.enabled = box.checked;
      toast(`${endpoint.url} ${box.checked ? "enabled" : "disabled"}.`, "success");
    } catch (error) {
      box.checked = !box.checked;
      toast(`Could not change ${endpoint.url}: ${describeError(error)}`, "error");
    } finally {
      box.disabled = false;
    }
  }

  async function rotate(endpoint, button) {
    const choice = await ask({
      title: "Rotate the signing secret?",
      message: `Deliveries to ${endpoint.url} are signed with a new secret from now on, and the receiver must check them with it: the old secret stops working at once.`,
      buttons: [{ label: "Keep the secret", value: "keep" }, { label: "Rotate", value: "rotate", kind: "danger" }],
      cancelValue: "keep",
    });
    if (choice !== "rotate") return;
    button.disabled = true;
    try {
      const rotated = await hooks.rotate(endpoint.id);
      await showSecret(root, { title: "New signing secret", url: rotated.endpoint?.url ?? endpoint.url, secret: rotated.secret });
    } catch (error) {
      toast(`Could not rotate the secret of ${endpoint.url}: ${describeError(error)}`, "error");
    } finally {
      button.disabled = false;
    }
  }

  async function remove(endpoint, button) {
    const choice = await ask({
      title: "Delete this endpoint?",
      message: `${endpoint.url} receives no more events, and its delivery log goes with it. This cannot be undone.`,
      buttons: [{ label: "Keep it", value: "keep" }, { label: "Delete", value: "delete", kind: "danger" }],
      cancelValue: "keep",
    });
    if (choice !== "delete") return;
    button.disabled = true;
    try {
      await hooks.remove(endpoint.id);
      toast(`Endpoint ${endpoint.url} deleted.`, "success");
      await loadList();
      heading.focus();
    } catch (error) {
      button.disabled = false;
      toast(`Could not delete ${endpoint.url}: ${describeError(error)}`, "error");
    }
  }

  async function loadList() {
    let result;
    try {
      result = await hooks.endpoints();
    } catch (error) {
      replace(listArea, h("p", { class: "form-error" }, describeError(error)));
      return;
    }
    const endpoints = result?.items ?? [];
    if (!endpoints.length) {
      replace(listArea, h("p", { class: "muted" }, "No endpoints yet."));
      return;
    }
    const columns = ["URL", "Events", "Enabled", "Created", "Actions"];
    replace(listArea, h("div", { class: "table-wrap" }, h("table", { class: "data webhook-endpoints" },
      h("caption", { class: "visually-hidden" }, "Webhook endpoints"),
      h("thead", {}, h("tr", {}, columns.map((c) => h("th", { scope: "col" }, c)))),
      h("tbody", {}, endpoints.flatMap((endpoint) => {
        const boxId = `webhook-enabled-${endpoint.id}`;
        const box = h("input", { id: boxId, type: "checkbox", class: "switch", props: { checked: Boolean(endpoint.enabled) } });
        box.addEventListener("change", () => setEnabled(endpoint, box));
        const logId = `deliveries-${endpoint.id}`;
        const logRow = h("tr", { class: "settings-row", id: logId, hidden: true });
        let log = null;
        const logButton = h("button", { type: "button", class: "secondary small", "aria-expanded": "false", "aria-controls": logId, "aria-label": `Deliveries to ${endpoint.url}` }, "Deliveries");
        logButton.addEventListener("click", async () => {
          const open = logRow.hidden;
          logButton.setAttribute("aria-expanded", String(open));
          logRow.hidden = !open;
          if (!open) return;
          log = deliveryLog(endpoint);
          replace(logRow, h("td", { colspan: String(columns.length) }, log.element));
          await log.load();
        });
        const rotateButton = h("button", { type: "button", class: "secondary small", "aria-label": `Rotate the secret of ${endpoint.url}` }, "Rotate secret");
        rotateButton.addEventListener("click", () => rotate(endpoint, rotateButton));
        const removeButton = h("button", { type: "button", class: "danger small", "aria-label": `Delete ${endpoint.url}` }, "Delete");
        removeButton.addEventListener("click", () => remove(endpoint, removeButton));
        return [h("tr", { class: "webhook-endpoint", "data-id": endpoint.id },
          h("th", { scope: "row" }, h("code", { class: "endpoint-url" }, endpoint.url)),
          h("td", {}, h("ul", { class: "plain" }, (endpoint.eventTypes ?? []).map((type) => h("li", {}, h("code", {}, type))))),
          h("td", {}, h("div", { class: "check" }, box, h("label", { for: boxId }, h("span", { class: "visually-hidden" }, `${endpoint.url} `), "enabled"))),
          h("td", { class: "nowrap" }, formatDateTime(endpoint.createdAt)),
          h("td", {}, h("div", { class: "row-actions" }, logButton, rotateButton, removeButton))), logRow];
      })))));
  }

  replace(root, heading, settingsNav("webhooks"),
    h("p", { class: "lead" }, "Webhooks tell other systems (a CRM, a back office) the moment a quote is created, saved or sent: each event is POSTed to the endpoints that subscribe to it, signed with the endpoint's secret, and retried if the receiver fails."),
    h("section", { class: "card" }, h("h2", { id: "add-endpoint-title" }, "Add an endpoint"), form),
    h("section", {}, h("h2", {}, "Endpoints"), listArea));
  focusHeading(root);
  await loadList();
  return {};
}
