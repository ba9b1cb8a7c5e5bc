// The extension's copy of the daemon's audit chain: the chain links (record id and hash) the daemon
// showed it, kept in the browser, outside the daemon's state directory. On every (re)connect they go
// back to the daemon (`torii/audit/witness`), whose store must still hold each of them: the hash
// chain alone cannot stop someone who rewrites audit.db and recomputes every hash after an edit
// (SECURITY I-70). Pure apart from the injected storage and request.

export const WITNESS_MAX = 32;
export const WITNESS_METHOD = "torii/audit/witness";

export interface ChainLink {
  seq: number;
  hash: string;
}

export interface WitnessState {
  /** The daemon these links are of; another daemon's chain is another chain. */
  daemonId: string;
  /** Oldest first. */
  links: ChainLink[];
  /** The daemon's store disagreed: kept (and the links frozen) until the person clears the audit copy. */
  mismatch?: string;
  checkedAt?: number;
}

export interface WitnessStorage {
  load(): Promise<unknown>;
  save(s: WitnessState): Promise<void>;
}

export type Request = (method: string, params: unknown) => Promise<unknown>;

const HASH = /^[0-9a-f]{64}$/;

function link(v: unknown): ChainLink | null {
  const o = v as { seq?: unknown; hash?: unknown } | null;
  if (!o || typeof o !== "object") return null;
  if (typeof o.seq !== "number" || !Number.isSafeInteger(o.seq) || o.seq < 0) return null;
  if (typeof o.hash !== "string" || !HASH.test(o.hash)) return null;
  return { seq: o.seq, hash: o.hash };
}

function clean(raw: unknown): WitnessState | null {
  const o = raw as Partial<WitnessState> | null;
  if (!o || typeof o !== "object" || typeof o.daemonId !== "string" || !Array.isArray(o.links)) return null;
  const links = o.links.map(link).filter((l): l is ChainLink => l !== null).slice(-WITNESS_MAX);
  const s: WitnessState = { daemonId: o.daemonId, links };
  if (typeof o.mismatch === "string" && o.mismatch) s.mismatch = o.mismatch.slice(0, 500);
  if (typeof o.checkedAt === "number") s.checkedAt = o.checkedAt;
  return s;
}

/** Adds head (a newer link) to the links, oldest first, at most WITNESS_MAX. */
export function addLink(links: readonly ChainLink[], head: ChainLink): ChainLink[] {
  if (head.seq === 0) return [...links]; // an empty chain: nothing to witness
  const out = links.filter((l) => l.seq !== head.seq);
  out.push(head);
  out.sort((a, b) => a.seq - b.seq);
  return out.slice(-WITNESS_MAX);
}

export interface CrossCheck {
  head: ChainLink;
  checked: number;
  mismatch?: string;
}

export class AuditWitness {
  private chain: Promise<unknown> = Promise.resolve();

  constructor(
    private readonly store: WitnessStorage,
    private readonly now: () => number = Date.now,
  ) {}

  async state(): Promise<WitnessState | null> {
    return clean(await this.store.load());
  }

  /**
   * Hands the daemon the links we hold (none to only learn the head), then keeps its head as a new
   * link unless the store disagreed. Calls run one at a time.
   */
  check(daemonId: string, request: Request, send = true): Promise<CrossCheck> {
    const run = this.chain.then(() => this.run(daemonId, request, send));
    this.chain = run.catch(() => undefined);
    return run;
  }

  private async run(daemonId: string, request: Request, send: boolean): Promise<CrossCheck> {
    let s = await this.state();
    if (!s || s.daemonId !== daemonId) s = { daemonId, links: [] };
    const witnesses = send ? s.links : [];
    const raw = (await request(WITNESS_METHOD, { witnesses })) as { head?: unknown; checked?: unknown; mismatch?: unknown } | null;
    const head = link(raw?.head);
    if (!head) throw new Error(`${WITNESS_METHOD}: the daemon sent no chain head`);
    const res: CrossCheck = { head, checked: typeof raw?.checked === "number" ? raw.checked : 0 };
    if (typeof raw?.mismatch === "string" && raw.mismatch) res.mismatch = raw.mismatch;
    if (res.mismatch) {
      s.mismatch = res.mismatch;
    } else if (!s.mismatch) {
      s.links = addLink(s.links, head);
    }
    if (witnesses.length > 0) s.checkedAt = this.now();
    await this.store.save(s);
    return res;
  }

  /** The person cleared the audit copy: start witnessing afresh. */
  async clear(): Promise<void> {
    const s = await this.state();
    await this.store.save({ daemonId: s?.daemonId ?? "", links: [] });
  }
}
