// Flooring estimator: an example `quoting_extension` tool.
//
// It demonstrates how a tool adds lines to the quote open in the app:
// - waiting for the host with bridge.ready() and checking bridge.supports() before offering an action;
// - loading the whole product catalog once (the paging "reference pattern") and resolving SKUs to ids;
// - resolving task-template and cost-item codes to the ids that addLines links to;
// - sending every line in ONE bridge.quotes.addLines() batch, which the host applies all or nothing;
// - where the app offers them (bridge.supports), the extensions beyond 2.1.0: reading the open quote
//   (quotes.getOpen) and following it (the quote.changed event) to show which rooms it already has
//   and to stop adding once it is sent, and asking in the app's own dialog (ui.confirm) before
//   adding a room a second time. On an app without them the tool works as before;
// - turning a BridgeError into words a user understands;
// - taking the tenant's default waste allowance and markup from its install settings
//   (settings.get, kept current by settings.changed) where the app offers them;
// - keeping only preferences (never quote contents) in localStorage.
//
// It is an ES module, so it runs in strict mode and defines no globals. What every tool page
// needs (money in the tenant's culture, error words, field problems, paging) comes from the
// platform's page helpers at /sdk/ui.js.

import {
  ERROR_WORDS, bridgeReady, bySku, clearErrorsOnEdit, clearFieldErrors, describeError, formatter, h,
  loadAllInView, loadPreferences, readNumber, repeatedFields, savePreferences, shorten,
  showFieldErrors, showStatus,
} from "/sdk/ui.js";

const PREFERENCES_KEY = "flooring-estimator:preferences";
const DEFAULT_PREFERENCES = { waste: 10, markup: 40, taxRate: 15, installRate: 25, travelRate: 1.5 };
// Install settings (declared in manifest.json) → the preference they give the default of.
const SETTING_PREFERENCES = { wastePercent: "waste", markupPercent: "markup" };

// The host rejects the whole batch if a section is longer than this after trimming.
const SECTION_MAX_LENGTH = 100;
// The longest title ui.confirm takes.
const CONFIRM_TITLE_MAX_LENGTH = 100;
const SQUARE_METRE = "T_SQUARE_METRE";
const UNIT_LABELS = { T_SQUARE_METRE: "per m²", T_LINEAR_METRE: "per metre", T_ITEM: "each" };
// The words this tool says otherwise than the helpers' table: it works on the open quote.
const WORDS = {
  ...ERROR_WORDS,
  NOT_CONNECTED: "This tool isn't connected to the app. Open it from a quote in the app.",
  NO_OPEN_QUOTE: "No quote is open. Open a draft quote in the app, then try again.",
  QUOTE_LOCKED: "This quote has been sent and can't be changed. Open a draft quote to add lines.",
};

const $ = (id) => document.getElementById(id);
const ui = {
  greeting: $("greeting"),
  status: $("status"),
  catalog: $("catalog"),
  catalogStatus: $("catalog-status"),
  catalogProgress: $("catalog-progress"),
  catalogRetry: $("catalog-retry"),
  form: $("estimate"),
  rooms: $("rooms"),
  roomTemplate: $("room-template"),
  productCodes: $("product-codes"),
  addRoom: $("add-room"),
  submit: $("add-to-quote"),
  waste: $("waste"),
  markup: $("markup"),
  taxRate: $("tax-rate"),
  install: $("install"),
  installRateField: $("install-rate-field"),
  installRate: $("install-rate"),
  travel: $("travel"),
  travelFields: $("travel-fields"),
  travelKm: $("travel-km"),
  travelRate: $("travel-rate"),
  openQuote: $("open-quote"),
  quoteRoomsState: $("quote-rooms-state"),
  quoteRooms: $("quote-rooms"),
  quoteLock: $("quote-lock"),
};

const state = {
  // The product catalog by SKU (bySku). Kept in memory only, for as long as the page is open.
  catalog: null,
  format: formatter(undefined),
  busy: false,
  // The open quote's rooms, by roomKey() → name as on the quote; null while the app hasn't said
  // (or can't: an app without quotes.getOpen).
  quoteRooms: null,
  // Why adding is off (the quote was sent or closed); "" while it may take lines.
  locked: "",
  // Preferences whose default comes from the install settings: not kept in localStorage, as an
  // administrator sets them for everyone.
  fromSettings: new Set(),
  // Preference fields the user changed on this page, which a settings change leaves alone.
  edited: new Set(),
};

