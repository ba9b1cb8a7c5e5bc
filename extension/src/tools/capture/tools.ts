// capture_start / capture_stop / capture_list / capture_export: network captures bound to one tab,
// frame and document (SECURITY I-67). A capture belongs to the agent session that started it; the
// others never see it (an unknown id and another session's id get the same not_found). Exports go
// to the daemon's download sandbox and come back as a resource link with a summary, never as bytes
// in the model's context.

import { captureSensitiveAllowed, judgeUrl } from "../../policy/policy.js";
import { originOf } from "../../policy/pattern.js";
import { defineTool, type ToolContext, type ToolOutput } from "../define.js";
import { toolError } from "../errors.js";
import { S } from "../common.js";
import { putFile } from "../files.js";
import { getPolicy } from "../safety.js";
import { buildExport, summaryText, withCurrentPolicy, type ExportFile, type ExportFormat, type ExportSummary } from "./export.js";
import { judgeDestination, reindex, setCapturePolicy, stop } from "./listen.js";
import { captureWithoutForeignUrls } from "./foreign.js";
import { METADATA_CAP, SENSITIVE_CAP, type Capture, type Entry } from "./model.js";
import { toB64 } from "../../shared/b64.js";
import { addCapture, getCapture, loadCaptures, sessionCaptures } from "./store.js";

const sessionOf = (ctx: ToolContext) => ctx.gate?.owner?.id ?? "anonymous";

function newId(): string {
  const b = crypto.getRandomValues(new Uint8Array(6));
  return Array.from(b, (x) => x.toString(16).padStart(2, "0")).join("");
}

/** The session's own capture, or not_found (the same words for another session's id). */
async function own(ctx: ToolContext, id: string): Promise<Capture> {
  await loadCaptures();
  const c = getCapture(id);
  if (!c || c.session !== sessionOf(ctx)) throw toolError("not_found", `no capture ${JSON.stringify(id)} in this session`, "Call capture_list for this session's captures, or capture_start to begin one.");
  return c;
}

/** SECURITY I-14: a capture of an origin the person removed since is no longer read. */
async function stillAllowed(c: Capture): Promise<void> {
  const p = await getPolicy();
  setCapturePolicy(p);
  if (!judgeUrl(p, c.url).allowed) throw toolError("origin_not_allowed", `capture ${c.id}'s page is no longer on the person's allowlist; nothing was read`);
}

function state(c: Capture): Record<string, unknown> {
  return {
    captureId: c.id,
    tabId: c.tabId,
    frameId: c.frameId,
    origin: c.origin,
    sensitive: c.sensitive,
    running: c.stoppedAt === undefined,
    ...(c.stopReason ? { stopReason: c.stopReason } : {}),
    entries: c.entries.length,
    dropped: c.dropped,
    max: c.max,
  };
}

function line(c: Capture): string {
  const st = c.stoppedAt === undefined ? "running" : `stopped (${c.stopReason})`;
  return `${c.id} tab ${c.tabId}${c.frameId ? ` frame ${c.frameId}` : ""} ${c.origin} ${c.sensitive ? "sensitive" : "metadata"} ${st}: ${c.entries.length} requests${c.dropped ? `, ${c.dropped} dropped` : ""}`;
}

function entryRow(e: Entry): Record<string, unknown> {
  return {
    n: e.n,
    method: e.method,
    url: e.url,
    ...(e.blocked ? { blocked: true } : {}),
    type: e.type,
    ...(e.status !== undefined ? { status: e.status } : {}),
    ...(e.mimeType ? { mimeType: e.mimeType } : {}),
    ...(e.size !== undefined ? { size: e.size } : {}),
    ...(e.endedAt !== undefined ? { ms: Math.round(e.endedAt - e.startedAt) } : {}),
    ...(e.error ? { error: e.error } : {}),
    ...(e.redirected ? { redirected: true } : {}),
    ...(e.headers ? { headers: e.headers.length } : {}),
    ...(e.withheld ? { withheld: e.withheld } : {}),
    ...(e.body ? { body: { size: e.body.size, kept: e.body.kept, ...(e.body.binary ? { binary: true } : {}), ...(e.body.omitted ? { omitted: e.body.omitted } : {}) } } : {}),
  };
}

