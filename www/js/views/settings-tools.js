// Settings → Tools (Admin and Super User): upload a tool bundle (.zip), see every installed tool
// with its type and version and the outside origins it talks to, enable or disable it, set its
// install settings for this organisation, remove it. A refused bundle lists each problem with the
// entry it concerns and the rule it breaks. A secret setting is write-only: the form shows whether
// it is set, takes a new value in a password field or clears it, and never holds the value once
// it is saved.

import { h, replace } from "/sdk/ui.js";
import { loadTools } from "../app.js";
import { api, describeError } from "../api.js";
import { ask } from "../dialog.js";
import { focusHeading } from "../dom.js";
import { formatBytes, formatDateTime, TOOL_TYPE_LABELS } from "../format.js";
import { toast } from "../toast.js";
import { settingsNav } from "./settings-nav.js";

const MAX_BUNDLE_BYTES = 10 * 1024 * 1024;

/** `"must not contain '..' [name]"` → `{message: "must not contain '..'", rule: "name"}`. */
export function splitRule(message) {
  const match = /^(.*?)\s*\[([a-z0-9-]+)\]\s*$/i.exec(String(message ?? ""));
  return match ? { message: match[1], rule: match[2] } : { message: String(message ?? ""), rule: "" };
}

function refusalList(errors) {
  return h("ul", { class: "refusals" }, errors.map((problem) => {
    const { message, rule } = splitRule(problem.message);
    return h("li", {},
      h("code", { class: "entry" }, problem.path || "bundle"),
      " ",
      h("span", {}, message),
      rule ? h("span", { class: "badge badge-error rule" }, `rule: ${rule}`) : null);
  }));
}

/** "talks to https://a.example and https://b.example", or null for a tool that declares none. */
function talksTo(tool) {
  const origins = Array.isArray(tool.connect) ? tool.connect : [];
  if (!origins.length) return null;
  return h("span", { class: "sub talks-to" }, "talks to ",
    origins.flatMap((origin, index) => [index ? (index === origins.length - 1 ? " and " : ", ") : "", h("code", {}, origin)]));
}

/**
 * A note that the tool may ask for identity tokens (its manifest's `permissions.identity`), which
 * tell its own server who the user and organisation are; null for a tool that does not.
 */
function provesIdentity(tool) {
  if (!tool.identity) return null;
  return h("span", { class: "sub identity" }, PROVES_IDENTITY);
}

const PROVES_IDENTITY = "may tell its own server who you are, with a token the app signs";

/** Whether the organisation has set the secret setting `key` of `tool` (never its value). */
function secretIsSet(tool, key) {
  return Boolean(tool.secrets?.[key]?.set);
}

/**
 * The field of a secret setting: a password input that starts empty whatever is saved, what is
 * saved ("set" or "not set"), and a box to clear it.
 */
function secretField(tool, declaration, id, hintId, errorId) {
  const stateId = `${id}-state`;
  const clearId = `${id}-clear`;
  const described = [stateId, declaration.description ? hintId : null, errorId].filter(Boolean).join(" ");
  const input = h("input", { id, type: "password", autocomplete: "new-password", spellcheck: "false", maxlength: "1000", "aria-describedby": described });
  const state = h("span", { id: stateId, class: "badge" });
  const clear = h("input", { id: clearId, type: "checkbox" });
  const clearBox = h("div", { class: "check" }, clear, h("label", { for: clearId }, "Clear the saved value"));
  const error = h("p", { id: errorId, class: "field-error", hidden: true });
  // Shows what is saved now; the typed value goes once it is saved (or refused).
  const show = (set) => {
    input.value = "";
    clear.checked = false;
    clearBox.hidden = !set;
    state.textContent = set ? "set" : "not set";
    state.className = set ? "badge badge-ok" : "badge";
    input.placeholder = set ? "Saved: type a new value to replace it" : "";
    input.required = Boolean(declaration.required) && !set;
  };
  show(secretIsSet(tool, declaration.key));
  clear.addEventListener("change", () => {
    input.disabled = clear.checked;
    if (clear.checked) input.value = "";
  });
  const label = h("label", { for: id }, declaration.label, " ", state, declaration.required ? h("span", { class: "required" }, " (required)") : null);
  const field = h("div", { class: "field secret" }, label,
    h("p", { id: hintId, class: "hint" }, declaration.description ? `${declaration.description} ` : "", "Secret: only the server uses it, in the requests it makes for the tool; nobody can read it back."),
    input, clearBox, error);
  return { declaration, input, error, field, clear, show: (set) => { input.disabled = false; show(set); } };
}