// ---------------------------------------------------------------------------------------------
// Errors and feedback

/** A sentence a user can act on, for any BridgeError code (and for our own bugs). */
function describe(error) {
  return describeError(error, WORDS);
}

/** Replaces `lines[3]` in the error's paths with the name of the room that line came from. */
function withLineLabels(error, labels) {
  if (!error || error.code !== "INVALID_PARAMS" || !error.details) {
    return error;
  }
  const details = error.details.map((detail) => {
    const match = /^lines\[(\d+)\]\.(.+)$/.exec(detail.path);
    const label = match && labels[Number(match[1])];
    return { path: label ? `${label}, ${match[2]}` : detail.path, message: detail.message };
  });
  return { code: error.code, details };
}

/** Shows feedback in the page: the sandbox has no alert(), and a toast is friendlier anyway. */
function setStatus(message, kind = "info") {
  showStatus(ui.status, message, kind);
}

// ---------------------------------------------------------------------------------------------
// Numbers and preferences

function round2(value) {
  return Math.round((value + Number.EPSILON) * 100) / 100;
}

// localStorage is per tool origin. Only preferences live there: the quote belongs to the app, and
// anything we kept would go stale the moment someone else edits it.
function savedPreferences() {
  const saved = loadPreferences(PREFERENCES_KEY);
  const preferences = { ...DEFAULT_PREFERENCES };
  for (const name of Object.keys(DEFAULT_PREFERENCES)) {
    if (Number.isFinite(saved[name])) {
      preferences[name] = saved[name];
    }
  }
  return preferences;
}

function saveEditedPreferences() {
  const preferences = {};
  for (const [name, input] of preferenceInputs()) {
    if (state.fromSettings.has(name)) {
      continue;
    }
    if (input.checkValidity() && Number.isFinite(input.valueAsNumber)) {
      preferences[name] = input.valueAsNumber;
    }
  }
  savePreferences(PREFERENCES_KEY, { ...savedPreferences(), ...preferences });
}

function preferenceInputs() {
  return [
    ["waste", ui.waste],
    ["markup", ui.markup],
    ["taxRate", ui.taxRate],
    ["installRate", ui.installRate],
    ["travelRate", ui.travelRate],
  ];
}

// ---------------------------------------------------------------------------------------------
// Rooms

/** A group key per room, unique across page loads, so two estimates never share a group. */
function newGroupKey() {
  const random = crypto.randomUUID
    ? crypto.randomUUID()
    : `${Date.now().toString(36)}-${Math.random().toString(36).slice(2)}`;
  return `flooring-room-${random}`;
}

/** The rooms of the form, each a copy of the room template. */
const roomFields = repeatedFields({
  template: ui.roomTemplate,
  container: ui.rooms,
  prefix: "room",
  noun: "room",
  focus: "name",
  onAdd: (room) => {
    room.key = newGroupKey();
    room.fields.sku.setAttribute("aria-describedby", room.product.id);
    room.fields.name.setAttribute("aria-describedby", room.repeat.id);
    room.element.addEventListener("input", () => updateRoom(room));
    updateRoom(room);
  },
});

function roomArea(room) {
  return room.fields.length.valueAsNumber * room.fields.width.valueAsNumber;
}

/** Live feedback for one room: its area, which product its SKU names, and whether it is on the quote. */
function updateRoom(room) {
  const repeated = isOnQuote(room.fields.name.value);
  room.repeat.hidden = !repeated;
  room.repeat.textContent = !repeated ? ""
    : bridge.supports("ui.confirm") ? "Already on the quote: you'll be asked before it is added again."
      : "Already on the quote: adding it again adds a second set of lines.";

  const area = roomArea(room);
  room.area.textContent = Number.isFinite(area) && area > 0
    ? `Area: ${area.toFixed(2)} m²`
    : "Area: enter length and width";

  const sku = room.fields.sku.value.trim();
  const product = state.catalog?.find(sku);
  room.freeForm.hidden = Boolean(product);
  if (product) {
    const unit = UNIT_LABELS[product.unit] || "";
    room.product.textContent = `${product.name}, ${state.format.money(product.price)} ${unit}`.trim();
  } else if (sku && state.catalog) {
    room.product.textContent = "Not in the catalog: describe it and give its buy price below.";
  } else if (sku) {
    room.product.textContent = "The catalog is still loading…";
  } else {
    room.product.textContent = "Leave empty for a product that isn't in the catalog.";
  }
}

