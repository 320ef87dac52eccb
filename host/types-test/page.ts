// A host page written against the host module's declarations
// (host/dist/toolbridge_host.d.ts): `tsc` must accept it, including every
// `@ts-expect-error` below being an error.

import init, { Host, type CallRecord, type DebugEntry, type EditorQuote, type HostErrorObject, type QuoteChange, type ToolStatus } from "../dist/toolbridge_host.js";

export async function mountEstimator(panel: HTMLElement, quoteId: string): Promise<number> {
  await init();
  const host = new Host({ apiBase: "/api/v1", debug: false, requestTimeoutMs: 15000 });
  const quote: EditorQuote = await host.openQuote(quoteId);
  const tool = host.mount(panel, {
    slug: "estimator",
    origin: "http://estimator.tools.localhost:8080",
    type: "quoting_extension",
    entry: "/index.html",
  });
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
  host.onCall((record: CallRecord) => console.log(record.tool, record.method, record.durationMs, record.outcome));
  const log: DebugEntry[] = host.debugLog();
  const tools: ToolStatus[] = host.tools();
  try {
    const first = quote.lines[0];
    if (first !== undefined) {
      const edited: EditorQuote = host.updateLine(first.lineNo, { qty: 2, unitPrice: 10 });
      const removed: EditorQuote = host.removeLine(first.lineNo);
      console.log(edited.totals.total, removed.lines.length);
    }
    const saved: EditorQuote = await host.save();
    console.log(saved.dirty, saved.lines.map((line) => line.section ?? "Ungrouped"));
  } catch (e) {
    const error = e as HostErrorObject;
    console.log(error.code, error.details.map((d) => d.path), error.retryAfter);
  }
  host.closeQuote({ discard: true });
  host.debug = true;
  off();
  tool.unmount();
  host.destroy();
  return quote.lines.length + log.length + tools.length;
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
}