/** One input per declared setting, filled with the organisation's current values. */
function settingField(tool, declaration, value) {
  const id = `setting-${tool.slug}-${declaration.key}`;
  const hintId = `${id}-hint`;
  const errorId = `${id}-error`;
  if (declaration.secret) return secretField(tool, declaration, id, hintId, errorId);
  const described = [declaration.description ? hintId : null, errorId].filter(Boolean).join(" ");
  let input;
  switch (declaration.type) {
    case "boolean":
      input = h("input", { id, type: "checkbox", "aria-describedby": described, props: { checked: value === true } });
      break;
    case "select":
      input = h("select", { id, "aria-describedby": described, required: Boolean(declaration.required) },
        declaration.required && value !== undefined ? null : h("option", { value: "" }, "— not set —"),
        declaration.options.map((option) => h("option", { value: option, props: { selected: option === value } }, option)));
      break;
    case "number":
      input = h("input", { id, type: "number", step: "any", inputmode: "decimal", "aria-describedby": described, required: Boolean(declaration.required), props: { value: value === undefined ? "" : String(value) } });
      break;
    default:
      input = h("input", { id, type: "text", maxlength: "1000", "aria-describedby": described, required: Boolean(declaration.required), props: { value: value === undefined ? "" : String(value) } });
  }
  const error = h("p", { id: errorId, class: "field-error", hidden: true });
  const label = h("label", { for: id }, declaration.label, declaration.required ? h("span", { class: "required" }, " (required)") : null);
  const field = declaration.type === "boolean"
    ? h("div", { class: "field" }, h("div", { class: "check" }, input, label), declaration.description ? h("p", { id: hintId, class: "hint" }, declaration.description) : null, error)
    : h("div", { class: "field" }, label, declaration.description ? h("p", { id: hintId, class: "hint" }, declaration.description) : null, input, error);
  return { declaration, input, error, field };
}

/**
 * What the form holds, as the settings API takes it: a key left empty is unset; a secret is sent
 * only when typed (to set or replace it) or cleared (`null`), and kept as it is otherwise.
 */
function formValues(fields) {
  const values = {};
  const problems = [];
  for (const { declaration, input, clear } of fields) {
    if (declaration.secret) {
      if (clear?.checked) values[declaration.key] = null;
      else if (input.value !== "") values[declaration.key] = input.value;
      continue;
    }
    switch (declaration.type) {
      case "boolean":
        values[declaration.key] = input.checked;
        break;
      case "number":
        if (input.validity.badInput) problems.push({ path: declaration.key, message: "must be a number" });
        else if (input.value !== "") values[declaration.key] = input.valueAsNumber;
        break;
      default:
        if (input.value !== "") values[declaration.key] = input.value;
    }
  }
  return { values, problems };
}

/** The install settings of one tool: its declared fields, saved for the whole organisation. */
function settingsForm(tool, onSaved) {
  const values = tool.settings ?? {};
  const fields = tool.settingDeclarations.map((declaration) => settingField(tool, declaration, values[declaration.key]));
  const status = h("p", { class: "form-error", role: "alert", hidden: true });
  const save = h("button", { type: "submit", class: "primary small" }, "Save settings");
  const showProblems = (problems) => {
    for (const { error } of fields) {
      error.hidden = true;
      error.textContent = "";
    }
    const unplaced = [];
    for (const problem of problems) {
      const field = fields.find(({ declaration }) => declaration.key === problem.path);
      if (field) {
        field.error.textContent = `${field.declaration.label}: ${problem.message}`;
        field.error.hidden = false;
        field.input.setAttribute("aria-invalid", "true");
      } else {
        unplaced.push(`${problem.path || "settings"}: ${problem.message}`);
      }
    }
    status.textContent = unplaced.join("; ");
    status.hidden = unplaced.length === 0;
    const first = fields.find(({ error }) => !error.hidden);
    first?.input.focus();
  };
  const form = h("form", { class: "stack tool-settings", novalidate: true, "aria-label": `Settings of ${tool.name}`, on: { submit: async (event) => {
    event.preventDefault();
    for (const { input } of fields) input.removeAttribute("aria-invalid");
    const { values: chosen, problems } = formValues(fields);
    if (problems.length) {
      showProblems(problems);
      return;
    }
    save.disabled = true;
    try {
      const saved = await api.setToolSettings(tool.slug, chosen);
      tool.secrets = saved?.secrets ?? tool.secrets;
      for (const field of fields) field.show?.(secretIsSet(tool, field.declaration.key));
      showProblems([]);
      toast(`Settings of ${tool.name} saved.`, "success");
      onSaved(saved);
    } catch (error) {
      if (error.status === 422 && error.errors?.length) showProblems(error.errors);
      else showProblems([{ path: "", message: describeError(error) }]);
    } finally {
      // A typed secret never stays in the page, saved or not.
      for (const field of fields) {
        if (field.declaration.secret) field.input.value = "";
      }
      save.disabled = false;
    }
  } } },
  h("p", { class: "hint" }, tool.settingDeclarations.some((declaration) => declaration.secret)
    ? "These values apply to everyone in your organisation who opens the tool. Those marked secret are write-only and stay on the server; the tool, and so anyone who can open it, reads all the others, so enter passwords and API keys only in secret fields."
    : "These values apply to everyone in your organisation who opens the tool. They are not secret: the tool, and so anyone who can open it, reads them. Never enter passwords or API keys here."),
  fields.map(({ field }) => field),
  status,
  h("div", { class: "actions" }, save));
  return form;
}

