// The quote editor (`#/quotes/<id>`).
//
// For roles that may edit, the quote is opened in the host module: `host.openQuote(id)` loads it
// with the catalog index, and `host.quote` is from then on the quote as the page shows it, with
// line amounts, totals and `dirty`. A `quoting_extension` tool chosen from the Tools menu is
// mounted next to the editor; its `quotes.addLines` are merged into `host.quote` by the host, which
// tells the page through `host.onChange`, and the page renders again. `host.save()` writes the
// lines; `host.send()` saves and moves the Draft to Sent, after which the quote is locked and
// `addLines` answers `QUOTE_LOCKED`.
//
// On a Draft, each line's quantity and rate are inputs applied with `host.updateLine` (on change,
// blur or Enter), and each line has a Remove button (`host.removeLine`, which also removes the task
// lines the product injected). Like `addLines`, these only change `host.quote` (it becomes dirty);
// Save writes them. The header (customer, date, expiry, type) is not part of the host's quote: "Edit
// details" sends `PATCH /api/v1/quotes/{id}` and then opens the quote again, so it is only offered
// while there are no unsaved line changes.
//
// Field users read quotes only: they get the same view from `GET /api/v1/quotes/{id}`, without
// the host, the Tools menu, Save or Send, inputs or Remove buttons, and without cost prices.
//
// Nothing unsaved is lost: every change is kept on the device as it happens (`../../kept.js`,
// IndexedDB, what `host.unsaved()` gives), and opening the quote again after a reload, a closed tab
// or a crash puts it back (`host.openQuote(id, {restore})`), marked unsaved, with a note that says
// so and offers Save and Discard. A save that fails on the network waits: the page says it is
// offline and how many changes wait, and saves again when the host finds the server again (its own
// check, the window's `online` event) or when the user asks; the save carries the same
// `Idempotency-Key` each time, so it lands once. A save or a send refused with `CONFLICT` (the
// quote changed on another device) shows both versions and lets the user choose; nothing is
// overwritten or sent unasked.
//
// The parts are in `./lines.js` (the lines table and their editing), `./details.js` (the header
// facts and the Edit details form), `./preview.js` (the customer preview) and `./tools.js` (the
// Tools menu and the extension's panel); this module is the view: the toolbar, rendering, save
// and send, and changes made elsewhere.

import { h, replace } from "/sdk/ui.js";
import { app, can } from "../../app.js";
import { api, describeHostError } from "../../api.js";
import { ask } from "../../dialog.js";
import { focusHeading } from "../../dom.js";
import { formatDateTime, formatMoney } from "../../format.js";
import { available as canKeep, forget, keep, kept } from "../../kept.js";
import { onQuoteEvent, onResync } from "../../live.js";
import { toast } from "../../toast.js";
import { detailsEditor, headerFacts } from "./details.js";
import { lineEditor, linesTable, totalsList } from "./lines.js";
import { previewDocument } from "./preview.js";
import { toolMenu } from "./tools.js";

// ---------------------------------------------------------------------------------------------
// Live events

/** Whether a `quote` event's `by` is the signed-in user. */
function isMine(by) {
  const email = app.context?.userEmail;
  return by?.kind === "user" && typeof by.email === "string" && typeof email === "string"
    && by.email.toLowerCase() === email.toLowerCase();
}

/** Errors after which a save is worth trying again by itself: the server was not reached. */
const WAITING_CODES = new Set(["OFFLINE", "BACKEND_UNAVAILABLE", "TIMEOUT"]);

/** "1 change" / "3 changes". */
function changes(count) {
  return `${count} change${count === 1 ? "" : "s"}`;
}


/**
 * Opens quote `id` in the host, putting back the changes kept on this device for it, if any.
 * Resolves with `{quote, restoredAt, notRestored}`: when the changes were put back, and why they
 * could not be (the quote was sent meanwhile, or what was kept is of no use), in which case they
 * are forgotten. A failure to reach the server rejects, and keeps them.
 */
