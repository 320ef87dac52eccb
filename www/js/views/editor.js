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
// On a Draft, each line's quantity and rate are inputs applied with `host.updateLine` (on change,
// blur or Enter), and each line has a Remove button (`host.removeLine`, which also removes the task
// lines the product injected). Like `addLines`, these only change `host.quote` (it becomes dirty);
// Save writes them. The header (customer, date, expiry, type) is not part of the host's quote: "Edit
// details" sends `PATCH /api/v1/quotes/{id}` and then opens the quote again, so it is only offered
// while there are no unsaved line changes.
//
// Field users read quotes only: they get the same view from `GET /api/v1/quotes/{id}`, without
// the host, the Tools menu, Save or Send, inputs or Remove buttons, and without cost prices.

import { app, can, mountOptions } from "../app.js";
import { api, describeError } from "../api.js";
import { ask } from "../dialog.js";
import { h, replace, focusHeading } from "../dom.js";
import { addDays, formatDate, formatMoney, formatNumber, formatPercent, formatRate, unitLabel } from "../format.js";
import { onQuoteEvent } from "../live.js";
import { toast } from "../toast.js";
import { statusBadge } from "./quotes.js";

const UNGROUPED = "Ungrouped";

// The editable numbers of a line. The host checks the bounds and words the errors.
const LINE_FIELDS = {
  qty: { label: "Quantity", min: "0", empty: "Enter a quantity above 0." },
  unitPrice: { label: "Rate", min: "0", empty: "Enter a rate of 0 or more." },
};

// The quote details `PATCH /api/v1/quotes/{id}` changes, by the path its errors name.
const DETAIL_FIELDS = ["customerId", "date", "expiryDays", "quoteType"];
const CUSTOMERS_PAGE_SIZE = 500; // the largest page the API allows

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

/** The heights, in CSS pixels, a quoting extension may give its frame in the tool panel. */
const TOOL_HEIGHT = { min: 240, max: 4000 };

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

/** The value an input starts with: the number as is, with float noise (2.6666666667) cut. */
function inputValue(value) {
  return typeof value === "number" && Number.isFinite(value) ? String(Math.round(value * 1000) / 1000) : "";
}

/**
 * A quantity or rate input for `line`. `edit.errors` holds the messages of refused changes by
 * `data-focus-key`; `edit.commit(line, field, input)` applies the input's value.
 */
function lineInput(line, field, edit) {
  const spec = LINE_FIELDS[field];
  const key = `${field}-${line.lineNo}`;
  const errorId = `line-${line.lineNo}-${field}-error`;
  const error = edit.errors.get(key);
  const describedBy = [error ? errorId : null, line.injected && line.parentLineNo !== undefined ? `line-${line.lineNo}-follows` : null]
    .filter(Boolean).join(" ");
  const input = h("input", {
    type: "number",
    class: "cell-input",
    inputmode: "decimal",
    min: spec.min,
    step: "any",
    value: inputValue(line[field]),
    "aria-label": `${spec.label} of ${line.description}`,
    "aria-invalid": error ? "true" : null,
    "aria-describedby": describedBy || null,
    "data-focus-key": key,
    on: {
      change: () => edit.commit(line, field, input),
      keydown: (event) => {
        if (event.key === "Enter") {
          event.preventDefault();
          edit.commit(line, field, input);
        } else if (event.key === "Escape" && input.value !== input.defaultValue) {
          event.preventDefault();
          input.value = input.defaultValue;
        }
      },
    },
  });
  return [input, error ? h("span", { id: errorId, class: "field-error cell-error" }, error) : null];
}

