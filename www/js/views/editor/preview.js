// The quote editor's Preview: the quote as the customer sees it.

import { h } from "/sdk/ui.js";
import { addDays, formatDate, formatMoney, formatNumber, unitLabel } from "../../format.js";
import { groupLines, sumCents } from "./lines.js";

/** What the customer sees: sections with their lines and subtotals; no cost, no margin. */
export function previewDocument(quote, tenantName) {
  const expiry = addDays(quote.date, quote.expiryDays);
  return h("article", { class: "preview", "aria-label": "Customer preview" },
    h("header", { class: "preview-head" },
      h("div", {}, h("p", { class: "preview-from" }, tenantName ?? ""), h("h2", {}, `${quote.quoteType} ${quote.ref}`)),
      h("dl", { class: "facts" },
        h("div", {}, h("dt", {}, "For"), h("dd", {}, quote.customerName)),
        h("div", {}, h("dt", {}, "Date"), h("dd", {}, formatDate(quote.date))),
        expiry ? h("div", {}, h("dt", {}, "Valid until"), h("dd", {}, formatDate(expiry))) : null)),
    quote.title ? h("p", { class: "lead" }, quote.title) : null,
    quote.lines.length === 0 ? h("p", { class: "muted" }, "No lines yet.") : null,
    groupLines(quote.lines).map((section) => {
      const lines = section.groups.flatMap((group) => group.lines);
      return h("section", { class: "preview-section" },
        h("h3", {}, section.name),
        h("div", { class: "table-wrap" }, h("table", { class: "data" },
          h("thead", {}, h("tr", {},
            h("th", { scope: "col" }, "Description"),
            h("th", { scope: "col", class: "num" }, "Qty"),
            h("th", { scope: "col" }, "Unit"),
            h("th", { scope: "col", class: "num" }, "Rate"),
            h("th", { scope: "col", class: "num" }, "Amount"))),
          h("tbody", {}, lines.map((line) => h("tr", {},
            h("td", {}, line.description,
              line.specification ? h("span", { class: "sub" }, line.specification) : null,
              line.location ? h("span", { class: "sub" }, line.location) : null),
            h("td", { class: "num" }, formatNumber(line.qty)),
            h("td", {}, unitLabel(line.unit)),
            h("td", { class: "num" }, formatMoney(line.unitPrice)),
            h("td", { class: "num" }, formatMoney(line.nett))))),
          h("tfoot", {}, h("tr", {},
            h("th", { scope: "row", colspan: "4" }, `${section.name} subtotal`),
            h("td", { class: "num" }, formatMoney(sumCents(lines, "nett"))))))));
    }),
    h("dl", { class: "totals" },
      h("div", {}, h("dt", {}, "Nett"), h("dd", {}, formatMoney(quote.totals?.nett))),
      h("div", {}, h("dt", {}, "Tax"), h("dd", {}, formatMoney(quote.totals?.tax))),
      h("div", { class: "total-strong" }, h("dt", {}, "Total"), h("dd", {}, formatMoney(quote.totals?.total)))));
}
