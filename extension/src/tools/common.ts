// Shared schema fragments and the act-and-look machinery every action uses: run the action, wait
// for a navigation it started, then the optional waitFor and observe, so one call acts and looks.

import { diffOutlines, paginate, stitchFrames } from "../page/outline.js";
import type { FramePlaceholder, ReadTextResult, SnapshotResult } from "../page/types.js";
import { atMost, left, withDeadline } from "../cdp/deadline.js";
import type { ToolContext, ToolOutput } from "./define.js";
import { asToolError, toolError, ToolError } from "./errors.js";
import type { JsonSchema } from "./schema.js";
import { isRef } from "../shared/refname.js";
import {
  awaitLoad,
  DialogRaised,
  dialogText,
  engine,
  lastSnapshots,
  resolveTab,
  resolveTarget,
  watchNav,
  type NavWatch,
} from "./browser.js";
import { assertLanding, stillLanded, type Landing } from "./origin.js";
import { getPolicy } from "./safety.js";
import { guardInput, type Leaving } from "./effects.js";

// ---------- schema fragments (terse: the whole catalogue is paid for on every turn) ----------

// Conventions the descriptions do not repeat (they are in the server's `instructions` and in
// docs/tools.md): tabId defaults to the session's last used tab; ref is from snapshot (b12);
// selector is CSS; waitFor and observe work the same on every action.

/**
 * The full schema of the waitFor argument; tools/list publishes a bare object (the instructions
 * say the rest: its fields on every action would add about a quarter to the catalogue).
 */
export const WAIT_FOR_SCHEMA: JsonSchema = {
  type: "object",
  properties: {
    selector: { type: "string", minLength: 1 },
    text: { type: "string", minLength: 1 },
    ref: { type: "string" },
    state: { type: "string", enum: ["appear", "disappear"] },
    timeoutMs: { type: "integer", minimum: 0, maximum: 30000 },
  },
  additionalProperties: false,
  wire: { type: "object", properties: {} },
};

export const S = {
  tabId: { type: "integer", minimum: 0 } as JsonSchema,
  ref: { type: "string" } as JsonSchema,
  selector: { type: "string", minLength: 1 } as JsonSchema,
  timeoutMs: (max: number): JsonSchema => ({ type: "integer", minimum: 0, maximum: max }),
  waitFor: WAIT_FOR_SCHEMA,
  /** tools/list publishes `{type: string}`; the instructions list the values once. */
  observe: { type: "string", enum: ["none", "snapshot", "diff", "text"], wire: { type: "string" } } as JsonSchema,
};

/** Properties every action takes. */
export const ACTION_PROPS = { waitFor: S.waitFor, observe: S.observe };

export interface WaitForArg {
  selector?: string;
  text?: string;
  ref?: string;
  state?: "appear" | "disappear";
  timeoutMs?: number;
}
export interface ActionArgs {
  tabId?: number;
  waitFor?: WaitForArg;
  observe?: "none" | "snapshot" | "diff" | "text";
}

export function requireTarget(a: { ref?: string; selector?: string }): void {
  if (a.ref === undefined && a.selector === undefined) throw toolError("invalid_argument", "give ref or selector");
  if (a.ref !== undefined && a.selector !== undefined) throw toolError("invalid_argument", "give ref or selector, not both");
}

// ---------- snapshot (worker side: stitch frames, diff, paginate) ----------

export interface SnapshotOpts {
  root?: string;
  interactive?: boolean;
  maxChars?: number;
  cursor?: string;
  diff?: boolean;
}

const DEFAULT_SNAPSHOT_CHARS = 40_000;
const MAX_FRAME_DEPTH = 4;
const MAX_FRAMES = 24;