/** The lines table; with `edit` (a Draft, for a role that may write) quantities and rates are inputs. */
function linesTable(quote, seeCost, edit = null) {
  const columns = ["Description", "Code", "Specification", "Location", "Qty", "Unit", "Rate", "Tax", "Total"];
  if (seeCost) columns.push("Buy");
  if (edit) columns.push("Actions");
  const numeric = new Set(["Qty", "Rate", "Tax", "Total", "Buy"]);
  const byLineNo = new Map(quote.lines.map((line) => [line.lineNo, line]));
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
        const parent = line.injected && line.parentLineNo !== undefined ? byLineNo.get(line.parentLineNo) : null;
        rows.push(h("tr", { class: line.injected ? "line injected" : "line", "data-line-no": String(line.lineNo) },
          h("td", { class: "desc" },
            line.injected ? h("span", { class: "badge badge-task", title: "Added from the product's task sequence" }, "task") : null,
            line.lineType === "cost" ? h("span", { class: "badge" }, "cost") : null,
            line.injected || line.lineType === "cost" ? " " : null,
            line.description,
            parent ? h("span", { class: "sub", id: `line-${line.lineNo}-follows` }, `Quantity follows ${parent.description}`) : null),
          h("td", { class: "code" }, line.productCode ?? ""),
          h("td", {}, line.specification ?? ""),
          h("td", {}, line.location ?? ""),
          h("td", { class: "num" }, edit ? lineInput(line, "qty", edit) : formatNumber(line.qty)),
          h("td", {}, unitLabel(line.unit)),
          h("td", { class: "num" }, edit ? lineInput(line, "unitPrice", edit) : formatMoney(line.unitPrice)),
          h("td", { class: "num" }, formatMoney(line.tax), h("span", { class: "sub" }, formatRate(line.taxRate))),
          h("td", { class: "num" }, formatMoney(line.total)),
          seeCost ? h("td", { class: "num" }, formatMoney(line.costPrice)) : null,
          edit ? h("td", { class: "actions-cell" }, h("button", {
            type: "button",
            class: "secondary small",
            "aria-label": `Remove ${line.description}`,
            "data-focus-key": `remove-${line.lineNo}`,
            on: { click: () => edit.remove(line) },
          }, "Remove")) : null));
      }
    }
    return h("tbody", {}, rows);
  });
  return h("div", { class: "table-wrap" },
    h("table", { class: edit ? "data lines-table editing" : "data lines-table" },
      h("caption", { class: "visually-hidden" }, "Quote lines by section and group"),
      h("thead", {}, h("tr", {}, columns.map((c) => h("th", { scope: "col", class: numeric.has(c) ? "num" : null },
        c === "Actions" ? h("span", { class: "visually-hidden" }, c) : c)))),
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
// Quote details (customer, date, expiry, type)

/** `"2026-11-22T00:00:00Z"` or `"2026-11-22"` → `"2026-11-22"`, as `<input type=date>` takes it. */
function isoDay(value) {
  return String(value ?? "").slice(0, 10);
}

async function loadCustomers() {
  const customers = [];
  for (let page = 1; page <= 20; page += 1) {
    const result = await api.customers(page, CUSTOMERS_PAGE_SIZE);
    customers.push(...result.items);
    if (customers.length >= result.totalCount || result.items.length === 0) break;
  }
  return customers.sort((a, b) => a.name.localeCompare(b.name));
}

/**
 * The "Edit details" form, filled from `quote`. It is kept while it is open (the page renders the
 * lines again around it), so what the user typed survives a re-render; `sync(quote)` disables Save
 * details while the quote has unsaved line changes.
 */
function detailsForm(quote, customers, { onSave, onCancel }) {
  const field = (path, label, control) => {
    const error = h("p", { id: `details-${path}-error`, class: "field-error", hidden: true });
    return { control, error, element: h("div", { class: "field" }, h("label", { for: control.id }, label), control, error) };
  };
  const choices = customers.some((c) => c.id === quote.customerId) ? customers : [{ id: quote.customerId, name: quote.customerName }, ...customers];
  const fields = {
    customerId: field("customerId", "Customer", h("select", { id: "details-customerId" },
      choices.map((c) => h("option", { value: c.id, selected: c.id === quote.customerId }, c.email ? `${c.name} (${c.email})` : c.name)))),
    date: field("date", "Date", h("input", { id: "details-date", type: "date", required: true, value: isoDay(quote.date) })),
    expiryDays: field("expiryDays", "Expiry (days)", h("input", {
      id: "details-expiryDays", type: "number", inputmode: "numeric", min: "1", max: "365", step: "1", required: true, value: String(quote.expiryDays),
    })),
    quoteType: field("quoteType", "Type", h("select", { id: "details-quoteType" },
      ["Quote", "Estimate"].map((type) => h("option", { value: type, selected: type === quote.quoteType }, type)))),
  };
  const hint = h("p", { id: "details-dirty-hint", class: "hint", hidden: true }, "Save your line changes first.");
  const formError = h("p", { class: "form-error", role: "alert", hidden: true });
  const submit = h("button", { type: "submit", class: "primary small" }, "Save details");
  const cancel = h("button", { type: "button", class: "secondary small", on: { click: () => onCancel() } }, "Cancel");
  const element = h("form", {
    class: "details-form",
    novalidate: true,
    on: {
      submit: (event) => {
        event.preventDefault();
        onSave();
      },
      keydown: (event) => {
        if (event.key === "Escape" && !cancel.disabled) {
          event.preventDefault();
          onCancel();
        }
      },
    },
  },
  h("fieldset", {}, h("legend", {}, "Quote details"),
    h("div", { class: "inline-fields" }, Object.values(fields).map((f) => f.element))),
  formError,
  h("div", { class: "actions" }, submit, cancel, hint));

  let busy = false;
  let dirty = false;
  const sync = () => {
    hint.hidden = !dirty;
    submit.disabled = busy || dirty;
    cancel.disabled = busy;
    if (dirty) submit.setAttribute("aria-describedby", hint.id);
    else submit.removeAttribute("aria-describedby");
  };
  return {
    element,
    fields,
    first: fields.customerId.control,
    values: () => Object.fromEntries(Object.entries(fields).map(([path, f]) => [path, f.control.value.trim()])),
    sync(current) {
      dirty = Boolean(current.dirty);
      sync();
    },
    setBusy(value) {
      busy = value;
      sync();
    },
    clearErrors() {
      formError.hidden = true;
      for (const f of Object.values(fields)) {
        f.error.hidden = true;
        f.control.removeAttribute("aria-invalid");
        f.control.removeAttribute("aria-describedby");
      }
    },
    showFieldError(path, message) {
      const f = fields[path];
      f.error.textContent = message;
      f.error.hidden = false;
      f.control.setAttribute("aria-invalid", "true");
      f.control.setAttribute("aria-describedby", f.error.id);
    },
    showFormError(message) {
      formError.textContent = message;
      formError.hidden = false;
    },
  };
}

// ---------------------------------------------------------------------------------------------
// Live events

/** Whether a `quote` event's `by` is the signed-in user. */
function isMine(by) {
  const email = app.context?.userEmail;
  return by?.kind === "user" && typeof by.email === "string" && typeof email === "string"
    && by.email.toLowerCase() === email.toLowerCase();
}

/** Who made a change, for a toast. */
function actorName(by) {
  if (by?.kind === "user" && by.name) return by.name;
  if (by?.kind === "key" && by.name) return `the API key “${by.name}”`;
  return "someone else";
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
    tool: null, // {tool, handle}
    lineErrors: new Map(), // data-focus-key of a line input → why its last value was refused
    details: null, // the open "Edit details" form (see openDetails)
    customers: null, // a promise of the customers, loaded the first time details are edited
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
  const linesHeading = h("h2", { class: "visually-hidden", tabindex: "-1" }, "Lines");
  const lineEdit = { errors: state.lineErrors, commit: commitLine, remove: removeLine };
  let contentTimer = 0;

  function render() {
    clearTimeout(contentTimer);
    contentTimer = 0;
    renderChrome();
    renderContent();
  }

  /**
   * The toolbar at once, the content on the next task: a line input's `change` fires while focus
   * is leaving it (Tab, a click), and the new rows are built once focus has landed, so
   * `renderContent` can put it back on the same input or button.
   */
  function renderSoon() {
    renderChrome();
    if (!contentTimer) {
      contentTimer = setTimeout(() => {
        contentTimer = 0;
        renderContent();
      });
    }
  }

  function renderChrome() {
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
  }

  function renderContent() {
    const q = state.quote;
    const draft = q.status === "Draft";
    const writable = editable && draft;
    if (!writable) closeDetails();
    // Keep focus where it was: the same element if it survives (the details form), else the
    // element with the same `data-focus-key` (a line's input or Remove button).
    const active = document.activeElement;
    const hadFocus = active instanceof HTMLElement && content.contains(active);
    const focusKey = hadFocus ? active.dataset.focusKey : undefined;
    const typed = hadFocus && active instanceof HTMLInputElement && active.value !== active.defaultValue ? active.value : null;
    if (state.preview) {
      replace(content, previewDocument(q, app.context?.tenantName));
    } else {
      replace(content,
        state.details ? state.details.element : headerFacts(q),
        writable ? detailsControls(q) : null,
        linesHeading,
        q.lines.length ? linesTable(q, seeCost, writable ? lineEdit : null) : h("p", { class: "muted empty-lines" },
          editable && draft && extensionTools.length ? "No lines yet. Add some with a tool from the Tools menu." : "No lines."),
        h("h2", { class: "visually-hidden" }, "Totals"),
        totalsList(q, seeCost));
    }
    if (!hadFocus) return;
    if (active.isConnected) {
      active.focus({ preventScroll: true });
    } else if (focusKey) {
      const again = content.querySelector(`[data-focus-key="${CSS.escape(focusKey)}"]`);
      if (again) {
        if (typed !== null && again instanceof HTMLInputElement) again.value = typed;
        again.focus({ preventScroll: true });
      }
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
      if (change.kind === "lineEdited") renderSoon();
      else render();
    });
    cleanups.push(stopChange);
  }

  async function save() {
    if (state.busy) return false;
    state.busy = true;
    render();
    try {
      state.quote = await host.save();
      state.lineErrors.clear();
      toast(`${state.quote.ref} saved.`, "success");
      return true;
    } catch (error) {
      if (error?.code === "UNAUTHENTICATED") app.onSessionEnded?.();
      toast(`Could not save: ${describeHostError(error)}`, "error");
      return false;
    } finally {
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
    try {
      state.quote = await host.send();
      toast(`${state.quote.ref} sent. It is now locked.`, "success");
    } catch (error) {
      if (error?.code === "UNAUTHENTICATED") app.onSessionEnded?.();
      toast(`Could not send: ${describeHostError(error)}`, "error");
    } finally {
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
    state.lineErrors.clear();
    render();
  }

  // --- editing lines ----------------------------------------------------------------------------
  /** Applies a line input's value with `host.updateLine`; a refused value is put back, with why. */
  function commitLine(line, field, input) {
    const key = `${field}-${line.lineNo}`;
    if (input.value === input.defaultValue) {
      if (state.lineErrors.delete(key)) renderSoon();
      return;
    }
    const text = input.value.trim();
    const value = Number(text);
    if (text === "" || !Number.isFinite(value)) {
      refuseLine(key, input, LINE_FIELDS[field].empty);
      return;
    }
    try {
      state.lineErrors.delete(key);
      host.updateLine(line.lineNo, { [field]: value }); // onChange renders
      input.defaultValue = input.value; // applied: a later blur has nothing to apply
    } catch (error) {
      if (error?.code === "UNAUTHENTICATED") app.onSessionEnded?.();
      const detail = (error?.details ?? []).find((d) => d.path === field)?.message;
      // The host words a detail for its field ("must be above 0 …"): name the field.
      const message = detail ? (/^[a-z]/.test(detail) ? `${LINE_FIELDS[field].label} ${detail}.` : detail) : describeHostError(error);
      refuseLine(key, input, message);
    }
  }

  function refuseLine(key, input, message) {
    state.lineErrors.set(key, message);
    input.value = input.defaultValue; // the last good value
    renderSoon();
  }

  /** Removes a line (and the task lines it injected, after asking) with `host.removeLine`. */
  async function removeLine(line) {
    const tasks = state.quote.lines.filter((l) => l.injected && l.parentLineNo === line.lineNo);
    const what = tasks.length ? `${line.description} and its ${tasks.length} task line${tasks.length === 1 ? "" : "s"}` : line.description;
    if (tasks.length) {
      const choice = await ask({
        title: `Remove ${what}?`,
        message: "The task lines came with the product and go with it. Nothing is saved until you Save.",
        buttons: [{ label: "Cancel", value: "cancel" }, { label: "Remove", value: "remove", kind: "danger", autofocus: true }],
        cancelValue: "cancel",
      });
      if (choice !== "remove") return;
    }
    // Focus then goes to the next remaining line's Remove button (else the previous one's).
    const gone = new Set([line.lineNo, ...tasks.map((t) => t.lineNo)]);
    const order = groupLines(state.quote.lines).flatMap((section) => section.groups.flatMap((group) => group.lines)).map((l) => l.lineNo);
    const at = order.indexOf(line.lineNo);
    const next = order.slice(at + 1).find((no) => !gone.has(no)) ?? order.slice(0, Math.max(at, 0)).reverse().find((no) => !gone.has(no));
    try {
      host.removeLine(line.lineNo); // onChange renders
    } catch (error) {
      if (error?.code === "UNAUTHENTICATED") app.onSessionEnded?.();
      toast(`Could not remove ${line.description}: ${describeHostError(error)}`, "error");
      return;
    }
    for (const no of gone) {
      state.lineErrors.delete(`qty-${no}`);
      state.lineErrors.delete(`unitPrice-${no}`);
    }
    toast(`Removed ${what}.`, "success");
    const target = next === undefined ? null : content.querySelector(`[data-focus-key="remove-${next}"]`);
    (target ?? linesHeading).focus();
  }

  // --- editing details (PATCH /api/v1/quotes/{id}) ------------------------------------------------
  function detailsControls(q) {
    if (state.details) {
      state.details.sync(q);
      return null;
    }
    const dirty = Boolean(q.dirty);
    return h("div", { class: "details-actions" },
      h("button", {
        type: "button",
        class: "secondary small",
        disabled: dirty || state.busy,
        "aria-describedby": dirty ? "details-hint" : null,
        "data-focus-key": "edit-details",
        on: { click: () => openDetails() },
      }, "Edit details"),
      dirty ? h("span", { id: "details-hint", class: "hint" }, "Save your line changes first.") : null);
  }

  function focusEditDetails() {
    content.querySelector('[data-focus-key="edit-details"]')?.focus();
  }

  async function openDetails() {
    if (state.details || state.quote.dirty) return;
    state.customers ??= loadCustomers();
    let customers;
    try {
      customers = await state.customers;
    } catch (error) {
      state.customers = null;
      toast(`Could not load the customers: ${describeError(error)}`, "error");
      return;
    }
    if (state.details || state.quote.dirty || state.quote.status !== "Draft") return;
    state.details = detailsForm(state.quote, customers, {
      onSave: () => saveDetails(),
      onCancel: () => {
        closeDetails();
        render();
        focusEditDetails();
      },
    });
    render();
    state.details.first.focus();
  }

  function closeDetails() {
    state.details = null;
  }

  async function saveDetails() {
    const form = state.details;
    if (!form || state.busy) return;
    form.clearErrors();
    // The PATCH changes the stored quote, and showing it means opening the quote again, which would
    // drop unsaved lines: so only a clean quote.
    if (host.quote?.dirty) {
      form.showFormError("Save your line changes first.");
      return;
    }
    const q = state.quote;
    const values = form.values();
    const days = Number(values.expiryDays);
    const problems = [];
    if (!values.customerId) problems.push(["customerId", "Choose a customer."]);
    if (!/^\d{4}-\d{2}-\d{2}$/.test(values.date)) problems.push(["date", "Enter a date."]);
    if (!(values.expiryDays !== "" && Number.isInteger(days) && days >= 1 && days <= 365)) problems.push(["expiryDays", "Enter a whole number of days from 1 to 365."]);
    if (problems.length) {
      for (const [path, message] of problems) form.showFieldError(path, message);
      form.fields[problems[0][0]].control.focus();
      return;
    }
    const body = {};
    if (values.customerId !== q.customerId) body.customerId = values.customerId;
    if (values.date !== isoDay(q.date)) body.date = values.date;
    if (days !== q.expiryDays) body.expiryDays = days;
    if (values.quoteType !== q.quoteType) body.quoteType = values.quoteType;
    if (Object.keys(body).length === 0) {
      closeDetails();
      render();
      focusEditDetails();
      return;
    }

    state.busy = true;
    form.setBusy(true);
    renderChrome();
    try {
      await api.updateQuote(id, body);
    } catch (error) {
      state.busy = false;
      form.setBusy(false);
      renderChrome();
      const placed = (error.errors ?? []).filter((problem) => form.fields[problem.path]);
      const unplaced = (error.errors ?? []).filter((problem) => !form.fields[problem.path]);
      for (const problem of placed) form.showFieldError(problem.path, problem.message);
      if (placed.length === 0 || unplaced.length) {
        form.showFormError(unplaced.length ? unplaced.map((problem) => `${problem.path}: ${problem.message}`).join("; ") : describeHostError(error));
      }
      if (placed.length) form.fields[placed[0].path].control.focus();
      return;
    }
    try {
      if (host.quote?.dirty) {
        // Lines changed while the request was out: keep them, and say how to see the details.
        toast("Details saved. Save your line changes, then reload to see them.", "warning", { action: { label: "Reload", run: reload } });
      } else {
        host.closeQuote({}); // clean, so nothing is discarded
        state.quote = await host.openQuote(id);
        toast("Details saved.", "success");
      }
    } catch (error) {
      toast(`The details were saved, but the quote could not be loaded again: ${describeHostError(error)}`, "error");
    } finally {
      state.busy = false;
      closeDetails();
      if (host.quote?.id === id) state.quote = host.quote;
      render();
      focusEditDetails();
    }
  }

  // --- someone else changed this quote ---------------------------------------------------------
  // Each event names who made the change (`by`). Ours (this user's saves, sends and details) are
  // already on the page, so they are skipped. Known blind spot: the same user in another tab has the
  // same email, so a change made there is skipped too.
  cleanups.push(onQuoteEvent(({ kind, quote: changed, by }) => {
    if (changed.id !== id || kind === "created") return;
    if (isMine(by)) return;
    const what = `${kind === "sent" ? "sent" : "saved"} by ${actorName(by)}`;
    if (!editable) {
      toast(`${changed.ref} was ${what}; showing the latest version.`, "warning");
      reload();
      return;
    }
    toast(`${changed.ref} was ${what}. Reload to see their version${state.quote.dirty ? " (your unsaved changes would be lost)" : ""}.`,
      "warning", { action: { label: "Reload", run: reload } });
  }));

  // --- the extension tool panel ---------------------------------------------------------------
  function openTool(tool) {
    if (state.tool?.tool.slug === tool.slug) {
      state.tool.handle.frame.focus();
      return;
    }
    closeTool(false);
    // The extension sizes its frame to its page, within these bounds.
    const handle = host.mount(toolFrame, { ...mountOptions(tool), autoResize: TOOL_HEIGHT });
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
        message: "The line changes since the last save are only in this page.",
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
      clearTimeout(contentTimer);
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
