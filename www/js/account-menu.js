// The header's Account button: below 600px wide (app.css) the account controls (the user's name,
// the theme and debug switches, Sign out) fold behind it, so that the header is one row on a
// phone. A disclosure: `aria-expanded` says whether they show; Escape closes them and a new page
// does too. Wider, the button is not shown and the controls always are.

import { byId } from "./dom.js";

export function setupAccountMenu() {
  const toggle = byId("account-toggle");
  const account = byId("account");
  const setOpen = (open) => {
    toggle.setAttribute("aria-expanded", String(open));
    account.classList.toggle("open", open);
  };
  toggle.addEventListener("click", () => setOpen(toggle.getAttribute("aria-expanded") !== "true"));
  account.addEventListener("keydown", (event) => {
    if (event.key === "Escape" && toggle.getAttribute("aria-expanded") === "true" && toggle.offsetParent !== null) {
      setOpen(false);
      toggle.focus();
    }
  });
  window.addEventListener("hashchange", () => setOpen(false));
  // The button is there whenever the account is (signed in), and closed when it goes.
  const follow = () => {
    toggle.hidden = account.hidden;
    if (account.hidden) setOpen(false);
  };
  new MutationObserver(follow).observe(account, { attributes: true, attributeFilter: ["hidden"] });
  follow();
}