// ---------------------------------------------------------------------------------------------
// The open quote (the quotes.getOpen and quote.changed extensions, where the app offers them)

/** Rooms are matched by name, as the sections they become: trimmed, in any letter case. */
function roomKey(name) {
  return name.trim().toLocaleLowerCase();
}

function isOnQuote(name) {
  return Boolean(state.quoteRooms && name.trim() && state.quoteRooms.has(roomKey(name)));
}

/**
 * The rooms on a quote, by roomKey() → name. Each room this tool adds is a section holding its
 * floor covering, sold per m²; a section without m² lines (Travel, say) is no room.
 */
function roomsOn(quote) {
  const rooms = new Map();
  for (const line of quote.lines) {
    if (line.section && line.unit === SQUARE_METRE && !rooms.has(roomKey(line.section))) {
      rooms.set(roomKey(line.section), line.section.trim());
    }
  }
  return rooms;
}

/** Why `quote` can't take lines ("" when it can); `kind` is the quote.changed event's, if any. */
function lockReason(quote, kind) {
  if (!quote || kind === "closed") {
    return "No quote is open in the app, so adding is off. Open a draft quote, then this tool.";
  }
  const status = quote.status !== "Draft" ? quote.status : kind === "sent" ? "Sent" : "";
  return status
    ? `Quote ${quote.ref} is ${status}, so its lines are locked and adding is off. Open a draft quote to add rooms.`
    : "";
}

/** Shows the open quote's rooms (null: none open), marks the form's rooms it has, and locks adding once it can't change. */
function showOpenQuote(quote, kind) {
  state.quoteRooms = quote ? roomsOn(quote) : new Map();
  state.locked = lockReason(quote, kind);
  const names = [...state.quoteRooms.values()];
  ui.quoteRoomsState.textContent = !quote ? "No quote is open."
    : names.length === 0 ? `${quote.ref} has no rooms yet.`
      : `Rooms already on ${quote.ref}:`;
  ui.quoteRooms.replaceChildren(...names.map((name) => h("li", {}, name)));
  ui.quoteLock.textContent = state.locked;
  ui.openQuote.hidden = false;
  roomFields.entries.forEach(updateRoom);
  setBusy(state.busy);
}

async function readOpenQuote() {
  try {
    showOpenQuote(await bridge.quotes.getOpen());
  } catch (error) {
    if (error.code === "NO_OPEN_QUOTE") {
      showOpenQuote(null);
    } else {
      // Not knowing the rooms only means no warning about repeats: adding still works.
      ui.quoteRoomsState.textContent = `The open quote couldn't be read. ${describe(error)}`;
      ui.openQuote.hidden = false;
    }
  }
}

/** Reads the open quote, and follows it: every change to it comes as a quote.changed event. */
function followOpenQuote() {
  if (bridge.supports("quote.changed")) {
    bridge.on("quote.changed", ({ kind, quote }) => showOpenQuote(quote, kind));
  }
  if (bridge.supports("quotes.getOpen")) {
    readOpenQuote();
  }
}

/**
 * Before adding rooms the quote already has, asks in the app's dialog; resolves whether to go
 * on. Without ui.confirm (or without knowing the quote's rooms) it adds, as an older app did.
 */
async function confirmRepeats(rooms) {
  const repeats = [...new Set(rooms.filter((room) => isOnQuote(room.name)).map((room) => room.name))];
  if (repeats.length === 0 || !bridge.supports("ui.confirm")) {
    return true;
  }
  const one = repeats.length === 1;
  return bridge.ui.confirm({
    title: shorten(one ? `Add "${repeats[0]}" again?` : `Add ${repeats.length} rooms again?`, CONFIRM_TITLE_MAX_LENGTH),
    message: shorten(`${repeats.join(", ")} ${one ? "is" : "are"} already on the quote. Adding `
      + `${one ? "it" : "them"} again puts a second set of lines in the same section.`, 1000),
    confirmLabel: "Add again",
    cancelLabel: "Cancel",
  });
}

