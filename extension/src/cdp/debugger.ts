// chrome.debugger (CDP 1.3) per tab: attach once, send with a deadline, fan out events, and track
// JavaScript dialogs (Page.javascriptDialogOpening) so an action that raises one can say so and
// later calls refuse with dialog_blocking instead of hanging behind it.

import { toolError } from "../tools/errors.js";
import { classifyChromeError } from "../tools/errors.js";
import { withDeadline } from "./deadline.js";

export const CDP_VERSION = "1.3";
const DEFAULT_CDP_MS = 10_000;

export interface DialogInfo {
  type: "alert" | "confirm" | "prompt" | "beforeunload";
  message: string;
  defaultPrompt?: string;
  url?: string;
}

type Listener = (tabId: number, method: string, params: Record<string, unknown>) => void;

const attached = new Set<number>();
const attaching = new Map<number, Promise<void>>();
const dialogs = new Map<number, DialogInfo>();
const listeners = new Set<Listener>();
let installed = false;

/** Registers the chrome.debugger listeners; called once at service-worker start. */
export function installDebugger(): void {
  if (installed) return;
  installed = true;
  chrome.debugger.onEvent.addListener((source, method, params) => {
    const tabId = source.tabId;
    if (tabId === undefined) return;
    const p = (params ?? {}) as Record<string, unknown>;
    if (method === "Page.javascriptDialogOpening") {
      const d: DialogInfo = { type: (p.type as DialogInfo["type"]) ?? "alert", message: String(p.message ?? "") };
      if (typeof p.defaultPrompt === "string" && p.defaultPrompt !== "") d.defaultPrompt = p.defaultPrompt;
      if (typeof p.url === "string") d.url = p.url;
      dialogs.set(tabId, d);
    } else if (method === "Page.javascriptDialogClosed") {
      dialogs.delete(tabId);
    }
    for (const l of listeners) {
      try {
        l(tabId, method, p);
      } catch {
        // a listener's failure must not starve the others
      }
    }
  });
  chrome.debugger.onDetach.addListener((source) => {
    if (source.tabId === undefined) return;
    attached.delete(source.tabId);
    dialogs.delete(source.tabId);
    for (const l of listeners) l(source.tabId, "torii.detached", {});
  });
  chrome.tabs.onRemoved.addListener((tabId) => {
    attached.delete(tabId);
    dialogs.delete(tabId);
  });
}

export function onCdpEvent(l: Listener): () => void {
  listeners.add(l);
  return () => listeners.delete(l);
}

export function dialogOf(tabId: number): DialogInfo | undefined {
  return dialogs.get(tabId);
}

export function clearDialog(tabId: number): void {
  dialogs.delete(tabId);
}

export function isAttached(tabId: number): boolean {
  return attached.has(tabId);
}

/** Attaches the debugger to the tab (once) and enables the Page domain for dialog events. */
export function attach(tabId: number, ms = DEFAULT_CDP_MS, signal?: AbortSignal): Promise<void> {
  if (attached.has(tabId)) return Promise.resolve();
  let p = attaching.get(tabId);
  if (!p) {
    p = doAttach(tabId).finally(() => attaching.delete(tabId));
    attaching.set(tabId, p);
  }
  return withDeadline(p, ms, `attach to tab ${tabId}`, signal);
}

async function doAttach(tabId: number): Promise<void> {
  try {
    await chrome.debugger.attach({ tabId }, CDP_VERSION);
  } catch (e) {
    const msg = e instanceof Error ? e.message : String(e);
    // After a service-worker restart our own session may still be attached: probe it.
    if (!/already attached/i.test(msg)) throw classifyChromeError(msg);
    try {
      await chrome.debugger.sendCommand({ tabId }, "Page.enable", {});
    } catch {
      throw toolError("debugger_conflict", msg);
    }
  }
  attached.add(tabId);
  await chrome.debugger.sendCommand({ tabId }, "Page.enable", {});
}

/** Sends a CDP command to the tab (attaching first) within `ms`. */
export async function cdp<T = Record<string, unknown>>(
  tabId: number,
  method: string,
  params: Record<string, unknown> = {},
  ms = DEFAULT_CDP_MS,
  signal?: AbortSignal,
): Promise<T> {
  await attach(tabId, ms, signal);
  const p = chrome.debugger.sendCommand({ tabId }, method, params).then(
    (r) => (r ?? {}) as T,
    (e: unknown) => {
      throw classifyChromeError(e instanceof Error ? e.message : String(e));
    },
  );
  return withDeadline(p, ms, `${method} on tab ${tabId}`, signal);
}

/** Resolves with the dialog as soon as one opens on the tab (or is already open). */
export function waitDialog(tabId: number): { promise: Promise<DialogInfo>; cancel(): void } {
  let off: () => void = () => undefined;
  const promise = new Promise<DialogInfo>((resolve) => {
    const open = dialogs.get(tabId);
    if (open) return resolve(open);
    off = onCdpEvent((t, method) => {
      if (t !== tabId || method !== "Page.javascriptDialogOpening") return;
      const d = dialogs.get(tabId);
      if (d) {
        off();
        resolve(d);
      }
    });
  });
  return { promise, cancel: () => off() };
}
