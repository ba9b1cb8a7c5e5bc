// A FIFO lock per tab: engine calls on one tab run one at a time, so the ref counter handed to one
// frame is never handed to another frame at the same time. Waiting past the deadline is `busy`
// (nothing was sent).

import { toolError } from "./errors.js";

interface Waiter {
  grant(): void;
}

export class TabLocks {
  private held = new Set<number>();
  private queues = new Map<number, Waiter[]>();

  async acquire(tabId: number, ms: number, signal?: AbortSignal): Promise<() => void> {
    if (!this.held.has(tabId)) {
      this.held.add(tabId);
      return this.releaser(tabId);
    }
    return new Promise((resolve, reject) => {
      const q = this.queues.get(tabId) ?? [];
      this.queues.set(tabId, q);
      const w: Waiter = {
        grant: () => {
          clearTimeout(timer);
          signal?.removeEventListener("abort", onAbort);
          resolve(this.releaser(tabId));
        },
      };
      const drop = () => {
        const i = q.indexOf(w);
        if (i >= 0) q.splice(i, 1);
      };
      const timer = setTimeout(() => {
        drop();
        reject(toolError("busy", `tab ${tabId} is busy with another call`));
      }, Math.max(0, ms));
      const onAbort = () => {
        clearTimeout(timer);
        drop();
        reject(toolError("cancelled", "cancelled while waiting for the tab"));
      };
      signal?.addEventListener("abort", onAbort, { once: true });
      q.push(w);
    });
  }

  private releaser(tabId: number): () => void {
    let done = false;
    return () => {
      if (done) return;
      done = true;
      const next = this.queues.get(tabId)?.shift();
      if (next) next.grant();
      else this.held.delete(tabId);
    };
  }
}
