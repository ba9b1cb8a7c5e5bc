// The worker's side of every page operation: which tab, the page engine (page.js) injected with
// chrome.scripting into the ISOLATED world, refs resolved to their (frame, document), navigation
// watching through chrome.webNavigation, and the races that turn a dialog, a navigation or a closed
// tab into a typed error instead of a hang.

import { PROTOCOL, type FramePlaceholder, type PageError, type Reply } from "../page/types.js";
import type { ArmSpec, Block } from "../guard/decide.js";
import type { GuardApi } from "../guard/index.js";
import { attach, dialogOf, waitDialog, type DialogInfo } from "../cdp/debugger.js";
import { abortError, left, withDeadline } from "../cdp/deadline.js";
import { classifyChromeError, isErrorCode, toolError, ToolError } from "./errors.js";
import { TabLocks } from "./lock.js";
import { parseRef, RefStore } from "./refstore.js";
import { outbound } from "./secrets.js";

export const ENGINE_FILE = "page.js";
const ENGINE_MS = 15_000;

let refStore: RefStore | undefined;
const locks = new TabLocks();

/** How every page-engine call is judged (tools/origin.ts): the frame before, the document's own answer after. */
export interface FrameJudge {
  /** The origin the frame's document must have for the call to run; refuses when it is off the list. */
  expect(tabId: number, frameId: number): Promise<string>;
  /** The answering document's own origin and URL are on the list. */
  allowed(origin: string, url: string): Promise<boolean>;
}

/**
 * SECURITY I-15/I-40: every page-engine call is judged where it runs. The worker's quick check
 * (chrome.webNavigation) names the origin it allows; the engine refuses unless its document's own
 * origin is that one, and the origin its reply carries is judged again before the answer is used.
 * Fails closed until the service worker installs the real judge.
 */
let frameJudge: FrameJudge = {
  expect: async () => {
    throw toolError("origin_not_allowed", "no policy is loaded in the extension; nothing was read");
  },
  allowed: async () => false,
};
export function setFrameJudge(j: FrameJudge): void {
  frameJudge = j;
}

function refs(): RefStore {
  refStore ??= new RefStore({
    get: async (k) => (await chrome.storage.session.get(k))[k],
    set: (k, v) => chrome.storage.session.set({ [k]: v }),
    remove: (k) => chrome.storage.session.remove(k),
  });
  return refStore;
}

type NavListener = (ev: NavEvent) => void;
export interface NavEvent {
  tabId: number;
  frameId: number;
  kind: "started" | "committed" | "completed" | "sameDocument" | "error" | "removed";
  url?: string;
  error?: string;
  /** When the browser raised it, in ms since the epoch (webNavigation's timeStamp). */
  at?: number;
  /** An error's document: the one whose load failed (a document's own load, when it had committed). */
  documentId?: string;
}
const navListeners = new Set<NavListener>();
let installed = false;

/** Registers the chrome.* listeners this module needs; called once at worker start. */
export function installBrowser(): void {
  if (installed) return;
  installed = true;
  const emit = (ev: NavEvent) => {
    for (const l of navListeners) l(ev);
  };
  // No URL for a start: it may be a page off the list, and only whether one began is used.
  chrome.webNavigation.onBeforeNavigate.addListener((d) => emit({ tabId: d.tabId, frameId: d.frameId, kind: "started", at: d.timeStamp }));
  chrome.webNavigation.onCommitted.addListener((d) => emit({ tabId: d.tabId, frameId: d.frameId, kind: "committed", url: d.url, at: d.timeStamp }));
  chrome.webNavigation.onCompleted.addListener((d) => emit({ tabId: d.tabId, frameId: d.frameId, kind: "completed", url: d.url, at: d.timeStamp }));
  chrome.webNavigation.onHistoryStateUpdated.addListener((d) => emit({ tabId: d.tabId, frameId: d.frameId, kind: "sameDocument", url: d.url, at: d.timeStamp }));
  chrome.webNavigation.onReferenceFragmentUpdated.addListener((d) =>
    emit({ tabId: d.tabId, frameId: d.frameId, kind: "sameDocument", url: d.url, at: d.timeStamp }),
  );
  chrome.webNavigation.onErrorOccurred.addListener((d) =>
    emit({ tabId: d.tabId, frameId: d.frameId, kind: "error", url: d.url, error: d.error, at: d.timeStamp, ...(d.documentId ? { documentId: d.documentId } : {}) }),
  );
  chrome.tabs.onRemoved.addListener((tabId) => {
    emit({ tabId, frameId: 0, kind: "removed" });
    void refs().drop(tabId);
    lastSnapshots.delete(tabId);
  });
}

