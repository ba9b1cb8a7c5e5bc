// Ref bookkeeping owned by the worker, which outlives every page. SECURITY I-63: every document that issues
// refs gets a tag no other document of any tab ever had; its refs are that tag and a number the
// document counts from 1 (shared/refname.ts). The worker hands out tags from one counter and keeps,
// per tab, which (frameId, docId) each tag belongs to, in chrome.storage.session, so a restarted
// service worker neither reissues a tag nor forgets where a ref lives. A ref whose tag this tab
// never recorded is stale_ref; one whose document is gone fails in the engine (docId).
import { parseRef, tagIndex, tagName } from "../shared/refname.js";

export { parseRef } from "../shared/refname.js";

export interface TagDoc {
  tag: string;
  frameId: number;
  docId: string;
}

export interface TabRefs {
  docs: TagDoc[];
}

/** Oldest documents beyond this are forgotten per tab; their refs become stale (fail closed). */
export const MAX_DOCS = 400;
/**
 * Tags are reserved in blocks: the counter's high mark is written before any tag under it is
 * offered, so a restarted worker starts above every tag a document may have taken. The mark is
 * raised two blocks ahead, so a call rarely waits for the write.
 */
export const TAG_BLOCK = 16;

export interface SessionKV {
  get(key: string): Promise<unknown>;
  set(key: string, value: unknown): Promise<void>;
  remove(key: string): Promise<void>;
}

/** Adds the (tag → frame, document) binding; pure, returns the same object when it is known. */
export function recordTag(t: TabRefs, frameId: number, docId: string, tag: string): TabRefs {
  // A tag is only ever taken by one document, so a known tag is already bound to it.
  if (lookupTag(t, tag)) return t;
  const docs = t.docs.concat({ tag, frameId, docId });
  if (docs.length > MAX_DOCS) docs.splice(0, docs.length - MAX_DOCS);
  return { docs };
}

export function lookupTag(t: TabRefs, tag: string): TagDoc | undefined {
  for (let i = t.docs.length - 1; i >= 0; i--) {
    const d = t.docs[i] as TagDoc;
    if (d.tag === tag) return d;
  }
  return undefined;
}

export class RefStore {
  private cache = new Map<number, TabRefs>();
  /** Next tag index to offer. */
  private nextTag: number | undefined;
  /** Tags below this mark are written as reserved; one at or above it is not offered until it is. */
  private mark = 0;
  private raising: Promise<void> | undefined;
  private loading: Promise<void> | undefined;
  /** Offered tags whose call showed they were not taken: offered again first (smallest first). */
  private free: number[] = [];
  /** Per tab, the write of its bindings in flight (writes of one tab land in order). */
  private writes = new Map<number, Promise<void>>();
  constructor(private readonly kv: SessionKV) {}

  private static readonly TAG_KEY = "torii.refs.tag";

  private key(tabId: number): string {
    return `torii.refs.${tabId}`;
  }

  private async load(): Promise<void> {
    if (this.nextTag !== undefined) return;
    this.loading ??= (async () => {
      const g = await this.kv.get(RefStore.TAG_KEY);
      const start = typeof g === "number" && Number.isInteger(g) && g >= 0 ? g : 0;
      if (this.nextTag === undefined) {
        this.nextTag = start;
        this.mark = start;
      }
    })();
    await this.loading;
  }

  /** Writes a higher reservation mark; the mark counts only once the write has landed. */
  private raise(): Promise<void> {
    this.raising ??= (async () => {
      const to = (this.nextTag as number) + 2 * TAG_BLOCK;
      try {
        await this.kv.set(RefStore.TAG_KEY, to);
        this.mark = Math.max(this.mark, to);
      } finally {
        this.raising = undefined;
      }
    })();
    return this.raising;
  }

  /**
   * A fresh tag for one engine call, unique to it among all tabs: a document that has no tag yet
   * takes it. Give it back with release() when the reply shows it was not taken. The reservation
   * is raised ahead, off the call's path, while half a block is left.
   */
  async offer(): Promise<string> {
    await this.load();
    if (this.free.length) return tagName(this.free.shift() as number);
    while ((this.nextTag as number) >= this.mark) await this.raise();
    const i = this.nextTag as number;
    this.nextTag = i + 1;
    if (this.mark - this.nextTag <= TAG_BLOCK / 2) void this.raise().catch(() => undefined);
    return tagName(i);
  }

  /**
   * The reply of the call it was offered to shows the tag was not taken (the answering document
   * reports another tag, or none): it may be offered again. Never for a call without a reply,
   * whose document may have taken it.
   */
  release(tag: string): void {
    const i = tagIndex(tag);
    if (i === undefined || this.nextTag === undefined || i >= this.nextTag || this.free.includes(i)) return;
    this.free.push(i);
    this.free.sort((a, b) => a - b);
  }

  async get(tabId: number): Promise<TabRefs> {
    const c = this.cache.get(tabId);
    if (c) return c;
    const raw = (await this.kv.get(this.key(tabId))) as TabRefs | undefined;
    const t: TabRefs = raw && Array.isArray(raw.docs) ? raw : { docs: [] };
    this.cache.set(tabId, t);
    return t;
  }

  /**
   * The document (frameId, docId) issues refs under tag. Known at once to this worker; written to
   * the session store after the call, off its path: a worker that restarts before the write lands
   * only finds those refs stale (the tag itself was reserved before it was offered, so it is
   * never another document's).
   */
  async record(tabId: number, frameId: number, docId: string, tag: string): Promise<void> {
    const t = await this.get(tabId);
    const u = recordTag(t, frameId, docId, tag);
    if (u === t) return;
    this.cache.set(tabId, u);
    const prev = this.writes.get(tabId) ?? Promise.resolve();
    const w = prev.then(() => (this.cache.get(tabId) === u ? this.kv.set(this.key(tabId), u) : undefined)).catch(() => undefined);
    this.writes.set(tabId, w);
    void w.then(() => {
      if (this.writes.get(tabId) === w) this.writes.delete(tabId);
    });
  }

  /** Resolves once every binding recorded so far is written (tests, and a clean shutdown). */
  async flushed(): Promise<void> {
    await Promise.all([...this.writes.values()]);
  }

  async lookup(tabId: number, ref: string): Promise<TagDoc | undefined> {
    const p = parseRef(ref);
    if (p === undefined) return undefined;
    return lookupTag(await this.get(tabId), p.tag);
  }

  async drop(tabId: number): Promise<void> {
    this.cache.delete(tabId);
    await this.writes.get(tabId);
    await this.kv.remove(this.key(tabId));
  }
}
