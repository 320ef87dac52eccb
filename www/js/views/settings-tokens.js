// Settings → API tokens (Admin and Super User): create a key for the REST API with a name,
// scopes and a rate limit; the token is shown once, with a Copy button. List and revoke keys.

import { h, replace } from "/sdk/ui.js";
import { api, describeError } from "../api.js";
import { ask } from "../dialog.js";
import { fieldErrors, focusHeading } from "../dom.js";
import { formatDateTime } from "../format.js";
import { toast } from "../toast.js";
import { settingsNav } from "./settings-nav.js";

const SCOPES = [
  ["customers:read", "Read customers"],
  ["products:read", "Read products"],
  ["quotes:read", "Read quotes"],
  ["quotes:write", "Create quotes, save lines, send"],
  ["jobs:read", "Read jobs"],
  ["catalog:read", "Read task templates, cost items and the catalog index"],
  ["webhooks:write", "Manage webhook endpoints, read their delivery logs, redeliver"],
];

/** Copies `text`; when the Clipboard API is unavailable or refused, selects it for Ctrl+C. */
export async function copyText(text, fallbackElement) {
  try {
    await navigator.clipboard.writeText(text);
    return true;
  } catch {
    const selection = window.getSelection();
    const range = document.createRange();
    range.selectNodeContents(fallbackElement);
    selection.removeAllRanges();
    selection.addRange(range);
    return false;
  }
}

function tokenPanel(created, onDone) {
  const tokenText = h("code", { class: "token", id: "new-token" }, created.token);
  const copyStatus = h("span", { class: "copy-status", role: "status" });
  const copy = h("button", { type: "button", class: "primary", on: { click: async () => {
    const copied = await copyText(created.token, tokenText);
    copyStatus.textContent = copied ? "Copied." : "Selected: press Ctrl+C (⌘C) to copy.";
  } } }, "Copy");
  const panel = h("section", { class: "token-panel", "aria-labelledby": "token-title", tabindex: "-1" },
    h("h2", { id: "token-title" }, `Key “${created.key.name}” created`),
    h("p", { class: "warning-text" }, h("strong", {}, "Copy this token now. "), "It is shown only once: the server keeps only a hash of it."),
    h("div", { class: "token-row" }, tokenText, copy, copyStatus),
    h("p", { class: "hint" }, "Send it as ", h("code", {}, "Authorization: Bearer <token>"), " to the REST API under /api/v1."),
    h("button", { type: "button", class: "secondary", on: { click: onDone } }, "Done"));
  return panel;
}

