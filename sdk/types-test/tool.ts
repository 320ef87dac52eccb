// A small tool written against bridge.d.ts; `cargo xtask test` type-checks it
// with tsc so the typings cannot drift from what the SDK provides.
import type { BridgeAddLineDto, BridgeError, BridgeProductDto } from "../bridge";

export async function addFlooring(areaM2: number): Promise<string> {
  const context = await bridge.context.get();
  const products = await bridge.products.list({ pageSize: 500 });
  const bySku = new Map<string, BridgeProductDto>();
  for (const product of products.items) bySku.set(product.sku.toLowerCase(), product);

  const templates = await bridge.taskTemplates.list({ codes: ["INSTALL"] });
  const install = templates.items.find((t) => t.code === "INSTALL");
  const travel = (await bridge.costItems.list({ codes: ["TRAVEL"] })).items[0];
  const oak = bySku.get("oak-01");

  const lines: BridgeAddLineDto[] = [
    {
      description: "Oak boards",
      productCode: "OAK-01",
      ...(oak ? { linkedItemId: oak.id } : {}),
      qty: areaM2,
      unit: "T_SQUARE_METRE",
      unitPrice: 89.5,
      costPrice: 61,
      taxRate: 15,
      section: "Kitchen",
      groupKey: "kitchen",
    },
  ];
  if (install) lines.push({ lineType: "task", linkedItemId: install.id, qty: areaM2 / 4, unitPrice: 45, taxRate: 0.15 });
  if (travel) lines.push({ lineType: "cost", linkedItemId: travel.id, qty: 1, unitPrice: 60, taxRate: 0.15 });

  try {
    if (bridge.supports("quotes.addLines")) {
      await bridge.quotes.addLines(lines);
    } else {
      const created = await bridge.quotes.create({
        customerEmail: context.userEmail,
        upsertByEmail: true,
        lines: [{ description: "Oak boards", productCode: "OAK-01", qty: areaM2, unitPrice: 89.5, taxRate: 0.15 }],
      });
      return created.url ?? created.ref;
    }
    return `${lines.length} lines for ${context.tenantName}`;
  } catch (caught) {
    if (caught instanceof bridge.BridgeError) {
      const error: BridgeError = caught;
      const where = error.details.map((d) => `${d.path}: ${d.message}`).join("; ");
      if (error.code === "RATE_LIMITED") return `busy, retry in ${error.retryAfter ?? 1} s`;
      return `${error.code}: ${where || error.message}`;
    }
    throw caught;
  }
}

export async function waitForHost(): Promise<boolean> {
  try {
    const info = await window.bridge.ready();
    return info.methods.includes("quotes.addLines") && info.toolType === "quoting_extension";
  } catch {
    return false;
  }
}

export const madeInTests: BridgeError = bridge.BridgeError({ code: "INVALID_PARAMS", message: "x", details: [{ path: "lines[0].qty", message: "must be greater than 0" }] });
