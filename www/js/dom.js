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
