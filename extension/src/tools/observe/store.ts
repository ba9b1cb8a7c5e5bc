// What console_tail and network_tail keep of one tab, built from its CDP events (Runtime, Log,
// Network, Page): console errors and warnings, uncaught exceptions, and finished fetch/XHR
// responses. Pure logic (no chrome.*): the judge and the body reader are injected.
//
// SECURITY I-65: an entry is kept only when the document it is attributed to (its execution
// context's origin and frame, the frame that sent the request) is judged allowed with the person's
// "Console & network" switch, and a request only when its URL is on the list too; what cannot be
// attributed is dropped. Request headers, cookies and credentials are never read from the events,
// response headers neither; a URL loses its userinfo. Everything is bounded: entries (newest kept,
// the dropped counted), requests in flight, bodies (per body, per tab, across tabs) and the body
// reads in flight.

import { Ring } from "./ring.js";
import { cleanUrl, clip, formatArg, isTextType, num, originOfUrl, str } from "./format.js";

export { cleanUrl, formatArg, isTextType } from "./format.js";

export const CONSOLE_CAP = 500;
export const NETWORK_CAP = 500;
/** Requests seen but not finished: past this the oldest is forgotten (counted as dropped). */
export const PENDING_CAP = 1_000;
export const BODY_CAP = 64 * 1024;
export const TAB_BODY_BUDGET = 1024 * 1024;
export const GLOBAL_BODY_BUDGET = 4 * 1024 * 1024;
/** Body reads in flight per tab. */
export const MAX_BODY_READS = 4;
/** Bodies waiting to be read per tab; a response finishing past this keeps no body ("busy"). */
export const MAX_BODY_QUEUE = 16;
/**
 * Bodies are read a moment after their response, not at once: the read is a debugger round trip
 * that would otherwise compete with the action that caused the request and its look at the page.
 * A network_tail call reads what is waiting at once (flushBodies).
 */
export const BODY_READ_DELAY_MS = 300;
const CONTEXT_CAP = 2_000;
const FRAME_CAP = 2_000;

export type Level = "error" | "warning";

export interface ConsoleEntry {
  seq: number;
  ts: number;
  level: Level;
  /** console (console.error/warn/assert), exception (uncaught), browser (the browser's own log). */
  source: "console" | "exception" | "browser";
  text: string;
  origin: string;
  /** The document judged (not returned): the entry is judged again when read. */
  doc: Doc;
}

/** Why a response's body is not in the entry. */
export type BodyOmitted = "binary" | "too_large" | "busy" | "not_kept" | "budget" | "failed";

export interface NetEntry {
  seq: number;
  ts: number;
  method: string;
  url: string;
  status: number;
  /** The response's MIME type. */
  type: string;
  kind: "fetch" | "xhr";
  /** Bytes received (encoded). */
  size: number;
  /** From the request's start to the end of its response. */
  ms: number;
  origin: string;
  failed?: string;
  body?: string;
  bodyOmitted?: BodyOmitted;
  doc: Doc;
  /** Set while the body is being read. */
  bodyReady?: Promise<void>;
  /** Fell off the ring: a body read that ends later is not kept. */
  gone?: boolean;
}

export interface Doc {
  origin: string;
  url: string;
}

/** Bytes of bodies held, shared by every tab's capture. */
export class ByteBudget {
  used = 0;
  constructor(readonly cap: number) {}
}

export interface StoreDeps {
  /** A document may be kept: allowed and its origin's switch on. */
  docAllowed(d: Doc): boolean;
  /** A request URL is on the list. */
  urlAllowed(url: string): boolean;
  /** Network.getResponseBody. */
  readBody(requestId: string): Promise<{ body: string; base64Encoded: boolean }>;
  global: ByteBudget;
  /** BODY_READ_DELAY_MS unless a test says otherwise. */
  bodyDelayMs?: number;
}

interface QueuedRead {
  id: string;
  e: NetEntry;
  done: () => void;
}

interface Pending {
  ts: number;
  start: number;
  method: string;
  url: string;
  kind: "fetch" | "xhr";
  status: number;
  type: string;
  doc: Doc;
}

interface Ctx {
  origin: string;
  frameId?: string;
}

export interface Dropped {
  /** Pushed out by newer entries. */
  overflow: number;
  /** Attributed to a document or URL off the list (or switched off), or not attributable. */
  offList: number;
}

