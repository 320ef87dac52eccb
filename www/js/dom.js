// The app's own DOM helpers. Building DOM from data is the page helpers' (`h`, `replace` from
// /sdk/ui.js, the same module tools use): every string from the server, a tool or a user goes into
// the page as a text node, never parsed as HTML, so a customer named `<img src=x onerror=alert(1)>`
// shows exactly those characters.

export const byId = (id) => document.getElementById(id);

/** Moves focus to the view's heading so keyboard and screen reader users land on the new page. */
export function focusHeading(root) {
  const heading = root.querySelector("h1");
  if (!heading) return;
  heading.setAttribute("tabindex", "-1");
  heading.focus({ preventScroll: false });
}

/**
 * The errors of a form, shown at their fields. `fields` maps each field of the request (`url`,
 * `scopes`) to the element that shows its messages and the control marked invalid with it.
 * `show(path, message)` adds a message at the field a violation's path names (`eventTypes[1]` and
 * `rateLimit.requests` belong to `eventTypes` and `rateLimit`) and answers whether one did;
 * `clear()` takes them all away.
 */
export function fieldErrors(fields) {
  const fieldOf = (path) =>
    Object.keys(fields).find((field) => path === field || path.startsWith(`${field}[`) || path.startsWith(`${field}.`));
  return {
    clear() {
      for (const [element, control] of Object.values(fields)) {
        element.hidden = true;
        element.textContent = "";
        control.removeAttribute("aria-invalid");
      }
    },
    show(path, message) {
      const field = fieldOf(path);
      if (!field) return false;
      const [element, control] = fields[field];
      element.textContent = element.hidden ? message : `${element.textContent} ${message}`;
      element.hidden = false;
      control.setAttribute("aria-invalid", "true");
      return true;
    },
  };
}
