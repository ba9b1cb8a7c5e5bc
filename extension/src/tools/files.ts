// Files as MCP resources: a tool that produces bytes (a PDF, a saved page, a screenshot kept as a
// file, an export) hands them to the daemon, which writes them into the calling session's folder
// of the download sandbox and answers with a resource_link; the agent reads the bytes through
// resources/read only if it asks, so megabytes never cross into its context by default. The
// daemon owns the disk and checks the session (SECURITY I-66); the names are checked here too, so
// a bad one fails before any bytes travel. A file larger than one chunk goes in bounded chunks
// (torii/files/begin, chunk, commit), so no request has to fit the link's 1 MiB cap (SECURITY I-81).

import type { ResourceLink, ToolContext } from "./define.js";
import { toolError, ToolError, type ErrorCode } from "./errors.js";
import { outbound, refuseUnmaskable } from "./secrets.js";
import { policyJudge, withholdForeignUrls } from "../outbound/foreign.js";
import { policyNow } from "./gate.js";
import { defaultPolicy } from "../policy/policy.js";
import { toB64 } from "../shared/b64.js";

/** Bytes one request carries, as internal/files ChunkMax: its base64 fits the link's 1 MiB request cap. */
export const CHUNK_BYTES = 512 * 1024;
/** The largest file, as internal/files MaxTransfer. */
export const MAX_FILE_BYTES = 256 * 1024 * 1024;
/** Base64 characters of one chunk: a multiple of 4, so a long base64 string splits into valid pieces. */
const CHUNK_B64 = Math.floor(CHUNK_BYTES / 3) * 4;

/** The longest file name the sandbox takes (UTF-8 bytes), as internal/files MaxName. */
const MAX_NAME = 200;

type Requester = (method: string, params: unknown, timeoutMs?: number) => Promise<unknown>;
let request: Requester | undefined;

/** The link to the daemon (set by the service worker; absent in unit tests). */
export function setFileRequester(f: Requester): void {
  request = f;
}

/**
 * A plain file name, never a path (SECURITY I-66): no `/` or `\`, no leading dot (so no `..`),
 * no control or bidi control characters, 1–200 bytes. Throws invalid_argument naming the field.
 */
export function checkName(name: string, field = "name"): void {
  const bytes = new TextEncoder().encode(name).length;
  const shown = JSON.stringify(name.slice(0, 80)).replace(BIDI_ALL, (c) => `\\u${codePoint(c).slice(2)}`);
  const bad = (why: string) => toolError("invalid_argument", `${field}: ${shown} ${why}`, "Give a plain file name like report.pdf: no folders, no leading dot.", { field });
  if (bytes === 0 || bytes > MAX_NAME) throw bad(`must be 1–${MAX_NAME} bytes`);
  if (/[\\/]/.test(name)) throw bad("holds a path separator");
  if (name.startsWith(".")) throw bad("starts with a dot");
  // eslint-disable-next-line no-control-regex
  if (/[\u0000-\u001f\u007f-\u009f]/.test(name)) throw bad("holds a control character");
  const b = BIDI.exec(name);
  // SECURITY I-85: the daemon refuses them too (internal/files ValidName); refused here before any bytes travel.
  if (b) throw bad(`holds ${codePoint(b[0])}, a bidirectional control character that can disguise a name's real extension; give a name without it`);
}

/**
 * Bidirectional control characters (marks, embeddings, overrides, isolates): in a file name they
 * reorder what the person reads, so "report\u202Efdp.exe" shows as "reportexe.pdf" (SECURITY I-85).
 */
const BIDI = /[\u061c\u200e\u200f\u202a-\u202e\u2066-\u2069]/;
const BIDI_ALL = new RegExp(BIDI.source, "g");

function codePoint(c: string): string {
  return `U+${c.codePointAt(0)!.toString(16).toUpperCase().padStart(4, "0")}`;
}

/** The calling session and its sandbox folder, from the call's _meta. */
function sessionOf(ctx: ToolContext): string {
  const id = ctx.gate?.owner?.id;
  if (!id) throw toolError("invalid_argument", "saving a file needs an agent session (the daemon names it on every call)");
  return id;
}

function linkRequest(): Requester {
  if (!request) throw toolError("extension_not_connected", "the link to the daemon is down; the file was not saved");
  return request;
}

/** A daemon refusal (its data.toolCode) as the tool error it names; a closed link as not connected. */
function asFileError(e: unknown): ToolError {
  if (e instanceof ToolError) return e;
  const data = (e as { data?: unknown } | null)?.data;
  const parsed = typeof data === "string" ? safeJson(data) : data;
  const code = (parsed as { toolCode?: unknown } | null)?.toolCode;
  const msg = e instanceof Error ? e.message : String(e);
  if (typeof code === "string") return toolError(code as ErrorCode, msg);
  if (e instanceof Error && /closed|not connected/i.test(e.name + e.message)) return toolError("extension_not_connected", `the link to the daemon went down; the file was not saved (${msg})`);
  return toolError("internal", `the daemon did not save the file: ${msg}`);
}