async function frameOutline(
  tabId: number,
  frameId: number,
  args: Record<string, unknown>,
  ctx: ToolContext,
  depth: number,
  budget: { frames: number },
  docId?: string,
): Promise<{ text: string; res: SnapshotResult }> {
  const r = await engine<SnapshotResult>(tabId, "snapshot", args, { signal: ctx.signal, deadline: ctx.deadline, frameId, ...(docId ? { docId } : {}) });
  const res = r.value;
  if (!res.frames?.length || depth >= MAX_FRAME_DEPTH) return { text: unnamed(res.text, res.frames ?? [], new Set()), res };
  const children = new Map<number, string>();
  const read = new Set<number>();
  const ids = await childFrameIds(tabId, frameId, res.frames);
  // Sibling frames are asked together: each one's own checks (its frame's URL from the browser, its
  // document's report) overlap the others' instead of queueing behind them. The budget is taken in
  // page order before any is asked, so which frames are read does not depend on who answers first.
  const asked: Promise<void>[] = [];
  for (const f of res.frames) {
    const childId = ids.get(f.frame);
    if (childId === undefined || budget.frames <= 0) continue;
    budget.frames--;
    asked.push(
      frameOutline(tabId, childId, { interactive: args.interactive }, ctx, depth + 1, budget).then(
        (c) => {
          children.set(f.frame, c.text);
          read.add(f.frame);
        },
        (e: unknown) => {
          const te = asToolError(e);
          if (te.code === "cancelled" || te.code === "no_tab" || te.code === "dialog_blocking") throw te;
          children.set(f.frame, `note "frame not readable: ${te.code}"`);
        },
      ),
    );
  }
  await Promise.all(asked);
  return { text: stitchFrames(unnamed(res.text, res.frames, read), res.frames, children), res };
}

/**
 * SECURITY I-43: a frame that was not read is not named by its origin either (the placeholder's
 * "(origin)" comes from the embedding page's markup, but names a document the agent may not see).
 */
function unnamed(text: string, frames: readonly FramePlaceholder[], read: ReadonlySet<number>): string {
  const lines = text.split("\n");
  for (const f of frames) {
    const line = lines[f.line];
    if (read.has(f.frame) || !f.origin || line === undefined) continue;
    lines[f.line] = line.replace(` (${f.origin})`, "");
  }
  return lines.join("\n");
}

/**
 * The extension frameId of each cross-origin placeholder: the engine's own answer
 * (chrome.runtime.getFrameId) when it has one, else the parent's child frame with that URL
 * (or origin) from chrome.webNavigation, each child used once.
 */
async function childFrameIds(tabId: number, parentId: number, frames: readonly FramePlaceholder[]): Promise<Map<number, number>> {
  const out = new Map<number, number>();
  const missing = frames.filter((f) => f.frameId === undefined);
  for (const f of frames) if (f.frameId !== undefined) out.set(f.frame, f.frameId);
  if (missing.length === 0) return out;
  const all = (await withDeadline(chrome.webNavigation.getAllFrames({ tabId }), 5_000, "getAllFrames").catch(() => null)) ?? [];
  const used = new Set(out.values());
  const kids = all.filter((k) => k.parentFrameId === parentId && !used.has(k.frameId));
  for (const f of missing) {
    const pick =
      kids.find((k) => !used.has(k.frameId) && k.url === f.src) ??
      kids.find((k) => !used.has(k.frameId) && f.origin !== "" && k.url.startsWith(f.origin + "/"));
    if (!pick) continue;
    used.add(pick.frameId);
    out.set(f.frame, pick.frameId);
  }
  return out;
}

