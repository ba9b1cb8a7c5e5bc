// The panel's end of the `torii.panel` port (src/room/port.ts): JSON-RPC-style calls to the worker,
// reconnecting (which wakes the worker) whenever the port drops. Messages other than answers go to
// the panel's handler.

import { PANEL_PORT, type PanelToWorker, type WorkerToPanel } from "../room/port.js";

export class PanelCallError extends Error {
  constructor(
    readonly code: number,
    message: string,
  ) {
    super(message);
  }
}

export class WorkerPort {
  private port: chrome.runtime.Port | null = null;
  private nextCall = 1;
  private readonly calls = new Map<number, { resolve(v: unknown): void; reject(e: PanelCallError): void }>();
  /** The worker answered `ready` on the current port. */
  ready = false;

  constructor(
    /** The `hello` to send on every (re)connect: the window and the sessions it owns. */
    private readonly hello: () => PanelToWorker,
    private readonly onMessage: (m: WorkerToPanel) => void,
  ) {}

  connect(): void {
    this.ready = false;
    const p = chrome.runtime.connect({ name: PANEL_PORT });
    this.port = p;
    p.onMessage.addListener((m: unknown) => this.receive(m as WorkerToPanel));
    p.onDisconnect.addListener(() => {
      if (this.port !== p) return;
      this.port = null;
      this.ready = false;
      for (const [, c] of this.calls) c.reject(new PanelCallError(-32000, "the extension's worker restarted"));
      this.calls.clear();
      setTimeout(() => this.connect(), 300); // the worker restarted: reconnect (this wakes it)
    });
    this.post(this.hello());
  }

  post(m: PanelToWorker): void {
    try {
      this.port?.postMessage(m);
    } catch {
      // disconnected; onDisconnect reconnects
    }
  }

  call<T = unknown>(method: string, params: unknown, timeoutMs?: number): Promise<T> {
    if (!this.port) return Promise.reject(new PanelCallError(-32000, "not connected to the extension's worker"));
    const id = this.nextCall++;
    return new Promise<T>((resolve, reject) => {
      this.calls.set(id, { resolve: resolve as (v: unknown) => void, reject });
      this.post({ t: "call", id, method, params, ...(timeoutMs ? { timeoutMs } : {}) });
    });
  }

  private receive(m: WorkerToPanel): void {
    if (m.t === "ready") this.ready = true;
    if (m.t === "result" || m.t === "error") {
      const c = this.calls.get(m.id);
      if (!c) return;
      this.calls.delete(m.id);
      if (m.t === "result") c.resolve(m.result);
      else c.reject(new PanelCallError(m.error.code, m.error.message));
      return;
    }
    this.onMessage(m);
  }
}
