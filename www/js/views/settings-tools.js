// Settings → Tools (Admin and Super User): upload a tool bundle (.zip), see every installed tool
// with its type and version, enable or disable it, remove it. A refused bundle lists each problem
// with the entry it concerns and the rule it breaks.

import { loadTools } from "../app.js";
import { api, describeError } from "../api.js";
import { ask } from "../dialog.js";
import { h, replace, focusHeading } from "../dom.js";
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
      replace(result, h("p", { class: "success-text", role: "status" }, message,
        tool.enabled === false ? " It is disabled: enable it below to use it." : ""));
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
    replace(listArea, h("div", { class: "table-wrap" }, h("table", { class: "data" },
      h("caption", { class: "visually-hidden" }, "Installed tools"),
      h("thead", {}, h("tr", {}, ["Tool", "Type", "Version", "Files", "Installed", "Enabled", "Actions"].map((c) => h("th", { scope: "col" }, c)))),
      h("tbody", {}, tools.map((tool) => {
        const boxId = `enabled-${tool.slug}`;
        const box = h("input", { id: boxId, type: "checkbox", class: "switch", props: { checked: Boolean(tool.enabled) } });
        box.addEventListener("change", () => setEnabled(tool, box));
        const removeButton = h("button", { type: "button", class: "danger small", "aria-label": `Remove ${tool.name}` }, "Remove");
        removeButton.addEventListener("click", () => remove(tool, removeButton));
        return h("tr", {},
          h("th", { scope: "row" }, tool.name, h("span", { class: "sub" }, h("code", {}, tool.slug)), tool.description ? h("span", { class: "sub" }, tool.description) : null),
          h("td", {}, TOOL_TYPE_LABELS[tool.type] ?? tool.type),
          h("td", {}, tool.version),
          h("td", { class: "nowrap" }, `${tool.fileCount ?? "–"} files`, h("span", { class: "sub" }, formatBytes(tool.totalBytes))),
          h("td", {}, tool.installedAt ? formatDateTime(tool.installedAt) : "–"),
          h("td", {}, h("div", { class: "check" }, box, h("label", { for: boxId }, h("span", { class: "visually-hidden" }, `${tool.name} `), "enabled"))),
          h("td", {}, removeButton));
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