function safeJson(s: string): unknown {
  try {
    return JSON.parse(s);
  } catch {
    return undefined;
  }
}

/** The answer as a ResourceLink, or an internal error for anything else. */
function asLink(r: unknown): ResourceLink {
  const o = r as Partial<ResourceLink> | null;
  if (!o || o.type !== "resource_link" || typeof o.uri !== "string" || typeof o.name !== "string" || typeof o.mimeType !== "string" || typeof o.size !== "number") {
    throw toolError("internal", "the daemon's answer to a saved file is not a resource_link");
  }
  return { type: "resource_link", uri: o.uri, name: o.name, mimeType: o.mimeType, size: o.size };
}

/** The size and cap in words, for too_large messages. */
function mib(n: number): string {
  return `${(n / 1048576).toFixed(1)} MiB`;
}

/**
 * Where a file's content came from: the agent's own arguments, or a tab (its pixels, its PDF, what
 * it sent and received). Every caller says which, so no page-derived bytes pass unchecked.
 */
export type FileSource = "agent" | { tab: number; what: string };

/** A request's wait for the daemon: what the call's deadline leaves, at least a second. */
function linkMs(ctx: ToolContext): number {
  return Math.max(1_000, ctx.deadline - Date.now());
}

/** The bytes a base64 string (whole quads, padded) decodes to. */
export function b64Bytes(b64: string): number {
  const pad = b64.endsWith("==") ? 2 : b64.endsWith("=") ? 1 : 0;
  return Math.floor(b64.length / 4) * 3 - pad;
}

function tooLarge(name: string, size: number, hint: string): ToolError {
  return toolError("too_large", `${name} is ${mib(size)}, over the ${mib(MAX_FILE_BYTES)} one file may take; nothing was saved`, hint, { size, limit: MAX_FILE_BYTES });
}

/** A file on its way to the daemon in chunks: nothing is in the sandbox until commit. */
export interface FileWriter {
  /** Appends base64 (whole quads; any length, split into chunks here). */
  write(b64: string): Promise<void>;
  /** Bytes sent so far. */
  readonly size: number;
  /** The file appears in the session's folder under a free name. */
  commit(): Promise<ResourceLink>;
  /** Drops what was sent (best effort: the daemon also drops it when the link closes or goes silent). */
  cancel(): void;
}

/**
 * Opens a chunked file transfer for the calling session. Bytes from a tab that received a secret
 * are refused first (SECURITY I-77: no mask can read them). Every request checks the call's
 * signal, so a call that timed out or was cancelled saves nothing (SECURITY I-81).
 */
export async function openFile(
  ctx: ToolContext,
  f: { name: string; mimeType: string; source: FileSource; size?: number },
  tooLargeHint = "Save less (a smaller range or selection) and retry.",
): Promise<FileWriter> {
  checkName(f.name);
  if (f.source !== "agent") await refuseUnmaskable(f.source.tab, f.source.what);
  if (f.size !== undefined && f.size > MAX_FILE_BYTES) throw tooLarge(f.name, f.size, tooLargeHint);
  const sessionId = sessionOf(ctx);
  const send = linkRequest();
  const live = () => {
    if (ctx.signal.aborted) throw ctx.signal.reason instanceof ToolError ? ctx.signal.reason : toolError("cancelled", "the call was cancelled; nothing was saved");
  };
  let open = true;
  const call = async (method: string, params: unknown): Promise<unknown> => {
    live();
    if (!open) throw toolError("cancelled", "the file transfer was dropped; nothing was saved");
    try {
      return await send(method, params, linkMs(ctx));
    } catch (e) {
      throw asFileError(e);
    }
  };
  const begun = (await call("torii/files/begin", { sessionId, name: f.name, mimeType: f.mimeType, ...(f.size !== undefined ? { size: f.size } : {}) })) as { id?: unknown } | null;
  if (typeof begun?.id !== "string") throw toolError("internal", "the daemon's answer to a file transfer is malformed");
  const id = begun.id;
  let size = 0;
  const cancel = () => {
    if (!open) return;
    open = false;
    void send("torii/files/cancel", { id }, 5_000).catch(() => undefined);
  };
  const guarded = async <T>(p: () => Promise<T>): Promise<T> => {
    try {
      return await p();
    } catch (e) {
      cancel();
      throw e;
    }
  };
  return {
    get size() {
      return size;
    },
    write: (b64: string) =>
      guarded(async () => {
        // One chunk's worth goes as it is (even padded); more is split on whole quads.
        const step = b64Bytes(b64) <= CHUNK_BYTES ? b64.length : CHUNK_B64;
        for (let i = 0; i < b64.length; i += step) {
          const part = b64.slice(i, i + step);
          const n = b64Bytes(part);
          if (size + n > MAX_FILE_BYTES) throw tooLarge(f.name, size + n, tooLargeHint);
          await call("torii/files/chunk", { id, offset: size, data: part });
          size += n;
        }
      }),
    commit: () =>
      guarded(async () => {
        const link = asLink(await call("torii/files/commit", { sessionId, id, size }));
        open = false;
        return link;
      }),
    cancel,
  };
}

