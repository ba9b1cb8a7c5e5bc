// network_tail's durations. The worker hears only each request's end (capture/requests.ts: a
// second event per request, landing in the agent's own calls, was most of what capture cost), so
// when entries are read, the documents that sent them are asked for their own timelines
// (page/timing.ts) and each entry takes the timeline entry of its URL that ended closest to it.
// A duration found is kept on the entry; one never found stays absent, it is not guessed.

import type { ResourceTime } from "../../page/timing.js";
import { engine } from "../browser.js";
import type { ToolContext } from "../define.js";
import { cleanUrl } from "./format.js";
import type { NetEntry } from "./network.js";

/** Documents asked per call, and how long each may take (the result does not wait for a busy page). */
const DOCS_PER_CALL = 4;
const ASK_MS = 1_000;
/** The page's clock and the browser's for the same end differ by milliseconds; further is another request. */
const SLACK_MS = 1_000;

/** Gives each entry without a duration the one of the nearest-ending timeline entry of its URL. */
export function matchTimes(entries: NetEntry[], times: ResourceTime[]): void {
  const byUrl = new Map<string, ResourceTime[]>();
  for (const t of times) {
    const u = cleanUrl(t.url);
    const l = byUrl.get(u);
    if (l) l.push(t);
    else byUrl.set(u, [t]);
  }
  for (const e of entries) {
    const l = e.ms === undefined ? byUrl.get(e.url) : undefined;
    if (!l) continue;
    let best = -1;
    let gap = SLACK_MS;
    l.forEach((t, i) => {
      const g = Math.abs(t.end - e.ts);
      if (g <= gap) [best, gap] = [i, g];
    });
    const t = best >= 0 ? l.splice(best, 1)[0] : undefined;
    if (t) e.ms = Math.max(0, Math.round(t.end - t.start));
  }
}

/** Starts the top document's log at capture start, so what the page fetches next is timed even past its buffer. */
export async function startTimes(tabId: number, ctx: ToolContext): Promise<void> {
  await ask(tabId, 0, undefined, [], ctx);
}

/** Fills in the durations of these entries that have none, from the newest documents' timelines. */
export async function fillTimes(tabId: number, entries: NetEntry[], ctx: ToolContext): Promise<void> {
  const docs = new Map<string, NetEntry[]>();
  for (const e of entries) {
    if (e.ms !== undefined || e.failed || !e.documentId) continue;
    // Kept in the order documents were last heard from: the newest ones are asked.
    const had = docs.get(e.documentId) ?? [];
    docs.delete(e.documentId);
    docs.set(e.documentId, [...had, e]);
  }
  const asks = [...docs].slice(-DOCS_PER_CALL).map(async ([documentId, es]) => {
    const times = await ask(tabId, (es[0] as NetEntry).frameId, documentId, [...new Set(es.map((e) => e.url))], ctx);
    matchTimes(es, times);
  });
  await Promise.all(asks);
}

/** The document's timeline for these URLs; nothing when it cannot answer (gone, a dialog, busy). */
async function ask(tabId: number, frameId: number, documentId: string | undefined, urls: string[], ctx: ToolContext): Promise<ResourceTime[]> {
  try {
    const r = await engine<ResourceTime[]>(tabId, "resourceTimes", { urls }, { signal: ctx.signal, deadline: ctx.deadline, ms: ASK_MS, frameId, ...(documentId ? { documentId } : {}) });
    return Array.isArray(r.value) ? r.value.filter((t) => t && typeof t.url === "string" && Number.isFinite(t.start) && Number.isFinite(t.end)) : [];
  } catch {
    return [];
  }
}
