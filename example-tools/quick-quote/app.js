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
// It is an ES module, so it runs in strict mode and defines no globals.

const PREFERENCES_KEY = "quick-quote:preferences";
const DEFAULT_PREFERENCES = { taxRate: 15 };

const CUSTOMER_PAGE_SIZE = 20;
// 500 is the largest page the bridge allows: the fewest round trips for a full catalog.
const CATALOG_PAGE_SIZE = 500;
// The rules quotes.create applies. Checking them here gives friendlier messages sooner.
const LIMITS = { maxLines: 200, maxQty: 10000, maxUnitPrice: 1000000 };
const UNIT_LABELS = { T_SQUARE_METRE: "per m²", T_LINEAR_METRE: "per metre", T_ITEM: "each" };
// Currencies for the cultures we know; any other culture gets plain numbers.
const CURRENCY_BY_REGION = { NZ: "NZD", AU: "AUD", GB: "GBP", IE: "EUR", US: "USD", CA: "CAD", ZA: "ZAR" };

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
  money: createMoneyFormatter(undefined),
  // sku (lower case) → BridgeProductDto. Kept in memory only, for as long as the page is open.
  catalog: null,
  lines: [],
  nextLineId: 1,
  customerPage: null,
  // Counts customer page requests, so a slow answer for an old page can't replace a newer one.
  customerRequest: 0,
  customer: null,
  // The last quotes.create result, which "Open the quote" opens.
  created: null,
};

// ---------------------------------------------------------------------------------------------
// Errors and feedback

/** A sentence a user can act on, for any BridgeError code (and for our own bugs). */
function describeError(error) {
  switch (error && error.code) {
    case "NOT_CONNECTED":
      return "This tool isn't connected to the app. Open it from the app's tool launcher.";
    case "NOT_ALLOWED":
      return "Your role doesn't allow creating quotes. Ask an administrator if you need to.";
    case "NO_OPEN_QUOTE":
      return "No quote is open. Open a quote in the app, then try again.";
    case "QUOTE_LOCKED":
      return "This quote has been sent and can't be changed.";
    case "UNAUTHENTICATED":
      return "Your session has ended. Sign in to the app again, then retry.";
    case "RATE_LIMITED":
      return error.retryAfter
        ? `Too many requests. Try again in ${error.retryAfter} s.`
        : "Too many requests. Try again in a moment.";
    case "INVALID_PARAMS":
      return `The app didn't accept this: ${describeDetails(error.details)}`;
    case "NOT_FOUND":
      return "Something this tool refers to no longer exists. Reload the list and try again.";
    case "BACKEND_UNAVAILABLE":
      return "The app's server can't be reached right now. Try again in a moment.";
    case "TIMEOUT":
      // A timeout doesn't say whether the app acted, and quotes.create has no idempotency key.
      return "The app took too long to answer. The quote may still have been created: "
        + "check the app's quote list before trying again.";
    case "METHOD_NOT_FOUND":
      return "This version of the app doesn't support what this tool asked for.";
    case "INTERNAL":
      return "Something went wrong inside the app (INTERNAL). Try again, or report it if it keeps happening.";
    default:
      return `Something went wrong (${(error && (error.code || error.message)) || "unknown error"}).`;
  }
}

function describeDetails(details) {
  if (!details || details.length === 0) {
    return "a value was out of range.";
  }
  return details.map((detail) => `${detail.path}: ${detail.message}`).join("; ");
}

/** Shows feedback in the page: the sandbox has no alert(), and a toast is friendlier anyway. */
function setStatus(message, kind = "info") {
  ui.status.textContent = message;
  ui.status.dataset.kind = kind;
}

// ---------------------------------------------------------------------------------------------
// Formatting and preferences

/** Money in the tenant's culture; a plain 2-decimal number when the currency can't be told. */
function createMoneyFormatter(cultureCode) {
  try {
    const region = cultureCode ? new Intl.Locale(cultureCode).region : undefined;
    const currency = CURRENCY_BY_REGION[region];
    const options = currency
      ? { style: "currency", currency }
      : { minimumFractionDigits: 2, maximumFractionDigits: 2 };
    return new Intl.NumberFormat(cultureCode, options);
  } catch {
    return new Intl.NumberFormat(undefined, { minimumFractionDigits: 2, maximumFractionDigits: 2 });
  }
}

