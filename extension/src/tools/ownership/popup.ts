// The popup's side of ownership: the view of sessions, their tabs and the person's grants, and the
// torii.sessions.* messages that change them. Only the extension's own pages are answered
// (SECURITY I-27).

import { closeSessionTabs } from "./close.js";
import { createGrant, revokeGrant } from "./grants.js";
import type { SessionLook } from "./groupbook.js";
import { groupLook } from "./groups.js";
import { load, ownerOf, st, type Grant, type Scope } from "./state.js";

export interface SessionsView {
  sessions: {
    id: string;
    label: string;
    kind: string;
    ended?: number;
    tabs: { tabId: number; title: string; url: string; looked: boolean }[];
    /** The person's tabs granted to it now. */
    granted: { tabId: number; title: string; url: string }[];
    /** Its tab group's look (SECURITY I-83), once it had one. */
    group?: SessionLook;
  }[];
  grants: Grant[];
  personTabs: { tabId: number; title: string; url: string }[];
}

export async function sessionsView(): Promise<SessionsView> {
  await load();
  const tabs = await chrome.tabs.query({});
  const byId = new Map(tabs.map((t) => [t.id, t]));
  const now = Date.now();
  const grants = st.grants.filter((g) => g.expiresAt > now);
  const sessions = await Promise.all(
    Object.values(st.sessions).map(async (s) => {
      const group = await groupLook(s.id);
      return {
        id: s.id,
        label: s.label,
        kind: s.kind,
        ...(s.ended !== undefined ? { ended: s.ended } : {}),
        tabs: Object.entries(st.owners)
          .filter(([, r]) => r.session === s.id)
          .map(([k, r]) => {
            const t = byId.get(Number(k));
            return { tabId: Number(k), title: t?.title ?? "", url: t?.url ?? "", looked: r.looked === true };
          }),
        granted: grants
          .filter((g) => g.sessionId === s.id)
          .map((g) => ({ tabId: g.tabId, title: byId.get(g.tabId)?.title ?? "", url: byId.get(g.tabId)?.url ?? "" })),
        ...(group ? { group } : {}),
      };
    }),
  );
  const personTabs = tabs
    .filter((t) => t.id !== undefined && !ownerOf(t.id) && /^https?:/.test(t.url ?? ""))
    .map((t) => ({ tabId: t.id as number, title: t.title ?? "", url: t.url ?? "" }));
  return { sessions, grants, personTabs };
}

/** Handles the popup's messages; anything not from the extension's own pages is ignored. */
export function installSessionMessages(): void {
  chrome.runtime.onMessage.addListener((msg: unknown, sender, reply) => {
    const m = msg as { type?: unknown } | null;
    if (!m || typeof m.type !== "string" || !m.type.startsWith("torii.sessions.")) return false;
    // SECURITY I-27: extension pages only (popup); never a content script or another extension.
    if (sender.id !== chrome.runtime.id || !String(sender.url ?? "").startsWith(`chrome-extension://${chrome.runtime.id}/`)) {
      reply({ error: "refused" });
      return false;
    }
    const p = msg as Record<string, unknown>;
    const run = async (): Promise<unknown> => {
      switch (m.type) {
        case "torii.sessions.view":
          return sessionsView();
        case "torii.sessions.closeAll":
          return closeSessionTabs(String(p.sessionId));
        case "torii.sessions.grant":
          return createGrant({ tabId: Number(p.tabId), sessionId: String(p.sessionId), scopes: (p.scopes as Scope[]) ?? [], minutes: Number(p.minutes) });
        case "torii.sessions.revoke":
          await revokeGrant(String(p.id));
          return {};
      }
      throw new Error("unknown message");
    };
    run().then(
      (v) => reply(v),
      (e: unknown) => reply({ error: e instanceof Error ? e.message : String(e) }),
    );
    return true;
  });
}
