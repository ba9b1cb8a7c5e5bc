// network_tail's durations, matched from the page's own timeline to the entries the worker heard
// end: by URL, the nearest end within a second, each timeline entry used once, nothing guessed.
import { expect, it } from "vitest";
import type { NetEntry } from "../../src/tools/observe/network.js";

(globalThis as { chrome?: unknown }).chrome = {};

const entry = (seq: number, url: string, ts: number, ms?: number): NetEntry =>
  ({ seq, ts, method: "GET", url, status: 200, type: "", origin: "https://a.example", doc: { origin: "https://a.example", url: "" }, frameId: 0, documentId: "d", ...(ms !== undefined ? { ms } : {}) }) as NetEntry;

it("each entry takes the nearest-ending timeline entry of its URL, once; none within a second leaves it unknown", async () => {
  const { matchTimes } = await import("../../src/tools/observe/timing.js");
  const A = "https://a.example/api/x";
  const es = [entry(1, A, 10_000), entry(2, A, 10_300), entry(3, "https://a.example/other", 10_400), entry(4, A, 20_000), entry(5, A, 10_350, 7)];
  matchTimes(es, [
    { url: A, start: 10_250, end: 10_302 },
    { url: A, start: 9_990, end: 10_004 },
    // Another request of the same URL, long after: not any entry's.
    { url: A, start: 15_000, end: 15_010 },
    { url: "https://a.example/elsewhere", start: 10_300, end: 10_400 },
  ]);
  expect(es.map((e) => e.ms)).toEqual([14, 52, undefined, undefined, 7]);
  // A URL the page reports with credentials in it is compared as the entry shows it.
  const cred = [entry(6, "https://a.example/c", 1_000)];
  matchTimes(cred, [{ url: "https://u:p@a.example/c", start: 900, end: 1_001 }]);
  expect(cred[0]?.ms).toBe(101);
});
