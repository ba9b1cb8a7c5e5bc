// A network capture: the programmatic requests (fetch, XHR, beacons) of one document in one frame of
// one tab, recorded from chrome.webRequest. Pure data and the rules that bound it; the recorder
// (record.ts) fills it, the formatters (har.ts, replay.ts) read it. SECURITY I-67: metadata only
// unless the capture is sensitive, and a sensitive capture keeps request headers and bodies only
// for destinations whose own entry has the person's capture switch on. SECURITY I-75: cookie and
// Authorization values and bodies only as the read tools' switches of that entry allow, kept apart
// from the other headers so that an export judges them again.

/** Entries a metadata capture keeps (newest win). */
export const METADATA_CAP = 100;
/** Entries a sensitive capture keeps at most. */
export const SENSITIVE_CAP = 200;
/** Bytes of one request body a sensitive capture keeps; the rest is cut and the export says so. */
export const BODY_CAP = 64 * 1024;
/** Bytes of one request's headers (names and values) a sensitive capture keeps. */
export const HEADERS_CAP = 32 * 1024;
/**
 * Bytes of headers and bodies all captures hold together: they live in chrome.storage.session,
 * whose quota (10 MB) the worker's other session state shares. Past it a body is omitted (`budget`).
 */
export const SENSITIVE_BUDGET = 4 * 1024 * 1024;

/** Why a capture stopped. */
export type StopReason = "stopped" | "origin_changed" | "document_changed" | "tab_closed";

/** Why a body or the headers of a request were not kept (or not whole). */
export type Omission =
  | "too_large" // cut at BODY_CAP / HEADERS_CAP
  | "budget" // SENSITIVE_BUDGET reached
  | "file" // an uploaded file: the browser does not hand its bytes to extensions
  | "not_kept_by_browser" // the browser reported a body it could not give (requestBody.error)
  | "destination_off" // the destination's entry has no capture switch (or is off the list)
  | "observe_off" // the destination's entry has no "Console & network" switch (SECURITY I-75)
  | "multipart"; // multipart form fields parsed by the browser: the original bytes are gone

export interface Body {
  /** The kept bytes as text, when they are UTF-8 (no NUL). */
  text?: string;
  /** The kept bytes, standard base64, when they are not (binary). */
  b64?: string;
  /** Form fields the browser parsed instead of giving bytes (urlencoded or multipart). */
  form?: [string, string][];
  /** Bytes the request sent (as far as the browser reported them). */
  size: number;
  /** Bytes kept (b64 decoded, or the form fields encoded). */
  kept: number;
  /** Not valid UTF-8 text. */
  binary?: true;
  /** Set when the body is not kept whole. */
  omitted?: Omission;
}

/** A value a capture or its export withholds, by the switch that would give it (SECURITY I-75). */
export type Withheld = "cookies" | "httpOnly" | "authorization" | "proxy_authorization" | "body";

/** One cookie of a request's Cookie header, as recorded. */
export interface SentCookie {
  /** Absent when the destination's Cookies switch was off: not even the name is kept. */
  name?: string;
  /** Absent when withheld as it was recorded (HttpOnly, or not shown readable by the jar). */
  value?: string;
  /** The browser's cookie jar held this name and value on a cookie the page's script can read. */
  readable?: true;
}

export interface Entry {
  /** 1, 2, … within the capture; never reused. */
  n: number;
  requestId: string;
  method: string;
  /** "" when the destination is off the person's allowlist (SECURITY I-14: never named). */
  url: string;
  blocked?: true;
  /** webRequest's resource type: xmlhttprequest (fetch and XHR) or ping (sendBeacon, <a ping>). */
  type: string;
  /** Epoch ms. */
  startedAt: number;
  endedAt?: number;
  status?: number;
  statusText?: string;
  /** The response's Content-Type media type, without parameters. */
  mimeType?: string;
  /** The response's Content-Length, when it sent one. */
  size?: number;
  fromCache?: true;
  /** The browser's net error (net::ERR_…), for a request that failed. */
  error?: string;
  /** Set when this hop answered with a redirect; the next hop is the next entry of the same requestId. */
  redirected?: true;
  /**
   * Sensitive captures only: the request headers as the browser sent them, in order, except that a
   * Cookie, Authorization or Proxy-Authorization header's value is "" here: what was kept of them
   * is in `cookies` and `authorization`, and an export rebuilds them (SECURITY I-75).
   */
  headers?: [string, string][];
  /** The Cookie header's cookies, in order. */
  cookies?: SentCookie[];
  /** The Authorization headers' values, in order: only with the destination's switch on when sent. */
  authorization?: string[];
  /** Export only: what the person's switches withhold from this entry. */
  withheld?: Withheld[];
  headersOmitted?: Omission;
  body?: Body;
}

export interface Capture {
  id: string;
  /** The agent session that started it: only it may list, stop or export it. */
  session: string;
  tabId: number;
  frameId: number;
  documentId: string;
  origin: string;
  /** The document's URL when the capture started (judged then). */
  url: string;
  sensitive: boolean;
  max: number;
  startedAt: number;
  stoppedAt?: number;
  stopReason?: StopReason;
  entries: Entry[];
  /** Entries dropped to keep the newest `max`. */
  dropped: number;
  /** Requests started after the stop or by another document, not recorded. */
  ignored: number;
  seq: number;
  /** Header and body bytes this capture holds (counted against SENSITIVE_BUDGET). */
  held: number;
}

/** Bytes an entry's headers and body hold. */
export function heldBy(e: Entry): number {
  let n = e.body?.kept ?? 0;
  for (const [k, v] of e.headers ?? []) n += k.length + v.length + 4;
  for (const c of e.cookies ?? []) n += (c.name?.length ?? 0) + (c.value?.length ?? 0) + 4;
  for (const v of e.authorization ?? []) n += v.length + 4;
  return n;
}