export class TabCapture {
  readonly console = new Ring<ConsoleEntry>(CONSOLE_CAP);
  readonly network = new Ring<NetEntry>(NETWORK_CAP);
  offListConsole = 0;
  offListNetwork = 0;
  /** Requests forgotten before they finished (PENDING_CAP). */
  pendingDropped = 0;
  private readonly contexts = new Map<number, Ctx>();
  private readonly frames = new Map<string, Doc>();
  private readonly pending = new Map<string, Pending>();
  /** The documents behind recent requests of any type, for the browser's log entries about them. */
  private readonly reqDocs = new Map<string, Doc[]>();
  /** Entries holding a body, oldest first: the first to give way under the budgets. */
  private readonly withBody: NetEntry[] = [];
  private bodyBytes = 0;
  private reads = 0;
  private readonly queue: QueuedRead[] = [];
  private timer: ReturnType<typeof setTimeout> | undefined;
  private disposed = false;
  private topFrame: string | undefined;

  constructor(
    readonly startedAt: number,
    private readonly deps: StoreDeps,
  ) {}

  /** Frames known before the capture started (Page.getFrameTree). */
  seedFrames(tree: unknown, top = true): void {
    const t = tree as { frame?: { id?: unknown; url?: unknown; securityOrigin?: unknown }; childFrames?: unknown[] } | undefined;
    const f = t?.frame;
    if (f && typeof f.id === "string") {
      if (top) this.topFrame = f.id;
      if (!this.frames.has(f.id)) this.setFrame(f.id, str(f.url), str(f.securityOrigin));
    }
    for (const c of Array.isArray(t?.childFrames) ? t.childFrames : []) this.seedFrames(c, false);
  }

  private setFrame(id: string, url: string, securityOrigin: string): void {
    if (!this.frames.has(id) && this.frames.size >= FRAME_CAP) return;
    // The browser's security origin decides; a blank document's URL says nothing of it.
    this.frames.set(id, { origin: securityOrigin || originOfUrl(url), url });
  }

  handle(method: string, p: Record<string, unknown>): void {
    switch (method) {
      case "Page.frameNavigated": {
        const f = (p.frame ?? {}) as Record<string, unknown>;
        if (typeof f.id !== "string") return;
        if (f.parentId === undefined) this.topFrame = f.id;
        this.frames.delete(f.id);
        this.setFrame(f.id, str(f.url), str(f.securityOrigin));
        return;
      }
      case "Page.frameDetached":
        this.frames.delete(str(p.frameId));
        return;
      case "Runtime.executionContextCreated": {
        const c = (p.context ?? {}) as Record<string, unknown>;
        const aux = (c.auxData ?? {}) as Record<string, unknown>;
        // The page's own world only: isolated worlds (extensions, Torii's engine) are not the page.
        if (typeof c.id !== "number" || aux.isDefault !== true) return;
        if (this.contexts.size >= CONTEXT_CAP) return;
        this.contexts.set(c.id, { origin: str(c.origin), ...(typeof aux.frameId === "string" ? { frameId: aux.frameId } : {}) });
        return;
      }
      case "Runtime.executionContextDestroyed":
        this.contexts.delete(num(p.executionContextId));
        return;
      case "Runtime.executionContextsCleared":
        this.contexts.clear();
        return;
      case "Runtime.consoleAPICalled": {
        const t = str(p.type);
        const level: Level | undefined = t === "error" || t === "assert" ? "error" : t === "warning" ? "warning" : undefined;
        if (!level) return;
        const args = Array.isArray(p.args) ? p.args : [];
        let text = args.map(formatArg).join(" ");
        if (t === "assert") text = `Assertion failed${text ? `: ${text}` : ""}`;
        this.addConsole(num(p.timestamp), level, "console", text, this.docOfContext(num(p.executionContextId)));
        return;
      }
      case "Runtime.exceptionThrown": {
        const d = (p.exceptionDetails ?? {}) as Record<string, unknown>;
        const ex = (d.exception ?? {}) as Record<string, unknown>;
        const desc = typeof ex.description === "string" ? ex.description : formatArg(ex);
        const text = desc ? `${str(d.text) || "Uncaught"} ${desc}`.trim() : str(d.text);
        this.addConsole(num(p.timestamp), "error", "exception", text, this.docOfContext(num(d.executionContextId)));
        return;
      }
      case "Log.entryAdded": {
        const e = (p.entry ?? {}) as Record<string, unknown>;
        const level: Level | undefined = e.level === "error" ? "error" : e.level === "warning" ? "warning" : undefined;
        if (!level) return;
        this.addConsole(num(e.timestamp), level, "browser", str(e.text), this.docOfLog(str(e.networkRequestId)));
        return;
      }
      case "Network.requestWillBeSent":
        return this.onRequest(p);
      case "Network.responseReceived": {
        const q = this.pending.get(str(p.requestId));
        const r = (p.response ?? {}) as Record<string, unknown>;
        if (!q) return;
        q.status = num(r.status);
        q.type = str(r.mimeType);
        if (typeof r.url === "string" && r.url) q.url = r.url;
        return;
      }
      case "Network.loadingFinished":
        return this.onDone(str(p.requestId), num(p.timestamp), num(p.encodedDataLength), undefined);
      case "Network.loadingFailed":
        return this.onDone(str(p.requestId), num(p.timestamp), 0, p.canceled === true ? "canceled" : str(p.errorText) || "failed");
      default:
        return;
    }
  }