function entryLine(e: Entry): string {
  const url = e.blocked ? "(origin not allowed)" : e.url;
  const bits = [e.status !== undefined ? String(e.status) : e.error ?? "pending", e.mimeType, e.endedAt !== undefined ? `${Math.round(e.endedAt - e.startedAt)}ms` : undefined];
  if (e.body) bits.push(`body ${e.body.kept}/${e.body.size}B${e.body.omitted ? ` ${e.body.omitted}` : ""}`);
  if (e.withheld) bits.push(`withheld: ${e.withheld.join(", ")}`);
  return `#${e.n} ${e.method} ${url} ${bits.filter(Boolean).join(" ")}`;
}

export const captureStart = defineTool<{ tabId?: number; frameId?: number; sensitive?: boolean }>({
  name: "capture_start",
  group: "devtools",
  description: "Record a tab's fetch/XHR (metadata; sensitive: headers, bodies).",
  inputSchema: {
    type: "object",
    properties: { tabId: S.tabId, frameId: { type: "integer", minimum: 0 }, sensitive: { type: "boolean" } },
  },
  traits: { target: "tab", reads: "page", effects: [], switch: "none", dialog: "ignores", handoff: "refused" },
  idempotent: false,
  async handler(a, ctx): Promise<ToolOutput> {
    const tabId = ctx.gate?.tabId ?? a.tabId;
    if (tabId === undefined) throw toolError("no_tab", "no tab to capture", "Pass tabId, or navigate to open a tab.");
    const frameId = a.frameId ?? 0;
    const f = await chrome.webNavigation.getFrame({ tabId, frameId }).catch(() => null);
    const documentId = (f as { documentId?: string } | null)?.documentId;
    if (!f || !documentId) throw toolError("not_found", `tab ${tabId} has no frame ${frameId}`, "Omit frameId for the top document.");
    if (!/^https?:/i.test(f.url)) throw toolError("unsupported_page", `frame ${frameId} of tab ${tabId} is not an http(s) document`);
    const policy = await getPolicy();
    setCapturePolicy(policy);
    const v = judgeUrl(policy, f.url);
    // SECURITY I-14/I-15: the document captured is judged itself (a frame by its own URL).
    if (!v.allowed) throw toolError("origin_not_allowed", `the document in frame ${frameId} of tab ${tabId} is not on the person's allowlist; nothing was captured`);
    const sensitive = a.sensitive === true;
    // SECURITY I-67: headers and bodies only where the person turned the switch on; never by the agent.
    if (sensitive && !captureSensitiveAllowed(v)) {
      throw toolError(
        "sensitive_not_allowed",
        `sensitive capture (request headers, cookies, bodies) is off for ${originOf(f.url)}; nothing was captured`,
        "Only the person can turn on \"Capture headers/bodies\" for this site in the Torii options; ask them, or call capture_start without sensitive for metadata.",
      );
    }
    const cap = sensitive ? SENSITIVE_CAP : METADATA_CAP;
    await loadCaptures();
    const c: Capture = {
      id: newId(),
      session: sessionOf(ctx),
      tabId,
      frameId,
      documentId,
      origin: originOf(f.url),
      url: f.url,
      sensitive,
      max: cap,
      startedAt: Date.now(),
      entries: [],
      dropped: 0,
      ignored: 0,
      seq: 0,
      held: 0,
    };
    if (!addCapture(c)) throw toolError("invalid_argument", "this session already runs 8 captures", "Stop one with capture_stop first.");
    reindex();
    // The document may have been replaced between the look and the listeners: then it is not this one.
    const again = await chrome.webNavigation.getFrame({ tabId, frameId }).catch(() => null);
    if ((again as { documentId?: string } | null)?.documentId !== documentId) {
      stop(c, again && originOf(again.url) === c.origin ? "document_changed" : "origin_changed");
      throw toolError("navigation_failed", `the page in tab ${tabId} navigated while the capture started; nothing was captured`, "Wait for the page to load, then call capture_start again.");
    }
    const text = `capture ${c.id} started on tab ${tabId}${frameId ? ` frame ${frameId}` : ""} (${c.url}): ${sensitive ? "sensitive (request headers and bodies; cookie, Authorization and body values only as each site's own switches allow)" : "metadata only"}, newest ${c.max} requests kept; it stops if the document changes`;
    return { text, data: state(c), whole: true };
  },
});

