// The tabs of Settings: plain links, so they work with the keyboard and the back button.

import { h } from "/sdk/ui.js";

export function settingsNav(current) {
  const link = (key, href, label) => h("li", {}, h("a", { href, "aria-current": key === current ? "page" : null }, label));
  return h("nav", { class: "subnav", "aria-label": "Settings" }, h("ul", {},
    link("tokens", "#/settings/tokens", "API tokens"),
    link("tools", "#/settings/tools", "Tools"),
    link("webhooks", "#/settings/webhooks", "Webhooks"),
    link("organisation", "#/settings/organisation", "Organisation")));
}
