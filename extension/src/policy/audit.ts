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

export interface AuditStorage {
  load(): Promise<unknown>;
  save(entries: AuditEntry[]): Promise<void>;
}

export class AuditRing {
  private entries: AuditEntry[] | null = null;
  private loading: Promise<void> | null = null;
  private saveTimer: ReturnType<typeof setTimeout> | null = null;

  constructor(
    private readonly store: AuditStorage,
    private readonly max = AUDIT_MAX,
    private readonly saveDelayMs = 300,
  ) {}

  private async ready(): Promise<AuditEntry[]> {
    if (this.entries) return this.entries;
    this.loading ??= this.store.load().then((raw) => {
      const list = Array.isArray(raw) ? (raw as AuditEntry[]).map(cleanEntry) : [];
      // Entries recorded while loading come after the stored ones.
      this.entries = [...list, ...(this.entries ?? [])].slice(-this.max);
    });
    await this.loading;
    return this.entries ?? [];
  }

  async record(e: AuditEntry): Promise<void> {
    const list = await this.ready();
    list.push(cleanEntry(e));
    if (list.length > this.max) list.splice(0, list.length - this.max);
    this.scheduleSave();
  }

  /** Newest first. */
  async list(limit = this.max): Promise<AuditEntry[]> {
    const list = await this.ready();
    return list.slice(-limit).reverse();
  }

  async clear(): Promise<void> {
    this.entries = [];
    await this.store.save([]);
  }

  async flush(): Promise<void> {
    if (this.saveTimer) clearTimeout(this.saveTimer);
    this.saveTimer = null;
    if (this.entries) await this.store.save(this.entries);
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