// ---------------------------------------------------------------------------------------------
// Reading and checking the form

function readRoom(room, errors) {
  const { fields } = room;
  const name = fields.name.value.trim();
  if (!name) {
    errors.push([fields.name, "Give the room a name."]);
  } else if ([...name].length > SECTION_MAX_LENGTH) {
    // Counted in characters, not UTF-16 units, as the host counts them.
    errors.push([fields.name, `Use at most ${SECTION_MAX_LENGTH} characters (now ${[...name].length}).`]);
  }
  const length = readNumber(fields.length, errors, { min: 0, max: 1000, above: true });
  const width = readNumber(fields.width, errors, { min: 0, max: 1000, above: true });
  if (length * width > 0 && length * width < 0.01) {
    errors.push([fields.width, "The room is too small to price (under 0.01 m²)."]);
  }

  const sku = fields.sku.value.trim();
  const product = state.catalog?.find(sku);
  if (product && product.unit !== SQUARE_METRE) {
    errors.push([fields.sku, `${product.sku} isn't sold per m². Choose a floor covering.`]);
  }
  let description = "";
  let buyPrice = NaN;
  if (!product) {
    description = fields.description.value.trim();
    if (!description) {
      errors.push([fields.description, "Describe the product, or enter a catalog SKU above."]);
    }
    buyPrice = readNumber(fields.buyPrice, errors, { max: 1000000 });
  }
  return { key: room.key, name, length, width, area: length * width, sku, product, description, buyPrice };
}

/** Everything the form says, plus every problem as [input, message]. */
function readEstimate() {
  const errors = [];
  const rooms = roomFields.entries.map((room) => readRoom(room, errors));
  const estimate = {
    rooms,
    waste: readNumber(ui.waste, errors, { max: 100 }),
    markup: readNumber(ui.markup, errors, { max: 1000 }),
    taxRate: readNumber(ui.taxRate, errors, { max: 100 }),
    install: ui.install.checked && rooms.some((room) => !room.product),
    travel: ui.travel.checked,
  };
  if (estimate.install) {
    estimate.installRate = readNumber(ui.installRate, errors, { max: 1000000 });
  }
  if (estimate.travel) {
    estimate.travelKm = readNumber(ui.travelKm, errors, { min: 0, max: 10000, above: true });
    estimate.travelRate = readNumber(ui.travelRate, errors, { max: 1000000 });
  }
  return { estimate, errors };
}

// ---------------------------------------------------------------------------------------------
// Building the addLines batch

/**
 * Task templates and cost items are referred to by stable codes (ids differ between
 * environments), so we look the ids up when we need them. A code that isn't set up in this
 * account leaves its line unlinked: the host then adds it as a free-form task or cost line.
 */
async function resolveReferences(estimate) {
  const [installs, travel] = await Promise.all([
    estimate.install ? bridge.taskTemplates.list({ codes: ["INSTALL"] }) : null,
    estimate.travel ? bridge.costItems.list({ codes: ["TRAVEL"] }) : null,
  ]);
  return {
    install: installs ? installs.items[0] : undefined,
    travel: travel ? travel.items[0] : undefined,
  };
}

/**
 * Prices. bridge.d.ts documents a product's `price` as its retail SELL price, so we never mark it
 * up again (the customer would pay the markup twice). We send it as `unitPrice` and estimate the
 * BUY price by taking the markup back off: cost = sell / (1 + markup). For a product that isn't in
 * the catalog the user types what they pay, and we add the markup: sell = cost × (1 + markup).
 * Either way unitPrice and costPrice differ, so the quote shows a real margin.
 */
function roomPrices(room, markup) {
  const factor = 1 + markup / 100;
  if (room.product) {
    return { unitPrice: room.product.price, costPrice: round2(room.product.price / factor) };
  }
  return { unitPrice: round2(room.buyPrice * factor), costPrice: room.buyPrice };
}

