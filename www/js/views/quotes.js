// Quotes: the tenant's quotes, newest first, a page at a time (`GET /api/v1/quotes`). The list
// stays live: a `quote` event from `/api/events` updates the row it names, or adds a new quote at
// the top of the first page, with a brief highlight.

import { h, replace } from "/sdk/ui.js";
import { can } from "../app.js";
import { api, describeError } from "../api.js";
import { focusHeading } from "../dom.js";
import { formatDate, formatMoney } from "../format.js";
import { onQuoteEvent, onResync } from "../live.js";
import { refresh } from "../router.js";

const PAGE_SIZE = 20;

export function statusBadge(status) {
  return h("span", { class: `badge status status-${String(status).toLowerCase()}` }, status);
}

function quoteRow(quote) {
  return h("tr", { "data-id": quote.id },
    h("th", { scope: "row", class: "nowrap" }, h("a", { href: `#/quotes/${encodeURIComponent(quote.id)}` }, quote.ref)),
    h("td", {}, quote.customerName),
    h("td", { class: "nowrap" }, formatDate(quote.date)),
    h("td", {}, statusBadge(quote.status)),
    h("td", { class: "num" }, formatMoney(quote.total)));
}

function flash(row) {
  row.classList.remove("row-flash");
  // Restart the animation when the same row changes twice in a row.
  void row.offsetWidth;
  row.classList.add("row-flash");
  row.addEventListener("animationend", () => row.classList.remove("row-flash"), { once: true });
}

export async function renderQuotes(root, { page: pageParam }) {
  const page = Math.max(1, Number.parseInt(pageParam ?? "1", 10) || 1);
  const heading = h("div", { class: "page-head" },
    h("h1", {}, "Quotes"),
    can("createQuote") ? h("a", { class: "button primary", href: "#/quotes/new" }, "New quote") : null);
  const status = h("p", { class: "muted" }, "Loading quotes…");
  const announcer = h("p", { class: "visually-hidden", role: "status", "aria-live": "polite" });
  replace(root, heading, status, announcer);
  focusHeading(root);

  let result;
  try {
    result = await api.quotes(page, PAGE_SIZE);
  } catch (error) {
    status.textContent = describeError(error);
    status.className = "form-error";
    return {};
  }

  let totalCount = result.totalCount;
  const body = h("tbody", {}, result.items.map(quoteRow));
  const empty = h("p", { class: "muted", hidden: result.items.length > 0 }, "No quotes yet.");
  const pageText = h("span", { class: "muted" });
  const prev = h("a", { class: "button secondary", href: `#/quotes?page=${page - 1}` }, "Previous page");
  const next = h("a", { class: "button secondary", href: `#/quotes?page=${page + 1}` }, "Next page");
  const updatePager = () => {
    const pages = Math.max(1, Math.ceil(totalCount / PAGE_SIZE));
    pageText.textContent = `Page ${page} of ${pages} · ${totalCount} quote${totalCount === 1 ? "" : "s"}`;
    prev.hidden = page <= 1;
    next.hidden = page >= pages;
  };
  updatePager();

  replace(root, heading,
    h("div", { class: "table-wrap" },
      h("table", { class: "data quotes-table" },
        h("caption", { class: "visually-hidden" }, "Quotes, newest first"),
        h("thead", {}, h("tr", {},
          h("th", { scope: "col" }, "Ref"),
          h("th", { scope: "col" }, "Customer"),
          h("th", { scope: "col" }, "Date"),
          h("th", { scope: "col" }, "Status"),
          h("th", { scope: "col", class: "num" }, "Total"))),
        body)),
    empty,
    h("nav", { class: "pager", "aria-label": "Quote pages" }, prev, pageText, next),
    announcer);
  focusHeading(root);

  const stop = onQuoteEvent(({ kind, quote }) => {
    const existing = body.querySelector(`tr[data-id="${CSS.escape(quote.id)}"]`);
    if (existing) {
      const row = quoteRow(quote);
      existing.replaceWith(row);
      flash(row);
      announcer.textContent = `${quote.ref} ${kind === "sent" ? "was sent" : "was updated"}.`;
      return;
    }
    if (kind !== "created") return;
    totalCount += 1;
    updatePager();
    if (page !== 1) {
      announcer.textContent = `New quote ${quote.ref}; it is on the first page.`;
      return;
    }
    const row = quoteRow(quote);
    body.prepend(row);
    while (body.children.length > PAGE_SIZE) body.lastElementChild.remove();
    empty.hidden = true;
    flash(row);
    announcer.textContent = `New quote ${quote.ref} for ${quote.customerName}.`;
  });
  // Events may have been missed: the page shows the list as it is now.
  const stopResync = onResync(() => refresh());
  return {
    dispose() {
      stop();
      stopResync();
    },
  };
}