export const captureStop = defineTool<{ captureId: string }>({
  name: "capture_stop",
  group: "devtools",
  description: "Stop a capture (it stays exportable).",
  inputSchema: { type: "object", properties: { captureId: { type: "string", minLength: 1, maxLength: 64 } }, required: ["captureId"] },
  traits: { target: "none", reads: "none", effects: [], switch: "none", dialog: "ignores", handoff: "allowed" },
  async handler(a, ctx) {
    const c = await own(ctx, a.captureId);
    if (c.stoppedAt === undefined) stop(c, "stopped");
    return { text: line(c), data: state(c), whole: true };
  },
});

export const captureList = defineTool<{ captureId?: string }>({
  name: "capture_list",
  group: "devtools",
  description: "Your captures, or one capture's requests.",
  inputSchema: { type: "object", properties: { captureId: { type: "string", minLength: 1, maxLength: 64 } } },
  traits: { target: "none", reads: "page", effects: [], switch: "none", dialog: "ignores", handoff: "allowed" },
  async handler(a, ctx) {
    if (a.captureId === undefined) {
      await loadCaptures();
      const mine = sessionCaptures(sessionOf(ctx)).sort((x, y) => x.startedAt - y.startedAt);
      return { text: mine.length ? mine.map(line).join("\n") : "no captures in this session", data: { captures: mine.map(state) }, whole: true };
    }
    const mine = await own(ctx, a.captureId);
    await stillAllowed(mine);
    // SECURITY I-75: what each request holds, as an export would give it now.
    const c = withCurrentPolicy(mine, judgeDestination);
    const text = [line(c), ...c.entries.map(entryLine)].join("\n");
    return { text, data: { ...state(c), requests: c.entries.map(entryRow) }, whole: true };
  },
});

/** The export's file and summary, judged by the person's policy now: what the lead's wiring or a test saves. */
export async function captureExportFile(session: string, captureId: string, format: ExportFormat): Promise<{ file: ExportFile; summary: ExportSummary }> {
  await loadCaptures();
  const c = getCapture(captureId);
  if (!c || c.session !== session) throw toolError("not_found", `no capture ${JSON.stringify(captureId)} in this session`, "Call capture_list for this session's captures.");
  await stillAllowed(c);
  // SECURITY I-79: the file, like every result, carries no URL of an origin off the list.
  return buildExport(captureWithoutForeignUrls(c, await getPolicy()), judgeDestination, format, chrome.runtime.getManifest().version);
}

export const captureExport = defineTool<{ captureId: string; format?: ExportFormat }>({
  name: "capture_export",
  group: "devtools",
  description: "Save a capture as a HAR or raw HTTP/1.1 (http) file resource.",
  inputSchema: {
    type: "object",
    properties: { captureId: { type: "string", minLength: 1, maxLength: 64 }, format: { type: "string", enum: ["har", "http"] } },
    required: ["captureId"],
  },
  traits: { target: "none", reads: "page", effects: [], switch: "none", dialog: "ignores", handoff: "allowed" },
  idempotent: false,
  async handler(a, ctx) {
    const c = await own(ctx, a.captureId);
    const { file, summary } = await captureExportFile(c.session, c.id, a.format ?? "har");
    const link = await putFile(ctx, { name: file.name, mimeType: file.mimeType, source: { tab: c.tabId, what: "a capture export in bytes" }, ...(file.text !== undefined ? { text: file.text } : { data: toB64(file.bytes) }) });
    return { text: summaryText(summary, `saved as ${link.name} (${link.uri})`), data: { ...summary, saved: true, file: link }, whole: true, resources: [link] } as ToolOutput;
  },
});
