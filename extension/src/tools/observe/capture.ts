// The tabs whose console and network are being kept: a capture starts at the first console_tail or
// network_tail call on a tab where the person turned "Console & network" on, or on the agent's own
// tab before a load it causes (load.ts; SECURITY I-84). The console comes
// from Runtime and Log, enabled on the one chrome.debugger session per tab the other tools share
// (cdp/debugger.ts); they cost the page nothing measurable. The network's metadata comes from the
// worker's shared webRequest listeners (capture/requests.ts), which cost it nothing: each request's
// end only, unless bodies are recorded. The Network domain, which slows every request of the page,
// is on only while network_tail asks for bodies.
// A capture ends (domains disabled, everything dropped) when the tab closes, the debugger
// detaches, the session that started it ends or another session calls on the tab. Nothing is
// written to storage: a worker restart ends every capture (SECURITY I-65).

import { attach, cdp, onCdpEvent } from "../../cdp/debugger.js";
import { left } from "../../cdp/deadline.js";
import { judgeDocument, judgeUrl, normalizePolicy, observeAllowed, type Policy } from "../../policy/policy.js";
import { setNeed, type RequestSink } from "../capture/requests.js";
import { getPolicy, POLICY_KEY } from "../safety.js";
import { originOfUrl } from "./format.js";
import { ByteBudget, GLOBAL_BODY_BUDGET, type Doc } from "./network.js";
import { TabCapture, type StoreDeps } from "./store.js";

interface Capture {
  /** The daemon-minted session that started it ("" for a call without one). */
  session: string;
  store: TabCapture;
  /** The domains are enabled. */
  ready: Promise<void>;
  /** The tab's documents by webRequest documentId (webNavigation), for attributing requests. */
  docs: Map<string, Doc>;
  /** Turning response bodies on or off (one change at a time). */
  bodiesOp: Promise<void>;
}

/** Documents remembered per captured tab; past this the oldest is forgotten (and looked up again). */
const DOCS_CAP = 2_000;

const captures = new Map<number, Capture>();
const global = new ByteBudget(GLOBAL_BODY_BUDGET);
let policyNow: Policy | undefined;
let installed = false;

/** network_tail's share of the worker's webRequest listeners: its captured tabs'. */
const sink: RequestSink = {
  before(d) {
    captures.get(d.tabId)?.store.net.before(d as Parameters<TabCapture["net"]["before"]>[0]);
  },
  // A redirect's next hop comes as another onBeforeRequest of the same requestId, which follows it.
  redirect() {},
  completed(d) {
    captures.get(d.tabId)?.store.net.done(d);
  },
  error(d) {
    captures.get(d.tabId)?.store.net.done(d);
  },
};

/**
 * A request's end is all network_tail needs (requests.ts: one event per request); while bodies are
 * recorded, their starts too (a body is expected only for a request that started then).
 */
function needRequests(): void {
  setNeed("observe", new Map([...captures].map(([tabId, c]) => [tabId, c.store.bodies ? "metadata" : "finished"] as const)), sink);
}

function rememberDoc(c: Capture, documentId: string | undefined, url: string): void {
  if (!documentId) return;
  if (c.docs.size >= DOCS_CAP) c.docs.delete(c.docs.keys().next().value as string);
  c.docs.set(documentId, { origin: originOfUrl(url), url });
}