/**
 * Writes bytes (base64 `data`) or UTF-8 `text` as a new file of the calling session's sandbox
 * folder and returns its resource_link: in one request when it fits one chunk, else in chunks.
 * `tooLargeHint` is the fix a too_large error names (how to make this tool's output smaller).
 * SECURITY I-77: text passes the same mask as every result, and bytes from a tab that received a
 * secret are refused (no mask can read them).
 */
export async function putFile(
  ctx: ToolContext,
  f: { name: string; mimeType: string; data?: string; text?: string; source: FileSource },
  tooLargeHint = "Save less (a smaller range or selection) and retry.",
): Promise<ResourceLink> {
  checkName(f.name);
  if (f.data !== undefined && f.source !== "agent") await refuseUnmaskable(f.source.tab, f.source.what);
  if (f.text !== undefined) {
    let text = (await outbound.masker()).text(f.text);
    // SECURITY I-79: a file from a tab carries no URL of an origin off the list either.
    if (f.source !== "agent") text = withholdForeignUrls(text, policyJudge((await policyNow()?.catch(() => undefined)) ?? defaultPolicy()));
    f = { ...f, text };
  }
  const utf8 = f.text !== undefined ? new TextEncoder().encode(f.text) : undefined;
  const size = utf8 ? utf8.length : b64Bytes(f.data ?? "");
  if (size > MAX_FILE_BYTES) throw tooLarge(f.name, size, tooLargeHint);
  if (size > CHUNK_BYTES) {
    // Masked already: the writer sends these bytes as they are.
    const w = await openFile(ctx, { name: f.name, mimeType: f.mimeType, source: "agent", size }, tooLargeHint);
    try {
      if (utf8) for (let i = 0; i < utf8.length; i += CHUNK_BYTES) await w.write(toB64(utf8.subarray(i, i + CHUNK_BYTES)));
      else await w.write(f.data ?? "");
      return await w.commit();
    } finally {
      w.cancel();
    }
  }
  const sessionId = sessionOf(ctx);
  const send = linkRequest();
  try {
    const params = { sessionId, name: f.name, mimeType: f.mimeType, ...(f.data !== undefined ? { data: f.data } : { text: f.text ?? "" }) };
    return asLink(await send("torii/files/put", params, linkMs(ctx)));
  } catch (e) {
    throw asFileError(e);
  }
}

/** Moves a finished download the person allowed into the session's sandbox folder. */
export async function adoptDownload(sessionId: string, path: string, name: string): Promise<ResourceLink> {
  try {
    return asLink(await linkRequest()("torii/files/adopt", { sessionId, path, name }, 30_000));
  } catch (e) {
    throw asFileError(e);
  }
}

/** Absolute paths of the calling session's own sandbox files, for upload. */
export async function sandboxPaths(ctx: ToolContext, names: string[]): Promise<string[]> {
  names.forEach((n, i) => checkName(n, `files[${i}]`));
  const sessionId = sessionOf(ctx);
  try {
    const r = (await linkRequest()("torii/files/path", { sessionId, names }, linkMs(ctx))) as { paths?: unknown } | null;
    const paths = r?.paths;
    if (!Array.isArray(paths) || paths.length !== names.length || !paths.every((p) => typeof p === "string")) throw toolError("internal", "the daemon's answer for upload's files is malformed");
    return paths as string[];
  } catch (e) {
    throw asFileError(e);
  }
}

/**
 * A name the web chose (a download's) as a valid sandbox name, like internal/files SafeName: its
 * last path segment, without leading dots, control or bidi characters; "download" when nothing is left.
 */
export function safeName(raw: string): string {
  // eslint-disable-next-line no-control-regex
  let n = (raw.split(/[\\/]/).pop() ?? "").replace(/[\u0000-\u001f\u007f-\u009f]/g, "").replace(BIDI_ALL, "").replace(/^[.\s]+/, "").trim();
  while (new TextEncoder().encode(n).length > MAX_NAME) n = n.slice(0, -1);
  return n === "" ? "download" : n;
}
