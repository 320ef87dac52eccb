// A small tool written against bridge.d.ts; `cargo xtask test` type-checks it
// with tsc so the typings cannot drift from what the SDK provides.
import type {
  BridgeAddLineDto,
  BridgeCapability,
  BridgeConfirmRequest,
  BridgeConnectivity,
  BridgeError,
  BridgeEventName,
  BridgeFetchInit,
  BridgeMethodName,
  BridgeOpenQuote,
  BridgeOpenQuoteLine,
  BridgeOpenQuoteTotals,
  BridgeProductDto,
  BridgeReadyInfo,
  BridgeSettings,
  BridgeToastRequest,
  ConnectivityChangedEvent,
  QuoteChangeKind,
  QuoteChangedEvent,
  SessionEndedEvent,
  SettingsChangedEvent,
} from "../bridge";

export async function addFlooring(areaM2: number): Promise<string> {
  const context = await bridge.context.get();
  const products = await bridge.products.list({ pageSize: 500 });
  const bySku = new Map<string, BridgeProductDto>();
  for (const product of products.items) bySku.set(product.sku.toLowerCase(), product);

  const templates = await bridge.taskTemplates.list({ codes: ["INSTALL"] });
  const install = templates.items.find((t) => t.code === "INSTALL");
  const travel = (await bridge.costItems.list({ codes: ["TRAVEL"] })).items[0];
  const oak = bySku.get("oak-01");

  const lines: BridgeAddLineDto[] = [
    {
      description: "Oak boards",
      productCode: "OAK-01",
      ...(oak ? { linkedItemId: oak.id } : {}),
      qty: areaM2,
      unit: "T_SQUARE_METRE",
      unitPrice: 89.5,
      costPrice: 61,
      taxRate: 15,
      section: "Kitchen",
      groupKey: "kitchen",
    },
  ];
  if (install) lines.push({ lineType: "task", linkedItemId: install.id, qty: areaM2 / 4, unitPrice: 45, taxRate: 0.15 });
  if (travel) lines.push({ lineType: "cost", linkedItemId: travel.id, qty: 1, unitPrice: 60, taxRate: 0.15 });

  try {
    if (bridge.supports("quotes.addLines")) {
      await bridge.quotes.addLines(lines);
    } else {
      const created = await bridge.quotes.create({
        customerEmail: context.userEmail,
        upsertByEmail: true,
        lines: [{ description: "Oak boards", productCode: "OAK-01", qty: areaM2, unitPrice: 89.5, taxRate: 0.15 }],
      });
      return created.url ?? created.ref;
    }
    return `${lines.length} lines for ${context.tenantName}`;
  } catch (caught) {
    if (caught instanceof bridge.BridgeError) {
      const error: BridgeError = caught;
      const where = error.details.map((d) => `${d.path}: ${d.message}`).join("; ");
      if (error.code === "RATE_LIMITED") return `busy, retry in ${error.retryAfter ?? 1} s`;
      return `${error.code}: ${where || error.message}`;
    }
    throw caught;
  }
}

export async function waitForHost(): Promise<boolean> {
  try {
    const info = await window.bridge.ready();
    return info.methods.includes("quotes.addLines") && info.toolType === "quoting_extension";
  } catch {
    return false;
  }
}

export const madeInTests: BridgeError = bridge.BridgeError({ code: "INVALID_PARAMS", message: "x", details: [{ path: "lines[0].qty", message: "must be greater than 0" }] });

// The extensions beyond 2.1.0, each used only where the host offers it.

/** The rooms (sections) of the open quote, and what its lines come to. */
export async function rooms(): Promise<string[]> {
  if (!bridge.supports("quotes.getOpen")) return [];
  const quote: BridgeOpenQuote = await bridge.quotes.getOpen();
  const lines: BridgeOpenQuoteLine[] = quote.lines;
  const totals: BridgeOpenQuoteTotals = quote.totals;
  const sections = new Set<string>();
  for (const line of lines) {
    if (line.section !== undefined) sections.add(line.section);
    const described = [
      line.lineNo, line.lineType, line.linkedItemId ?? "", line.productCode ?? "", line.description,
      line.specification ?? "", line.location ?? "", line.qty, line.unit, line.unitPrice, line.costPrice ?? 0,
      line.taxRate, line.groupId, line.injected, line.parentLineNo ?? 0, line.nett, line.tax, line.total, line.cost ?? 0,
    ];
    if (described.length === 0) throw new Error("unreachable");
  }
  const margin = totals.margin === undefined ? "" : `${totals.margin} (${totals.marginPercent ?? 0}%) on ${totals.cost ?? 0}`;
  const summary = `${quote.ref} ${quote.id} ${quote.status} ${quote.customerName} ${quote.dirty} ${totals.nett} ${totals.tax} ${totals.total} ${margin}`;
  return summary ? [...sections] : [];
}

