// The sidebar where a `standalone` tool runs, one at a time. `host.mount` creates the sandboxed
// iframe and registers it; `unmount()` removes the frame and closes the tool's port.

import { app, mountOptions } from "./app.js";
import { byId } from "./dom.js";

let mounted = null; // {tool, handle}

export function openStandaloneTool(tool) {
  if (mounted?.tool.slug === tool.slug) {
    mounted.handle.frame.focus();
    return;
  }
  closeSidebar();
  const container = byId("sidebar-frame");
  const handle = app.host.mount(container, mountOptions(tool));
  mounted = { tool, handle };
  byId("sidebar-title").textContent = tool.name;
  byId("sidebar").hidden = false;
  document.body.classList.add("with-sidebar");
  handle.frame.focus();
}

export function closeSidebar() {
  if (!mounted) return;
  mounted.handle.unmount();
  mounted.handle.free();
  mounted = null;
  byId("sidebar-frame").replaceChildren();
  byId("sidebar").hidden = true;
  document.body.classList.remove("with-sidebar");
}

export function sidebarToolSlug() {
  return mounted?.tool.slug ?? null;
}

export function setupSidebar() {
  byId("sidebar-close").addEventListener("click", () => {
    closeSidebar();
    byId("main").focus();
  });
}