export async function takeSnapshot(tabId: number, o: SnapshotOpts, ctx: ToolContext): Promise<ToolOutput> {
  const maxChars = o.maxChars ?? DEFAULT_SNAPSHOT_CHARS;
  if (o.cursor !== undefined) {
    const m = /^([a-z0-9]+):([0-9]+)$/.exec(o.cursor);
    const kept = lastSnapshots.get(tabId);
    if (!m || !kept || kept.id !== m[1]) {
      throw toolError("invalid_argument", "cursor: expired or unknown", "Take a new snapshot (the cursor belongs to the latest one).");
    }
    const page = paginate(kept.lines, Number(m[2]), maxChars);
    const nextCursor = page.next !== undefined ? `${kept.id}:${page.next}` : undefined;
    return {
      text: page.text + (nextCursor ? `\n[more: cursor=${nextCursor}]` : ""),
      data: { tabId, docId: kept.docId, ...(nextCursor ? { nextCursor } : {}) },
    };
  }
  const t0 = Date.now();
  let frameId = 0;
  let docId: string | undefined;
  const args: Record<string, unknown> = {};
  if (o.interactive) args.interactive = true;
  if (o.root !== undefined) {
    if (isRef(o.root)) {
      const r = await resolveTarget(tabId, { ref: o.root });
      frameId = r.frameId;
      docId = r.docId;
    }
    args.root = o.root;
  }
  const { text, res } = await frameOutline(tabId, frameId, args, ctx, 0, { frames: MAX_FRAMES }, docId);
  const lines = text.split("\n");
  const key = `${frameId}|${o.root ?? ""}|${o.interactive ? 1 : 0}`;
  const prev = lastSnapshots.get(tabId);
  const id = Math.random().toString(36).slice(2, 8);
  lastSnapshots.set(tabId, { id, key, docId: res.docId, lines });
  const header = `tab ${tabId} · ${res.title || "(untitled)"} · ${res.url}`;
  const data: Record<string, unknown> = { tabId, url: res.url, title: res.title, docId: res.docId };
  if (o.diff) {
    if (prev && prev.key === key && prev.docId === res.docId) {
      const d = diffOutlines(prev.lines, lines);
      data.diff = { added: d.added, removed: d.removed };
      const body = d.lines.length ? paginate(d.lines, 0, maxChars).text : "(no changes)";
      return { text: `${header}\ndiff: +${d.added} -${d.removed}\n${body}`, data };
    }
    data.note = "no previous snapshot of this document: full snapshot";
  }
  const page = paginate(lines, 0, maxChars);
  const nextCursor = page.next !== undefined ? `${id}:${page.next}` : undefined;
  if (nextCursor) data.nextCursor = nextCursor;
  data.stats = { lines: lines.length, chars: text.length, ms: Date.now() - t0 };
  return {
    text: `${header}${data.note ? `\n(${String(data.note)})` : ""}\n${page.text}${nextCursor ? `\n[more: cursor=${nextCursor}]` : ""}`,
    data,
  };
}

export async function readText(tabId: number, a: { root?: string; offset?: number; maxChars?: number }, ctx: ToolContext): Promise<ToolOutput> {
  let frameId = 0;
  let docId: string | undefined;
  if (a.root !== undefined && isRef(a.root)) {
    const r = await resolveTarget(tabId, { ref: a.root });
    frameId = r.frameId;
    docId = r.docId;
  }
  const r = await engine<ReadTextResult>(tabId, "readText", { ...a }, { signal: ctx.signal, deadline: ctx.deadline, frameId, ...(docId ? { docId } : {}) });
  const v = r.value;
  const more = v.nextOffset !== undefined ? `\n[more: offset=${v.nextOffset} of ${v.total}]` : "";
  return { text: v.text + more, data: { tabId, offset: v.offset, total: v.total, ...(v.nextOffset !== undefined ? { nextOffset: v.nextOffset } : {}) } };
}

// ---------- waitFor ----------

export async function waitForCond(tabId: number, w: WaitForArg, ctx: ToolContext): Promise<Record<string, unknown>> {
  const conds = [w.selector, w.text, w.ref].filter((x) => x !== undefined).length;
  if (conds !== 1) throw toolError("invalid_argument", "waitFor: give exactly one of selector, text, ref");
  const timeoutMs = Math.min(w.timeoutMs ?? 5_000, 30_000, left(ctx.deadline));
  let frameId = 0;
  let docId: string | undefined;
  if (w.ref !== undefined) {
    const r = await resolveTarget(tabId, { ref: w.ref });
    frameId = r.frameId;
    docId = r.docId;
  }
  const r = await engine<Record<string, unknown>>(
    tabId,
    "waitFor",
    { ...w, timeoutMs },
    { signal: ctx.signal, deadline: ctx.deadline, ms: timeoutMs + 3_000, frameId, ...(docId ? { docId } : {}) },
  );
  return r.value && typeof r.value === "object" ? r.value : { found: Boolean(r.value) };
}

