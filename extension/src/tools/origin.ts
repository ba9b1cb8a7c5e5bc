// Which origin a tab's or frame's document really has, and the checks every read passes against the
// person's allowlist: the quick one from chrome.webNavigation URLs (blank documents by the frame or
// opener that created them), and the decisive one from the document itself (self.origin in the
// isolated world, which the page cannot redefine). SECURITY I-15, I-40…I-43.

import { judgeDocument, judgeUrl, type Policy } from "../policy/policy.js";
import { originOf } from "../policy/pattern.js";
import { cdp, setDialogJudge } from "../cdp/debugger.js";
import { withDeadline } from "../cdp/deadline.js";
import { onNav, resolveTab, setFrameJudge } from "./browser.js";
import { toolError } from "./errors.js";
import { notAllowed } from "./gate.js";

// ---------- the policy these checks read ----------

let policySource: () => Promise<Policy> = async () => {
  throw toolError("origin_not_allowed", "no policy is loaded in the extension; nothing was read");
};

const INHERITS = /^about:(blank|srcdoc)([?#].*)?$/i;

/** A URL whose document takes its origin from whoever created it (about:blank, about:srcdoc, none yet). */
function inherits(url: string): boolean {
  return url === "" || INHERITS.test(url);
}

/**
 * SECURITY I-40: a document judged by what it reports itself. Its origin must be an http(s) origin
 * (opaque "null", file:, data: never pass, permissive policy included) and on the list; its URL
 * decides path rules when it belongs to that origin, otherwise (about:blank, srcdoc) the bare origin
 * is judged, so a path rule never lets a blank document through.
 */
export function docAllowed(p: Policy, origin: string, url: string): boolean {
  return judgeDocument(p, origin, url).allowed;
}

// ---------- effective URLs (the quick check) ----------

/** Popups by the frame that opened them (chrome.webNavigation.onCreatedNavigationTarget). */
const createdBy = new Map<number, { tabId: number; frameId: number }>();

/**
 * SECURITY I-15: the URL whose origin a document has, as chrome.webNavigation tells it. about:blank
 * and about:srcdoc inherit their creator's: a subframe's parent, a popup's opening frame (else its
 * opener tab). With nothing to inherit from, the document stays opaque (never allowed). This is
 * the fast first check; the document's own report decides (docAllowed).
 */
async function effectiveFrameUrl(tabId: number, frameId: number, hops = 0): Promise<string> {
  const f = await withDeadline(chrome.webNavigation.getFrame({ tabId, frameId }), 5_000, "getFrame").catch(() => null);
  if (!f) {
    if (frameId === 0) return effectiveTabUrl(tabId, hops);
    throw toolError("navigation_failed", `frame ${frameId} of tab ${tabId} is gone`);
  }
  const url = f.url ?? "";
  if (inherits(url) && hops < 8) {
    if (f.parentFrameId >= 0) return effectiveFrameUrl(tabId, f.parentFrameId, hops + 1);
    return openerUrl(tabId, url, hops);
  }
  return url;
}

async function openerUrl(tabId: number, url: string, hops: number): Promise<string> {
  const src = createdBy.get(tabId);
  if (src) {
    try {
      return await effectiveFrameUrl(src.tabId, src.frameId, hops + 1);
    } catch {
      return "opaque:opener-gone";
    }
  }
  const t = await chrome.tabs.get(tabId).catch(() => undefined);
  if (t?.openerTabId !== undefined) {
    try {
      return await effectiveFrameUrl(t.openerTabId, 0, hops + 1);
    } catch {
      return "opaque:opener-gone";
    }
  }
  return url || "about:blank";
}

/** The tab's top document's effective URL (the gate's view of the tab). */
async function effectiveTabUrl(tabId: number, hops = 0, tab?: chrome.tabs.Tab): Promise<string> {
  const t = tab ?? (await resolveTab(tabId));
  const url = t.url || t.pendingUrl || "";
  if (inherits(url) && hops < 8) return openerUrl(tabId, url, hops);
  return url;
}

// The top document's effective URL as the gate (or a landing check) last read it from the browser,
// kept until anything happens to that tab's top frame (a navigation starting, committing,
// completing, changing its URL, failing, the tab going): until then the browser would answer the
// same, so the call's page requests ask it nothing more. Only the quick check is spared: the
// document still proves its own origin in the page (SECURITY I-15, I-40).
const topJudged = new Map<number, string>();
let topEvents = 0;

/** Counts events of any tab's top frame: a reading taken across one is not remembered. */
export function topFrameEvents(): number {
  return topEvents;
}

/**
 * The tab's effective URL from `tab`, which the gate has just read from the browser, remembered for
 * expectOrigin unless a top frame had an event since `since` (topFrameEvents before the read).
 */
export async function judgedTabUrl(tabId: number, tab: chrome.tabs.Tab, since: number): Promise<string> {
  topJudged.delete(tabId);
  const url = await effectiveTabUrl(tabId, 0, tab);
  if (topEvents === since) topJudged.set(tabId, url);
  return url;
}

/** The origin the frame's document must report; refuses with origin_not_allowed (no host named) otherwise. */
async function expectOrigin(tabId: number, frameId: number): Promise<string> {
  const p = await policySource();
  const url = (frameId === 0 ? topJudged.get(tabId) : undefined) ?? (await effectiveFrameUrl(tabId, frameId));
  const origin = originOf(url);
  if (!origin || !judgeUrl(p, url).allowed) notAllowed(frameId === 0 ? `the page in tab ${tabId}` : "this frame's origin");
  return origin;
}

/** A URL the tool is about to open (history entries) must be on the list. */
export async function assertUrlAllowed(url: string, what: string): Promise<void> {
  if (!judgeUrl(await policySource(), url).allowed) notAllowed(what);
}

/** Every frame of the tab is allowed by its effective URL (the gate's pre-check for captures). */
export async function allFramesAllowed(tabId: number, p: Policy): Promise<boolean> {
  const frames = (await withDeadline(chrome.webNavigation.getAllFrames({ tabId }), 5_000, "getAllFrames").catch(() => null)) ?? [];
  for (const f of frames) {
    const url = inherits(f.url) ? await effectiveFrameUrl(tabId, f.frameId).catch(() => "") : f.url;
    if (!judgeUrl(p, url).allowed) return false;
  }
  return frames.length > 0;
}

// ---------- what documents report themselves (the decisive check) ----------

interface DocReport {
  frameId: number;
  documentId?: string;
  origin: string;
  url: string;
  title: string;
}

// Runs in the page's isolated world: self-contained, and out of the page's reach.
function selfReport(): { origin: string; url: string; title: string } {
  return { origin: self.origin, url: location.href, title: document.title };
}

/** The page did not answer in time: a busy page, not a page off the list. */
const NO_ANSWER = "no_answer";

/**
 * The top document's own report, or every frame's (allFrames). A frame that does not answer is
 * missing from the list; callers treat that as "cannot tell". NO_ANSWER when nothing answered
 * within `ms`; null when the report failed.
 */
async function reportDocs(tabId: number, allFrames: boolean, ms = 5_000): Promise<DocReport[] | null | typeof NO_ANSWER> {
  let late = false;
  const res = await withDeadline(
    chrome.scripting.executeScript({ target: allFrames ? { tabId, allFrames: true } : { tabId, frameIds: [0] }, world: "ISOLATED", func: selfReport }),
    ms,
    "document report",
    undefined,
    () => {
      late = true;
      return toolError("timeout", "document report");
    },
  ).catch(() => null);
  if (late) return NO_ANSWER;
  if (!res) return null;
  const out: DocReport[] = [];
  for (const r of res) {
    const v = r.result as { origin?: unknown; url?: unknown; title?: unknown } | null | undefined;
    if (!v || typeof v.origin !== "string" || typeof v.url !== "string") continue;
    out.push({ frameId: r.frameId, ...(r.documentId ? { documentId: r.documentId } : {}), origin: v.origin, url: v.url, title: typeof v.title === "string" ? v.title : "" });
  }
  return out;
}

/**
 * What the tab shows that the agent may see: its URL and title, taken from one view and judged
 * from that same view. A blank top document (about:blank, no URL yet) is judged, and named, by its
 * own report. Undefined when the tab is off the list or cannot be told (SECURITY I-14, I-42).
 */
export async function visibleTab(t: chrome.tabs.Tab, p: Policy): Promise<{ url: string; title: string } | undefined> {
  const url = t.url ?? "";
  if (t.id === undefined) return undefined;
  if (url === "" && t.pendingUrl) return originOf(t.pendingUrl) && judgeUrl(p, t.pendingUrl).allowed ? { url: t.pendingUrl, title: "" } : undefined;
  // A load in flight to another page: its title may already be that page's (or its URL).
  if (t.pendingUrl && t.pendingUrl !== url && !judgeUrl(p, t.pendingUrl).allowed) return undefined;
  if (inherits(url)) {
    const r = await reportDocs(t.id, false);
    const [d] = Array.isArray(r) ? r : [];
    if (!d || !docAllowed(p, d.origin, d.url)) return undefined;
    return { url: d.url, title: d.title };
  }
  if (!originOf(url) || !judgeUrl(p, url).allowed) return undefined;
  return { url, title: t.title ?? "" };
}

/**
 * The tab shows a blank page no one wrote into: its top document says it is about:blank with an
 * opaque origin (a new tab's first page, or about:blank reached through history). Nothing of it is
 * readable, and it stays off the list for every read (SECURITY I-40); this only lets a listing or
 * a history result say "blank page" instead of blaming an origin it does not have. A blank
 * document that inherited an origin (written by an opener) is not one.
 */
export async function isOpaqueBlank(t: chrome.tabs.Tab): Promise<boolean> {
  if (t.id === undefined || !BLANK_URL.test(t.url ?? "") || (t.pendingUrl && t.pendingUrl !== t.url)) return false;
  const r = await withDeadline(chrome.scripting.executeScript({ target: { tabId: t.id, frameIds: [0] }, world: "ISOLATED", func: selfReport }), 5_000, "document report").then(
    (res) => ({ report: res[0]?.result as { origin?: unknown; url?: unknown } | undefined }),
    (e: unknown) => ({ error: e instanceof Error ? e.message : String(e) }),
  );
  // A blank page the browser opened (a new tab, or history back to it) has an opaque origin with
  // no creator, and the browser lets no extension into it: that refusal is the answer, for a tab
  // no page opened (a popup's blank document may be its opener's to write).
  if ("error" in r) return t.openerTabId === undefined && !createdBy.has(t.id) && /cannot access contents of url "?about:blank/i.test(r.error);
  return r.report?.origin === "null" && typeof r.report.url === "string" && BLANK_URL.test(r.report.url);
}

/** about:blank, with any query or fragment. */
export const BLANK_URL = /^about:blank([?#].*)?$/i;

/**
 * SECURITY I-15: after an action, the page it left the tab on (redirects included) must still be
 * on the list; otherwise the call fails with origin_not_allowed and nothing of the page is read.
 * Returns the URL and title the agent may be told, from the same view that was judged. `tab`: a
 * view of the tab taken after the action ended (nothing awaited since), saving a lookup.
 */
export async function assertLanding(tabId: number, tab?: chrome.tabs.Tab): Promise<{ url: string; title: string }> {
  const p = await policySource();
  const v = await visibleTab(tab ?? (await resolveTab(tabId)), p);
  if (!v) throw toolError("origin_not_allowed", "the action left the tab on an origin that is not on the person's allowlist; nothing was read from it");
  return v;
}

/** A landing judged by assertLanding, with the count of top-frame events before its view was read. */
export interface Landing {
  url: string;
  title: string;
  events: number;
}

/** assertLanding from a fresh view of the tab, noting topFrameEvents() before it was read. */
export async function judgeLanding(tabId: number): Promise<Landing> {
  const events = topEvents;
  const t = await resolveTab(tabId);
  const v = await assertLanding(tabId, t);
  // The view just judged is the one the next call's gate would read, while nothing happens to the
  // tab's top frame (a blank document's inherited origin is not remembered: the gate works it out).
  const url = t.url ?? "";
  if (topEvents === events && url !== "" && !inherits(url)) topJudged.set(tabId, url);
  return { ...v, events };
}

/** The landing still holds: no top frame of any tab had an event since its view was read. */
export function stillLanded(l: Landing | undefined): l is Landing {
  return l !== undefined && l.events === topEvents;
}

// ---------- captures ----------

/**
 * How long a capture's frame check waits for the page. A very long page can keep its renderer busy
 * for seconds; that is no reason to call it foreign, so the wait is generous and its end is said.
 */
const JUDGE_MS = 15_000;

/**
 * Every frame of the tab by its own report: all allowed, else null (a frame that does not answer
 * included). NO_ANSWER when the page did not answer at all within JUDGE_MS.
 */
async function judgeFrames(tabId: number, p: Policy): Promise<{ top: string; docs: Set<string> } | null | typeof NO_ANSWER> {
  const [frames, reports] = await Promise.all([
    withDeadline(chrome.webNavigation.getAllFrames({ tabId }), 5_000, "getAllFrames").catch(() => null),
    reportDocs(tabId, true, JUDGE_MS),
  ]);
  if (reports === NO_ANSWER) return NO_ANSWER;
  if (!frames?.length || !reports) return null;
  for (const r of reports) if (!docAllowed(p, r.origin, r.url)) return null;
  for (const f of frames) if (!reports.some((r) => r.frameId === f.frameId)) return null;
  const top = reports.find((r) => r.frameId === 0)?.documentId;
  if (!top) return null;
  return { top, docs: new Set(reports.map((r) => r.documentId ?? "")) };
}

/**
 * SECURITY I-42: a capture is judged after it is taken. Start the watch before anything of the
 * capture is computed; `check` after the pixels are in. It passes only when no frame of the tab
 * committed a navigation meanwhile, the top document is the one judged at the start, no document
 * appeared that was not judged then, and every frame, by its own report (blank ones included), is
 * on the list at both ends. Otherwise the pixels must be dropped.
 */
export async function watchCapture(tabId: number): Promise<{ check(): Promise<void>; interrupted: Promise<never>; stop(): void }> {
  let dirty = false;
  const refusal = () =>
    toolError("origin_not_allowed", "the page showed, or may have shown, a frame whose origin is not on the person's allowlist while it was captured; the capture was dropped");
  let interrupt: (e: Error) => void = () => undefined;
  // A capture across a navigation can stall in the browser: a commit ends it at once.
  const interrupted = new Promise<never>((_, reject) => (interrupt = reject));
  interrupted.catch(() => undefined);
  const off = onNav((ev) => {
    if (ev.tabId === tabId && (ev.kind === "committed" || ev.kind === "removed")) {
      dirty = true;
      interrupt(refusal());
    }
  });
  const refuse = (j?: unknown): never => {
    // Fails closed either way; a page too busy to answer is told as such, not as a foreign frame.
    if (j === NO_ANSWER) throw toolError("timeout", `the page did not answer the check of its frames within ${JUDGE_MS / 1000} s (busy with a very long page?); nothing was captured`);
    throw refusal();
  };
  try {
    const p = await policySource();
    const judged = await judgeFrames(tabId, p);
    const before = judged && judged !== NO_ANSWER ? judged : refuse(judged);
    return {
      async check() {
        const judgedAfter = await judgeFrames(tabId, p);
        const after = judgedAfter === NO_ANSWER ? refuse(judgedAfter) : judgedAfter;
        // Read `dirty` last: a commit during the capture may be reported only after it.
        if (!after || after.top !== before.top || [...after.docs].some((d) => !before.docs.has(d)) || dirty) refuse();
      },
      interrupted,
      stop: off,
    };
  } catch (e) {
    off();
    throw e;
  }
}

// ---------- dialogs ----------

interface CdpFrame {
  frame: { id: string; url: string; securityOrigin?: string };
  childFrames?: CdpFrame[];
}

function findFrame(t: CdpFrame | undefined, id: string): CdpFrame["frame"] | undefined {
  if (!t) return undefined;
  if (t.frame.id === id) return t.frame;
  for (const c of t.childFrames ?? []) {
    const f = findFrame(c, id);
    if (f) return f;
  }
  return undefined;
}

/**
 * SECURITY I-41: a dialog is the agent's only when the frame that raised it is on the list: an
 * http(s) frame by its URL, a blank one by the security origin the browser gives for it. Anything
 * that cannot be told is foreign.
 */
async function judgeDialogFrame(tabId: number, url: string, cdpFrameId: string | undefined): Promise<boolean> {
  const p = await policySource();
  if (!inherits(url)) return !!originOf(url) && judgeUrl(p, url).allowed;
  if (!cdpFrameId) return false;
  const tree = await cdp<{ frameTree: CdpFrame }>(tabId, "Page.getFrameTree", {}, 1_000).catch(() => null);
  const f = findFrame(tree?.frameTree, cdpFrameId);
  return !!f?.securityOrigin && docAllowed(p, f.securityOrigin, "");
}

// ---------- wiring ----------

let installed = false;

/** Installs the judges (engine calls, dialogs) on the person's policy; called once at worker start. */
export function installOrigin(policy: () => Promise<Policy>): void {
  policySource = policy;
  setFrameJudge({
    expect: expectOrigin,
    allowed: async (origin, url) => docAllowed(await policySource(), origin, url),
  });
  setDialogJudge(judgeDialogFrame);
  if (installed) return;
  installed = true;
  chrome.webNavigation.onCreatedNavigationTarget.addListener((d) => {
    createdBy.set(d.tabId, { tabId: d.sourceTabId, frameId: d.sourceFrameId });
  });
  chrome.tabs.onRemoved.addListener((tabId) => createdBy.delete(tabId));
  const changed = (tabId: number) => {
    topEvents++;
    topJudged.delete(tabId);
  };
  onNav((ev) => {
    if (ev.frameId === 0) changed(ev.tabId);
  });
  // A tab can show another document without a top-frame navigation event reaching the worker (a
  // prerendered page activated, a tab replaced): its URL changing is enough to read it again.
  chrome.tabs.onUpdated.addListener((tabId, change) => {
    if (change.url !== undefined || change.status === "loading") changed(tabId);
  });
  chrome.tabs.onReplaced.addListener((added, removed) => {
    changed(added);
    changed(removed);
  });
}
