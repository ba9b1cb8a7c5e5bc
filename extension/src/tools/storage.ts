// cookies and storage: what the browser keeps for one document's origin (the tab's top document, or
// one of its frames), each behind its own per-origin switch that only the person sets (SECURITY I-68).
// The frame is judged by the origin its own document reports, before anything of its stores is
// read; cookies come from the browser (CDP Network.getCookies for the document's URL, so exactly the
// ones that origin would be sent), storage from the document's isolated world, pinned to the
// document judged. Values of HttpOnly cookies need the separate HttpOnly switch; without it the
// cookie is listed by name, its value withheld. Bounded: a page cannot flood the result.

import { judgeDocument, storeAllowed, type StoreSwitch } from "../policy/policy.js";
import { originOf } from "../policy/pattern.js";
import { cdp } from "../cdp/debugger.js";
import { left, withDeadline } from "../cdp/deadline.js";
import { defineTool, type ToolContext } from "./define.js";
import { toolError } from "./errors.js";
import { checkNoDialog, resolveTab } from "./browser.js";
import { S } from "./common.js";
import { CUT_MARGIN, maskCut } from "./secrets.js";
import { storeOff } from "./gate.js";
import { reportFrame, type FrameReport } from "./frames.js";
import { getPolicy } from "./safety.js";

const MAX_COOKIES = 200;
const MAX_VALUE = 4_096;
const LIMITS = { maxKeys: 200, maxKey: 256, maxValue: 2_000, maxDbs: 50, maxStores: 100 };
/** Characters of keys and values one storage answer carries at most. */
const MAX_STORAGE_CHARS = 60_000;

const FRAME_ID = { type: "integer", minimum: 0, doc: "From frames; default 0 (the top document)" } as const;

/**
 * The document whose stores are read, judged by its own report (SECURITY I-15, I-68): refused
 * with origin_not_allowed (naming nothing) when it is off the list, with storage_not_allowed when
 * its origin's switch is off. Nothing of its stores has been read either way.
 */
async function judgedFrame(tabId: number, frameId: number, sw: StoreSwitch, ctx: ToolContext): Promise<FrameReport> {
  checkNoDialog(tabId);
  const r = await reportFrame(tabId, frameId, left(ctx.deadline, 5_000));
  const what = frameId === 0 ? `the page in tab ${tabId}` : `frame ${frameId} of tab ${tabId}`;
  if (!r) throw toolError("navigation_failed", `${what} did not answer (gone, or not a web page); nothing was read`, "Call frames for the tab's current frames.");
  const v = judgeDocument(await getPolicy(), r.origin, r.url);
  if (!v.allowed) throw toolError("origin_not_allowed", `${what} is not on the person's allowlist; nothing was read`);
  if (!storeAllowed(v, sw)) throw storeOff(sw);
  return r;
}

interface CdpCookie {
  name: string;
  value: string;
  domain: string;
  path: string;
  expires: number;
  secure: boolean;
  httpOnly: boolean;
  session: boolean;
  sameSite?: string;
  partitionKey?: unknown;
}

export interface CookieOut {
  name: string;
  value?: string;
  /** Why the value is not given. */
  withheld?: "httpOnly";
  truncated?: true;
  domain: string;
  path: string;
  secure: boolean;
  httpOnly: boolean;
  sameSite?: string;
  /** Expiry (ISO time), absent for a session cookie. */
  expires?: string;
}

/** SECURITY I-68: an HttpOnly cookie's value only with the HttpOnly switch; every value bounded. */
export function shapeCookies(raw: readonly CdpCookie[], httpOnlyValues: boolean): CookieOut[] {
  return raw.slice(0, MAX_COOKIES).map((c) => {
    // SECURITY I-77: masked before cut.
    const out: CookieOut = { name: maskCut(c.name, 256).text, domain: c.domain, path: c.path, secure: c.secure, httpOnly: c.httpOnly };
    if (c.httpOnly && !httpOnlyValues) out.withheld = "httpOnly";
    else {
      const v = maskCut(c.value, MAX_VALUE);
      out.value = v.text;
      if (v.cut) out.truncated = true;
    }
    if (c.sameSite) out.sameSite = c.sameSite;
    if (!c.session && c.expires > 0) out.expires = new Date(c.expires * 1000).toISOString();
    return out;
  });
}

function cookieLine(c: CookieOut): string {
  const flags = [c.secure ? "Secure" : "", c.httpOnly ? "HttpOnly" : "", c.sameSite ? `SameSite=${c.sameSite}` : "", c.expires ? `expires ${c.expires}` : "session"].filter(Boolean);
  const value = c.withheld ? `(value withheld: HttpOnly, the person's "HttpOnly values" switch is off)` : `${c.value ?? ""}${c.truncated ? "…[truncated]" : ""}`;
  return `${c.name}=${value}  [${c.domain}${c.path}; ${flags.join("; ")}]`;
}