// localStorage is per tool origin. Only preferences live there: the quote belongs to the app.
function loadPreferences() {
  let saved = {};
  try {
    saved = JSON.parse(localStorage.getItem(PREFERENCES_KEY)) || {};
  } catch {
    // Storage disabled or unreadable: defaults are fine.
  }
  return { taxRate: Number.isFinite(saved.taxRate) ? saved.taxRate : DEFAULT_PREFERENCES.taxRate };
}

function saveTaxRatePreference() {
  const taxRate = ui.taxRate.valueAsNumber;
  if (!ui.taxRate.checkValidity() || !Number.isFinite(taxRate)) {
    return;
  }
  try {
    localStorage.setItem(PREFERENCES_KEY, JSON.stringify({ taxRate }));
  } catch {
    // Storage disabled: preferences are a convenience, not a requirement.
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
      ui.customersState.textContent = describeError(error);
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
  const wrapper = document.createElement("div");
  wrapper.className = "check";
  const input = document.createElement("input");
  input.type = "radio";
  input.name = "customer";
  input.id = `customer-${customer.id}`;
  input.value = customer.id;
  input.checked = Boolean(state.customer && state.customer.id === customer.id);
  // quotes.create finds an existing customer by email only, so one without an email can't be
  // chosen here: sending just the name would create a second customer of that name.
  input.disabled = !customer.email;
  input.addEventListener("change", () => selectCustomer(customer));
  const label = document.createElement("label");
  label.htmlFor = input.id;
  const name = document.createElement("span");
  name.className = "name";
  name.textContent = customer.name;
  const email = document.createElement("span");
  email.className = "hint";
  email.textContent = customer.email || "No email on file, so it can't be picked";
  label.append(name, email);
  wrapper.append(input, label);
  return wrapper;
}

function selectCustomer(customer) {
  state.customer = customer;
  ui.customerSelected.textContent = customer
    ? `Quote for ${customer.name} (${customer.email}).`
    : "No customer picked yet.";
}

// ---------------------------------------------------------------------------------------------
// Lines

function createLine() {
  const id = state.nextLineId++;
  const element = ui.lineTemplate.content.firstElementChild.cloneNode(true);
  const fields = {};
  for (const input of element.querySelectorAll("[data-field]")) {
    input.id = `line-${id}-${input.dataset.field}`;
    fields[input.dataset.field] = input;
  }
  for (const label of element.querySelectorAll("label[data-for]")) {
    label.htmlFor = `line-${id}-${label.dataset.for}`;
  }
  const line = {
    element,
    fields,
    legend: element.querySelector('[data-role="legend"]'),
    product: element.querySelector('[data-role="product"]'),
    remove: element.querySelector('[data-role="remove"]'),
    // Whether the unit price still holds the catalog price we filled in (not the user's own).
    pricePrefilled: false,
  };
  line.product.id = `line-${id}-product`;
  fields.sku.setAttribute("aria-describedby", line.product.id);
  fields.sku.addEventListener("input", () => updateLineProduct(line));
  fields.unitPrice.addEventListener("input", () => {
    line.pricePrefilled = false;
  });
  line.remove.addEventListener("click", () => removeLine(line));
  state.lines.push(line);
  ui.lines.append(element);
  renumberLines();
  updateLineProduct(line);
  return line;
}

function removeLine(line) {
  const index = state.lines.indexOf(line);
  state.lines.splice(index, 1);
  line.element.remove();
  renumberLines();
  // Keep keyboard users in place: move focus to the line that took this one's place.
  state.lines[Math.min(index, state.lines.length - 1)].fields.sku.focus();
}

function renumberLines() {
  state.lines.forEach((line, index) => {
    line.legend.textContent = `Line ${index + 1}`;
    line.remove.setAttribute("aria-label", `Remove line ${index + 1}`);
    line.remove.disabled = state.lines.length === 1 || state.busy;
  });
  const full = state.lines.length >= LIMITS.maxLines;
  ui.addLine.disabled = full || state.busy;
  ui.lineCount.textContent = full
    ? `A quote holds at most ${LIMITS.maxLines} lines.`
    : `${state.lines.length} of at most ${LIMITS.maxLines} lines.`;
}

function resetLines() {
  for (const line of state.lines) {
    line.element.remove();
  }
  state.lines = [];
  createLine();
}

function findProduct(sku) {
  const code = sku.trim().toLowerCase();
  return code && state.catalog ? state.catalog.get(code) : undefined;
}

/** Names the product a SKU resolves to, and fills in its price unless the user typed one. */
function updateLineProduct(line) {
  const { sku, unitPrice, description } = line.fields;
  const product = findProduct(sku.value);
  description.placeholder = product ? product.name : "";
  if (product) {
    const unit = UNIT_LABELS[product.unit] || "";
    line.product.textContent = `${product.name}, ${state.money.format(product.price)} ${unit}`.trim();
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

function clearFieldErrors() {
  for (const control of ui.form.querySelectorAll('[aria-invalid="true"]')) {
    clearFieldError(control);
  }
}

/** Puts `message` under `control` and links them, so screen readers read it with the field. */
function showFieldError(control, message) {
  const error = document.createElement("p");
  error.className = "field-error";
  error.id = `${control.id}-error`;
  error.textContent = message;
  control.closest(".field").append(error);
  control.setAttribute("aria-invalid", "true");
  // Keep any hint the field already had, after the error.
  control.dataset.hint = control.getAttribute("aria-describedby") || "";
  control.setAttribute("aria-describedby", `${error.id} ${control.dataset.hint}`.trim());
}

function clearFieldError(control) {
  const error = document.getElementById(`${control.id}-error`);
  if (error) {
    error.remove();
  }
  control.removeAttribute("aria-invalid");
  if (control.dataset.hint) {
    control.setAttribute("aria-describedby", control.dataset.hint);
  } else {
    control.removeAttribute("aria-describedby");
  }
  delete control.dataset.hint;
}

/** Once the user edits a field that had a problem, its message goes. */
function clearErrorOnEdit(event) {
  const control = event.target.closest('[aria-invalid="true"]');
  if (control) {
    clearFieldError(control);
  }
}

/** A number from `input`, or an error when it is empty or outside the range. */
function readNumber(input, errors, { min = 0, max = Infinity, above = false } = {}) {
  const value = input.valueAsNumber;
  if (!Number.isFinite(value)) {
    errors.push([input, "Enter a number."]);
  } else if (above ? value <= min : value < min) {
    errors.push([input, above ? `Must be more than ${min}.` : `Must be at least ${min}.`]);
  } else if (value > max) {
    errors.push([input, `Must be at most ${max}.`]);
  }
  return value;
}

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
  const product = findProduct(sku);
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
  const lines = state.lines.map((line) => readLine(line, taxRate, errors));
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
    const line = state.lines[Number(index)];
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
  renumberLines();
}

function showErrors(errors) {
  const shown = new Set();
  for (const [control, message] of errors) {
    if (!shown.has(control)) {
      showFieldError(control, message);
      shown.add(control);
    }
  }
  errors[0][0].focus();
}

async function createQuote(event) {
  event.preventDefault();
  clearFieldErrors();
  const { request, errors } = readQuote();
  if (errors.length > 0) {
    showErrors(errors);
    const fields = errors.length === 1 ? "the highlighted field" : `the ${errors.length} highlighted fields`;
    setStatus(`Check ${fields}.`, "error");
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
      showErrors(located);
    }
    setStatus(describeError(withFieldLabels(error)), "error");
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
  ui.resultTotal.textContent = `Total ${state.money.format(result.total)} including tax.`;
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
      setStatus(describeError(error), "error");
    }
  } finally {
    ui.resultOpen.disabled = false;
  }
}

