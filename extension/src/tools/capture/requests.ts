// The one set of chrome.webRequest listeners in the worker. Capture sessions (listen.ts) and
// network_tail (observe/network.ts) both take request metadata from here: webRequest costs the
// page nothing (the listeners are not blocking, unlike the debugger's Network domain, which makes
// every request report to the debugger before the page goes on). Each consumer says what it needs;
// the listeners ask the browser for the most any consumer needs, and are off while none does.

/** fetch/XHR and beacons; images, scripts, styles, fonts, media and documents are not seen. */
const TYPES: `${chrome.webRequest.ResourceType}`[] = ["xmlhttprequest", "ping"];

/**
 * What a consumer asks the browser for. SECURITY I-67: "metadata" never asks for request bodies or
 * headers, so they never reach the worker; only a sensitive capture asks for them.
 */
export type Need = "off" | "metadata" | "sensitive";

export interface RequestSink {
  before(d: chrome.webRequest.OnBeforeRequestDetails): void;
  headers?(d: chrome.webRequest.OnSendHeadersDetails): void;
  redirect(d: chrome.webRequest.OnBeforeRedirectDetails): void;
  completed(d: chrome.webRequest.OnCompletedDetails): void;
  error(d: chrome.webRequest.OnErrorOccurredDetails): void;
}

const sinks = new Map<string, { need: Need; sink: RequestSink }>();
let mode: Need = "off";

const onBefore = (d: chrome.webRequest.OnBeforeRequestDetails) => {
  for (const s of sinks.values()) s.sink.before(d);
  return undefined;
};
const onSend = (d: chrome.webRequest.OnSendHeadersDetails) => {
  for (const s of sinks.values()) s.sink.headers?.(d);
};
const onRedirected = (d: chrome.webRequest.OnBeforeRedirectDetails) => {
  for (const s of sinks.values()) s.sink.redirect(d);
};
const onCompleted = (d: chrome.webRequest.OnCompletedDetails) => {
  for (const s of sinks.values()) s.sink.completed(d);
};
const onError = (d: chrome.webRequest.OnErrorOccurredDetails) => {
  for (const s of sinks.values()) s.sink.error(d);
};

/** A consumer's need changed (its first capture started, its last ended, one became sensitive). */
export function setNeed(name: string, need: Need, sink: RequestSink): void {
  if (need === "off") sinks.delete(name);
  else sinks.set(name, { need, sink });
  const all = [...sinks.values()].map((s) => s.need);
  listen(all.length === 0 ? "off" : all.includes("sensitive") ? "sensitive" : "metadata");
}

function listen(want: Need): void {
  if (want === mode) return;
  const w = chrome.webRequest;
  if (mode !== "off") {
    w.onBeforeRequest.removeListener(onBefore);
    w.onSendHeaders.removeListener(onSend);
    w.onBeforeRedirect.removeListener(onRedirected);
    w.onCompleted.removeListener(onCompleted);
    w.onErrorOccurred.removeListener(onError);
  }
  mode = want;
  if (want === "off") return;
  const filter: chrome.webRequest.RequestFilter = { urls: ["<all_urls>"], types: TYPES };
  if (want === "sensitive") {
    w.onBeforeRequest.addListener(onBefore, filter, ["requestBody"]);
    // extraHeaders: the headers the network stack adds (Cookie, Referer) are the ones a replay needs.
    w.onSendHeaders.addListener(onSend, filter, ["requestHeaders", "extraHeaders"]);
  } else {
    w.onBeforeRequest.addListener(onBefore, filter);
  }
  w.onBeforeRedirect.addListener(onRedirected, filter);
  // Response headers are asked for their media type and length only; no consumer keeps the rest.
  w.onCompleted.addListener(onCompleted, filter, ["responseHeaders"]);
  w.onErrorOccurred.addListener(onError, filter);
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
