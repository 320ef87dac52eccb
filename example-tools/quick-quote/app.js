// Quick quote: an example `standalone` tool.
//
// It demonstrates how a tool creates a new quote:
// - paging through customers with bridge.customers.list() and filtering the loaded page;
// - choosing the customer by email with `upsertByEmail` (the bridge has no customer id field);
// - loading the product catalog once (the paging "reference pattern") and prefilling prices;
// - checking the quotes.create limits before calling, and still showing INVALID_PARAMS details
//   from the app next to the fields they name;
// - turning a BridgeError into words a user understands;
// - taking the user to the new quote with bridge.ui.openQuote() where the app offers it (an
//   extension beyond 2.1.0), or else with a link;
// - keeping only preferences (never quote contents) in localStorage.
//
// It is an ES module, so it runs in strict mode and defines no globals. What every tool page
// needs (money in the tenant's culture, error words, field problems, paging) comes from the
// platform's page helpers at /sdk/ui.js.

import {
  ERROR_WORDS, bridgeReady, bySku, clearErrorsOnEdit, clearFieldErrors, describeError, formatter, h,
  loadAllInView, loadPreferences, readNumber, repeatedFields, savePreferences, showFieldErrors,
  showStatus,
} from "/sdk/ui.js";

const PREFERENCES_KEY = "quick-quote:preferences";
const DEFAULT_TAX_RATE = 15;

const CUSTOMER_PAGE_SIZE = 20;
// The rules quotes.create applies. Checking them here gives friendlier messages sooner.
const LIMITS = { maxLines: 200, maxQty: 10000, maxUnitPrice: 1000000 };
const UNIT_LABELS = { T_SQUARE_METRE: "per m²", T_LINEAR_METRE: "per metre", T_ITEM: "each" };
// The words this tool says otherwise than the helpers' table.
const WORDS = {
  ...ERROR_WORDS,
  NOT_ALLOWED: "Your role doesn't allow creating quotes. Ask an administrator if you need to.",
  NOT_FOUND: "Something this tool refers to no longer exists. Reload the list and try again.",
  // A timeout doesn't say whether the app acted, and quotes.create has no idempotency key.
  TIMEOUT: "The app took too long to answer. The quote may still have been created: "
    + "check the app's quote list before trying again.",
};

const $ = (id) => document.getElementById(id);
const ui = {
  greeting: $("greeting"),
  status: $("status"),
  form: $("quote-form"),
  modeList: $("mode-list"),
  modeEmail: $("mode-email"),
  picker: $("customer-picker"),
  byEmail: $("customer-by-email"),
  customerFilter: $("customer-filter"),
  customersState: $("customers-state"),
  customersRetry: $("customers-retry"),
  customers: $("customers"),
  customersPrev: $("customers-prev"),
  customersNext: $("customers-next"),
  customersPage: $("customers-page"),
  customerSelected: $("customer-selected"),
  customerEmail: $("customer-email"),
  customerName: $("customer-name"),
  customerPhone: $("customer-phone"),
  catalogStatus: $("catalog-status"),
  catalogProgress: $("catalog-progress"),
  catalogRetry: $("catalog-retry"),
  lines: $("lines"),
  lineTemplate: $("line-template"),
  productCodes: $("product-codes"),
  addLine: $("add-line"),
  lineCount: $("line-count"),
  title: $("title"),
  taxRate: $("tax-rate"),
  create: $("create"),
  result: $("result"),
  resultRef: $("result-ref"),
  resultTotal: $("result-total"),
  resultLink: $("result-link"),
  resultOpen: $("result-open"),
  startAnother: $("start-another"),
};

const state = {
  connected: false,
  busy: false,
  format: formatter(undefined),
  // The product catalog by SKU (bySku). Kept in memory only, for as long as the page is open.
  catalog: null,
  customerPage: null,
  // Counts customer page requests, so a slow answer for an old page can't replace a newer one.
  customerRequest: 0,
  customer: null,
  // The last quotes.create result, which "Open the quote" opens.
  created: null,
};

