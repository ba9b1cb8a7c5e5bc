// console_tail and network_tail: what the page logged and fetched, kept on a tab whose origin has
// the person's "Console & network" switch on (SECURITY I-65): from the page's load on the agent's
// own tabs (navigate, reload and history start the capture first, load.ts; SECURITY I-84), else
// from the first call, which starts the capture and returns nothing from before it. Response bodies are recorded only while
// network_tail's calls ask for them: each call turns their recording on (bodies: true) or off.

import { dialogOf } from "../../cdp/debugger.js";
import { left, withDeadline } from "../../cdp/deadline.js";
import type { Policy } from "../../policy/policy.js";
import { outbound } from "../secrets.js";
import { defineTool, type ToolContext, type ToolOutput } from "../define.js";
import { toolError } from "../errors.js";
import { S } from "../common.js";
import { getPolicy } from "../safety.js";
import { openCapture, setBodies, shown } from "./capture.js";
import { BODY_CAP, type BodyOmitted, type NetEntry } from "./network.js";
import { fillTimes, startTimes } from "./timing.js";
import type { ConsoleEntry, TabCapture } from "./store.js";
import { judgeUrl } from "../../policy/policy.js";
import { policyJudge, withholdForeignUrls } from "../../outbound/foreign.js";

/** Captures whose top document's timeline log network_tail has started. */
const timed = new WeakSet<TabCapture>();

/** Body characters one network_tail result carries at most. */
const RESULT_BODY_CAP = 256 * 1024;

const TAIL_PROPS = {
  tabId: S.tabId,
  limit: { type: "integer", minimum: 1, maximum: 500, doc: "newest entries to return (default 50)" },
} as const;

const TRAITS = { target: "tab", reads: "page", effects: [], switch: "observe", dialog: "ignores", handoff: "refused" } as const;

interface TailArgs {
  tabId?: number;
  limit?: number;
}

async function open(ctx: ToolContext): Promise<{ tabId: number; store: TabCapture; started: boolean; policy: Policy }> {
  const tabId = ctx.gate?.tabId;
  if (tabId === undefined) throw toolError("internal", "no tab was judged for this call");
  const session = ctx.gate?.owner?.id ?? "";
  const policy = await getPolicy();
  const had = await openCaptureOrDialog(tabId, session, ctx);
  return { tabId, ...had, policy };
}

async function openCaptureOrDialog(tabId: number, session: string, ctx: ToolContext) {
  try {
    return await openCapture(tabId, session, ctx.deadline, ctx.signal);
  } catch (e) {
    // Enabling the domains waits behind an open dialog: say so rather than time out blind.
    if (dialogOf(tabId)) throw toolError("dialog_blocking", `a JavaScript dialog is open on tab ${tabId}; the capture cannot start behind it`);
    throw e;
  }
}

function pick<T>(all: T[], a: TailArgs): T[] {
  const limit = a.limit ?? 50;
  return all.length > limit ? all.slice(all.length - limit) : all;
}

function clock(ts: number): string {
  return new Date(ts).toISOString().slice(11, 23);
}

function startedText(tool: string, tabId: number, since: number, what: string): ToolOutput {
  return {
    text: `${tool}: capture started on tab ${tabId} at ${clock(since)} UTC; ${what} from now on are kept. Call ${tool} again to read them.`,
    data: { tabId, started: true, since, entries: [] },
    whole: true,
  };
}

export const consoleTail = defineTool<TailArgs>({
  name: "console_tail",
  group: "devtools",
  description: "Console errors/warnings and uncaught exceptions since the load (own tabs) or first call.",
  inputSchema: {
    type: "object",
    properties: { ...TAIL_PROPS },
  },
  traits: TRAITS,
  async handler(a, ctx) {
    const { tabId, store, started, policy } = await open(ctx);
    if (started) return startedText("console_tail", tabId, store.startedAt, "console errors, warnings and uncaught exceptions");
    const all = store.console.list().filter((e) => shown(e.doc, policy));
    const entries = pick(all, a).map(publicConsole);
    const dropped = store.droppedConsole();
    const head = `console of tab ${tabId} since ${clock(store.startedAt)} UTC: ${entries.length} shown of ${all.length} kept; dropped ${dropped.overflow} (over ${store.console.cap}), ${dropped.offList} (origin off the list or switched off)`;
    const lines = entries.map((e) => `#${e.seq} ${clock(e.ts)} ${e.level} ${e.source} ${e.origin}: ${e.text}`);
    return {
      text: [head, ...lines].join("\n"),
      data: { tabId, since: store.startedAt, entries, dropped },
      whole: true,
    };
  },
});

function publicConsole(e: ConsoleEntry): Omit<ConsoleEntry, "doc"> {
  return { seq: e.seq, ts: e.ts, level: e.level, source: e.source, text: e.text, origin: e.origin };
}

