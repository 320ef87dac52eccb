// A host page written against the host module's declarations
// (host/dist/toolbridge_host.d.ts): `tsc` must accept it, including every
// `@ts-expect-error` below being an error.

import init, { Host, type BlockedRecord, type HostBackend, type ToolSettings, type CallRecord, type Capability, type ConfirmRequest, type Connectivity, type DebugEntry, type EditorQuote, type HostErrorObject, type NavigateRequest, type OpenOptions, type QuoteChange, type SaveOptions, type ServerQuote, type ToastRequest, type ToolStatus, type UnsavedQuote } from "../dist/toolbridge_host.js";

export async function mountEstimator(panel: HTMLElement, quoteId: string): Promise<number> {
  await init();
  const host = new Host({ apiBase: "/api/v1", debug: false, requestTimeoutMs: 15000 });
  const quote: EditorQuote = await host.openQuote(quoteId);
  const tool = host.mount(panel, {
    slug: "estimator",
    origin: "http://estimator.tools.localhost:8080",
    type: "quoting_extension",
    entry: "/index.html",
    autoResize: { min: 120, max: 900 },
    settings: { wastePercent: 10, region: "North", showCost: false },
    identity: true,
    fetch: true,
  });
  const tokenCapability: Capability = "auth.getToken";
  const fetchCapability: Capability = "fetch";
  console.log(tokenCapability, fetchCapability);
  const changed: ToolSettings = { wastePercent: 12 };
  host.setToolSettings("estimator", changed);
  const frame: HTMLIFrameElement = tool.frame;
  frame.style.width = "100%";
  const off: () => void = host.onChange((current: EditorQuote | null, change: QuoteChange) => {
    if (change.kind === "linesRemoved") {
      console.log(`removed ${change.lineNos.join(", ")}`);
    }
    if (change.kind === "linesAdded" && current !== null) {
      const added: number = change.linesAdded + change.tasksInjected;
      console.log(`${change.tool} added ${added} lines; total ${current.totals.total}`);
    }
  });
  const offToast: () => void = host.onToast((request: ToastRequest) => {
    const severity: "success" | "warning" | "error" = request.kind;
    console.log(`${request.toolName} (${request.tool}): ${request.message}`, severity);
  });
  host.onConfirm(async (request: ConfirmRequest): Promise<boolean> => {
    const { title, message, confirmLabel, cancelLabel, signal } = request;
    console.log(title, message, confirmLabel, cancelLabel);
    return new Promise<boolean>((resolve) => {
      signal.addEventListener("abort", () => resolve(false));
    });
  });
  host.onNavigate((request: NavigateRequest) => {
    console.log(request.url, request.quoteId, request.toolName);
    return !request.unsaved;
  });
  host.onBlocked((record: BlockedRecord) => console.warn(`${record.tool}: ${record.advice} (${record.what}: ${record.detail})`));
  host.onCall((record: CallRecord) => console.log(record.tool, record.method, record.durationMs, record.outcome));
  const log: DebugEntry[] = host.debugLog();
  const tools: ToolStatus[] = host.tools();
  const offered: Capability[] = tools.flatMap((status) => status.capabilities);
  console.log(offered.includes("ui.toast"));
  try {
    const first = quote.lines[0];
    if (first !== undefined) {
      const edited: EditorQuote = host.updateLine(first.lineNo, { qty: 2, unitPrice: 10 });
      const removed: EditorQuote = host.removeLine(first.lineNo);
      console.log(edited.totals.total, removed.lines.length);
    }
    const kept: UnsavedQuote | null = host.unsaved();
    if (kept !== null) {
      localStorage.setItem(`unsaved:${kept.quoteId}`, JSON.stringify(kept));
      host.closeQuote({ discard: true });
      const restore: OpenOptions = { restore: kept };
      const back: EditorQuote = await host.openQuote(kept.quoteId, restore);
      console.log(back.dirty, back.unsavedChanges, kept.lines[0]?.qty, kept.saveKey ?? "none");
      // @ts-expect-error what is kept holds lines without their amounts
      console.log(kept.lines[0]?.total);
      // @ts-expect-error restore takes what unsaved() gave, not a quote id
      await host.openQuote(quoteId, { restore: quoteId });
    }
    const saved: EditorQuote = await host.save();
    console.log(saved.dirty, saved.lines.map((line) => line.section ?? "Ungrouped"));
  } catch (e) {
    const error = e as HostErrorObject;
    console.log(error.code, error.details.map((d) => d.path), error.retryAfter);
    if (error.code === "CONFLICT") {
      const theirs: ServerQuote = await host.serverQuote();
      console.log(theirs.totals.total, theirs.lines.length);
      // @ts-expect-error the server's copy has no unsaved changes to speak of
      console.log(theirs.dirty);
      // @ts-expect-error nor a count of them
      console.log(theirs.unsavedChanges);
      const keepMine: SaveOptions = { overwrite: true };
      const kept: EditorQuote = await host.save(keepMine);
      console.log(kept.dirty);
      // @ts-expect-error overwrite is a boolean
      await host.save({ overwrite: "yes" });
    }
  }
  host.closeQuote({ discard: true });
  host.debug = true;
  off();
  offToast();
  host.endSession();
  host.endSession("expired");
  tool.unmount();
  host.destroy();
  return quote.lines.length + log.length + tools.length;
}

