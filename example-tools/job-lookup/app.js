// Job lookup: an example `standalone` tool that only reads.
//
// It demonstrates how a tool browses the app's lists:
// - paging with bridge.jobs.list() and bridge.quotes.list() ({page, pageSize} → {items, totalCount});
// - "search as you type" although the list methods take no search term: the loaded page is
//   filtered at once, and "Search all pages" walks every page, with a cap, a progress bar and a
//   cancel;
// - a request counter per list, so a slow, older answer never overwrites a newer one;
// - loading, empty and error states, and BridgeError codes in words a user understands; a failed
//   search is also told in the app's own toasts (bridge.ui.toast, an extension beyond 2.1.0) where
//   the app offers them;
// - keeping only preferences (the page size) in localStorage.
//
// It is an ES module, so it runs in strict mode and defines no globals. What every tool page
// needs (money and dates in the tenant's culture, error words, paging) comes from the platform's
// page helpers at /sdk/ui.js.

import {
  ERROR_WORDS, bridgeReady, describeError, formatter, h, loadPreferences, pages, savePreferences,
  shorten, showStatus,
} from "/sdk/ui.js";

const PREFERENCES_KEY = "job-lookup:preferences";
const DEFAULT_PAGE_SIZE = 25;
const SEARCH_DEBOUNCE_MS = 200;
// "Search all pages" asks for the largest page the bridge allows (500), and stops after this many
// pages so a huge account can't keep the tool busy for minutes.
const SEARCH_PAGE_SIZE = 500;
const SEARCH_MAX_PAGES = 20;
// The most matches shown at once; a narrower search finds the rest.
const MAX_SHOWN = 200;
// The longest toast message the app takes, in characters; on one line.
const TOAST_MAX_LENGTH = 300;

const SOURCES = {
  jobs: {
    one: "job",
    many: "jobs",
    searchLabel: "Search jobs",
    list: (options) => bridge.jobs.list(options),
    render: renderJob,
  },
  quotes: {
    one: "quote",
    many: "quotes",
    searchLabel: "Search quotes",
    list: (options) => bridge.quotes.list(options),
    render: renderQuote,
  },
};
// The words this tool says otherwise than the helpers' table: it reads lists.
const WORDS = {
  ...ERROR_WORDS,
  NOT_ALLOWED: "Your role doesn't allow reading this list. Ask an administrator if you need it.",
  NOT_FOUND: "Something this tool refers to no longer exists. Reload the list and try again.",
};

const $ = (id) => document.getElementById(id);
const ui = {
  greeting: $("greeting"),
  status: $("status"),
  lookup: $("lookup"),
  pageSize: $("page-size"),
  tabs: [...document.querySelectorAll('[role="tab"]')],
  panelTemplate: $("panel-template"),
};

const state = {
  connected: false,
  format: formatter(undefined),
  panels: [],
};

// ---------------------------------------------------------------------------------------------
// Errors and feedback

/** A sentence a user can act on, for any BridgeError code (and for our own bugs). */
function describe(error) {
  return describeError(error, WORDS);
}

/** Shows feedback in the page: the sandbox has no alert(), and a toast is friendlier anyway. */
function setStatus(message, kind = "info") {
  showStatus(ui.status, message, kind);
}

/**
 * Also tells the user in the app's own toasts, where the app offers them: one line of at most
 * TOAST_MAX_LENGTH characters. The page shows the same, so a refused toast (too many) is dropped.
 */
function toast(kind, message) {
  if (!bridge.supports("ui.toast")) {
    return;
  }
  const line = shorten(message.replace(/\s+/g, " ").trim(), TOAST_MAX_LENGTH);
  bridge.ui.toast({ kind, message: line }).catch(() => {});
}

// ---------------------------------------------------------------------------------------------
// Preferences

// localStorage is per tool origin. Only preferences live there, never data from the app.
function loadPageSize() {
  const saved = loadPreferences(PREFERENCES_KEY);
  return [10, 25, 50, 100].includes(saved.pageSize) ? saved.pageSize : DEFAULT_PAGE_SIZE;
}