// ---------------------------------------------------------------------------------------------
// Feedback and preferences

/** A sentence a user can act on, for any BridgeError code (and for our own bugs). */
function describe(error) {
  return describeError(error, WORDS);
}

/** Shows feedback in the page: the sandbox has no alert(), and a toast is friendlier anyway. */
function setStatus(message, kind = "info") {
  showStatus(ui.status, message, kind);
}

// localStorage is per tool origin. Only preferences live there: the quote belongs to the app.
function savedTaxRate() {
  const { taxRate } = loadPreferences(PREFERENCES_KEY);
  return Number.isFinite(taxRate) ? taxRate : DEFAULT_TAX_RATE;
}

function saveTaxRatePreference() {
  const taxRate = ui.taxRate.valueAsNumber;
  if (ui.taxRate.checkValidity() && Number.isFinite(taxRate)) {
    savePreferences(PREFERENCES_KEY, { taxRate });
  }
}

// ---------------------------------------------------------------------------------------------
// Customers

function customerMode() {
  return ui.modeEmail.checked ? "email" : "list";
}

function showCustomerMode() {
  ui.picker.hidden = customerMode() !== "list";
  ui.byEmail.hidden = customerMode() !== "email";
}

async function showCustomerPage(page) {
  const request = ++state.customerRequest;
  ui.customersState.textContent = "Loading customers…";
  ui.customersRetry.hidden = true;
  ui.customersPrev.disabled = true;
  ui.customersNext.disabled = true;
  try {
    const result = await bridge.customers.list({ page, pageSize: CUSTOMER_PAGE_SIZE });
    if (request !== state.customerRequest) {
      return; // The user has asked for another page since.
    }
    state.customerPage = result;
    renderCustomers();
  } catch (error) {
    if (request === state.customerRequest) {
      ui.customersState.textContent = describe(error);
      ui.customersRetry.hidden = false;
      ui.customersRetry.dataset.page = String(page);
    }
  } finally {
    if (request === state.customerRequest) {
      updatePager();
    }
  }
}

function updatePager() {
  const result = state.customerPage;
  if (!result) {
    ui.customersPage.textContent = "";
    ui.customersPrev.disabled = true;
    ui.customersNext.disabled = true;
    return;
  }
  const pages = Math.max(1, Math.ceil(result.totalCount / result.pageSize));
  ui.customersPage.textContent = `Page ${result.page} of ${pages}`;
  ui.customersPrev.disabled = result.page <= 1;
  ui.customersNext.disabled = result.page >= pages;
}

function customerMatches(customer, filter) {
  return [customer.name, customer.email, customer.phone]
    .some((text) => text && text.toLowerCase().includes(filter));
}

/** The loaded page, filtered by what is typed; radios built as DOM, so names stay text. */
function renderCustomers() {
  const { items } = state.customerPage;
  const filter = ui.customerFilter.value.trim().toLowerCase();
  const shown = filter ? items.filter((customer) => customerMatches(customer, filter)) : items;
  const legend = ui.customers.querySelector("legend");
  ui.customers.replaceChildren(legend, ...shown.map(customerOption));
  if (items.length === 0) {
    ui.customersState.textContent = "There are no customers yet. Enter an email address instead.";
  } else if (shown.length === 0) {
    const text = ui.customerFilter.value.trim();
    ui.customersState.textContent = `No customer on this page matches "${text}". Try another page.`;
  } else {
    ui.customersState.textContent = `${shown.length} of ${items.length} customers on this page.`;
  }
}

function customerOption(customer) {
  const id = `customer-${customer.id}`;
  const input = h("input", {
    type: "radio",
    name: "customer",
    id,
    value: customer.id,
    // quotes.create finds an existing customer by email only, so one without an email can't be
    // chosen here: sending just the name would create a second customer of that name.
    props: { checked: Boolean(state.customer && state.customer.id === customer.id), disabled: !customer.email },
    on: { change: () => selectCustomer(customer) },
  });
  return h("div", { class: "check" }, input,
    h("label", { for: id },
      h("span", { class: "name" }, customer.name),
      h("span", { class: "hint" }, customer.email || "No email on file, so it can't be picked")));
}

