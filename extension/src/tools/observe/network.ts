// What network_tail keeps of one tab: its finished fetch/XHR responses, from the worker's shared
// chrome.webRequest listeners (capture/requests.ts), which cost the page nothing. Each request's
// end is all it needs (one event per request); its start is heard only while bodies are recorded
// (a body is expected only for a request that started then), and how long a request took comes
// otherwise from the page's own timeline when the entry is read (timing.ts). Pure logic (no
// chrome.*): events arrive already routed to the tab, the judges and the document index are
// injected. Bodies come from elsewhere (bodies.ts, on the debugger's Network domain, only while
// network_tail asks for them) and are matched to these entries by method and URL.
//
// SECURITY I-65: a response is kept only when the document that sent it (its documentId's frame
// document, and the initiator's origin when it differs) is allowed with the person's "Console &
// network" switch and its URL is on the list; what cannot be attributed is dropped. No request
// header, cookie or body is read; of the response headers only the media type and length. A URL
// loses its userinfo. Bounded: entries (newest kept, the dropped counted), requests in flight,
// bodies (per body, per tab, across tabs), bodies waiting for their entry.

import { Ring } from "./ring.js";
import { typeAndLength } from "../capture/requests.js";
import { cleanUrl } from "./format.js";

export const NETWORK_CAP = 500;
/** Requests seen but not finished: past this the oldest is forgotten (counted as unfinished). */
const PENDING_CAP = 1_000;
export const BODY_CAP = 64 * 1024;
export const TAB_BODY_BUDGET = 1024 * 1024;
export const GLOBAL_BODY_BUDGET = 4 * 1024 * 1024;
/** Body outcomes that arrived before their entry: held this long, this many at most. */
const OFFER_CAP = 64;
const OFFER_TTL_MS = 10_000;

/**
 * Why a response's body is not in the entry: `not_recording` (bodies were not being recorded when
 * the request started), `not_asked` (recorded, but this call did not ask for bodies), `binary`,
 * `too_large`, `busy` (too many waiting to be read), `not_kept` (the browser did not hand it
 * over), `budget`, `failed` (the request failed).
 */
export type BodyOmitted = "not_recording" | "not_asked" | "binary" | "too_large" | "busy" | "not_kept" | "budget" | "failed";

export interface Doc {
  origin: string;
  url: string;
}

export interface NetEntry {
  seq: number;
  /** When the response ended (epoch ms). */
  ts: number;
  method: string;
  url: string;
  status: number;
  /** The response's media type. */
  type: string;
  /** Known when its body was recorded (webRequest does not tell fetch from XHR). */
  kind?: "fetch" | "xhr";
  /** Bytes: Content-Length, or the bytes received when the body was recorded; absent when unknown. */
  size?: number;
  /** From the request's start to the end of its response; absent when unknown (timing.ts). */
  ms?: number;
  origin: string;
  failed?: string;
  body?: string;
  bodyOmitted?: BodyOmitted;
  doc: Doc;
  /** The browser's ids of the frame and document that sent it (where its timing is asked). */
  frameId: number;
  documentId: string;
  /** Set while the body is expected (recorded, not yet read). */
  bodyReady?: Promise<void>;
  /** Fell off the ring: a body arriving later is not kept. */
  gone?: boolean;
}

/** Bytes of bodies held, shared by every tab's capture. */
export class ByteBudget {
  used = 0;
  constructor(readonly cap: number) {}
}

/** The outcome of recording one body: the text, or why not. */
export type BodyOutcome = { body: string; kind?: "fetch" | "xhr"; size?: number } | { omitted: BodyOmitted; kind?: "fetch" | "xhr"; size?: number };

export interface NetDeps {
  /** A document may be kept: allowed and its origin's switch on. */
  docAllowed(d: Doc): boolean;
  /** A request URL is on the list. */
  urlAllowed(url: string): boolean;
  /** The document behind a webRequest documentId; a promise when it has to be looked up. */
  docOf(documentId: string): Doc | undefined | Promise<Doc | undefined>;
  global: ByteBudget;
}

/** The fields of webRequest's details this uses. */
export interface ReqEvent {
  requestId: string;
  url: string;
  frameId?: number;
  method?: string;
  type?: string;
  documentId?: string;
  initiator?: string;
  timeStamp: number;
  statusCode?: number;
  responseHeaders?: { name: string; value?: string }[];
  error?: string;
}