function pageSize() {
  return Number(ui.pageSize.value);
}

// ---------------------------------------------------------------------------------------------
// Rendering records (as DOM with textContent, so names and refs from the app stay text)

function recordItem(record, extra) {
  return h("li", {},
    h("div", { class: "record-heading" }, h("span", { class: "ref" }, record.ref), h("span", { class: "badge" }, record.status)),
    h("div", { class: "customer" }, record.customerName || "No customer"),
    extra ? h("div", { class: "hint" }, extra) : null);
}

function renderJob(job) {
  return recordItem(job);
}

function renderQuote(quote) {
  // The quote's time in the host's time zone (the user's own or the organisation's), where the
  // host names one; otherwise the browser's.
  const when = quote.date ? ` · ${state.format.dateTime(quote.date)}` : "";
  return recordItem(quote, `${state.format.money(quote.total)}${when}`);
}

/** "1 job" or "3 jobs". */
function count(number, source) {
  return `${number} ${number === 1 ? source.one : source.many}`;
}

function matches(record, query) {
  return [record.ref, record.customerName, record.status]
    .some((text) => text && text.toLowerCase().includes(query));
}

// ---------------------------------------------------------------------------------------------
// One list (a tab)

function createPanel(section) {
  const source = SOURCES[section.dataset.source];
  section.append(ui.panelTemplate.content.cloneNode(true));
  const part = (role) => section.querySelector(`[data-role="${role}"]`);
  const search = section.querySelector('[data-field="search"]');
  search.id = `${section.id}-search`;
  part("search-label").htmlFor = search.id;
  part("search-label").textContent = source.searchLabel;
  part("pager").setAttribute("aria-label", `Pages of ${source.many}`);

  const panel = {
    section,
    source,
    search,
    searchAll: part("search-all"),
    searching: part("searching"),
    progress: part("progress"),
    cancel: part("cancel"),
    state: part("state"),
    retry: part("retry"),
    list: part("list"),
    pager: part("pager"),
    prev: part("prev"),
    next: part("next"),
    pageLabel: part("page"),
    // The page on show, and the matches of the last "Search all pages" (null when browsing).
    result: null,
    matches: null,
    searchCapped: false,
    // Every request gets a number; an answer whose number is no longer current is dropped.
    pageRequest: 0,
    searchRequest: 0,
    debounce: 0,
    // What "Try again" repeats: the request that failed last.
    retryAction: null,
  };
  search.addEventListener("input", () => onSearchInput(panel));
  panel.searchAll.addEventListener("click", () => searchAllPages(panel));
  panel.cancel.addEventListener("click", () => {
    cancelSearch(panel, "Search cancelled.");
    panel.search.focus();
  });
  panel.retry.addEventListener("click", () => panel.retryAction());
  panel.prev.addEventListener("click", () => loadPage(panel, panel.result.page - 1));
  panel.next.addEventListener("click", () => loadPage(panel, panel.result.page + 1));
  updatePager(panel);
  return panel;
}

function query(panel) {
  return panel.search.value.trim().toLowerCase();
}

async function loadPage(panel, page) {
  const request = ++panel.pageRequest;
  cancelSearch(panel);
  panel.matches = null;
  panel.retry.hidden = true;
  panel.prev.disabled = true;
  panel.next.disabled = true;
  delete panel.state.dataset.kind;
  panel.state.textContent = `Loading ${panel.source.many}…`;
  panel.section.setAttribute("aria-busy", "true");
  try {
    const result = await panel.source.list({ page, pageSize: pageSize() });
    if (request !== panel.pageRequest) {
      return; // A newer page was asked for meanwhile.
    }
    panel.result = result;
    render(panel);
  } catch (error) {
    if (request === panel.pageRequest) {
      showListError(panel, error, () => loadPage(panel, page));
    }
  } finally {
    if (request === panel.pageRequest) {
      panel.section.setAttribute("aria-busy", "false");
    }
  }
}

