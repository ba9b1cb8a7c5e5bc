// Per-tab ref bookkeeping owned by the worker (brief decision 5): the next free ref number and the
// ranges of refs issued to each (frameId, docId). Kept in chrome.storage.session so a restarted
// service worker never reissues a number on a live tab and still knows which frame a ref lives in.
// A ref outside every recorded range was never issued on this tab → stale_ref.

export interface RefRange {
  /** First ref number of the range (inclusive). */
  from: number;
  /** End (exclusive). */
  to: number;
  frameId: number;
  docId: string;
}

export interface TabRefs {
  next: number;
  ranges: RefRange[];
}

/** Oldest ranges beyond this are forgotten; their refs become stale (fail closed). */
export const MAX_RANGES = 400;

export interface SessionKV {
  get(key: string): Promise<unknown>;
  set(key: string, value: unknown): Promise<void>;
  remove(key: string): Promise<void>;
}

export const REF_RE = /^e([1-9][0-9]{0,9})$/;

export function parseRef(ref: string): number | undefined {
  const m = REF_RE.exec(ref);
  return m ? Number(m[1]) : undefined;
}

/** Adds the refs [base, nextRef) issued by one engine call; pure, returns the new state. */
export function recordRange(t: TabRefs, frameId: number, docId: string, base: number, nextRef: number): TabRefs {
  const next = Math.max(t.next, Math.floor(nextRef));
  if (!(nextRef > base)) return next === t.next ? t : { next, ranges: t.ranges };
  const ranges = t.ranges.slice();
  const last = ranges[ranges.length - 1];
  if (last && last.frameId === frameId && last.docId === docId && last.to === base) {
    ranges[ranges.length - 1] = { ...last, to: nextRef };
  } else {
    ranges.push({ from: base, to: nextRef, frameId, docId });
  }
  if (ranges.length > MAX_RANGES) ranges.splice(0, ranges.length - MAX_RANGES);
  return { next, ranges };
}

export function lookupRange(t: TabRefs, n: number): RefRange | undefined {
  for (let i = t.ranges.length - 1; i >= 0; i--) {
    const r = t.ranges[i] as RefRange;
    if (n >= r.from && n < r.to) return r;
  }
  return undefined;
}

export class RefStore {
  private cache = new Map<number, TabRefs>();
  /** Highest ref number issued on any tab (+1), so that each tab's refs are unlike every other's. */
  private globalNext: number | undefined;
  constructor(private readonly kv: SessionKV) {}

  private static readonly GLOBAL_KEY = "torii.refs.next";

  /**
   * Where the next engine call on this tab numbers new refs from: past every ref issued on any tab,
   * so a ref copied from another tab is never one this tab issued (it gets stale_ref, not an
   * action on an element of this tab that happens to share the number).
   */
  async base(tabId: number): Promise<number> {
    const t = await this.get(tabId);
    if (this.globalNext === undefined) {
      const g = await this.kv.get(RefStore.GLOBAL_KEY);
      this.globalNext = typeof g === "number" && g >= 1 ? g : 1;
    }
    return Math.max(t.next, this.globalNext);
  }

  private key(tabId: number): string {
    return `torii.refs.${tabId}`;
  }

  async get(tabId: number): Promise<TabRefs> {
    const c = this.cache.get(tabId);
    if (c) return c;
    const raw = (await this.kv.get(this.key(tabId))) as TabRefs | undefined;
    const t: TabRefs =
      raw && typeof raw.next === "number" && Array.isArray(raw.ranges) ? raw : { next: 1, ranges: [] };
    this.cache.set(tabId, t);
    return t;
  }

  async record(tabId: number, frameId: number, docId: string, base: number, nextRef: number): Promise<void> {
    const t = await this.get(tabId);
    const u = recordRange(t, frameId, docId, base, nextRef);
    // Both writes land before the answer that issued the refs is used (a restarted worker must
    // know them); they go out together.
    const writes: Promise<void>[] = [];
    if (u.next > (this.globalNext ?? 1)) {
      this.globalNext = u.next;
      writes.push(this.kv.set(RefStore.GLOBAL_KEY, u.next));
    }
    if (u !== t) {
      this.cache.set(tabId, u);
      writes.push(this.kv.set(this.key(tabId), u));
    }
    await Promise.all(writes);
  }

  async lookup(tabId: number, ref: string): Promise<RefRange | undefined> {
    const n = parseRef(ref);
    if (n === undefined) return undefined;
    return lookupRange(await this.get(tabId), n);
  }

  async drop(tabId: number): Promise<void> {
    this.cache.delete(tabId);
    await this.kv.remove(this.key(tabId));
  }
}