interface Pending {
  /** When it started; unknown for a request whose start was not heard. */
  ts?: number;
  method: string;
  url: string;
  documentId: string;
  initiator: string;
  /** Bodies were being recorded when it started. */
  wantBody: boolean;
}

interface Waiting {
  e: NetEntry;
  done: () => void;
  at: number;
}

export interface Dropped {
  /** Pushed out by newer entries. */
  overflow: number;
  /** Attributed to a document or URL off the list (or switched off), or not attributable. */
  offList: number;
}

export function bodyKey(method: string, url: string): string {
  return `${method.toUpperCase()} ${url}`;
}

export class NetRecorder {
  readonly network = new Ring<NetEntry>(NETWORK_CAP);
  offList = 0;
  /** Requests forgotten before they finished (PENDING_CAP). */
  unfinished = 0;
  /** Bodies are being recorded: requests starting now expect one. */
  recording = false;
  private readonly pending = new Map<string, Pending>();
  /** Entries expecting a body, by method and URL, oldest first. */
  private readonly waiting = new Map<string, Waiting[]>();
  /** Body outcomes that came before their entry. */
  private readonly offers = new Map<string, { at: number; o: BodyOutcome }[]>();
  private offerCount = 0;
  /** Entries holding a body, oldest first: the first to give way under the budgets. */
  private readonly withBody: NetEntry[] = [];
  private bodyBytes = 0;
  private disposed = false;

  constructor(private readonly deps: NetDeps) {}

  /** onBeforeRequest: a request starts, or the next hop of a redirect (the same requestId). */
  before(d: ReqEvent): void {
    if (d.type !== undefined && d.type !== "xmlhttprequest") return;
    const known = this.pending.get(d.requestId);
    if (known) {
      known.url = d.url || known.url;
      return;
    }
    if (this.pending.size >= PENDING_CAP) {
      this.pending.delete(this.pending.keys().next().value as string);
      this.unfinished++;
    }
    this.pending.set(d.requestId, {
      ts: Math.round(d.timeStamp),
      method: (d.method || "GET").toUpperCase().slice(0, 16),
      url: d.url,
      documentId: d.documentId ?? "",
      initiator: d.initiator ?? "",
      wantBody: this.recording,
    });
  }

  /** onCompleted / onErrorOccurred; a request whose start was not heard is taken from its end alone. */
  done(d: ReqEvent): void {
    if (d.type !== undefined && d.type !== "xmlhttprequest") return;
    const q = this.pending.get(d.requestId) ?? {
      method: (d.method || "GET").toUpperCase().slice(0, 16),
      url: d.url,
      documentId: d.documentId ?? "",
      initiator: d.initiator ?? "",
      wantBody: false,
    };
    this.pending.delete(d.requestId);
    const doc = q.documentId ? this.deps.docOf(q.documentId) : undefined;
    if (doc instanceof Promise) void doc.then((x) => this.finish(q, d, x), () => this.finish(q, d, undefined));
    else this.finish(q, d, doc);
  }

  private finish(q: Pending, d: ReqEvent, frameDoc: Doc | undefined): void {
    if (this.disposed) return;
    // The frame's document; the initiator's origin too when it differs (an about:blank or
    // sandboxed document, whose URL says nothing of who runs in it).
    // A request whose frame document is not known (not even by looking it up) is not attributable.
    const docs: Doc[] = [];
    if (frameDoc?.origin) docs.push(frameDoc);
    if (frameDoc && q.initiator && q.initiator !== frameDoc.origin) docs.push({ origin: q.initiator, url: "" });
    // SECURITY I-65: every document behind it allowed with its switch, and its URL on the list.
    if (docs.length === 0 || !docs.every((x) => this.deps.docAllowed(x)) || !this.deps.urlAllowed(q.url)) {
      this.offList++;
      return;
    }
    const doc = docs[0] as Doc;
    const failed = d.error ? d.error.slice(0, 100) : undefined;
    const { mimeType, size } = typeAndLength(d.responseHeaders);
    let entry: NetEntry | undefined;
    const old = this.network.push((seq) => {
      entry = {
        seq,
        ts: Math.round(d.timeStamp),
        method: q.method,
        url: cleanUrl(q.url),
        status: d.statusCode ?? 0,
        type: mimeType ?? "",
        ...(size !== undefined ? { size } : {}),
        ...(q.ts !== undefined ? { ms: Math.max(0, Math.round(d.timeStamp - q.ts)) } : {}),
        origin: doc.origin,
        doc,
        frameId: d.frameId ?? 0,
        documentId: q.documentId,
        ...(failed ? { failed } : {}),
      };
      return entry;
    });
    if (old) this.release(old);
    const e = entry as NetEntry;
    if (!q.wantBody) e.bodyOmitted = "not_recording";
    else if (failed) e.bodyOmitted = "failed";
    else this.expect(e, bodyKey(q.method, q.url));
  }