/** Follows the open quote and the session; returns what stops following. */
export function follow(onChange: (kind: QuoteChangeKind, lines: number) => void): () => void {
  const stopQuote = bridge.on("quote.changed", (event: QuoteChangedEvent) => {
    onChange(event.kind, event.quote === null ? 0 : event.quote.lines.length);
  });
  const stopSession = bridge.on("session.ended", ({ reason }: SessionEndedEvent) => {
    onChange(reason === "signedOut" ? "closed" : "edited", 0);
  });
  const name: BridgeEventName = "quote.changed";
  const stopAgain = bridge.on(name, (event) => onChange(event.kind, 0));
  return () => {
    stopQuote();
    stopSession();
    stopAgain();
  };
}

/** The app's toasts, dialogs and navigation, and auto-resize. */
export async function confirmAndOpen(quoteId: string): Promise<boolean> {
  const info: BridgeReadyInfo = await bridge.ready();
  const offered: BridgeCapability[] = info.capabilities;
  const wanted: BridgeMethodName = "ui.openQuote";
  bridge.ui.setAutoResize(offered.includes("ui.autoResize"));
  if (bridge.supports("ui.toast")) {
    const toast: BridgeToastRequest = { kind: "success", message: "Lines added" };
    const shown: null = await bridge.ui.toast(toast);
    if (shown !== null) return false;
  }
  const question: BridgeConfirmRequest = { title: "Open the quote?", message: "Unsaved changes stay.", confirmLabel: "Open", cancelLabel: "Stay" };
  const confirmed: boolean = !bridge.supports("ui.confirm") || (await bridge.ui.confirm(question));
  if (!confirmed || !bridge.supports(wanted)) return false;
  return bridge.ui.openQuote(quoteId);
}

/** The install settings: read once, then kept current. */
export async function wasteAllowance(apply: (percent: number, region: string) => void): Promise<() => void> {
  const read = (settings: BridgeSettings): void => {
    const waste = settings["wastePercent"];
    const region = settings["region"];
    apply(typeof waste === "number" ? waste : 10, typeof region === "string" ? region : "");
  };
  if (!bridge.supports("settings.get")) return () => {};
  const stop = bridge.on("settings.changed", ({ settings }: SettingsChangedEvent) => read(settings));
  const current: Record<string, string | number | boolean> = await bridge.settings.get();
  read(current);
  const offered: BridgeCapability = "settings.changed";
  const method: BridgeMethodName = "settings.get";
  return bridge.supports(offered) && bridge.supports(method) ? stop : () => {};
}

/** The user, proven to the vendor's server by a token the platform signed. */
export async function vendorPrices(region: string): Promise<unknown> {
  const capability: BridgeCapability = "auth.getToken";
  const method: BridgeMethodName = "auth.getToken";
  if (!bridge.supports(capability) || !bridge.supports(method)) return null;
  const token: string = await bridge.auth.getToken();
  const response = await fetch(`https://api.vendor.example/prices?region=${region}`, {
    headers: { Authorization: `Bearer ${token}` },
  });
  return response.json();
}

/** A vendor's price list, through the app's server with the secret API key in it. */
export async function supplierPrices(skus: string[], photo: Blob): Promise<number[]> {
  const capability: BridgeCapability = "fetch";
  const method: BridgeMethodName = "fetch";
  if (!bridge.supports(capability) || !bridge.supports(method)) return [];
  const init: BridgeFetchInit = {
    method: "post",
    headers: { Authorization: "Bearer {{secret.API_KEY}}", "Content-Type": "application/json" },
    body: JSON.stringify({ skus }),
  };
  const response: Response = await bridge.fetch("https://api.vendor.example/prices", init);
  if (!response.ok) throw new Error(`HTTP ${response.status}`);
  const prices = (await response.json()) as { price: number }[];
  const headers = new Headers([["X-Token", "{{token}}"]]);
  const upload = await bridge.fetch(new URL("https://api.vendor.example/photos"), { method: "PUT", headers, body: photo });
  const bytes: ArrayBuffer = await upload.arrayBuffer();
  const form = new URLSearchParams({ user: "{{secret.USER}}" });
  const pairs: [string, string][] = [["Accept", "text/plain"]];
  const text: string = await (await bridge.fetch("https://api.vendor.example/login", { method: "POST", headers: pairs, body: form })).text();
  const view = new Uint8Array(bytes, 1);
  await bridge.fetch("https://api.vendor.example/raw", { method: "POST", body: view });
  return text ? prices.map((p) => p.price) : [];
}