/** Registers the listeners; called once at service-worker start. */
export function installObserve(): void {
  if (installed) return;
  installed = true;
  chrome.webNavigation.onCommitted.addListener((d) => {
    const c = captures.get(d.tabId);
    if (c) rememberDoc(c, (d as { documentId?: string }).documentId, d.url);
  });
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

function deps(tabId: number, docs: Map<string, Doc>): StoreDeps {
  return {
    docAllowed: (d) => !!policyNow && observeAllowed(judgeDocument(policyNow, d.origin, d.url)),
    urlAllowed: (url) => !!policyNow && judgeUrl(policyNow, url).allowed,
    // A document that committed before its onCommitted reached the worker is looked up once.
    docOf: (id) =>
      docs.get(id) ??
      chrome.webNavigation.getFrame({ documentId: id } as chrome.webNavigation.GetFrameDetails).then(
        (f) => (f ? { origin: originOfUrl(f.url), url: f.url } : undefined),
        () => undefined,
      ),
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
  const docs = new Map<string, Doc>();
  const store = new TabCapture(Date.now(), deps(tabId, docs));
  const c: Capture = { session, store, ready: Promise.resolve(), docs, bodiesOp: Promise.resolve() };
  captures.set(tabId, c);
  needRequests();
  c.ready = enable(tabId, c, deadline, signal);
  const ready = c.ready;
  try {
    await ready;
  } catch (e) {
    if (captures.get(tabId) === c) stopCapture(tabId, true);
    throw e;
  }
  return { store, started: true };
}

async function enable(tabId: number, c: Capture, deadline: number, signal: AbortSignal): Promise<void> {
  const ms = () => left(deadline, 5_000);
  const frames = await chrome.webNavigation.getAllFrames({ tabId }).catch(() => null);
  for (const f of frames ?? []) rememberDoc(c, (f as { documentId?: string }).documentId, f.url);
  await attach(tabId, ms(), signal);
  const tree = await cdp<{ frameTree?: unknown }>(tabId, "Page.getFrameTree", {}, ms(), signal).catch(() => ({ frameTree: undefined }));
  c.store.seedFrames(tree.frameTree);
  await cdp(tabId, "Runtime.enable", {}, ms(), signal);
  await cdp(tabId, "Log.enable", {}, ms(), signal);
}

/**
 * Response bodies recorded from now on (`on`), or no longer: the Network domain is enabled only
 * between the two (SECURITY I-65). Turning off reads the bodies already waiting first.
 */
export function setBodies(tabId: number, on: boolean, deadline: number, signal: AbortSignal): Promise<void> {
  const c = captures.get(tabId);
  if (!c) return Promise.resolve();
  const op = c.bodiesOp.catch(() => undefined).then(async () => {
    if (captures.get(tabId) !== c || on === (c.store.bodies !== undefined)) return;
    if (on) {
      // The browser's own buffer of bodies is bounded too; request bodies are never sent to us.
      await cdp(tabId, "Network.enable", { maxTotalBufferSize: 8 * 1024 * 1024, maxResourceBufferSize: 256 * 1024, maxPostDataSize: 0 }, left(deadline, 5_000), signal);
      if (captures.get(tabId) === c) {
        c.store.startBodies();
        needRequests();
      } else void cdp(tabId, "Network.disable", {}, 3_000).catch(() => undefined);
      return;
    }
    await c.store.stopBodies();
    if (captures.get(tabId) !== c) return;
    needRequests();
    await cdp(tabId, "Network.disable", {}, 3_000).catch(() => undefined);
  });
  c.bodiesOp = op;
  return op;
}

/** Ends a tab's capture and drops what it kept; `disable` also turns its domains off. */
function stopCapture(tabId: number, disable: boolean): void {
  const c = captures.get(tabId);
  if (!c) return;
  captures.delete(tabId);
  const bodies = c.store.bodies !== undefined;
  c.store.dispose();
  c.docs.clear();
  needRequests();
  if (!disable) return;
  for (const m of [...(bodies ? ["Network.disable"] : []), "Log.disable", "Runtime.disable"]) void cdp(tabId, m, {}, 3_000).catch(() => undefined);
}

/** The session ended: its captures end with it. */
export function stopSessionCaptures(session: string): void {
  for (const [tabId, c] of [...captures]) if (c.session === session) stopCapture(tabId, true);
}

/** The daemon (re)connected: every session it had is over, so is every capture. */
export function stopAllCaptures(): void {
  for (const tabId of [...captures.keys()]) stopCapture(tabId, true);
}