export function onNav(l: NavListener): () => void {
  navListeners.add(l);
  return () => navListeners.delete(l);
}

/** The given tab (checked) or the active tab of the last focused window. */
export async function resolveTab(tabId: number | undefined): Promise<chrome.tabs.Tab> {
  if (tabId !== undefined) {
    try {
      return await withDeadline(chrome.tabs.get(tabId), 5_000, "tabs.get");
    } catch (e) {
      if (e instanceof ToolError && e.code === "timeout") throw e;
      throw toolError("no_tab", `no tab with id ${tabId}`);
    }
  }
  const [t] = await chrome.tabs.query({ active: true, lastFocusedWindow: true });
  const tab = t ?? (await chrome.tabs.query({ active: true }))[0];
  if (!tab || tab.id === undefined) throw toolError("no_tab", "no active tab; pass tabId", "Call tabs to list open tabs, or navigate to open one.");
  return tab;
}

/**
 * The call's tab id: the tab the gate has just resolved and judged for this call (it set
 * ctx.gate.tabId), without asking the browser again; else resolved here.
 */
export async function callTab(tabId: number | undefined, ctx: { gate?: { tabId?: number } }): Promise<number> {
  const g = ctx.gate?.tabId;
  if (g !== undefined && (tabId === undefined || tabId === g)) return g;
  return (await resolveTab(tabId)).id as number;
}

export async function tabIdOf(tabId: number | undefined): Promise<number> {
  const t = await resolveTab(tabId);
  return t.id as number;
}

// ---------- navigation watching ----------

export interface NavWatch {
  /** Resolves on the top frame's next load completion (or same-document navigation); rejects on a load error or closed tab. */
  done: Promise<{ url?: string; sameDocument: boolean }>;
  committed(): boolean;
  /** The browser began a navigation of the top frame (it may not commit: a download, a 204). */
  started(): boolean;
  /** The watched navigation finished (loaded, same-document, or failed). */
  finished(): boolean;
  /** A navigation to another document committed (not a same-document one), loaded or not. */
  left(): boolean;
  /** Resolves (never rejects) once started() or finished() turns true: no need to ask again. */
  moved: Promise<void>;
  stop(): void;
}

