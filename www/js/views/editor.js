// The quote editor (`#/quotes/<id>`).
//
// For roles that may edit, the quote is opened in the host module: `host.openQuote(id)` loads it
// with the catalog index, and `host.quote` is from then on the quote as the page shows it, with
// line amounts, totals and `dirty`. A `quoting_extension` tool chosen from the Tools menu is
// mounted next to the editor; its `quotes.addLines` are merged into `host.quote` by the host, which
// tells the page through `host.onChange`, and the page renders again. `host.save()` writes the
// lines; `host.send()` saves and moves the Draft to Sent, after which the quote is locked and
// `addLines` answers `QUOTE_LOCKED`.
//
// Field users read quotes only: they get the same view from `GET /api/v1/quotes/{id}`, without
// the host, the Tools menu, Save or Send, and without cost prices.

import { app, can, mountOptions } from "../app.js";
import { api, describeError } from "../api.js";
import { ask } from "../dialog.js";
import { h, replace, focusHeading } from "../dom.js";
import { addDays, formatDate, formatMoney, formatNumber, formatPercent, formatRate, unitLabel } from "../format.js";
import { onQuoteEvent } from "../live.js";
import { toast } from "../toast.js";
import { statusBadge } from "./quotes.js";

const UNGROUPED = "Ungrouped";
// After our own save or send, the server's event about it may arrive a moment later.
const OWN_CHANGE_GRACE_MS = 4000;

/** The words for a `HostError` or `ApiError`. */
export function describeHostError(error) {
  switch (error?.code) {
    case "UNSAVED_CHANGES":
      return "Save or discard the changes first.";
    case "QUOTE_LOCKED":
    case "CONFLICT":
      return "This quote is no longer a Draft, so it cannot change.";
    case "NOT_FOUND":
      return "This quote does not exist, or it belongs to another organisation.";
    case "INVALID_PARAMS": {
      const details = (error.details ?? error.errors ?? []).map((d) => `${d.path}: ${d.message}`);
      return details.length ? `The server refused the lines: ${details.slice(0, 3).join("; ")}` : error.message;
    }
    default:
      return describeError(error);
  }
}

/**
 * Sections in the order they first appear (a missing or blank section is "Ungrouped"), each with
 * its groups in the order they first appear. A group is the lines sharing a `groupId`; 0 is no
 * group.
 */
export function groupLines(lines) {
  const sections = new Map();
  for (const line of lines) {
    const name = typeof line.section === "string" && line.section.trim() ? line.section.trim() : UNGROUPED;
    if (!sections.has(name)) sections.set(name, new Map());
    const groups = sections.get(name);
    const groupId = line.groupId ?? 0;
    if (!groups.has(groupId)) groups.set(groupId, []);
    groups.get(groupId).push(line);
  }
  return [...sections].map(([name, groups]) => ({
    name,
    groups: [...groups].map(([groupId, groupLinesList]) => ({ groupId, lines: groupLinesList })),
  }));
}

/** Sums money amounts in whole cents, so a subtotal never shows float noise. */
function sumCents(lines, field) {
  return lines.reduce((cents, line) => cents + Math.round((line[field] ?? 0) * 100), 0) / 100;
}

// ---------------------------------------------------------------------------------------------
// Rendering

function headerFacts(quote) {
  const expiry = addDays(quote.date, quote.expiryDays);
  const fact = (term, ...value) => h("div", {}, h("dt", {}, term), h("dd", {}, ...value));
  return h("dl", { class: "facts" },
    fact("Customer", quote.customerName),
    quote.title ? fact("Title", quote.title) : null,
    fact("Date", formatDate(quote.date)),
    fact("Expiry", `${quote.expiryDays} days`, expiry ? h("span", { class: "sub" }, `until ${formatDate(expiry)}`) : null),
    fact("Type", quote.quoteType),
    fact("Status", statusBadge(quote.status)));
}

