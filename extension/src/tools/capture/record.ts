// The recorder: turns webRequest's events for one capture into bounded entries. Pure (no chrome.*):
// listen.ts feeds it events already matched to the capture's tab, frame and document, and the
// browser's cookie jar for a request whose cookies it must tell apart. Every event costs O(1), so a
// page firing thousands of requests a second costs little and keeps the newest.

import type { CaptureKeeps } from "../../policy/policy.js";
import { toB64 } from "../../shared/b64.js";
import { typeAndLength } from "./requests.js";
import { recordHeaders, type JarCookie, type RawHeader } from "./credentials.js";
import { BODY_CAP, HEADERS_CAP, heldBy, SENSITIVE_BUDGET, type Body, type Capture, type Entry, type StopReason } from "./model.js";

/** What the person's policy says of a request's destination (its own entry). */
export type Destination = CaptureKeeps;
export type Judge = (url: string) => Destination;

/** The bytes every capture holds together (SENSITIVE_BUDGET). */
export interface Budget {
  used: number;
}

interface RawBody {
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

export type HttpHeader = RawHeader;

interface Live {
  e: Entry;
  /** Headers and body may be kept for this request. */
  keep: boolean;
}

// In-flight requests by id, per capture; not persisted (a restarted worker records what comes next).
const live = new WeakMap<Capture, Map<string, Live>>();
// Captures forgotten: headers still on their way (the jar being read) are not added to them.
const released = new WeakSet<Capture>();
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
  // SECURITY I-75: a body only where the destination's own switches give bodies.
  if (keep && ev.requestBody) e.body = d.bodies ? keepBody(ev.requestBody, budget) : { size: bodySize(ev.requestBody), kept: 0, omitted: "observe_off" };
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

/**
 * The entry a request's headers go to, while it is in flight and its destination's headers may be
 * kept; put them there with putHeaders (after the jar is read, when cookies must be told apart).
 */
export function headersFor(c: Capture, requestId: string): Entry | undefined {
  const l = liveOf(c).get(requestId);
  return l?.keep && !l.e.headers ? l.e : undefined;
}

/**
 * The request headers the browser sent (onSendHeaders with extraHeaders: Cookie included), judged
 * again by the destination's entry now. SECURITY I-75: cookie and Authorization values only as its
 * switches allow (`jar`: the browser's cookies for the URL, telling HttpOnly ones apart).
 */
export function putHeaders(c: Capture, e: Entry, headers: readonly HttpHeader[] | undefined, d: Destination, jar: readonly JarCookie[] | undefined, budget: Budget): void {
  // The capture was forgotten, or the entry dropped, while the jar was read: nothing to hold.
  if (released.has(c) || !headers || e.headers || c.entries.length === 0 || e.n < (c.entries[0] as Entry).n) return;
  if (!d.allowed || !d.sensitive) {
    e.headersOmitted = "destination_off";
    return;
  }
  const r = recordHeaders(headers, d, jar, HEADERS_CAP, SENSITIVE_BUDGET - budget.used);
  e.headers = r.headers;
  if (r.cookies) e.cookies = r.cookies;
  if (r.authorization) e.authorization = r.authorization;
  if (r.cut) e.headersOmitted = r.cut;
  c.held += r.bytes;
  budget.used += r.bytes;
  // The browser parsed a multipart body into fields: its bytes (boundaries, files) are gone.
  const ct = r.headers.find(([k]) => k.toLowerCase() === "content-type")?.[1] ?? "";
  if (e.body?.form && /^multipart\//i.test(ct)) e.body.omitted ??= "multipart";
}

/** headersFor and putHeaders at once, for a destination whose cookies need no jar (or one at hand). */
export function onHeaders(c: Capture, requestId: string, headers: HttpHeader[] | undefined, budget: Budget, judge: Judge, jar?: readonly JarCookie[]): void {
  const e = headersFor(c, requestId);
  if (e) putHeaders(c, e, headers, judge(e.url), jar, budget);
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
  released.add(c);
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

/** Bytes a request body had, as far as the browser reported them (nothing of it is read). */
function bodySize(rb: RawBody): number {
  let n = 0;
  for (const p of rb.raw ?? []) n += p.bytes?.byteLength ?? 0;
  for (const [k, vs] of Object.entries(rb.formData ?? {})) for (const v of vs) n += k.length + (typeof v === "string" ? v.length : v.byteLength) + 2;
  return n;
}

const utf8 = () => new TextDecoder("utf-8", { fatal: true });

/** The bytes of a request body, cut at BODY_CAP and within the budget; binary marked. */
function keepBody(rb: RawBody, budget: Budget): Body {
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
function textOf(b: Uint8Array): string | undefined {
  if (b.includes(0)) return undefined;
  try {
    return utf8().decode(b, { stream: true });
  } catch {
    return undefined;
  }
}
