// Waiting: wait_for (appear/disappear, ≤ 30 s; found:false is a result, not an error) and settle.

import { defineTool } from "./define.js";
import { engine, resolveTab } from "./browser.js";
import { waitForCond, type WaitForArg } from "./common.js";

export const waitFor = defineTool<WaitForArg & { tabId?: number }>({
  name: "wait_for",
  description: "Wait for a selector, text or ref to appear or disappear; found:false on timeout.",
  inputSchema: {
    type: "object",
    properties: {
      tabId: { type: "integer", minimum: 0 },
      selector: { type: "string", minLength: 1 },
      text: { type: "string", minLength: 1 },
      ref: { type: "string" },
      state: { type: "string", enum: ["appear", "disappear"] },
      timeoutMs: { type: "integer", minimum: 0, maximum: 30000, doc: "Default 5000" },
    },
  },
  traits: { target: "tab", reads: "page", effects: [], switch: "none", dialog: "blocked", handoff: "refused" },
  timeoutMs: 40_000,
  async handler(a, ctx) {
    const tabId = (await resolveTab(a.tabId)).id as number;
    const { tabId: _t, ...w } = a;
    void _t;
    const v = await waitForCond(tabId, w, ctx);
    const found = v.found !== false;
    return { text: found ? `ok: ${w.state ?? "appear"}ed` : `not ${w.state === "disappear" ? "gone" : "found"} within the timeout`, data: { tabId, ...v, found }, whole: true };
  },
});

export const settle = defineTool<{ tabId?: number; quietMs?: number; timeoutMs?: number }>({
  name: "settle",
  description: "Wait until the DOM is quiet for quietMs (default 500).",
  inputSchema: {
    type: "object",
    properties: {
      tabId: { type: "integer", minimum: 0 },
      quietMs: { type: "integer", minimum: 50, maximum: 10000 },
      timeoutMs: { type: "integer", minimum: 0, maximum: 30000 },
    },
  },
  traits: { target: "tab", reads: "page", effects: [], switch: "none", dialog: "blocked", handoff: "refused" },
  timeoutMs: 40_000,
  async handler(a, ctx) {
    const tabId = (await resolveTab(a.tabId)).id as number;
    const timeoutMs = a.timeoutMs ?? 5_000;
    const r = await engine<Record<string, unknown>>(
      tabId,
      "settle",
      { quietMs: a.quietMs ?? 500, timeoutMs },
      { signal: ctx.signal, deadline: ctx.deadline, ms: timeoutMs + 3_000 },
    );
    const v = r.value && typeof r.value === "object" ? r.value : {};
    const quiet = v.settled !== false && v.quiet !== false;
    return { text: quiet ? "settled" : "still changing at timeout", data: { tabId, ...v }, whole: true };
  },
});
