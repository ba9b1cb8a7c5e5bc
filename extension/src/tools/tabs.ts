// Tabs: list them, close one.

import { dialogOf } from "../cdp/debugger.js";
import { withDeadline } from "../cdp/deadline.js";
import { defineTool } from "./define.js";
import { toolError } from "./errors.js";
import { resolveTab } from "./browser.js";
import { getPolicy } from "./safety.js";
import { visibleTab } from "./origin.js";
import { closeAgentTab, isAgentTab, ownedOnly } from "./ownership.js";
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
    const list = all.map((t, i) => {
      const v = shown[i];
      const d = t.id !== undefined ? dialogOf(t.id) : undefined;
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
  traits: { target: "tab", reads: "none", effects: ["close"], switch: "act", dialog: "ignores", handoff: "refused" },
  async handler(a) {
    await resolveTab(a.tabId);
    try {
      // An agent tab closes without a beforeunload prompt in front of the person.
      if (isAgentTab(a.tabId)) await closeAgentTab(a.tabId);
      else await withDeadline(chrome.tabs.remove(a.tabId), 5_000, "tabs.remove");
    } catch (e) {
      throw toolError("no_tab", e instanceof Error ? e.message : String(e));
    }
    return { text: `closed tab ${a.tabId}`, data: { tabId: a.tabId, closed: true } };
  },
});
