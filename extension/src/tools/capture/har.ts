// A capture as a HAR 1.2 log (the format DevTools and proxies import). Pure. Metadata captures give
// method, URL, status, types, sizes and timing; sensitive ones add the request headers, cookies
// and body. Every entry not whole says why in its `comment`, and the log's comment sums them up.

import type { Capture, Entry } from "./model.js";
import { entryWarnings } from "./warnings.js";

interface NV {
  name: string;
  value: string;
}

export interface HarOptions {
  creatorVersion: string;
}

const iso = (ms: number) => new Date(ms).toISOString();

function query(url: string): NV[] {
  try {
    return [...new URL(url).searchParams].map(([name, value]) => ({ name, value }));
  } catch {
    return [];
  }
}

/** SECURITY I-75: the cookies as recorded and judged (shapeEntry), never parsed back from the header. */
function cookies(e: Entry): NV[] {
  return (e.cookies ?? []).flatMap((c) => (c.name === undefined ? [] : [{ name: c.name, value: c.value ?? "" }]));
}

function header(headers: [string, string][] | undefined, name: string): string | undefined {
  return headers?.find(([k]) => k.toLowerCase() === name)?.[1];
}

function postData(e: Entry): Record<string, unknown> | undefined {
  const b = e.body;
  if (!b || (b.b64 === undefined && b.text === undefined && !b.form)) return undefined;
  const mimeType = header(e.headers, "content-type") ?? "";
  if (b.form) {
    const params = b.form.map(([name, value]) => ({ name, value }));
    const text = /^multipart\//i.test(mimeType) ? "" : new URLSearchParams(b.form).toString();
    return { mimeType, params, text };
  }
  // HAR has no encoding field for request bodies: a binary one goes as base64 under the common
  // `_encoding` extension (and the entry's comment says so).
  if (b.b64 !== undefined) return { mimeType, text: b.b64, _encoding: "base64" };
  return { mimeType, text: b.text ?? "" };
}

function harEntry(c: Capture, e: Entry): Record<string, unknown> {
  const time = e.endedAt !== undefined ? Math.max(0, e.endedAt - e.startedAt) : -1;
  const warnings = entryWarnings(e, c.sensitive);
  if (e.body?.binary) warnings.push("binary request body: text is base64 (_encoding)");
  const pd = e.blocked ? undefined : postData(e);
  const request: Record<string, unknown> = {
    method: e.method,
    url: e.blocked ? "about:blank" : e.url,
    httpVersion: "HTTP/1.1",
    cookies: e.blocked ? [] : cookies(e),
    headers: e.blocked ? [] : (e.headers ?? []).map(([name, value]) => ({ name, value })),
    queryString: e.blocked ? [] : query(e.url),
    headersSize: -1,
    bodySize: e.body ? e.body.size : e.method === "GET" || e.method === "HEAD" ? 0 : -1,
    ...(pd ? { postData: pd } : {}),
  };
  const response = {
    status: e.status ?? 0,
    statusText: e.statusText ?? "",
    httpVersion: "HTTP/1.1",
    cookies: [],
    headers: [],
    content: { size: e.size ?? -1, mimeType: e.mimeType ?? "" },
    redirectURL: "",
    headersSize: -1,
    bodySize: e.size ?? -1,
  };
  const out: Record<string, unknown> = {
    pageref: "page_1",
    startedDateTime: iso(e.startedAt),
    time,
    request,
    response,
    cache: {},
    timings: { send: 0, wait: Math.max(0, time), receive: 0 },
    _resourceType: e.type === "xmlhttprequest" ? "fetch" : e.type,
  };
  if (e.error) out._error = e.error;
  if (warnings.length) out.comment = warnings.join("; ");
  return out;
}

/** The HAR document, and how many of its entries carry a warning. */
export function toHar(c: Capture, opts: HarOptions): { har: Record<string, unknown>; warned: number } {
  const entries = c.entries.map((e) => harEntry(c, e));
  const warned = entries.filter((e) => e.comment !== undefined).length;
  const notes = [
    c.sensitive ? "sensitive capture: request headers and bodies of enabled destinations" : "metadata capture: no request headers, cookies or bodies were recorded",
    ...(c.dropped ? [`${c.dropped} older entries dropped to keep the newest ${c.max}`] : []),
    ...(warned ? [`${warned} entries are not whole; see each entry's comment`] : []),
    ...(c.stopReason && c.stopReason !== "stopped" ? [`capture stopped: ${c.stopReason}`] : []),
  ];
  const har = {
    log: {
      version: "1.2",
      creator: { name: "Torii", version: opts.creatorVersion },
      pages: [{ startedDateTime: iso(c.startedAt), id: "page_1", title: c.url, pageTimings: {} }],
      entries,
      comment: notes.join("; "),
    },
  };
  return { har, warned };
}
