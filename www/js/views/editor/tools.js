// The quote editor's Tools menu of quoting extensions, and the panel beside the lines where the
// chosen one is mounted.

import { h } from "/sdk/ui.js";
import { mountOptions } from "../../app.js";

/** The heights, in CSS pixels, a quoting extension may give its frame in the tool panel. */
const TOOL_HEIGHT = { min: 240, max: 4000 };

/**
 * The Tools menu of `tools` (`menu`, for the toolbar) and the panel (`panel`, placed beside the
 * lines in a layout that gets the class `with-tool` while a tool is mounted) where `host.mount`
 * puts the chosen one, one at a time. `dispose()` unmounts it and stops listening.
 */
export function toolMenu(host, tools) {
  let mounted = null; // {tool, handle}
  const menuId = `tools-menu-${Math.random().toString(36).slice(2, 8)}`;
  const menuButton = h("button", { type: "button", class: "secondary", "aria-expanded": "false", "aria-controls": menuId }, "Tools ▾");
  const menu = h("ul", { id: menuId, class: "menu", hidden: true },
    tools.map((tool) => h("li", {}, h("button", { type: "button", class: "menu-item", on: { click: () => { closeMenu(); openTool(tool); } } },
      h("span", { class: "menu-title" }, tool.name), h("span", { class: "sub" }, tool.description)))));
  const menuWrap = h("div", { class: "menu-wrap" }, menuButton, menu);
  const openMenu = () => {
    menu.hidden = false;
    menuButton.setAttribute("aria-expanded", "true");
    menu.querySelector("button")?.focus();
  };
  const closeMenu = (focusButton = false) => {
    menu.hidden = true;
    menuButton.setAttribute("aria-expanded", "false");
    if (focusButton) menuButton.focus();
  };
  menuButton.addEventListener("click", () => (menu.hidden ? openMenu() : closeMenu()));
  menuWrap.addEventListener("keydown", (event) => {
    if (event.key === "Escape" && !menu.hidden) {
      event.stopPropagation();
      closeMenu(true);
    }
    if ((event.key === "ArrowDown" || event.key === "ArrowUp") && !menu.hidden) {
      event.preventDefault();
      const items = [...menu.querySelectorAll("button")];
      const index = items.indexOf(document.activeElement);
      const nextIndex = event.key === "ArrowDown" ? (index + 1) % items.length : (index - 1 + items.length) % items.length;
      items[nextIndex]?.focus();
    }
  });
  const onDocumentClick = (event) => {
    if (!menuWrap.contains(event.target)) closeMenu();
  };
  document.addEventListener("click", onDocumentClick);

  const toolTitle = h("h2", { id: `${menuId}-title` }, "Tool");
  const toolFrame = h("div", { class: "tool-frame" });
  const toolPanel = h("aside", { class: "tool-panel", "aria-labelledby": `${menuId}-title`, hidden: true },
    h("div", { class: "panel-head" }, toolTitle, h("button", { type: "button", class: "secondary small", on: { click: () => closeTool(true) } }, "Close")),
    toolFrame);

  function openTool(tool) {
    if (mounted?.tool.slug === tool.slug) {
      mounted.handle.frame.focus();
      return;
    }
    closeTool(false);
    // The extension sizes its frame to its page, within these bounds.
    const handle = host.mount(toolFrame, { ...mountOptions(tool), autoResize: TOOL_HEIGHT });
    mounted = { tool, handle };
    toolTitle.textContent = tool.name;
    toolPanel.hidden = false;
    toolPanel.parentElement?.classList.add("with-tool");
    handle.frame.focus();
    revealPanel();
  }

  /**
   * Below 960px the panel is under the lines and the totals, often out of sight (and a browser
   * may not lay out a tool's page in a frame it cannot see): the page scrolls to it, clear of a
   * header that stays on top. Beside the lines it is in sight already, and nothing moves.
   */
  function revealPanel() {
    const top = toolPanel.getBoundingClientRect().top;
    const header = document.querySelector(".app-header");
    const covered = header && getComputedStyle(header).position === "sticky" ? header.offsetHeight : 0;
    if (top >= covered && top < window.innerHeight * 0.6) return;
    window.scrollBy({ top: top - covered - 8 });
  }

  function closeTool(focusMenu) {
    if (!mounted) return;
    mounted.handle.unmount();
    mounted.handle.free();
    mounted = null;
    toolFrame.replaceChildren();
    toolPanel.hidden = true;
    toolPanel.parentElement?.classList.remove("with-tool");
    if (focusMenu) menuButton.focus();
  }

  return {
    menu: menuWrap,
    panel: toolPanel,
    dispose() {
      closeTool(false);
      document.removeEventListener("click", onDocumentClick);
    },
  };
}
