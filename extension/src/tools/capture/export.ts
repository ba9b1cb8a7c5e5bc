// An export of a capture: the file's bytes (HAR or HTTP/1.1 replay packets) and the summary the
// agent reads instead of them (entries, warnings, sizes). Pure; the tool hands the bytes to the
// daemon's download sandbox, which returns them as an MCP resource.

import { toolError } from "../errors.js";
import type { Judge } from "./record.js";
import type { Capture, Entry } from "./model.js";
import { shapeEntry } from "./credentials.js";
import { toHar } from "./har.js";
import { toReplay } from "./replay.js";
import { entryWarnings } from "./warnings.js";

export type ExportFormat = "har" | "http";

/** Warnings listed in the summary; the rest are counted (the file's comments have them all). */
const MAX_SUMMARY_WARNINGS = 20;

export interface ExportFile {
  name: string;
  mimeType: string;
  bytes: Uint8Array;
  /** The same bytes as text, for a text format (sent as UTF-8, without base64's third more). */
  text?: string;
}

export interface ExportSummary {
  captureId: string;
  format: ExportFormat;
  /** Entries in the file. */
  entries: number;
  /** Bytes of the file. */
  bytes: number;
  /** Entries whose body or headers are not whole (or that were left out). */
  warned: number;
  warnings: { n: number; warning: string }[];
  /** Older entries the capture dropped to keep the newest. */
  dropped: number;
  stopReason?: string;
}

/**
 * SECURITY I-67, I-75: headers, credentials and bodies are given only while the person's switches
 * still allow them, each entry judged by its own request URL: a destination that lost the capture
 * switch since goes out as metadata, one that lost Cookies, HttpOnly values or Console & network
 * loses those values (a marker stands in their place).
 */
export function withCurrentPolicy(c: Capture, judge: Judge): Capture {
  if (!c.sensitive) return c;
  const entries = c.entries.map((e): Entry => (!e.blocked && (e.headers || e.body || e.cookies) ? shapeEntry(e, judge(e.url)) : e));
  return { ...c, entries };
}

/** The export of a capture, judged entry by entry against the policy now (`judge`); nothing is given unjudged. */
export function buildExport(captured: Capture, judge: Judge, format: ExportFormat, version: string): { file: ExportFile; summary: ExportSummary } {
  const c = withCurrentPolicy(captured, judge);
  const stamp = new Date(c.startedAt).toISOString().replace(/[-:]/g, "").replace(/\..*$/, "");
  const base = `capture-${c.id}-${stamp}`;
  let file: ExportFile;
  let entries: number;
  let warnings: { n: number; warning: string }[];
  if (format === "har") {
    const { har } = toHar(c, { creatorVersion: version });
    const text = JSON.stringify(har);
    file = { name: `${base}.har`, mimeType: "application/json", bytes: new TextEncoder().encode(text), text };
    entries = c.entries.length;
    warnings = [];
    for (const e of c.entries) for (const w of entryWarnings(e, c.sensitive)) warnings.push({ n: e.n, warning: w });
  } else {
    if (!c.sensitive) {
      throw toolError(
        "invalid_argument",
        `capture ${c.id} recorded metadata only; a replay packet needs the request headers`,
        "Export it as har, or ask the person to turn on sensitive capture for this origin in the Torii options, then capture_start with sensitive: true.",
        { field: "format" },
      );
    }
    const r = toReplay(c);
    if (r.included.length === 0) {
      throw toolError("not_found", `capture ${c.id} has no request with captured headers to replay`, "Let the page send its requests after capture_start, or export as har.", { field: "format" });
    }
    file = { name: `${base}.http`, mimeType: "message/http", bytes: r.bytes };
    entries = r.included.length;
    warnings = r.warnings;
  }
  const warned = new Set(warnings.map((w) => w.n)).size;
  const summary: ExportSummary = {
    captureId: c.id,
    format,
    entries,
    bytes: file.bytes.length,
    warned,
    warnings: warnings.slice(0, MAX_SUMMARY_WARNINGS),
    dropped: c.dropped,
    ...(c.stopReason && c.stopReason !== "stopped" ? { stopReason: c.stopReason } : {}),
  };
  return { file, summary };
}

/** The summary as one short text for the model. */
export function summaryText(s: ExportSummary, saved: string): string {
  const lines = [`${s.format === "har" ? "HAR" : "HTTP/1.1 replay"} of capture ${s.captureId}: ${s.entries} requests, ${s.bytes} bytes, ${saved}`];
  if (s.dropped) lines.push(`${s.dropped} older requests were dropped while capturing (only the newest are kept)`);
  if (s.stopReason) lines.push(`capture had stopped: ${s.stopReason}`);
  if (s.warned) {
    lines.push(`WARNING: ${s.warned} requests are not whole in this file:`);
    for (const w of s.warnings) lines.push(`  #${w.n}: ${w.warning}`);
    const more = s.warnings.length < s.warned ? s.warned - new Set(s.warnings.map((w) => w.n)).size : 0;
    if (more > 0) lines.push(`  … and ${more} more (see the file's comments)`);
  }
  return lines.join("\n");
}