/**
 * addLines reads a taxRate from 0 to 1 as a fraction and anything above 1 as a percentage, so a
 * 1% rate sent as 1 would mean 100%. The fraction is never ambiguous.
 */
function taxFraction(estimate) {
  return estimate.taxRate / 100;
}

function productLine(room, estimate) {
  const line = {
    lineType: "product",
    description: room.product ? room.product.name : room.description,
    qty: round2(room.area * (1 + estimate.waste / 100)),
    unit: SQUARE_METRE,
    ...roomPrices(room, estimate.markup),
    taxRate: taxFraction(estimate),
    section: room.name,
    groupKey: room.key,
    specification: `${room.length} m × ${room.width} m + ${estimate.waste}% waste`,
  };
  const productCode = room.product ? room.product.sku : room.sku;
  if (productCode) {
    line.productCode = productCode;
  }
  // The resolved id links the line to the catalog (and makes the host add the product's own
  // tasks). Without an id the line is still added, as free-form text. We never set the
  // deprecated `productId`: `linkedItemId` with lineType "product" replaces it.
  if (room.product) {
    line.linkedItemId = room.product.id;
  }
  return line;
}

/**
 * Installation. A catalog product with a task sequence (OAK-01 has INSTALL and UNDERLAY) already
 * gets its installation tasks injected by the host, so adding our own would charge twice. We add
 * an explicit installation task only for rooms whose product isn't in the catalog.
 */
function installationLine(room, estimate, template) {
  const line = {
    lineType: "task",
    description: template ? template.name : "Installation",
    qty: round2(room.area),
    unit: SQUARE_METRE,
    unitPrice: estimate.installRate,
    taxRate: taxFraction(estimate),
    section: room.name,
    groupKey: room.key,
  };
  if (template) {
    line.linkedItemId = template.id;
  }
  return line;
}

function travelLine(estimate, costItem) {
  const line = {
    lineType: "cost",
    description: costItem ? costItem.name : "Travel",
    qty: estimate.travelKm,
    unitPrice: estimate.travelRate,
    taxRate: taxFraction(estimate),
    section: "Travel",
    specification: `${estimate.travelKm} km`,
  };
  if (costItem) {
    line.linkedItemId = costItem.id;
  }
  return line;
}

/** The batch, and for each line a label naming where it came from (for error messages). */
function buildLines(estimate, references) {
  const lines = [];
  const labels = [];
  for (const room of estimate.rooms) {
    lines.push(productLine(room, estimate));
    labels.push(`Room "${room.name}"`);
    if (estimate.install && !room.product) {
      lines.push(installationLine(room, estimate, references.install));
      labels.push(`Installation in "${room.name}"`);
    }
  }
  if (estimate.travel) {
    lines.push(travelLine(estimate, references.travel));
    labels.push("Travel");
  }
  return { lines, labels };
}

// ---------------------------------------------------------------------------------------------
// Actions

function setBusy(busy) {
  state.busy = busy;
  ui.form.setAttribute("aria-busy", String(busy));
  ui.submit.disabled = busy || !state.catalog || Boolean(state.locked);
  ui.addRoom.disabled = busy;
  roomFields.setBusy(busy);
}

async function addToQuote(event) {
  event.preventDefault();
  clearFieldErrors(ui.form);
  const { estimate, errors } = readEstimate();
  if (errors.length > 0) {
    setStatus(showFieldErrors(errors), "error");
    return;
  }

  setBusy(true);
  let labels = [];
  try {
    if (!(await confirmRepeats(estimate.rooms))) {
      setStatus("Nothing was added. Rename a room to add it as a new one.");
      return;
    }
    if (state.locked) {
      setStatus(state.locked, "error"); // The quote was sent while the question was open.
      return;
    }
    setStatus("Adding lines to the quote…");
    const references = await resolveReferences(estimate);
    const batch = buildLines(estimate, references);
    labels = batch.labels;
    // One call for everything: the host adds all of these lines or none of them.
    await bridge.quotes.addLines(batch.lines);
    // The host may add more: the installation tasks of catalog products. We count what we sent.
    const sent = batch.lines.length === 1 ? "1 line" : `${batch.lines.length} lines`;
    setStatus(`Added ${sent} to the quote, plus any tasks the app adds for catalog products.`, "success");
    roomFields.reset();
    if (bridge.supports("quotes.getOpen") && !bridge.supports("quote.changed")) {
      readOpenQuote(); // No event will say what the quote holds now.
    }
  } catch (error) {
    // Nothing was applied, and the form is untouched: the user can fix it and try again.
    setStatus(describe(withLineLabels(error, labels)), "error");
  } finally {
    setBusy(false);
  }
}

