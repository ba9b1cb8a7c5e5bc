// What a sensitive capture keeps of a request's credentials and body, and what an export gives of
// them. Pure. SECURITY I-75: a capture honours every switch the matching read tool honours, for the
// request's own destination: a cookie's value as `cookies` would give it (the Cookies switch; an
// HttpOnly one's only with HttpOnly values beside it), Authorization with HttpOnly values, a body
// with Console & network (network_tail's switch). A value the switch forbids when the request is
// sent is never recorded; one recorded is given by an export only while the switches still allow
// it. Which cookies are HttpOnly is read from the browser's cookie jar, never guessed from the
// header: a cookie the jar does not show readable with that very name and value counts as HttpOnly.
// Proxy-Authorization is the person's proxy credential, no origin's: never recorded. Every withheld
// value leaves a marker naming what and the switch; response headers (Set-Cookie) are never kept.

import type { CaptureKeeps } from "../../policy/policy.js";
import type { Entry, SentCookie, Withheld } from "./model.js";

/** A cookie of the browser's jar for the request's URL (chrome.cookies.getAll). */
export interface JarCookie {
  name: string;
  value: string;
  httpOnly: boolean;
}

export interface RawHeader {
  name: string;
  value?: string;
  binaryValue?: ArrayBuffer | number[];
}

/** What stands in for a withheld value (a header value or a cookie's); no `;` so a Cookie header still parses. */
export const MARKER = {
  cookies: (n: number) => `[withheld by Torii: ${n} cookie${n === 1 ? "" : "s"}, needs this origin's "Cookies" switch]`,
  httpOnly: `[withheld by Torii: HttpOnly value, needs this origin's "HttpOnly values" switch]`,
  authorization: `[withheld by Torii: Authorization value, needs this origin's "HttpOnly values" switch]`,
  proxyAuthorization: "[withheld by Torii: Proxy-Authorization value, a proxy's credentials are never captured]",
} as const;

/** Headers whose values are kept apart (lower case). */
const COOKIE = "cookie";
const AUTH = "authorization";
const PROXY_AUTH = "proxy-authorization";

/** A Cookie header's pairs: `name=value` split at the first `=`; a bare token is a nameless value. */
export function parseCookieHeader(v: string): { name: string; value: string }[] {
  const out: { name: string; value: string }[] = [];
  for (const part of v.split(";")) {
    const p = part.trim();
    if (!p) continue;
    const i = p.indexOf("=");
    out.push(i < 0 ? { name: "", value: p } : { name: p.slice(0, i).trim(), value: p.slice(i + 1).trim() });
  }
  return out;
}

/** The cookies of one Cookie header as a capture may record them for this destination. */
function recordCookies(header: string, d: CaptureKeeps, jar: readonly JarCookie[] | undefined): SentCookie[] {
  const pairs = parseCookieHeader(header);
  if (d.cookies === "none") return pairs.map(() => ({}));
  return pairs.map(({ name, value }) => {
    const readable = jar?.some((j) => !j.httpOnly && j.name === name && j.value === value) === true;
    const c: SentCookie = { name };
    if (d.cookies === "all" || readable) c.value = value;
    if (readable) c.readable = true;
    return c;
  });
}

export interface Recorded {
  headers: [string, string][];
  cookies?: SentCookie[];
  authorization?: string[];
  /** Bytes held (as heldBy counts them). */
  bytes: number;
  /** Set when the headers were cut: `cap` (HEADERS_CAP) or `room` (the shared budget) was reached. */
  cut?: "too_large" | "budget";
}

/**
 * The request headers a capture records for this destination: Cookie, Authorization and
 * Proxy-Authorization values kept apart (only what the switches allow), the rest as sent; cut at
 * `cap` bytes, or at `room` (what the shared budget has left).
 */
