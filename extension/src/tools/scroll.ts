// Scrolling: scroll (to an element, by delta, to top/bottom; reports atBottom) and reveal (scroll a
// virtual list until an element matching a find-predicate exists).

import type { RevealResult, ScrollResult } from "../page/types.js";
import { defineTool } from "./define.js";
import { toolError } from "./errors.js";
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

export const reveal = defineTool<ActionArgs & { role?: string; name?: string; text?: string; container?: string; maxScrolls?: number }>({
  name: "reveal",
  description: "Scroll a virtual list until role/name/text matches; returns its line.",
  inputSchema: {
    type: "object",
    properties: {
      tabId: S.tabId,
      role: { type: "string", minLength: 1 },
      name: { type: "string", minLength: 1 },
      text: { type: "string", minLength: 1 },
      container: { type: "string", doc: "Scroller: ref or CSS selector" },
      maxScrolls: { type: "integer", minimum: 1, maximum: 500 },
      ...ACTION_PROPS,
    },
  },
  traits: { target: "tab", reads: "page", effects: [], switch: "none", dialog: "blocked", handoff: "refused" },
  timeoutMs: 60_000,
  async handler(a, ctx) {
    if (a.role === undefined && a.name === undefined && a.text === undefined) throw toolError("invalid_argument", "give role, name or text");
    const tabId = (await resolveTab(a.tabId)).id as number;
    return act(tabId, a, ctx, async () => {
      const args: Record<string, unknown> = {};
      for (const k of ["role", "name", "text", "container", "maxScrolls"] as const) if (a[k] !== undefined) args[k] = a[k];
      let frameId = 0;
      let docId: string | undefined;
      // A ref names its frame and document; a selector is looked up in the top document.
      if (a.container !== undefined && isRef(a.container)) {
        const r = await resolveTarget(tabId, { ref: a.container });
        frameId = r.frameId;
        docId = r.docId;
      }
      const e = await engine<RevealResult>(tabId, "reveal", args, { signal: ctx.signal, deadline: ctx.deadline, ms: 45_000, frameId, ...(docId ? { docId } : {}) });
      const v = e.value;
      if (!v.matches?.length) {
        if (v.capped) {
          throw toolError(
            "not_found",
            `no match in ${v.scrolls} scrolls (the maxScrolls cap): stopped at y=${v.scrollY} of ${v.scrollHeight}, before the end of the list`,
            "Call reveal again with a larger maxScrolls, or narrow the match.",
          );
        }
        throw toolError("not_found", "no match after scrolling the list to its end");
      }
      // The lines are the text; the fields say which ref each one is, so neither form repeats them.
      return { text: v.matches.map((m) => m.line).join("\n"), data: { total: v.total, matches: v.matches.map(({ line: _l, ...m }) => m) } };
    });
  },
});
