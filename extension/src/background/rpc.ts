// A small JSON-RPC 2.0 peer over one text-frame socket: outgoing requests with ids and timeouts,
// notifications, and dispatch of incoming requests to handlers registered by method.

export const PARSE_ERROR = -32700;
export const INVALID_REQUEST = -32600;
export const METHOD_NOT_FOUND = -32601;
export const INVALID_PARAMS = -32602;
const INTERNAL_ERROR = -32603;

/** A JSON-RPC error, as received from the peer or thrown by a handler to answer with. */
export class RpcError extends Error {
  override name = "RpcError";
  constructor(
    readonly code: number,
    message: string,
    readonly data?: unknown,
  ) {
    super(message);
  }
}

/** No answer within the request's deadline; the request may still have run on the other side. */
export class RpcTimeoutError extends Error {
  override name = "RpcTimeoutError";
  constructor(readonly method: string, readonly ms: number) {
    super(`${method}: no reply within ${ms} ms`);
  }
}

/** The socket closed while the request was pending. */
export class RpcClosedError extends Error {
  override name = "RpcClosedError";
  constructor(readonly method: string) {
    super(`${method}: connection closed`);
  }
}

export interface HandlerContext {
  peer: RpcPeer;
  /** Absent for a notification (no reply is sent). */
  id?: string | number;
}

export type Handler = (params: unknown, ctx: HandlerContext) => unknown | Promise<unknown>;

// Process-wide registry: later features (mcp/connect, mcp/message, …) register here at import
// time, and every peer the link creates dispatches through it.
const globalHandlers = new Map<string, Handler>();

/** Registers the handler for an incoming method on every link peer; returns an unregister function. */
export function registerHandler(method: string, fn: Handler): () => void {
  globalHandlers.set(method, fn);
  return () => {
    if (globalHandlers.get(method) === fn) globalHandlers.delete(method);
  };
}

export interface Sender {
  send(text: string): void;
}

interface Pending {
  method: string;
  resolve(v: unknown): void;
  reject(e: Error): void;
  timer: ReturnType<typeof setTimeout>;
}

type Id = string | number;

const DEFAULT_TIMEOUT_MS = 15_000;

export class RpcPeer {
  private nextId = 1;
  private readonly pending = new Map<Id, Pending>();
  private readonly local = new Map<string, Handler>();
  private closed = false;

  constructor(
    private readonly out: Sender,
    private readonly handlers: ReadonlyMap<string, Handler> = globalHandlers,
  ) {}

  /** A handler for this peer only, taking precedence over the global registry. */
  handle(method: string, fn: Handler): void {
    this.local.set(method, fn);
  }

  request<T = unknown>(method: string, params?: unknown, timeoutMs = DEFAULT_TIMEOUT_MS): Promise<T> {
    if (this.closed) return Promise.reject(new RpcClosedError(method));
    const id = this.nextId++;
    return new Promise<T>((resolve, reject) => {
      const timer = setTimeout(() => {
        this.pending.delete(id);
        reject(new RpcTimeoutError(method, timeoutMs));
      }, timeoutMs);
      this.pending.set(id, { method, resolve: resolve as (v: unknown) => void, reject, timer });
      try {
        this.write({ jsonrpc: "2.0", id, method, ...(params === undefined ? {} : { params }) });
      } catch (e) {
        clearTimeout(timer);
        this.pending.delete(id);
        reject(e instanceof Error ? e : new Error(String(e)));
      }
    });
  }

  notify(method: string, params?: unknown): void {
    if (this.closed) return;
    this.write({ jsonrpc: "2.0", method, ...(params === undefined ? {} : { params }) });
  }

  /** Feeds one received text frame. */
  receive(text: string): void {
    let msg: unknown;
    try {
      msg = JSON.parse(text);
    } catch {
      this.reply(null, undefined, { code: PARSE_ERROR, message: "parse error" });
      return;
    }
    if (typeof msg !== "object" || msg === null || Array.isArray(msg) || (msg as { jsonrpc?: unknown }).jsonrpc !== "2.0") {
      this.reply(null, undefined, { code: INVALID_REQUEST, message: "not a JSON-RPC 2.0 message" });
      return;
    }
    const m = msg as { id?: unknown; method?: unknown; params?: unknown; result?: unknown; error?: unknown };
    const id = typeof m.id === "string" || typeof m.id === "number" ? m.id : undefined;
    if (typeof m.method === "string") {
      void this.dispatch(m.method, m.params, id);
      return;
    }
    if (id === undefined) return; // a response we cannot correlate (e.g. to a parse error of ours)
    const p = this.pending.get(id);
    if (!p) return; // late reply after a timeout
    this.pending.delete(id);
    clearTimeout(p.timer);
    if (m.error !== undefined) {
      const e = (m.error ?? {}) as { code?: unknown; message?: unknown; data?: unknown };
      p.reject(
        new RpcError(typeof e.code === "number" ? e.code : INTERNAL_ERROR, typeof e.message === "string" ? e.message : "error", e.data),
      );
    } else {
      p.resolve(m.result);
    }
  }

  /** Fails every pending request; later requests fail at once. */
  close(): void {
    if (this.closed) return;
    this.closed = true;
    for (const [id, p] of this.pending) {
      clearTimeout(p.timer);
      this.pending.delete(id);
      p.reject(new RpcClosedError(p.method));
    }
  }

  get pendingCount(): number {
    return this.pending.size;
  }

  private async dispatch(method: string, params: unknown, id: Id | undefined): Promise<void> {
    const fn = this.local.get(method) ?? this.handlers.get(method);
    if (!fn) {
      if (id !== undefined) this.reply(id, undefined, { code: METHOD_NOT_FOUND, message: `method not found: ${method}` });
      return;
    }
    try {
      const ctx: HandlerContext = id === undefined ? { peer: this } : { peer: this, id };
      const result = await fn(params, ctx);
      if (id !== undefined) this.reply(id, result ?? {}, undefined);
    } catch (e) {
      if (id === undefined) return;
      if (e instanceof RpcError) {
        this.reply(id, undefined, { code: e.code, message: e.message, ...(e.data === undefined ? {} : { data: e.data }) });
      } else {
        this.reply(id, undefined, { code: INTERNAL_ERROR, message: e instanceof Error ? e.message : "internal error" });
      }
    }
  }

  private reply(id: Id | null, result: unknown, error: { code: number; message: string; data?: unknown } | undefined): void {
    if (this.closed) return;
    this.write(error ? { jsonrpc: "2.0", id, error } : { jsonrpc: "2.0", id, result });
  }

  private write(msg: object): void {
    this.out.send(JSON.stringify(msg));
  }
}
