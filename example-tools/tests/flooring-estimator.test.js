// The flooring estimator's own tests, on the test host: the real host module answering through
// an in-memory backend with the platform's rules.

import { assert, assertEqual, createTestHost, fill, runTests, waitFor } from "@toolbridge/sdk/testing";
import { business, draftQuote } from "./fixtures.js";

const ENTRY = "/example-tools/flooring-estimator/index.html";
// Its install settings come from what its manifest declares, as on the platform.
const MANIFEST = await (await fetch("/example-tools/flooring-estimator/manifest.json")).json();

// The tool keeps preferences in localStorage, which the test page shares: start clean.
localStorage.clear();

/**
 * A test host with a draft quote open and the estimator mounted and loaded; `stored` are the
 * install settings an admin saved (none: the manifest's defaults), `manifest` null for an app
 * that passes the tool no settings.
 */
async function openEstimator({ lines = [], stored, manifest = MANIFEST } = {}) {
  const fixtures = business({ quotes: [draftQuote(lines)], openQuote: "Q-0999" });
  if (manifest) {
    fixtures.manifest = manifest;
    fixtures.settings = stored ?? {};
  }
  const host = await createTestHost(fixtures);
  const tool = host.mount({ entry: ENTRY, type: "quoting_extension", title: "Flooring" });
  await tool.ready();
  await waitFor(() => !tool.$("#add-to-quote").disabled, { message: "the catalog loading" });
  return { host, tool };
}

/** Fills room `index` (0-based) of the form. */
function fillRoom(tool, index, room) {
  const element = tool.document.querySelectorAll("#rooms .room")[index];
  const field = (name) => element.querySelector(`[data-field="${name}"]`);
  for (const [name, value] of Object.entries(room)) {
    fill(field(name), value);
  }
}

function line(quote, lineNo) {
  const found = quote.lines.find((candidate) => candidate.lineNo === lineNo);
  assert(found, `the quote has no line ${lineNo}`);
  return found;
}

/** The fields of a quote line that the estimator decides. */
function shape(quoteLine) {
  const { lineType, description, productCode, linkedItemId, qty, unit, unitPrice, costPrice, taxRate,
    section, injected, parentLineNo } = quoteLine;
  return { lineType, description, productCode, linkedItemId, qty, unit, unitPrice, costPrice, taxRate,
    section, injected, parentLineNo };
}

