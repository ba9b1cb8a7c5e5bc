// The extension's bounded audit copy: the latest 500 tool calls, metadata only — tool, session
// label, origin, outcome, error code, duration, approval decision. Never arguments, typed text,
// page content or results (SECURITY I-21). Pure apart from the injected storage.

export const AUDIT_MAX = 500;

export interface AuditEntry {
  /** Epoch ms when the call arrived. */
  ts: number;
  tool: string;
  session?: string;
  /** Serialised origin (scheme://host[:port]) of the tab the call acted on; "" when none. */
  origin: string;
  outcome: "ok" | "error";
  code?: string;
  ms: number;
  /** "approved" | "denied" | "timeout" | "cancelled" when the person was asked; "auto" when policy allowed it. */
  approval?: string;
  /** A note the extension itself writes, never from the call's arguments: e.g. which proxy profile replaced which (SECURITY I-72). */
  detail?: string;
  /** The secrets the call used, as "NAME on ORIGIN" (SECURITY I-69): names, never values. */
  secrets?: string;
}

const FIELDS = ["ts", "tool", "session", "origin", "outcome", "code", "ms", "approval", "detail", "secrets"] as const;

/** Keeps only the known metadata fields, with bounded sizes (nothing else can slip in). */
export function cleanEntry(e: AuditEntry): AuditEntry {
  const out: AuditEntry = {
    ts: Number(e.ts) || 0,
    tool: String(e.tool).slice(0, 64),
    origin: String(e.origin ?? "").slice(0, 300),
    outcome: e.outcome === "ok" ? "ok" : "error",
    ms: Math.max(0, Math.round(Number(e.ms) || 0)),
  };
  if (e.session) out.session = String(e.session).slice(0, 120);
  if (e.code) out.code = String(e.code).slice(0, 64);
  if (e.approval) out.approval = String(e.approval).slice(0, 16);
  if (e.detail) out.detail = String(e.detail).slice(0, 120);
  if (e.secrets) out.secrets = String(e.secrets).slice(0, 500);
  return out;
}

/** The extension's storage, as the ring uses it (chrome.storage.local in the worker). */
export interface AuditStorage {
  /** The stored values of these keys; absent ones are left out. */
  get(keys: string[]): Promise<Record<string, unknown>>;
  set(items: Record<string, unknown>): Promise<void>;
  remove(keys: string[]): Promise<void>;
}

/**
 * Entries are stored in buckets of this many, under `audit.<n>`, with the range held under `audit`
 * (`{first, next}`: sequence numbers). A save writes only the buckets that changed: rewriting all
 * 500 entries took the worker ~2 ms of serialising every 300 ms of activity, in front of whatever
 * call was running.
 */
const BUCKET = 50;
const HEAD = "audit";
const bucketKey = (b: number) => `${HEAD}.${b}`;

/** A chrome.storage.local key the ring writes (its range or one of its buckets). */
export const isAuditKey = (k: string): boolean => k === HEAD || k.startsWith(`${HEAD}.`);

interface Bucket {
  /** Sequence number of e[0]. */
  s: number;
  e: AuditEntry[];
}

export class AuditRing {
  private entries: AuditEntry[] | null = null;
  /** Sequence number of entries[0]. */
  private first = 0;
  private loading: Promise<void> | null = null;
  private saveTimer: ReturnType<typeof setTimeout> | null = null;
  private readonly dirty = new Set<number>();
  private readonly stale = new Set<number>();

  constructor(
    private readonly store: AuditStorage,
    private readonly max = AUDIT_MAX,
    private readonly saveDelayMs = 300,
  ) {}

  private get next(): number {
    return this.first + (this.entries?.length ?? 0);
  }

  private async ready(): Promise<AuditEntry[]> {
    if (this.entries) return this.entries;
    this.loading ??= this.load();
    await this.loading;
    return this.entries ?? [];
  }

