// SECURITY I-79: a capture as its exports may show it — no URL of an origin the person's policy does
// not allow, in any field a HAR or replay file is built from (request URLs, the page's URL, header
// names and values, cookies, Authorization values, bodies, form fields, errors). Applied before the
// file is built, so every format gets the same view and a replay packet's Content-Length counts the
// bytes it carries. Pure.

import { policyJudge, withholdForeignUrls, type UrlAllowed } from "../../outbound/foreign.js";
import type { Policy } from "../../policy/policy.js";
import type { Body, Capture, Entry } from "./model.js";

/**
 * A binary body's bytes read as Latin-1 (one character per byte), so an ASCII URL in them is found;
 * re-encoded only when something was withheld. A URL in a wider encoding (UTF-16) is not text here.
 */
function binaryWithout(b64: string, allowed: UrlAllowed): string {
  let raw: string;
  try {
    raw = atob(b64);
  } catch {
    return b64;
  }
  const clean = withholdForeignUrls(raw, allowed);
  return clean === raw ? b64 : btoa(clean);
}

function bodyWithout(b: Body, allowed: UrlAllowed): Body {
  const out: Body = { ...b };
  if (b.text !== undefined) out.text = withholdForeignUrls(b.text, allowed);
  if (b.b64 !== undefined) out.b64 = binaryWithout(b.b64, allowed);
  if (b.form) out.form = b.form.map(([k, v]) => [withholdForeignUrls(k, allowed), withholdForeignUrls(v, allowed)]);
  return out;
}

function entryWithout(e: Entry, allowed: UrlAllowed): Entry {
  const t = (s: string) => withholdForeignUrls(s, allowed);
  const out: Entry = { ...e, url: t(e.url) };
  if (e.statusText !== undefined) out.statusText = t(e.statusText);
  if (e.error !== undefined) out.error = t(e.error);
  if (e.headers) out.headers = e.headers.map(([k, v]) => [t(k), t(v)]);
  if (e.cookies) out.cookies = e.cookies.map((c) => ({ ...c, ...(c.name !== undefined ? { name: t(c.name) } : {}), ...(c.value !== undefined ? { value: t(c.value) } : {}) }));
  if (e.authorization) out.authorization = e.authorization.map(t);
  if (e.body) out.body = bodyWithout(e.body, allowed);
  return out;
}

/** The capture with every foreign URL withheld from what its exports are built from. */
export function captureWithoutForeignUrls(c: Capture, p: Policy): Capture {
  const allowed = policyJudge(p);
  return { ...c, url: withholdForeignUrls(c.url, allowed), entries: c.entries.map((e) => entryWithout(e, allowed)) };
}
