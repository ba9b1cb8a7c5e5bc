// The room's transcript: what the panel shows and persists per window. Pure: ACP session/update
// payloads go in, entries come out, and every change reports which entries it touched so the
// view can re-render only those (batched per animation frame by the panel).

type ToolStatus = "pending" | "running" | "done" | "failed";
type PlanStatus = "pending" | "in_progress" | "completed";

interface PermissionOption {
  optionId: string;
  name: string;
  kind: string; // allow_once | allow_always | reject_once | reject_always
}

interface Base {
  id: string;
  ts: number;
}

export type Entry =
  | (Base & {
      kind: "user";
      text: string;
      to: string[];
      /** Agents whose turn for this message failed or was stopped, and why: the message offers Retry. */
      undelivered?: { agents: string[]; reason: string };
    })
  | (Base & { kind: "agent"; agent: string; sessionId: string; text: string; thought: string; streaming: boolean })
  | (Base & {
      kind: "tool";
      agent: string;
      sessionId: string;
      toolCallId: string;
      title: string;
      toolKind: string;
      status: ToolStatus;
      touched: string[];
      detail: string;
    })
  | (Base & { kind: "plan"; agent: string; sessionId: string; items: { content: string; status: PlanStatus }[] })
  | (Base & {
      kind: "permission";
      agent: string;
      sessionId: string;
      requestId: string;
      title: string;
      touched: string[];
      options: PermissionOption[];
      /** Empty while waiting; else what happened ("approved: Allow once", "denied", "cancelled"). */
      decided: string;
    })
  | (Base & { kind: "notice"; text: string; level: "info" | "warn" | "error" });

export type EntryKind = Entry["kind"];
export type EntryOf<K extends EntryKind> = Extract<Entry, { kind: K }>;

/** Entries kept in storage and memory; the view renders fewer (see the panel's "show earlier"). */
export const MAX_ENTRIES = 1000;
/** One bubble never grows past this; a flood is cut with a marker. */
const MAX_TEXT = 200_000;

export interface Persisted {
  v: 1;
  seq: number;
  entries: Entry[];
}

type Obj = Record<string, unknown>;

function obj(v: unknown): Obj | undefined {
  return typeof v === "object" && v !== null && !Array.isArray(v) ? (v as Obj) : undefined;
}

function str(v: unknown): string {
  return typeof v === "string" ? v : "";
}

function toolStatus(s: unknown): ToolStatus | undefined {
  switch (s) {
    case "pending":
      return "pending";
    case "in_progress":
      return "running";
    case "completed":
      return "done";
    case "failed":
      return "failed";
    default:
      return undefined;
  }
}

const TOUCH_KEYS = ["url", "tabId", "ref", "selector", "element", "target", "frameId", "key", "direction"];

/** What a (browser) tool call touched, from its input and locations; never typed text or secrets. */
export function touchedOf(rawInput: unknown, locations: unknown): string[] {
  const out: string[] = [];
  const input = obj(rawInput);
  if (input) {
    for (const k of TOUCH_KEYS) {
      const v = input[k];
      if ((typeof v === "string" && v !== "") || typeof v === "number") {
        out.push(`${k === "tabId" ? "tab" : k} ${String(v).slice(0, 200)}`);
      }
    }
  }
  if (Array.isArray(locations)) {
    for (const l of locations.slice(0, 5)) {
      const p = str(obj(l)?.path);
      if (p) out.push(p.slice(0, 200));
    }
  }
  return out.slice(0, 6);
}

/** The text of a tool call's content blocks (results), shortened for the card. */
function contentText(content: unknown): string {
  if (!Array.isArray(content)) return "";
  const parts: string[] = [];
  for (const c of content) {
    const o = obj(c);
    const inner = obj(o?.content) ?? o;
    const t = str(inner?.text);
    if (t) parts.push(t);
  }
  const s = parts.join("\n");
  return s.length > 2000 ? s.slice(0, 2000) + "…" : s;
}

export class Transcript {
  entries: Entry[] = [];
  private seq = 0;
  private readonly byId = new Map<string, Entry>();
  /** The streaming agent bubble of each session's current turn. */
  private readonly open = new Map<string, string>();
  /** The plan card of each session's current turn. */
  private readonly plans = new Map<string, string>();
  /** All reply text of each session's current turn (what gets relayed). */
  private readonly turnText = new Map<string, string>();
  /** Ids of entries dropped from the front since the last drain (the view removes them). */
  removed: string[] = [];

