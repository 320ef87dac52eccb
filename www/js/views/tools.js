// Tools: the enabled tools of the tenant. A `standalone` tool opens in the sidebar next to
// whatever page is shown (`#/tools/<slug>` opens it directly); a `quoting_extension` opens from
// the Tools menu of a quote's editor, because it works on the open quote.

import { h, replace } from "/sdk/ui.js";
import { app, loadTools } from "../app.js";
import { describeError } from "../api.js";
import { focusHeading } from "../dom.js";
import { TOOL_TYPE_LABELS } from "../format.js";
import { openStandaloneTool, sidebarToolSlug } from "../sidebar.js";
import { toast } from "../toast.js";

export async function renderTools(root, { slug }) {
  replace(root, h("h1", {}, "Tools"), h("p", { class: "muted" }, "Loading tools…"));
  focusHeading(root);
  try {
    await loadTools();
  } catch (error) {
    replace(root, h("h1", {}, "Tools"), h("p", { class: "form-error" }, describeError(error)));
    return {};
  }
  const list = h("ul", { class: "cards" }, app.tools.map((tool) => h("li", { class: "card" },
    h("h2", {}, tool.name),
    h("p", { class: "meta" },
      h("span", { class: "badge" }, TOOL_TYPE_LABELS[tool.type] ?? tool.type),
      ` version ${tool.version}`,
      tool.dev ? h("span", { class: "badge badge-warning" }, "dev folder") : null),
    h("p", {}, tool.description),
    tool.type === "standalone"
      ? h("button", { type: "button", class: "primary", on: { click: () => openStandaloneTool(tool) } }, `Open ${tool.shortName}`)
      : h("p", { class: "hint" }, "Opens from the Tools menu of a Draft quote."),
  )));
  replace(root,
    h("h1", {}, "Tools"),
    h("p", { class: "lead" }, "Standalone tools open in a panel beside the page; quoting extensions open inside the quote editor."),
    app.tools.length ? list : h("p", { class: "muted" }, "No tools are enabled. An Admin can upload and enable tools in Settings → Tools."),
  );
  focusHeading(root);
  if (slug) {
    const tool = app.tools.find((candidate) => candidate.slug === slug);
    if (!tool) toast(`No enabled tool is called “${slug}”.`, "warning");
    else if (tool.type !== "standalone") toast(`${tool.name} works on a quote: open it from a quote's Tools menu.`, "warning");
    else if (sidebarToolSlug() !== slug) openStandaloneTool(tool);
  }
  return {};
}