export function recordHeaders(raw: readonly RawHeader[], d: CaptureKeeps, jar: readonly JarCookie[] | undefined, cap: number, room: number): Recorded {
  const out: Recorded = { headers: [], bytes: 0 };
  for (const h of raw) {
    const v = h.value ?? (h.binaryValue ? "(binary value)" : "");
    const k = h.name.toLowerCase();
    let cookies: SentCookie[] | undefined;
    let auth: string | undefined;
    let n = h.name.length + 4;
    if (k === COOKIE) {
      cookies = recordCookies(v, d, jar);
      for (const c of cookies) n += (c.name?.length ?? 0) + (c.value?.length ?? 0) + 4;
    } else if (k === AUTH) {
      if (d.credentials) {
        auth = v;
        n += v.length + 4;
      }
    } else if (k !== PROXY_AUTH) n += v.length;
    if (out.bytes + n > cap || out.bytes + n > room) {
      out.cut = out.bytes + n > cap ? "too_large" : "budget";
      break;
    }
    out.bytes += n;
    const secret = k === COOKIE || k === AUTH || k === PROXY_AUTH;
    out.headers.push([h.name, secret ? "" : v]);
    if (cookies) (out.cookies ??= []).push(...cookies);
    if (auth !== undefined) (out.authorization ??= []).push(auth);
  }
  return out;
}

/**
 * The entry as an export (or capture_list) may give it under the policy now, judged by the
 * request's own URL: the switches turned off since recording withhold again what they forbid.
 * The Cookie and Authorization headers are rebuilt from what was kept, with a marker for the rest.
 */
export function shapeEntry(e: Entry, d: CaptureKeeps): Entry {
  if (!e.headers && !e.body && !e.cookies) return e;
  if (!d.allowed || !d.sensitive) {
    const { headers: _h, body: _b, cookies: _c, authorization: _a, withheld: _w, ...meta } = e;
    return { ...meta, headersOmitted: "destination_off" };
  }
  const withheld = new Set<Withheld>();
  const { authorization: _a, ...rest } = e;
  const out: Entry = { ...rest };
  let cookieHeader: string | undefined;
  if (e.cookies) {
    const named = d.cookies !== "none" && e.cookies.every((c) => c.name !== undefined);
    if (!named) {
      if (e.cookies.length) withheld.add("cookies");
      out.cookies = [];
      cookieHeader = MARKER.cookies(e.cookies.length);
    } else {
      out.cookies = e.cookies.map((c): SentCookie => {
        const give = c.value !== undefined && (d.cookies === "all" || c.readable === true);
        if (!give) withheld.add("httpOnly");
        return { name: c.name as string, value: give ? (c.value as string) : MARKER.httpOnly, ...(c.readable ? { readable: true as const } : {}) };
      });
      cookieHeader = out.cookies.map((c) => (c.name ? `${c.name}=${c.value}` : (c.value ?? ""))).join("; ");
    }
  }
  if (e.headers) {
    const headers: [string, string][] = [];
    let auth = 0;
    let cookieDone = false;
    for (const [k, v] of e.headers) {
      const lk = k.toLowerCase();
      if (lk === COOKIE) {
        // One Cookie header carries them all (HTTP/1.1 allows no second).
        if (!cookieDone) headers.push([k, cookieHeader ?? ""]);
        cookieDone = true;
      } else if (lk === AUTH) {
        const kept = e.authorization?.[auth++];
        if (d.credentials && kept !== undefined) headers.push([k, kept]);
        else {
          withheld.add("authorization");
          headers.push([k, MARKER.authorization]);
        }
      } else if (lk === PROXY_AUTH) {
        withheld.add("proxy_authorization");
        headers.push([k, MARKER.proxyAuthorization]);
      } else headers.push([k, v]);
    }
    out.headers = headers;
  }
  const b = e.body;
  const held = b !== undefined && (b.text !== undefined || b.b64 !== undefined || b.form !== undefined);
  if (b && held && !d.bodies) out.body = { size: b.size, kept: 0, omitted: "observe_off" };
  if (out.body?.omitted === "observe_off") withheld.add("body");
  if (withheld.size) out.withheld = [...withheld];
  else delete out.withheld;
  return out;
}