  constructor(private readonly now: () => number = Date.now) {}

  static restore(p: unknown, now?: () => number): Transcript {
    const t = new Transcript(now);
    const o = obj(p);
    if (!o || o.v !== 1 || !Array.isArray(o.entries)) return t;
    t.seq = typeof o.seq === "number" ? o.seq : 0;
    for (const e of o.entries as Entry[]) {
      if (!obj(e) || typeof e.id !== "string" || typeof e.kind !== "string") continue;
      // A bubble that was streaming when the panel closed is finished now (its turn resumes as new updates).
      if (e.kind === "agent") e.streaming = false;
      t.entries.push(e);
      t.byId.set(e.id, e);
    }
    return t;
  }

  persist(): Persisted {
    return { v: 1, seq: this.seq, entries: this.entries };
  }

  get(id: string): Entry | undefined {
    return this.byId.get(id);
  }

  clear(): void {
    this.removed.push(...this.entries.map((e) => e.id));
    this.entries = [];
    this.byId.clear();
    this.open.clear();
    this.plans.clear();
    // turnText is kept: a turn in flight still relays its whole reply.
  }

  private add<K extends EntryKind>(e: Omit<EntryOf<K>, "id" | "ts">): EntryOf<K> {
    const full = { ...e, id: `e${++this.seq}`, ts: this.now() } as EntryOf<K>;
    this.entries.push(full);
    this.byId.set(full.id, full);
    while (this.entries.length > MAX_ENTRIES) {
      const old = this.entries.shift();
      if (old) {
        this.byId.delete(old.id);
        this.removed.push(old.id);
      }
    }
    return full;
  }

  user(text: string, to: string[]): Entry {
    return this.add<"user">({ kind: "user", text, to });
  }

  notice(text: string, level: "info" | "warn" | "error" = "info"): Entry {
    return this.add<"notice">({ kind: "notice", text, level });
  }

  /** A turn starts for a session: its reply text is collected afresh. */
  beginTurn(sessionId: string): void {
    this.turnText.set(sessionId, "");
    this.closeOpen(sessionId);
    this.plans.delete(sessionId);
  }

  private closeOpen(sessionId: string): string | undefined {
    const id = this.open.get(sessionId);
    this.open.delete(sessionId);
    if (!id) return undefined;
    const e = this.byId.get(id);
    if (e?.kind === "agent" && e.streaming) {
      e.streaming = false;
      return id;
    }
    return undefined;
  }

  private openBubble(sessionId: string, agent: string): EntryOf<"agent"> {
    const id = this.open.get(sessionId);
    const e = id ? this.byId.get(id) : undefined;
    if (e?.kind === "agent") return e;
    const n = this.add<"agent">({ kind: "agent", agent, sessionId, text: "", thought: "", streaming: true });
    this.open.set(sessionId, n.id);
    return n;
  }

