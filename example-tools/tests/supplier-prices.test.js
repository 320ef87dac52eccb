// Supplier prices' own tests, on the test host: the real host module answering through an
// in-memory backend with the platform's rules, and a stand-in for the supplier's server that
// gets the request the platform's server would send (the secret key and the token put in).

import { assert, assertEqual, createTestHost, fill, runTests, waitFor } from "@toolbridge/sdk/testing";
import { business, draftQuote } from "./fixtures.js";

const ENTRY = "/example-tools/supplier-prices/index.html";
const MANIFEST = await (await fetch("/example-tools/supplier-prices/manifest.json")).json();
const SERVICE = MANIFEST.permissions.connect[0];
const KEY = "test-supplier-key";
const PRICE_LIST = {
  updatedAt: "2026-11-27T20:30:00Z",
  currency: "NZD",
  items: [
    { code: "OAK-12", description: "Oak plank 12 mm", unit: "m²", cost: 42.5 },
    { code: "OAK-18", description: "Oak plank 18 mm", unit: "m²", cost: 58 },
  ],
};

/** The claims of a compact JWS, unverified: what the supplier's server would read once verified. */
function claims(token) {
  const payload = token.split(".")[1].replace(/-/g, "+").replace(/_/g, "/");
  return JSON.parse(atob(payload));
}

/**
 * A test host with a draft quote open, the tool mounted from it, and the supplier answering
 * `answer(request)` (by default the price list, to a request with the key and a token). `asked`
 * collects what the supplier got.
 */
async function openTool({ answer, tenant = {}, mount = {} } = {}) {
  const base = business({ quotes: [draftQuote()], openQuote: "Q-0999" });
  const host = await createTestHost({
    ...base,
    tenant: { ...base.tenant, timeZone: "Pacific/Auckland", currency: "NZD", ...tenant },
    manifest: MANIFEST,
    settings: { apiKey: KEY },
  });
  const asked = [];
  host.onFetch(async (request) => {
    asked.push({
      url: request.url,
      key: request.headers.get("x-api-key"),
      token: (request.headers.get("authorization") ?? "").replace(/^Bearer /, ""),
    });
    if (answer) return answer(request);
    return Response.json(PRICE_LIST);
  });
  const tool = host.mount({ entry: ENTRY, type: "quoting_extension", slug: "supplier-prices", title: "Supplier prices", ...mount });
  await tool.ready();
  return { host, tool, asked };
}

/** Looks `search` up in the tool and waits for its answer. */
async function lookUp(tool, search) {
  await waitFor(() => !tool.$("#lookup").hidden, { message: "the lookup form" });
  fill(tool.$("#search"), search);
  const status = tool.$("#status");
  status.textContent = "";
  tool.$("#look-up").click();
  await waitFor(() => status.textContent && status.textContent !== "Asking the supplier…", { message: "the supplier's answer" });
  return status.textContent;
}

function parts(tool) {
  return [...tool.document.querySelectorAll("#parts .part")].map((part) => part.textContent.replace(/\s+/g, " ").trim());
}

await runTests({
  async "looks prices up with the secret key and a token, and adds a part at the markup"() {
    const { host, tool, asked } = await openTool();
    assertEqual(await lookUp(tool, "oak"), "2 parts found.");
    assertEqual(asked.length, 1);
    assertEqual(asked[0].url, `${SERVICE}/v1/prices?q=oak`);
    assertEqual(asked[0].key, KEY, "the secret setting, put in for {{secret.apiKey}}");
    const token = claims(asked[0].token);
    assertEqual([token.tool, token.role], ["supplier-prices", "office"]);
    const shown = parts(tool);
    assert(shown[0].includes("OAK-12") && shown[0].includes("Buy $42.50 per m², sell $55.25"), shown[0]);
    fill(tool.$("#qty-0"), "3");
    tool.$("#parts .part [data-role=add]").click();
    await waitFor(() => tool.$("#status").textContent !== "2 parts found.", { message: "the part added" });
    assertEqual(tool.$("#status").textContent, "Added 3 × OAK-12 to the quote.");
    const line = host.quote.lines.at(-1);
    assertEqual(
      [line.productCode, line.description, Number(line.qty), Number(line.unitPrice), Number(line.costPrice), Number(line.taxRate)],
      ["OAK-12", "Oak plank 12 mm", 3, 55.25, 42.5, 0.15],
    );
  },

  async "never sees the key: the settings it reads leave the secret out"() {
    const { tool } = await openTool();
    const settings = await tool.window.bridge.settings.get();
    assert(!("apiKey" in settings), JSON.stringify(settings));
    assert(!JSON.stringify(settings).includes(KEY), JSON.stringify(settings));
  },

  async "shows the price list's time in the tenant's time zone, and follows a change of it"() {
    const { host, tool } = await openTool();
    await lookUp(tool, "oak");
    // 20:30 UTC on the 27th is 9:30 the next morning in Auckland.
    const updated = () => tool.$("#updated").textContent;
    assert(updated().includes("9:30") && updated().includes("Pacific/Auckland"), updated());
    host.setContext({ timeZone: "Europe/London" });
    await waitFor(() => updated().includes("Europe/London"), { message: "the new time zone" });
    assert(updated().includes("8:30"), updated());
  },

  async "says what to do when the supplier refuses the key"() {
    const { tool } = await openTool({ answer: () => Response.json({ error: "bad key" }, { status: 401 }) });
    const status = await lookUp(tool, "oak");
    assert(status.includes("Settings → Tools"), status);
    assertEqual(parts(tool), []);
  },

  async "will not add parts priced in another currency"() {
    const { tool } = await openTool({ answer: () => Response.json({ ...PRICE_LIST, currency: "AUD" }) });
    const status = await lookUp(tool, "oak");
    assert(status.includes("AUD") && status.includes("NZD"), status);
    assert(tool.$("#parts .part [data-role=add]").disabled, "the add button is enabled");
  },

  async "in an app that offers no bridge.fetch, says so instead of failing"() {
    const { tool, asked } = await openTool({ mount: { fetch: false } });
    await waitFor(() => tool.$("#status").textContent.includes("bridge.fetch"), { message: "the warning" });
    assert(tool.$("#lookup").hidden, "the form is offered");
    assertEqual(asked, []);
  },
});