async function openWithKept(host, id) {
  const saved = await kept(id);
  if (!saved) return { quote: await host.openQuote(id), restoredAt: null, notRestored: null };
  try {
    const quote = await host.openQuote(id, { restore: saved.unsaved });
    if (!quote.dirty) forget(id);
    return { quote, restoredAt: quote.dirty ? saved.keptAt : null, notRestored: null };
  } catch (error) {
    if (!["QUOTE_LOCKED", "INVALID_PARAMS", "USAGE"].includes(error?.code)) throw error;
    forget(id);
    return { quote: await host.openQuote(id), restoredAt: null, notRestored: error };
  }
}

/** A version of the quote in the conflict panel: its lines and total. */
function versionColumn(heading, quote) {
  return h("section", { class: "conflict-version" },
    h("h3", {}, heading),
    quote.lines.length
      ? h("ul", {}, quote.lines.map((line) => h("li", {}, `${line.description} × ${line.qty}`)))
      : h("p", { class: "muted" }, "No lines."),
    h("p", {}, h("strong", {}, `Total ${formatMoney(quote.totals.total)}`)));
}

/** Who made a change, for a toast. */
function actorName(by) {
  if (by?.kind === "user" && by.name) return by.name;
  if (by?.kind === "key" && by.name) return `the API key “${by.name}”`;
  return "someone else";
}

// ---------------------------------------------------------------------------------------------
// The view

