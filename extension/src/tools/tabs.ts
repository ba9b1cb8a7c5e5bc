// Tabs: list them, close one.

import { dialogOf } from "../cdp/debugger.js";
import { withDeadline } from "../cdp/deadline.js";
import { defineTool } from "./define.js";
import { toolError, ToolError } from "./errors.js";
import { dialogText, resolveTab } from "./browser.js";
import { getPolicy } from "./safety.js";
import { isOpaqueBlank, visibleTab } from "./origin.js";
import { isAgentTab, ownedOnly } from "./ownership/check.js";
import { closeAgentTab } from "./ownership/close.js";
import { CLOSE_MS, removeAndWatch, type CloseOutcome } from "./tabclose.js";
import { allTabs } from "./tabmodel.js";

export const tabs = defineTool<Record<string, never>>({
  name: "tabs",
  description: "Your tabs: id, title, URL, active, dialog.",
  inputSchema: { type: "object", properties: {} },
  traits: { target: "none", reads: "tabs", effects: [], switch: "none", dialog: "ignores", handoff: "allowed" },
  async handler(_a, ctx) {
    // SECURITY I-24: only the session's own and granted tabs; the rest are not even counted.
    const [{ tabs: everyTab, focused }, policy] = await Promise.all([allTabs(() => withDeadline(chrome.tabs.query({}), 5_000, "tabs.query")), getPolicy()]);
    const all = ownedOnly(everyTab, ctx.gate?.owner);
    // SECURITY I-14/I-42: tabs on origins off the allowlist are listed by id only (no title, no
    // URL). Each tab is judged from the same view its title and URL come from (a blank one from its
    // document's own report); a tab that cannot be told is listed as blocked.
    const shown = await Promise.all(all.map((t) => visibleTab(t, policy).catch(() => undefined)));
    // A blocked tab that is only a blank page (a new tab, history back to its start) says so.
    const blank = await Promise.all(all.map((t, i) => (shown[i] ? false : isOpaqueBlank(t).catch(() => false))));
    const list = all.map((t, i) => {
      const v = shown[i];
      const d = t.id !== undefined ? dialogOf(t.id) : undefined;
      if (t.id !== undefined && !v && blank[i]) {
        return { tabId: t.id, windowId: t.windowId, active: t.active, blank: true, title: "", url: "about:blank", status: t.status };
      }
      if (t.id === undefined || !v) {
        return { tabId: t.id, windowId: t.windowId, active: t.active, blocked: true, title: "", url: "", status: t.status };
      }
      return {
        tabId: t.id,
        windowId: t.windowId,
        active: t.active,
        ...(t.id === focused ? { focused: true } : {}),
        title: v.title,
        url: v.url,
        status: t.status,
        ...(d ? { dialog: d } : {}),
      };
    });
    const text = list
      .map((t) =>
        "blocked" in t
          ? `[${t.tabId}] (origin not on the allowlist)`
          : "blank" in t
          ? `[${t.tabId}] about:blank (blank page)`
          : `[${t.tabId}]${t.focused ? " *" : t.active ? " +" : ""} ${t.title || "(untitled)"} — ${t.url}${t.dialog ? ` (${t.dialog.type} dialog open)` : ""}`,
      )
      .join("\n");
    return { text: text || "(no tabs)", data: { tabs: list }, whole: true };
  },
});

export const closeTab = defineTool<{ tabId: number }>({
  name: "close_tab",
  description: "Close a tab.",
  inputSchema: { type: "object", properties: { tabId: { type: "integer", minimum: 0 } }, required: ["tabId"] },
  // "page": a close the page holds returns its dialog's text.
  traits: { target: "tab", reads: "page", effects: ["close"], switch: "act", dialog: "ignores", handoff: "refused" },
  async handler(a, ctx) {
    const tabId = (await resolveTab(a.tabId)).id as number;
    let out: CloseOutcome;
    try {
      // An agent tab closes without a beforeunload prompt in front of the person, unless the
      // person looked at it (SECURITY I-46): then the page may still hold the close.
      out = isAgentTab(tabId) ? await closeAgentTab(tabId, ctx.signal) : await removeAndWatch(tabId, ctx.signal);
    } catch (e) {
      if (e instanceof ToolError && e.code === "cancelled") throw e;
      throw toolError("no_tab", e instanceof Error ? e.message : String(e));
    }
    if ("removed" in out) return { text: `closed tab ${tabId}`, data: { tabId, closed: true } };
    if ("dialog" in out) {
      // The tab stays the session's until Chrome removes it: handle_dialog answers the prompt.
      const d = out.dialog;
      return {
        text: `${dialogText(d)} opened; the tab is still open\n${d.foreign ? "Only the person can answer it: call handoff." : "Call handle_dialog: accept closes the tab, dismiss keeps it open."}`,
        data: { tabId, ok: true, closed: false, dialog: d },
      };
    }
    throw toolError("timeout", `tab ${tabId} did not close within ${CLOSE_MS / 1000}s`, "Call tabs to see whether it is still open.");
  },
});