function linesTable(quote, seeCost) {
  const columns = ["Description", "Code", "Specification", "Location", "Qty", "Unit", "Rate", "Tax", "Total"];
  if (seeCost) columns.push("Buy");
  const numeric = new Set(["Qty", "Rate", "Tax", "Total", "Buy"]);
  const sections = groupLines(quote.lines);
  const bodies = sections.map((section) => {
    const rows = [h("tr", { class: "section-row" },
      h("th", { scope: "rowgroup", colspan: String(columns.length) }, section.name,
        h("span", { class: "sub" }, ` ${formatMoney(sumCents(section.groups.flatMap((g) => g.lines), "total"))}`)))];
    for (const group of section.groups) {
      if (group.groupId !== 0) {
        rows.push(h("tr", { class: "group-row" }, h("th", { scope: "rowgroup", colspan: String(columns.length) }, `Group ${group.groupId}`)));
      }
      for (const line of group.lines) {
        rows.push(h("tr", { class: line.injected ? "line injected" : "line", "data-line-no": String(line.lineNo) },
          h("td", { class: "desc" },
            line.injected ? h("span", { class: "badge badge-task", title: "Added from the product's task sequence" }, "task") : null,
            line.lineType === "cost" ? h("span", { class: "badge" }, "cost") : null,
            line.injected || line.lineType === "cost" ? " " : null,
            line.description),
          h("td", { class: "code" }, line.productCode ?? ""),
          h("td", {}, line.specification ?? ""),
          h("td", {}, line.location ?? ""),
          h("td", { class: "num" }, formatNumber(line.qty)),
          h("td", {}, unitLabel(line.unit)),
          h("td", { class: "num" }, formatMoney(line.unitPrice)),
          h("td", { class: "num" }, formatMoney(line.tax), h("span", { class: "sub" }, formatRate(line.taxRate))),
          h("td", { class: "num" }, formatMoney(line.total)),
          seeCost ? h("td", { class: "num" }, formatMoney(line.costPrice)) : null));
      }
    }
    return h("tbody", {}, rows);
  });
  return h("div", { class: "table-wrap" },
    h("table", { class: "data lines-table" },
      h("caption", { class: "visually-hidden" }, "Quote lines by section and group"),
      h("thead", {}, h("tr", {}, columns.map((c) => h("th", { scope: "col", class: numeric.has(c) ? "num" : null }, c)))),
      bodies));
}

function totalsList(quote, seeCost) {
  const t = quote.totals ?? {};
  const row = (term, value, strong) => h("div", { class: strong ? "total-strong" : null }, h("dt", {}, term), h("dd", {}, value));
  return h("dl", { class: "totals", "aria-label": "Totals" },
    seeCost ? row("Cost", formatMoney(t.cost)) : null,
    seeCost ? row("Margin", formatMoney(t.margin)) : null,
    seeCost ? row("Margin %", formatPercent(t.marginPercent)) : null,
    row("Nett", formatMoney(t.nett)),
    row("Tax", formatMoney(t.tax)),
    row("Total", formatMoney(t.total), true));
}

/** What the customer sees: sections with their lines and subtotals; no cost, no margin. */
export function previewDocument(quote, tenantName) {
  const expiry = addDays(quote.date, quote.expiryDays);
  return h("article", { class: "preview", "aria-label": "Customer preview" },
    h("header", { class: "preview-head" },
      h("div", {}, h("p", { class: "preview-from" }, tenantName ?? ""), h("h2", {}, `${quote.quoteType} ${quote.ref}`)),
      h("dl", { class: "facts" },
        h("div", {}, h("dt", {}, "For"), h("dd", {}, quote.customerName)),
        h("div", {}, h("dt", {}, "Date"), h("dd", {}, formatDate(quote.date))),
        expiry ? h("div", {}, h("dt", {}, "Valid until"), h("dd", {}, formatDate(expiry))) : null)),
    quote.title ? h("p", { class: "lead" }, quote.title) : null,
    quote.lines.length === 0 ? h("p", { class: "muted" }, "No lines yet.") : null,
    groupLines(quote.lines).map((section) => {
      const lines = section.groups.flatMap((group) => group.lines);
      return h("section", { class: "preview-section" },
        h("h3", {}, section.name),
        h("div", { class: "table-wrap" }, h("table", { class: "data" },
          h("thead", {}, h("tr", {},
            h("th", { scope: "col" }, "Description"),
            h("th", { scope: "col", class: "num" }, "Qty"),
            h("th", { scope: "col" }, "Unit"),
            h("th", { scope: "col", class: "num" }, "Rate"),
            h("th", { scope: "col", class: "num" }, "Amount"))),
          h("tbody", {}, lines.map((line) => h("tr", {},
            h("td", {}, line.description,
              line.specification ? h("span", { class: "sub" }, line.specification) : null,
              line.location ? h("span", { class: "sub" }, line.location) : null),
            h("td", { class: "num" }, formatNumber(line.qty)),
            h("td", {}, unitLabel(line.unit)),
            h("td", { class: "num" }, formatMoney(line.unitPrice)),
            h("td", { class: "num" }, formatMoney(line.nett))))),
          h("tfoot", {}, h("tr", {},
            h("th", { scope: "row", colspan: "4" }, `${section.name} subtotal`),
            h("td", { class: "num" }, formatMoney(sumCents(lines, "nett"))))))));
    }),
    h("dl", { class: "totals" },
      h("div", {}, h("dt", {}, "Nett"), h("dd", {}, formatMoney(quote.totals?.nett))),
      h("div", {}, h("dt", {}, "Tax"), h("dd", {}, formatMoney(quote.totals?.tax))),
      h("div", { class: "total-strong" }, h("dt", {}, "Total"), h("dd", {}, formatMoney(quote.totals?.total)))));
}

