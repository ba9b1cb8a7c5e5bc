// The tabs whose console and network are being kept, on the one chrome.debugger session per tab
// the other tools share (cdp/debugger.ts): a capture starts at the first console_tail or
// network_tail call on a tab where the person turned "Console & network" on, enables Runtime, Log
// and Network there, and ends (domains disabled, everything dropped) when the tab closes, the
// debugger detaches, the session that started it ends or another session calls on the tab.
// Nothing is written to storage: a worker restart ends every capture (SECURITY I-65).

import { attach, cdp, onCdpEvent } from "../../cdp/debugger.js";
import { left } from "../../cdp/deadline.js";
import { judgeDocument, judgeUrl, normalizePolicy, observeAllowed, type Policy } from "../../policy/policy.js";
import { getPolicy, POLICY_KEY } from "../safety.js";
import { ByteBudget, GLOBAL_BODY_BUDGET, TabCapture, type StoreDeps } from "./store.js";

interface Capture {
  /** The daemon-minted session that started it ("" for a call without one). */
  session: string;
  store: TabCapture;
  /** The domains are enabled. */
  ready: Promise<void>;
}

const captures = new Map<number, Capture>();
const global = new ByteBudget(GLOBAL_BODY_BUDGET);
let policyNow: Policy | undefined;
let installed = false;

/** Registers the listeners; called once at service-worker start. */
export function installObserve(): void {
  if (installed) return;
  installed = true;
  onCdpEvent((tabId, method, params) => {
    const c = captures.get(tabId);
    if (!c) return;
    if (method === "torii.detached") return stopCapture(tabId, false);
    c.store.handle(method, params);
  });
  chrome.tabs.onRemoved.addListener((tabId) => stopCapture(tabId, false));
  // Entries are judged as they arrive against the policy in force, so a switch turned off stops
  // keeping at once (they are judged again when read).
  chrome.storage.onChanged.addListener((changes, area) => {
    if (area === "local" && changes[POLICY_KEY]) policyNow = normalizePolicy(changes[POLICY_KEY].newValue);
  });
}

function deps(tabId: number): StoreDeps {
  return {
    docAllowed: (d) => !!policyNow && observeAllowed(judgeDocument(policyNow, d.origin, d.url)),
    urlAllowed: (url) => !!policyNow && judgeUrl(policyNow, url).allowed,
    readBody: (requestId) => cdp<{ body: string; base64Encoded: boolean }>(tabId, "Network.getResponseBody", { requestId }, 5_000),
    global,
  };
}

/** SECURITY I-65: an entry is shown only while its document (and a request's URL) still pass. */
export function shown(d: { origin: string; url: string }, policy: Policy): boolean {
  return observeAllowed(judgeDocument(policy, d.origin, d.url));
}

export interface Opened {
  store: TabCapture;
  /** This call started the capture: nothing from before it is kept. */
  started: boolean;
}

/**
 * The tab's capture for this session, started now when there is none (or another session's, which
 * is dropped first: one session never reads what was kept for another).
 */
export async function openCapture(tabId: number, session: string, deadline: number, signal: AbortSignal): Promise<Opened> {
  policyNow = await getPolicy();
  const had = captures.get(tabId);
  if (had && had.session === session) {
    await had.ready;
    return { store: had.store, started: false };
  }
  if (had) stopCapture(tabId, true);
  const store = new TabCapture(Date.now(), deps(tabId));
  const ready = enable(tabId, store, deadline, signal);
  const c: Capture = { session, store, ready };
  captures.set(tabId, c);
  try {
    await ready;
  } catch (e) {
    if (captures.get(tabId) === c) stopCapture(tabId, true);
    throw e;
  }
  return { store, started: true };
}

async function enable(tabId: number, store: TabCapture, deadline: number, signal: AbortSignal): Promise<void> {
  const ms = () => left(deadline, 5_000);
  await attach(tabId, ms(), signal);
  const tree = await cdp<{ frameTree?: unknown }>(tabId, "Page.getFrameTree", {}, ms(), signal).catch(() => ({ frameTree: undefined }));
  store.seedFrames(tree.frameTree);
  // The browser's own buffer of bodies is bounded too; request bodies are never sent to us.
  await cdp(tabId, "Network.enable", { maxTotalBufferSize: 8 * 1024 * 1024, maxResourceBufferSize: 256 * 1024, maxPostDataSize: 0 }, ms(), signal);
  await cdp(tabId, "Runtime.enable", {}, ms(), signal);
  await cdp(tabId, "Log.enable", {}, ms(), signal);
}

/** Ends a tab's capture and drops what it kept; `disable` also turns its domains off. */
export function stopCapture(tabId: number, disable: boolean): void {
  const c = captures.get(tabId);
  if (!c) return;
  captures.delete(tabId);
  c.store.dispose();
  if (!disable) return;
  for (const m of ["Network.disable", "Log.disable", "Runtime.disable"]) void cdp(tabId, m, {}, 3_000).catch(() => undefined);
}

/** The session ended: its captures end with it. */
export function stopSessionCaptures(session: string): void {
  for (const [tabId, c] of [...captures]) if (c.session === session) stopCapture(tabId, true);
}

/** The daemon (re)connected: every session it had is over, so is every capture. */
export function stopAllCaptures(): void {
  for (const tabId of [...captures.keys()]) stopCapture(tabId, true);
}

/** For tests and the worker's status: tabs being captured and the body bytes held across them. */
export function captureStats(): { tabs: number; bodyBytes: number } {
  return { tabs: captures.size, bodyBytes: global.used };
}