function showListError(panel, error, retry) {
  panel.state.textContent = describe(error);
  panel.state.dataset.kind = "error";
  panel.retryAction = retry;
  panel.retry.hidden = false;
  updatePager(panel);
}

/** Shows the page filtered by the search, or the matches of a finished "Search all pages". */
function render(panel) {
  const { source } = panel;
  const { many } = source;
  const text = panel.search.value.trim();
  const needle = query(panel);
  const showingAll = panel.matches !== null;
  const records = showingAll
    ? panel.matches
    : panel.result.items.filter((record) => !needle || matches(record, needle));
  panel.list.replaceChildren(...records.slice(0, MAX_SHOWN).map(source.render));
  delete panel.state.dataset.kind;

  if (showingAll) {
    panel.state.textContent = allPagesSummary(panel, records.length, text);
  } else if (panel.result.items.length === 0) {
    const empty = panel.result.totalCount === 0 ? `There are no ${many} yet.` : "This page is empty.";
    panel.state.textContent = empty;
  } else if (needle && records.length === 0) {
    const further = pageCount(panel.result) > 1 ? ' "Search all pages" looks further.' : "";
    panel.state.textContent = `No ${many} on this page match "${text}".${further}`;
  } else if (needle) {
    const onPage = count(panel.result.items.length, source);
    panel.state.textContent = `${records.length} of ${onPage} on this page match "${text}".`;
  } else {
    panel.state.textContent = `${count(panel.result.totalCount, source)} in all.`;
  }
  updatePager(panel);
}

function allPagesSummary(panel, found, text) {
  const verb = found === 1 ? "matches" : "match";
  const parts = [`${count(found, panel.source)} ${verb} "${text}" across all pages.`];
  if (found > MAX_SHOWN) {
    parts.push(`Showing the first ${MAX_SHOWN}: narrow the search to see the rest.`);
  }
  if (panel.searchCapped) {
    parts.push(`Only the first ${SEARCH_MAX_PAGES * SEARCH_PAGE_SIZE} ${panel.source.many} were searched.`);
  }
  parts.push("Change the search to browse page by page again.");
  return parts.join(" ");
}

function pageCount(result) {
  return Math.max(1, Math.ceil(result.totalCount / result.pageSize));
}

function updatePager(panel) {
  const { result } = panel;
  const showingAll = panel.matches !== null;
  panel.pager.hidden = !result || showingAll;
  // Searching every page only helps when there is more than the page on show.
  panel.searchAll.hidden = !result || showingAll || !query(panel) || pageCount(result) === 1
    || !panel.searching.hidden;
  if (!result) {
    return;
  }
  panel.pageLabel.textContent = `Page ${result.page} of ${pageCount(result)}`;
  panel.prev.disabled = result.page <= 1;
  panel.next.disabled = result.page >= pageCount(result);
}

function onSearchInput(panel) {
  // Typing again stops a running search of all pages: its results would be for old text.
  cancelSearch(panel);
  clearTimeout(panel.debounce);
  panel.debounce = setTimeout(() => {
    panel.matches = null;
    if (panel.result) {
      render(panel);
    }
  }, SEARCH_DEBOUNCE_MS);
}

function cancelSearch(panel, message) {
  if (panel.searching.hidden) {
    return;
  }
  panel.searchRequest += 1;
  panel.searching.hidden = true;
  panel.section.setAttribute("aria-busy", "false");
  if (message) {
    panel.state.textContent = message;
  }
  updatePager(panel);
}

