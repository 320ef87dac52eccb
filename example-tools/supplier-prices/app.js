// Supplier prices: an example `quoting_extension` tool that talks to its vendor's server.
//
// It demonstrates:
// - bridge.fetch: the request goes through the app's server, which puts the tenant's secret
//   setting (the supplier API key, `{{secret.apiKey}}`) and a token the platform signed about the
//   user (`{{token}}`) into it. Neither ever reaches this page: the page only writes placeholders;
// - the supplier's server checking that token against the app's published keys, so it knows which
//   tenant and user ask without trusting anything this page says (see the book's "Prove who the
//   user is" page for the server side);
// - money in the host's currency and the price list's time in the tenant's time zone
//   (context.currency, context.timeZone), kept current by context.changed;
// - adding the parts the user picks to the open quote in one addLines batch at the tenant's markup
//   (an install setting).
//
// Where the app offers no bridge.fetch (an older host), the tool says so instead of failing.

import { ERROR_WORDS, bridgeReady, describeError, formatter, replace, showStatus } from "/sdk/ui.js";

const DEFAULT_SERVICE_URL = "https://prices.example-supplier.test";
const DEFAULT_MARKUP = 30;
const DEFAULT_TAX = 15;
const WORDS = {
  ...ERROR_WORDS,
  NOT_ALLOWED: (error) => `The app refused the request to the supplier: ${error.message}`,
  TIMEOUT: "The supplier took too long to answer. Try again.",
  BACKEND_UNAVAILABLE: "The supplier's server can't be reached right now. Try again in a moment.",
  INVALID_PARAMS: (error) => (String(error.message).includes("secret.apiKey")
    ? "No supplier API key is set for your account. Ask an administrator to set it in Settings → Tools."
    : ERROR_WORDS.INVALID_PARAMS(error)),
  NO_OPEN_QUOTE: "No quote is open. Open a draft quote in the app, then add parts to it.",
  QUOTE_LOCKED: "This quote has been sent and can't be changed. Open a draft quote to add parts.",
};

const $ = (id) => document.getElementById(id);
const ui = {
  greeting: $("greeting"),
  status: $("status"),
  form: $("lookup"),
  search: $("search"),
  lookUp: $("look-up"),
  updated: $("updated"),
  parts: $("parts"),
  partTemplate: $("part-template"),
};

const state = {
  format: formatter(undefined),
  currency: undefined,
  settings: { serviceUrl: DEFAULT_SERVICE_URL, markupPercent: DEFAULT_MARKUP, taxPercent: DEFAULT_TAX },
  // The supplier's last answer, shown again when the context changes.
  answer: null,
};

function setStatus(message, kind) {
  showStatus(ui.status, message, kind);
}

const round2 = (value) => Math.round(value * 100) / 100;

// ---------------------------------------------------------------------------------------------
// The supplier's server

/**
 * Today's prices of the parts matching `search`, from the supplier. The page writes only
 * placeholders: the app's server replaces `{{secret.apiKey}}` with the tenant's key and `{{token}}`
 * with an identity token for this user and tool, then makes the request.
 */
async function lookUpPrices(search) {
  const url = new URL("/v1/prices", state.settings.serviceUrl);
  url.searchParams.set("q", search);
  const response = await bridge.fetch(url, {
    headers: {
      Accept: "application/json",
      Authorization: "Bearer {{token}}",
      "X-Api-Key": "{{secret.apiKey}}",
    },
  });
  if (response.status === 401 || response.status === 403) {
    throw supplierError("The supplier refused your account's key. Ask an administrator to check the Supplier API key in Settings → Tools.");
  }
  if (!response.ok) {
    throw supplierError(`The supplier answered ${response.status}. Try again later.`);
  }
  const answer = await response.json();
  if (!answer || !Array.isArray(answer.items)) {
    throw supplierError("The supplier's answer was not a price list.");
  }
  return answer;
}

function supplierError(message) {
  const error = new Error(message);
  error.code = "SUPPLIER";
  return error;
}

function describe(error) {
  return describeError(error, { ...WORDS, SUPPLIER: () => error.message });
}

// ---------------------------------------------------------------------------------------------
// Showing the prices

function sellPrice(cost) {
  return round2(cost * (1 + state.settings.markupPercent / 100));
}