export async function renderTokens(root) {
  const heading = h("h1", {}, "Settings");
  replace(root, heading, settingsNav("tokens"), h("p", { class: "muted" }, "Loading keys…"));
  focusHeading(root);

  const listArea = h("div", {});
  const tokenArea = h("div", {});

  // --- create form ----------------------------------------------------------------------------
  const name = h("input", { id: "key-name", type: "text", maxlength: "100", autocomplete: "off", required: true });
  const nameError = h("p", { id: "key-name-error", class: "field-error", hidden: true });
  const scopeBoxes = SCOPES.map(([scope, label]) => {
    const id = `scope-${scope.replace(":", "-")}`;
    const box = h("input", { id, type: "checkbox", value: scope });
    return { box, element: h("div", { class: "check" }, box, h("label", { for: id }, h("code", {}, scope), ` ${label}`)) };
  });
  const scopesError = h("p", { id: "key-scopes-error", class: "field-error", hidden: true });
  const requests = h("input", { id: "key-requests", type: "number", min: "1", step: "1", value: "120", required: true });
  const windowSecs = h("input", { id: "key-window", type: "number", min: "1", step: "1", value: "60", required: true });
  const rateError = h("p", { id: "key-rate-error", class: "field-error", hidden: true });
  const formError = h("p", { class: "form-error", role: "alert", hidden: true });
  const submit = h("button", { type: "submit", class: "primary" }, "Create key");
  const errors = fieldErrors({ name: [nameError, name], scopes: [scopesError, scopeBoxes[0].box], rateLimit: [rateError, requests] });
  const clearErrors = () => {
    errors.clear();
    formError.hidden = true;
  };
  const showError = errors.show;

  const form = h("form", { class: "stack", novalidate: true, "aria-labelledby": "create-key-title", on: { submit: async (event) => {
    event.preventDefault();
    clearErrors();
    const body = {
      name: name.value.trim(),
      scopes: scopeBoxes.filter(({ box }) => box.checked).map(({ box }) => box.value),
      rateLimit: { requests: Number(requests.value), windowSecs: Number(windowSecs.value) },
    };
    let invalid = false;
    if (!body.name) invalid = showError("name", "Give the key a name.") || true;
    if (body.scopes.length === 0) invalid = showError("scopes", "Choose at least one scope.") || true;
    if (!(Number.isInteger(body.rateLimit.requests) && body.rateLimit.requests > 0 && Number.isInteger(body.rateLimit.windowSecs) && body.rateLimit.windowSecs > 0)) {
      invalid = showError("rateLimit", "Enter whole numbers above 0.") || true;
    }
    if (invalid) {
      form.querySelector("[aria-invalid=true]")?.focus();
      return;
    }
    submit.disabled = true;
    try {
      const created = await api.createKey(body);
      form.reset();
      replace(tokenArea, tokenPanel(created, () => {
        tokenArea.replaceChildren();
        name.focus();
      }));
      tokenArea.firstElementChild.focus();
      await loadList();
    } catch (error) {
      const unplaced = (error.errors ?? []).filter((problem) => !showError(problem.path, problem.message));
      if (!error.errors?.length || unplaced.length) {
        formError.textContent = unplaced.length ? unplaced.map((p) => `${p.path}: ${p.message}`).join(" ") : describeError(error);
        formError.hidden = false;
      }
      form.querySelector("[aria-invalid=true]")?.focus();
    } finally {
      submit.disabled = false;
    }
  } } },
  h("div", { class: "field" }, h("label", { for: "key-name" }, "Name"), h("p", { class: "hint", id: "key-name-hint" }, "What uses it, e.g. “back office sync”."), name, nameError),
  h("fieldset", {}, h("legend", {}, "Scopes"), scopeBoxes.map(({ element }) => element), scopesError),
  h("fieldset", { class: "inline-fields" }, h("legend", {}, "Rate limit"),
    h("div", { class: "field" }, h("label", { for: "key-requests" }, "Requests"), requests),
    h("div", { class: "field" }, h("label", { for: "key-window" }, "per seconds"), windowSecs),
    rateError),
  formError,
  h("div", { class: "actions" }, submit));

  // --- list ------------------------------------------------------------------------------------
  async function revoke(key, button) {
    const choice = await ask({
      title: `Revoke “${key.name}”?`,
      message: "Anything using this key stops working at once. This cannot be undone.",
      buttons: [{ label: "Keep it", value: "keep" }, { label: "Revoke", value: "revoke", kind: "danger" }],
      cancelValue: "keep",
    });
    if (choice !== "revoke") return;
    button.disabled = true;
    try {
      await api.revokeKey(key.id);
      toast(`Key “${key.name}” revoked.`, "success");
      await loadList();
    } catch (error) {
      button.disabled = false;
      toast(`Could not revoke “${key.name}”: ${describeError(error)}`, "error");
    }
  }

  async function loadList() {
    let keys;
    try {
      keys = await api.keys();
    } catch (error) {
      replace(listArea, h("p", { class: "form-error" }, describeError(error)));
      return;
    }
    if (!keys.length) {
      replace(listArea, h("p", { class: "muted" }, "No keys yet."));
      return;
    }
    replace(listArea, h("div", { class: "table-wrap" }, h("table", { class: "data" },
      h("caption", { class: "visually-hidden" }, "API keys"),
      h("thead", {}, h("tr", {},
        ["Name", "Prefix", "Scopes", "Rate limit", "Created", "Status", "Actions"].map((c) => h("th", { scope: "col" }, c)))),
      h("tbody", {}, keys.map((key) => {
        const button = h("button", { type: "button", class: "danger small" }, "Revoke");
        button.addEventListener("click", () => revoke(key, button));
        button.setAttribute("aria-label", `Revoke ${key.name}`);
        return h("tr", { class: key.revokedAt ? "revoked" : null },
          h("th", { scope: "row" }, key.name),
          h("td", {}, h("code", {}, key.prefix)),
          h("td", {}, h("ul", { class: "plain" }, (key.scopes ?? []).map((scope) => h("li", {}, h("code", {}, scope))))),
          h("td", {}, key.rateLimit ? `${key.rateLimit.requests} per ${key.rateLimit.windowSecs} s` : "–"),
          h("td", {}, formatDateTime(key.createdAt)),
          h("td", {}, key.revokedAt
            ? h("span", { class: "badge badge-error" }, `Revoked ${formatDateTime(key.revokedAt)}`)
            : h("span", { class: "badge badge-ok" }, "Active")),
          h("td", {}, key.revokedAt ? null : button));
      })))));
  }

  replace(root, heading, settingsNav("tokens"),
    h("p", { class: "lead" }, "Keys let other systems use the REST API (/api/v1) for this organisation. Each has its scopes and its own rate limit."),
    tokenArea,
    h("section", { class: "card" }, h("h2", { id: "create-key-title" }, "Create a key"), form),
    h("section", {}, h("h2", {}, "Keys"), listArea));
  focusHeading(root);
  await loadList();
  return {};
}