/** Shows quote `id` in `root`; resolves with the router's hooks (`beforeLeave`, `dispose`). */
export async function renderEditor(root, { id }) {
  const editable = can("editQuote");
  const seeCost = can("seeCost");
  const host = app.host;

  replace(root, h("h1", {}, "Quote"), h("p", { class: "muted" }, "Opening the quote…"));
  focusHeading(root);

  let quote;
  let restoredAt = null;
  let notRestored = null;
  try {
    if (editable) {
      if (host.quote && host.quote.id !== id) host.closeQuote({ discard: true });
      if (host.quote?.id === id) {
        quote = host.quote;
      } else {
        ({ quote, restoredAt, notRestored } = await openWithKept(host, id));
      }
    } else {
      quote = await api.quote(id);
    }
  } catch (error) {
    if (error?.code === "UNAUTHENTICATED") app.onSessionEnded?.();
    replace(root, h("h1", {}, "Quote"), h("p", { class: "form-error" }, describeHostError(error)),
      h("p", {}, h("a", { href: "#/quotes" }, "Back to quotes")));
    return {};
  }

  const state = {
    quote,
    preview: false,
    busy: false,
    lineErrors: new Map(), // data-focus-key of a line input → why its last value was refused
    details: null, // the open "Edit details" form (see ./details.js)
    customers: null, // a promise of the customers, loaded the first time details are edited
    restoredAt, // when the changes put back on opening were kept, while they are unsaved
    waiting: false, // a save failed without reaching the server: it is tried again by itself
    conflict: null, // after a CONFLICT: the quote as the server has it, shown beside this one
    conflictOn: "save", // what met the CONFLICT: "save" or "send"
  };
  const cleanups = [];

  // --- fixed parts: heading, toolbar, tool panel -------------------------------------------
  const title = h("h1", {});
  const dirtyBadge = h("span", { class: "badge badge-warning dirty", hidden: true }, "Unsaved changes");
  const dirtyStatus = h("span", { class: "visually-hidden", role: "status" });
  const saveButton = h("button", { type: "button", class: "primary", on: { click: () => save() } }, "Save");
  const sendButton = h("button", { type: "button", class: "secondary", on: { click: () => send() } }, "Send Quote");
  const previewButton = h("button", { type: "button", class: "secondary", "aria-pressed": "false", on: { click: () => togglePreview() } }, "Preview");
  const printButton = h("button", { type: "button", class: "secondary", hidden: true, on: { click: () => window.print() } }, "Print");
  const lockedNote = h("p", { class: "notice", hidden: true });
  const restoredText = h("span", {});
  const restoredNote = h("div", { class: "notice restored-note", role: "status", hidden: true },
    restoredText,
    h("span", { class: "notice-actions" },
      h("button", { type: "button", class: "primary", on: { click: () => save() } }, "Save them"),
      h("button", { type: "button", class: "secondary", on: { click: () => discardMine() } }, "Discard them")));
  const offlineText = h("span", {});
  const offlineNote = h("div", { class: "notice offline-note", role: "status", hidden: true },
    offlineText,
    h("span", { class: "notice-actions" },
      h("button", { type: "button", class: "secondary", on: { click: () => save() } }, "Try now")));
  const conflictPanel = h("section", { class: "conflict", "aria-labelledby": "conflict-title", hidden: true });
  const content = h("div", { class: "editor-content" });

  const extensionTools = editable ? app.tools.filter((tool) => tool.type === "quoting_extension") : [];
  const tools = toolMenu(host, extensionTools);
  cleanups.push(() => tools.dispose());

  const toolbar = h("div", { class: "toolbar", role: "group", "aria-label": "Quote actions" },
    editable ? saveButton : null,
    editable ? sendButton : null,
    previewButton,
    printButton,
    extensionTools.length ? tools.menu : null);

  const layout = h("div", { class: "editor-layout" },
    h("section", { class: "editor", "aria-labelledby": "editor-title" },
      h("div", { class: "page-head" }, title, dirtyBadge, dirtyStatus),
      toolbar,
      lockedNote,
      offlineNote,
      restoredNote,
      conflictPanel,
      content),
    tools.panel);
  title.id = "editor-title";
  replace(root, h("p", { class: "crumbs" }, h("a", { href: "#/quotes" }, "← Quotes")), layout);

  // --- rendering ----------------------------------------------------------------------------
  const linesHeading = h("h2", { class: "visually-hidden", tabindex: "-1" }, "Lines");
  const lineEdit = lineEditor({ host, state, content, linesHeading, renderSoon });
  const details = detailsEditor({ id, host, state, content, render, renderChrome, reload });
  let contentTimer = 0;

  function render() {
    clearTimeout(contentTimer);
    contentTimer = 0;
    renderChrome();
    renderContent();
  }

  /**
   * The toolbar at once, the content on the next task: a line input's `change` fires while focus
   * is leaving it (Tab, a click), and the new rows are built once focus has landed, so
   * `renderContent` can put it back on the same input or button.
   */
  function renderSoon() {
    renderChrome();
    if (!contentTimer) {
      contentTimer = setTimeout(() => {
        contentTimer = 0;
        renderContent();
      });
    }
  }

  function renderChrome() {
    const q = state.quote;
    title.textContent = `${q.quoteType} ${q.ref}`;
    const draft = q.status === "Draft";
    const dirty = Boolean(q.dirty);
    dirtyBadge.hidden = !dirty;
    dirtyStatus.textContent = dirty ? "Unsaved changes" : "";
    saveButton.disabled = state.busy || !draft || !dirty;
    sendButton.disabled = state.busy || !draft;
    lockedNote.hidden = draft;
    lockedNote.textContent = draft ? "" : `This quote is ${q.status}, so its lines are locked.`;
    const pending = q.unsavedChanges ?? 0;
    if (!dirty) state.restoredAt = null;
    restoredNote.hidden = !(editable && dirty && state.restoredAt);
    restoredText.textContent = restoredNote.hidden ? "" : `Unsaved changes kept on this device (${formatDateTime(state.restoredAt)}) were put back: ${changes(pending)} not saved yet.`;
    const offline = editable && (!host.online || state.waiting) && dirty;
    offlineNote.hidden = !offline;
    offlineNote.dataset.pending = String(offline ? pending : 0);
    offlineText.textContent = !offline ? ""
      : `${host.online ? "The server cannot be reached." : "You are offline."} ${changes(pending)} ${pending === 1 ? "waits" : "wait"} to be saved${canKeep() ? ", kept on this device," : ""} and will be saved when the connection is back.`;
    renderConflict();
    previewButton.setAttribute("aria-pressed", String(state.preview));
    previewButton.textContent = state.preview ? "Back to editor" : "Preview";
    printButton.hidden = !state.preview;
  }

  function renderContent() {
    const q = state.quote;
    const draft = q.status === "Draft";
    const writable = editable && draft;
    if (!writable) details.close();
    // Keep focus where it was: the same element if it survives (the details form), else the
    // element with the same `data-focus-key` (a line's input or Remove button).
    const active = document.activeElement;
    const hadFocus = active instanceof HTMLElement && content.contains(active);
    const focusKey = hadFocus ? active.dataset.focusKey : undefined;
    const typed = hadFocus && active instanceof HTMLInputElement && active.value !== active.defaultValue ? active.value : null;
    if (state.preview) {
      replace(content, previewDocument(q, app.context?.tenantName));
    } else {
      replace(content,
        state.details ? state.details.element : headerFacts(q),
        writable ? details.controls(q) : null,
        linesHeading,
        q.lines.length ? linesTable(q, seeCost, writable ? lineEdit : null) : h("p", { class: "muted empty-lines" },
          editable && draft && extensionTools.length ? "No lines yet. Add some with a tool from the Tools menu." : "No lines."),
        h("h2", { class: "visually-hidden" }, "Totals"),
        totalsList(q, seeCost));
    }
    if (!hadFocus) return;
    if (active.isConnected) {
      active.focus({ preventScroll: true });
    } else if (focusKey) {
      const again = content.querySelector(`[data-focus-key="${CSS.escape(focusKey)}"]`);
      if (again) {
        if (typed !== null && again instanceof HTMLInputElement) again.value = typed;
        again.focus({ preventScroll: true });
      }
    }
  }

  function renderConflict() {
    const theirs = state.conflict;
    conflictPanel.hidden = !theirs;
    if (!theirs) {
      replace(conflictPanel);
      return;
    }
    const onSend = state.conflictOn === "send";
    replace(conflictPanel,
      h("h2", { id: "conflict-title" }, `${state.quote.ref} was changed elsewhere`),
      h("p", {}, onSend
        ? "Someone saved this quote on another device since you opened it, so it was not sent. Nothing has been overwritten: choose which version to keep, then send it."
        : "Someone saved this quote on another device since you opened it. Nothing has been overwritten: choose which version to keep."),
      h("div", { class: "conflict-versions" },
        versionColumn(state.quote.dirty ? "Yours, not saved" : "Yours, as you opened it", state.quote),
        versionColumn("Saved on the server", theirs)),
      h("div", { class: "toolbar" },
        h("button", { type: "button", class: "primary", "data-choice": "mine", disabled: state.busy, on: { click: () => keepMine() } }, "Keep mine"),
        h("button", { type: "button", class: "secondary", "data-choice": "theirs", disabled: state.busy, on: { click: () => takeTheirs() } }, "Use the saved version")));
  }

  function togglePreview() {
    state.preview = !state.preview;
    render();
  }

  // --- the host: changes, save, send --------------------------------------------------------
  /** Keeps what is unsaved on this device, or forgets what was kept once nothing is. */
  function keepUnsaved() {
    if (!editable || host.quote?.id !== id) return;
    const unsaved = host.unsaved();
    if (unsaved) keep(unsaved);
    else forget(id);
  }

  if (editable) {
    const stopChange = host.onChange((changed, change) => {
      if (change.kind === "closed" || !changed || changed.id !== id) return;
      state.quote = changed;
      if (change.kind !== "opened") keepUnsaved();
      if (change.kind === "lineEdited") renderSoon();
      else render();
    });
    cleanups.push(stopChange);
    // The server is back (the host's own check, or the browser's `online`): a waiting save goes.
    const stopConnectivity = host.onConnectivity(({ online }) => {
      renderChrome();
      if (online && state.waiting) save({ retry: true });
    });
    cleanups.push(stopConnectivity);
  }

  /** Saves; `overwrite` saves over whatever the server has; `retry` is a save the page tried by
   * itself, which says nothing while the server still cannot be reached. */
  async function save({ overwrite = false, retry = false } = {}) {
    if (state.busy) return false;
    state.busy = true;
    render();
    try {
      state.quote = await host.save(overwrite ? { overwrite: true } : undefined);
      state.lineErrors.clear();
      state.waiting = false;
      state.conflict = null;
      toast(retry ? `${state.quote.ref} saved: the connection is back.` : `${state.quote.ref} saved.`, "success");
      return true;
    } catch (error) {
      if (error?.code === "UNAUTHENTICATED") app.onSessionEnded?.();
      keepUnsaved();
      if (WAITING_CODES.has(error?.code)) {
        state.waiting = true;
        if (!retry) toast(`Not saved yet: ${describeHostError(error)}`, "warning");
      } else if (error?.code === "CONFLICT") {
        state.waiting = false;
        await showConflict("save", error);
      } else {
        toast(`Could not save: ${describeHostError(error)}`, "error");
      }
      return false;
    } finally {
      state.busy = false;
      if (host.quote?.id === id) state.quote = host.quote;
      render();
    }
  }

  /** After `what` ("save" or "send") met a CONFLICT: the server's version beside this page's. */
  async function showConflict(what, error) {
    try {
      state.conflict = await host.serverQuote();
      state.conflictOn = what;
    } catch (fetchError) {
      toast(`Could not ${what}: ${describeHostError(error)} (${describeHostError(fetchError)})`, "error");
    }
  }

  /** After a conflict: this page's lines saved over the server's version. */
  async function keepMine() {
    await save({ overwrite: true });
  }

  /** After a conflict: the server's version opened, this page's changes dropped. */
  async function takeTheirs() {
    state.conflict = null;
    await discardAndOpen();
  }

  /** Drops the unsaved changes (asking first) and shows the quote as the server has it. */
  async function discardMine() {
    const choice = await ask({
      title: "Discard your unsaved changes?",
      message: `The ${changes(state.quote.unsavedChanges ?? 0)} not saved yet will be lost, here and on this device.`,
      buttons: [{ label: "Keep them", value: "keep" }, { label: "Discard", value: "discard", kind: "danger", autofocus: true }],
      cancelValue: "keep",
    });
    if (choice === "discard") await discardAndOpen();
  }

  async function discardAndOpen() {
    if (state.busy) return;
    state.busy = true;
    try {
      host.closeQuote({ discard: true });
      await forget(id);
      state.quote = await host.openQuote(id);
      state.waiting = false;
      state.restoredAt = null;
      state.lineErrors.clear();
    } catch (error) {
      toast(`Could not open the saved version: ${describeHostError(error)}`, "error");
    } finally {
      state.busy = false;
      if (host.quote?.id === id) state.quote = host.quote;
      render();
    }
  }

  async function send() {
    if (state.busy) return;
    const choice = await ask({
      title: `Send ${state.quote.ref}?`,
      message: "Sending saves any changes and locks the quote: its lines can no longer change.",
      buttons: [
        { label: "Cancel", value: "cancel" },
        { label: "Send Quote", value: "send", kind: "primary", autofocus: true },
      ],
      cancelValue: "cancel",
    });
    if (choice !== "send") return;
    state.busy = true;
    render();
    try {
      state.quote = await host.send();
      state.conflict = null;
      toast(`${state.quote.ref} sent. It is now locked.`, "success");
    } catch (error) {
      if (error?.code === "UNAUTHENTICATED") app.onSessionEnded?.();
      keepUnsaved();
      if (error?.code === "CONFLICT") await showConflict("send", error);
      else toast(`Could not send: ${describeHostError(error)}`, "error");
    } finally {
      state.busy = false;
      if (host.quote?.id === id) state.quote = host.quote;
      render();
    }
  }

  async function reload() {
    if (editable) {
      if (state.quote.dirty) {
        const choice = await ask({
          title: "Discard your changes?",
          message: "Loading the latest version replaces the lines you have not saved.",
          buttons: [{ label: "Keep mine", value: "stay" }, { label: "Discard and reload", value: "discard", kind: "danger" }],
          cancelValue: "stay",
        });
        if (choice !== "discard") return;
      }
      try {
        host.closeQuote({ discard: true });
        await forget(id);
        state.quote = await host.openQuote(id);
        state.waiting = false;
        state.conflict = null;
        state.restoredAt = null;
      } catch (error) {
        toast(`Could not reload: ${describeHostError(error)}`, "error");
      }
    } else {
      try {
        state.quote = await api.quote(id);
      } catch (error) {
        toast(`Could not reload: ${describeHostError(error)}`, "error");
      }
    }
    state.lineErrors.clear();
    render();
  }

  // --- editing lines ----------------------------------------------------------------------------
  // --- editing details (PATCH /api/v1/quotes/{id}) ------------------------------------------------
  // --- someone else changed this quote ---------------------------------------------------------
  // Each event names who made the change (`by`). Ours (this user's saves, sends and details) are
  // already on the page, so they are skipped. Known blind spot: the same user in another tab has the
  // same email, so a change made there is skipped too.
  cleanups.push(onQuoteEvent(({ kind, quote: changed, by }) => {
    if (changed.id !== id || kind === "created") return;
    if (isMine(by)) return;
    const what = `${kind === "sent" ? "sent" : "saved"} by ${actorName(by)}`;
    if (!editable) {
      toast(`${changed.ref} was ${what}; showing the latest version.`, "warning");
      reload();
      return;
    }
    toast(`${changed.ref} was ${what}. Reload to see their version${state.quote.dirty ? " (your unsaved changes would be lost)" : ""}.`,
      "warning", { action: { label: "Reload", run: reload } });
  }));

  // Events may have been missed: show the latest version, or offer it over unsaved changes.
  cleanups.push(onResync(() => {
    if (editable && state.quote.dirty) {
      toast(`${state.quote.ref} may have been changed elsewhere while live updates were interrupted. Reload to see the latest version (your unsaved changes would be lost).`,
        "warning", { action: { label: "Reload", run: reload } });
      return undefined;
    }
    return reload();
  }));

  // --- leaving --------------------------------------------------------------------------------
  // Changes kept on this device come back with the page; only where they cannot be kept does
  // leaving the page ask first.
  const onBeforeUnload = (event) => {
    if (editable && host.quote?.dirty && !canKeep()) {
      event.preventDefault();
      event.returnValue = "";
    }
  };
  window.addEventListener("beforeunload", onBeforeUnload);
  cleanups.push(() => window.removeEventListener("beforeunload", onBeforeUnload));

  render();
  focusHeading(root);
  if (notRestored) {
    toast(`The unsaved changes kept on this device for ${quote.ref} could not be put back: ${describeHostError(notRestored)}`, "warning");
  }
  // `cargo xtask bench` times the app's cold load to this mark (`bench/src/cold_load.rs`): the
  // editor's first render of a quote's lines in this page.
  if (!performance.getEntriesByName("toolbridge:quote-lines", "mark").length) performance.mark("toolbridge:quote-lines");

  return {
    async beforeLeave() {
      if (!editable || !host.quote?.dirty) return true;
      const choice = await ask({
        title: `Leave ${state.quote.ref} with unsaved changes?`,
        message: "The line changes since the last save are only in this page.",
        buttons: [
          { label: "Stay", value: "stay" },
          { label: "Discard", value: "discard", kind: "danger" },
          { label: "Save", value: "save", kind: "primary", autofocus: true },
        ],
        cancelValue: "stay",
      });
      if (choice === "save") return save();
      if (choice === "discard") forget(id);
      return choice === "discard";
    },
    dispose() {
      clearTimeout(contentTimer);
      for (const cleanup of cleanups) cleanup();
      if (editable && host.quote?.id === id) {
        try {
          host.closeQuote({ discard: true });
        } catch (error) {
          console.warn("closeQuote failed", error);
        }
      }
    },
  };
}