function showAnswer() {
  const { answer } = state;
  if (!answer) return;
  ui.updated.hidden = false;
  // The supplier says when in UTC; the tenant reads it in its own time zone.
  ui.updated.textContent = `Price list of ${state.format.dateTime(answer.updatedAt)} (${state.format.timeZone}).`;
  const sameCurrency = !answer.currency || answer.currency === state.currency;
  const parts = answer.items.map((item, index) => partRow(item, index, sameCurrency));
  replace(ui.parts, ...parts);
  if (answer.items.length === 0) {
    setStatus(`The supplier has no part matching "${ui.search.value.trim()}".`, "info");
  } else if (!sameCurrency) {
    setStatus(`The supplier prices in ${answer.currency} and this account quotes in ${state.currency}, so parts can't be added.`, "warning");
  } else {
    setStatus(`${answer.items.length} ${answer.items.length === 1 ? "part" : "parts"} found.`, "success");
  }
}

function partRow(item, index, addable) {
  const row = ui.partTemplate.content.firstElementChild.cloneNode(true);
  row.querySelector(".code").textContent = item.code;
  row.querySelector(".description").textContent = item.description;
  row.querySelector(".prices").textContent = `Buy ${state.format.money(item.cost)}${item.unit ? ` per ${item.unit}` : ""}, sell ${state.format.money(sellPrice(item.cost))}`;
  const qty = row.querySelector("[data-role=qty]");
  const label = row.querySelector("[data-role=qty-label]");
  qty.id = `qty-${index}`;
  label.htmlFor = qty.id;
  label.textContent = `Quantity of ${item.code}`;
  const add = row.querySelector("[data-role=add]");
  add.disabled = !addable || !bridge.supports("quotes.addLines");
  add.addEventListener("click", () => addPart(item, qty, add));
  return row;
}

async function addPart(item, qtyInput, button) {
  const qty = Number(qtyInput.value);
  if (!(qty > 0)) {
    setStatus(`Enter a quantity above 0 for ${item.code}.`, "error");
    qtyInput.focus();
    return;
  }
  button.disabled = true;
  try {
    await bridge.quotes.addLines([{
      lineType: "product",
      description: item.description,
      productCode: item.code,
      qty,
      unitPrice: sellPrice(item.cost),
      costPrice: item.cost,
      // A fraction: addLines reads a rate above 1 as a percentage, so 1% sent as 1 would be 100%.
      taxRate: state.settings.taxPercent / 100,
      specification: `Supplier price of ${state.format.date(state.answer.updatedAt)}`,
    }]);
    setStatus(`Added ${qty} × ${item.code} to the quote.`, "success");
  } catch (error) {
    setStatus(describe(error), "error");
  } finally {
    button.disabled = false;
  }
}

async function onLookUp(event) {
  event.preventDefault();
  const search = ui.search.value.trim();
  if (!search) {
    setStatus("Enter a part code or words of its description.", "error");
    ui.search.focus();
    return;
  }
  ui.lookUp.disabled = true;
  setStatus("Asking the supplier…", "info");
  try {
    state.answer = await lookUpPrices(search);
    showAnswer();
  } catch (error) {
    state.answer = null;
    ui.updated.hidden = true;
    replace(ui.parts);
    setStatus(describe(error), "error");
  } finally {
    ui.lookUp.disabled = false;
  }
}

// ---------------------------------------------------------------------------------------------
// Starting

function applySettings(settings) {
  state.settings = {
    serviceUrl: typeof settings.serviceUrl === "string" && settings.serviceUrl ? settings.serviceUrl : DEFAULT_SERVICE_URL,
    markupPercent: typeof settings.markupPercent === "number" ? settings.markupPercent : DEFAULT_MARKUP,
    taxPercent: typeof settings.taxPercent === "number" ? settings.taxPercent : DEFAULT_TAX,
  };
  showAnswer();
}

async function applyContext() {
  const context = await bridge.context.get();
  state.format = formatter(context);
  state.currency = state.format.currency;
  ui.greeting.textContent = `Hello ${context.userName}. Prices for ${context.tenantName}, in ${state.currency ?? "the supplier's currency"}.`;
  showAnswer();
}

async function start() {
  try {
    await bridgeReady();
    await applyContext();
  } catch (error) {
    setStatus(describe(error), "error");
    return;
  }
  if (!bridge.supports("fetch")) {
    setStatus("This app doesn't let tools call their own servers (bridge.fetch), so prices can't be looked up here.", "warning");
    return;
  }
  if (bridge.supports("context.changed")) {
    bridge.on("context.changed", (changed) => {
      if ("timeZone" in changed || "currency" in changed || "locale" in changed) applyContext();
    });
  }
  if (bridge.supports("settings.get")) {
    bridge.on("settings.changed", ({ settings }) => applySettings(settings));
    applySettings(await bridge.settings.get());
  }
  if (!bridge.supports("quotes.addLines")) {
    setStatus("Open this tool from a draft quote to add parts to it; you can still look prices up.", "info");
  }
  ui.form.hidden = false;
  ui.form.addEventListener("submit", onLookUp);
  ui.search.focus();
}

start();
