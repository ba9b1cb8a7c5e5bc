// Console and network from the page's load, on the agent's own tabs (SECURITY I-84). navigate,
// reload and history start the tab's capture (capture.ts) before the load commits, when the tab
// is the calling session's own (it opened it, or a popup of its call) and the page about to load
// has the person's "Console & network" switch on; the first console_tail or network_tail then
// reads what the load logged and fetched. Everything else is as for a capture the first call
// starts (SECURITY I-65): the same caps, the same judging of every entry as it arrives and again
// when read, the same ends. A tab the person granted, or one of a side-panel room's window, is not
// the agent's own: its capture starts at the first call.

import { judgeUrl, observeAllowed } from "../../policy/policy.js";
import type { ToolContext } from "../define.js";
import { getPolicy } from "../safety.js";
import { ANONYMOUS, ownerOf, ownershipOn } from "../ownership/state.js";
import { openCapture } from "./capture.js";

/** Enabling the capture waits this long at most; past it the load goes on without it. */
const START_MS = 5_000;

/**
 * Starts the capture of tabId for the calling session before `url` loads in it, when the tab is the
 * session's own and the person's switch is on for that URL's entry; otherwise does nothing (the
 * first console_tail or network_tail starts it as before). Never fails the call: a capture that
 * cannot start now starts at the first call.
 */
export async function captureLoad(tabId: number, url: string, ctx: ToolContext): Promise<void> {
  if (!ownershipOn()) return;
  const owner = ctx.gate?.owner;
  if (ownerOf(tabId)?.session !== (owner ?? ANONYMOUS).id) return;
  const policy = await getPolicy();
  if (!observeAllowed(judgeUrl(policy, url))) return;
  // The same session key as console_tail and network_tail use (tools.ts), so their first call finds it.
  await openCapture(tabId, owner?.id ?? "", Math.min(ctx.deadline, Date.now() + START_MS), ctx.signal).catch(() => undefined);
}

/** captureLoad for a reload: the page about to load is the tab's own. */
export async function captureReload(tabId: number, ctx: ToolContext): Promise<void> {
  const t = await chrome.tabs.get(tabId).catch(() => undefined);
  if (t?.url) await captureLoad(tabId, t.url, ctx);
}
