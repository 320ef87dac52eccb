// Building DOM safely. Every string from the server, a tool or a user goes into the page as a
// text node (`textContent`); this module never parses HTML, so a customer named
// `<img src=x onerror=alert(1)>` shows exactly those characters.

/**
 * `h("p", {class: "muted"}, "text", child)`: an element with attributes and children.
 *
 * - `class`, `id`, `for`, `type`, `href`, `aria-*`, `data-*` and other plain attributes are set
 *   with `setAttribute` (values are strings, never HTML). `href` is only set for `#…`, relative or
 *   http(s) URLs.
 * - `on: {click: fn}` adds listeners; `props: {value: 1}` sets properties.
 * - Children: strings and numbers become text nodes; `null`, `undefined` and `false` are skipped;
 *   arrays are flattened.
 */
export function h(tag, attributes, ...children) {
  const element = document.createElement(tag);
  for (const [name, value] of Object.entries(attributes ?? {})) {
    if (value === null || value === undefined || value === false) continue;
    if (name === "on") {
      for (const [event, listener] of Object.entries(value)) element.addEventListener(event, listener);
    } else if (name === "props") {
      Object.assign(element, value);
    } else if (name === "href") {
      element.setAttribute("href", safeHref(value));
    } else {
      element.setAttribute(name, value === true ? "" : String(value));
    }
  }
  append(element, children);
  return element;
}

/** Appends children (strings become text nodes). */
export function append(parent, children) {
  for (const child of children.flat(Infinity)) {
    if (child === null || child === undefined || child === false) continue;
    parent.append(child instanceof Node ? child : document.createTextNode(String(child)));
  }
  return parent;
}

/** Replaces everything inside `parent`. */
export function replace(parent, ...children) {
  parent.replaceChildren();
  return append(parent, children);
}

/** `#/…`, a path on this origin, or an http(s) URL; anything else (`javascript:`) becomes `#`. */
export function safeHref(value) {
  const text = String(value);
  if (text.startsWith("#") || text.startsWith("/")) return text.startsWith("//") ? "#" : text;
  try {
    const url = new URL(text, window.location.href);
    return url.protocol === "http:" || url.protocol === "https:" ? url.href : "#";
  } catch {
    return "#";
  }
}

export const byId = (id) => document.getElementById(id);

let uniqueCounter = 0;
/** A fresh element id with a readable prefix, for label/aria wiring. */
export function uid(prefix) {
  uniqueCounter += 1;
  return `${prefix}-${uniqueCounter}`;
}

/** Moves focus to the view's heading so keyboard and screen reader users land on the new page. */
export function focusHeading(root) {
  const heading = root.querySelector("h1");
  if (!heading) return;
  heading.setAttribute("tabindex", "-1");
  heading.focus({ preventScroll: false });
}
