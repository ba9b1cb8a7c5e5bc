// What console_tail and network_tail keep of one tab. The console half is built here from the
// tab's CDP events (Runtime, Log, Page): console errors and warnings and uncaught exceptions. The
// network half is a NetRecorder (network.ts, from webRequest) and, while bodies are recorded, a
// BodyReader (bodies.ts, on the Network domain). Pure logic (no chrome.*): the judges, the
// document index and the body reader are injected.
//
// SECURITY I-65: a console entry is kept only when the document it is attributed to (its execution
// context's origin and frame) is judged allowed with the person's "Console & network" switch; what
// cannot be attributed is dropped. Bounded: entries (newest kept, the dropped counted), contexts,
// frames.

import { Ring } from "./ring.js";
import { clip, formatArg, num, originOfUrl, str } from "./format.js";
import { BodyReader } from "./bodies.js";
import { NetRecorder, type ByteBudget, type Doc } from "./network.js";

export { cleanUrl } from "./format.js";
export { BODY_CAP, ByteBudget, NETWORK_CAP, TAB_BODY_BUDGET, type Doc } from "./network.js";

export const CONSOLE_CAP = 500;
/** Requests whose documents are remembered for the browser's log entries about them. */
const REQ_DOCS_CAP = 1_000;
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

export interface StoreDeps {
  /** A document may be kept: allowed and its origin's switch on. */
  docAllowed(d: Doc): boolean;
  /** A request URL is on the list. */
  urlAllowed(url: string): boolean;
  /** The document behind a webRequest documentId; a promise when it has to be looked up. */
  docOf(documentId: string): Doc | undefined | Promise<Doc | undefined>;
  /** Network.getResponseBody. */
  readBody(requestId: string): Promise<{ body: string; base64Encoded: boolean }>;
  global: ByteBudget;
  /** BODY_READ_DELAY_MS unless a test says otherwise. */
  bodyDelayMs?: number;
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
  /** The network half: metadata from webRequest, fed by capture.ts. */
  readonly net: NetRecorder;
  /** Set while response bodies are recorded (the Network domain is on). */
  bodies: BodyReader | undefined;
  offListConsole = 0;
  private readonly contexts = new Map<number, Ctx>();
  private readonly frames = new Map<string, Doc>();
  /** The documents behind recent requests (seen while Network is on), for the browser's log entries about them. */
  private readonly reqDocs = new Map<string, Doc[]>();
  private topFrame: string | undefined;

  constructor(
    readonly startedAt: number,
    private readonly deps: StoreDeps,
  ) {
    this.net = new NetRecorder(deps);
  }

  get network() {
    return this.net.network;
  }

  /** Bodies are recorded from now on (the caller has turned the Network domain on). */
  startBodies(): void {
    if (this.bodies) return;
    this.bodies = new BodyReader({
      docAllowed: (d) => this.deps.docAllowed(d),
      urlAllowed: (u) => this.deps.urlAllowed(u),
      frameDoc: (id) => this.frames.get(id),
      readBody: (id) => this.deps.readBody(id),
      offer: (key, o) => this.net.offer(key, o),
      ...(this.deps.bodyDelayMs !== undefined ? { delayMs: this.deps.bodyDelayMs } : {}),
    });
    this.net.startRecording();
  }

  /**
   * Bodies stop being recorded: requests in flight get none; bodies waiting are read first (the
   * caller turns the domain off after this resolves).
   */
  async stopBodies(): Promise<void> {
    const b = this.bodies;
    if (!b) return;
    this.net.stopRecording();
    await b.drain();
    if (this.bodies === b) this.bodies = undefined;
    b.dispose();
    this.net.giveUp();
  }

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
        this.rememberRequest(p);
        return this.bodies?.handle(method, p);
      case "Network.responseReceived":
      case "Network.loadingFinished":
      case "Network.loadingFailed":
        return this.bodies?.handle(method, p);
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
   * The browser's log names no frame: an entry about a request seen takes that request's document;
   * any other is the top document's only while every frame of the tab may be kept.
   */
  private docOfLog(requestId: string): Doc[] | undefined {
    const d = requestId ? this.reqDocs.get(requestId) : undefined;
    if (d) return [...d];
    // A request not seen (bodies off, no Network domain): judged as any other browser entry.
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

  /** The documents behind a request, for the browser's log entries that name it. */
  private rememberRequest(p: Record<string, unknown>): void {
    const id = str(p.requestId);
    if (this.reqDocs.has(id)) return;
    const frame = this.frames.get(str(p.frameId));
    const docUrl = str(p.documentURL);
    const docs: Doc[] = [];
    if (frame) docs.push(frame);
    const fromUrl = originOfUrl(docUrl);
    // A document's own load names the document it replaces as its frame: only its URL counts.
    if (str(p.type) === "Document" && fromUrl) docs.splice(0, docs.length, { origin: fromUrl, url: docUrl });
    else if (fromUrl && (!frame || frame.origin !== fromUrl)) docs.push({ origin: fromUrl, url: docUrl });
    if (docs.length === 0) return;
    if (this.reqDocs.size >= REQ_DOCS_CAP) this.reqDocs.delete(this.reqDocs.keys().next().value as string);
    this.reqDocs.set(id, docs);
  }

  /** Gives back every body's bytes to the global budget (the capture ends). */
  dispose(): void {
    this.bodies?.dispose();
    this.bodies = undefined;
    this.net.dispose();
    this.reqDocs.clear();
    this.contexts.clear();
    this.frames.clear();
  }

  get heldBodyBytes(): number {
    return this.net.heldBodyBytes;
  }

  droppedConsole(): Dropped {
    return { overflow: this.console.dropped, offList: this.offListConsole };
  }

  droppedNetwork(): Dropped & { unfinished: number } {
    return this.net.dropped();
  }
}