  /** The entry waits for its body's outcome, or takes one that came first. */
  private expect(e: NetEntry, key: string): void {
    const held = this.offers.get(key);
    const first = held?.shift();
    if (held && held.length === 0) this.offers.delete(key);
    if (first) {
      this.offerCount--;
      return this.apply(e, first.o);
    }
    const l = this.waiting.get(key) ?? [];
    e.bodyReady = new Promise<void>((done) => l.push({ e, done, at: Date.now() }));
    this.waiting.set(key, l);
  }

  /** A body was recorded (or could not be) for the request with this method and URL. */
  offer(key: string, o: BodyOutcome): void {
    if (this.disposed) return;
    const l = this.waiting.get(key);
    const w = l?.shift();
    if (l && l.length === 0) this.waiting.delete(key);
    if (w) {
      delete w.e.bodyReady;
      this.apply(w.e, o);
      w.done();
      return;
    }
    // Not recording: no entry will ask for it (held, it could be taken by a later request of the same URL).
    if (!this.recording) return;
    const now = Date.now();
    this.expireOffers(now);
    if (this.offerCount >= OFFER_CAP) return;
    const h = this.offers.get(key) ?? [];
    h.push({ at: now, o });
    this.offers.set(key, h);
    this.offerCount++;
  }

  /**
   * Entries whose body never came (a request the Network domain did not see, e.g. one it missed
   * while being enabled) stop waiting after OFFER_TTL_MS, so no call waits for them again.
   */
  expireWaiting(now = Date.now()): void {
    for (const [k, l] of this.waiting) {
      while (l.length && (l[0] as Waiting).at < now - OFFER_TTL_MS) {
        const w = l.shift() as Waiting;
        delete w.e.bodyReady;
        w.e.bodyOmitted ??= "not_kept";
        w.done();
      }
      if (!l.length) this.waiting.delete(k);
    }
  }

  private expireOffers(now: number): void {
    for (const [k, l] of this.offers) {
      while (l.length && (l[0] as { at: number }).at < now - OFFER_TTL_MS) {
        l.shift();
        this.offerCount--;
      }
      if (!l.length) this.offers.delete(k);
    }
  }

  private apply(e: NetEntry, o: BodyOutcome): void {
    if (o.kind) e.kind = o.kind;
    if (o.size !== undefined && e.size === undefined) e.size = o.size;
    if ("omitted" in o) e.bodyOmitted = o.omitted;
    else if (o.body.length > BODY_CAP) e.bodyOmitted = "too_large";
    else if (!e.gone) this.keep(e, o.body);
  }

  /**
   * Bodies stopped being recorded: requests in flight will get none, and entries still waiting
   * give up (their outcome, if any, has had its chance).
   */
  startRecording(): void {
    this.offers.clear();
    this.offerCount = 0;
    this.recording = true;
  }

  stopRecording(): void {
    this.recording = false;
    for (const q of this.pending.values()) q.wantBody = false;
  }

  /** Entries still waiting for a body after a reader's last word say why. */
  giveUp(): void {
    for (const l of this.waiting.values()) {
      for (const w of l) {
        delete w.e.bodyReady;
        w.e.bodyOmitted ??= "not_kept";
        w.done();
      }
    }
    this.waiting.clear();
    this.offers.clear();
    this.offerCount = 0;
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
    this.giveUp();
    this.disposed = true;
    for (const e of this.withBody) this.dropBody(e);
    this.withBody.length = 0;
    this.pending.clear();
  }

  get heldBodyBytes(): number {
    return this.bodyBytes;
  }

  dropped(): Dropped & { unfinished: number } {
    return { overflow: this.network.dropped, offList: this.offList, unfinished: this.unfinished };
  }
}