export const networkTail = defineTool<TailArgs & { filter?: string; bodies?: boolean }>({
  name: "network_tail",
  group: "devtools",
  description: "Fetch/XHR responses since the load (own tabs) or first call; bodies: record text ones.",
  inputSchema: {
    type: "object",
    properties: {
      ...TAIL_PROPS,
      filter: { type: "string", maxLength: 500, doc: "only URLs containing this" },
      bodies: { type: "boolean", doc: "record text bodies from now until a call without it (slows the page)" },
    },
  },
  traits: TRAITS,
  async handler(a, ctx) {
    const { tabId, store, started, policy } = await open(ctx);
    // SECURITY I-65: the Network domain is on only while calls ask for bodies.
    if (a.bodies) await setBodies(tabId, true, ctx.deadline, ctx.signal);
    else void setBodies(tabId, false, ctx.deadline, ctx.signal).catch(() => undefined);
    // The top document's timeline is logged from the capture's first network_tail, whoever started it.
    if (!timed.has(store)) {
      timed.add(store);
      await startTimes(tabId, ctx);
    }
    if (started) {
      return startedText("network_tail", tabId, store.startedAt, `fetch/XHR responses${a.bodies ? " and their text bodies" : ""}`);
    }
    store.net.expireWaiting();
    // SECURITY I-77, I-79: the filter matches the URL as the agent is shown it (masked, foreign URLs
    // withheld), so it can never test a secret's characters or a withheld URL's.
    const m = a.filter ? await outbound.masker() : undefined;
    const judge = policyJudge(policy);
    const all = store.network.list().filter((e) => shown(e.doc, policy) && judgeUrl(policy, e.url).allowed && (!m || withholdForeignUrls(m.text(e.url), judge).includes(a.filter as string)));
    const chosen = pick(all, a);
    await fillTimes(tabId, chosen, ctx);
    if (a.bodies) {
      store.bodies?.flush();
      // A body still being read is waited for briefly, never past the call's deadline.
      const reads = chosen.map((e) => e.bodyReady).filter((p): p is Promise<void> => p !== undefined);
      if (reads.length) await withDeadline(Promise.all(reads), left(ctx.deadline, 2_000), "reading bodies", ctx.signal).catch(() => undefined);
    }
    let budget = RESULT_BODY_CAP;
    const entries = chosen.map((e) => {
      const out = publicNet(e);
      if (!a.bodies) {
        out.bodyOmitted = e.body !== undefined || e.bodyReady ? "not_asked" : (e.bodyOmitted ?? "not_kept");
        return out;
      }
      if (e.body !== undefined) {
        if (e.body.length <= budget) {
          budget -= e.body.length;
          out.body = e.body;
        } else out.bodyOmitted = "call_limit";
      } else out.bodyOmitted = e.bodyReady ? "busy" : (e.bodyOmitted ?? "not_kept");
      return out;
    });
    const dropped = store.droppedNetwork();
    // This call decided: recording runs from now on, or stops (what is waiting is still read).
    const recording = a.bodies ? "bodies recorded" : "bodies not recorded";
    const head = `network of tab ${tabId} since ${clock(store.startedAt)} UTC (${recording}): ${entries.length} shown of ${all.length} kept; dropped ${dropped.overflow} (over ${store.network.cap}), ${dropped.offList} (origin off the list or switched off), ${dropped.unfinished} (unfinished)`;
    const lines = entries.map((e) => {
      const body = e.body !== undefined ? `\n  body (${e.body.length} chars): ${e.body}` : e.bodyOmitted ? ` [body omitted: ${e.bodyOmitted}]` : "";
      return `#${e.seq} ${clock(e.ts)} ${e.method} ${e.url} → ${e.failed ? `failed (${e.failed})` : e.status} ${e.type || "-"} ${e.size ?? "?"} B${e.ms !== undefined ? ` ${e.ms} ms` : ""}${e.kind ? ` ${e.kind}` : ""}${body}`;
    });
    return {
      text: [head, ...lines].join("\n"),
      data: { tabId, since: store.startedAt, recordingBodies: a.bodies === true, entries, dropped, bodyCap: BODY_CAP },
      whole: true,
    };
  },
});

/** An entry as the agent gets it: without the document it came from; a body may also be left out for the call's own limit. */
type PublicNet = Omit<NetEntry, "doc" | "frameId" | "documentId" | "bodyOmitted" | "bodyReady" | "gone"> & { bodyOmitted?: BodyOmitted | "call_limit" };

function publicNet(e: NetEntry): PublicNet {
  return {
    seq: e.seq,
    ts: e.ts,
    method: e.method,
    url: e.url,
    status: e.status,
    type: e.type,
    ...(e.kind ? { kind: e.kind } : {}),
    ...(e.size !== undefined ? { size: e.size } : {}),
    ...(e.ms !== undefined ? { ms: e.ms } : {}),
    origin: e.origin,
    ...(e.failed ? { failed: e.failed } : {}),
  };
}