/** A URL that loads a blank document (about:blank, about:srcdoc), not a page of any site. */
const BLANK = /^about:(blank|srcdoc)([?#].*)?$/i;

/**
 * Watches the tab's top frame from now on. Call before starting the navigation. With tabId
 * undefined the watch buffers every tab's events until bind(tabId) (a tab being created).
 * A load completion counts only after a commit was seen, so the end of an earlier load is not
 * mistaken for the navigation's. `toPage`: the navigation goes to a page (not a blank URL), so a
 * blank document's commit, load or abort is someone else's: a new tab's initial about:blank, whose
 * events can reach the worker after the watch started (a loaded machine), must neither end the
 * wait while the tab still shows that blank document nor fail it. For the same reason an event the
 * browser raised before the watch started is not the watched navigation's. `from`: the document the
 * tab showed before (topDocument): a page still loading when the navigation began has its own load
 * aborted by it, and that abort (that document's, at that document's URL) is not the watched
 * navigation's failure. A failure of the watched navigation before it commits may carry the same
 * document id, never that URL unless it goes to the very same URL.
 */
export function watchNav(tabId: number | undefined, o: { toPage?: boolean; from?: TopDocument } = {}): NavWatch & { bind(tabId: number): void } {
  const armedAt = Date.now();
  let committed = false;
  let left = false;
  let started = false;
  let finished = false;
  let off: () => void = () => undefined;
  let buffer: NavEvent[] | null = tabId === undefined ? [] : null;
  let handle: (ev: NavEvent) => void = () => undefined;
  let move: () => void = () => undefined;
  const moved = new Promise<void>((r) => (move = r));
  const done = new Promise<{ url?: string; sameDocument: boolean }>((resolve, reject) => {
    off = onNav((ev) => {
      if (buffer) buffer.push(ev);
      else handle(ev);
    });
    handle = (ev) => {
      if (ev.tabId !== tabId || ev.frameId !== 0) return;
      if (ev.at !== undefined && ev.at < armedAt) return;
      if (o.toPage && (ev.kind === "committed" || ev.kind === "completed" || ev.kind === "error") && BLANK.test(ev.url ?? "")) return;
      if (ev.kind === "error" && o.from !== undefined && ev.documentId === o.from.documentId && ev.url === o.from.url) return;
      if (ev.kind === "started") {
        started = true;
        move();
      } else if (ev.kind === "committed") {
        committed = left = true;
        move();
      } else if (ev.kind === "completed") {
        if (!committed) return;
        finished = true;
        off();
        resolve({ url: ev.url, sameDocument: false });
      } else if (ev.kind === "sameDocument") {
        committed = true;
        finished = true;
        off();
        resolve({ url: ev.url, sameDocument: true });
      } else if (ev.kind === "error") {
        // A navigation superseded by another one reports ERR_ABORTED; keep waiting for the new one.
        if (ev.error === "net::ERR_ABORTED" && committed) return;
        finished = true;
        off();
        // SECURITY I-43: no URL: a redirect may have ended the load on a page off the list.
        reject(toolError("navigation_failed", `the page failed to load (${netError(ev.error)})`));
      } else if (ev.kind === "removed") {
        finished = true;
        off();
        reject(toolError("no_tab", `tab ${tabId} was closed`));
      }
    };
  });
  done.then(move, move);
  return {
    done,
    moved,
    committed: () => committed,
    started: () => started || committed,
    finished: () => finished,
    left: () => left,
    stop: () => off(),
    bind(id: number) {
      tabId = id;
      const b = buffer ?? [];
      buffer = null;
      for (const ev of b) handle(ev);
    },
  };
}

export interface TopDocument {
  documentId: string;
  url: string;
}

/** The tab's top document now (undefined when the browser cannot tell): watchNav's `from`. */
export async function topDocument(tabId: number): Promise<TopDocument | undefined> {
  try {
    const f = await withDeadline(chrome.webNavigation.getFrame({ tabId, frameId: 0 }), 2_000, "webNavigation.getFrame");
    return f?.documentId && f.url ? { documentId: f.documentId, url: f.url } : undefined;
  } catch {
    return undefined;
  }
}

/** A net error name ("net::ERR_EMPTY_RESPONSE"), never anything longer Chrome might add. */
function netError(e: string | undefined): string {
  const m = /net::ERR_[A-Z0-9_]+/.exec(e ?? "");
  return m ? m[0] : "failed";
}

/**
 * Waits for a navigation the caller started to finish loading. A load that commits but does not
 * finish in time is reported (loaded:false), not failed: the page is there, maybe still busy.
 */
export async function awaitLoad(
  w: NavWatch,
  ms: number,
  signal: AbortSignal,
): Promise<{ loaded: boolean; url?: string; sameDocument?: boolean }> {
  try {
    const r = await withDeadline(w.done, ms, "page load", signal);
    return { loaded: true, ...r };
  } catch (e) {
    if (e instanceof ToolError && e.code === "timeout" && w.committed()) return { loaded: false };
    if (e instanceof ToolError && e.code === "timeout") {
      throw toolError("timeout", `the page did not start loading within ${ms} ms`);
    }
    throw e;
  } finally {
    w.stop();
  }
}

// ---------- the page engine ----------

export interface EngineOpts {
  signal: AbortSignal;
  deadline: number;
  /** Cap for this one call (default 15 s), within the tool's deadline. */
  ms?: number;
  frameId?: number;
  /** The document the ref came from: the engine refuses with stale_ref on another one. */
  docId?: string;
  /**
   * Chrome's id of the one document the call may reach: the arguments go to it or nowhere, so a
   * frame that navigated meanwhile never receives them (a secret's value, SECURITY I-69).
   */
  documentId?: string;
  /**
   * SECURITY I-36: the document arms the effect guard with this spec in the same injection, runs
   * the call and disarms (tools/effects.ts rides an input action on it); NotRidden when it cannot.
   */
  arm?: ArmSpec;
}

/** What the guard of a document armed in the call's own injection reported (EngineOpts.arm). */
export interface Ridden {
  blocks: Block[];
  /** The top document began leaving while armed; absent when it cannot tell. */
  left?: boolean;
}

export interface EngineReply<T> {
  value: T;
  docId: string;
  frameId: number;
  /** The answering document's own origin and URL, as judged (SECURITY I-40). */
  origin: string;
  url: string;
  /** With EngineOpts.arm: what the guard reported. */
  ridden?: Ridden;
}

/**
 * The call could not arm the guard in its own injection (not a top document alone in its tab, or
 * no guard there): nothing ran; arm every frame and call again.
 */
export class NotRidden extends Error {
  override name = "NotRidden";
}

/**
 * How a dialog is named to the agent. SECURITY I-41: a dialog raised by a document off the list is
 * named by its type only; the agent cannot answer it.
 */
export function dialogText(d: DialogInfo): string {
  if (d.foreign) return `a ${d.type} dialog raised by a frame whose origin is not on the person's allowlist (only the person can answer it)`;
  return `a ${d.type} dialog: ${JSON.stringify(d.message)}`;
}

const FOREIGN_DIALOG_HINT = "Only the person can answer this dialog: call handoff and ask them to.";

/** Thrown when a JavaScript dialog opens while an engine call or CDP input runs. */
export class DialogRaised extends ToolError {
  constructor(readonly dialog: DialogInfo) {
    super("dialog_blocking", `${dialogText(dialog)} opened`, dialog.foreign ? FOREIGN_DIALOG_HINT : undefined, { dialog });
  }
}

// Runs in the page (ISOLATED world); must be self-contained. An engine of another protocol (left
// in the document by an earlier build of the extension) counts as missing: injecting page.js
// replaces it, so no engine with another ref format ever answers. With `arm`, the guard of the same
// world is armed around the call, in a top document with no frame in its document tree only (the
// worker has found none in the tab's frame tree either); else nothing runs.
async function runner(method: string, args: unknown, protocol: number, arm: ArmSpec | null): Promise<unknown> {
  const w = globalThis as { __torii?: { protocol?: number; call(m: string, a: unknown): unknown }; __toriiGuard?: GuardApi };
  const t = w.__torii;
  if (!t || typeof t.call !== "function" || t.protocol !== protocol) return { __toriiMissing: true };
  if (!arm) return t.call(method, args);
  const gd = w.__toriiGuard;
  if (!gd || typeof gd.left !== "function" || window.parent !== window || window.length > 0) return { __toriiUnarmed: true };
  gd.arm(arm);
  const reply = await t.call(method, args);
  const left = gd.left(arm.token);
  const ridden = { blocks: gd.disarm(arm.token), ...(left !== undefined ? { left } : {}) };
  return { reply, ridden };
}

/** Fails at once when a dialog is already open on the tab (everything behind it would hang). */
export function checkNoDialog(tabId: number): void {
  const d = dialogOf(tabId);
  if (d) throw toolError("dialog_blocking", `${dialogText(d)} is open`, d.foreign ? FOREIGN_DIALOG_HINT : undefined, { dialog: d });
}

/**
 * Races an in-page or CDP operation against: the deadline, cancellation, a dialog opening, the
 * frame navigating (for engine calls) and the tab closing.
 */
export async function guarded<T>(
  tabId: number,
  what: string,
  op: Promise<T>,
  o: { signal: AbortSignal; ms: number; frameId?: number; watchNavigation?: boolean },
): Promise<T> {
  op.catch(() => undefined);
  const dlg = waitDialog(tabId);
  let offNav: () => void = () => undefined;
  const nav = new Promise<never>((_, reject) => {
    offNav = onNav((ev) => {
      if (ev.tabId !== tabId) return;
      if (ev.kind === "removed") reject(toolError("no_tab", `tab ${tabId} closed during ${what}`));
      else if (o.watchNavigation && ev.kind === "committed" && ev.frameId === (o.frameId ?? 0)) {
        // SECURITY I-43: where it went is not said; it may be off the list.
        reject(toolError("navigation_failed", `the page navigated during ${what}`));
      }
    });
  });
  const dialog = dlg.promise.then((d) => {
    throw new DialogRaised(d);
  });
  try {
    return await withDeadline(Promise.race([op, nav, dialog]), o.ms, what, o.signal);
  } finally {
    dlg.cancel();
    offNav();
  }
}

async function execute(tabId: number, frameId: number, method: string, args: unknown, documentId?: string, arm?: ArmSpec): Promise<unknown> {
  const target = documentId ? { tabId, documentIds: [documentId] } : { tabId, frameIds: [frameId] };
  try {
    const run = { target, world: "ISOLATED" as const, func: runner, args: [method, args, PROTOCOL, arm ?? null] as [string, unknown, number, ArmSpec | null] };
    let [r] = await chrome.scripting.executeScript(run);
    if (r && (r.result as { __toriiMissing?: boolean } | undefined)?.__toriiMissing) {
      await chrome.scripting.executeScript({ target, world: "ISOLATED", files: [ENGINE_FILE] });
      [r] = await chrome.scripting.executeScript(run);
    }
    if (!r) throw toolError("navigation_failed", `frame ${frameId} of tab ${tabId} is gone`);
    return r.result;
  } catch (e) {
    const te = e instanceof ToolError ? e : classifyChromeError(e instanceof Error ? e.message : String(e));
    // "Frame with ID 0 was removed" also means the whole tab went away: say no_tab then.
    if (te.code === "navigation_failed" && !(await tabExists(tabId))) throw toolError("no_tab", `tab ${tabId} was closed`);
    throw te;
  }
}

async function tabExists(tabId: number): Promise<boolean> {
  try {
    await withDeadline(chrome.tabs.get(tabId), 2_000, "tabs.get");
    return true;
  } catch {
    return false;
  }
}

function pageError(e: PageError): ToolError {
  return toolError(isErrorCode(e.code) ? e.code : "internal", e.message, e.hint);
}

/** Calls __torii.call(method, args) in the tab's frame with the tab's ref counter. */
export async function engine<T>(tabId: number, method: string, args: Record<string, unknown>, o: EngineOpts): Promise<EngineReply<T>> {
  if (o.signal.aborted) throw abortError(o.signal, method);
  checkNoDialog(tabId);
  const frameId = o.frameId ?? 0;
  // The debugger gives dialog events; a page we may not debug (conflict, restricted) still works.
  await attach(tabId, left(o.deadline, 5_000), o.signal).catch((e: unknown) => {
    if (e instanceof ToolError && (e.code === "no_tab" || e.code === "cancelled")) throw e;
  });
  const origin = await frameJudge.expect(tabId, frameId);
  const ms = left(o.deadline, o.ms ?? ENGINE_MS);
  const release = await locks.acquire(tabId, ms, o.signal);
  let released = false;
  const rel = () => {
    if (!released) {
      released = true;
      release();
    }
  };
  try {
    const store = refs();
    // SECURITY I-63: a tag no document has had; the answering document takes it only if it has
    // none yet. Given back only when the reply shows it was not taken.
    const offered = await store.offer();
    // SECURITY I-77: the secrets bound to this origin, which the document masks before anything
    // is cut, escaped or compared with a query.
    const mask = await outbound.forOrigin(origin);
    const callArgs = { ...args, refTag: offered, origin, ...(o.docId ? { docId: o.docId } : {}), ...(mask ? { mask } : {}) };
    let ridden: Ridden | undefined;
    const op = execute(tabId, frameId, method, callArgs, o.documentId, o.arm).then(async (raw) => {
      if (o.arm && raw && typeof raw === "object") {
        if ("__toriiUnarmed" in raw) throw new NotRidden();
        ({ reply: raw, ridden } = raw as { reply: unknown; ridden?: Ridden });
      }
      const r = raw as Reply<T> | undefined;
      if (!r || typeof r !== "object" || typeof (r as { ok?: unknown }).ok !== "boolean") {
        // The engine always answers; no answer means its document went away mid-call (Chrome
        // resolves the injection with no result when the frame navigates or unloads).
        if (r === undefined || r === null) throw toolError("navigation_failed", `the page navigated or unloaded during ${method}`);
        throw toolError("internal", `page engine gave no reply to ${method}`);
      }
      if (r.refTag !== offered) store.release(offered);
      if (typeof r.refTag === "string" && parseRef(r.refTag + "1") && typeof r.docId === "string") {
        await store.record(tabId, frameId, r.docId, r.refTag);
      }
      return r;
    });
    // If a dialog interrupts, the call finishes later; release the tab then.
    op.finally(rel).catch(() => undefined);
    const r = await guarded(tabId, method, op, { signal: o.signal, ms, frameId, watchNavigation: true });
    // The answer is the document's own: judged by the origin it reports, else dropped unread.
    if (typeof r.origin !== "string" || !(await frameJudge.allowed(r.origin, typeof r.url === "string" ? r.url : ""))) {
      throw toolError("origin_not_allowed", "the document that answered is not on the person's allowlist; nothing was read");
    }
    if (!r.ok) throw pageError(r.error);
    return { value: r.value, docId: r.docId, frameId, origin: r.origin, url: typeof r.url === "string" ? r.url : "", ...(ridden ? { ridden } : {}) };
  } catch (e) {
    // On DialogRaised the page-side call is still blocked behind the dialog; the tab is released
    // so handle_dialog can run (later engine calls refuse with dialog_blocking meanwhile).
    rel();
    throw e;
  }
}

/** A target named by ref (resolved to its frame and document) or by CSS selector (top frame). */
export interface Target {
  ref?: string;
  selector?: string;
}

export interface Resolved {
  frameId: number;
  docId?: string;
  args: { ref?: string; selector?: string };
}

export async function resolveTarget(tabId: number, t: Target, required = true): Promise<Resolved> {
  if (t.ref !== undefined) {
    if (parseRef(t.ref) === undefined) throw toolError("invalid_argument", `ref: "${t.ref}" is not a ref (letters then a number, e.g. b12)`);
    const r = await refs().lookup(tabId, t.ref);
    if (!r) throw toolError("stale_ref", `ref ${t.ref} was not issued on tab ${tabId} (another tab, or expired)`);
    return { frameId: r.frameId, docId: r.docId, args: { ref: t.ref } };
  }
  if (t.selector !== undefined) return { frameId: 0, args: { selector: t.selector } };
  if (required) throw toolError("invalid_argument", "give ref or selector");
  return { frameId: 0, args: {} };
}

// ---------- frames ----------

// Runs in a parent frame: the content-box origin of the iframe hosting frame `childId`, found by
// chrome.runtime.getFrameId, else as the nth iframe whose src is `url`.
function iframeOrigin(childId: number, url: string, nth: number): { x: number; y: number } | null {
  const rt = (globalThis as { chrome?: { runtime?: { getFrameId?(e: Element): number } } }).chrome?.runtime;
  const seen: Element[] = [];
  const walk = (root: Document | ShadowRoot) => {
    for (const el of Array.from(root.querySelectorAll("*"))) {
      if (el.tagName === "IFRAME" || el.tagName === "FRAME") seen.push(el);
      if (el.shadowRoot) walk(el.shadowRoot);
    }
  };
  walk(document);
  const idOf = (f: Element): number => {
    try {
      return rt?.getFrameId?.(f) ?? -1;
    } catch {
      return -1;
    }
  };
  let pick = seen.find((f) => idOf(f) === childId);
  if (!pick) {
    const same = seen.filter((f) => (f as HTMLIFrameElement).src === url);
    pick = same[nth] ?? (same.length === 1 ? same[0] : undefined);
  }
  for (const f of pick ? [pick] : []) {
    const r = f.getBoundingClientRect();
    const cs = getComputedStyle(f);
    return {
      x: r.left + f.clientLeft + parseFloat(cs.paddingLeft || "0"),
      y: r.top + f.clientTop + parseFloat(cs.paddingTop || "0"),
    };
  }
  return null;
}

/** Offset of frame `frameId`'s viewport within the tab's viewport (0,0 for the top frame). */
export async function frameOffset(tabId: number, frameId: number, deadline: number, signal: AbortSignal): Promise<{ x: number; y: number }> {
  let x = 0;
  let y = 0;
  let id = frameId;
  for (let hops = 0; id !== 0 && hops < 8; hops++) {
    const info = await withDeadline(chrome.webNavigation.getFrame({ tabId, frameId: id }), left(deadline, 5_000), "getFrame", signal);
    if (!info) throw toolError("navigation_failed", `frame ${id} of tab ${tabId} is gone`);
    const parent = info.parentFrameId;
    const all = (await withDeadline(chrome.webNavigation.getAllFrames({ tabId }), left(deadline, 5_000), "getAllFrames", signal)) ?? [];
    const nth = all
      .filter((f) => f.parentFrameId === parent && f.url === info.url)
      .map((f) => f.frameId)
      .sort((a, b) => a - b)
      .indexOf(id);
    const [r] = await withDeadline(
      chrome.scripting.executeScript({ target: { tabId, frameIds: [parent] }, world: "ISOLATED", func: iframeOrigin, args: [id, info.url, nth] }),
      left(deadline, 5_000),
      "iframe position",
      signal,
    );
    const o = r?.result as { x: number; y: number } | null | undefined;
    if (!o) throw toolError("not_visible", `cannot locate the iframe of frame ${id}`);
    x += o.x;
    y += o.y;
    id = parent;
  }
  return { x, y };
}

// ---------- snapshots kept for diff and cursors ----------

export interface KeptSnapshot {
  id: string;
  key: string;
  docId: string;
  lines: string[];
}
export const lastSnapshots = new Map<number, KeptSnapshot>();

export type { FramePlaceholder };
