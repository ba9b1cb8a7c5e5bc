// Tabs: list them, close one.

import { attach, dialogOf, onCdpEvent, waitDialog, type DialogInfo } from "../cdp/debugger.js";
import { sleep, withDeadline } from "../cdp/deadline.js";
import { defineTool } from "./define.js";
import { toolError, ToolError } from "./errors.js";
import { dialogText, onNav, resolveTab } from "./browser.js";
import { getPolicy } from "./safety.js";
import { visibleTab } from "./origin.js";
import { isAgentTab, ownedOnly, quietAgentTab, selfOp } from "./ownership.js";
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

/** How long close_tab waits for Chrome to report the tab removed (or a beforeunload dialog). */
const CLOSE_MS = 5_000;

/**
 * Tabs whose close a beforeunload dialog holds: accepting that dialog closes the tab, so
 * handle_dialog waits for the removal instead of looking at the page. Dropped when the dialog
 * closes (answered by anyone) or the tab goes.
 */
const heldCloses = new Map<number, () => void>();

export function closeHeld(tabId: number): boolean {
  return heldCloses.has(tabId);
}

function holdClose(tabId: number): void {
  heldCloses.get(tabId)?.();
  const offCdp = onCdpEvent((t, method) => {
    if (t === tabId && (method === "Page.javascriptDialogClosed" || method === "torii.detached")) release();
  });
  const offNav = onNav((ev) => {
    if (ev.tabId === tabId && ev.kind === "removed") release();
  });
  const release = () => {
    offCdp();
    offNav();
    if (heldCloses.get(tabId) === release) heldCloses.delete(tabId);
  };
  heldCloses.set(tabId, release);
}

/** Resolves true once Chrome reports the tab removed (chrome.tabs.onRemoved), false after `ms`. */
export function tabRemoved(tabId: number, ms: number, signal?: AbortSignal): { promise: Promise<boolean>; cancel(): void } {
  let off: () => void = () => undefined;
  const gone = new Promise<true>((resolve) => {
    off = onNav((ev) => {
      if (ev.tabId === tabId && ev.kind === "removed") resolve(true);
    });
  });
  const promise = Promise.race([gone, sleep(ms, signal).then(() => false)]).finally(() => off());
  return { promise, cancel: () => off() };
}

type CloseOutcome = { removed: true } | { dialog: DialogInfo } | { pending: true };

/**
 * Asks Chrome to remove the tab and waits for what happens: it goes, or the page holds it with a
 * beforeunload dialog (seen through the debugger, attached first), or neither within CLOSE_MS.
 * chrome.tabs.remove's own promise is not the answer: it may settle before the tab is gone, or
 * only once a dialog holding it is answered.
 */
async function removeAndWatch(tabId: number, signal: AbortSignal): Promise<CloseOutcome> {
  await attach(tabId, 3_000, signal).catch(() => undefined);
  const gone = tabRemoved(tabId, CLOSE_MS, signal);
  const dlg = waitDialog(tabId);
  // Its settling says nothing either way; only a refusal (no such tab, tabs locked) is an answer.
  const refused = chrome.tabs.remove(tabId).then(() => new Promise<never>(() => undefined));
  try {
    return await Promise.race([
      gone.promise.then((r): CloseOutcome => (r ? { removed: true } : { pending: true })),
      // Only a beforeunload prompt holds a close (an alert already open does not: the tab goes).
      dlg.promise.then((d): Promise<CloseOutcome> => (d.type === "beforeunload" ? Promise.resolve({ dialog: d }) : new Promise(() => undefined))),
      refused,
    ]);
  } finally {
    gone.cancel();
    dlg.cancel();
  }
}

export const closeTab = defineTool<{ tabId: number }>({
  name: "close_tab",
  description: "Close a tab.",
  inputSchema: { type: "object", properties: { tabId: { type: "integer", minimum: 0 } }, required: ["tabId"] },
  traits: { target: "tab", reads: "none", effects: ["close"], switch: "act", dialog: "ignores", handoff: "refused" },
  async handler(a, ctx) {
    const tabId = (await resolveTab(a.tabId)).id as number;
    const agent = isAgentTab(tabId);
    let out: CloseOutcome;
    try {
      // An agent tab closes without a beforeunload prompt in front of the person, unless the
      // person looked at it (SECURITY I-46): then the page may still hold the close.
      if (agent) await quietAgentTab(tabId);
      // Chrome activates a neighbour as the tab goes: that is not the person looking at it.
      out = agent ? await selfOp(() => removeAndWatch(tabId, ctx.signal)) : await removeAndWatch(tabId, ctx.signal);
    } catch (e) {
      if (e instanceof ToolError && e.code === "cancelled") throw e;
      throw toolError("no_tab", e instanceof Error ? e.message : String(e));
    }
    if ("removed" in out) return { text: `closed tab ${tabId}`, data: { tabId, closed: true } };
    if ("dialog" in out) {
      // The tab stays the session's until Chrome removes it: handle_dialog answers the prompt.
      holdClose(tabId);
      const d = out.dialog;
      return {
        text: `${dialogText(d)} opened; the tab is still open\n${d.foreign ? "Only the person can answer it: call handoff." : "Call handle_dialog: accept closes the tab, dismiss keeps it open."}`,
        data: { tabId, ok: true, closed: false, dialog: d },
      };
    }
    throw toolError("timeout", `tab ${tabId} did not close within ${CLOSE_MS / 1000}s`, "Call tabs to see whether it is still open.");
  },
});
