// Removing a tab and watching what happens. Every close the extension makes (close_tab, eviction
// at the tab cap, the popup's close-all) goes through removeAndWatch, so each one reports the same
// three outcomes and none claims a tab closed before Chrome says it is gone.

import { attach, onCdpEvent, waitDialog, type DialogInfo } from "../cdp/debugger.js";
import { sleep } from "../cdp/deadline.js";
import { onNav } from "./browser.js";

/** How long a close waits for Chrome to report the tab removed (or a beforeunload dialog). */
export const CLOSE_MS = 5_000;

export type CloseOutcome = { removed: true } | { dialog: DialogInfo } | { pending: true };

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

/**
 * Asks Chrome to remove the tab and waits for what happens: it goes, or the page holds it with a
 * beforeunload dialog (seen through the debugger, attached first; the close is then held, see
 * closeHeld), or neither within CLOSE_MS. chrome.tabs.remove's own promise is not the answer: it
 * may settle before the tab is gone, or only once a dialog holding it is answered. Rejects only
 * when Chrome refuses the removal (no such tab, tabs locked).
 */
export async function removeAndWatch(tabId: number, signal?: AbortSignal): Promise<CloseOutcome> {
  await attach(tabId, 3_000, signal).catch(() => undefined);
  const gone = tabRemoved(tabId, CLOSE_MS, signal);
  const dlg = waitDialog(tabId);
  // Its settling says nothing either way; only a refusal is an answer.
  const refused = chrome.tabs.remove(tabId).then(() => new Promise<never>(() => undefined));
  try {
    const out = await Promise.race([
      gone.promise.then((r): CloseOutcome => (r ? { removed: true } : { pending: true })),
      // Only a beforeunload prompt holds a close (an alert already open does not: the tab goes).
      dlg.promise.then((d): Promise<CloseOutcome> => (d.type === "beforeunload" ? Promise.resolve({ dialog: d }) : new Promise(() => undefined))),
      refused,
    ]);
    if ("dialog" in out) holdClose(tabId);
    return out;
  } finally {
    gone.cancel();
    dlg.cancel();
  }
}
