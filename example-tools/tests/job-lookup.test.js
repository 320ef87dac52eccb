// Job lookup's own tests, on the test host: the real host module answering through an
// in-memory backend with the platform's rules.

import { assert, assertEqual, createTestHost, fill, runTests, waitFor } from "@toolbridge/sdk/testing";
import { business, customers } from "./fixtures.js";

const ENTRY = "/example-tools/job-lookup/index.html";
const STATUSES = ["Scheduling", "In progress", "Invoicing"];

localStorage.clear();

// 26 jobs, J-1001 to J-1026, for Aroha, Ben, Chloe and Dev in turn; the last one closed.
const jobs = Array.from({ length: 26 }, (_, i) => ({
  id: `job-${i + 1}`,
  ref: `J-${1001 + i}`,
  customerId: customers[i % 4].id,
  status: STATUSES[i % 3],
  closed: i === 25,
}));

/** A test host with job lookup mounted, showing 10 jobs a page. */
async function openJobLookup() {
  const host = await createTestHost(business({ jobs }));
  const tool = host.mount({ entry: ENTRY, type: "standalone", title: "Job lookup" });
  await tool.ready();
  await waitFor(() => tool.$("#panel-jobs [data-role=state]").textContent.endsWith("in all."), { message: "the jobs" });
  fill(tool.$("#page-size"), "10");
  await waitFor(() => shown(tool).length === 10, { message: "10 jobs a page" });
  return { host, tool };
}

/** The references of the jobs on show. */
function shown(tool) {
  return [...tool.document.querySelectorAll("#panel-jobs [data-role=list] .ref")].map((ref) => ref.textContent);
}

function state(tool) {
  return tool.$("#panel-jobs [data-role=state]").textContent;
}

await runTests({
  async "lists the open jobs page by page"() {
    const { host, tool } = await openJobLookup();
    assertEqual(state(tool), "25 jobs in all.");
    assertEqual(shown(tool), jobs.slice(0, 10).map((job) => job.ref));
    assertEqual(tool.$("#panel-jobs [data-role=page]").textContent, "Page 1 of 3");
    tool.$("#panel-jobs [data-role=next]").click();
    await waitFor(() => shown(tool)[0] === "J-1011", { message: "page 2" });
    assertEqual(tool.$("#panel-jobs [data-role=page]").textContent, "Page 2 of 3");
    assertEqual(host.callsTo("jobs.list").map((call) => call.outcome), ["ok", "ok", "ok"]);
  },

  async "filters the loaded page as you type, in any letter case"() {
    const { tool } = await openJobLookup();
    fill(tool.$("#panel-jobs-search"), "ngata");
    await waitFor(() => shown(tool).length === 5, { message: "the filtered page" });
    assertEqual(shown(tool), ["J-1001", "J-1003", "J-1005", "J-1007", "J-1009"]);
    assertEqual(state(tool), '5 of 10 jobs on this page match "ngata".');
    fill(tool.$("#panel-jobs-search"), "IN PROGRESS");
    await waitFor(() => shown(tool).length === 3, { message: "jobs by status" });
    assertEqual(shown(tool), ["J-1002", "J-1005", "J-1008"]);
  },

  async "searches every page"() {
    const { host, tool } = await openJobLookup();
    fill(tool.$("#panel-jobs-search"), "chloe");
    const searchAll = tool.$("#panel-jobs [data-role=search-all]");
    await waitFor(() => !searchAll.hidden, { message: "the search-all button" });
    searchAll.click();
    await waitFor(() => state(tool).startsWith("6 jobs match"), { message: "the search of every page" });
    assertEqual(shown(tool), ["J-1003", "J-1007", "J-1011", "J-1015", "J-1019", "J-1023"]);
    const paged = host.backend.requests.filter((request) => request.path.startsWith("/jobs"));
    assertEqual(paged.at(-1).path, "/jobs?page=1&pageSize=500", "one page of the largest size");
  },

  async "tells the app when a search fails"() {
    const { host, tool } = await openJobLookup();
    host.backend.signOut();
    fill(tool.$("#panel-jobs-search"), "ben");
    const searchAll = tool.$("#panel-jobs [data-role=search-all]");
    await waitFor(() => !searchAll.hidden, { message: "the search-all button" });
    searchAll.click();
    await waitFor(() => host.toasts.length === 1, { message: "the toast" });
    assertEqual(host.toasts[0].kind, "error");
    assert(host.toasts[0].message.startsWith('Searching all jobs for "ben" failed. Your session has ended.'),
      host.toasts[0].message);
    assertEqual(tool.$("#panel-jobs [data-role=retry]").hidden, false, "the retry button");
  },

  async "shows a quote's time in the organisation's time zone and currency"() {
    const fixtures = business({
      jobs,
      quotes: [{ id: "q-late", ref: "Q-2001", customerId: customers[0].id, date: "2025-03-01T22:30:00Z", lines: [] }],
    });
    fixtures.tenant = { ...fixtures.tenant, timeZone: "Pacific/Auckland", currency: "NZD" };
    const host = await createTestHost(fixtures);
    const tool = host.mount({ entry: ENTRY, type: "standalone", title: "Job lookup" });
    await tool.ready();
    await waitFor(() => tool.$("#panel-jobs [data-role=state]").textContent.endsWith("in all."), { message: "the jobs" });
    tool.$("#tab-quotes").click();
    const hint = () => tool.$("#panel-quotes [data-role=list] .hint")?.textContent ?? "";
    await waitFor(() => hint().includes("·"), { message: "the quote" });
    // 22:30 UTC on 1 March is 11:30 on 2 March in Auckland (NZDT).
    const expected = new Intl.DateTimeFormat("en-NZ", { dateStyle: "medium", timeStyle: "short", timeZone: "Pacific/Auckland" })
      .format(new Date("2025-03-01T22:30:00Z"));
    assert(hint().endsWith(` · ${expected}`), hint());
    assert(expected.includes("2 Mar"), expected);
  },
});
