// The documents that hold a secret, and the network rules that keep it to its origins (SECURITY
// I-76, secrets/netrules.ts). A document is added before any value is sent to it (secretDocument),
// and the rules are in the browser before the value is: a script that reads the field as it lands
// already meets them. The set lives in chrome.storage.session (ids and origins, never a value) and
// the rules are session rules, so a worker restart loses neither; at start the worker drops the
// documents that are gone. A document is gone when another one commits in its frame (or in the
// tab's top frame), when its tab closes, or when the browser no longer knows it; one the browser
// keeps in its back/forward cache holds again if it is restored.

import { netRules, RULE_BASE, RULE_SPAN, type HeldDoc } from "../secrets/netrules.js";
import { toolError } from "./errors.js";

const KEY = "secretHolds";
/** Documents that were left while holding (the back/forward cache may restore them): the newest few. */
const RETIRED_KEY = "secretHoldsRetired";
const MAX_RETIRED = 32;

let docs: HeldDoc[] | undefined;
let retired: HeldDoc[] = [];
let chain: Promise<unknown> = Promise.resolve();

/** Runs `fn` after every earlier update (the set and the rules change one update at a time). */
function serial<T>(fn: () => Promise<T>): Promise<T> {
  const p = chain.then(fn, fn);
  chain = p.catch(() => undefined);
  return p;
}

async function load(): Promise<HeldDoc[]> {
  if (docs) return docs;
  const got = await chrome.storage.session.get([KEY, RETIRED_KEY]);
  docs = Array.isArray(got[KEY]) ? (got[KEY] as HeldDoc[]) : [];
  retired = Array.isArray(got[RETIRED_KEY]) ? (got[RETIRED_KEY] as HeldDoc[]) : [];
  return docs;
}

/** Stores the set, then makes the browser's rules match it (one update: old rules out, new in). */
async function apply(next: HeldDoc[]): Promise<void> {
  docs = next;
  await chrome.storage.session.set({ [KEY]: next, [RETIRED_KEY]: retired });
  const have = await chrome.declarativeNetRequest.getSessionRules();
  const removeRuleIds = have.map((r) => r.id).filter((id) => id >= RULE_BASE && id < RULE_BASE + RULE_SPAN);
  await chrome.declarativeNetRequest.updateSessionRules({ removeRuleIds, addRules: netRules(next) });
}

function intersect(a: readonly string[], b: readonly string[]): string[] {
  return a.filter((x) => b.includes(x));
}

/**
 * SECURITY I-76: the document `documentId` (frame `frameId` of `tabId`, origin `origin`) is about to
 * receive secrets bound to `origins` (one list per secret). Resolves once the tab's rules are in the
 * browser; throws (nothing may be sent) when they cannot be set.
 */
export function holdSecretsIn(tabId: number, frameId: number, documentId: string, origin: string, origins: string[][]): Promise<void> {
  return serial(async () => {
    const cur = await load();
    const bound = origins.reduce<string[] | undefined>((acc, o) => (acc ? intersect(acc, o) : [...o]), undefined) ?? [];
    const had = cur.find((d) => d.documentId === documentId);
    if (had && bound.every((o) => had.origins.includes(o)) && had.origins.every((o) => bound.includes(o))) return;
    // A document that went before its hold was recorded would keep it with nothing to end it: the
    // commit that ended it has been handled already. Judged inside the update, so no commit handled
    // later can be missed.
    if (!had && (await alive(documentId)) !== "live") {
      throw toolError("navigation_failed", "the field's document went away; nothing was filled");
    }
    let next: HeldDoc[];
    if (had) {
      next = cur.map((d) => (d === had ? { ...d, origins: intersect(d.origins, bound) } : d));
    } else {
      const tabs = await chrome.tabs.query({});
      const before = tabs.map((t) => t.id).filter((id): id is number => typeof id === "number" && id !== tabId);
      next = [...cur, { tabId, frameId, documentId, origin, origins: bound, before }];
    }
    try {
      await apply(next);
    } catch {
      throw toolError("internal", "the browser did not take the rules that keep the secret to its origins; nothing was filled");
    }
  });
}

/** The tab has a document that holds a secret (what the worker knows now). */
export function tabHoldsSecret(tabId: number): boolean {
  return !!docs?.some((d) => d.tabId === tabId);
}

/** Drops documents by a predicate; those dropped while the browser may still restore them are kept aside. */
function drop(pred: (d: HeldDoc) => boolean, keepAside = false): Promise<void> {
  return serial(async () => {
    const cur = await load();
    const gone = cur.filter(pred);
    if (gone.length === 0) return;
    if (keepAside) retired = [...retired.filter((r) => !gone.some((g) => g.documentId === r.documentId)), ...gone].slice(-MAX_RETIRED);
    await apply(cur.filter((d) => !pred(d))).catch(() => undefined);
  });
}

/** A document restored from the back/forward cache holds its secrets again. */
function restore(documentId: string): Promise<void> {
  return serial(async () => {
    const cur = await load();
    const r = retired.find((d) => d.documentId === documentId);
    if (!r || cur.some((d) => d.documentId === documentId)) return;
    retired = retired.filter((d) => d !== r);
    await apply([...cur, r]).catch(() => undefined);
  });
}

/** Whether the browser still has the document, live (not a back/forward cache entry). */
async function alive(documentId: string): Promise<"live" | "cached" | "gone"> {
  try {
    const f = (await chrome.webNavigation.getFrame({ documentId } as chrome.webNavigation.GetFrameDetails)) as
      | (chrome.webNavigation.GetFrameResultDetails & { documentLifecycle?: string })
      | null;
    if (!f) return "gone";
    if (f.documentLifecycle === "cached") return "cached";
    return f.documentLifecycle === "pending_deletion" ? "gone" : "live";
  } catch {
    return "gone";
  }
}

/** Drops the documents of `tabId` (all tabs when undefined) the browser no longer has live. */
async function sweep(tabId?: number): Promise<void> {
  const cur = await serial(load);
  const verdicts = await Promise.all(cur.filter((d) => tabId === undefined || d.tabId === tabId).map(async (d) => [d.documentId, await alive(d.documentId)] as const));
  const cached = new Set(verdicts.filter(([, v]) => v === "cached").map(([id]) => id));
  const dead = new Set(verdicts.filter(([, v]) => v !== "live").map(([id]) => id));
  if (dead.size) await drop((d) => dead.has(d.documentId), cached.size > 0);
}

let installed = false;

/** Registers the listeners that end a hold with its document; at start, drops what ended meanwhile. */
export function installSecretNet(): void {
  if (installed) return;
  installed = true;
  chrome.webNavigation.onCommitted.addListener((e) => {
    const id = (e as { documentId?: string }).documentId;
    void serial(load)
      .then(async () => {
        if (id && retired.some((d) => d.documentId === id)) await restore(id);
        if (!docs?.some((d) => d.tabId === e.tabId)) return;
        // Another document in a frame that held one ends it; in the top frame, every frame's document.
        await drop((d) => d.tabId === e.tabId && d.documentId !== id && (e.frameId === 0 || d.frameId === e.frameId), true);
        await sweep(e.tabId);
      })
      .catch(() => undefined);
  });
  chrome.tabs.onRemoved.addListener((tabId) => void drop((d) => d.tabId === tabId));
  chrome.tabs.onReplaced.addListener((_added, removed) => void drop((d) => d.tabId === removed));
  void load()
    .then(() => sweep())
    .then(() => serial(async () => apply(await load())))
    .catch(() => undefined);
}