/** What the typings refuse (each line must be a type error). */
export function refused(): void {
  // @ts-expect-error: not an event
  bridge.on("quote.change", () => {});
  // @ts-expect-error: session.ended brings a reason, not a kind
  bridge.on("session.ended", (event: QuoteChangedEvent) => event.kind);
  // @ts-expect-error: a boolean
  bridge.ui.setAutoResize("yes");
  // @ts-expect-error: a quote's id is a string
  void bridge.ui.openQuote(42);
  // @ts-expect-error: not a toast kind
  void bridge.ui.toast({ kind: "info", message: "x" });
  // @ts-expect-error: confirm needs a message
  void bridge.ui.confirm({ title: "x" });
  // @ts-expect-error: a misspelt method
  void bridge.settings.gets();
  // @ts-expect-error: the token is a string, and getToken takes nothing a claim could come from
  void bridge.auth.getToken({ sub: "someone-else" }).then((token: number) => token);
  // @ts-expect-error: settings.get answers the settings object, not a string
  void bridge.settings.get().then((settings: string) => settings);
  // @ts-expect-error: settings.get takes no key; it answers every setting
  void bridge.settings.get("wastePercent");
  // @ts-expect-error: settings.changed brings {settings}, not the values themselves
  bridge.on("settings.changed", (event: SettingsChangedEvent) => event.wastePercent);
  // @ts-expect-error: a setting's value is a string, number or boolean
  const nested: BridgeSettings = { region: { name: "North" } };
  void nested;
  // @ts-expect-error: a theme is light or dark
  bridge.on("context.changed", (changed) => changed.theme === "blue");
  // @ts-expect-error: the time zone is a name, not an offset
  void bridge.context.get().then((context) => context.timeZone === 12);
  // @ts-expect-error: a URL is a string or a URL
  void bridge.fetch(42);
  // @ts-expect-error: a body is text, bytes, a Blob or a form, not an object to turn into JSON
  void bridge.fetch("https://api.vendor.example", { method: "POST", body: { skus: [] } });
  // @ts-expect-error: headers are strings
  void bridge.fetch("https://api.vendor.example", { headers: { "X-Count": 3 } });
  // @ts-expect-error: fetch answers a Response, not its JSON
  void bridge.fetch("https://api.vendor.example").then((prices: { price: number }[]) => prices);
  // @ts-expect-error: connectivity.changed brings {online}, not a boolean
  bridge.on("connectivity.changed", (online: boolean) => online);
  // @ts-expect-error: connectivity.get answers {online}
  void bridge.connectivity.get().then((state) => state.offline);
  // @ts-expect-error: the host decides, a tool cannot set it
  void bridge.connectivity.set({ online: true });
}

/** Server-backed buttons are usable only while the app's server can be reached. */
export async function followsConnectivity(buttons: HTMLButtonElement[]): Promise<() => void> {
  const capability: BridgeCapability = "connectivity";
  const method: BridgeMethodName = "connectivity.get";
  if (!bridge.supports(capability)) return () => {};
  const show = ({ online }: BridgeConnectivity): void => {
    for (const button of buttons) button.disabled = !online;
  };
  const stop = bridge.on("connectivity.changed", (event: ConnectivityChangedEvent) => show(event));
  show(await bridge.connectivity.get());
  try {
    await bridge.products.list();
  } catch (caught) {
    const error = caught as BridgeError;
    if (error.code === "OFFLINE") show({ online: false });
  }
  return method ? stop : () => {};
}

export async function followsTheContext(): Promise<string> {
  const context = await bridge.context.get();
  const zone: string | undefined = context.timeZone;
  const stop = bridge.on("context.changed", (changed) => {
    if (changed.theme !== undefined) document.body.dataset.theme = changed.theme;
    if (changed.currency !== undefined) document.body.dataset.currency = changed.currency;
  });
  stop();
  return new Intl.DateTimeFormat(context.locale ?? context.cultureCode, { timeZone: zone }).format(new Date());
}
