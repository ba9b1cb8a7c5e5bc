// Response bodies for network_tail, read on the debugger's Network domain, which is enabled on the
// tab only while network_tail asks for bodies: the domain makes every request of the page report
// to the debugger, a cost paid only then. Metadata never comes from here (network.ts has it from
// webRequest); each body's outcome is handed to the tab's NetRecorder by method and URL.
// Pure logic (no chrome.*): the body reader and the judges are injected.
//
// SECURITY I-65: a body is read only for a fetch/XHR whose sending frame's document is allowed
// with its switch and whose URL is on the list; request headers, cookies and post data in the
// events are never read. Bounded: a body at most BODY_CAP, at most MAX_BODY_QUEUE waiting and
// MAX_BODY_READS being read.

import { bodyKey, BODY_CAP, type BodyOmitted, type BodyOutcome, type Doc } from "./network.js";
import { isTextType, num, originOfUrl, str } from "./format.js";

/** Body reads in flight per tab. */
export const MAX_BODY_READS = 4;
/** Bodies waiting to be read per tab; a response finishing past this keeps no body ("busy"). */
export const MAX_BODY_QUEUE = 16;
/**
 * Bodies are read a moment after their response, not at once: the read is a debugger round trip
 * that would otherwise compete with the action that caused the request and its look at the page.
 * A network_tail call reads what is waiting at once (flush).
 */
const BODY_READ_DELAY_MS = 300;
const INFLIGHT_CAP = 1_000;

export interface BodyDeps {
  /** A document may be kept: allowed and its origin's switch on. */
  docAllowed(d: Doc): boolean;
  urlAllowed(url: string): boolean;
  /** The document in a frame, by the debugger's frame id. */
  frameDoc(frameId: string): Doc | undefined;
  /** Network.getResponseBody. */
  readBody(requestId: string): Promise<{ body: string; base64Encoded: boolean }>;
  /** Where each outcome goes (the tab's NetRecorder). */
  offer(key: string, o: BodyOutcome): void;
  /** BODY_READ_DELAY_MS unless a test says otherwise. */
  delayMs?: number;
}

interface Req {
  key: string;
  method: string;
  url: string;
  kind: "fetch" | "xhr";
  type: string;
}

interface Queued {
  id: string;
  r: Req;
  size: number;
}

export class BodyReader {
  private readonly inflight = new Map<string, Req>();
  private readonly queue: Queued[] = [];
  private reads = 0;
  private readonly running = new Set<Promise<void>>();
  private timer: ReturnType<typeof setTimeout> | undefined;
  private disposed = false;
  private closing = false;

  constructor(private readonly deps: BodyDeps) {}

  handle(method: string, p: Record<string, unknown>): void {
    switch (method) {
      case "Network.requestWillBeSent":
        return this.onRequest(p);
      case "Network.responseReceived": {
        const r = this.inflight.get(str(p.requestId));
        if (r) r.type = str((p.response as Record<string, unknown> | undefined)?.mimeType);
        return;
      }
      case "Network.loadingFinished":
        return this.onFinished(str(p.requestId), num(p.encodedDataLength));
      case "Network.loadingFailed": {
        const id = str(p.requestId);
        const r = this.inflight.get(id);
        if (!r) return;
        this.inflight.delete(id);
        return this.deps.offer(r.key, { omitted: "failed", kind: r.kind });
      }
      default:
        return;
    }
  }

  private onRequest(p: Record<string, unknown>): void {
    if (this.closing) return;
    const type = str(p.type);
    if (type !== "Fetch" && type !== "XHR") return;
    const id = str(p.requestId);
    const req = (p.request ?? {}) as Record<string, unknown>;
    const url = str(req.url);
    const known = this.inflight.get(id);
    if (known) {
      // A redirect: the same request, now going to its next URL (webRequest's entry follows it too).
      known.url = url || known.url;
      known.key = bodyKey(known.method, known.url);
      return;
    }
    const frame = this.deps.frameDoc(str(p.frameId));
    const docUrl = str(p.documentURL);
    const docs: Doc[] = frame ? [frame] : [];
    const fromUrl = originOfUrl(docUrl);
    if (fromUrl && (!frame || frame.origin !== fromUrl)) docs.push({ origin: fromUrl, url: docUrl });
    // SECURITY I-65: nothing is read for a document off the list (its entry is dropped anyway).
    if (docs.length === 0 || !docs.every((d) => this.deps.docAllowed(d)) || !this.deps.urlAllowed(url)) return;
    if (this.inflight.size >= INFLIGHT_CAP) this.inflight.delete(this.inflight.keys().next().value as string);
    const m = str(req.method) || "GET";
    this.inflight.set(id, { key: bodyKey(m, url), method: m, url, kind: type === "Fetch" ? "fetch" : "xhr", type: "" });
  }

  private onFinished(id: string, size: number): void {
    const r = this.inflight.get(id);
    if (!r) return;
    this.inflight.delete(id);
    if (!this.deps.urlAllowed(r.url)) return;
    const omit = (why: BodyOmitted) => this.deps.offer(r.key, { omitted: why, kind: r.kind, size });
    if (!isTextType(r.type)) return omit("binary");
    if (size > BODY_CAP) return omit("too_large");
    if (this.queue.length >= MAX_BODY_QUEUE) return omit("busy");
    this.queue.push({ id, r, size });
    if (this.timer === undefined) this.timer = setTimeout(() => this.pump(), this.deps.delayMs ?? BODY_READ_DELAY_MS);
  }

  /** Starts reading every body waiting (a network_tail call wants them now). */
  flush(): void {
    this.pump();
  }

  /**
   * Recording stops: requests starting or in flight now get no body (their entries expect none);
   * every body already waiting is read (or fails) before this resolves and the domain goes off.
   */
  async drain(): Promise<void> {
    this.closing = true;
    this.inflight.clear();
    this.pump();
    while (this.running.size > 0 || (this.queue.length > 0 && !this.disposed)) {
      await Promise.race(this.running);
      this.pump();
    }
  }

  private pump(): void {
    clearTimeout(this.timer);
    this.timer = undefined;
    while (this.reads < MAX_BODY_READS && this.queue.length > 0 && !this.disposed) this.read(this.queue.shift() as Queued);
  }

  private read({ id, r, size }: Queued): void {
    this.reads++;
    const p = this.deps
      .readBody(id)
      .then(
        (b): BodyOutcome => {
          if (b.base64Encoded) return { omitted: "binary", kind: r.kind, size };
          if (b.body.length > BODY_CAP) return { omitted: "too_large", kind: r.kind, size };
          return { body: b.body, kind: r.kind, size };
        },
        (): BodyOutcome => ({ omitted: "not_kept", kind: r.kind, size }),
      )
      .then((o) => {
        if (!this.disposed) this.deps.offer(r.key, o);
      })
      .finally(() => {
        this.reads--;
        this.running.delete(p);
        this.pump();
      });
    this.running.add(p);
  }

  dispose(): void {
    this.disposed = true;
    clearTimeout(this.timer);
    this.queue.length = 0;
    this.inflight.clear();
  }
}
