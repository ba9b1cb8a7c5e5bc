// Agent-to-agent relays: the wrapping other agents see, and the loop guard that stops a cascade.

/** Wraps an agent's reply for the other agents: `<message from="name">…</message>`. */
export function wrapRelay(from: string, text: string): string {
  const name = from.replace(/[^\w.-]/g, "_");
  // The body cannot close the wrapper early and forge a second sender.
  const body = text.replace(/<\/?message\b/gi, (t) => t.replace("<", "&lt;"));
  return `<message from="${name}">\n${body}\n</message>`;
}

/**
 * Counts agent-to-agent relays since the person last spoke. Relays 1…limit pass; the next one
 * trips the guard, and every relay after it is refused until the person speaks again.
 */
export class LoopGuard {
  private n = 0;
  private trippedFlag = false;

  constructor(private lim: number) {
    if (!Number.isFinite(lim) || lim < 0) this.lim = 0;
  }

  get limit(): number {
    return this.lim;
  }

  set limit(v: number) {
    this.lim = Number.isFinite(v) && v >= 0 ? Math.floor(v) : this.lim;
  }

  get count(): number {
    return this.n;
  }

  get tripped(): boolean {
    return this.trippedFlag;
  }

  /** The person spoke: the cascade budget is whole again. */
  reset(): void {
    this.n = 0;
    this.trippedFlag = false;
  }

  /** Asks to relay one message. False when the guard is (or just became) tripped. */
  allow(): boolean {
    if (this.trippedFlag) return false;
    if (this.n >= this.lim) {
      this.trippedFlag = true;
      return false;
    }
    this.n++;
    return true;
  }

  snapshot(): { count: number; tripped: boolean } {
    return { count: this.n, tripped: this.trippedFlag };
  }

  restore(s: { count?: unknown; tripped?: unknown } | undefined): void {
    this.n = typeof s?.count === "number" && s.count >= 0 ? s.count : 0;
    this.trippedFlag = s?.tripped === true;
  }
}
