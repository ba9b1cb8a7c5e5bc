// Device emulation per tab over the tab's debugger session (CDP Emulation domain): the page sees
// another viewport, scale, orientation and touch support, while the person's window keeps its size
// (the override is of the tab's rendering, not of the window). Chrome keeps an override across the
// tab's navigations for as long as the debugger session lives and drops it when the session ends
// (detach, a DevTools takeover, the tab closing); the record here follows the same lifetime so it
// never claims an emulation that is gone.

import { cdp, onCdpEvent } from "./debugger.js";

export interface Emulation {
  width: number;
  height: number;
  deviceScaleFactor: number;
  mobile: boolean;
  touch: boolean;
  orientation: "portrait" | "landscape";
  preset?: string;
}

const active = new Map<number, Emulation>();
let installed = false;
// The debugger session, and the override with it, outlives a restarted service worker: the record
// is kept in the session store too (it ends with the browser, like the override).
const KEY = "emulation:";

function forget(tabId: number): void {
  active.delete(tabId);
  void chrome.storage.session.remove(KEY + tabId).catch(() => undefined);
}

/** Forgets a tab's emulation when its debugger session or the tab itself ends. */
export function installEmulation(): void {
  if (installed) return;
  installed = true;
  onCdpEvent((tabId, method) => {
    if (method === "torii.detached") forget(tabId);
  });
  chrome.tabs.onRemoved.addListener(forget);
  void chrome.storage.session
    .get(null)
    .then((all) => {
      for (const [k, v] of Object.entries(all)) {
        const tabId = Number(k.slice(KEY.length));
        if (k.startsWith(KEY) && Number.isInteger(tabId) && !active.has(tabId) && v && typeof v === "object") active.set(tabId, v as Emulation);
      }
    })
    .catch(() => undefined);
}

/** The emulation Torii set on the tab, while its debugger session lasts. */
export function emulationOf(tabId: number): Emulation | undefined {
  return active.get(tabId);
}

/** Applies `e` to the tab's page (and only that tab). */
export async function emulate(tabId: number, e: Emulation, ms: number, signal?: AbortSignal): Promise<void> {
  const portrait = e.orientation === "portrait";
  await cdp(
    tabId,
    "Emulation.setDeviceMetricsOverride",
    {
      width: e.width,
      height: e.height,
      deviceScaleFactor: e.deviceScaleFactor,
      mobile: e.mobile,
      screenWidth: e.width,
      screenHeight: e.height,
      screenOrientation: { type: portrait ? "portraitPrimary" : "landscapePrimary", angle: portrait ? 0 : 90 },
    },
    ms,
    signal,
  );
  await cdp(tabId, "Emulation.setTouchEmulationEnabled", e.touch ? { enabled: true, maxTouchPoints: 5 } : { enabled: false }, ms, signal);
  active.set(tabId, e);
  void chrome.storage.session.set({ [KEY + tabId]: e }).catch(() => undefined);
}

/**
 * Clears the tab's emulation: the page sees the window's own viewport again. Sent even when no
 * record is kept (a restarted worker forgets its records, the browser does not).
 */
export async function clearEmulation(tabId: number, ms: number, signal?: AbortSignal): Promise<void> {
  forget(tabId);
  await cdp(tabId, "Emulation.clearDeviceMetricsOverride", {}, ms, signal);
  await cdp(tabId, "Emulation.setTouchEmulationEnabled", { enabled: false }, ms, signal);
}
