// chrome.debugger (CDP 1.3) per tab: attach once, send with a deadline, fan out events, and track
// JavaScript dialogs (Page.javascriptDialogOpening) so an action that raises one can say so and
// later calls refuse with dialog_blocking instead of hanging behind it. A dialog is judged by the
// frame that raised it (SECURITY I-41): one from a document off the allowlist keeps its type only.

import { toolError } from "../tools/errors.js";
import { classifyChromeError } from "../tools/errors.js";
import { withDeadline } from "./deadline.js";

const CDP_VERSION = "1.3";
const DEFAULT_CDP_MS = 10_000;

/** What the agent may know of an open dialog; a foreign one carries no message, prompt or URL. */
export interface DialogInfo {
  type: "alert" | "confirm" | "prompt" | "beforeunload";
  message: string;
  defaultPrompt?: string;
  url?: string;
  /** Raised by a document whose origin is off the allowlist (or cannot be told): only the person answers it. */
  foreign?: true;
}

/** Decides whether the frame that raised a dialog is allowed; wired by the service worker (tools/origin.ts). */
export type DialogJudge = (tabId: number, url: string, cdpFrameId: string | undefined) => Promise<boolean>;

let judgeDialog: DialogJudge = async () => false;
export function setDialogJudge(j: DialogJudge): void {
  judgeDialog = j;
}

interface OpenDialog {
  /** Until judged: the fail-closed view (foreign). */
  view: DialogInfo;
  ready: Promise<DialogInfo>;
}

type Listener = (tabId: number, method: string, params: Record<string, unknown>) => void;

const attached = new Set<number>();
const attaching = new Map<number, Promise<void>>();
const dialogs = new Map<number, OpenDialog>();
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
      openDialog(tabId, p);
      // Listeners learn that a dialog opened, never its text (dialogOf / waitDialog give the judged view).
      for (const l of listeners) {
        try {
          l(tabId, method, {});
        } catch {
          // a listener's failure must not starve the others
        }
      }
      return;
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

/**
 * SECURITY I-41: the open dialog is shown with its text only once the frame that raised it is
 * judged allowed; until then, and for a frame off the list or one that cannot be told, it is foreign.
 */
function openDialog(tabId: number, p: Record<string, unknown>): void {
  const type = (["alert", "confirm", "prompt", "beforeunload"].includes(String(p.type)) ? p.type : "alert") as DialogInfo["type"];
  const foreign: DialogInfo = { type, message: "", foreign: true };
  const url = typeof p.url === "string" ? p.url : "";
  const frameId = typeof p.frameId === "string" ? p.frameId : undefined;
  const entry: OpenDialog = { view: foreign, ready: Promise.resolve(foreign) };
  entry.ready = judgeDialog(tabId, url, frameId)
    .catch(() => false)
    .then((ok) => {
      if (!ok) return foreign;
      const d: DialogInfo = { type, message: String(p.message ?? "") };
      if (typeof p.defaultPrompt === "string" && p.defaultPrompt !== "") d.defaultPrompt = p.defaultPrompt;
      if (url) d.url = url;
      if (dialogs.get(tabId) === entry) entry.view = d;
      return d;
    });
  dialogs.set(tabId, entry);
}

/** The open dialog as the agent may see it (foreign while it is being judged). */
export function dialogOf(tabId: number): DialogInfo | undefined {
  return dialogs.get(tabId)?.view;
}

/** The open dialog once judged, or undefined when none is open. */
export function judgedDialog(tabId: number): Promise<DialogInfo | undefined> {
  return dialogs.get(tabId)?.ready ?? Promise.resolve(undefined);
}

export function clearDialog(tabId: number): void {
  dialogs.delete(tabId);
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
    if (open) return resolve(open.ready);
    off = onCdpEvent((t, method) => {
      if (t !== tabId || method !== "Page.javascriptDialogOpening") return;
      const d = dialogs.get(tabId);
      if (d) {
        off();
        resolve(d.ready);
      }
    });
  });
  return { promise, cancel: () => off() };
}
