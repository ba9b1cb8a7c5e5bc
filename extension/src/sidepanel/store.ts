// The room's memory across panel reloads: mode, loop guard, transcript and each agent's session and
// the person's choices, in chrome.storage.local under one key per window. Writes are coalesced;
// the page flushes the pending one as it hides.

import type { RoomMode } from "../room/mentions.js";
import type { LoopGuard } from "../room/relay.js";
import { Transcript } from "../room/transcript.js";
import { newAgent, type Agent } from "./agent.js";

interface Saved {
  v: 1;
  mode: RoomMode;
  agents: Record<string, { sessionId: string; access: Agent["access"]; enabled: boolean | null; turnFrom?: string }>;
  guard: { count: number; tripped: boolean };
  transcript: unknown;
}

/** What a save writes, read at write time. */
export interface RoomState {
  mode: RoomMode;
  guard: LoopGuard;
  transcript: Transcript;
  agents: Iterable<Agent>;
}

/** Entries kept when the whole transcript does not fit the storage quota. */
const QUOTA_ENTRIES = 200;
const COALESCE_MS = 150;

export class RoomStore {
  private timer: ReturnType<typeof setTimeout> | null = null;

  constructor(
    private readonly key: string,
    private readonly state: () => RoomState,
  ) {}

  /** Schedules a write of the current state (one per COALESCE_MS). */
  save(): void {
    if (this.timer) return;
    this.timer = setTimeout(() => {
      this.timer = null;
      void this.write();
    }, COALESCE_MS);
  }

  /** Writes a pending save now (closing or reloading must not lose its last quarter second). */
  flush(): void {
    if (!this.timer) return;
    clearTimeout(this.timer);
    this.timer = null;
    void this.write();
  }

  /** The saved room, or undefined when none (or of another format) is stored. Restores the guard. */
  async load(guard: LoopGuard): Promise<{ mode: RoomMode; transcript: Transcript; agents: Agent[] } | undefined> {
    const raw = (await chrome.storage.local.get(this.key))[this.key] as Partial<Saved> | undefined;
    if (!raw || raw.v !== 1) return undefined;
    guard.restore(raw.guard);
    const agents = Object.entries(raw.agents ?? {}).map(([name, a]) => {
      const sessionId = typeof a.sessionId === "string" ? a.sessionId : "";
      return newAgent(name, {
        enabled: a.enabled ?? null,
        sessionId,
        access: a.access === "act" || a.access === "none" ? a.access : "read",
        // The daemon's word on the session comes when it re-attaches.
        state: sessionId ? "connecting" : "off",
        ...(typeof a.turnFrom === "string" ? { turnFrom: a.turnFrom } : {}),
      });
    });
    return { mode: raw.mode === "ambient" ? "ambient" : "mention", transcript: Transcript.restore(raw.transcript), agents };
  }

  private async write(): Promise<void> {
    const { mode, guard, transcript, agents } = this.state();
    const s: Saved = {
      v: 1,
      mode,
      agents: Object.fromEntries(
        [...agents].map((a) => [a.name, { sessionId: a.sessionId, access: a.access, enabled: a.enabled, ...(a.turnFrom ? { turnFrom: a.turnFrom } : {}) }]),
      ),
      guard: guard.snapshot(),
      transcript: transcript.persist(),
    };
    try {
      await chrome.storage.local.set({ [this.key]: s });
    } catch {
      // Over quota: keep the newest part of the transcript.
      const p = transcript.persist();
      await chrome.storage.local.set({ [this.key]: { ...s, transcript: { ...p, entries: p.entries.slice(-QUOTA_ENTRIES) } } }).catch(() => undefined);
    }
  }
}
