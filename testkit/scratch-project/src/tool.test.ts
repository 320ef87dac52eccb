// The tool's test on the test host: the platform's host module and rules, in memory.
import type { BridgeError } from "@toolbridge/sdk";
import {
  assert,
  assertEqual,
  createTestHost,
  runTests,
  waitFor,
  type TestFixtures,
} from "@toolbridge/sdk/testing";

const fixtures: TestFixtures = {
  user: { name: "Olivia Office", role: "office" },
  customers: [{ id: "c1", name: "Aroha Ngata", email: "aroha@example.test" }],
  taskTemplates: [{ code: "INSTALL", name: "Installation", unitPrice: "45" }],
  products: [
    {
      id: "p1",
      sku: "OAK-01",
      name: "Oak board",
      unit: "T_SQUARE_METRE",
      sellPrice: "89.50",
      costPrice: "61",
      taskSequence: [{ taskTemplate: "INSTALL", qtyPerUnit: "0.25" }],
    },
  ],
  quotes: [{ id: "q1", ref: "Q-1", customerId: "c1" }],
  openQuote: "Q-1",
};

await runTests({
  async "lists the catalog and adds its first product to the open quote"() {
    const host = await createTestHost(fixtures);
    const tool = host.mount({ entry: "/tool.html", type: "quoting_extension" });
    await tool.ready();
    const add = tool.$<HTMLButtonElement>("#add");
    await waitFor(() => !add.disabled, { message: "the catalog" });
    assertEqual(tool.$("#products").textContent, "OAK-01: Oak board");
    assertEqual(tool.$("#status").textContent, "Connected to SDK 2.1.0.");
    add.click();
    await waitFor(() => host.toasts.length === 1, { message: "the toast" });
    const quote = host.quote;
    assert(quote, "a quote is open");
    assertEqual(
      quote.lines.map((line) => [line.lineType, line.description, line.qty, line.total]),
      [
        ["product", "Oak board", 2, 205.85],
        ["task", "Installation", 0.5, 25.88],
      ],
    );
    assertEqual(host.toasts[0]?.message, "Added Oak board");
    assertEqual(tool.calls.map((call) => [call.method, call.outcome]), [
      ["products.list", "ok"],
      ["quotes.addLines", "ok"],
      ["ui.toast", "ok"],
    ]);
  },

  async "offline, the tool hears it, its server calls fail unsent and its lines still go in"() {
    const host = await createTestHost(fixtures, { connectivityCheckMs: 0 });
    const tool = host.mount({ entry: "/tool.html", type: "quoting_extension" });
    await tool.ready();
    const add = tool.$<HTMLButtonElement>("#add");
    await waitFor(() => !add.disabled, { message: "the catalog" });
    const bridge = tool.window.bridge;
    assert(bridge.supports("connectivity"), "connectivity is offered");
    const heard: boolean[] = [];
    bridge.on("connectivity.changed", ({ online }) => heard.push(online));
    host.setOnline(false);
    assertEqual(host.online, false);
    await waitFor(() => heard.length === 1, { message: "connectivity.changed, offline" });
    assertEqual(await bridge.connectivity.get(), { online: false });
    const sent = host.backend.requests.length;
    let code = "";
    try {
      await bridge.products.list();
    } catch (error) {
      code = (error as BridgeError).code;
    }
    assertEqual(code, "OFFLINE");
    assertEqual(host.backend.requests.length, sent, "nothing reached the backend");
    add.click();
    await waitFor(() => host.quote?.lines.length === 2, { message: "the lines, added offline" });
    host.setOnline(true);
    await waitFor(() => heard.length === 2, { message: "connectivity.changed, online" });
    assertEqual(heard, [false, true]);
    assertEqual((await bridge.products.list()).items.length, 1);
    assertEqual(tool.calls.filter((call) => call.method === "products.list").map((call) => call.outcome), [
      "ok",
      "OFFLINE",
      "ok",
    ]);
  },

  async "names a mistake in the fixtures by its path"() {
    const wrong = { products: [{ sku: "A", name: "A", sellPrice: 89.5 }] } as unknown as TestFixtures;
    let message = "";
    try {
      await createTestHost(wrong);
    } catch (error) {
      message = (error as Error).message;
    }
    assert(message.includes("products[0].sellPrice: must be a decimal string"), message);
  },
});
