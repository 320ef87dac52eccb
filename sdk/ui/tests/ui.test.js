// The page helpers' own tests (`@toolbridge/sdk/ui`), in a real browser: what a tool author's page
// sees of each helper.

import { assert, assertEqual, runTests } from "@toolbridge/sdk/testing";
import {
  ERROR_WORDS, bridgeReady, bySku, clearErrorsOnEdit, clearFieldErrors, describeError, formatter, h, loadAll,
  loadAllInView, loadPreferences, pages, readNumber, repeatedFields, replace, savePreferences, shorten,
  showFieldErrors,
} from "@toolbridge/sdk/ui";

/** Any kind of space as a plain one: cultures put no-break spaces between amount and currency. */
const spaced = (text) => text.replace(/\s/gu, " ");

/** A bridge list of `total` numbered items that answers `pageSize` at a time, and logs each call. */
function fakeList(total, { shrinkTo } = {}) {
  const calls = [];
  const list = async ({ page, pageSize }) => {
    calls.push([page, pageSize]);
    const now = calls.length > 1 && shrinkTo !== undefined ? shrinkTo : total;
    const items = Array.from({ length: now }, (_, i) => i + 1).slice((page - 1) * pageSize, page * pageSize);
    return { items, totalCount: now, page, pageSize };
  };
  return { list, calls };
}

localStorage.clear();

