// The worker's chrome.webRequest listeners. Capture sessions (listen.ts) and network_tail
// (observe/network.ts) both take request metadata from here: webRequest costs the page nothing (the
// listeners are not blocking, unlike the debugger's Network domain, which makes every request
// report to the debugger before the page goes on). Each consumer says what it needs on which tabs;
// each tab anyone needs gets one set of listeners filtered to it, asking the browser for the most
// any consumer needs there, so the browser never wakes the worker for a request of a tab no one
// captures, and a tab no one needs has none.
//
// Each event the browser sends costs the worker about a millisecond of an agent's call that it
// lands in (measured: a click with a captured fetch, capture/observe bench). A request's start
// lands in the call that caused it; its end usually after. So a consumer that can do with the end
// alone asks for "finished", one event per request.

/** fetch/XHR and beacons; images, scripts, styles, fonts, media and documents are not seen. */
const TYPES: `${chrome.webRequest.ResourceType}`[] = ["xmlhttprequest", "ping"];

/**
 * What a consumer asks the browser for on a tab: "finished", each request's end (the event carries
 * its method, URL, document, status and response headers); "metadata", its start and redirects
 * too; "sensitive", also its request headers and body. SECURITY I-67: only "sensitive" asks for
 * request bodies or headers, so they never reach the worker otherwise.
 */
export type Need = "finished" | "metadata" | "sensitive";
const RANK: Record<Need, number> = { finished: 0, metadata: 1, sensitive: 2 };

export interface RequestSink {
  before(d: chrome.webRequest.OnBeforeRequestDetails): void;
  headers?(d: chrome.webRequest.OnSendHeadersDetails): void;
  redirect(d: chrome.webRequest.OnBeforeRedirectDetails): void;
  completed(d: chrome.webRequest.OnCompletedDetails): void;
  error(d: chrome.webRequest.OnErrorOccurredDetails): void;
}

const consumers = new Map<string, { needs: ReadonlyMap<number, Need>; sink: RequestSink }>();

interface TabListeners {
  need: Need;
  before(d: chrome.webRequest.OnBeforeRequestDetails): undefined;
  headers(d: chrome.webRequest.OnSendHeadersDetails): void;
  redirect(d: chrome.webRequest.OnBeforeRedirectDetails): void;
  completed(d: chrome.webRequest.OnCompletedDetails): void;
  error(d: chrome.webRequest.OnErrorOccurredDetails): void;
}

const tabs = new Map<number, TabListeners>();

/** A consumer's tabs and what it needs on each changed; an empty map ends its share. */
export function setNeed(name: string, needs: ReadonlyMap<number, Need>, sink: RequestSink): void {
  if (needs.size === 0) consumers.delete(name);
  else consumers.set(name, { needs, sink });
  const want = new Map<number, Need>();
  for (const c of consumers.values())
    for (const [tabId, need] of c.needs) {
      const had = want.get(tabId);
      if (had === undefined || RANK[need] > RANK[had]) want.set(tabId, need);
    }
  for (const [tabId, l] of tabs) if (want.get(tabId) !== l.need) unlisten(tabId, l);
  for (const [tabId, need] of want) if (!tabs.has(tabId)) listen(tabId, need);
}

function listen(tabId: number, need: Need): void {
  // Each consumer checks the tab itself too; a listener passes on only its own tab's events, so
  // what reaches a sink never depends on the browser applying the filter.
  const each =
    <D extends { tabId: number }>(f: (s: RequestSink, d: D) => void) =>
    (d: D) => {
      if (d.tabId !== tabId) return;
      for (const c of consumers.values()) if (c.needs.has(tabId)) f(c.sink, d);
    };
  const before = each<chrome.webRequest.OnBeforeRequestDetails>((s, d) => s.before(d));
  const l: TabListeners = {
    need,
    before: (d) => void before(d),
    headers: each((s, d) => s.headers?.(d)),
    redirect: each((s, d) => s.redirect(d)),
    completed: each((s, d) => s.completed(d)),
    error: each((s, d) => s.error(d)),
  };
  tabs.set(tabId, l);
  const w = chrome.webRequest;
  const filter: chrome.webRequest.RequestFilter = { urls: ["<all_urls>"], types: TYPES, tabId };
  if (need === "sensitive") {
    w.onBeforeRequest.addListener(l.before, filter, ["requestBody"]);
    // extraHeaders: the headers the network stack adds (Cookie, Referer) are the ones a replay needs.
    w.onSendHeaders.addListener(l.headers, filter, ["requestHeaders", "extraHeaders"]);
  } else if (need === "metadata") {
    w.onBeforeRequest.addListener(l.before, filter);
  }
  if (need !== "finished") w.onBeforeRedirect.addListener(l.redirect, filter);
  // Response headers are asked for their media type and length only; no consumer keeps the rest.
  w.onCompleted.addListener(l.completed, filter, ["responseHeaders"]);
  w.onErrorOccurred.addListener(l.error, filter);
}

function unlisten(tabId: number, l: TabListeners): void {
  tabs.delete(tabId);
  const w = chrome.webRequest;
  w.onBeforeRequest.removeListener(l.before);
  w.onSendHeaders.removeListener(l.headers);
  w.onBeforeRedirect.removeListener(l.redirect);
  w.onCompleted.removeListener(l.completed);
  w.onErrorOccurred.removeListener(l.error);
}

/** The response's media type (no parameters) and Content-Length, the only response headers read. */
export function typeAndLength(headers: { name: string; value?: string }[] | undefined): { mimeType?: string; size?: number } {
  const out: { mimeType?: string; size?: number } = {};
  for (const h of headers ?? []) {
    const k = h.name.toLowerCase();
    if (k === "content-type" && h.value) out.mimeType = (h.value.split(";")[0] ?? "").trim().toLowerCase().slice(0, 100);
    if (k === "content-length" && h.value && /^\d{1,15}$/.test(h.value.trim())) out.size = Number(h.value.trim());
  }
  return out;
}
