// The data the example tools' tests start from: a small flooring business, as fixtures for
// createTestHost. Amounts are decimal strings, so they stay exact.

export const customers = [
  { id: "cust-aroha", name: "Aroha Ngata", email: "aroha@example.test", phone: "021 555 0101" },
  { id: "cust-ben", name: "Ben Carter", email: "ben@example.test" },
  { id: "cust-chloe", name: "Chloe Ngata", email: "chloe@example.test" },
  { id: "cust-dev", name: "Dev Patel", email: "" },
];

export const taskTemplates = [
  { id: "task-install", code: "INSTALL", name: "Installation", unitPrice: "45.00", costPrice: "30.00" },
  { id: "task-underlay", code: "UNDERLAY", name: "Underlay", unitPrice: "6.50", costPrice: "4.00" },
];

export const products = [
  {
    id: "prod-oak", sku: "OAK-01", name: "Oak engineered board 14mm", unit: "T_SQUARE_METRE",
    sellPrice: "89.50", costPrice: "61.00",
    taskSequence: [{ taskTemplate: "INSTALL", qtyPerUnit: "0.25" }, { taskTemplate: "UNDERLAY", qtyPerUnit: "1" }],
  },
  {
    id: "prod-vinyl", sku: "VINYL-02", name: "Vinyl plank", unit: "T_SQUARE_METRE",
    sellPrice: "54.00", costPrice: "36.00", taskSequence: [{ taskTemplate: "INSTALL", qtyPerUnit: "0.2" }],
  },
  { id: "prod-skirt", sku: "SKIRT-05", name: "Oak skirting", unit: "T_LINEAR_METRE", sellPrice: "18.50", costPrice: "11.00" },
];

export const costItems = [{ id: "cost-travel", code: "TRAVEL", name: "Travel", type: "T_TRAVEL" }];

/** The whole catalog, with a signed-in office user and their organisation. */
export function business(extra = {}) {
  return {
    user: { name: "Olivia Office", email: "office@example.test", role: "office" },
    tenant: { name: "Harbour Flooring Ltd", cultureCode: "en-NZ", taxRate: "0.15", quoteSequence: 1000 },
    customers,
    taskTemplates,
    products,
    costItems,
    ...extra,
  };
}

/** A draft quote for Aroha, with `lines` (fixture lines). */
export function draftQuote(lines = []) {
  return { id: "quote-draft", ref: "Q-0999", customerId: "cust-aroha", date: "2025-03-01", lines };
}