// ---------- act and look ----------

/**
 * Runs one action on a tab: `fn` does it; then a navigation it started is awaited, then the
 * optional waitFor and observe are appended. A dialog raised by the action ends the call with
 * `dialog` in the result (the agent calls handle_dialog next). `oneCall`: the action's input is
 * one engine call made with actEngine (guardInput).
 */
export async function act(
  tabId: number,
  a: ActionArgs,
  ctx: ToolContext,
  fn: () => Promise<{ text: string; data?: Record<string, unknown>; landed?: Landing }>,
  o: { oneCall?: boolean } = {},
): Promise<ToolOutput> {
  const watch: NavWatch = watchNav(tabId);
  let out: { text: string; data?: Record<string, unknown>; landed?: Landing };
  // Whether the action started a navigation of the tab, as the armed top document says ("unknown"
  // without the guard, or when it could not answer); the browser reporting a start settles it.
  let leaving: Leaving = "unknown";
  try {
    // SECURITY I-36: the tab is armed while an input action runs; a frame's block fails the call.
    const g = ctx.gate?.guard;
    if (g) {
      const r = await guardInput(
        tabId,
        { policy: await getPolicy(), approved: g.approved, allowPassword: ctx.gate?.allowPassword === true, expires: ctx.deadline, ...o },
        fn,
      );
      out = r.out;
      leaving = watch.started() ? "left" : r.leaving;
    } else {
      out = await fn();
    }
  } catch (e) {
    watch.stop();
    // The page navigated away while the action ran (its target went with the old document):
    // say so rather than "not found".
    if (e instanceof ToolError && (e.code === "not_found" || e.code === "stale_ref") && watch.committed()) {
      throw toolError("navigation_failed", `the page navigated during the action; ${e.message}`);
    }
    if (e instanceof DialogRaised) {
      return {
        text: `${dialogText(e.dialog)} opened\n${e.dialog.foreign ? "Only the person can answer it: call handoff." : "Call handle_dialog to accept or dismiss it."}`,
        data: { tabId, ok: true, dialog: e.dialog },
      };
    }
    throw e;
  }
  // No download of this call's is still to come from its tab when the armed top document stayed
  // put, or when the navigation it made loaded a document (one that turns into a download never
  // does): the download guard need not wait for one (downloads.ts).
  if (ctx.gate) ctx.gate.noDownload = leaving === "stayed" || (out.landed !== undefined && out.data?.loaded !== false);
  const data: Record<string, unknown> = { tabId, ok: true, ...(out.data ?? {}) };
  const parts = [out.text];
  let navigated: { loaded: boolean } | undefined;
  // The tab as seen once the action and any load it started are over, when nothing came after.
  let seen: chrome.tabs.Tab | undefined;
  const looking = a.waitFor !== undefined || (a.observe !== undefined && a.observe !== "none");
  try {
    // A navigating action (navigate, history, reload) waited for its own load and judged where it
    // landed: while no top frame has had an event since, the look is of that page, at once.
    if (looking && !stillLanded(out.landed)) {
      // A navigation the page started takes a moment to reach the browser: when the page said one
      // began, wait (bounded) until the browser reports it; when it cannot tell, give it a moment
      // to; when it said none began, look at once.
      if (leaving !== "stayed") await atMost(watch.moved, leaving === "left" ? 1_000 : 40, ctx.signal);
      const tab = await resolveTab(tabId);
      seen = tab;
      // A navigation the action caused counts even when it also finished before this look (a tiny
      // page, a slow worker): the look is of the page it landed on, and the result says so.
      // A navigating action (navigate, history) reports its own landing instead, having waited for
      // its load within the agent's timeoutMs: the look is of the page as it is now.
      if (!out.landed && (watch.left() || (watch.committed() && !watch.finished()) || tab.status === "loading")) {
        seen = undefined;
        const l = await awaitLoad(watch, left(ctx.deadline, 15_000), ctx.signal);
        data.navigated = true;
        if (!l.loaded) data.loaded = false;
        navigated = { loaded: l.loaded };
      }
    } else if (!out.landed && watch.committed() && !watch.finished()) {
      // A navigation the action started: let it land so its origin can be checked (a navigating
      // action judged its own landing after waiting its own timeoutMs; it does not wait twice).
      await awaitLoad(watch, left(ctx.deadline, 10_000), ctx.signal).catch(() => undefined);
    }
  } finally {
    watch.stop();
  }
  // SECURITY I-15: an action that left the tab on a page off the allowlist (a redirect, a link)
  // fails here, and nothing of that page is read. SECURITY I-43: the page is named only after
  // that, by the URL just judged. A landing the action judged itself after its load (navigate)
  // stands while no top frame has had an event since.
  const landed = stillLanded(out.landed) ? out.landed : await assertLanding(tabId, seen && !watch.started() ? seen : undefined);
  if (navigated) parts.push(`navigated to ${landed.url}${navigated.loaded ? "" : " (still loading)"}`);
  try {
    if (a.waitFor) {
      const wf = a.waitFor;
      const w = await afterNavigation(tabId, ctx, () => waitForCond(tabId, wf, ctx));
      data.waitFor = w;
      parts.push(`waitFor: ${w.found === false ? "not found (timed out)" : "ok"}`);
    }
    if (a.observe && a.observe !== "none") {
      const obs = await observe(tabId, a.observe, ctx);
      data.observation = obs.data;
      parts.push(obs.text);
    }
  } catch (e) {
    if (e instanceof DialogRaised) {
      data.dialog = e.dialog;
      parts.push(`${dialogText(e.dialog)} opened — ${e.dialog.foreign ? "only the person can answer it (handoff)" : "call handle_dialog"}`);
    } else if (e instanceof ToolError && e.code === "dialog_blocking") {
      data.dialog = e.data?.dialog;
      parts.push(`${e.message} — ${(e.data?.dialog as { foreign?: boolean } | undefined)?.foreign ? "only the person can answer it (handoff)" : "call handle_dialog"}`);
    } else {
      // The action itself succeeded; say what failed afterwards rather than hiding the success.
      const te = asToolError(e);
      data.observeError = { code: te.code, message: te.message };
      parts.push(`(action done; observe failed: ${te.code}: ${te.message})`);
    }
  }
  return { text: parts.join("\n"), data };
}

async function observe(tabId: number, mode: "snapshot" | "diff" | "text", ctx: ToolContext): Promise<ToolOutput> {
  return afterNavigation(tabId, ctx, () =>
    mode === "text" ? readText(tabId, { maxChars: 4_000 }, ctx) : takeSnapshot(tabId, { diff: mode === "diff", maxChars: 20_000 }, ctx),
  );
}

/**
 * Runs a look (waitFor, observe) after an action. A navigation the action started late (e.g. a
 * button that navigates after a timer) interrupts it with navigation_failed: wait for the new
 * document's load (300 ms at most: its commit may have come before the watch) and look there, a
 * few times at most.
 */
async function afterNavigation<T>(tabId: number, ctx: ToolContext, run: () => Promise<T>): Promise<T> {
  for (let attempt = 0; ; attempt++) {
    const nav = watchNav(tabId);
    try {
      return await run();
    } catch (e) {
      if (!(e instanceof ToolError && e.code === "navigation_failed") || attempt >= 3 || left(ctx.deadline) < 1_000) throw e;
      await atMost(nav.done.catch(() => undefined), 300, ctx.signal);
    } finally {
      nav.stop();
    }
  }
}