function selectCustomer(customer) {
  state.customer = customer;
  ui.customerSelected.textContent = customer
    ? `Quote for ${customer.name} (${customer.email}).`
    : "No customer picked yet.";
}

// ---------------------------------------------------------------------------------------------
// Lines

/** The lines of the form, each a copy of the line template. */
const lineFields = repeatedFields({
  template: ui.lineTemplate,
  container: ui.lines,
  prefix: "line",
  noun: "line",
  focus: "sku",
  onAdd: (line) => {
    // Whether the unit price still holds the catalog price we filled in (not the user's own).
    line.pricePrefilled = false;
    line.fields.sku.setAttribute("aria-describedby", line.product.id);
    line.fields.sku.addEventListener("input", () => updateLineProduct(line));
    line.fields.unitPrice.addEventListener("input", () => {
      line.pricePrefilled = false;
    });
    updateLineProduct(line);
  },
  onRenumber: showLineCount,
});

function showLineCount(entries) {
  const full = entries.length >= LIMITS.maxLines;
  ui.addLine.disabled = full || state.busy;
  ui.lineCount.textContent = full
    ? `A quote holds at most ${LIMITS.maxLines} lines.`
    : `${entries.length} of at most ${LIMITS.maxLines} lines.`;
}

/** Names the product a SKU resolves to, and fills in its price unless the user typed one. */
function updateLineProduct(line) {
  const { sku, unitPrice, description } = line.fields;
  const product = state.catalog?.find(sku.value);
  description.placeholder = product ? product.name : "";
  if (product) {
    const unit = UNIT_LABELS[product.unit] || "";
    line.product.textContent = `${product.name}, ${state.format.money(product.price)} ${unit}`.trim();
    if (unitPrice.value === "" || line.pricePrefilled) {
      unitPrice.value = String(product.price);
      line.pricePrefilled = true;
    }
  } else if (sku.value.trim() && state.catalog) {
    line.product.textContent = "Not in the catalog: it becomes a free-form line.";
  } else if (sku.value.trim()) {
    line.product.textContent = "The catalog is still loading…";
  } else {
    line.product.textContent = "Optional: leave empty for a free-form line.";
  }
}

// ---------------------------------------------------------------------------------------------
// Reading and checking the form

function readCustomer(errors) {
  if (customerMode() === "list") {
    if (!state.customer) {
      errors.push([ui.customers, "Pick a customer, or enter an email address instead."]);
      return {};
    }
    return { customerEmail: state.customer.email, customerName: state.customer.name };
  }
  const customerEmail = ui.customerEmail.value.trim();
  if (!customerEmail) {
    errors.push([ui.customerEmail, "Enter the customer's email address."]);
  } else if (!ui.customerEmail.checkValidity()) {
    errors.push([ui.customerEmail, "Enter an email address like name@example.com."]);
  }
  const customer = { customerEmail };
  const name = ui.customerName.value.trim();
  const phone = ui.customerPhone.value.trim();
  if (name) {
    customer.customerName = name;
  }
  if (phone) {
    customer.customerPhone = phone;
  }
  return customer;
}

function readLine(line, taxRate, errors) {
  const { fields } = line;
  const sku = fields.sku.value.trim();
  const product = state.catalog?.find(sku);
  const description = fields.description.value.trim() || (product ? product.name : "");
  if (!description) {
    errors.push([fields.description, "Describe the line, or enter a catalog SKU above."]);
  }
  const request = {
    description,
    qty: readNumber(fields.qty, errors, { min: 0, max: LIMITS.maxQty, above: true }),
    unitPrice: readNumber(fields.unitPrice, errors, { max: LIMITS.maxUnitPrice }),
    // quotes.create wants a decimal fraction (0.15), unlike addLines, which also takes 15.
    taxRate: taxRate / 100,
  };
  // The app links a line whose productCode matches an active product's SKU; any other code is
  // kept on a free-form line. Sending the catalog's spelling keeps codes tidy.
  if (sku) {
    request.productCode = product ? product.sku : sku;
  }
  return request;
}