  /** Applies one ACP session/update; returns the ids of entries changed or added. */
  apply(sessionId: string, agent: string, update: unknown): string[] {
    const u = obj(update);
    if (!u) return [];
    switch (u.sessionUpdate) {
      case "agent_message_chunk":
      case "agent_thought_chunk": {
        const c = obj(u.content);
        const text = c?.type === "text" ? str(c.text) : "";
        if (text === "") return [];
        const b = this.openBubble(sessionId, agent);
        if (u.sessionUpdate === "agent_message_chunk") {
          b.text = cap(b.text + text);
          this.turnText.set(sessionId, cap((this.turnText.get(sessionId) ?? "") + text));
        } else {
          b.thought = cap(b.thought + text);
        }
        return [b.id];
      }
      case "tool_call":
      case "tool_call_update": {
        const changed: string[] = [];
        const closed = this.closeOpen(sessionId);
        if (closed) changed.push(closed);
        const toolCallId = str(u.toolCallId);
        let t = this.findTool(sessionId, toolCallId);
        if (!t) {
          t = this.add<"tool">({
            kind: "tool",
            agent,
            sessionId,
            toolCallId,
            title: str(u.title) || "tool call",
            toolKind: str(u.kind),
            status: toolStatus(u.status) ?? "pending",
            touched: [],
            detail: "",
          });
        }
        if (typeof u.title === "string" && u.title) t.title = u.title;
        if (typeof u.kind === "string") t.toolKind = u.kind;
        const st = toolStatus(u.status);
        if (st) t.status = st;
        const touched = touchedOf(u.rawInput, u.locations);
        if (touched.length) t.touched = touched;
        const d = contentText(u.content);
        if (d) t.detail = d;
        changed.push(t.id);
        return changed;
      }
      case "plan": {
        const items = Array.isArray(u.entries)
          ? u.entries.map((x) => {
              const o = obj(x);
              const s = o?.status;
              return {
                content: str(o?.content),
                status: (s === "in_progress" || s === "completed" ? s : "pending") as PlanStatus,
              };
            })
          : [];
        const id = this.plans.get(sessionId);
        const p = id ? this.byId.get(id) : undefined;
        if (p?.kind === "plan") {
          p.items = items;
          return [p.id];
        }
        const n = this.add<"plan">({ kind: "plan", agent, sessionId, items });
        this.plans.set(sessionId, n.id);
        return [n.id];
      }
      default:
        return [];
    }
  }

  private findTool(sessionId: string, toolCallId: string): (EntryOf<"tool">) | undefined {
    for (let i = this.entries.length - 1; i >= 0; i--) {
      const e = this.entries[i];
      if (e?.kind === "tool" && e.sessionId === sessionId && e.toolCallId === toolCallId) return e;
    }
    return undefined;
  }

  /** A turn ended: closes the bubble; returns the turn's whole reply text and the changed ids. */
  endTurn(sessionId: string, stopReason: string): { reply: string; changed: string[] } {
    const changed: string[] = [];
    const closed = this.closeOpen(sessionId);
    if (closed) changed.push(closed);
    this.plans.delete(sessionId);
    // A turn that ended leaves no tool card spinning.
    for (const e of this.entries) {
      if (e.kind === "tool" && e.sessionId === sessionId && (e.status === "pending" || e.status === "running")) {
        e.status = stopReason === "end_turn" ? "done" : "failed";
        changed.push(e.id);
      }
    }
    const reply = this.turnText.get(sessionId) ?? "";
    this.turnText.delete(sessionId);
    return { reply, changed };
  }

  permission(
    sessionId: string,
    agent: string,
    requestId: string,
    params: unknown,
  ): EntryOf<"permission"> {
    const p = obj(params);
    const tc = obj(p?.toolCall);
    const options: PermissionOption[] = Array.isArray(p?.options)
      ? p.options
          .map((o) => obj(o))
          .filter((o): o is Obj => !!o && typeof o.optionId === "string")
          .map((o) => ({ optionId: str(o.optionId), name: str(o.name) || str(o.optionId), kind: str(o.kind) }))
      : [];
    return this.add<"permission">({
      kind: "permission",
      agent,
      sessionId,
      requestId,
      title: str(tc?.title) || "use a tool",
      touched: touchedOf(tc?.rawInput, tc?.locations),
      options,
      decided: "",
    });
  }

  findPermission(requestId: string): (EntryOf<"permission">) | undefined {
    for (let i = this.entries.length - 1; i >= 0; i--) {
      const e = this.entries[i];
      if (e?.kind === "permission" && e.requestId === requestId) return e;
    }
    return undefined;
  }

  /** Marks every undecided permission request of a session with why (its agent ended); returns the changed ids. */
  withdrawPermissions(sessionId: string, why: string): string[] {
    const changed: string[] = [];
    for (const e of this.entries) {
      if (e.kind === "permission" && e.sessionId === sessionId && !e.decided) {
        e.decided = why;
        changed.push(e.id);
      }
    }
    return changed;
  }

  /** Takes the ids removed since the last call. */
  drainRemoved(): string[] {
    const r = this.removed;
    this.removed = [];
    return r;
  }
}

function cap(s: string): string {
  return s.length > MAX_TEXT ? s.slice(0, MAX_TEXT) + "\n\n…(cut: reply too long)" : s;
}
