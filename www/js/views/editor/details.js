// The quote editor's details (customer, date, expiry, type): the facts above the lines, and the
// "Edit details" form, which sends `PATCH /api/v1/quotes/{id}` and then opens the quote again.

import { h } from "/sdk/ui.js";
import { api, describeError, describeHostError } from "../../api.js";
import { addDays, formatDate } from "../../format.js";
import { toast } from "../../toast.js";
import { statusBadge } from "../quotes.js";

const CUSTOMERS_PAGE_SIZE = 500; // the largest page the API allows

/** The quote's details, as facts above its lines. */
export function headerFacts(quote) {
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

/** `"2026-11-22T00:00:00Z"` or `"2026-11-22"` → `"2026-11-22"`, as `<input type=date>` takes it. */
function isoDay(value) {
  return String(value ?? "").slice(0, 10);
}

/** The customers to choose from (20 pages at most), by name. */
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

/**
 * The editing of the details, for the view (`id`, `host`, `state` with `quote`, `busy`,
 * `details` (the open form) and `customers`, `content`, `render`, `renderChrome`, `reload`).
 * `controls(quote)` is the "Edit details" button (or keeps the open form in step), `close()`
 * drops the form.
 */
export function detailsEditor({ id, host, state, content, render, renderChrome, reload }) {
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

  return { controls: detailsControls, close: closeDetails };
}