/** The quotes.create request, plus every problem as [control, message]. */
function readQuote() {
  const errors = [];
  const customer = readCustomer(errors);
  const taxRate = readNumber(ui.taxRate, errors, { max: 100 });
  const lines = lineFields.entries.map((line) => readLine(line, taxRate, errors));
  const request = { upsertByEmail: true, ...customer, lines };
  const title = ui.title.value.trim();
  if (title) {
    request.title = title;
  }
  return { request, errors };
}

/** The control an INVALID_PARAMS path such as `lines[2].qty` names, if the form shows it. */
function controlForPath(path) {
  const linePath = /^lines\[(\d+)\]\.(\w+)$/.exec(path);
  if (linePath) {
    const [, index, field] = linePath;
    if (field === "taxRate") {
      return ui.taxRate;
    }
    const line = lineFields.entries[Number(index)];
    return line && line.fields[field === "productCode" ? "sku" : field];
  }
  const control = {
    customerEmail: customerMode() === "email" ? ui.customerEmail : ui.customers,
    customerName: ui.customerName,
    customerPhone: ui.customerPhone,
    title: ui.title,
  }[path];
  return control && !control.closest("[hidden]") ? control : undefined;
}

/** The field's own label for an INVALID_PARAMS path: "Line 2, Quantity" reads better than `lines[1].qty`. */
function labelForPath(path) {
  const control = controlForPath(path);
  const label = control && (control.labels ? control.labels[0] : control.querySelector("legend"));
  const name = label ? label.textContent.trim() : path;
  const line = /^lines\[(\d+)\]/.exec(path);
  return line && label ? `Line ${Number(line[1]) + 1}, ${name}` : name;
}

function withFieldLabels(error) {
  if (!error || error.code !== "INVALID_PARAMS" || !error.details) {
    return error;
  }
  const details = error.details.map((detail) => ({
    path: labelForPath(detail.path),
    message: detail.message,
  }));
  return { code: error.code, details };
}

// ---------------------------------------------------------------------------------------------
// Actions

function setBusy(busy) {
  state.busy = busy;
  ui.form.setAttribute("aria-busy", String(busy));
  ui.create.disabled = busy || !state.connected;
  lineFields.setBusy(busy);
}

async function createQuote(event) {
  event.preventDefault();
  clearFieldErrors(ui.form);
  const { request, errors } = readQuote();
  if (errors.length > 0) {
    setStatus(showFieldErrors(errors), "error");
    return;
  }

  setBusy(true);
  setStatus("Creating the quote…");
  try {
    showResult(await bridge.quotes.create(request));
  } catch (error) {
    // Put the app's own findings next to the fields they name, too.
    const located = (error.details || [])
      .map((detail) => [controlForPath(detail.path), detail.message])
      .filter(([control]) => control);
    if (located.length > 0) {
      showFieldErrors(located);
    }
    setStatus(describe(withFieldLabels(error)), "error");
  } finally {
    setBusy(false);
  }
}

/**
 * The result's `url` is relative to the app, not to this tool, which lives on its own origin.
 * The app is the page that framed us, so the referrer gives its address; without one, no link.
 */
function appUrl(relativeUrl) {
  try {
    const url = new URL(relativeUrl, document.referrer);
    return url.protocol === "https:" || url.protocol === "http:" ? url.href : null;
  } catch {
    return null;
  }
}

function showResult(result) {
  state.created = result;
  ui.form.hidden = true;
  ui.result.hidden = false;
  ui.resultRef.textContent = result.ref;
  ui.resultTotal.textContent = `Total ${state.format.money(result.total)} including tax.`;
  // The app itself opens the quote where it offers to; a link is the fallback.
  const inApp = bridge.supports("ui.openQuote");
  ui.resultOpen.hidden = !inApp;
  ui.resultOpen.disabled = false;
  const link = !inApp && result.url ? appUrl(result.url) : null;
  ui.resultLink.hidden = !link;
  if (link) {
    ui.resultLink.href = link;
  }
  setStatus(`Quote ${result.ref} created as a draft.`, "success");
  ui.result.focus();
}

