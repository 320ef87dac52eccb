// New quote: a customer and a first line, then straight into the editor, where tools add the
// rest. The app's session creates quotes with the same body as the bridge's `quotes.create`: the
// customer is matched by email (`upsertByEmail`), and each line names a product by its SKU
// (`productCode`) with quantity, unit price and tax rate (a fraction: 0.15 means 15%).

import { h, replace } from "/sdk/ui.js";
import { api, describeError } from "../api.js";
import { focusHeading } from "../dom.js";
import { navigate } from "../router.js";

const PAGE_SIZE = 500; // the largest page the API allows
const MAX_PAGES = 20;

async function loadAll(list) {
  const items = [];
  for (let page = 1; page <= MAX_PAGES; page += 1) {
    const result = await list(page, PAGE_SIZE);
    items.push(...result.items);
    if (items.length >= result.totalCount || result.items.length === 0) break;
  }
  return items;
}

function field(id, label, control, hint) {
  const error = h("p", { id: `${id}-error`, class: "field-error", hidden: true });
  return {
    element: h("div", { class: "field" }, h("label", { for: id }, label), hint ? h("p", { id: `${id}-hint`, class: "hint" }, hint) : null, control, error),
    error,
    control,
  };
}

export async function renderNewQuote(root) {
  replace(root, h("h1", {}, "New quote"), h("p", { class: "muted" }, "Loading customers and products…"));
  focusHeading(root);
  let customers;
  let products;
  try {
    [customers, products] = await Promise.all([loadAll(api.customers), loadAll(api.products)]);
  } catch (error) {
    replace(root, h("h1", {}, "New quote"), h("p", { class: "form-error" }, describeError(error)));
    return {};
  }
  customers.sort((a, b) => a.name.localeCompare(b.name));
  products.sort((a, b) => a.sku.localeCompare(b.sku));
  const productById = new Map(products.map((product) => [product.id, product]));

  const customer = field("nq-customer", "Customer", h("select", { id: "nq-customer", required: true },
    h("option", { value: "" }, "Choose a customer…"),
    customers.map((c) => h("option", { value: c.id, disabled: !c.email }, c.email ? `${c.name} (${c.email})` : `${c.name} (no email)`))),
    "Customers are matched by email, so one without an email cannot be chosen here.");
  const product = field("nq-product", "Product", h("select", { id: "nq-product", required: true },
    h("option", { value: "" }, "Choose a product…"),
    products.map((p) => h("option", { value: p.id }, `${p.sku} · ${p.name}`))));
  const qty = field("nq-qty", "Quantity", h("input", { id: "nq-qty", type: "number", inputmode: "decimal", min: "0", max: "10000", step: "any", value: "1", required: true }));
  const unitPrice = field("nq-price", "Unit price", h("input", { id: "nq-price", type: "number", inputmode: "decimal", min: "0", max: "1000000", step: "any", required: true }));
  const taxRate = field("nq-tax", "Tax rate (%)", h("input", { id: "nq-tax", type: "number", inputmode: "decimal", min: "0", max: "100", step: "any", value: "15", required: true }));
  const fields = { customer, product, qty, unitPrice, taxRate };
  // Server paths → the field that shows the message.
  const byPath = {
    customerEmail: customer, customerName: customer, upsertByEmail: customer,
    "lines[0].productCode": product, "lines[0].description": product,
    "lines[0].qty": qty, "lines[0].unitPrice": unitPrice, "lines[0].taxRate": taxRate,
  };

  product.control.addEventListener("change", () => {
    const chosen = productById.get(product.control.value);
    if (chosen) unitPrice.control.value = String(chosen.price);
  });

  const formError = h("p", { class: "form-error", role: "alert", hidden: true });
  const submit = h("button", { type: "submit", class: "primary" }, "Create quote");

  const clearErrors = () => {
    formError.hidden = true;
    for (const f of Object.values(fields)) {
      f.error.hidden = true;
      f.control.removeAttribute("aria-invalid");
      f.control.removeAttribute("aria-describedby");
    }
  };
  const showFieldError = (f, message) => {
    f.error.textContent = message;
    f.error.hidden = false;
    f.control.setAttribute("aria-invalid", "true");
    f.control.setAttribute("aria-describedby", f.error.id);
  };

  const form = h("form", { class: "stack narrow", novalidate: true, on: { submit: async (event) => {
    event.preventDefault();
    clearErrors();
    const chosenCustomer = customers.find((c) => c.id === customer.control.value);
    const chosenProduct = productById.get(product.control.value);
    const numbers = { qty: Number(qty.control.value), unitPrice: Number(unitPrice.control.value), taxRate: Number(taxRate.control.value) };
    const problems = [];
    if (!chosenCustomer) problems.push([customer, "Choose a customer."]);
    if (!chosenProduct) problems.push([product, "Choose a product."]);
    if (!(qty.control.value !== "" && numbers.qty > 0 && numbers.qty <= 10000)) problems.push([qty, "Enter a quantity above 0 and at most 10 000."]);
    if (chosenProduct && !(unitPrice.control.value !== "" && numbers.unitPrice >= 0 && numbers.unitPrice <= 1000000)) problems.push([unitPrice, "Enter a price from 0 to 1 000 000."]);
    if (!(taxRate.control.value !== "" && numbers.taxRate >= 0 && numbers.taxRate <= 100)) problems.push([taxRate, "Enter a tax rate from 0 to 100."]);
    if (problems.length) {
      for (const [f, message] of problems) showFieldError(f, message);
      problems[0][0].control.focus();
      return;
    }
    submit.disabled = true;
    try {
      const created = await api.createQuote({
        customerName: chosenCustomer.name,
        customerEmail: chosenCustomer.email,
        upsertByEmail: true,
        lines: [{
          productCode: chosenProduct.sku,
          description: chosenProduct.name,
          qty: numbers.qty,
          unitPrice: numbers.unitPrice,
          taxRate: numbers.taxRate / 100,
        }],
      });
      navigate(`#/quotes/${encodeURIComponent(created.id)}`);
    } catch (error) {
      let shown = false;
      for (const problem of error.errors ?? []) {
        const f = byPath[problem.path];
        if (f) {
          showFieldError(f, problem.message);
          shown = true;
        }
      }
      if (!shown || (error.errors ?? []).some((problem) => !byPath[problem.path])) {
        formError.textContent = describeError(error);
        formError.hidden = false;
      }
    } finally {
      submit.disabled = false;
    }
  } } },
  Object.values(fields).map((f) => f.element),
  formError,
  h("div", { class: "actions" }, submit, h("a", { class: "button secondary", href: "#/quotes" }, "Cancel")));

  replace(root,
    h("h1", {}, "New quote"),
    h("p", { class: "lead" }, "Start a Draft with one line; add the rest in the editor, for example with the Flooring estimator."),
    form);
  focusHeading(root);
  return {};
}