// ---------------------------------------------------------------------------------------------
// The view

export async function renderEditor(root, { id }) {
  const editable = can("editQuote");
  const seeCost = can("seeCost");
  const host = app.host;

  replace(root, h("h1", {}, "Quote"), h("p", { class: "muted" }, "Opening the quote…"));
  focusHeading(root);

  let quote;
  try {
    if (editable) {
      if (host.quote && host.quote.id !== id) host.closeQuote({ discard: true });
      quote = host.quote?.id === id ? host.quote : await host.openQuote(id);
    } else {
      quote = await api.quote(id);
    }
  } catch (error) {
    if (error?.code === "UNAUTHENTICATED") app.onSessionEnded?.();
    replace(root, h("h1", {}, "Quote"), h("p", { class: "form-error" }, describeHostError(error)),
      h("p", {}, h("a", { href: "#/quotes" }, "Back to quotes")));
    return {};
  }

  const state = {
    quote,
    preview: false,
    busy: false,
    ownChangeUntil: 0,
    tool: null, // {tool, handle}
  };
  const cleanups = [];

  // --- fixed parts: heading, toolbar, tool panel -------------------------------------------
  const title = h("h1", {});
  const dirtyBadge = h("span", { class: "badge badge-warning dirty", hidden: true }, "Unsaved changes");
  const dirtyStatus = h("span", { class: "visually-hidden", role: "status" });
  const saveButton = h("button", { type: "button", class: "primary", on: { click: () => save() } }, "Save");
  const sendButton = h("button", { type: "button", class: "secondary", on: { click: () => send() } }, "Send Quote");
  const previewButton = h("button", { type: "button", class: "secondary", "aria-pressed": "false", on: { click: () => togglePreview() } }, "Preview");
  const printButton = h("button", { type: "button", class: "secondary", hidden: true, on: { click: () => window.print() } }, "Print");
  const lockedNote = h("p", { class: "notice", hidden: true });
  const content = h("div", { class: "editor-content" });

  const extensionTools = editable ? app.tools.filter((tool) => tool.type === "quoting_extension") : [];
  const menuId = `tools-menu-${Math.random().toString(36).slice(2, 8)}`;
  const menuButton = h("button", { type: "button", class: "secondary", "aria-expanded": "false", "aria-controls": menuId }, "Tools ▾");
  const menu = h("ul", { id: menuId, class: "menu", hidden: true },
    extensionTools.map((tool) => h("li", {}, h("button", { type: "button", class: "menu-item", on: { click: () => { closeMenu(); openTool(tool); } } },
      h("span", { class: "menu-title" }, tool.name), h("span", { class: "sub" }, tool.description)))));
  const menuWrap = h("div", { class: "menu-wrap" }, menuButton, menu);
  const openMenu = () => {
    menu.hidden = false;
    menuButton.setAttribute("aria-expanded", "true");
    menu.querySelector("button")?.focus();
  };
  const closeMenu = (focusButton = false) => {
    menu.hidden = true;
    menuButton.setAttribute("aria-expanded", "false");
    if (focusButton) menuButton.focus();
  };
  menuButton.addEventListener("click", () => (menu.hidden ? openMenu() : closeMenu()));
  menuWrap.addEventListener("keydown", (event) => {
    if (event.key === "Escape" && !menu.hidden) {
      event.stopPropagation();
      closeMenu(true);
    }
    if ((event.key === "ArrowDown" || event.key === "ArrowUp") && !menu.hidden) {
      event.preventDefault();
      const items = [...menu.querySelectorAll("button")];
      const index = items.indexOf(document.activeElement);
      const nextIndex = event.key === "ArrowDown" ? (index + 1) % items.length : (index - 1 + items.length) % items.length;
      items[nextIndex]?.focus();
    }
  });
  const onDocumentClick = (event) => {
    if (!menuWrap.contains(event.target)) closeMenu();
  };
  document.addEventListener("click", onDocumentClick);
  cleanups.push(() => document.removeEventListener("click", onDocumentClick));

  const toolTitle = h("h2", { id: `${menuId}-title` }, "Tool");
  const toolFrame = h("div", { class: "tool-frame" });
  const toolPanel = h("aside", { class: "tool-panel", "aria-labelledby": `${menuId}-title`, hidden: true },
    h("div", { class: "panel-head" }, toolTitle, h("button", { type: "button", class: "secondary small", on: { click: () => closeTool(true) } }, "Close")),
    toolFrame);

  const toolbar = h("div", { class: "toolbar", role: "group", "aria-label": "Quote actions" },
    editable ? saveButton : null,
    editable ? sendButton : null,
    previewButton,
    printButton,
    extensionTools.length ? menuWrap : null);

  const layout = h("div", { class: "editor-layout" },
    h("section", { class: "editor", "aria-labelledby": "editor-title" },
      h("div", { class: "page-head" }, title, dirtyBadge, dirtyStatus),
      toolbar,
      lockedNote,
      content),
    toolPanel);
  title.id = "editor-title";
  replace(root, h("p", { class: "crumbs" }, h("a", { href: "#/quotes" }, "← Quotes")), layout);

  // --- rendering ----------------------------------------------------------------------------
  function render() {
    const q = state.quote;
    title.textContent = `${q.quoteType} ${q.ref}`;
    const draft = q.status === "Draft";
    const dirty = Boolean(q.dirty);
    dirtyBadge.hidden = !dirty;
    dirtyStatus.textContent = dirty ? "Unsaved changes" : "";
    saveButton.disabled = state.busy || !draft || !dirty;
    sendButton.disabled = state.busy || !draft;
    lockedNote.hidden = draft;
    lockedNote.textContent = draft ? "" : `This quote is ${q.status}, so its lines are locked.`;
    previewButton.setAttribute("aria-pressed", String(state.preview));
    previewButton.textContent = state.preview ? "Back to editor" : "Preview";
    printButton.hidden = !state.preview;
    if (state.preview) {
      replace(content, previewDocument(q, app.context?.tenantName));
    } else {
      replace(content,
        headerFacts(q),
        h("h2", { class: "visually-hidden" }, "Lines"),
        q.lines.length ? linesTable(q, seeCost) : h("p", { class: "muted empty-lines" },
          editable && draft && extensionTools.length ? "No lines yet. Add some with a tool from the Tools menu." : "No lines."),
        h("h2", { class: "visually-hidden" }, "Totals"),
        totalsList(q, seeCost));
    }
  }

  function togglePreview() {
    state.preview = !state.preview;
    render();
  }

  // --- the host: changes, save, send --------------------------------------------------------
  if (editable) {
    const stopChange = host.onChange((changed, change) => {
      if (change.kind === "closed" || !changed || changed.id !== id) return;
      state.quote = changed;
      render();
    });
    cleanups.push(stopChange);
  }

  const markOwn = () => {
    state.ownChangeUntil = Number.POSITIVE_INFINITY;
  };
  const ownDone = () => {
    state.ownChangeUntil = Date.now() + OWN_CHANGE_GRACE_MS;
  };

  async function save() {
    if (state.busy) return false;
    state.busy = true;
    render();
    markOwn();
    try {
      state.quote = await host.save();
      toast(`${state.quote.ref} saved.`, "success");
      return true;
    } catch (error) {
      if (error?.code === "UNAUTHENTICATED") app.onSessionEnded?.();
      toast(`Could not save: ${describeHostError(error)}`, "error");
      return false;
    } finally {
      ownDone();
      state.busy = false;
      if (host.quote?.id === id) state.quote = host.quote;
      render();
    }
  }

  async function send() {
    if (state.busy) return;
    const choice = await ask({
      title: `Send ${state.quote.ref}?`,
      message: "Sending saves any changes and locks the quote: its lines can no longer change.",
      buttons: [
        { label: "Cancel", value: "cancel" },
        { label: "Send Quote", value: "send", kind: "primary", autofocus: true },
      ],
      cancelValue: "cancel",
    });
    if (choice !== "send") return;
    state.busy = true;
    render();
    markOwn();
    try {
      state.quote = await host.send();
      toast(`${state.quote.ref} sent. It is now locked.`, "success");
    } catch (error) {
      if (error?.code === "UNAUTHENTICATED") app.onSessionEnded?.();
      toast(`Could not send: ${describeHostError(error)}`, "error");
    } finally {
      ownDone();
      state.busy = false;
      if (host.quote?.id === id) state.quote = host.quote;
      render();
    }
  }

  async function reload() {
    if (editable) {
      if (state.quote.dirty) {
        const choice = await ask({
          title: "Discard your changes?",
          message: "Loading the latest version replaces the lines you have not saved.",
          buttons: [{ label: "Keep mine", value: "stay" }, { label: "Discard and reload", value: "discard", kind: "danger" }],
          cancelValue: "stay",
        });
        if (choice !== "discard") return;
      }
      try {
        host.closeQuote({ discard: true });
        state.quote = await host.openQuote(id);
      } catch (error) {
        toast(`Could not reload: ${describeHostError(error)}`, "error");
      }
    } else {
      try {
        state.quote = await api.quote(id);
      } catch (error) {
        toast(`Could not reload: ${describeHostError(error)}`, "error");
      }
    }
    render();
  }

  // --- someone else changed this quote ---------------------------------------------------------
  cleanups.push(onQuoteEvent(({ kind, quote: changed }) => {
    if (changed.id !== id || kind === "created") return;
    if (state.busy || Date.now() < state.ownChangeUntil) return; // our own save or send
    const what = kind === "sent" ? "sent" : "saved";
    if (!editable) {
      toast(`${changed.ref} was ${what} by someone else; showing the latest version.`, "warning");
      reload();
      return;
    }
    toast(`${changed.ref} was ${what} by someone else. Reload to see their version${state.quote.dirty ? " (your unsaved changes would be lost)" : ""}.`,
      "warning", { action: { label: "Reload", run: reload } });
  }));

  // --- the extension tool panel ---------------------------------------------------------------
  function openTool(tool) {
    if (state.tool?.tool.slug === tool.slug) {
      state.tool.handle.frame.focus();
      return;
    }
    closeTool(false);
    const handle = host.mount(toolFrame, mountOptions(tool));
    state.tool = { tool, handle };
    toolTitle.textContent = tool.name;
    toolPanel.hidden = false;
    layout.classList.add("with-tool");
    handle.frame.focus();
  }

  function closeTool(focusMenu) {
    if (!state.tool) return;
    state.tool.handle.unmount();
    state.tool.handle.free();
    state.tool = null;
    toolFrame.replaceChildren();
    toolPanel.hidden = true;
    layout.classList.remove("with-tool");
    if (focusMenu) menuButton.focus();
  }

  // --- leaving --------------------------------------------------------------------------------
  const onBeforeUnload = (event) => {
    if (editable && host.quote?.dirty) {
      event.preventDefault();
      event.returnValue = "";
    }
  };
  window.addEventListener("beforeunload", onBeforeUnload);
  cleanups.push(() => window.removeEventListener("beforeunload", onBeforeUnload));

  render();
  focusHeading(root);

  return {
    async beforeLeave() {
      if (!editable || !host.quote?.dirty) return true;
      const choice = await ask({
        title: `Leave ${state.quote.ref} with unsaved changes?`,
        message: "The lines added since the last save are only in this page.",
        buttons: [
          { label: "Stay", value: "stay" },
          { label: "Discard", value: "discard", kind: "danger" },
          { label: "Save", value: "save", kind: "primary", autofocus: true },
        ],
        cancelValue: "stay",
      });
      if (choice === "save") return save();
      return choice === "discard";
    },
    dispose() {
      closeTool(false);
      for (const cleanup of cleanups) cleanup();
      if (editable && host.quote?.id === id) {
        try {
          host.closeQuote({ discard: true });
        } catch (error) {
          console.warn("closeQuote failed", error);
        }
      }
    },
  };
}
