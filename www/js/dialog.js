// In-page confirmations with a modal <dialog> (never window.confirm): focus stays inside it,
// Escape cancels, and focus returns to where it was.

import { h, replace } from "/sdk/ui.js";
import { byId } from "./dom.js";

/**
 * `ask({title, message, buttons: [{label, value, kind}], cancelValue})` resolves with the chosen
 * button's `value`, or `cancelValue` when the dialog is dismissed with Escape.
 * The first button with `autofocus: true` (or the last one) gets focus.
 * `source` names who asks (a tool), above the title; `signal` (an `AbortSignal`) closes the
 * dialog with `cancelValue` when it aborts.
 */
export function ask({ title, message, buttons, cancelValue = null, source = "", signal = null }) {
  const dialog = byId("dialog");
  const returnFocus = document.activeElement;
  if (dialog.open) dialog.close(cancelValue ?? "");
  const sourceLine = byId("dialog-source");
  sourceLine.textContent = source;
  sourceLine.hidden = !source;
  byId("dialog-title").textContent = title;
  byId("dialog-message").textContent = message;
  const row = byId("dialog-buttons");
  replace(row, buttons.map((button) => h("button", {
    type: "submit",
    value: button.value,
    class: button.kind ?? "secondary",
    autofocus: button.autofocus ?? false,
  }, button.label)));
  return new Promise((resolve) => {
    const onAbort = () => {
      if (dialog.open) dialog.close(cancelValue ?? "");
    };
    const onClose = () => {
      dialog.removeEventListener("close", onClose);
      signal?.removeEventListener("abort", onAbort);
      const value = dialog.returnValue;
      resolve(buttons.some((button) => button.value === value) ? value : cancelValue);
      if (returnFocus instanceof HTMLElement && returnFocus.isConnected) returnFocus.focus();
    };
    dialog.returnValue = "";
    dialog.addEventListener("close", onClose);
    dialog.showModal();
    if (signal?.aborted) onAbort();
    else signal?.addEventListener("abort", onAbort);
  });
}
