// The browser side of captures: chrome.webRequest events routed to the running capture of their
// tab, frame and document, and the navigation and tab events that stop one. webRequest, not the
// debugger's Network domain: it sees the headers the browser really sends (Cookie included),
// needs no debugger session (other tools' CDP use is untouched) and carries each request's
// documentId, so a request of any other document is never recorded. The listeners are shared with
// network_tail (requests.ts) and on only on the tabs one of them captures. A request's cookies are
// told apart by the browser's cookie jar (chrome.cookies), read as its headers are recorded.

import { captureKeeps, judgeUrl, normalizePolicy, type Policy } from "../../policy/policy.js";
import { originOf } from "../../policy/pattern.js";
import { POLICY_KEY } from "../safety.js";
import type { Capture, StopReason } from "./model.js";
import { setNeed, type Need, type RequestSink } from "./requests.js";
import type { JarCookie } from "./credentials.js";
import { headersFor, onDone, onRedirect, onRequest, onResponse, putHeaders, stopCapture, type Judge } from "./record.js";
import { allCaptures, budget, changed, forgetSession, loadCaptures } from "./store.js";

let policy: Policy | undefined;
/** Running captures by tab. */
const running = new Map<number, Capture[]>();

/**
 * SECURITY I-67, I-14, I-75: a destination's URL is shown only when allowed, its headers only with
 * its own capture switch, its cookies, Authorization and body only with the read tools' switches.
 */
export const judgeDestination: Judge = (url) => {
  if (!policy) return { allowed: false, sensitive: false, bodies: false, cookies: "none", credentials: false };
  return captureKeeps(judgeUrl(policy, url));
};

/** SECURITY I-75: a cookie value may be kept for this request, so its cookies must be told apart. */
function needsJar(url: string, headers: { name: string }[] | undefined): boolean {
  return judgeDestination(url).cookies !== "none" && headers?.some((h) => h.name.toLowerCase() === "cookie") === true;
}

export function setCapturePolicy(p: Policy): void {
  policy = p;
}

function match(d: { tabId: number; frameId: number; documentId?: string }): Capture[] {
  const cs = running.get(d.tabId);
  if (!cs) return [];
  return cs.filter((c) => c.frameId === d.frameId && d.documentId !== undefined && c.documentId === d.documentId);
}

/** Capture sessions' share of the worker's webRequest listeners (requests.ts). */
const sink: RequestSink = {
  before(d) {
    for (const c of match(d)) {
      onRequest(c, { requestId: d.requestId, url: d.url, method: d.method, type: d.type, timeStamp: d.timeStamp, requestBody: d.requestBody }, judgeDestination, budget);
      changed(c);
    }
  },
  headers(d) {
    const to = match(d).flatMap((c) => {
      const e = headersFor(c, d.requestId);
      return e ? [{ c, e }] : [];
    });
    if (to.length === 0) return;
    const put = (jar: JarCookie[] | undefined) => {
      // Judged again now: a switch turned off while the jar was read wins.
      const dest = judgeDestination(d.url);
      for (const { c, e } of to) {
        putHeaders(c, e, d.requestHeaders, dest, jar, budget);
        changed(c);
      }
    };
    if (!needsJar(d.url, d.requestHeaders)) return put(undefined);
    // The browser's cookies for the URL tell a readable cookie from an HttpOnly one; a jar that
    // cannot be read shows none readable.
    void Promise.resolve()
      .then(() => chrome.cookies.getAll({ url: d.url }))
      .then(
      (cs) => put(cs.map((x) => ({ name: x.name, value: x.value, httpOnly: x.httpOnly }))),
      () => put([]),
    );
  },
  redirect(d) {
    for (const c of match(d)) onRedirect(c, d.requestId, d.statusCode, d.statusLine, d.timeStamp);
  },
  completed(d) {
    for (const c of match(d)) {
      onResponse(c, d.requestId, d.statusCode, d.statusLine, d.responseHeaders);
      onDone(c, d.requestId, d.timeStamp, d.statusCode, d.fromCache);
      changed(c);
    }
  },
  error(d) {
    for (const c of match(d)) {
      onDone(c, d.requestId, d.timeStamp, undefined, d.fromCache, d.error);
      changed(c);
    }
  },
};

/** Rebuilds the index of running captures and turns the listeners on or off to match. */
export function reindex(): void {
  running.clear();
  for (const c of allCaptures()) {
    if (c.stoppedAt !== undefined) continue;
    const l = running.get(c.tabId) ?? [];
    l.push(c);
    running.set(c.tabId, l);
  }
  // SECURITY I-67: a metadata capture never asks the browser for request bodies or headers.
  const needs = new Map<number, Need>();
  for (const [tabId, cs] of running) needs.set(tabId, cs.some((c) => c.sensitive) ? "sensitive" : "metadata");
  setNeed("capture", needs, sink);
}

/**
 * SECURITY I-67: the session ended; everything it captured goes, and so do its running captures'
 * listeners (else a forgotten capture would go on recording, and holding budget, unseen).
 */
export async function endSessionCaptures(session: string): Promise<void> {
  await forgetSession(session);
  reindex();
}

export function stop(c: Capture, reason: StopReason): void {
  stopCapture(c, reason, Date.now());
  changed(c);
  reindex();
}

/**
 * SECURITY I-67: a new document in the capture's frame (or its tab's top frame) stops it; requests
 * of the new document never matched it (their documentId differs), so nothing of it is kept.
 */
function committed(tabId: number, frameId: number, url: string, documentId: string | undefined): void {
  for (const c of running.get(tabId) ?? []) {
    if (c.frameId !== frameId && frameId !== 0) continue;
    if (documentId !== undefined && documentId === c.documentId) continue;
    const sameOrigin = c.frameId === frameId && /^https?:/i.test(url) && originOf(url) === c.origin;
    stop(c, sameOrigin ? "document_changed" : "origin_changed");
  }
}

/**
 * A restarted worker: running captures whose document is gone (it missed the commit) stop now,
 * with the same reason the commit would have given.
 */
async function recheck(): Promise<void> {
  for (const c of allCaptures()) {
    if (c.stoppedAt !== undefined) continue;
    const f = await chrome.webNavigation.getFrame({ tabId: c.tabId, frameId: c.frameId }).catch(() => null);
    if (!f) stop(c, "tab_closed");
    else if ((f as { documentId?: string }).documentId !== c.documentId) stop(c, originOf(f.url) === c.origin ? "document_changed" : "origin_changed");
  }
}

let installed = false;

/** Registers the navigation and tab listeners (at worker start) and resumes running captures. */
export function installCapture(getPolicy: () => Promise<Policy>): void {
  if (installed) return;
  installed = true;
  chrome.storage.onChanged.addListener((ch, area) => {
    if (area === "local" && ch[POLICY_KEY]) policy = normalizePolicy(ch[POLICY_KEY].newValue);
  });
  chrome.webNavigation.onCommitted.addListener((d) => committed(d.tabId, d.frameId, d.url, (d as { documentId?: string }).documentId));
  chrome.tabs.onRemoved.addListener((tabId) => {
    for (const c of running.get(tabId) ?? []) stop(c, "tab_closed");
  });
  chrome.tabs.onReplaced.addListener((_added, removed) => {
    for (const c of running.get(removed) ?? []) stop(c, "tab_closed");
  });
  void (async () => {
    policy ??= await getPolicy();
    await loadCaptures();
    reindex();
    await recheck();
  })().catch(() => undefined);
}
