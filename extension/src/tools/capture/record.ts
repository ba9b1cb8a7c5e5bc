// The recorder: turns webRequest's events for one capture into bounded entries. Pure (no chrome.*):
// listen.ts feeds it events already matched to the capture's tab, frame and document. Every event
// costs O(1), so a page firing thousands of requests a second costs little and keeps the newest.

import { typeAndLength } from "./requests.js";
import { BODY_CAP, HEADERS_CAP, heldBy, SENSITIVE_BUDGET, type Body, type Capture, type Entry, type StopReason } from "./model.js";

/** What the person's policy says of a request's destination. */
export interface Destination {
  /** On the allowlist: its URL may be shown. */
  allowed: boolean;
  /** Its entry has the capture switch on: headers and body may be kept (in a sensitive capture). */
  sensitive: boolean;
}
export type Judge = (url: string) => Destination;

/** The bytes every capture holds together (SENSITIVE_BUDGET). */
export interface Budget {
  used: number;
}

export interface RawBody {
  raw?: { bytes?: ArrayBuffer | Uint8Array; file?: string }[];
  formData?: Record<string, (string | ArrayBuffer)[]>;
  error?: string;
}

export interface RequestEvent {
  requestId: string;
  url: string;
  method: string;
  type: string;
  timeStamp: number;
  requestBody?: RawBody | null;
}

export interface HttpHeader {
  name: string;
  value?: string;
  binaryValue?: ArrayBuffer | number[];
}

interface Live {
  e: Entry;
  /** Headers and body may be kept for this request. */
  keep: boolean;
}

// In-flight requests by id, per capture; not persisted (a restarted worker records what comes next).
const live = new WeakMap<Capture, Map<string, Live>>();
function liveOf(c: Capture): Map<string, Live> {
  let m = live.get(c);
  if (!m) {
    m = new Map();
    live.set(c, m);
  }
  return m;
}

/** A request of the capture's document started (or the next hop of a redirect). */
export function onRequest(c: Capture, ev: RequestEvent, judge: Judge, budget: Budget): void {
  if (c.stoppedAt !== undefined) {
    c.ignored++;
    return;
  }
  const d = judge(ev.url);
  const e: Entry = { n: ++c.seq, requestId: ev.requestId, method: ev.method.toUpperCase().slice(0, 16), url: d.allowed ? ev.url.slice(0, 8192) : "", type: ev.type, startedAt: ev.timeStamp };
  if (!d.allowed) e.blocked = true;
  const keep = c.sensitive && d.allowed && d.sensitive;
  if (c.sensitive && !keep) e.headersOmitted = "destination_off";
  if (keep && ev.requestBody) e.body = keepBody(ev.requestBody, budget);
  else if (c.sensitive && !keep && ev.requestBody) e.body = { size: 0, kept: 0, omitted: "destination_off" };
  c.held += heldBy(e);
  c.entries.push(e);
  liveOf(c).set(ev.requestId, { e, keep });
  // SECURITY I-67: bounded; the oldest entry goes (and its bytes back to the budget).
  while (c.entries.length > c.max) {
    const old = c.entries.shift() as Entry;
    c.dropped++;
    const h = heldBy(old);
    c.held -= h;
    budget.used -= h;
    const l = liveOf(c).get(old.requestId);
    if (l?.e === old) liveOf(c).delete(old.requestId);
  }
}

