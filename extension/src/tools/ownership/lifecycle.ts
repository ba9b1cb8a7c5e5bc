// When ownership starts and what ends it: the service worker turns the checks on and registers the
// chrome.* listeners once; a removed tab or window takes its records with it (SECURITY I-26,
// I-29); the daemon says when a session ended or that it (re)connected.

import { watchAttribution } from "./attribution.js";
import { closeSessionTabs, forget } from "./close.js";
import { installGroups } from "./groups.js";
import { load, ownershipOn, save, st, turnOwnershipOn } from "./state.js";

/** Registers the chrome.* listeners (at service-worker start) and turns the checks on. */
export function installOwnership(): void {
  if (ownershipOn()) return;
  turnOwnershipOn();
  void load();
  watchAttribution();
  installGroups();
  chrome.tabs.onRemoved.addListener((tabId) => void load().then(() => forget(tabId)));
  chrome.windows.onRemoved.addListener((w) => {
    void load().then(() => {
      // SECURITY I-29: closing the window ends every window grant on it.
      for (const [k, g] of Object.entries(st.windows)) if (g.windowId === w) delete st.windows[k];
      save();
    });
    for (const s of Object.values(st.sessions)) if (s.window === w) delete s.window;
  });
}

/** The daemon ended a session: its tabs become first to go, or close now when asked to. */
export async function sessionEnded(sessionId: string, closeTabs: boolean | Promise<boolean>): Promise<void> {
  await load();
  const s = st.sessions[sessionId];
  if (s) s.ended = Date.now();
  // SECURITY I-29: the agent session closes with its chat session; so does its window grant.
  if (s?.gateway) delete st.windows[s.gateway];
  save();
  if (await closeTabs) await closeSessionTabs(sessionId);
}

/** A (re)connected daemon: every session the extension knew is over until it calls again. */
export async function daemonConnected(): Promise<void> {
  await load();
  const now = Date.now();
  for (const s of Object.values(st.sessions)) s.ended ??= now;
  save();
}