await runTests({
  async "rooms become sections, groups, task lines and totals"() {
    const { host, tool } = await openEstimator();
    fillRoom(tool, 0, { name: "Lounge", length: 5, width: 4, sku: "OAK-01" });
    tool.$("#add-room").click();
    fillRoom(tool, 1, { name: "Hall", length: 3, width: 2, description: "Cork tiles", buyPrice: 50 });
    fill(tool.$("#install"), true);
    fill(tool.$("#travel"), true);
    fill(tool.$("#travel-km"), 30);
    tool.$("#add-to-quote").click();
    await waitFor(() => tool.$("#status").dataset.kind === "success", { message: "the lines being added" });

    assertEqual(tool.$("#status").textContent,
      "Added 4 lines to the quote, plus any tasks the app adds for catalog products.");
    const quote = host.quote;
    assertEqual(quote.lines.length, 6, "lines on the quote");
    // Lounge: the oak with 10% waste on 20 m², marked down to its cost by the 40% markup, and
    // the installation and underlay the catalog injects for it.
    assertEqual(shape(line(quote, 1)), {
      lineType: "product", description: "Oak engineered board 14mm", productCode: "OAK-01",
      linkedItemId: "prod-oak", qty: 22, unit: "T_SQUARE_METRE", unitPrice: 89.5, costPrice: 63.93,
      taxRate: 0.15, section: "Lounge", injected: false,
    });
    assertEqual(shape(line(quote, 2)), {
      lineType: "task", description: "Installation", productCode: "INSTALL", linkedItemId: "task-install",
      qty: 5.5, unit: "T_ITEM", unitPrice: 45, costPrice: 30, taxRate: 0.15, section: "Lounge",
      injected: true, parentLineNo: 1,
    });
    assertEqual(shape(line(quote, 3)), {
      lineType: "task", description: "Underlay", productCode: "UNDERLAY", linkedItemId: "task-underlay",
      qty: 22, unit: "T_ITEM", unitPrice: 6.5, costPrice: 4, taxRate: 0.15, section: "Lounge",
      injected: true, parentLineNo: 1,
    });
    // Hall: a product not in the catalog, marked up from its buy price, with the installation
    // the estimator adds itself.
    assertEqual(shape(line(quote, 4)), {
      lineType: "product", description: "Cork tiles", qty: 6.6, unit: "T_SQUARE_METRE", unitPrice: 70,
      costPrice: 50, taxRate: 0.15, section: "Hall", injected: false,
    });
    assertEqual(shape(line(quote, 5)), {
      lineType: "task", description: "Installation", linkedItemId: "task-install", qty: 6,
      unit: "T_SQUARE_METRE", unitPrice: 25, costPrice: 25, taxRate: 0.15, section: "Hall", injected: false,
    });
    assertEqual(shape(line(quote, 6)), {
      lineType: "cost", description: "Travel", linkedItemId: "cost-travel", qty: 30, unit: "T_ITEM",
      unitPrice: 1.5, costPrice: 1.5, taxRate: 0.15, section: "Travel", injected: false,
    });
    // Each room is a group of its own; travel belongs to none.
    const groups = quote.lines.map((quoteLine) => quoteLine.groupId);
    assert(groups[0] > 0 && groups[3] > 0 && groups[0] !== groups[3], `room groups ${groups}`);
    assertEqual(groups, [groups[0], groups[0], groups[0], groups[3], groups[3], 0], "groups");
    assertEqual(Object.values(quote.groupKeys).sort(), [groups[0], groups[3]].sort(), "group keys");
    assertEqual(quote.totals.nett, 3016.5, "nett");
    assertEqual(quote.totals.tax, 452.48, "tax");
    assertEqual(quote.totals.total, 3468.98, "total");
    // One batch, all or nothing.
    assertEqual(host.callsTo("quotes.addLines").map((call) => call.outcome), ["ok"]);
    assert(quote.dirty, "the lines wait for the app to save them");
  },

  async "takes its default waste allowance and markup from settings, and follows changes"() {
    const { host, tool } = await openEstimator({ stored: { wastePercent: 12 } });
    assert(tool.capabilities.includes("settings.changed"), "settings offered");
    await waitFor(() => tool.$("#waste").value === "12", { message: "the waste allowance from settings" });
    assertEqual(tool.$("#markup").value, "40", "the declared default markup");
    // The admin saves a markup and clears the waste allowance, which falls back to its default.
    assertEqual(host.setSettings({ markupPercent: 30 }), { wastePercent: 10, markupPercent: 30 });
    await waitFor(() => tool.$("#markup").value === "30", { message: "the changed markup" });
    assertEqual(tool.$("#waste").value, "10");
    let refused = "";
    try {
      host.setSettings({ markupPercent: "thirty" });
    } catch (error) {
      refused = error.message;
    }
    assert(refused.includes("markupPercent: must be a number"), `a text for a number: ${refused}`);

    fillRoom(tool, 0, { name: "Study", length: 2.5, width: 4, description: "Cork tiles", buyPrice: 40 });
    tool.$("#add-to-quote").click();
    await waitFor(() => host.quote.lines.length === 1, { message: "the line being added" });
    const [added] = host.quote.lines;
    // 10 m² with 10% waste; 40 × 1.3.
    assertEqual([added.qty, added.unitPrice, added.costPrice], [11, 52, 40]);
  },

  async "without settings it keeps its own defaults"() {
    const { tool } = await openEstimator({ manifest: null });
    assert(!tool.capabilities.includes("settings.get"), "no settings offered");
    assertEqual([tool.$("#waste").value, tool.$("#markup").value], ["10", "40"]);
  },

  async "asks before adding a room the quote already has, and adds nothing when told no"() {
    const { host, tool } = await openEstimator({
      lines: [{ description: "Vinyl plank", qty: "12", unit: "T_SQUARE_METRE", unitPrice: "54", section: "Lounge" }],
    });
    await waitFor(() => tool.$("#quote-rooms").textContent.includes("Lounge"), { message: "the quote's rooms" });
    fillRoom(tool, 0, { name: "lounge", length: 3, width: 3, sku: "VINYL-02" });
    host.answerConfirm(false);
    tool.$("#add-to-quote").click();
    await waitFor(() => tool.$("#status").textContent.startsWith("Nothing was added"), { message: "the refusal" });
    assertEqual(host.confirms.map((asked) => [asked.title, asked.answer]), [['Add "lounge" again?', false]]);
    assertEqual(host.quote.lines.length, 1, "lines on the quote");
    assertEqual(host.callsTo("quotes.addLines").length, 0, "addLines calls");
  },

  async "stops adding once the quote is sent"() {
    const { host, tool } = await openEstimator();
    await host.host.send();
    await waitFor(() => tool.$("#quote-lock").textContent.includes("Sent"), { message: "the lock message" });
    assert(tool.$("#add-to-quote").disabled, "adding is off");
  },
});
