// What the worker withholds from the agent (SECURITY I-77). The values to mask are the person's
// secrets themselves, read from the encrypted store (every secret, used or not, locked or not; a
// seed's recent codes): nothing about them lives only in the worker's memory, so a worker that
// Chrome stopped and started again masks exactly as before. The tabs a value was sent to are kept
// in chrome.storage.session, written before the value leaves the worker: what cannot be masked
// (pixels, PDFs, binary bytes) is refused on them.

import { compileMask, type MaskEntry, type Masker } from "./mask.js";
import type { SecretStore } from "./store.js";

/** One 30 s step of a seed's codes: the mask is rebuilt when the codes move on. */
const STEP_MS = 30_000;

export interface TaintBackend {
  get(): Promise<number[]>;
  set(tabs: number[]): Promise<void>;
}

const TAINT_KEY = "torii.secretTabs";

/** chrome.storage.session: the browser's run, not the worker's. */
export const sessionTaint: TaintBackend = {
  async get() {
    const r = await chrome.storage.session.get(TAINT_KEY);
    const v = r[TAINT_KEY];
    return Array.isArray(v) ? v.filter((x): x is number => typeof x === "number") : [];
  },
  async set(tabs) {
    await chrome.storage.session.set({ [TAINT_KEY]: tabs });
  },
};

interface Built {
  key: string;
  masker: Masker;
  entries: { name: string; origins: string[]; values: string[] }[];
}

export class Outbound {
  private built: Promise<Built> | null = null;
  private builtKey = "";
  private tabs: Promise<Set<number>> | null = null;
  private last: Masker | undefined;

  constructor(
    private readonly store: SecretStore,
    private readonly taint: TaintBackend,
    private readonly now: () => number = Date.now,
  ) {}

  private async current(): Promise<Built> {
    const key = `${this.store.version}:${Math.floor(this.now() / STEP_MS)}`;
    if (this.built && this.builtKey === key) return this.built;
    this.builtKey = key;
    const p = this.store.maskValues(this.now()).then((entries) => {
      const masker = compileMask(entries);
      this.last = masker;
      return { key, entries, masker };
    });
    this.built = p;
    // A store that cannot be read now is read again on the next call.
    p.catch(() => {
      if (this.built === p) this.built = null;
    });
    return p;
  }

  /** The mask over every secret the person keeps. */
  async masker(): Promise<Masker> {
    return (await this.current()).masker;
  }

  /**
   * The latest mask, for code that cannot wait (a captured event cut to size as it arrives); the
   * worker builds it at start (warm) and on every change of the store.
   */
  sync(): Masker | undefined {
    return this.last;
  }

  warm(): void {
    void this.current().catch(() => undefined);
  }

  /**
   * What a document of `origin` gets to mask its own replies and match queries against (the page
   * engine): only the secrets bound to that origin, whose values its documents may receive anyway.
   * `k` names the set, so the engine compiles it once.
   */
  async forOrigin(origin: string): Promise<{ k: string; e: MaskEntry[] } | undefined> {
    const b = await this.current();
    const e = b.entries.filter((x) => x.origins.includes(origin)).map((x) => ({ name: x.name, values: x.values }));
    return e.length ? { k: `${b.key}:${e.map((x) => x.name).join(",")}`, e } : undefined;
  }

  private loadTabs(): Promise<Set<number>> {
    this.tabs ??= this.taint.get().then(
      (t) => new Set(t),
      () => new Set<number>(),
    );
    return this.tabs;
  }

  /** Records that a secret's value is about to be sent into `tabId`; resolves once it is stored. */
  async received(tabId: number): Promise<void> {
    const s = await this.loadTabs();
    if (s.has(tabId)) return;
    s.add(tabId);
    await this.taint.set([...s]);
  }

  /** A secret's value was sent into this tab in this browser run. */
  async holds(tabId: number): Promise<boolean> {
    return (await this.loadTabs()).has(tabId);
  }

  /** The tab closed: its documents, and the values in them, are gone. */
  async closed(tabId: number): Promise<void> {
    const s = await this.loadTabs();
    if (s.delete(tabId)) await this.taint.set([...s]);
  }
}
