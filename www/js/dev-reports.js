// What the frame of a tool under development refused it, told to its author at once.
//
// A tool served from a folder with `toolbridge serve --dev-tool DIR` is marked `dev` in
// `GET /api/tools`. When its bridge.js reports a refusal (`host.onBlocked`: an inline script the
// tool origin's policy refused, an `alert()` the sandbox ignored, a request to an origin the
// manifest did not declare), this panel under the header says what was refused and what to change,
// and the server prints the same line in the terminal `serve` runs in. The same report repeated
// counts up instead of adding a row. Installed tools stay quiet: their refusals go to the debug
// panel only.

import { h, replace } from "/sdk/ui.js";
import { api } from "./api.js";
import { toolBySlug, toolName } from "./app.js";
import { byId } from "./dom.js";

const MAX_REPORTS = 20;
let reports = []; // newest first: {key, tool, advice, kind, detail, count, row}

function render() {
  const panel = byId("dev-reports");
  replace(byId("dev-report-list"), reports.map((report) => report.row));
  panel.hidden = reports.length === 0;
}

function rowFor(report) {
  const count = h("span", { class: "badge badge-warning dev-report-count" });
  const row = h("li", { class: "dev-report", "data-tool": report.tool, "data-kind": report.kind },
    h("strong", {}, `${toolName(report.tool)}: `),
    h("span", { class: "dev-report-advice" }, report.advice),
    report.detail ? h("code", { class: "dev-report-detail" }, report.detail) : null,
    count);
  return { row, count };
}

/**
 * Called with every `host.onBlocked` record. Answers whether it was shown (the tool is a dev
 * folder); the debug panel records it either way.
 */
export function reportBlocked(record) {
  if (!toolBySlug(record.tool)?.dev) return false;
  const advice = record.advice || record.what;
  const key = `${record.tool}\n${record.what}\n${record.detail}`;
  const seen = reports.find((report) => report.key === key);
  if (seen) {
    seen.count += 1;
    seen.countBadge.textContent = `×${seen.count}`;
  } else {
    const report = { key, tool: record.tool, advice, kind: record.what, detail: record.detail, count: 1 };
    const { row, count } = rowFor(report);
    report.row = row;
    report.countBadge = count;
    reports.unshift(report);
    if (reports.length > MAX_REPORTS) reports.length = MAX_REPORTS;
    render();
    // The terminal too: the server prints it with the same advice.
    api.reportDevBlocked(record.tool, { kind: record.what, detail: record.detail }).catch((error) => {
      console.warn("the server did not take the dev tool's report", error);
    });
  }
  return true;
}

export function setupDevReports() {
  byId("dev-reports-clear").addEventListener("click", () => {
    reports = [];
    render();
  });
}

/** Signing out forgets them. */
export function clearDevReports() {
  reports = [];
  render();
}
