// The tab cap: at most `tabCap` agent tabs across sessions. Making room closes an ended session's
// tab first, then the caller's own least recently used; never a tab the person looked at
// (SECURITY I-46), never another live session's. A tab whose close its page holds stays owned,
// and the caller is told which one and why instead of getting a new tab.

import { toolError } from "../errors.js";
import { closeAgentTabs } from "./close.js";
import { st, type OwnerRec, type SessionRef } from "./state.js";

function isLive(sessionId: string): boolean {
  const s = st.sessions[sessionId];
  return !!s && s.ended === undefined;
}

/** Closes tabs until a new one fits under the cap; busy when none may go, or one would not. */
export async function makeRoom(s: SessionRef, cap: number): Promise<void> {
  for (;;) {
    const all = Object.entries(st.owners).map(([k, r]) => ({ tabId: Number(k), r }));
    if (all.length < cap) return;
    const free = (x: { r: OwnerRec }) => !x.r.looked;
    const ended = all.filter((x) => free(x) && !isLive(x.r.session) && x.r.session !== s.id).sort((a, b) => a.r.used - b.r.used);
    const own = all.filter((x) => free(x) && x.r.session === s.id).sort((a, b) => a.r.used - b.r.used);
    const victim = ended[0] ?? own[0];
    if (!victim) {
      throw toolError("busy", `the cap of ${cap} open agent tabs is reached and none may be closed for this session; nothing was opened`, "Close one of your tabs with close_tab, or ask the person to close agent tabs in the Torii popup.");
    }
    const [stayed] = (await closeAgentTabs([victim.tabId])).stayed;
    if (stayed) {
      const mine = victim.r.session === s.id;
      const next = stayed.prompt && mine
        ? `Answer the prompt with handle_dialog on tab ${stayed.tabId} (accept closes it), or close another of your tabs with close_tab.`
        : "Close one of your tabs with close_tab, or ask the person to close agent tabs in the Torii popup.";
      throw toolError("busy", `the cap of ${cap} open agent tabs is reached; tab ${stayed.tabId}, closed to make room, is still open: ${stayed.why}; nothing was opened`, next);
    }
  }
}
