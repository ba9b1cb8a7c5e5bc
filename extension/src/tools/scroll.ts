// Scrolling: scroll (to an element, by delta, to top/bottom; reports atBottom) and reveal (scroll a
// virtual list until an element matching a find predicate or a selector is rendered).

import type { RevealResult, ScrollResult } from "../page/types.js";
import { defineTool, MAX_TOOL_TIMEOUT_MS } from "./define.js";
import { toolError, type ToolError } from "./errors.js";
import { engine, resolveTab, resolveTarget } from "./browser.js";
import { act, ACTION_PROPS, S, type ActionArgs } from "./common.js";
import { isRef } from "../shared/refname.js";

export const scroll = defineTool<ActionArgs & { ref?: string; to?: "top" | "bottom"; dx?: number; dy?: number }>({
  name: "scroll",
  description: "Scroll the page or ref's container to the ref, by dx/dy px, or to top/bottom.",
  inputSchema: {
    type: "object",
    properties: {
      tabId: S.tabId,
      ref: S.ref,
      to: { type: "string", enum: ["top", "bottom"] },
      dx: { type: "number" },
      dy: { type: "number" },
      ...ACTION_PROPS,
    },
  },
  traits: { target: "tab", reads: "page", effects: [], switch: "none", dialog: "blocked", handoff: "refused" },
  // dx/dy scroll further each time.
  idempotent: false,
  async handler(a, ctx) {
    if (a.ref === undefined && a.to === undefined && a.dx === undefined && a.dy === undefined) {
      throw toolError("invalid_argument", "give ref, to, dx or dy");
    }
    const tabId = (await resolveTab(a.tabId)).id as number;
    return act(tabId, a, ctx, async () => {
      const r = await resolveTarget(tabId, { ...(a.ref !== undefined ? { ref: a.ref } : {}) }, false);
      const args: Record<string, unknown> = { ...r.args };
      if (a.to) args.to = a.to;
      if (a.dx !== undefined) args.dx = a.dx;
      if (a.dy !== undefined) args.dy = a.dy;
      const e = await engine<ScrollResult>(tabId, "scroll", args, { signal: ctx.signal, deadline: ctx.deadline, frameId: r.frameId, ...(r.docId ? { docId: r.docId } : {}) });
      const v = e.value;
      return {
        text: `scrolled ${v.container}: y=${Math.round(v.scrollY)}${v.atBottom ? " (at bottom)" : v.atTop ? " (at top)" : ""}`,
        data: { ...v },
      };
    });
  },
});

/** Room left after the page's search for the answer to come back and the result to be built. */
const REVEAL_MARGIN_MS = 5_000;
const REVEAL_BUDGET_MS = 40_000;

