// Quick quote's own tests, on the test host: the real host module answering through an
// in-memory backend with the platform's rules.

import { assert, assertEqual, createTestHost, fill, runTests, waitFor } from "@toolbridge/sdk/testing";
import { business } from "./fixtures.js";

const ENTRY = "/example-tools/quick-quote/index.html";

localStorage.clear();

/** A test host with quick quote mounted, its customers and catalog loaded. */
async function openQuickQuote() {
  const host = await createTestHost(business());
  const tool = host.mount({ entry: ENTRY, type: "standalone", title: "Quick quote" });
  await tool.ready();
  await waitFor(() => tool.$("#catalog-status").textContent.startsWith("3 products"), { message: "the catalog" });
  await waitFor(() => tool.document.querySelectorAll("#customers input").length === 4, { message: "the customers" });
  return { host, tool };
}

/** Fills line `index` (0-based) of the form. */
function fillLine(tool, index, line) {
  const element = tool.document.querySelectorAll("#lines .line")[index];
  for (const [name, value] of Object.entries(line)) {
    fill(element.querySelector(`[data-field="${name}"]`), value);
  }
}

await runTests({
  async "refuses an invalid email before any call"() {
    const { host, tool } = await openQuickQuote();
    fill(tool.$("#mode-email"), true);
    fill(tool.$("#customer-email"), "aroha at example.test");
    fillLine(tool, 0, { description: "Measure and quote", qty: 1, unitPrice: 120 });
    tool.$("#create").click();
    await waitFor(() => tool.$("#status").dataset.kind === "error", { message: "the refusal" });

    assertEqual(tool.$("#status").textContent, "Check the highlighted field.");
    assertEqual(tool.$("#customer-email").getAttribute("aria-invalid"), "true");
    assertEqual(tool.$("#customer-email-error").textContent, "Enter an email address like name@example.com.");
    assertEqual(host.callsTo("quotes.create").length, 0, "quotes.create calls");
    assertEqual(host.backend.requests.filter((request) => request.method !== "GET"), [], "writes");
    assertEqual(host.quotes.length, 0, "quotes");
  },

  async "creates a draft quote for a picked customer, linking catalog products"() {
    const { host, tool } = await openQuickQuote();
    fill(tool.$("#customer-cust-aroha"), true);
    assert(tool.$("#customer-cust-dev").disabled, "a customer without an email can't be picked");
    fillLine(tool, 0, { sku: "oak-01", qty: 12 });
    assertEqual(tool.document.querySelector("#lines .line [data-field=unitPrice]").value, "89.5",
      "the catalog price filled in");
    tool.$("#add-line").click();
    fillLine(tool, 1, { description: "Disposal", qty: 1, unitPrice: 80 });
    fill(tool.$("#title"), "Lounge floor");
    tool.$("#create").click();
    await waitFor(() => !tool.$("#result").hidden, { message: "the quote being created" });

    assertEqual(tool.$("#result-ref").textContent, "Q-1001");
    assert(tool.$("#result-total").textContent.includes("1,327.10"), tool.$("#result-total").textContent);
    assertEqual(host.quotes.length, 1, "quotes");
    const [quote] = host.quotes;
    assertEqual([quote.ref, quote.status, quote.customerId, quote.title], ["Q-1001", "Draft", "cust-aroha", "Lounge floor"]);
    assertEqual(quote.lines.map(({ description, productCode, linkedItemId, qty, unitPrice, costPrice, taxRate }) =>
      ({ description, productCode, linkedItemId, qty, unitPrice, costPrice, taxRate })), [
      { description: "Oak engineered board 14mm", productCode: "OAK-01", linkedItemId: "prod-oak", qty: 12,
        unitPrice: 89.5, costPrice: 61, taxRate: 0.15 },
      { description: "Disposal", qty: 1, unitPrice: 80, costPrice: 80, taxRate: 0.15 },
    ]);
    assertEqual(quote.totals.total, 1327.1, "total");
    assertEqual(host.backend.customers.length, 4, "customers (Aroha was found by her email)");
  },

  async "a new email makes a new customer, and the quote opens in the app"() {
    const { host, tool } = await openQuickQuote();
    fill(tool.$("#mode-email"), true);
    fill(tool.$("#customer-email"), "new.person@example.test");
    fill(tool.$("#customer-name"), "New Person");
    fillLine(tool, 0, { description: "Survey", qty: 1, unitPrice: 150 });
    tool.$("#create").click();
    await waitFor(() => !tool.$("#result").hidden, { message: "the quote being created" });
    const created = host.quotes[0];
    assertEqual(created.customerName, "New Person");
    assertEqual(host.backend.customers.map((customer) => customer.email).at(-1), "new.person@example.test");

    tool.$("#result-open").click();
    await waitFor(() => tool.$("#status").textContent === "Q-1001 is open in the app.", { message: "the quote opening" });
    assertEqual(host.navigations.map(({ quoteId, went }) => [quoteId, went]), [[created.id, true]]);
    assertEqual(host.quote.id, created.id, "the quote open in the editor");
  },
});