function startAnother() {
  clearFieldErrors();
  ui.form.reset();
  ui.taxRate.value = String(loadPreferences().taxRate);
  selectCustomer(null);
  if (state.customerPage) {
    renderCustomers();
  }
  showCustomerMode();
  resetLines();
  ui.result.hidden = true;
  ui.form.hidden = false;
  setStatus("");
  ui.modeList.focus();
}

/** The reference pattern: every page of products, into a case-insensitive sku → product map. */
async function fetchCatalog(onProgress) {
  const bySku = new Map();
  let page = 1;
  let loaded = 0;
  let totalCount = Infinity;
  while (loaded < totalCount) {
    const result = await bridge.products.list({ page, pageSize: CATALOG_PAGE_SIZE });
    for (const product of result.items) {
      bySku.set(product.sku.toLowerCase(), product);
    }
    totalCount = result.totalCount;
    loaded += result.items.length;
    page += 1;
    onProgress(loaded, totalCount);
    if (result.items.length === 0) {
      break; // The catalog shrank while we were paging.
    }
  }
  return bySku;
}

function showCatalogProgress(loaded, total) {
  ui.catalogProgress.max = Math.max(total, 1);
  ui.catalogProgress.value = loaded;
  ui.catalogStatus.textContent = `Loading the product catalog: ${loaded} of ${total}…`;
}