  private async load(): Promise<void> {
    const head = (await this.store.get([HEAD]))[HEAD];
    if (Array.isArray(head)) {
      // An older build's single array: kept, and written as buckets at the next save.
      this.entries = (head as AuditEntry[]).map(cleanEntry).slice(-this.max);
      for (let b = 0; b * BUCKET < this.entries.length; b++) this.dirty.add(b);
      return;
    }
    const h = head as { first?: unknown; next?: unknown } | undefined;
    const first = Number.isSafeInteger(h?.first) ? (h?.first as number) : 0;
    const next = Number.isSafeInteger(h?.next) ? Math.min(h?.next as number, first + this.max) : first;
    const from = Math.floor(first / BUCKET);
    const to = Math.floor((next - 1) / BUCKET);
    const keys: string[] = [];
    for (let b = from; b <= to; b++) keys.push(bucketKey(b));
    // A save that died between writing and removing may have left the buckets just before.
    for (let b = Math.max(0, from - 20); b < from; b++) this.stale.add(b);
    const got = keys.length ? await this.store.get(keys) : {};
    const list: AuditEntry[] = [];
    for (let b = from; b <= to; b++) {
      const v = got[bucketKey(b)] as Bucket | undefined;
      if (!v || !Array.isArray(v.e) || !Number.isSafeInteger(v.s)) continue;
      v.e.forEach((e, i) => {
        const seq = v.s + i;
        if (seq >= first + list.length && seq < next) list.push(cleanEntry(e));
      });
    }
    this.first = first;
    this.entries = list;
  }

  async record(e: AuditEntry): Promise<void> {
    const list = await this.ready();
    list.push(cleanEntry(e));
    this.dirty.add(Math.floor((this.next - 1) / BUCKET));
    if (list.length > this.max) {
      const gone = list.length - this.max;
      list.splice(0, gone);
      for (let b = Math.floor(this.first / BUCKET); b < Math.floor((this.first + gone) / BUCKET); b++) this.stale.add(b);
      this.first += gone;
    }
    this.scheduleSave();
  }

  /** Newest first. */
  async list(limit = this.max): Promise<AuditEntry[]> {
    const list = await this.ready();
    return list.slice(-limit).reverse();
  }

  async clear(): Promise<void> {
    const list = await this.ready();
    for (let b = Math.floor(this.first / BUCKET); b * BUCKET < this.next; b++) this.stale.add(b);
    this.first += list.length;
    this.entries = [];
    this.dirty.clear();
    await this.flush();
  }

  async flush(): Promise<void> {
    if (this.saveTimer) clearTimeout(this.saveTimer);
    this.saveTimer = null;
    if (!this.entries) return;
    const items: Record<string, unknown> = { [HEAD]: { first: this.first, next: this.next } };
    for (const b of this.dirty) {
      const s = Math.max(this.first, b * BUCKET);
      items[bucketKey(b)] = { s, e: this.entries.slice(s - this.first, (b + 1) * BUCKET - this.first) } satisfies Bucket;
    }
    this.dirty.clear();
    const stale = [...this.stale].map(bucketKey);
    this.stale.clear();
    // Written before the old buckets go: a worker stopped in between loses nothing.
    await this.store.set(items);
    if (stale.length) await this.store.remove(stale);
  }

  private scheduleSave(): void {
    if (this.saveTimer) return;
    this.saveTimer = setTimeout(() => {
      this.saveTimer = null;
      void this.flush();
    }, this.saveDelayMs);
  }
}

function csvCell(v: unknown): string {
  const s = v === undefined ? "" : String(v);
  // Formula injection guard for spreadsheet apps, then RFC 4180 quoting.
  const safe = /^[=+\-@\t\r]/.test(s) ? `'${s}` : s;
  return /[",\n\r]/.test(safe) ? `"${safe.replace(/"/g, '""')}"` : safe;
}

export function auditToCSV(entries: readonly AuditEntry[]): string {
  const rows = [FIELDS.join(",")];
  for (const e of entries) {
    rows.push(FIELDS.map((f) => csvCell(f === "ts" ? new Date(e.ts).toISOString() : e[f])).join(","));
  }
  return rows.join("\n") + "\n";
}

export function auditToJSON(entries: readonly AuditEntry[]): string {
  return JSON.stringify(entries.map(cleanEntry), null, 2) + "\n";
}