export function throughOwnClient(token: string): Host {
  const backend: HostBackend = {
    fetch: (request: Request): Promise<Response> => {
      request.headers.set("Authorization", `Bearer ${token}`);
      return fetch(request);
    },
  };
  const memory = new Host({
    apiBase: "https://app.example/api/v1",
    backend: { fetch: () => new Response(JSON.stringify({ items: [] }), { status: 200 }) },
  });
  memory.destroy();
  return new Host({ apiBase: "/api/v1", backend });
}

export function mistakes(host: Host, panel: HTMLElement): void {
  // @ts-expect-error: the type is one of the two manifest types
  host.mount(panel, { slug: "x", origin: "http://x.test", type: "widget" });
  // @ts-expect-error: a tool needs its origin
  host.mount(panel, { slug: "x", type: "standalone" });
  // @ts-expect-error: apiBase is required
  new Host({ debug: true });
  // @ts-expect-error: change kinds are a closed set
  host.onChange((_quote, change) => change.kind === "deleted");
  // @ts-expect-error: fetch is whether the manifest lists permissions.connect, not the origins
  host.mount(panel, { slug: "x", origin: "http://x.test", type: "standalone", fetch: ["https://api.vendor.example"] });
  // @ts-expect-error: autoResize takes bounds, not a flag
  host.mount(panel, { slug: "x", origin: "http://x.test", type: "standalone", autoResize: true });
  // @ts-expect-error: a toast's kind is one of three
  host.onToast((request) => request.kind === "info");
  // @ts-expect-error: a session ends signed out or expired
  host.endSession("bored");
  // @ts-expect-error: a confirm hook answers a boolean
  host.onConfirm(() => "yes");
  // @ts-expect-error: a setting's value is a string, number or boolean
  host.mount(panel, { slug: "x", origin: "http://x.test", type: "standalone", settings: { region: ["North"] } });
  // @ts-expect-error: setToolSettings names the tool by its slug
  host.setToolSettings({ wastePercent: 12 });
  // @ts-expect-error: a backend answers Responses, not bodies
  new Host({ apiBase: "/api/v1", backend: { fetch: async () => ({ items: [] }) } });
  // @ts-expect-error: a backend is an object with fetch, not a URL
  new Host({ apiBase: "/api/v1", backend: "https://api.example" });
  // @ts-expect-error: a theme is light or dark
  host.setContext({ theme: "blue" });
  // @ts-expect-error: units are metric or imperial
  host.setContext({ units: "furlongs" });
  // @ts-expect-error: whether the server can be reached is read, never set
  host.online = true;
  // @ts-expect-error: a connectivity listener gets {online}, not a boolean
  host.onConnectivity((online: boolean) => online);
  // @ts-expect-error: the check's interval is a number of milliseconds
  new Host({ apiBase: "/api/v1", connectivityCheckMs: "10s" });
}

export function offline(host: Host, banner: HTMLElement): () => void {
  const connectivity: Capability = "connectivity";
  const show = (state: Connectivity): void => {
    banner.hidden = state.online;
  };
  show({ online: host.online });
  const stop: () => void = host.onConnectivity(show);
  const checking = new Host({ apiBase: "/api/v1", connectivityCheckMs: 5000 });
  checking.destroy();
  host.save().catch((e: unknown) => {
    const error = e as HostErrorObject;
    if (error.code === "OFFLINE") banner.textContent = `${connectivity}: the changes are kept; saving again once online`;
  });
  return stop;
}

export function context(host: Host): void {
  host.setContext({ timeZone: "Pacific/Auckland", currency: "NZD", locale: "en-NZ", units: "metric", theme: "dark" });
  host.setContext({ theme: "light" });
}