export async function renderToolSettings(root) {
  const heading = h("h1", {}, "Settings");
  replace(root, heading, settingsNav("tools"), h("p", { class: "muted" }, "Loading tools…"));
  focusHeading(root);

  const listArea = h("div", {});
  const result = h("div", { class: "upload-result", tabindex: "-1" });
  const file = h("input", { id: "bundle-file", type: "file", accept: ".zip,application/zip", required: true });
  const submit = h("button", { type: "submit", class: "primary" }, "Upload and install");

  const showRefusal = (title, errors, detail) => {
    replace(result, h("div", { class: "refusal", role: "alert" },
      h("h3", {}, title),
      detail ? h("p", {}, detail) : null,
      errors?.length ? refusalList(errors) : null));
    result.focus();
  };

  const form = h("form", { class: "stack", novalidate: true, on: { submit: async (event) => {
    event.preventDefault();
    result.replaceChildren();
    const bundle = file.files?.[0];
    if (!bundle) {
      showRefusal("Choose a .zip bundle first.");
      return;
    }
    if (bundle.size > MAX_BUNDLE_BYTES) {
      showRefusal("This bundle is too large.", [], `It has ${formatBytes(bundle.size)}; a bundle may have at most 10 MB.`);
      return;
    }
    submit.disabled = true;
    submit.textContent = "Uploading…";
    try {
      const installed = await api.uploadTool(bundle);
      const tool = installed.tool;
      const replaced = installed.replaced;
      const message = replaced
        ? `Installed ${tool.name} ${tool.version}, replacing version ${replaced.version}.`
        : `Installed ${tool.name} ${tool.version}.`;
      const declared = tool.settingDeclarations?.length ?? 0;
      replace(result, h("div", { role: "status" },
        h("p", { class: "success-text" }, message, tool.enabled === false ? " It is disabled: enable it below to use it." : ""),
        tool.connect?.length ? h("p", {}, "Besides its own origin, it ", talksTo(tool), ", as its manifest declares.") : null,
        tool.identity ? h("p", {}, `It ${PROVES_IDENTITY}.`) : null,
        declared ? h("p", {}, `It has ${declared} setting${declared === 1 ? "" : "s"} for your organisation: see Settings on its row below.`) : null));
      toast(message, "success");
      form.reset();
      await Promise.all([loadList(), loadTools().catch(() => {})]);
    } catch (error) {
      if (error.status === 413) {
        showRefusal("This bundle is too large.", error.errors, "A bundle may have at most 10 MB as a .zip.");
      } else if (error.status === 422) {
        showRefusal(`${bundle.name} was refused.`, error.errors, error.errors?.length ? null : describeError(error));
      } else {
        showRefusal("The upload failed.", [], describeError(error));
      }
    } finally {
      submit.disabled = false;
      submit.textContent = "Upload and install";
    }
  } } },
  h("div", { class: "field" },
    h("label", { for: "bundle-file" }, "Tool bundle (.zip)"),
    h("p", { class: "hint" }, "manifest.json and the entry page at the root, at most 10 MB. A tool with the same slug is replaced and keeps whether it is enabled."),
    file),
  h("div", { class: "actions" }, submit));

  async function setEnabled(tool, box) {
    box.disabled = true;
    try {
      const updated = await api.setToolEnabled(tool.slug, box.checked);
      toast(`${updated?.name ?? tool.name} ${box.checked ? "enabled" : "disabled"}.`, "success");
      await loadTools().catch(() => {});
    } catch (error) {
      box.checked = !box.checked;
      toast(`Could not change ${tool.name}: ${describeError(error)}`, "error");
    } finally {
      box.disabled = false;
    }
  }

  async function remove(tool, button) {
    const choice = await ask({
      title: `Remove ${tool.name}?`,
      message: "Its files are deleted and it disappears from every user's Tools. Upload the bundle again to bring it back.",
      buttons: [{ label: "Keep it", value: "keep" }, { label: "Remove", value: "remove", kind: "danger" }],
      cancelValue: "keep",
    });
    if (choice !== "remove") return;
    button.disabled = true;
    try {
      await api.removeTool(tool.slug);
      toast(`${tool.name} removed.`, "success");
      await Promise.all([loadList(), loadTools().catch(() => {})]);
    } catch (error) {
      button.disabled = false;
      toast(`Could not remove ${tool.name}: ${describeError(error)}`, "error");
    }
  }

  async function loadList() {
    let tools;
    try {
      tools = await api.installedTools();
    } catch (error) {
      replace(listArea, h("p", { class: "form-error" }, describeError(error)));
      return;
    }
    if (!tools.length) {
      replace(listArea, h("p", { class: "muted" }, "No tools are installed."));
      return;
    }
    const columns = ["Tool", "Type", "Version", "Files", "Installed", "Enabled", "Actions"];
    replace(listArea, h("div", { class: "table-wrap" }, h("table", { class: "data" },
      h("caption", { class: "visually-hidden" }, "Installed tools"),
      h("thead", {}, h("tr", {}, columns.map((c) => h("th", { scope: "col" }, c)))),
      h("tbody", {}, tools.flatMap((tool) => {
        const boxId = `enabled-${tool.slug}`;
        const box = h("input", { id: boxId, type: "checkbox", class: "switch", props: { checked: Boolean(tool.enabled) } });
        box.addEventListener("change", () => setEnabled(tool, box));
        const removeButton = h("button", { type: "button", class: "danger small", "aria-label": `Remove ${tool.name}` }, "Remove");
        removeButton.addEventListener("click", () => remove(tool, removeButton));
        const declared = tool.settingDeclarations?.length > 0;
        const settingsRow = h("tr", { class: "settings-row", id: `settings-${tool.slug}`, hidden: true });
        const settingsButton = declared
          ? h("button", { type: "button", class: "secondary small", "aria-expanded": "false", "aria-controls": `settings-${tool.slug}`, "aria-label": `Settings of ${tool.name}` }, "Settings")
          : null;
        settingsButton?.addEventListener("click", () => {
          const open = settingsRow.hidden;
          settingsButton.setAttribute("aria-expanded", String(open));
          if (open) {
            replace(settingsRow, h("td", { colspan: String(columns.length) }, settingsForm(tool, (saved) => {
              tool.settings = saved?.settings ?? tool.settings;
              tool.secrets = saved?.secrets ?? tool.secrets;
            })));
          }
          settingsRow.hidden = !open;
          if (open) settingsRow.querySelector("input, select")?.focus();
        });
        return [h("tr", {},
          h("th", { scope: "row" }, tool.name, h("span", { class: "sub" }, h("code", {}, tool.slug)), tool.description ? h("span", { class: "sub" }, tool.description) : null, talksTo(tool), provesIdentity(tool)),
          h("td", {}, TOOL_TYPE_LABELS[tool.type] ?? tool.type),
          h("td", {}, tool.version),
          h("td", { class: "nowrap" }, `${tool.fileCount ?? "–"} files`, h("span", { class: "sub" }, formatBytes(tool.totalBytes))),
          h("td", {}, tool.installedAt ? formatDateTime(tool.installedAt) : "–"),
          h("td", {}, h("div", { class: "check" }, box, h("label", { for: boxId }, h("span", { class: "visually-hidden" }, `${tool.name} `), "enabled"))),
          h("td", {}, h("div", { class: "row-actions" }, settingsButton, removeButton))), settingsRow];
      })))));
  }

  replace(root, heading, settingsNav("tools"),
    h("p", { class: "lead" }, "Tools run in sandboxed frames on their own origins. Enabled tools appear under Tools for Office users and above."),
    h("section", { class: "card" }, h("h2", {}, "Upload a tool"), form, result),
    h("section", {}, h("h2", {}, "Installed tools"), listArea));
  focusHeading(root);
  await loadList();
  return {};
}