export const cookies = defineTool<{ tabId?: number; frameId?: number }>({
  name: "cookies",
  group: "storage",
  description: "Cookies of the page's or a frame's origin (the person's switch).",
  inputSchema: { type: "object", properties: { tabId: S.tabId, frameId: FRAME_ID } },
  traits: { target: "tab", reads: "page", effects: [], switch: "cookies", dialog: "blocked", handoff: "refused" },
  async handler(a, ctx) {
    const tabId = (await resolveTab(a.tabId)).id as number;
    const frameId = a.frameId ?? 0;
    const doc = await judgedFrame(tabId, frameId, "cookies", ctx);
    // A blank or srcdoc document gets the cookies of its origin's root, never another document's URL.
    const url = originOf(doc.url) === doc.origin ? doc.url : `${doc.origin}/`;
    const r = await cdp<{ cookies?: CdpCookie[] }>(tabId, "Network.getCookies", { urls: [url] }, left(ctx.deadline, 10_000), ctx.signal);
    const p = await getPolicy();
    const v = judgeDocument(p, doc.origin, doc.url);
    // The switch is read again after the browser answered: one the person turned off meanwhile wins.
    if (!storeAllowed(v, "cookies")) throw storeOff("cookies");
    const list = shapeCookies(r.cookies ?? [], storeAllowed(v, "cookiesHttpOnly"));
    const withheld = list.filter((c) => c.withheld).length;
    const total = r.cookies?.length ?? 0;
    const head = `cookies for ${doc.origin} (frame ${frameId}): ${total}${withheld ? `, ${withheld} HttpOnly value${withheld === 1 ? "" : "s"} withheld` : ""}`;
    return {
      text: [head, ...list.map(cookieLine), ...(total > list.length ? [`(${total - list.length} more not listed)`] : [])].join("\n"),
      data: { tabId, frameId, origin: doc.origin, count: total, cookies: list, ...(withheld ? { withheld } : {}) },
      whole: true,
    };
  },
});

interface Area {
  count: number;
  items: { key: string; value: string; length?: number }[];
  error?: string;
}
interface StorageRead {
  refused?: true;
  origin?: string;
  url?: string;
  localStorage?: Area;
  sessionStorage?: Area;
  indexedDB?: { name: string; version?: number; stores: string[] | null }[];
  indexedDBError?: string;
}

// Runs in the judged document's isolated world (self-contained): reads nothing unless the document
// is still of the origin judged. IndexedDB gives database and store names only; a database that
// vanished meanwhile is not created again (the upgrade an open would start is aborted).
async function readStorage(p: { origin: string; maxKeys: number; maxKey: number; maxValue: number; maxDbs: number; maxStores: number }): Promise<StorageRead> {
  if (self.origin !== p.origin) return { refused: true };
  const area = (get: () => Storage): Area => {
    try {
      const s = get();
      const items: Area["items"] = [];
      for (let i = 0; i < s.length && items.length < p.maxKeys; i++) {
        const k = s.key(i);
        if (k === null) continue;
        const v = s.getItem(k) ?? "";
        items.push({ key: k.slice(0, p.maxKey), value: v.slice(0, p.maxValue), ...(v.length > p.maxValue ? { length: v.length } : {}) });
      }
      return { count: s.length, items };
    } catch (e) {
      return { count: 0, items: [], error: String((e as Error)?.name ?? e) };
    }
  };
  const out: StorageRead = { origin: self.origin, url: location.href, localStorage: area(() => localStorage), sessionStorage: area(() => sessionStorage), indexedDB: [] };
  const storesOf = (name: string) =>
    new Promise<string[] | null>((resolve) => {
      const timer = setTimeout(() => resolve(null), 1_000);
      let req: IDBOpenDBRequest;
      try {
        req = indexedDB.open(name);
      } catch {
        clearTimeout(timer);
        return resolve(null);
      }
      req.onupgradeneeded = () => req.transaction?.abort();
      req.onsuccess = () => {
        clearTimeout(timer);
        const db = req.result;
        const names = Array.from(db.objectStoreNames).slice(0, p.maxStores);
        db.close();
        resolve(names);
      };
      req.onerror = () => {
        clearTimeout(timer);
        resolve(null);
      };
    });
  try {
    const dbs = (await indexedDB.databases()).slice(0, p.maxDbs);
    for (const d of dbs) {
      if (!d.name) continue;
      out.indexedDB?.push({ name: d.name.slice(0, p.maxKey), ...(d.version !== undefined ? { version: d.version } : {}), stores: await storesOf(d.name) });
    }
  } catch (e) {
    out.indexedDBError = String((e as Error)?.name ?? e);
  }
  return out;
}

