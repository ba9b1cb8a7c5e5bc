// Pending human approvals: a call that the person's policy says "ask" about waits here until the
// person approves or denies it in the extension's approval window, or until it times out
// (SECURITY I-19). When no one can answer (an injected fact, SECURITY I-80) it is refused at once
// as "unanswerable" and never waits or counts as approved. Pure: the window is opened through an
// injected callback.

import type { ApprovalKind } from "./policy.js";

export interface ApprovalRequest {
  id: string;
  kind: ApprovalKind;
  /**
   * The other kinds this one request stands for: a call whose effects cannot be known counts as
   * each, and the person's one answer covers them all (SECURITY I-71).
   */
  also?: ApprovalKind[];
  tool: string;
  /** The origin the action happens on (the person's own UI shows it; agents never see a blocked host). */
  origin: string;
  /** Destination origin for navigation, when it differs. */
  target?: string;
  /** What the action touches: "button \"Delete account\"", a ref or selector. */
  element?: string;
  /** Text to be typed, already masked where it is secret. */
  text?: string;
  session?: string;
  /** The tab the action happens in (the approval window shows its title). */
  tabId?: number;
  createdAt: number;
  expiresAt: number;
}

export type ApprovalOutcome = "approved" | "denied" | "timeout" | "cancelled" | "unanswerable";

interface Pending {
  req: ApprovalRequest;
  done(o: ApprovalOutcome): void;
}

export class ApprovalQueue {
  private pending = new Map<string, Pending>();
  constructor(
    private readonly deps: {
      newId?: () => string;
      now?: () => number;
      /** Shows the request to the person (opens the approval window). */
      show?: (req: ApprovalRequest) => void;
      /** Called whenever the pending list changes. */
      changed?: () => void;
      /**
       * True when no person can answer now (a headless managed browser with no Torii page open):
       * the request is then refused at once, never shown, never approved (SECURITY I-80).
       */
      unanswerable?: () => Promise<boolean>;
    } = {},
  ) {}

  list(): ApprovalRequest[] {
    return [...this.pending.values()].map((p) => p.req);
  }

  get(id: string): ApprovalRequest | undefined {
    return this.pending.get(id)?.req;
  }

  /** Waits for the person; never rejects. */
  async ask(r: Omit<ApprovalRequest, "id" | "createdAt" | "expiresAt">, timeoutMs: number, signal?: AbortSignal): Promise<ApprovalOutcome> {
    // SECURITY I-80: a question no one can see is not asked; a fact that cannot be read counts as
    // "no one can answer" (a refusal, never an approval).
    if (this.deps.unanswerable && (await this.deps.unanswerable().catch(() => true))) return "unanswerable";
    if (signal?.aborted) return "cancelled";
    return this.wait(r, timeoutMs, signal);
  }

  private wait(r: Omit<ApprovalRequest, "id" | "createdAt" | "expiresAt">, timeoutMs: number, signal?: AbortSignal): Promise<ApprovalOutcome> {
    const now = (this.deps.now ?? Date.now)();
    const id = (this.deps.newId ?? (() => crypto.randomUUID()))();
    const req: ApprovalRequest = { ...r, id, createdAt: now, expiresAt: now + timeoutMs };
    return new Promise<ApprovalOutcome>((resolve) => {
      let timer: ReturnType<typeof setTimeout> | undefined;
      const onAbort = () => finish("cancelled");
      const finish = (o: ApprovalOutcome) => {
        if (!this.pending.has(id)) return;
        this.pending.delete(id);
        if (timer) clearTimeout(timer);
        signal?.removeEventListener("abort", onAbort);
        this.deps.changed?.();
        resolve(o);
      };
      this.pending.set(id, { req, done: finish });
      if (signal?.aborted) return finish("cancelled");
      signal?.addEventListener("abort", onAbort, { once: true });
      timer = setTimeout(() => finish("timeout"), timeoutMs);
      this.deps.changed?.();
      this.deps.show?.(req);
    });
  }

  /** The person's answer; false when the request is gone (answered, timed out, cancelled). */
  decide(id: string, approve: boolean): boolean {
    const p = this.pending.get(id);
    if (!p) return false;
    p.done(approve ? "approved" : "denied");
    return true;
  }
}

/** Masks a secret for display: length only. */
export function maskSecret(s: string): string {
  return `•••• (${[...s].length} characters, hidden)`;
}