/** Asks the app to show the new quote. It may first ask the user about unsaved changes. */
async function openCreatedQuote() {
  const created = state.created;
  ui.resultOpen.disabled = true;
  try {
    const taken = await bridge.ui.openQuote(created.id);
    if (created === state.created) {
      setStatus(taken ? `${created.ref} is open in the app.` : `You stayed where you were: ${created.ref} wasn't opened.`,
        taken ? "success" : "info");
    }
  } catch (error) {
    if (created === state.created) {
      setStatus(describe(error), "error");
    }
  } finally {
    ui.resultOpen.disabled = false;
  }
}

function startAnother() {
  clearFieldErrors(ui.form);
  ui.form.reset();
  ui.taxRate.value = String(savedTaxRate());
  selectCustomer(null);
  if (state.customerPage) {
    renderCustomers();
  }
  showCustomerMode();
  lineFields.reset();
  ui.result.hidden = true;
  ui.form.hidden = false;
  setStatus("");
  ui.modeList.focus();
}

function fillProductSuggestions(catalog) {
  ui.productCodes.replaceChildren(...catalog.products.map((product) => h("option", { value: product.sku, label: product.name })));
}

// Without the catalog the tool still works: lines are just free-form until it loads.
async function loadCatalog() {
  const products = await loadAllInView((options) => bridge.products.list(options), {
    what: "the product catalog", status: ui.catalogStatus, progress: ui.catalogProgress, retry: ui.catalogRetry, words: WORDS,
  });
  if (products) {
    state.catalog = bySku(products);
    fillProductSuggestions(state.catalog);
    ui.catalogStatus.textContent = `${state.catalog.size} products: type a SKU to pick one.`;
    lineFields.entries.forEach(updateLineProduct);
  }
}

async function greet() {
  const context = await bridge.context.get();
  state.format = formatter(context);
  ui.greeting.textContent = `Hello ${context.userName}. New quotes are created for ${context.tenantName}.`;
}

function wireEvents() {
  ui.modeList.addEventListener("change", showCustomerMode);
  ui.modeEmail.addEventListener("change", showCustomerMode);
  ui.customerFilter.addEventListener("input", () => state.customerPage && renderCustomers());
  ui.customersPrev.addEventListener("click", () => showCustomerPage(state.customerPage.page - 1));
  ui.customersNext.addEventListener("click", () => showCustomerPage(state.customerPage.page + 1));
  ui.customersRetry.addEventListener("click", () => showCustomerPage(Number(ui.customersRetry.dataset.page)));
  ui.addLine.addEventListener("click", () => lineFields.add().fields.sku.focus());
  ui.taxRate.addEventListener("change", saveTaxRatePreference);
  ui.catalogRetry.addEventListener("click", loadCatalog);
  ui.form.addEventListener("submit", createQuote);
  clearErrorsOnEdit(ui.form);
  ui.startAnother.addEventListener("click", startAnother);
  ui.resultOpen.addEventListener("click", openCreatedQuote);
}

/** When the tool can't work at all, say why and hide a form that could only fail. */
function showFatal(message) {
  ui.greeting.textContent = "";
  ui.form.hidden = true;
  setStatus(message, "error");
}

async function start() {
  ui.taxRate.value = String(savedTaxRate());
  showCustomerMode();
  updatePager();
  lineFields.add();
  wireEvents();

  try {
    await bridgeReady();
    if (!bridge.supports("quotes.create")) {
      showFatal("This app doesn't let tools create quotes.");
      return;
    }
    state.connected = true;
    setBusy(false);
    await greet();
  } catch (error) {
    showFatal(describe(error));
    return;
  }
  await Promise.all([showCustomerPage(1), loadCatalog()]);
}

start();