function fillProductSuggestions(catalog) {
  const options = [...catalog.values()].map((product) => {
    const option = document.createElement("option");
    option.value = product.sku;
    option.label = product.name;
    return option;
  });
  ui.productCodes.replaceChildren(...options);
}

// Without the catalog the tool still works: lines are just free-form until it loads.
async function loadCatalog() {
  ui.catalogRetry.hidden = true;
  ui.catalogProgress.hidden = false;
  ui.catalogStatus.textContent = "Loading the product catalog…";
  try {
    state.catalog = await fetchCatalog(showCatalogProgress);
    fillProductSuggestions(state.catalog);
    ui.catalogStatus.textContent = `${state.catalog.size} products: type a SKU to pick one.`;
    state.lines.forEach(updateLineProduct);
  } catch (error) {
    ui.catalogStatus.textContent = `The product catalog didn't load. ${describeError(error)}`;
    ui.catalogRetry.hidden = false;
  } finally {
    ui.catalogProgress.hidden = true;
  }
}

async function greet() {
  const context = await bridge.context.get();
  state.money = createMoneyFormatter(context.cultureCode);
  ui.greeting.textContent = `Hello ${context.userName}. New quotes are created for ${context.tenantName}.`;
}

function wireEvents() {
  ui.modeList.addEventListener("change", showCustomerMode);
  ui.modeEmail.addEventListener("change", showCustomerMode);
  ui.customerFilter.addEventListener("input", () => state.customerPage && renderCustomers());
  ui.customersPrev.addEventListener("click", () => showCustomerPage(state.customerPage.page - 1));
  ui.customersNext.addEventListener("click", () => showCustomerPage(state.customerPage.page + 1));
  ui.customersRetry.addEventListener("click", () => showCustomerPage(Number(ui.customersRetry.dataset.page)));
  ui.addLine.addEventListener("click", () => createLine().fields.sku.focus());
  ui.taxRate.addEventListener("change", saveTaxRatePreference);
  ui.catalogRetry.addEventListener("click", loadCatalog);
  ui.form.addEventListener("submit", createQuote);
  ui.form.addEventListener("input", clearErrorOnEdit);
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
  ui.taxRate.value = String(loadPreferences().taxRate);
  showCustomerMode();
  updatePager();
  createLine();
  wireEvents();

  if (!window.bridge) {
    showFatal("The app's tool SDK (bridge.js) didn't load, so this tool can't work.");
    return;
  }
  try {
    await bridge.ready();
    if (!bridge.supports("quotes.create")) {
      showFatal("This app doesn't let tools create quotes.");
      return;
    }
    state.connected = true;
    setBusy(false);
    await greet();
  } catch (error) {
    showFatal(describeError(error));
    return;
  }
  await Promise.all([showCustomerPage(1), loadCatalog()]);
}

start();
