// A capture as raw HTTP/1.1 request packets, one after the other, for a replay tool (a fuzzer,
// `nc`, Burp's repeater). Pure. Each request is rebuilt from the headers the browser sent and the
// body bytes kept; Content-Length is the length of the bytes that follow, so a truncated body
// still frames correctly (and is warned about). Entries without captured headers are left out
// and named in the warnings: a packet needs them.

import type { Capture, Entry } from "./model.js";
import { fromB64 } from "../../shared/b64.js";
import { entryWarnings } from "./warnings.js";

export interface ReplayResult {
  bytes: Uint8Array;
  /** Entry numbers written to the packet. */
  included: number[];
  /** Per entry, what the packet lacks. */
  warnings: { n: number; warning: string }[];
}

// Framing is rebuilt here; a hop-by-hop or HTTP/2 header from the browser would contradict it.
const DROP = new Set(["host", "content-length", "transfer-encoding", "connection", "keep-alive", "proxy-connection", "upgrade", "te"]);

/** A header line cannot carry CR, LF or NUL (it would split the packet). */
const clean = (s: string) => s.replace(/[\r\n\0]/g, " ");

function target(u: URL): string {
  return `${u.pathname || "/"}${u.search}`;
}

function bodyBytes(e: Entry): Uint8Array | undefined {
  const b = e.body;
  if (!b) return undefined;
  if (b.text !== undefined) return new TextEncoder().encode(b.text);
  if (b.b64 !== undefined) return fromB64(b.b64);
  if (b.form && b.omitted !== "multipart") return new TextEncoder().encode(new URLSearchParams(b.form).toString());
  return undefined;
}

export function toReplay(c: Capture): ReplayResult {
  const enc = new TextEncoder();
  const chunks: Uint8Array[] = [];
  const included: number[] = [];
  const warnings: ReplayResult["warnings"] = [];
  for (const e of c.entries) {
    const w = entryWarnings(e, c.sensitive);
    if (e.blocked || !e.headers) {
      warnings.push({ n: e.n, warning: `left out: ${w[0] ?? "request headers were not captured (metadata capture)"}` });
      continue;
    }
    let u: URL;
    try {
      u = new URL(e.url);
    } catch {
      warnings.push({ n: e.n, warning: "left out: not an absolute URL" });
      continue;
    }
    const body = bodyBytes(e);
    const lines = [`${clean(e.method)} ${clean(target(u))} HTTP/1.1`, `Host: ${clean(u.host)}`];
    for (const [k, v] of e.headers) {
      if (k.startsWith(":") || DROP.has(k.toLowerCase())) continue;
      lines.push(`${clean(k)}: ${clean(v)}`);
    }
    if (body && (body.length > 0 || e.method !== "GET")) lines.push(`Content-Length: ${body.length}`);
    chunks.push(enc.encode(`${lines.join("\r\n")}\r\n\r\n`));
    if (body) chunks.push(body);
    included.push(e.n);
    for (const x of w) warnings.push({ n: e.n, warning: x });
  }
  let size = 0;
  for (const ch of chunks) size += ch.length;
  const bytes = new Uint8Array(size);
  let at = 0;
  for (const ch of chunks) {
    bytes.set(ch, at);
    at += ch.length;
  }
  return { bytes, included, warnings };
}