/** Walks the pages in the largest size the bridge allows, collecting matches as it goes. */
async function searchAllPages(panel) {
  const request = ++panel.searchRequest;
  const needle = query(panel);
  const found = [];
  let seen = 0;
  let total = Infinity;
  panel.searching.hidden = false;
  panel.searchAll.hidden = true;
  panel.retry.hidden = true;
  delete panel.state.dataset.kind;
  panel.section.setAttribute("aria-busy", "true");
  panel.progress.value = 0;
  panel.cancel.focus();
  try {
    for await (const result of pages(panel.source.list, { pageSize: SEARCH_PAGE_SIZE, maxPages: SEARCH_MAX_PAGES })) {
      if (request !== panel.searchRequest) {
        return; // Cancelled, or the user typed again.
      }
      found.push(...result.items.filter((record) => matches(record, needle)));
      total = result.totalCount;
      seen = result.loaded;
      panel.progress.max = Math.max(total, 1);
      panel.progress.value = seen;
      panel.state.textContent = `Searched ${seen} of ${total} ${panel.source.many}…`;
    }
    panel.matches = found;
    panel.searchCapped = seen < total;
    panel.searching.hidden = true;
    render(panel);
    panel.search.focus();
  } catch (error) {
    if (request === panel.searchRequest) {
      panel.searching.hidden = true;
      showListError(panel, error, () => searchAllPages(panel));
      toast("error", `Searching all ${panel.source.many} for "${panel.search.value.trim()}" failed. ${describe(error)}`);
    }
  } finally {
    if (request === panel.searchRequest) {
      panel.section.setAttribute("aria-busy", "false");
    }
  }
}

// ---------------------------------------------------------------------------------------------
// Tabs (the WAI-ARIA tabs pattern: arrow keys move between tabs, Tab moves into the panel)

function selectTab(tab) {
  for (const other of ui.tabs) {
    const selected = other === tab;
    other.setAttribute("aria-selected", String(selected));
    other.tabIndex = selected ? 0 : -1;
    $(other.getAttribute("aria-controls")).hidden = !selected;
  }
  const panel = state.panels.find((candidate) => candidate.section.id === tab.getAttribute("aria-controls"));
  // Each list loads the first time its tab is opened.
  if (state.connected && !panel.result && panel.pageRequest === 0) {
    loadPage(panel, 1);
  }
}

function onTabKey(event) {
  const index = ui.tabs.indexOf(event.currentTarget);
  const targets = {
    ArrowRight: (index + 1) % ui.tabs.length,
    ArrowLeft: (index - 1 + ui.tabs.length) % ui.tabs.length,
    Home: 0,
    End: ui.tabs.length - 1,
  };
  if (event.key in targets) {
    event.preventDefault();
    const tab = ui.tabs[targets[event.key]];
    tab.focus();
    selectTab(tab);
  }
}

function selectedPanel() {
  return state.panels.find((panel) => !panel.section.hidden);
}

// ---------------------------------------------------------------------------------------------
// Start

function onPageSizeChange() {
  savePreferences(PREFERENCES_KEY, { pageSize: pageSize() });
  // Page numbers mean something else at another size: start each loaded list again at page 1.
  for (const panel of state.panels) {
    if (panel.result || panel === selectedPanel()) {
      loadPage(panel, 1);
    }
  }
}

async function greet() {
  const context = await bridge.context.get();
  // Money in the host's currency and times in its time zone, where it names them.
  state.format = formatter(context);
  if (bridge.supports("context.changed")) {
    bridge.on("context.changed", async (changed) => {
      if (!("timeZone" in changed || "currency" in changed || "locale" in changed)) return;
      state.format = formatter(await bridge.context.get());
      for (const panel of state.panels) {
        if (panel.result) loadPage(panel, panel.result.page);
      }
    });
  }
  ui.greeting.textContent = `Hello ${context.userName}. Looking up ${context.tenantName}.`;
}

/** When the tool can't work at all, say why and hide lists that could only fail. */
function showFatal(message) {
  ui.greeting.textContent = "";
  ui.lookup.hidden = true;
  setStatus(message, "error");
}

async function start() {
  ui.pageSize.value = String(loadPageSize());
  state.panels = [...document.querySelectorAll('[role="tabpanel"]')].map(createPanel);
  for (const tab of ui.tabs) {
    tab.addEventListener("click", () => selectTab(tab));
    tab.addEventListener("keydown", onTabKey);
  }
  ui.pageSize.addEventListener("change", onPageSizeChange);

  try {
    await bridgeReady();
    await greet();
  } catch (error) {
    showFatal(describe(error));
    return;
  }
  state.connected = true;
  loadPage(selectedPanel(), 1);
}

start();