/** Offers floor coverings (sold per m²) as suggestions in every SKU field. */
function fillProductSuggestions(catalog) {
  const coverings = catalog.products.filter((product) => product.unit === SQUARE_METRE);
  ui.productCodes.replaceChildren(...coverings.map((product) => h("option", { value: product.sku, label: product.name })));
}

async function loadCatalog() {
  const products = await loadAllInView((options) => bridge.products.list(options), {
    what: "the product catalog", status: ui.catalogStatus, progress: ui.catalogProgress, retry: ui.catalogRetry, words: WORDS,
  });
  if (products) {
    state.catalog = bySku(products);
    fillProductSuggestions(state.catalog);
    ui.catalogStatus.textContent = `${state.catalog.size} products loaded.`;
    setBusy(state.busy);
    roomFields.entries.forEach(updateRoom);
  }
}

async function greet() {
  const context = await bridge.context.get();
  state.format = formatter(context);
  ui.greeting.textContent = `Hello ${context.userName}. Prices are for ${context.tenantName}.`;
}

function toggleOptionalFields() {
  ui.installRateField.hidden = !ui.install.checked;
  ui.travelFields.hidden = !ui.travel.checked;
}

function restorePreferences() {
  const preferences = savedPreferences();
  for (const [name, input] of preferenceInputs()) {
    input.value = String(preferences[name]);
    input.addEventListener("change", () => {
      state.edited.add(name);
      saveEditedPreferences();
    });
  }
}

/**
 * The install settings an administrator chose for this organisation become the defaults of the
 * waste and markup fields (a value the user typed on this page stays). On an app without the
 * settings extension the tool keeps its own defaults and the user's saved ones.
 */
async function followSettings() {
  if (!bridge.supports("settings.get")) {
    return;
  }
  bridge.on("settings.changed", ({ settings }) => applySettings(settings));
  try {
    applySettings(await bridge.settings.get());
  } catch (error) {
    setStatus(`The tool's settings didn't load, so its own defaults apply. ${describe(error)}`, "warning");
  }
}

function applySettings(settings) {
  const inputs = new Map(preferenceInputs());
  for (const [setting, name] of Object.entries(SETTING_PREFERENCES)) {
    const value = settings[setting];
    if (!Number.isFinite(value)) {
      continue;
    }
    state.fromSettings.add(name);
    const input = inputs.get(name);
    if (!state.edited.has(name)) {
      input.value = String(value);
    }
  }
}

/** When the tool can't work at all, say why and hide a form that could only fail. */
function showFatal(message) {
  ui.greeting.textContent = "";
  ui.catalog.hidden = true;
  ui.form.hidden = true;
  setStatus(message, "error");
}

async function start() {
  restorePreferences();
  toggleOptionalFields();
  roomFields.add();
  ui.install.addEventListener("change", toggleOptionalFields);
  ui.travel.addEventListener("change", toggleOptionalFields);
  ui.addRoom.addEventListener("click", () => roomFields.add().fields.name.focus());
  ui.catalogRetry.addEventListener("click", loadCatalog);
  ui.form.addEventListener("submit", addToQuote);
  clearErrorsOnEdit(ui.form);

  try {
    await bridgeReady();
    // The host grants addLines only to quoting_extension tools opened from a quote.
    if (!bridge.supports("quotes.addLines")) {
      showFatal("This tool adds lines to a quote: open it from inside a quote in the app.");
      return;
    }
    await greet();
  } catch (error) {
    showFatal(describe(error));
    return;
  }
  await followSettings();
  followOpenQuote();
  await loadCatalog();
}

start();