  /** An execution context's document: its origin and its frame's; unknown → undefined (dropped). */
  private docOfContext(id: number): Doc[] | undefined {
    const c = this.contexts.get(id);
    if (!c || !c.origin) return undefined;
    const f = c.frameId !== undefined ? this.frames.get(c.frameId) : undefined;
    const docs: Doc[] = [{ origin: c.origin, url: f && f.origin === c.origin ? f.url : "" }];
    if (f && f.origin !== c.origin) docs.push(f);
    return docs;
  }

  /**
   * The browser's log names no frame: an entry about a request takes that request's document; any
   * other is the top document's only while every frame of the tab may be kept.
   */
  private docOfLog(requestId: string): Doc[] | undefined {
    if (requestId) {
      const d = this.reqDocs.get(requestId);
      return d ? [...d] : undefined;
    }
    const top = this.topFrame !== undefined ? this.frames.get(this.topFrame) : undefined;
    if (!top) return undefined;
    for (const f of this.frames.values()) if (!this.deps.docAllowed(f)) return undefined;
    return [top];
  }

  private addConsole(ts: number, level: Level, source: ConsoleEntry["source"], text: string, docs: Doc[] | undefined): void {
    // Entries the browser replays from before the first call are not this capture's.
    if (ts && ts < this.startedAt) return;
    if (!docs || !docs.every((d) => this.deps.docAllowed(d))) {
      this.offListConsole++;
      return;
    }
    const doc = docs[0] as Doc;
    this.console.push((seq) => ({ seq, ts: ts || Date.now(), level, source, text: clip(text), origin: doc.origin, doc }));
  }

  private onRequest(p: Record<string, unknown>): void {
    const id = str(p.requestId);
    const req = (p.request ?? {}) as Record<string, unknown>;
    const known = this.pending.get(id);
    if (known) {
      // A redirect: the same request, now going to its next URL.
      known.url = str(req.url) || known.url;
      return;
    }
    const type = str(p.type);
    const frame = this.frames.get(str(p.frameId));
    const docUrl = str(p.documentURL);
    const docs: Doc[] = [];
    if (frame) docs.push(frame);
    const fromUrl = originOfUrl(docUrl);
    // A document's own load names the document it replaces as its frame: only its URL counts.
    if (type === "Document" && fromUrl) docs.splice(0, docs.length, { origin: fromUrl, url: docUrl });
    else if (fromUrl && (!frame || frame.origin !== fromUrl)) docs.push({ origin: fromUrl, url: docUrl });
    if (docs.length > 0) {
      if (this.reqDocs.size >= PENDING_CAP) this.reqDocs.delete(this.reqDocs.keys().next().value as string);
      this.reqDocs.set(id, docs);
    }
    if (type !== "Fetch" && type !== "XHR") return;
    if (docs.length === 0 || !docs.every((d) => this.deps.docAllowed(d))) {
      this.offListNetwork++;
      return;
    }
    if (this.pending.size >= PENDING_CAP) {
      const oldest = this.pending.keys().next().value as string;
      this.pending.delete(oldest);
      this.pendingDropped++;
    }
    const wall = num(p.wallTime);
    this.pending.set(id, {
      ts: wall ? Math.round(wall * 1000) : Date.now(),
      start: num(p.timestamp),
      method: str(req.method) || "GET",
      url: str(req.url),
      kind: type === "Fetch" ? "fetch" : "xhr",
      status: 0,
      type: "",
      doc: docs[0] as Doc,
    });
  }