await runTests({
  async "money takes the currency and the separators of the culture"() {
    assertEqual(formatter("en-NZ").money(1234.5), "$1,234.50", "en-NZ");
    assertEqual(formatter("en-GB").money(1234.5), "£1,234.50", "en-GB");
    assertEqual(formatter("en-IE").currency, "EUR", "en-IE");
    // A region without a known currency: its separators, 2 decimals, no currency.
    assertEqual(spaced(formatter("de-DE").money(1234.5)), "1.234,50", "de-DE");
    assertEqual(formatter("de-DE").currency, undefined);
  },

  async "a culture code that is not one formats plainly, and no number is a dash"() {
    const plain = formatter("not a culture!");
    assertEqual(plain.locale, undefined);
    assert(/^1.234.50$/u.test(spaced(plain.money(1234.5))), plain.money(1234.5));
    const nz = formatter("en-NZ");
    assertEqual([nz.money(undefined), nz.money("12"), nz.money(Number.NaN), nz.number(null), nz.percent("5")],
      ["–", "–", "–", "–", "–"]);
  },

  async "numbers, percentages and dates follow the culture"() {
    const nz = formatter("en-nz");
    assertEqual(nz.locale, "en-NZ", "canonical");
    assertEqual(nz.number(2.66666), "2.667");
    assertEqual(nz.number(2.66666, 1), "2.7");
    assertEqual(nz.percent(31.845), "31.85%");
    assertEqual(nz.date("2025-03-01T12:00:00Z"), "1 Mar 2025");
    assertEqual(formatter("en-US").date("2025-03-01T12:00:00Z"), "Mar 1, 2025");
    assertEqual(formatter("de-DE").date("2025-03-01T12:00:00Z"), "01.03.2025");
    assert(formatter("en-GB").dateTime("2025-03-01T12:00:00Z").startsWith("1 Mar 2025"), "date and time");
    assertEqual(nz.date("soon"), "soon", "text that is no date stays as it is");
    assertEqual(nz.date(undefined), "");
  },

  async "every bridge error code has words, and an unknown one says its code"() {
    for (const code of ["INVALID_PARAMS", "NOT_ALLOWED", "NO_OPEN_QUOTE", "QUOTE_LOCKED", "NOT_FOUND", "RATE_LIMITED",
      "UNAUTHENTICATED", "BACKEND_UNAVAILABLE", "METHOD_NOT_FOUND", "TIMEOUT", "NOT_CONNECTED", "OFFLINE", "INTERNAL"]) {
      const words = describeError({ code, message: "raw" });
      assert(!words.startsWith("Something went wrong (") && !words.includes("raw"), `${code}: ${words}`);
    }
    assertEqual(describeError({ code: "TEAPOT", message: "short and stout" }), "Something went wrong (TEAPOT).");
    assertEqual(describeError(new Error("disk full")), "Something went wrong (disk full).");
    assertEqual(describeError(undefined), "Something went wrong (unknown error).");
    assertEqual(describeError({ code: "default" }), "Something went wrong (default).");
    assertEqual(describeError({ code: "RATE_LIMITED", retryAfter: 20 }), "Too many requests. Try again in 20 s.");
    assertEqual(describeError({ code: "INVALID_PARAMS", details: [{ path: "lines[0].qty", message: "must be above 0" },
      { path: "title", message: "too long" }] }), "The app didn't accept this: lines[0].qty: must be above 0; title: too long");
  },

  async "a tool changes the words it needs and keeps the rest"() {
    const words = { ...ERROR_WORDS, NOT_ALLOWED: "Only office users create quotes.", default: (e) => `Oops: ${e.message}` };
    assertEqual(describeError({ code: "NOT_ALLOWED" }, words), "Only office users create quotes.");
    assertEqual(describeError({ code: "QUOTE_LOCKED" }, words), ERROR_WORDS.QUOTE_LOCKED);
    assertEqual(describeError({ code: "NEW_CODE", message: "m" }, words), "Oops: m");
    // Words of the error's own properties are never looked up.
    assertEqual(describeError({ code: "toString" }, words), "Oops: undefined");
  },

  async "h and replace put data in as text, never as HTML"() {
    const hostile = '<img src=x onerror="window.pwned = true">';
    const item = h("li", { class: "name", title: hostile, "data-id": 7, hidden: false, props: { tabIndex: 2 } },
      hostile, 42, null, undefined, false, [" and ", ["more"]]);
    assertEqual(item.querySelector("img"), null, "no element from text");
    assertEqual(item.textContent, `${hostile}42 and more`);
    assertEqual([item.getAttribute("title"), item.dataset.id, item.hasAttribute("hidden"), item.tabIndex], [hostile, "7", false, 2]);
    const list = h("ul", {}, h("li", {}, "old"));
    replace(list, h("li", {}, "<b>new</b>"));
    assertEqual(list.innerHTML, "<li>&lt;b&gt;new&lt;/b&gt;</li>");
    assert(!window.pwned, "nothing ran");
    let clicks = 0;
    h("button", { on: { click: () => { clicks += 1; } } }).click();
    assertEqual(clicks, 1, "listeners");
  },

  async "links only go to http(s) or this origin"() {
    assertEqual(h("a", { href: "javascript:alert(1)" }).getAttribute("href"), "#");
    assertEqual(h("a", { href: "data:text/html,hi" }).getAttribute("href"), "#");
    assertEqual(h("a", { href: "//evil.example/x" }).getAttribute("href"), "#");
    assertEqual(h("a", { href: "#/quotes/1" }).getAttribute("href"), "#/quotes/1");
    assertEqual(h("a", { href: "https://example.test/a b" }).getAttribute("href"), "https://example.test/a%20b");
  },

  async "field problems sit under their field, keep its hint, and go on edit"() {
    const form = document.getElementById("form");
    const qty = document.getElementById("qty");
    const name = document.getElementById("name");
    clearErrorsOnEdit(form);
    const errors = [];
    qty.value = "0";
    readNumber(qty, errors, { min: 0, max: 10, above: true });
    name.value = "";
    errors.push([name, "Give it a name."], [name, "A second problem, not shown."]);
    assertEqual(showFieldErrors(errors), "Check the 2 highlighted fields.");
    assertEqual(document.getElementById("qty-error").textContent, "Must be more than 0.");
    assertEqual(qty.getAttribute("aria-describedby"), "qty-error qty-hint");
    assertEqual(qty.getAttribute("aria-invalid"), "true");
    assertEqual(form.querySelectorAll("#name-error").length, 1, "one problem a field");
    assertEqual(name.getAttribute("aria-describedby"), "name-error");
    assertEqual(document.activeElement, qty, "the first problem is focused");

    qty.value = "3";
    qty.dispatchEvent(new Event("input", { bubbles: true }));
    assertEqual(document.getElementById("qty-error"), null, "gone once edited");
    assertEqual(qty.getAttribute("aria-describedby"), "qty-hint", "the hint stays");
    assertEqual(qty.hasAttribute("aria-invalid"), false);
    clearFieldErrors(form);
    assertEqual(name.hasAttribute("aria-describedby"), false);
    assertEqual(form.querySelectorAll(".field-error").length, 0);
    assertEqual(showFieldErrors([[name, "Again."]]), "Check the highlighted field.");
    clearFieldErrors(form);
  },

  async "repeated fields are numbered, linked to their labels, and removable down to one"() {
    const container = document.getElementById("rooms");
    const added = [];
    const rooms = repeatedFields({
      template: document.getElementById("room-template"), container, prefix: "room", noun: "room", focus: "name",
      onAdd: (room) => added.push(room.freeForm.id),
    });
    const first = rooms.add();
    assert(first.remove.disabled, "the only room can't be removed");
    const second = rooms.add();
    rooms.add();
    assertEqual(added, ["room-1-free-form", "room-2-free-form", "room-3-free-form"]);
    assertEqual([...container.querySelectorAll("legend")].map((legend) => legend.textContent), ["Room 1", "Room 2", "Room 3"]);
    assertEqual(second.fields.name.id, "room-2-name");
    assertEqual(second.element.querySelector("label").htmlFor, "room-2-name");
    assertEqual(second.remove.getAttribute("aria-label"), "Remove room 2");
    assertEqual(first.remove.disabled, false);

    second.remove.click();
    assertEqual(rooms.entries.length, 2);
    assertEqual([...container.querySelectorAll("legend")].map((legend) => legend.textContent), ["Room 1", "Room 2"]);
    assertEqual(document.activeElement.id, "room-3-name", "focus on the room that took its place");
    assertEqual(rooms.entries[1].remove.getAttribute("aria-label"), "Remove room 2");
    rooms.setBusy(true);
    assert(rooms.entries.every((room) => room.remove.disabled), "no removal while busy");
    rooms.setBusy(false);
    rooms.reset();
    assertEqual(rooms.entries.length, 1);
    assertEqual(container.children.length, 1);
    assertEqual(rooms.entries[0].fields.name.id, "room-4-name", "ids are never reused");
    container.replaceChildren();
  },

  async "a list loaded in view shows its progress, and why it failed"() {
    const view = {
      what: "the product catalog",
      status: document.getElementById("load-status"),
      progress: document.getElementById("load-progress"),
      retry: document.getElementById("load-retry"),
    };
    const seen = [];
    const { list } = fakeList(700);
    const items = await loadAllInView(async (options) => {
      seen.push([view.status.textContent, view.progress.hidden, view.progress.value]);
      return list(options);
    }, view);
    assertEqual(items.length, 700);
    assertEqual(seen, [["Loading the product catalog…", false, 0], ["Loading the product catalog: 500 of 700…", false, 500]]);
    assertEqual([view.status.textContent, view.progress.hidden, view.retry.hidden],
      ["Loading the product catalog: 700 of 700…", true, true]);

    const failed = await loadAllInView(() => Promise.reject(Object.assign(new Error("x"), { code: "TIMEOUT" })), view);
    assertEqual(failed, null);
    assertEqual(view.status.textContent, "The product catalog didn't load. The app took too long to answer. Try again.");
    assertEqual([view.progress.hidden, view.retry.hidden], [true, false]);
  },

  async "products are found by SKU in any letter case"() {
    const catalog = bySku([{ sku: "OAK-01", name: "Oak" }, { sku: "vinyl-02", name: "Vinyl" }]);
    assertEqual(catalog.size, 2);
    assertEqual(catalog.find(" oak-01 ")?.name, "Oak");
    assertEqual(catalog.find("VINYL-02")?.name, "Vinyl");
    assertEqual([catalog.find(""), catalog.find(undefined), catalog.find("OAK")], [undefined, undefined, undefined]);
  },

  async "without bridge.js the page is told so in words"() {
    assertEqual(window.bridge, undefined, "this page loads no bridge.js");
    let said = "";
    try {
      await bridgeReady();
    } catch (error) {
      said = describeError(error);
    }
    assertEqual(said, "The app's tool SDK (bridge.js) didn't load, so this tool can't work.");
  },

  async "readNumber checks both bounds"() {
    const input = h("input", { type: "number", id: "n" });
    const said = (value, bounds) => {
      input.value = value;
      const errors = [];
      readNumber(input, errors, bounds);
      return errors.map(([, message]) => message);
    };
    assertEqual(said("", {}), ["Enter a number."]);
    assertEqual(said("-1", {}), ["Must be at least 0."]);
    assertEqual(said("0", {}), []);
    assertEqual(said("0", { above: true }), ["Must be more than 0."]);
    assertEqual(said("101", { max: 100 }), ["Must be at most 100."]);
    assertEqual(said("100", { max: 100 }), []);
  },

  async "pages and loadAll walk every page, and stop when told or when the list shrinks"() {
    const whole = fakeList(1203);
    const progress = [];
    const items = await loadAll(whole.list, { onProgress: (loaded, total) => progress.push([loaded, total]) });
    assertEqual(items.length, 1203);
    assertEqual(items.at(-1), 1203);
    assertEqual(whole.calls, [[1, 500], [2, 500], [3, 500]]);
    assertEqual(progress, [[500, 1203], [1000, 1203], [1203, 1203]]);

    const capped = fakeList(50);
    const seen = [];
    for await (const page of pages(capped.list, { pageSize: 10, maxPages: 2 })) seen.push(page.loaded);
    assertEqual(seen, [10, 20]);

    const shrinking = fakeList(30, { shrinkTo: 5 });
    const walked = [];
    for await (const page of pages(shrinking.list, { pageSize: 10 })) walked.push([page.page, page.items.length]);
    assertEqual(walked, [[1, 10], [2, 0]], "an empty page ends the walk");
  },

  async "shorten counts characters as the host does"() {
    assertEqual(shorten("short", 10), "short");
    assertEqual(shorten("abcdefghij", 5), "abcd…");
    assertEqual(shorten("🙂🙂🙂🙂", 3), "🙂🙂…");
    assertEqual([...shorten("🙂".repeat(400), 300)].length, 300);
  },

  async "preferences survive a reload, and bad storage gives none"() {
    assert(savePreferences("ui-test", { taxRate: 12.5 }), "saved");
    assertEqual(loadPreferences("ui-test"), { taxRate: 12.5 });
    localStorage.setItem("ui-test", "{not json");
    assertEqual(loadPreferences("ui-test"), {});
    localStorage.setItem("ui-test", "[1, 2]");
    assertEqual(loadPreferences("ui-test"), {});
    assertEqual(loadPreferences("nothing-here"), {});
  },
});