export const reveal = defineTool<ActionArgs & { role?: string; name?: string; text?: string; selector?: string; container?: string; maxScrolls?: number }>({
  name: "reveal",
  description: "Scroll a (virtual) list until role/name/text or selector is rendered; returns its line.",
  inputSchema: {
    type: "object",
    properties: {
      tabId: S.tabId,
      role: { type: "string", minLength: 1 },
      name: { type: "string", minLength: 1 },
      text: { type: "string", minLength: 1 },
      selector: { type: "string", minLength: 1, doc: "CSS selector of the target" },
      container: { type: "string", doc: "Scroller: ref or CSS selector" },
      maxScrolls: { type: "integer", minimum: 1, maximum: 2000, doc: "Scroll steps, default 1000; the search also stops in time for the call's deadline" },
      ...ACTION_PROPS,
    },
  },
  traits: { target: "tab", reads: "page", effects: [], switch: "none", dialog: "blocked", handoff: "refused" },
  timeoutMs: MAX_TOOL_TIMEOUT_MS,
  async handler(a, ctx) {
    if (a.selector !== undefined && (a.role !== undefined || a.name !== undefined || a.text !== undefined)) {
      throw toolError("invalid_argument", "give role/name/text or selector, not both", "Name the target one way: a CSS selector alone, or role/name/text.", { field: "selector" });
    }
    if (a.role === undefined && a.name === undefined && a.text === undefined && a.selector === undefined) {
      throw toolError("invalid_argument", "give role, name, text or selector", "Say what to reveal, e.g. text: \"Row 7777\" or selector: \"[data-id='42']\".");
    }
    const tabId = (await resolveTab(a.tabId)).id as number;
    return act(tabId, a, ctx, async () => {
      const args: Record<string, unknown> = {};
      for (const k of ["role", "name", "text", "selector", "container", "maxScrolls"] as const) if (a[k] !== undefined) args[k] = a[k];
      // SECURITY I-62: the page stops searching in time for its answer to arrive before the call's deadline.
      const budget = Math.min(REVEAL_BUDGET_MS, ctx.deadline - Date.now() - REVEAL_MARGIN_MS);
      if (budget < 500) throw toolError("timeout", "reveal: no time left to search before the call's deadline", "Call reveal again.");
      args.budgetMs = budget;
      let frameId = 0;
      let docId: string | undefined;
      // A ref names its frame and document; a selector is looked up in the top document.
      if (a.container !== undefined && isRef(a.container)) {
        const r = await resolveTarget(tabId, { ref: a.container });
        frameId = r.frameId;
        docId = r.docId;
      }
      const e = await engine<RevealResult>(tabId, "reveal", args, { signal: ctx.signal, deadline: ctx.deadline, ms: budget + REVEAL_MARGIN_MS - 1_000, frameId, ...(docId ? { docId } : {}) });
      const v = e.value;
      if (!v.matches?.length) throw notRevealed(v);
      const exact = v.matches.every((m) => m.exact);
      // The lines are the text; the fields say which ref each one is, so neither form repeats them.
      return {
        text: (exact ? "" : `no exact match; ${v.total} partial:\n`) + v.matches.map((m) => m.line).join("\n"),
        data: { total: v.total, matches: v.matches.map(({ line: _l, ...m }) => m), scrolls: v.scrolls, scrollY: v.scrollY, scrollHeight: v.scrollHeight },
      };
    });
  },
});

function px(n: number): string {
  return `${Math.round(n).toLocaleString("en-US")} px`;
}

/** What reveal did when nothing matched, precisely: where it searched, where it stopped, and why. */
function notRevealed(v: RevealResult): ToolError {
  const where = v.container === "page" ? "the page" : `the scroller ${v.container}`;
  const covered = v.searched.reduce((n, r) => n + (r.to - r.from), 0);
  const pct = v.scrollHeight > 0 ? Math.min(100, Math.floor((covered / v.scrollHeight) * 100)) : 100;
  const ranges = v.searched.map((r) => `${r.from}–${r.to}`).join(", ");
  const searched = `searched y=${ranges} of ${px(v.scrollHeight)} (${pct}%) of ${where}`;
  const secs = `${(v.ms / 1000).toFixed(1)} s`;
  const steps = `${v.scrolls} scroll${v.scrolls === 1 ? "" : "s"}${v.jumps ? ` (${v.jumps} jump${v.jumps === 1 ? "" : "s"} by row number)` : ""}`;
  switch (v.stop) {
    case "maxScrolls":
    case "time": {
      const cap = v.stop === "maxScrolls" ? "the maxScrolls cap" : "the time limit";
      return toolError(
        "not_found",
        `no match in ${steps} (${cap}): stopped at y=${v.scrollY} of ${v.scrollHeight} after ${secs}, before the end of the list; ${searched}`,
        v.stop === "maxScrolls"
          ? `Call reveal again: it goes on from y=${v.scrollY}. Or raise maxScrolls (up to 2000), or give a more precise text, selector or container.`
          : `Call reveal again: it goes on from y=${v.scrollY}. Or give a more precise text, selector or container.`,
      );
    }
    case "static":
      return toolError(
        "not_found",
        `no match: ${where} does not scroll (${px(v.scrollHeight)} tall, all of it in view), so nothing more can be rendered by scrolling`,
        "Give container (the list's scroller, a ref or CSS selector), or check the target with find or snapshot.",
      );
    default:
      return toolError(
        "not_found",
        `no match: ${searched} in ${steps}, ${secs}: the whole list, from its top to its end`,
        "The target is not in this list: check role/name/text with find or snapshot, or give container if the list is another scroller.",
      );
  }
}
