// Perception: snapshot, find, read_text, get_state. All read-only; all through the page engine.

import type { ElementState, FindResult } from "../page/types.js";
import { defineTool } from "./define.js";
import { callTab, engine, resolveTarget } from "./browser.js";
import { readText, requireTarget, S, takeSnapshot, type SnapshotOpts } from "./common.js";
import { toolError } from "./errors.js";

export const snapshot = defineTool<SnapshotOpts & { tabId?: number }>({
  name: "snapshot",
  description: "Accessibility outline with refs, incl. shadow DOM and iframes; diff: only changes.",
  inputSchema: {
    type: "object",
    properties: {
      tabId: S.tabId,
      root: { type: "string", doc: "Subtree: ref or CSS selector" },
      interactive: { type: "boolean", doc: "Only elements with refs (+ headings)" },
      diff: { type: "boolean" },
      maxChars: { type: "integer", minimum: 500, maximum: 200000 },
      cursor: { type: "string", doc: "From a previous result: next page" },
    },
  },
  traits: { target: "tab", reads: "page", effects: [], switch: "none", dialog: "blocked", handoff: "refused" },
  async handler(a, ctx) {
    const tabId = await callTab(a.tabId, ctx);
    return takeSnapshot(tabId, a, ctx);
  },
});

export const find = defineTool<{ tabId?: number; role?: string; name?: string; text?: string; limit?: number; root?: string }>({
  name: "find",
  description: "Find elements by role, name or text, exact first; one line and ref per match.",
  inputSchema: {
    type: "object",
    properties: {
      tabId: S.tabId,
      role: { type: "string", minLength: 1 },
      name: { type: "string", minLength: 1 },
      text: { type: "string", minLength: 1 },
      limit: { type: "integer", minimum: 1, maximum: 200 },
      root: { type: "string", doc: "ref or CSS selector" },
    },
  },
  traits: { target: "tab", reads: "page", effects: [], switch: "none", dialog: "blocked", handoff: "refused" },
  async handler(a, ctx) {
    const tabId = await callTab(a.tabId, ctx);
    const { tabId: _t, ...args } = a;
    void _t;
    const r = await engine<FindResult>(tabId, "find", { limit: 20, ...args }, { signal: ctx.signal, deadline: ctx.deadline });
    const v = r.value;
    const lines = v.matches.map((m) => m.line);
    const text = lines.length ? `${v.total} match${v.total === 1 ? "" : "es"}${v.total > lines.length ? ` (first ${lines.length})` : ""}\n${lines.join("\n")}` : "no match";
    return { text, data: { tabId, total: v.total, matches: v.matches }, whole: true };
  },
});

export const readTextTool = defineTool<{ tabId?: number; root?: string; offset?: number; maxChars?: number }>({
  name: "read_text",
  description: "Visible text of the page or root, paged by offset/maxChars.",
  inputSchema: {
    type: "object",
    properties: {
      tabId: S.tabId,
      root: { type: "string", doc: "ref or CSS selector" },
      offset: { type: "integer", minimum: 0 },
      maxChars: { type: "integer", minimum: 100, maximum: 200000 },
    },
  },
  traits: { target: "tab", reads: "page", effects: [], switch: "none", dialog: "blocked", handoff: "refused" },
  async handler(a, ctx) {
    const tabId = await callTab(a.tabId, ctx);
    const { tabId: _t, ...args } = a;
    void _t;
    return readText(tabId, { maxChars: 20_000, ...args }, ctx);
  },
});

export const getState = defineTool<{ tabId?: number; ref?: string; selector?: string }>({
  name: "get_state",
  description: "Element state (visible, enabled, checked, focused, box), never its value.",
  inputSchema: { type: "object", properties: { tabId: S.tabId, ref: S.ref, selector: S.selector } },
  traits: { target: "tab", reads: "page", effects: [], switch: "none", dialog: "blocked", handoff: "refused" },
  async handler(a, ctx) {
    requireTarget(a);
    const tabId = await callTab(a.tabId, ctx);
    const t = await resolveTarget(tabId, a);
    const r = await engine<ElementState>(tabId, "getState", t.args, { signal: ctx.signal, deadline: ctx.deadline, frameId: t.frameId, ...(t.docId ? { docId: t.docId } : {}) });
    const s = r.value;
    // Nothing matched is a failure, typed as every other tool types it.
    if (!s.exists) throw toolError("not_found", a.ref ? `ref ${a.ref} matches no element` : `no element matches ${a.selector ?? ""}`);
    const flags = [
      s.exists ? "exists" : "missing",
      s.visible ? "visible" : "hidden",
      s.enabled ? "enabled" : "disabled",
      s.checked !== undefined ? `checked=${String(s.checked)}` : "",
      s.focused ? "focused" : "",
      s.inViewport ? "in viewport" : "off screen",
      s.editable ? "editable" : "",
    ].filter(Boolean);
    const box = s.box ? ` box=${s.box.x},${s.box.y} ${s.box.w}x${s.box.h}` : "";
    return { text: `${s.role || s.tag || "element"} "${s.name ?? ""}"${s.ref ? ` [${s.ref}]` : ""}: ${flags.join(", ")}${box}`, data: { tabId, ...s }, whole: true };
  },
});
