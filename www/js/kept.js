// Unsaved changes kept on this device, so that a reload, a closed tab or a crashed page loses
// nothing: what `host.unsaved()` gives, in IndexedDB (database `toolbridge`, store `unsaved`),
// one record per user and quote. A record names its owner (tenant and email), and only the
// signed-in user's own are ever read back; signing out deletes that user's records.
//
// Writes go one after another in the order they were asked for, so that "forget" after "keep"
// of the same quote always wins. Where IndexedDB cannot be used (a browser that refuses it), every
// call resolves to "nothing kept", and `available()` says so: the editor then asks before a reload
// drops the changes, as it did before.

import { app } from "./app.js";

const DATABASE = "toolbridge";
const STORE = "unsaved";

let opened = null;
let queue = Promise.resolve();
let usable = typeof indexedDB !== "undefined";

/** The signed-in user, as records name their owner; `null` when nobody is signed in. */
function owner() {
  const context = app.context;
  if (!context?.tenantId || !context?.userEmail) return null;
  return `${context.tenantId}/${String(context.userEmail).toLowerCase()}`;
}

function database() {
  if (!opened) {
    opened = new Promise((resolve, reject) => {
      const request = indexedDB.open(DATABASE, 1);
      request.onupgradeneeded = () => {
        const store = request.result.createObjectStore(STORE, { keyPath: "key" });
        store.createIndex("owner", "owner");
      };
      request.onsuccess = () => resolve(request.result);
      request.onerror = () => reject(request.error);
      request.onblocked = () => reject(new Error("IndexedDB is blocked by another tab"));
    }).catch((error) => {
      usable = false;
      opened = null;
      throw error;
    });
  }
  return opened;
}

/** Runs `work(store)` in a transaction of `mode`, after every call asked for before it. */
function inStore(mode, work) {
  const run = queue.then(async () => {
    if (!usable) return null;
    const db = await database();
    return new Promise((resolve, reject) => {
      const transaction = db.transaction(STORE, mode);
      let result = null;
      const request = work(transaction.objectStore(STORE));
      if (request) request.onsuccess = () => { result = request.result; };
      transaction.oncomplete = () => resolve(result);
      transaction.onerror = () => reject(transaction.error);
      transaction.onabort = () => reject(transaction.error ?? new Error("the transaction was aborted"));
    });
  }).catch((error) => {
    console.warn("unsaved changes could not be kept on this device", error);
    return null;
  });
  queue = run;
  return run;
}

/** Whether changes can be kept on this device. */
export function available() {
  return usable;
}

/** Keeps `unsaved` (what `host.unsaved()` gave) as the signed-in user's for its quote. */
export function keep(unsaved) {
  const who = owner();
  if (!who || !unsaved?.quoteId) return Promise.resolve(null);
  const record = { key: `${who}/${unsaved.quoteId}`, owner: who, quoteId: unsaved.quoteId, keptAt: new Date().toISOString(), unsaved };
  return inStore("readwrite", (store) => store.put(record));
}

/** The signed-in user's kept changes to quote `quoteId`: `{unsaved, keptAt}`, or `null`. */
export async function kept(quoteId) {
  const who = owner();
  if (!who) return null;
  const record = await inStore("readonly", (store) => store.get(`${who}/${quoteId}`));
  return record && record.owner === who ? { unsaved: record.unsaved, keptAt: record.keptAt } : null;
}

/** Forgets the signed-in user's kept changes to quote `quoteId`. */
export function forget(quoteId) {
  const who = owner();
  if (!who) return Promise.resolve(null);
  return inStore("readwrite", (store) => store.delete(`${who}/${quoteId}`));
}

/** Forgets everything kept for the signed-in user (signing out). */
export function forgetMine() {
  const who = owner();
  if (!who) return Promise.resolve(null);
  return inStore("readwrite", (store) => {
    const cursor = store.index("owner").openKeyCursor(IDBKeyRange.only(who));
    cursor.onsuccess = () => {
      const at = cursor.result;
      if (!at) return;
      store.delete(at.primaryKey);
      at.continue();
    };
    return null;
  });
}
