// frames: the tab's frame inventory, each frame by the origin its own document reports (self.origin
// in the isolated world, which the page cannot redefine), with whether the agent may read it. A
// frame off the allowlist is listed by id only: neither its origin, URL nor title (SECURITY I-43,
// I-68). The document reports are also what cookies and storage use to pick the frame they read.

import type { Policy } from "../policy/policy.js";
import { originOf } from "../policy/pattern.js";
import { left, withDeadline } from "../cdp/deadline.js";
import { defineTool } from "./define.js";
import { toolError } from "./errors.js";
import { checkNoDialog, resolveTab } from "./browser.js";
import { S } from "./common.js";
import { docAllowed } from "./origin.js";
import { getPolicy } from "./safety.js";

const MAX_FRAMES = 64;

/** What one frame's document says of itself. */
export interface FrameReport {
  frameId: number;
  documentId?: string;
  origin: string;
  url: string;
  title: string;
}

// Runs in the frame's isolated world: self-contained, out of the page's reach.
function selfReport(): { origin: string; url: string; title: string } {
  return { origin: self.origin, url: location.href, title: document.title };
}

function asReport(r: chrome.scripting.InjectionResult<unknown>): FrameReport | undefined {
  const v = r.result as { origin?: unknown; url?: unknown; title?: unknown } | null | undefined;
  if (!v || typeof v.origin !== "string" || typeof v.url !== "string") return undefined;
  return { frameId: r.frameId, ...(r.documentId ? { documentId: r.documentId } : {}), origin: v.origin, url: v.url, title: typeof v.title === "string" ? v.title : "" };
}

/** Every frame's own report; a frame that does not answer is missing. */
async function reportFrames(tabId: number, ms: number): Promise<FrameReport[]> {
  const res = await withDeadline(chrome.scripting.executeScript({ target: { tabId, allFrames: true }, world: "ISOLATED", func: selfReport }), ms, "frame reports").catch(() => null);
  if (!res) throw toolError("navigation_failed", `the frames of tab ${tabId} did not answer; nothing was read`);
  return res.map(asReport).filter((r): r is FrameReport => r !== undefined);
}

/** One frame's own report, or undefined when it does not answer (gone, not scriptable). */
export async function reportFrame(tabId: number, frameId: number, ms: number): Promise<FrameReport | undefined> {
  const res = await withDeadline(chrome.scripting.executeScript({ target: { tabId, frameIds: [frameId] }, world: "ISOLATED", func: selfReport }), ms, "frame report").catch(() => null);
  const r = res?.[0];
  return r ? asReport(r) : undefined;
}

export interface FrameEntry {
  frameId: number;
  parentFrameId: number;
  readable: boolean;
  /** Only for a readable frame: its place relative to the top document. */
  kind?: "main" | "same-origin" | "cross-origin";
  origin?: string;
  url?: string;
  title?: string;
  /** Only for a frame that is not readable: why, without naming it. */
  reason?: "origin_not_allowed" | "no_answer";
}

/**
 * The inventory from the browser's frame tree and each document's report. SECURITY I-43, I-68: a
 * frame is named only when its own report is on the list; one that is off it, opaque, or did not
 * answer is listed by id alone.
 */
export function inventory(p: Policy, tree: readonly { frameId: number; parentFrameId: number }[], reports: readonly FrameReport[]): FrameEntry[] {
  const byId = new Map(reports.map((r) => [r.frameId, r]));
  const top = byId.get(0);
  const topOrigin = top && docAllowed(p, top.origin, top.url) ? top.origin : undefined;
  const out: FrameEntry[] = [];
  for (const f of [...tree].sort((a, b) => (a.frameId === 0 ? -1 : b.frameId === 0 ? 1 : a.frameId - b.frameId))) {
    const r = byId.get(f.frameId);
    const base = { frameId: f.frameId, parentFrameId: f.parentFrameId };
    if (!r) {
      out.push({ ...base, readable: false, reason: "no_answer" });
      continue;
    }
    if (!docAllowed(p, r.origin, r.url)) {
      out.push({ ...base, readable: false, reason: "origin_not_allowed" });
      continue;
    }
    const kind = f.frameId === 0 ? "main" : r.origin === topOrigin ? "same-origin" : "cross-origin";
    // A blank or srcdoc document is named by its origin, not by a URL of another document.
    const url = originOf(r.url) === r.origin ? r.url : `${r.origin}/`;
    out.push({ ...base, readable: true, kind, origin: r.origin, url, title: r.title.slice(0, 200) });
  }
  return out;
}

function line(f: FrameEntry): string {
  const where = f.frameId === 0 ? `frame 0` : `frame ${f.frameId} (in ${f.parentFrameId})`;
  if (!f.readable) return `${where}: not readable (${f.reason === "no_answer" ? "did not answer" : "origin not on the allowlist"})`;
  return `${where}: ${f.kind} ${f.url}${f.title ? ` "${f.title}"` : ""}`;
}

export const frames = defineTool<{ tabId?: number }>({
  name: "frames",
  group: "devtools",
  description: "The tab's frames, each with its own origin and whether you may read it.",
  inputSchema: { type: "object", properties: { tabId: S.tabId } },
  traits: { target: "tab", reads: "page", effects: [], switch: "none", dialog: "blocked", handoff: "refused" },
  async handler(a, ctx) {
    const tabId = (await resolveTab(a.tabId)).id as number;
    checkNoDialog(tabId);
    const [tree, reports] = await Promise.all([
      withDeadline(chrome.webNavigation.getAllFrames({ tabId }), left(ctx.deadline, 5_000), "getAllFrames", ctx.signal),
      reportFrames(tabId, left(ctx.deadline, 5_000)),
    ]);
    const p = await getPolicy();
    const list = inventory(p, (tree ?? []).map((f) => ({ frameId: f.frameId, parentFrameId: f.parentFrameId })), reports);
    // SECURITY I-15: the top document itself must still be on the list, by its own report.
    if (list[0]?.frameId !== 0 || !list[0].readable) throw toolError("origin_not_allowed", `the page in tab ${tabId} is not on the person's allowlist; nothing was read`);
    const shown = list.slice(0, MAX_FRAMES);
    const more = list.length - shown.length;
    return {
      text: [`tab ${tabId}: ${list.length} frame${list.length === 1 ? "" : "s"}`, ...shown.map(line), ...(more > 0 ? [`(${more} more not listed)`] : [])].join("\n"),
      data: { tabId, frames: shown, ...(more > 0 ? { more } : {}) },
      whole: true,
    };
  },
});
