// The quote editor's lines: sections and groups, the lines table (with a Draft's quantity and
// rate inputs and Remove buttons) and the totals, and the editing of those lines through the host.

import { h } from "/sdk/ui.js";
import { app } from "../../app.js";
import { describeHostError } from "../../api.js";
import { ask } from "../../dialog.js";
import { formatMoney, formatNumber, formatPercent, formatRate, unitLabel } from "../../format.js";
import { toast } from "../../toast.js";

const UNGROUPED = "Ungrouped";

// The editable numbers of a line. The host checks the bounds and words the errors.
const LINE_FIELDS = {
  qty: { label: "Quantity", min: "0", empty: "Enter a quantity above 0." },
  unitPrice: { label: "Rate", min: "0", empty: "Enter a rate of 0 or more." },
};

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
export function sumCents(lines, field) {
  return lines.reduce((cents, line) => cents + Math.round((line[field] ?? 0) * 100), 0) / 100;
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
export function linesTable(quote, seeCost, edit = null) {
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
        const unit = unitLabel(line.unit);
        const quantity = edit ? lineInput(line, "qty", edit) : [formatNumber(line.qty), null]; // [value, its error]
        // `data-label` names each cell where the table becomes one card per line (narrow screens,
        // app.css); the unit then follows the quantity, in place of its own cell.
        rows.push(h("tr", { class: line.injected ? "line injected" : "line", "data-line-no": String(line.lineNo) },
          h("td", { class: "desc" },
            line.injected ? h("span", { class: "badge badge-task", title: "Added from the product's task sequence" }, "task") : null,
            line.lineType === "cost" ? h("span", { class: "badge" }, "cost") : null,
            line.injected || line.lineType === "cost" ? " " : null,
            line.description,
            parent ? h("span", { class: "sub", id: `line-${line.lineNo}-follows` }, `Quantity follows ${parent.description}`) : null),
          h("td", { class: "code", "data-label": "Code" }, line.productCode ?? ""),
          h("td", { class: "spec", "data-label": "Specification" }, line.specification ?? ""),
          h("td", { class: "loc", "data-label": "Location" }, line.location ?? ""),
          h("td", { class: "num qty", "data-label": "Qty" }, quantity[0], unit ? h("span", { class: "card-unit" }, unit) : null, quantity[1]),
          h("td", { class: "unit", "data-label": "Unit" }, unit),
          h("td", { class: "num rate", "data-label": "Rate" }, edit ? lineInput(line, "unitPrice", edit) : formatMoney(line.unitPrice)),
          h("td", { class: "num tax", "data-label": "Tax" }, formatMoney(line.tax), h("span", { class: "sub" }, formatRate(line.taxRate))),
          h("td", { class: "num total", "data-label": "Total" }, formatMoney(line.total)),
          seeCost ? h("td", { class: "num buy", "data-label": "Buy" }, formatMoney(line.costPrice)) : null,
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

/** The totals; cost and margin only with `seeCost`. */
export function totalsList(quote, seeCost) {
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

/**
 * The editing of a Draft's lines, for the view's `host`, `state` (`quote`, `lineErrors`),
 * `content`, `linesHeading` and `renderSoon`: the `edit` that `linesTable` takes. An input's value
 * is applied with `host.updateLine`, and Remove takes a line with `host.removeLine`.
 */
export function lineEditor({ host, state, content, linesHeading, renderSoon }) {
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

  return { errors: state.lineErrors, commit: commitLine, remove: removeLine };
}