  private onDone(id: string, end: number, size: number, failed: string | undefined): void {
    const q = this.pending.get(id);
    if (!q) return;
    this.pending.delete(id);
    // SECURITY I-65: a response from a URL off the list is not kept, whoever asked for it.
    if (!this.deps.urlAllowed(q.url)) {
      this.offListNetwork++;
      return;
    }
    let entry: NetEntry | undefined;
    const old = this.network.push((seq) => {
      entry = {
        seq,
        ts: q.ts,
        method: q.method,
        url: cleanUrl(q.url),
        status: q.status,
        type: q.type,
        kind: q.kind,
        size,
        ms: q.start && end ? Math.max(0, Math.round((end - q.start) * 1000)) : 0,
        origin: q.doc.origin,
        doc: q.doc,
        ...(failed ? { failed } : {}),
      };
      return entry;
    });
    if (old) this.release(old);
    if (entry) this.takeBody(id, entry, size, failed);
  }

  private takeBody(id: string, e: NetEntry, size: number, failed: string | undefined): void {
    if (failed) return void (e.bodyOmitted = "failed");
    if (!isTextType(e.type)) return void (e.bodyOmitted = "binary");
    if (size > BODY_CAP) return void (e.bodyOmitted = "too_large");
    if (this.queue.length >= MAX_BODY_QUEUE) return void (e.bodyOmitted = "busy");
    e.bodyReady = new Promise<void>((done) => this.queue.push({ id, e, done }));
    if (this.timer === undefined) this.timer = setTimeout(() => this.pump(), this.deps.bodyDelayMs ?? BODY_READ_DELAY_MS);
  }

  /** Starts reading every body waiting (a network_tail call wants them now). */
  flushBodies(): void {
    this.pump();
  }

  private pump(): void {
    clearTimeout(this.timer);
    this.timer = undefined;
    while (this.reads < MAX_BODY_READS && this.queue.length > 0 && !this.disposed) {
      const q = this.queue.shift() as QueuedRead;
      if (q.e.gone) {
        q.e.bodyOmitted = "budget";
        delete q.e.bodyReady;
        q.done();
        continue;
      }
      this.read(q);
    }
  }

  private read({ id, e, done }: QueuedRead): void {
    this.reads++;
    void this.deps
      .readBody(id)
      .then(
        (r) => {
          if (r.base64Encoded) e.bodyOmitted = "binary";
          else if (r.body.length > BODY_CAP) e.bodyOmitted = "too_large";
          else if (!e.gone && !this.disposed) this.keep(e, r.body);
        },
        () => {
          e.bodyOmitted = "not_kept";
        },
      )
      .finally(() => {
        this.reads--;
        delete e.bodyReady;
        done();
        this.pump();
      });
  }

  /** Holds a body within the tab's and the global budgets, the oldest bodies giving way. */
  private keep(e: NetEntry, body: string): void {
    const need = body.length;
    const g = this.deps.global;
    while ((this.bodyBytes + need > TAB_BODY_BUDGET || g.used + need > g.cap) && this.withBody.length > 0) {
      const old = this.withBody.shift() as NetEntry;
      this.dropBody(old);
      old.bodyOmitted = "budget";
    }
    if (this.bodyBytes + need > TAB_BODY_BUDGET || g.used + need > g.cap) {
      e.bodyOmitted = "budget";
      return;
    }
    e.body = body;
    this.bodyBytes += need;
    g.used += need;
    this.withBody.push(e);
  }

  private dropBody(e: NetEntry): void {
    if (e.body === undefined) return;
    this.bodyBytes -= e.body.length;
    this.deps.global.used -= e.body.length;
    delete e.body;
  }

  private release(e: NetEntry): void {
    e.gone = true;
    if (e.body !== undefined) {
      const i = this.withBody.indexOf(e);
      if (i >= 0) this.withBody.splice(i, 1);
      this.dropBody(e);
    }
  }

  /** Gives back every body's bytes to the global budget (the capture ends). */
  dispose(): void {
    this.disposed = true;
    clearTimeout(this.timer);
    for (const q of this.queue.splice(0)) q.done();
    for (const e of this.withBody) this.dropBody(e);
    this.withBody.length = 0;
    this.pending.clear();
    this.reqDocs.clear();
    this.contexts.clear();
    this.frames.clear();
  }

  get heldBodyBytes(): number {
    return this.bodyBytes;
  }

  droppedConsole(): Dropped {
    return { overflow: this.console.dropped, offList: this.offListConsole };
  }

  droppedNetwork(): Dropped & { unfinished: number } {
    return { overflow: this.network.dropped, offList: this.offListNetwork, unfinished: this.pendingDropped };
  }
}