/** Each key and value masked, then cut to the read's limits (the page left CUT_MARGIN beyond them). */
function cutArea(a: Area): Area {
  return {
    ...a,
    items: a.items.map((it) => {
      const k = maskCut(it.key, LIMITS.maxKey);
      const v = maskCut(it.value, LIMITS.maxValue);
      const length = it.length ?? (v.cut ? it.value.length : undefined);
      return { key: k.text, value: v.text, ...(length !== undefined ? { length } : {}) };
    }),
  };
}

/** Bounds the keys and values to MAX_STORAGE_CHARS in all, newest areas last; says what was cut. */
export function boundAreas(areas: Area[], max = MAX_STORAGE_CHARS): boolean {
  let used = 0;
  let cut = false;
  for (const a of areas) {
    const kept: Area["items"] = [];
    for (const it of a.items) {
      const n = it.key.length + it.value.length;
      if (used + n > max) {
        cut = true;
        break;
      }
      used += n;
      kept.push(it);
    }
    a.items = kept;
  }
  return cut;
}

function areaText(name: string, a: Area | undefined): string[] {
  if (!a) return [];
  if (a.error) return [`${name}: not readable (${a.error})`];
  const lines = [`${name}: ${a.count} key${a.count === 1 ? "" : "s"}`];
  for (const it of a.items) lines.push(`  ${JSON.stringify(it.key)} = ${JSON.stringify(it.value)}${it.length ? ` …[${it.length} chars]` : ""}`);
  if (a.items.length < a.count) lines.push(`  (${a.count - a.items.length} more not listed)`);
  return lines;
}

export const storage = defineTool<{ tabId?: number; frameId?: number }>({
  name: "storage",
  group: "storage",
  description: "Web storage entries and IndexedDB names of the page or a frame (the person's switch).",
  inputSchema: { type: "object", properties: { tabId: S.tabId, frameId: FRAME_ID } },
  traits: { target: "tab", reads: "page", effects: [], switch: "storage", dialog: "blocked", handoff: "refused" },
  async handler(a, ctx) {
    const tabId = (await resolveTab(a.tabId)).id as number;
    const frameId = a.frameId ?? 0;
    const doc = await judgedFrame(tabId, frameId, "storage", ctx);
    const target = doc.documentId ? { tabId, documentIds: [doc.documentId] } : { tabId, frameIds: [frameId] };
    const res = await withDeadline(
      chrome.scripting.executeScript({ target, world: "ISOLATED", func: readStorage, args: [{ origin: doc.origin, ...LIMITS, maxKey: LIMITS.maxKey + CUT_MARGIN, maxValue: LIMITS.maxValue + CUT_MARGIN }] }),
      left(ctx.deadline, 8_000),
      "storage read",
      ctx.signal,
    ).catch(() => null);
    const r = res?.[0]?.result as StorageRead | undefined;
    if (!r || r.refused || r.origin !== doc.origin) throw toolError("navigation_failed", `the document changed before its storage was read; nothing was read`, "Call frames, then storage again.");
    // The answering document is judged again, switch included, before its answer is used.
    const v = judgeDocument(await getPolicy(), r.origin, r.url ?? "");
    if (!v.allowed) throw toolError("origin_not_allowed", "the document is not on the person's allowlist; its answer was dropped");
    if (!storeAllowed(v, "storage")) throw storeOff("storage");
    // SECURITY I-77: cut here, after the mask, not in the page where no mask is.
    const local = cutArea(r.localStorage ?? { count: 0, items: [] });
    const session = cutArea(r.sessionStorage ?? { count: 0, items: [] });
    const truncated = boundAreas([local, session]);
    const idb = r.indexedDB ?? [];
    const lines = [`storage of ${doc.origin} (frame ${frameId})`, ...areaText("localStorage", local), ...areaText("sessionStorage", session)];
    lines.push(r.indexedDBError ? `indexedDB: not readable (${r.indexedDBError})` : `indexedDB: ${idb.length} database${idb.length === 1 ? "" : "s"}`);
    for (const d of idb) lines.push(`  ${d.name}${d.version !== undefined ? ` (v${d.version})` : ""}: ${d.stores ? d.stores.join(", ") || "(no stores)" : "(stores not readable)"}`);
    if (truncated) lines.push(`[truncated at ${MAX_STORAGE_CHARS} characters of keys and values]`);
    return {
      text: lines.join("\n"),
      data: {
        tabId,
        frameId,
        origin: doc.origin,
        localStorage: local,
        sessionStorage: session,
        indexedDB: idb,
        ...(r.indexedDBError ? { indexedDBError: r.indexedDBError } : {}),
        ...(truncated ? { truncated: true } : {}),
      },
      whole: true,
    };
  },
});