/** The request headers the browser sent (onSendHeaders with extraHeaders: Cookie included). */
export function onHeaders(c: Capture, requestId: string, headers: HttpHeader[] | undefined, budget: Budget): void {
  const l = liveOf(c).get(requestId);
  if (!l || !l.keep || !headers) return;
  const out: [string, string][] = [];
  let bytes = 0;
  for (const h of headers) {
    const v = h.value ?? (h.binaryValue ? "(binary value)" : "");
    const n = h.name.length + v.length + 4;
    if (bytes + n > HEADERS_CAP) {
      l.e.headersOmitted = "too_large";
      break;
    }
    if (budget.used + bytes + n > SENSITIVE_BUDGET) {
      l.e.headersOmitted = "budget";
      break;
    }
    bytes += n;
    out.push([h.name, v]);
  }
  l.e.headers = out;
  c.held += bytes;
  budget.used += bytes;
  // The browser parsed a multipart body into fields: its bytes (boundaries, files) are gone.
  const ct = out.find(([k]) => k.toLowerCase() === "content-type")?.[1] ?? "";
  if (l.e.body?.form && /^multipart\//i.test(ct)) l.e.body.omitted ??= "multipart";
}

/** The response's status line and headers arrived: only the status, media type and length are kept. */
export function onResponse(c: Capture, requestId: string, status: number, statusLine: string | undefined, headers: HttpHeader[] | undefined): void {
  const l = liveOf(c).get(requestId);
  if (!l) return;
  l.e.status = status;
  const text = statusText(statusLine);
  if (text) l.e.statusText = text;
  const { mimeType, size } = typeAndLength(headers);
  if (mimeType) l.e.mimeType = mimeType;
  if (size !== undefined) l.e.size = size;
}

/** This hop redirected; the browser's next onBeforeRequest (same requestId) starts the next entry. */
export function onRedirect(c: Capture, requestId: string, status: number, statusLine: string | undefined, ts: number): void {
  const l = liveOf(c).get(requestId);
  if (!l) return;
  l.e.status = status;
  const text = statusText(statusLine);
  if (text) l.e.statusText = text;
  l.e.redirected = true;
  l.e.endedAt = ts;
  liveOf(c).delete(requestId);
}

export function onDone(c: Capture, requestId: string, ts: number, status: number | undefined, fromCache: boolean, error?: string): void {
  const l = liveOf(c).get(requestId);
  if (!l) return;
  if (status !== undefined && status > 0) l.e.status = status;
  if (fromCache) l.e.fromCache = true;
  if (error) l.e.error = error.slice(0, 100);
  l.e.endedAt = ts;
  liveOf(c).delete(requestId);
}

export function stopCapture(c: Capture, reason: StopReason, ts: number): void {
  if (c.stoppedAt !== undefined) return;
  c.stoppedAt = ts;
  c.stopReason = reason;
  live.delete(c);
}

/** Frees a capture's bytes from the budget (it is being forgotten). */
export function release(c: Capture, budget: Budget): void {
  budget.used = Math.max(0, budget.used - c.held);
  c.held = 0;
  live.delete(c);
}

function statusText(line: string | undefined): string | undefined {
  // "HTTP/1.1 404 Not Found" → "Not Found"
  const m = /^\S+\s+\d{3}\s*(.*)$/.exec(line ?? "");
  const t = m?.[1]?.trim();
  return t ? t.slice(0, 100) : undefined;
}

const utf8 = () => new TextDecoder("utf-8", { fatal: true });

/** The bytes of a request body, cut at BODY_CAP and within the budget; binary marked. */
export function keepBody(rb: RawBody, budget: Budget): Body {
  if (rb.error) return { size: 0, kept: 0, omitted: "not_kept_by_browser" };
  if (rb.formData) {
    const form: [string, string][] = [];
    let size = 0;
    let kept = 0;
    let omitted: Body["omitted"];
    for (const [k, vs] of Object.entries(rb.formData)) {
      for (const item of vs) {
        const v = typeof item === "string" ? item : "(binary)";
        const n = k.length + v.length + 2;
        size += n;
        if (omitted) continue;
        if (kept + n > BODY_CAP) omitted = "too_large";
        else if (budget.used + kept + n > SENSITIVE_BUDGET) omitted = "budget";
        else {
          form.push([k, v]);
          kept += n;
        }
      }
    }
    budget.used += kept;
    return { form, size, kept, ...(omitted ? { omitted } : {}) };
  }
  const parts = rb.raw ?? [];
  let size = 0;
  let file = false;
  for (const p of parts) {
    if (p.bytes) size += p.bytes.byteLength;
    else if (p.file !== undefined) file = true;
  }
  const room = Math.max(0, Math.min(BODY_CAP, SENSITIVE_BUDGET - budget.used));
  const keep = Math.min(size, room);
  const buf = new Uint8Array(keep);
  let at = 0;
  for (const p of parts) {
    if (!p.bytes || at >= keep) continue;
    const b = p.bytes instanceof Uint8Array ? p.bytes : new Uint8Array(p.bytes);
    const take = b.subarray(0, keep - at);
    buf.set(take, at);
    at += take.length;
  }
  budget.used += keep;
  const text = textOf(buf);
  const body: Body = text !== undefined ? { text, size, kept: keep } : { b64: toB64(buf), size, kept: keep, binary: true };
  if (file) body.omitted = "file";
  else if (keep < size) body.omitted = keep < Math.min(size, BODY_CAP) ? "budget" : "too_large";
  return body;
}

/** The bytes as text, or undefined when binary: a NUL, or an invalid sequence (one cut at the end is fine). */
export function textOf(b: Uint8Array): string | undefined {
  if (b.includes(0)) return undefined;
  try {
    return utf8().decode(b, { stream: true });
  } catch {
    return undefined;
  }
}

export function toB64(b: Uint8Array): string {
  let s = "";
  for (let i = 0; i < b.length; i += 0x8000) s += String.fromCharCode(...b.subarray(i, i + 0x8000));
  return btoa(s);
}

export function fromB64(s: string): Uint8Array {
  const bin = atob(s);
  const out = new Uint8Array(bin.length);
  for (let i = 0; i < bin.length; i++) out[i] = bin.charCodeAt(i);
  return out;
}
